// Internal: im2col and its transpose over the 3-D window geometry of
// conv_util.h, shared by Convolution (forward: Im2Col + GEMM; backward:
// GEMM + Col2ImAdd) and Deconvolution (the same two steps swapped).
#ifndef MXCORE_BACKENDS_CPU_IM2COL_H_
#define MXCORE_BACKENDS_CPU_IM2COL_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/conv_util.h"
#include "graph/op.h"

namespace mx {
namespace cpu {

// Input position along axis i of output position o and kernel tap t.
inline int64_t Tap(const Window& w, int i, int64_t o, int64_t t) {
  return o * w.s[i] - w.p[i] + t * w.d[i];
}

// Unfolds the (c, D, H, W) image x into col (c*kd*kh*kw rows, od*oh*ow
// columns), zeros for taps in the padding.
template <typename T, typename A>
inline void Im2Col(const T* x, int64_t c, const Spatial3& in, const Window& w,
                   const Spatial3& out, A* col) {
  const int64_t plane = Volume(out);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t kz = 0; kz < w.k[0]; ++kz) {
      for (int64_t ky = 0; ky < w.k[1]; ++ky) {
        for (int64_t kx = 0; kx < w.k[2]; ++kx) {
          A* dst =
              col + (((ch * w.k[0] + kz) * w.k[1] + ky) * w.k[2] + kx) * plane;
          for (int64_t oz = 0; oz < out[0]; ++oz) {
            const int64_t iz = Tap(w, 0, oz, kz);
            for (int64_t oy = 0; oy < out[1]; ++oy) {
              const int64_t iy = Tap(w, 1, oy, ky);
              A* row = dst + (oz * out[1] + oy) * out[2];
              if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1]) {
                std::fill(row, row + out[2], A(0));
                continue;
              }
              const T* src = x + ((ch * in[0] + iz) * in[1] + iy) * in[2];
              for (int64_t ox = 0; ox < out[2]; ++ox) {
                const int64_t ix = Tap(w, 2, ox, kx);
                row[ox] =
                    (ix >= 0 && ix < in[2]) ? static_cast<A>(src[ix]) : A(0);
              }
            }
          }
        }
      }
    }
  }
}

// Adds the columns of `col` (c*kd*kh*kw rows, od*oh*ow columns) back into
// the (c, D, H, W) image x: the transpose of Im2Col.
template <typename A>
inline void Col2ImAdd(const A* col, int64_t c, const Spatial3& in,
                      const Window& w, const Spatial3& out, A* x) {
  const int64_t plane = Volume(out);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t kz = 0; kz < w.k[0]; ++kz) {
      for (int64_t ky = 0; ky < w.k[1]; ++ky) {
        for (int64_t kx = 0; kx < w.k[2]; ++kx) {
          const A* src =
              col + (((ch * w.k[0] + kz) * w.k[1] + ky) * w.k[2] + kx) * plane;
          for (int64_t oz = 0; oz < out[0]; ++oz) {
            const int64_t iz = Tap(w, 0, oz, kz);
            if (iz < 0 || iz >= in[0]) continue;
            for (int64_t oy = 0; oy < out[1]; ++oy) {
              const int64_t iy = Tap(w, 1, oy, ky);
              if (iy < 0 || iy >= in[1]) continue;
              A* dst = x + ((ch * in[0] + iz) * in[1] + iy) * in[2];
              const A* row = src + (oz * out[1] + oy) * out[2];
              for (int64_t ox = 0; ox < out[2]; ++ox) {
                const int64_t ix = Tap(w, 2, ox, kx);
                if (ix >= 0 && ix < in[2]) dst[ix] += row[ox];
              }
            }
          }
        }
      }
    }
  }
}

// `n` values of A-typed `src` into T-typed `dst` as `req` says.
template <typename T, typename A>
inline void AssignAll(const A* src, int64_t n, OpReqType req, T* dst) {
  if (req == OpReqType::kNullOp) return;
  for (int64_t i = 0; i < n; ++i) Assign(dst + i, req, src[i]);
}

// A-typed copy of a T array (the array itself when T is A).
template <typename T, typename A = AccType<T>>
const A* AsAcc(const OpContext& ctx, const TBlob& b) {
  if constexpr (std::is_same_v<T, A>) {
    return b.data<T>();
  } else {
    const int64_t n = b.Size();
    A* buf = ctx.TempSpace<A>(std::max<int64_t>(1, n));
    const T* src = b.data<T>();
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<A>(src[i]);
    return buf;
  }
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_IM2COL_H_
