// Planning and registering reductions over axes (sum, prod, norm, argmax,
// ...): which dims an `axis`/`exclude` pair reduces, the output shape and
// dtype, and a walk over the reduced elements of each output.
//
// A reduction is planned once per call: the input's dims are split into kept
// and reduced ones, size-1 dims are dropped and neighbouring dims of the same
// kind are merged, so the kernel walks at most a few (extent, stride) pairs.
//
//   const ReducePlan plan = MakePlan(shape, ReducedAxes(attrs, shape, axis,
//                                                       /*exclude=*/false));
//   for (int64_t o = 0; o < plan.out_size; ++o)
//     ForEachReduced(x + KeptOffset(o, plan), plan, [&](T v) { ... });
#ifndef MXCORE_BACKENDS_CPU_REDUCE_UTIL_H_
#define MXCORE_BACKENDS_CPU_REDUCE_UTIL_H_

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"
#include "graph/node.h"

namespace mx {
namespace cpu {

// Elements per task of a reduction's ParallelFor.
constexpr int64_t kReduceGrain = 1 << 14;

// The input's dims, split into kept and reduced groups (outer to inner).
struct ReducePlan {
  std::vector<int64_t> keep_extent, keep_stride;
  std::vector<int64_t> red_extent, red_stride;
  int64_t out_size = 1;
  int64_t red_size = 1;
};

inline ReducePlan MakePlan(const TShape& in, const std::vector<bool>& reduced) {
  ReducePlan plan;
  const std::vector<int64_t> strides = Strides(in);
  int last_kind = -1;  // 0 kept, 1 reduced.
  for (int d = 0; d < in.ndim(); ++d) {
    const int kind = reduced[d] ? 1 : 0;
    (kind ? plan.red_size : plan.out_size) *= in[d];
    if (in[d] == 1) continue;
    auto& ext = kind ? plan.red_extent : plan.keep_extent;
    auto& str = kind ? plan.red_stride : plan.keep_stride;
    if (kind == last_kind) {  // Contiguous with the previous dim: merge.
      ext.back() *= in[d];
      str.back() = strides[d];
    } else {
      ext.push_back(in[d]);
      str.push_back(strides[d]);
    }
    last_kind = kind;
  }
  return plan;
}

// Offset in the input of the first element reduced into output `o`.
inline int64_t KeptOffset(int64_t o, const ReducePlan& p) {
  int64_t offset = 0;
  for (int d = static_cast<int>(p.keep_extent.size()) - 1; d >= 0; --d) {
    offset += (o % p.keep_extent[d]) * p.keep_stride[d];
    o /= p.keep_extent[d];
  }
  return offset;
}

// Calls f(offset) for every input element reduced into one output, with
// offsets from that output's first element, in row-major order of the
// reduced dims.
template <typename F>
inline void ForEachReducedOffset(const ReducePlan& p, F&& f) {
  const size_t nd = p.red_extent.size();
  if (nd == 0) {
    if (p.red_size > 0) f(int64_t{0});
    return;
  }
  if (nd == 1) {
    const int64_t n = p.red_extent[0], s = p.red_stride[0];
    for (int64_t i = 0; i < n; ++i) f(i * s);
    return;
  }
  if (p.red_size == 0) return;
  std::vector<int64_t> idx(nd, 0);
  const int64_t inner = p.red_extent[nd - 1], inner_s = p.red_stride[nd - 1];
  int64_t offset = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) f(offset + i * inner_s);
    int d = static_cast<int>(nd) - 2;
    for (; d >= 0; --d) {
      offset += p.red_stride[d];
      if (++idx[d] < p.red_extent[d]) break;
      offset -= idx[d] * p.red_stride[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Calls f(value) for every input element reduced into the output whose
// elements start at `base`.
template <typename T, typename F>
inline void ForEachReduced(const T* base, const ReducePlan& p, F&& f) {
  ForEachReducedOffset(p, [&](int64_t offset) { f(base[offset]); });
}

// The attributes of sum, mean, prod, ...: MXNet's ReduceAxesParam.
struct ReduceParam {
  std::optional<TShape> axis;
  bool keepdims = false;
  bool exclude = false;
  static void Declare(ParamSchema<ReduceParam>* s) {
    s->Field("axis", &ReduceParam::axis)
        .Describe("axes to reduce; none or () reduces all axes");
    s->Field("keepdims", &ReduceParam::keepdims)
        .Describe("keep reduced axes with length 1");
    s->Field("exclude", &ReduceParam::exclude)
        .Describe("reduce the axes NOT listed in axis");
  }
};

// Which dims of `in` are reduced; throws on a bad or repeated axis.
inline std::vector<bool> ReducedAxes(const NodeAttrs& attrs, const TShape& in,
                                     const std::optional<TShape>& axis,
                                     bool exclude) {
  std::vector<bool> reduced(in.ndim(), false);
  if (!axis || axis->ndim() <= 0) {
    std::fill(reduced.begin(), reduced.end(), true);
    return reduced;
  }
  const std::string label = OpLabel(attrs);
  for (int64_t a : *axis) {
    const int d = in.CheckAxis(static_cast<int>(a), label.c_str());
    if (reduced[d]) {
      throw InvalidArgument(
          absl::StrCat(label, ": axis=", axis->ToString(), " lists axis ", d,
                       " more than once (input shape ", in.ToString(), ")"));
    }
    reduced[d] = true;
  }
  if (exclude) reduced.flip();
  return reduced;
}

inline TShape ReducedShape(const TShape& in, const std::vector<bool>& reduced,
                           bool keepdims) {
  std::vector<int64_t> dims;
  for (int d = 0; d < in.ndim(); ++d) {
    if (!reduced[d]) {
      dims.push_back(in[d]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  return TShape(dims);
}

// For ops with no identity (max, argmax): refuses a zero-length reduced dim.
inline void RequireNonEmptyReduction(const NodeAttrs& attrs, const TShape& in,
                                     const std::vector<bool>& reduced,
                                     bool flattened = false) {
  for (int d = 0; d < in.ndim(); ++d) {
    if (reduced[d] && in[d] == 0) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": cannot reduce input 0 (data) of shape ",
          in.ToString(), " over zero-length ",
          flattened ? std::string("elements") : absl::StrCat("axis ", d),
          "; the op has no identity"));
    }
  }
}

// The reduction attributes of gradient node `n`'s forward op (axis,
// keepdims, exclude) as given, for _broadcast_reduced_like and friends.
enum class ReduceKind { kSum, kMean, kMax, kMin, kNanSum, kProd, kNanProd };

// The kernel of reduction op `kind` (sum, mean, ...; reduce_ops.cc): `in`
// reduced over `axis` (none or (): all; `exclude` flips it) into `out`,
// whose dtype is the op's for in's (sum of bool: int64). `attrs` names the
// op in errors.
void ReduceInto(ReduceKind kind, const NodeAttrs& attrs,
                const std::optional<TShape>& axis, bool exclude,
                const TBlob& in, OpReqType req, const TBlob& out);

inline AttrDict ReduceAttrs(const NodePtr& n) {
  AttrDict d;
  for (const char* key : {"axis", "keepdims", "exclude"}) {
    auto it = n->attrs.dict.find(key);
    if (it != n->attrs.dict.end()) d[key] = it->second;
  }
  return d;
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_REDUCE_UTIL_H_
