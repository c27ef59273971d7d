// The CUDA plugin's ordering and scan kernels on a real GPU against the CPU
// kernels: argmax and argsort of long lines, the radix-sort order (ties,
// -0/+0, NaN, every numeric dtype), cumsum's two paths, _backward_topk on
// positions topk would not give, _arange. Without a usable GPU each test
// skips with one line saying why.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd.h"
#include "backends/cuda/cuda_test_util.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "ndarray/ndarray.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::Host;
using testing::RandomArray;
using testing::ToDouble;

#define SKIP_WITHOUT_GPU() MX_SKIP_WITHOUT_GPU()

NDArray Op(const std::string& name, const std::vector<NDArray>& in,
           const AttrDict& attrs) {
  return nd::Call(name, in, attrs);
}

// argmax and argsort along lines longer than a block (several tiles and
// strides) and over the flattened array, forward only (integer outputs).
TEST(CudaOps, ArgmaxAndArgsortOfLongLinesMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const NDArray x = RandomArray({3, 700, 2}, DType::kFloat32, -1, 1, 11);
  const NDArray gx = x.Copy(Context::GPU(0));
  const std::vector<std::pair<std::string, AttrDict>> calls = {
      {"argsort", {{"axis", "1"}}},
      {"argsort",
       {{"axis", "None"}, {"is_ascend", "False"}, {"dtype", "int32"}}},
      {"argmax", {{"axis", "1"}}},
      {"argmax", {}}};
  for (const auto& [op, attrs] : calls) {
    SCOPED_TRACE(op);
    EXPECT_EQ(Host(Op(op, {gx}, attrs)), ToDouble(Op(op, {x}, attrs)));
  }
}

// The GPU's order (radix sorts) is the CPU's for every numeric dtype: ties
// by position, -0 equal to +0, NaN last either way, one line of 2^20 and
// 4096 short lines of integers full of ties.
TEST(CudaOps, OrderMatchesTheCpuOnTiesZerosNanAndLongLines) {
  SKIP_WITHOUT_GPU();
  std::vector<double> values;
  for (int i = 0; i < 600; ++i) values.push_back(i % 7 - 3);
  for (int i : {5, 100, 333}) values[i] = std::nan("");
  for (int i : {17, 41, 402}) values[i] = -0.0;
  values[200] = INFINITY;
  values[201] = -INFINITY;
  const std::vector<AttrDict> orders = {{{"axis", "1"}},
                                        {{"axis", "1"}, {"is_ascend", "0"}},
                                        {{"axis", "0"}, {"is_ascend", "0"}},
                                        {{"axis", "None"}}};
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt8,
        DType::kUInt8, DType::kInt32, DType::kInt64}) {
    // NaN and infinities become integers as the CPU's cast makes them.
    const NDArray x = nd::cast(testing::ArrayOf({3, 200}, values), dtype);
    const NDArray gx = x.Copy(Context::GPU(0));
    for (const AttrDict& attrs : orders) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + attrs.begin()->second);
      EXPECT_EQ(Host(Op("argsort", {gx}, attrs)),
                ToDouble(Op("argsort", {x}, attrs)));
    }
  }
  const NDArray line = RandomArray({1 << 20}, DType::kFloat32, -1, 1, 3);
  const AttrDict wide = {{"dtype", "int32"}, {"is_ascend", "0"}};
  EXPECT_EQ(Host(Op("argsort", {line.Copy(Context::GPU(0))}, wide)),
            ToDouble(Op("argsort", {line}, wide)));
  const NDArray lines = RandomArray({4096, 33}, DType::kInt32, -9, 9, 4);
  const AttrDict top = {{"k", "5"}, {"ret_typ", "indices"}};
  EXPECT_EQ(Host(Op("topk", {lines.Copy(Context::GPU(0))}, top)),
            ToDouble(Op("topk", {lines}, top)));
}

