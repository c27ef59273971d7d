// Embedding: a lookup table layer over the Embedding op.
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "imperative/nd.h"
#include "nn/layer_util.h"
#include "nn/layers.h"

namespace mx {
namespace nn {

Embedding::Embedding(int64_t input_dim, int64_t output_dim, Options options)
    : input_dim_(input_dim),
      output_dim_(output_dim),
      options_(std::move(options)) {
  if (input_dim <= 0 || output_dim <= 0) {
    throw InvalidArgument(absl::StrCat("Embedding: input_dim (", input_dim,
                                       ") and output_dim (", output_dim,
                                       ") must be positive"));
  }
  Parameter::Options w;
  w.dtype = options_.dtype;
  w.init = options_.weight_init;
  weight_ = RegisterParameter("weight", TShape{input_dim, output_dim}, w);
}

std::vector<NDArray> Embedding::Forward(const std::vector<NDArray>& inputs) {
  return {nd::Embedding(internal::OneInput("Embedding", inputs),
                        weight_->data(), input_dim_, output_dim_,
                        options_.dtype)};
}

}  // namespace nn
}  // namespace mx
