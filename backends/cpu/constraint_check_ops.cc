// npx.constraint_check (MXNet 2's _npx_constraint_check): a 0-d bool true
// when every element of the bool input is true, else an InvalidArgument
// carrying `msg` (MXNet 2 raises ValueError) at the next wait. Graphs use
// it as a factor (x * constraint_check(x > 0)) so the check runs in
// symbolic mode too. No gradient.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct ConstraintCheckParam {
  std::string msg = "Constraint violated.";
  static void Declare(ParamSchema<ConstraintCheckParam>* s) {
    s->Field("msg", &ConstraintCheckParam::msg)
        .Describe("the error's message when an element is false");
  }
};

void ConstraintCheckCompute(const OpContext&, const NodeAttrs& attrs,
                            const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  const bool* x = in[0].data<bool>();
  for (int64_t i = 0; i < in[0].Size(); ++i) {
    if (!x[i]) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": ", attrs.get<ConstraintCheckParam>().msg));
    }
  }
  Assign(out[0].data<bool>(), req[0], true);
}

MX_REGISTER_OP(_npx_constraint_check)
    .Describe(
        "True (0-d bool) when every element of the bool input is true; "
        "otherwise an error carrying msg.")
    .SetParams<ConstraintCheckParam>()
    .SetNumInputs(1)
    .SetInputNames({"input"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>*,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, TShape::Scalar(), true);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      if ((*in)[0] != DType::kUnknown && (*in)[0] != DType::kBool) {
        throw DTypeError(
            absl::StrCat(OpLabel(attrs), ": input 0 (input) has dtype ",
                         DTypeName((*in)[0]), " but bool is required"));
      }
      AssignType(attrs, out, 0, DType::kBool, true);
    })
    .SetCompute(Context::kCPU, ConstraintCheckCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("_npx_constraint_check",
              [](GradBuilder&, const std::vector<NodeEntry>&) {
                return std::vector<NodeEntry>{NodeEntry{}};
              });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