// cumsum's two GPU paths (a thread per line; one CUB scan by line over the
// whole GPU when the lines are few and long) against the CPU: one line of 2^20,
// three strided lines (axis 0), integers wrapping past int32's range, a
// float16 line summed in double, the output cast to another dtype, and the
// gradient (a reversed cumsum of the head gradient) of one long line.
TEST(CudaOps, CumsumOfFewLongLinesAndManyShortOnesMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  struct Case {
    TShape shape;
    DType dtype;
    AttrDict attrs;
  };
  const std::vector<Case> cases = {
      {{1 << 20}, DType::kFloat32, {}},
      {{5000, 3}, DType::kFloat64, {{"axis", "0"}}},
      {{3, 5000}, DType::kInt32, {{"axis", "1"}}},
      {{2, 70000}, DType::kInt64, {{"axis", "-1"}, {"dtype", "int32"}}},
      {{4099}, DType::kFloat16, {{"dtype", "float32"}}},
      {{4096, 40}, DType::kFloat32, {{"axis", "1"}}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.ToString() + " " + DTypeName(c.dtype));
    // Integers in [0, 10^5): 70000 of them sum past int32's range (the
    // int32 output wraps as the CPU's).
    const bool integer = c.dtype == DType::kInt32 || c.dtype == DType::kInt64;
    const NDArray x =
        integer ? nd::cast(RandomArray(c.shape, DType::kFloat64, 0, 1e5, 5),
                           c.dtype)
                : RandomArray(c.shape, c.dtype, -1, 1, 5);
    const std::vector<double> want = ToDouble(Op("cumsum", {x}, c.attrs));
    const std::vector<double> got =
        Host(Op("cumsum", {x.Copy(Context::GPU(0))}, c.attrs));
    // Sums in double in another order: float32 results equal but for a
    // rare rounding; integer ones exactly.
    EXPECT_TRUE(AllClose(got, want, integer ? 0 : 1e-6, integer ? 0 : 1e-6));
  }
  const NDArray x = RandomArray({3000}, DType::kFloat32, -1, 1, 6);
  NDArray on_gpu = nd::zeros({3000}, Context::GPU(0));
  autograd::AttachGrad(&on_gpu);
  {
    autograd::RecordScope record(true);
    const NDArray y = Op("cumsum", {on_gpu}, {});
    autograd::Backward({y}, {x.Copy(Context::GPU(0))});
  }
  // d/dx of sum(head * cumsum(x)) is the reversed cumsum of head.
  std::vector<double> head = ToDouble(x), want(head.size());
  double acc = 0;
  for (size_t i = head.size(); i-- > 0;) want[i] = acc += head[i];
  EXPECT_TRUE(AllClose(Host(on_gpu.grad()), want, 1e-5, 1e-5));
}

// _backward_topk called with positions topk would not give: repeated ones
// add up, one outside the line is an error naming the op, as on the CPU.
TEST(CudaOps, BackwardTopkOfRepeatedAndBadPositionsIsTheCpus) {
  SKIP_WITHOUT_GPU();
  const AttrDict attrs = {{"axis", "1"}, {"k", "3"}};
  const NDArray g = RandomArray({2, 3}, DType::kFloat32, -1, 1, 7);
  const NDArray data = RandomArray({2, 4}, DType::kFloat32, -1, 1, 8);
  const NDArray repeated = testing::ArrayOf({2, 3}, {1, 1, 3, 0, 2, 2});
  const auto on_gpu = [](const NDArray& a) { return a.Copy(Context::GPU(0)); };
  EXPECT_TRUE(AllClose(
      Host(Op("_backward_topk", {on_gpu(g), on_gpu(repeated), on_gpu(data)},
              attrs)),
      ToDouble(Op("_backward_topk", {g, repeated, data}, attrs)), 1e-6, 1e-6));
  const NDArray outside = testing::ArrayOf({2, 3}, {1, 4, 3, 0, 2, 1});
  try {
    Host(Op("_backward_topk", {on_gpu(g), on_gpu(outside), on_gpu(data)},
            attrs));
    ADD_FAILURE() << "position 4 of a line of 4 was accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(testing::Contains(e.what(), "_backward_topk")) << e.what();
    EXPECT_TRUE(testing::Contains(e.what(), "outside [0, 4)")) << e.what();
  }
}

TEST(CudaOps, ArangeOnTheGpuMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  // _arange has no inputs: asked for on gpu(0).
  const AttrDict range = {
      {"start", "-2"}, {"stop", "3"}, {"step", "0.5"}, {"repeat", "2"}};
  const NDArray on_gpu = nd::Call("_arange", {}, range, Context::GPU(0));
  EXPECT_EQ(on_gpu.ctx(), Context::GPU(0));
  EXPECT_EQ(Host(on_gpu), ToDouble(Op("_arange", {}, range)));
}

}  // namespace
}  // namespace mx
