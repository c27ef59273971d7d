// Internal: validation and window geometry shared by the 1-, 2- and 3-D
// Convolution and Pooling kernels and their gradients (MXNet picks the
// rank from the kernel: (w), (h, w) or (d, h, w) on NCW, NCHW or NCDHW
// data).
//
// Geometry is kept as 3-D: a 1-D op is a 3-D op whose depth and height
// axes have size 1, kernel 1, stride 1, dilation 1 and no padding, so one
// set of loops serves every rank.
//
//   const int rank = CheckKernel(attrs, p.kernel);  // 1, 2 or 3
//   CheckDataRank(attrs, data_shape, rank);
//   Window w = ...;  // w.k[3 - rank ..] = kernel
#ifndef MXCORE_BACKENDS_CPU_CONV_UTIL_H_
#define MXCORE_BACKENDS_CPU_CONV_UTIL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {

// Spatial axes a Convolution or Pooling supports at most.
constexpr int kMaxSpatial = 3;
using Spatial3 = std::array<int64_t, kMaxSpatial>;

// Window geometry along (depth, height, width); unused leading axes are
// the identity window.
struct Window {
  int rank = 2;  // Spatial axes of the op: 1, 2 or 3.
  Spatial3 k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, p{0, 0, 0};
};

// "NCW", "NCHW" or "NCDHW".
inline const char* LayoutOf(int rank) {
  return rank == 1 ? "NCW" : rank == 2 ? "NCHW" : "NCDHW";
}

// Throws unless the kernel has 1 to 3 entries, all >= 1; returns its rank.
inline int CheckKernel(const NodeAttrs& attrs, const TShape& kernel) {
  if (!kernel.ndim_known() || kernel.ndim() < 1 ||
      kernel.ndim() > kMaxSpatial) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": kernel=", kernel.ToString(),
        " must have 1, 2 or 3 entries ((w), (h, w) or (d, h, w))"));
  }
  for (int64_t v : kernel) {
    if (v < 1) {
      throw InvalidArgument(absl::StrCat(OpLabel(attrs),
                                         ": kernel=", kernel.ToString(),
                                         " must be >= 1"));
    }
  }
  return kernel.ndim();
}

// Throws ShapeError unless data (when its rank is known) has rank + 2 axes.
inline void CheckDataRank(const NodeAttrs& attrs, const TShape& data,
                          int rank) {
  if (!data.ndim_known() || data.ndim() == rank + 2) return;
  throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                data.ToString(), " but a ", rank + 2,
                                "-D shape (", LayoutOf(rank),
                                ") is required for a ", rank, "-D kernel"));
}

// Throws NotImplemented unless layout is unset or the channels-first one.
inline void CheckLayout(const NodeAttrs& attrs,
                        const std::optional<std::string>& layout, int rank) {
  if (layout && *layout != LayoutOf(rank)) {
    throw NotImplemented(absl::StrCat(OpLabel(attrs), ": layout=", *layout,
                                      " is not supported; only ",
                                      LayoutOf(rank), " is for ", rank,
                                      "-D data"));
  }
}

// A per-axis attribute aligned to the last `rank` of three axes: `given`
// when set, else `fill`; the leading unused axes get `identity`.
inline Spatial3 PerAxis(const NodeAttrs& attrs, const char* name,
                        const TShape& given, int rank, int64_t fill,
                        int64_t min, int64_t identity) {
  Spatial3 v{identity, identity, identity};
  if (given.ndim_known() && given.ndim() != 0 && given.ndim() != rank) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", name, "=",
                                       given.ToString(), " must have ", rank,
                                       " entries, like kernel"));
  }
  const bool set = given.ndim_known() && given.ndim() == rank;
  for (int a = 0; a < rank; ++a) {
    const int64_t x = set ? given[a] : fill;
    if (x < min) {
      throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", name, "=",
                                         given.ToString(), " must be >= ",
                                         min));
    }
    v[kMaxSpatial - rank + a] = x;
  }
  return v;
}

// The spatial extents of an (N, C, spatial...) shape of `rank` spatial
// axes, aligned like Window (leading 1s).
inline Spatial3 SpatialOf(const TShape& s, int rank) {
  Spatial3 v{1, 1, 1};
  for (int a = 0; a < rank; ++a) v[kMaxSpatial - rank + a] = s[2 + a];
  return v;
}

inline int64_t Volume(const Spatial3& v) { return v[0] * v[1] * v[2]; }

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_CONV_UTIL_H_
