// amp_cast and amp_multicast, the casts of MXNet's automatic mixed
// precision: which dtypes they cast (float16 and float32 only), the
// widest / narrowest target, gradients back to the input's dtype.
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(AmpCast, CastsOnlyFloat16AndFloat32) {
  const AttrDict to_half = {{"dtype", "float16"}};
  const NDArray f32 = ArrayOf({3}, {1.5, -2, 65504});
  const NDArray half = nd::Call("amp_cast", {f32}, to_half);
  EXPECT_EQ(half.dtype(), DType::kFloat16);
  EXPECT_TRUE(AllClose(ToDouble(half), {1.5, -2, 65504}));
  EXPECT_EQ(nd::Call("amp_cast", {half}, {{"dtype", "float32"}}).dtype(),
            DType::kFloat32);
  // float64 and integers pass through unchanged (MXNet's rule).
  for (DType dt : {DType::kFloat64, DType::kInt32, DType::kUInt8}) {
    const NDArray x = ArrayOf({2}, {3, 4}, dt);
    const NDArray y = nd::Call("amp_cast", {x}, to_half);
    EXPECT_EQ(y.dtype(), dt) << DTypeName(dt);
    EXPECT_TRUE(AllClose(ToDouble(y), {3, 4}));
  }
  ExpectError<InvalidArgument>([&] { nd::Call("amp_cast", {f32}); },
                               {"amp_cast", "dtype"});
}

TEST(AmpMultiCast, WidestOrNarrowestFloat) {
  const NDArray half = ArrayOf({2}, {1, 2}, DType::kFloat16);
  const NDArray single = ArrayOf({2}, {3, 4}, DType::kFloat32);
  const NDArray ints = ArrayOf({2}, {5, 6}, DType::kInt32);
  const NDArray dbl = ArrayOf({2}, {7, 8}, DType::kFloat64);
  const std::vector<NDArray> wide = nd::CallMulti(
      "amp_multicast", {half, single, ints, dbl}, {{"num_outputs", "4"}});
  ASSERT_EQ(wide.size(), 4u);
  EXPECT_EQ(wide[0].dtype(), DType::kFloat32);
  EXPECT_EQ(wide[1].dtype(), DType::kFloat32);
  EXPECT_EQ(wide[2].dtype(), DType::kInt32);
  EXPECT_EQ(wide[3].dtype(), DType::kFloat64);
  EXPECT_TRUE(AllClose(ToDouble(wide[0]), {1, 2}));
  const std::vector<NDArray> narrow =
      nd::CallMulti("amp_multicast", {half, single},
                    {{"num_outputs", "2"}, {"cast_narrow", "True"}});
  EXPECT_EQ(narrow[0].dtype(), DType::kFloat16);
  EXPECT_EQ(narrow[1].dtype(), DType::kFloat16);
  EXPECT_TRUE(AllClose(ToDouble(narrow[1]), {3, 4}));
  ExpectError<InvalidArgument>(
      [&] {
        nd::CallMulti("amp_multicast", {half}, {{"num_outputs", "0"}});
      },
      {"amp_multicast", "num_outputs=0"});
}

// The gradient of each output reaches its input in the input's dtype.
TEST(AmpCast, GradientsGoBackInTheInputDtype) {
  EXPECT_TRUE(CheckGradient("amp_cast", {{"dtype", "float32"}},
                            {RandomArray({3, 2}, DType::kFloat64)}));
  EXPECT_TRUE(CheckGradient("amp_multicast", {{"num_outputs", "2"}},
                            {RandomArray({3}, DType::kFloat64),
                             RandomArray({2, 2}, DType::kFloat64)}));
  // float32 -> float16 -> sum: the gradient comes back as float32 ones.
  NDArray x = ArrayOf({3}, {1, 2, 3});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    autograd::RecordScope record;
    y = nd::Call("sum", {nd::Call("amp_cast", {x}, {{"dtype", "float16"}})});
  }
  autograd::Backward({y});
  EXPECT_EQ(x.grad().dtype(), DType::kFloat32);
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), {1, 1, 1}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
