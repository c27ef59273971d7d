// Internal: validation and window geometry shared by the 2-D (NCHW)
// Convolution and Pooling kernels and their gradients.
#ifndef MXCORE_BACKENDS_CPU_CONV_UTIL_H_
#define MXCORE_BACKENDS_CPU_CONV_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {

// All inputs and outputs share one floating-point dtype.
inline void SameFloatType(const NodeAttrs& attrs, std::vector<DType>* in,
                          std::vector<DType>* out) {
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
  SameType(attrs, in, out);
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
}

// Throws unless data (when its rank is known) is 4-D; 3-D and 5-D data (1-D
// and 3-D ops) are NotImplemented.
inline void CheckData4D(const NodeAttrs& attrs, const TShape& data) {
  if (!data.ndim_known() || data.ndim() == 4) return;
  const std::string what =
      absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                   data.ToString(), " but a 4-D shape (N,C,H,W) is required");
  if (data.ndim() == 3 || data.ndim() == 5) {
    throw NotImplemented(what + "; only 2-D " + attrs.op->name() +
                         " is implemented");
  }
  throw ShapeError(what);
}

// A 2-tuple attribute: `given` when set, else `fill` in both places.
inline std::pair<int64_t, int64_t> Pair(const NodeAttrs& attrs,
                                        const char* name, const TShape& given,
                                        int64_t fill, int64_t min) {
  if (!given.ndim_known()) return {fill, fill};
  if (given.ndim() != 2) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", name, "=",
                                       given.ToString(),
                                       " must have 2 entries, like kernel"));
  }
  if (given[0] < min || given[1] < min) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", name, "=",
                                       given.ToString(), " must be >= ", min));
  }
  return {given[0], given[1]};
}

// Window geometry of a 2-D op along both spatial axes.
struct Window {
  int64_t kh, kw, sh, sw, dh = 1, dw = 1, ph, pw;
};

inline void CheckKernel(const NodeAttrs& attrs, const TShape& kernel) {
  if (kernel.ndim() == 1 || kernel.ndim() == 3) {
    throw NotImplemented(
        absl::StrCat(OpLabel(attrs), ": kernel=", kernel.ToString(),
                     " asks for ", kernel.ndim(), "-D ", attrs.op->name(),
                     "; only 2-D (NCHW) is implemented"));
  }
  if (kernel.ndim() != 2) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs),
                                       ": kernel=", kernel.ToString(),
                                       " must have 2 entries (kh, kw)"));
  }
  Pair(attrs, "kernel", kernel, 1, 1);
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_CONV_UTIL_H_
