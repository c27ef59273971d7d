// Internal helpers shared by the layer implementations.
#ifndef MXCORE_NN_LAYER_UTIL_H_
#define MXCORE_NN_LAYER_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace nn {
namespace internal {

// The single input of a one-input layer, with at least `min_ndim` axes.
inline const NDArray& OneInput(const std::string& layer,
                               const std::vector<NDArray>& inputs,
                               int min_ndim = 0) {
  if (inputs.size() != 1) {
    throw InvalidArgument(
        absl::StrCat(layer, " takes 1 input, got ", inputs.size()));
  }
  if (inputs[0].ndim() < min_ndim) {
    throw ShapeError(absl::StrCat(layer, ": input has shape ",
                                  inputs[0].shape().ToString(), " but ",
                                  min_ndim, " or more axes are required"));
  }
  return inputs[0];
}

}  // namespace internal
}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_LAYER_UTIL_H_
