// tril and triu (MXNet's _npi_tril / _npi_triu): keep the lower or upper
// triangle of the last two axes, offset by the diagonal index k, and zero
// the rest. As in NumPy, a 1-D array of length n becomes the (n, n) matrix
// whose rows are all that array.
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

struct TriangleParam {
  int64_t k = 0;
  static void Declare(ParamSchema<TriangleParam>* s) {
    s->Field("k", &TriangleParam::k)
        .Describe(
            "diagonal: 0 the main one, > 0 above it, < 0 below it; element "
            "(i, j) is on diagonal j - i");
  }
};

void TriangleShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                   std::vector<TShape>* out) {
  const TShape& x = (*in)[0];
  if (!x.ndim_known()) return;
  if (x.ndim() == 0) {
    throw ShapeError(absl::StrCat(OpLabel(attrs),
                                  ": input 0 (data) has shape () but at "
                                  "least 1 axis is required"));
  }
  AssignShape(attrs, out, 0, x.ndim() == 1 ? TShape{x[0], x[0]} : x, true);
}

template <bool kLower>
void TriangleCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp || out[0].Size() == 0) return;
  const int64_t k = attrs.get<TriangleParam>().k;
  const TShape& os = out[0].shape;
  const int64_t rows = os[os.ndim() - 2], cols = os[os.ndim() - 1];
  const bool from_vector = in[0].shape.ndim() == 1;
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(out[0].Size(), 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t idx = b; idx < e; ++idx) {
        const int64_t j = idx % cols, i = (idx / cols) % rows;
        const bool keep = kLower ? j - i <= k : j - i >= k;
        Assign(y + idx, r, keep ? x[from_vector ? j : idx] : T{});
      }
    });
  });
}

template <bool kLower>
void RegisterTriangle(const std::string& name) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(kLower ? "Lower triangle (j - i <= k) of the last two axes."
                       : "Upper triangle (j - i >= k) of the last two axes.")
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetParams<TriangleParam>()
      .SetInferShape(TriangleShape)
      .SetInferType(SameType)
      .SetCompute(Context::kCPU, TriangleCompute<kLower>)
      .AddAlias("_npi_" + name);
  // The op masks, so its gradient masks too; a 1-D input was broadcast
  // over the rows, which _reduce_sum_like sums back (and leaves other
  // shapes alone).
  SetUnaryGrad(name, [name](GradBuilder& b, const NodeEntry& g) {
    const NodeEntry masked = b.Op(name, {g}, b.n->attrs.dict);
    return b.Op("_reduce_sum_like", {masked, b.x()});
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterTriangle<true>("tril");
  RegisterTriangle<false>("triu");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
