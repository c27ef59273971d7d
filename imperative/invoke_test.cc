// Invoke's per-thread dispatch cache follows changes to an op: a kernel
// replaced (as a plugin does) or an FInvoke attribute added after the op
// ran on this thread is what the next call runs.
#include <utility>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"

namespace mx {
namespace {

// A kernel writing `value` to every element of its output.
FCompute Fill(float value) {
  return [value](const OpContext&, const NodeAttrs&, const std::vector<TBlob>&,
                 const std::vector<OpReqType>&, const std::vector<TBlob>& out) {
    float* y = out[0].data<float>();
    for (int64_t i = 0; i < out[0].Size(); ++i) y[i] = value;
  };
}

float FirstOf(const NDArray& a) { return a.ToVector<float>()[0]; }

TEST(Invoke, FollowsKernelAndAttributeChangesOfAnOpItAlreadyRan) {
  Op& op = OpRegistry::Get()
               ->Register("_test_invoke_swapped")
               .SetNumInputs(1)
               .SetInferShape(SameShape)
               .SetInferType(SameType)
               .SetCompute(Context::kCPU, Fill(1));
  const NDArray x = NDArray::FromVector<float>({3}, {0, 0, 0});
  EXPECT_EQ(FirstOf(imperative::Invoke("_test_invoke_swapped", {x})[0]), 1);

  op.SetCompute(Context::kCPU, Fill(2));  // A plugin's kernel takes over.
  EXPECT_EQ(FirstOf(imperative::Invoke("_test_invoke_swapped", {x})[0]), 2);

  Op::DeviceKernels taken = op.TakeKernels(Context::kCPU);
  EXPECT_THROW(imperative::Invoke("_test_invoke_swapped", {x}), NotFound);
  op.RestoreKernels(Context::kCPU, std::move(taken));
  EXPECT_EQ(FirstOf(imperative::Invoke("_test_invoke_swapped", {x})[0]), 2);

  // An FInvoke set later runs instead of the kernel.
  int finvoke_calls = 0;
  op.SetAttr<imperative::FInvoke>(
      "FInvoke", [&finvoke_calls](
                     const NodeAttrs&, const std::vector<NDArray>& in,
                     std::vector<NDArray>* out, const std::vector<OpReqType>&) {
        ++finvoke_calls;
        (*out)[0] = in[0];
      });
  const std::vector<NDArray> y =
      imperative::Invoke("_test_invoke_swapped", {x});
  EXPECT_EQ(finvoke_calls, 1);
  EXPECT_TRUE(y[0].SharesChunkWith(x));
  OpRegistry::Get()->Unregister("_test_invoke_swapped");
}

}  // namespace
}  // namespace mx
