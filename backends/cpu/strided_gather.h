// A strided gather: out[i] = in[base + sum_d idx_d(i) * strides[d]], the
// kernel of transpose, SwapAxis, slice, diag and depth_to_space, split over
// the kernel threads; and its adjoint, the scatter into zeros behind the
// gradients of slice and diag.
//
//   // out = transpose of a [rows, cols] input:
//   GatherCompute(in, 0, {1, cols}, req, out);
#ifndef MXCORE_BACKENDS_CPU_STRIDED_GATHER_H_
#define MXCORE_BACKENDS_CPU_STRIDED_GATHER_H_

#include <algorithm>
#include <vector>

#include "backends/cpu/kernel_util.h"

namespace mx {
namespace cpu {

// out[i] = in[base + sum_d idx_d(i) * strides[d]] over out's row-major
// indices; `strides` has one entry per output dim. `To` may differ from T
// (einsum packs float16 into float).
template <typename T, typename To = T>
inline void StridedGather(const T* in, int64_t base,
                          const std::vector<int64_t>& strides,
                          const TShape& oshape, To* out, OpReqType req) {
  const int nd = oshape.ndim();
  const int64_t n = oshape.Size();
  if (nd == 0) {
    if (n > 0) Assign(out, req, in[base]);
    return;
  }
  ParallelFor(n, int64_t{1} << 14, [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(nd);
    int64_t off = base, rem = b;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % oshape[d];
      rem /= oshape[d];
      off += idx[d] * strides[d];
    }
    const int64_t inner = oshape[nd - 1], s = strides[nd - 1];
    int64_t i = b;
    while (i < e) {
      const int64_t run = std::min(inner - idx[nd - 1], e - i);
      for (int64_t k = 0; k < run; ++k)
        Assign(out + i + k, req, in[off + k * s]);
      i += run;
      off += run * s;
      idx[nd - 1] += run;
      if (idx[nd - 1] < inner) break;  // Only at the end of the chunk.
      off -= inner * s;
      idx[nd - 1] = 0;
      for (int d = nd - 2; d >= 0; --d) {
        off += strides[d];
        if (++idx[d] < oshape[d]) break;
        off -= oshape[d] * strides[d];
        idx[d] = 0;
      }
    }
  });
}

// The same for any dtype, out's elements in row-major order of `oshape`
// (out's own shape unless given: a reshaped view of it).
inline void GatherCompute(const TBlob& in, int64_t base,
                          const std::vector<int64_t>& strides, OpReqType req,
                          const TBlob& out, const TShape* oshape = nullptr) {
  if (req == OpReqType::kNullOp || out.Size() == 0) return;
  const TShape& shape = oshape ? *oshape : out.shape;
  MX_DTYPE_SWITCH(in.dtype, T, {
    StridedGather(in.data<T>(), base, strides, shape, out.data<T>(), req);
  });
}

// out = zeros of out's shape (kept for kAddTo) with in[i] written at
// out[base + sum_d idx_d(i) * strides[d]] over in's row-major indices; the
// positions are distinct, so it is a plain scatter.
inline void ScatterCompute(const TBlob& in, int64_t base,
                           const std::vector<int64_t>& strides, OpReqType req,
                           const TBlob& out) {
  if (req == OpReqType::kNullOp) return;
  const TShape& is = in.shape;
  const int nd = is.ndim();
  MX_DTYPE_SWITCH(out.dtype, T, {
    const T* x = in.data<T>();
    T* y = out.data<T>();
    if (req != OpReqType::kAddTo) std::fill(y, y + out.Size(), T{});
    const OpReqType r =
        req == OpReqType::kAddTo ? OpReqType::kAddTo : OpReqType::kWriteTo;
    std::vector<int64_t> idx(nd, 0);
    const int64_t n = is.Size();
    int64_t off = base;
    for (int64_t i = 0; i < n; ++i) {
      Assign(y + off, r, x[i]);
      for (int d = nd - 1; d >= 0; --d) {  // Next index, odometer style.
        off += strides[d];
        if (++idx[d] < is[d]) break;
        off -= idx[d] * strides[d];
        idx[d] = 0;
      }
    }
  });
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_STRIDED_GATHER_H_
