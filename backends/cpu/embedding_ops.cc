// Embedding (MXNet's op): the rows of weight (input_dim, output_dim) at the
// indices in data, giving data.shape + (output_dim,). It is take(weight,
// data, axis=0, mode=clip), so it runs take's kernel, and its weight
// gradient is take's adjoint, _backward_take (a scatter-add; repeated
// indices add up). Indices get no gradient.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct EmbeddingParam {
  int64_t input_dim = 0;
  int64_t output_dim = 0;
  DType dtype = DType::kFloat32;
  bool sparse_grad = false;
  static void Declare(ParamSchema<EmbeddingParam>* s) {
    s->Field("input_dim", &EmbeddingParam::input_dim)
        .Required()
        .Describe("vocabulary size: weight's rows; indices are clipped to it");
    s->Field("output_dim", &EmbeddingParam::output_dim)
        .Required()
        .Describe("embedding size: weight's columns");
    s->Field("dtype", &EmbeddingParam::dtype)
        .Describe("dtype of weight and output");
    s->Field("sparse_grad", &EmbeddingParam::sparse_grad)
        .Describe(
            "accepted for MXNet models; the weight gradient is dense (the "
            "same values as MXNet's row_sparse one)");
  }
};

// take's attributes for Embedding: rows of weight, indices clipped.
AttrDict TakeAttrs() { return {{"axis", "0"}, {"mode", "clip"}}; }

void CheckDims(const NodeAttrs& attrs) {
  const EmbeddingParam& p = attrs.get<EmbeddingParam>();
  if (p.input_dim <= 0 || p.output_dim <= 0) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": input_dim=", p.input_dim,
        " and output_dim=", p.output_dim, " must both be positive"));
  }
}

void EmbeddingShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  CheckDims(attrs);
  const EmbeddingParam& p = attrs.get<EmbeddingParam>();
  AssignShape(attrs, in, 1, TShape{p.input_dim, p.output_dim}, false);
  const TShape& o = (*out)[0];
  if (!(*in)[0].ndim_known() && o.ndim_known() && o.ndim() >= 1) {
    AssignShape(attrs, in, 0,
                TShape(std::vector<int64_t>(o.begin(), o.end() - 1)), false);
  }
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  std::vector<int64_t> dims(d.begin(), d.end());
  dims.push_back(p.output_dim);
  AssignShape(attrs, out, 0, TShape(dims), true);
}

void EmbeddingType(const NodeAttrs& attrs, std::vector<DType>* in,
                   std::vector<DType>* out) {
  const DType t = attrs.get<EmbeddingParam>().dtype;
  if ((*in)[0] == DType::kBool) {
    throw DTypeError(absl::StrCat(OpLabel(attrs),
                                  ": input 0 (data) has dtype bool but a "
                                  "numeric dtype is required for indices"));
  }
  AssignType(attrs, in, 1, t, false);
  AssignType(attrs, out, 0, t, true);
}

void EmbeddingCompute(const OpContext& ctx, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  CheckDims(attrs);
  const Op& take = OpRegistry::Get()->Lookup("take");
  static const NodeAttrs* take_attrs =
      new NodeAttrs(MakeAttrs(take, TakeAttrs()));
  (*take.compute(Context::kCPU))(ctx, *take_attrs, {in[1], in[0]}, req, out);
}

MX_REGISTER_OP(Embedding)
    .Describe(
        "Rows of weight (input_dim, output_dim) at data's indices: "
        "data.shape + (output_dim,).")
    .SetNumInputs(2)
    .SetInputNames({"data", "weight"})
    .SetParams<EmbeddingParam>()
    .SetInferShape(EmbeddingShape)
    .SetInferType(EmbeddingType)
    .SetCompute(Context::kCPU, EmbeddingCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("Embedding", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{
        NodeEntry{},
        b.Op("_backward_take", {g[0], b.x(0), b.x(1)}, TakeAttrs())};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
