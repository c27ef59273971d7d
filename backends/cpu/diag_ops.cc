// diag, as MXNet's (and NumPy's diag/diagonal): a 1-D input becomes the
// k-th diagonal of a square matrix of zeros (side n + |k|); an N-D input
// (N >= 2) gives the k-th diagonal of the planes of axes axis1 and axis2,
// those axes dropped and the diagonal appended last. Both are strided
// copies; _backward_diag (its gradient) is the adjoint copy, and diag is
// _backward_diag's gradient, so every order differentiates.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/strided_gather.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct DiagParam {
  int k = 0;
  int axis1 = 0;
  int axis2 = 1;
  static void Declare(ParamSchema<DiagParam>* s) {
    s->Field("k", &DiagParam::k)
        .Describe("the diagonal: 0 main, > 0 above, < 0 below");
    s->Field("axis1", &DiagParam::axis1).Describe("N-D input: the rows axis");
    s->Field("axis2", &DiagParam::axis2)
        .Describe("N-D input: the columns axis");
  }
};

// Where the diagonal lies in the larger array of the pair: the 1-D input's
// (m, m) matrix or the N-D input itself. The diagonal (and the other kept
// axes) as a strided view of it: shape, strides and first element.
struct DiagView {
  TShape large;  // The matrix (1-D input) or the input (N-D).
  TShape small;  // The vector (1-D input) or the output (N-D).
  int64_t base = 0;
  std::vector<int64_t> strides;  // One per dim of `small`.
};

DiagView ViewOf(const NodeAttrs& attrs, const TShape& data) {
  const DiagParam& p = attrs.get<DiagParam>();
  const std::string label = OpLabel(attrs);
  const int64_t k = p.k;
  DiagView v;
  if (data.ndim() == 0) {
    throw ShapeError(absl::StrCat(label,
                                  ": input 0 (data) is a scalar; "
                                  "diag needs 1 or more dims"));
  }
  if (data.ndim() == 1) {
    const int64_t m = data[0] + std::abs(k);
    v.large = TShape({m, m});
    v.small = data;
    v.base = k >= 0 ? k : -k * m;
    v.strides = {m + 1};
    return v;
  }
  const int a1 = data.CheckAxis(p.axis1, label.c_str());
  const int a2 = data.CheckAxis(p.axis2, label.c_str());
  if (a1 == a2) {
    throw InvalidArgument(absl::StrCat(label, ": axis1=", p.axis1,
                                       " and axis2=", p.axis2,
                                       " are the same axis of input 0 (data) "
                                       "of shape ",
                                       data.ToString()));
  }
  const std::vector<int64_t> s = Strides(data);
  const int64_t d1 = data[a1], d2 = data[a2];
  const int64_t len = std::max<int64_t>(
      0, k >= 0 ? std::min(d1, d2 - k) : std::min(d1 + k, d2));
  std::vector<int64_t> dims;
  for (int d = 0; d < data.ndim(); ++d) {
    if (d == a1 || d == a2) continue;
    dims.push_back(data[d]);
    v.strides.push_back(s[d]);
  }
  dims.push_back(len);
  v.strides.push_back(s[a1] + s[a2]);
  v.large = data;
  v.small = TShape(dims);
  v.base = len == 0 ? 0 : (k >= 0 ? k * s[a2] : -k * s[a1]);
  return v;
}

// The output of diag for data of shape `data`.
TShape DiagShape(const DiagView& v, const TShape& data) {
  return data.ndim() == 1 ? v.large : v.small;
}

// diag(data): build (1-D) scatters into zeros, extract (N-D) gathers.
void DiagCompute(const OpContext&, const NodeAttrs& attrs,
                 const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  const DiagView v = ViewOf(attrs, in[0].shape);
  if (in[0].shape.ndim() == 1) {
    ScatterCompute(in[0], v.base, v.strides, req[0], out[0]);
  } else {
    GatherCompute(in[0], v.base, v.strides, req[0], out[0]);
  }
}

// _backward_diag(ograd, data): the adjoint, into data's shape.
void DiagBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                         const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out) {
  const DiagView v = ViewOf(attrs, in[1].shape);
  if (in[1].shape.ndim() == 1) {
    GatherCompute(in[0], v.base, v.strides, req[0], out[0]);
  } else {
    ScatterCompute(in[0], v.base, v.strides, req[0], out[0]);
  }
}

MX_REGISTER_OP(diag)
    .Describe(
        "1-D data: a square matrix with data on diagonal k; N-D data: the "
        "k-th diagonals of the (axis1, axis2) planes, as a last axis.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<DiagParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& d = (*in)[0];
      if (!d.is_known()) return;
      AssignShape(attrs, out, 0, DiagShape(ViewOf(attrs, d), d), true);
    })
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, DiagCompute);

MX_REGISTER_OP(_backward_diag)
    .Describe(
        "diag's gradient: (ograd, data) -> ograd copied back to data's "
        "shape (zeros off the diagonal).")
    .SetNumInputs(2)
    .SetInputNames({"ograd", "data"})
    .SetParams<DiagParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      const TShape& d = (*in)[1];
      if (!d.is_known()) return;
      AssignShape(attrs, in, 0, DiagShape(ViewOf(attrs, d), d), false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[0], true);
      AssignType(attrs, in, 0, (*out)[0], false);
    })
    .SetCompute(Context::kCPU, DiagBackwardCompute);

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  SetGradient("diag", [](B& b, const E& g) {
    return E{b.Op("_backward_diag", {g[0], b.x()}, b.n->attrs.dict)};
  });
  // Linear in ograd; data lends its shape only.
  SetGradient("_backward_diag", [](B& b, const E& g) {
    return E{b.Op("diag", {g[0]}, b.n->attrs.dict), NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
