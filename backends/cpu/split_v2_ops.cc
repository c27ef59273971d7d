// _split_v2 (MXNet's split_v2; MXNet 2's np.split is `_npi_split`):
// splits `data` along `axis` at `indices`, piece i running from indices[i]
// to indices[i + 1] (the last to the end; np.split passes indices with a
// leading 0), or into `sections` equal pieces. squeeze_axis drops the axis
// (each piece must have length 1). Indices must be non-decreasing and at
// most the axis' length (MXNet refuses NumPy's empty pieces past the end;
// on an empty axis it ignores the indices, mxcore requires them 0). The
// gradient joins the pieces' gradients back with Concat.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct SplitV2Param {
  TShape indices = TShape(std::vector<int64_t>{});
  int axis = 1;
  bool squeeze_axis = false;
  int sections = 0;
  static void Declare(ParamSchema<SplitV2Param>* s) {
    s->Field("indices", &SplitV2Param::indices)
        .Describe("Where the pieces start (np.split puts 0 first).");
    s->Field("axis", &SplitV2Param::axis).Describe("Axis to split.");
    s->Field("squeeze_axis", &SplitV2Param::squeeze_axis)
        .Describe("Drop the axis (pieces of length 1).");
    s->Field("sections", &SplitV2Param::sections)
        .AtMost(kMaxOpArity)
        .Describe("Equal pieces, when > 0 (indices are then ignored).");
  }
};

int NumPieces(const NodeAttrs& attrs) {
  const SplitV2Param& p = attrs.get<SplitV2Param>();
  const int64_t n = p.sections > 0 ? p.sections : p.indices.ndim();
  return static_cast<int>(std::clamp<int64_t>(n, 0, kMaxOpArity));
}

// [start, end) of each piece along an axis of length `len`.
std::vector<std::pair<int64_t, int64_t>> Pieces(const NodeAttrs& attrs,
                                                int64_t len) {
  const SplitV2Param& p = attrs.get<SplitV2Param>();
  const std::string label = OpLabel(attrs);
  std::vector<std::pair<int64_t, int64_t>> pieces;
  if (p.sections > 0) {
    if (len % p.sections != 0) {
      throw ShapeError(absl::StrCat(label, ": an axis of length ", len,
                                    " does not split into ", p.sections,
                                    " equal sections"));
    }
    const int64_t step = len / p.sections;
    for (int i = 0; i < p.sections; ++i) {
      pieces.emplace_back(i * step, (i + 1) * step);
    }
    return pieces;
  }
  const int n = p.indices.ndim();
  if (n < 1 || n > kMaxOpArity) {
    throw InvalidArgument(absl::StrCat(
        label, ": indices=", p.indices.ToString(), " must name 1 to ",
        kMaxOpArity, " pieces when sections is 0"));
  }
  for (int i = 0; i < n; ++i) {
    const int64_t start = p.indices[i];
    const int64_t end = i + 1 < n ? p.indices[i + 1] : len;
    if (start < 0 || start > end || end > len) {
      throw InvalidArgument(absl::StrCat(
          label, ": indices=", p.indices.ToString(), " give piece ", i, " [",
          start, ", ", end, ") on an axis of length ", len,
          " (indices must be non-decreasing and at most the length)"));
    }
    pieces.emplace_back(start, end);
  }
  return pieces;
}

void SplitV2Shape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const SplitV2Param& p = attrs.get<SplitV2Param>();
  const TShape& s = (*in)[0];
  if (!s.is_known()) return;
  const int a = s.CheckAxis(p.axis, OpLabel(attrs).c_str());
  const auto pieces = Pieces(attrs, s[a]);
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::vector<int64_t> dims(s.begin(), s.end());
    dims[a] = pieces[i].second - pieces[i].first;
    if (p.squeeze_axis) {
      if (dims[a] != 1) {
        throw ShapeError(absl::StrCat(OpLabel(attrs),
                                      ": squeeze_axis needs "
                                      "pieces of length 1 but piece ",
                                      i, " has length ", dims[a]));
      }
      dims.erase(dims.begin() + a);
    }
    AssignShape(attrs, out, static_cast<int>(i), TShape(dims), true);
  }
}

void SplitV2Compute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  const TShape& is = in[0].shape;
  const int a = is.CheckAxis(attrs.get<SplitV2Param>().axis, "_split_v2");
  SplitAlongAxis(in[0], a, Pieces(attrs, is[a]), req, out);
}

MX_REGISTER_OP(_split_v2)
    .AddAlias("_npi_split")
    .Describe(
        "Splits data along `axis` at `indices` (piece i from indices[i] to "
        "indices[i+1]) or into `sections` equal pieces.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SplitV2Param>()
    .SetNumOutputs(NumPieces)
    .SetInferShape(SplitV2Shape)
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, SplitV2Compute);

// The pieces' gradients joined along the axis (each given its axis back
// when squeezed), after zeros for what precedes a first piece that does
// not start at 0.
[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("_split_v2", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const SplitV2Param& p = b.n->attrs.get<SplitV2Param>();
    const std::string axis = absl::StrCat(p.axis);
    std::vector<NodeEntry> parts;
    if (p.sections == 0 && p.indices.ndim() > 0 && p.indices[0] > 0) {
      parts.push_back(b.Op("slice_axis", {b.Op("zeros_like", {b.x(0)})},
                           {{"axis", axis},
                            {"begin", "0"},
                            {"end", absl::StrCat(p.indices[0])}}));
    }
    for (const NodeEntry& gi : g) {
      parts.push_back(
          p.squeeze_axis ? b.Op("expand_dims", {gi}, {{"axis", axis}}) : gi);
    }
    return std::vector<NodeEntry>{
        b.Op("Concat", parts,
             {{"num_args", absl::StrCat(parts.size())}, {"dim", axis}})};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
