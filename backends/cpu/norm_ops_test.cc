#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// L1 or L2 norm over axis 1 of a [rows, cols] array, by plain loops.
std::vector<double> RowNorms(const std::vector<double>& x, int rows, int cols,
                             int ord) {
  std::vector<double> out(rows, 0);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const double v = x[r * cols + c];
      out[r] += ord == 1 ? std::fabs(v) : v * v;
    }
    if (ord == 2) out[r] = std::sqrt(out[r]);
  }
  return out;
}

TEST(Norm, L1AndL2OverAxesMatchLoops) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    const NDArray x = RandomArray({4, 6}, dt, -2, 2, 3);
    const std::vector<double> xv = ToDouble(x);
    const double tol = dt == DType::kFloat16 ? 2e-3 : 1e-6;
    for (int ord : {1, 2}) {
      const NDArray rows = nd::norm(x, ord, {1});
      EXPECT_EQ(rows.shape(), TShape({4}));
      EXPECT_EQ(rows.dtype(), dt);
      EXPECT_TRUE(AllClose(ToDouble(rows), RowNorms(xv, 4, 6, ord), tol, tol))
          << DTypeName(dt) << " ord " << ord;
      // All axes: the norm of the flattened array.
      const NDArray all = nd::norm(x, ord);
      EXPECT_EQ(all.shape(), TShape::Scalar());
      EXPECT_TRUE(AllClose(ToDouble(all), RowNorms(xv, 1, 24, ord), tol, tol));
      // Over both axes (MXNet's "matrix" form is entrywise too), keepdims.
      const NDArray both = nd::norm(x, ord, {0, 1}, true);
      EXPECT_EQ(both.shape(), TShape({1, 1}));
      EXPECT_TRUE(AllClose(ToDouble(both), RowNorms(xv, 1, 24, ord), tol, tol));
    }
  }
  // Over axis 0 (strided) of a 3-d array.
  const NDArray y = RandomArray({3, 2, 5}, DType::kFloat64, -1, 1, 4);
  const NDArray t = nd::transpose(y, {1, 2, 0});
  EXPECT_TRUE(AllClose(ToDouble(nd::norm(y, 2, {0})),
                       RowNorms(ToDouble(t), 10, 3, 2), 1e-12, 1e-12));
}

TEST(Norm, Float64DoesNotOverflowOrVanish) {
  for (double scale : {1e200, 1e-200}) {
    const NDArray x = ArrayOf({2}, {3 * scale, -4 * scale}, DType::kFloat64);
    EXPECT_NEAR(ToDouble(nd::norm(x))[0] / scale, 5, 1e-14) << scale;
  }
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    EXPECT_EQ(ToDouble(nd::norm(ArrayOf({3}, {1, inf, -inf}, dt)))[0], inf);
    EXPECT_TRUE(
        std::isnan(ToDouble(nd::norm(ArrayOf({2}, {inf, nan}, dt)))[0]));
    // float32 values whose squares overflow float32 (accumulated in double).
    EXPECT_NEAR(ToDouble(nd::norm(ArrayOf({2}, {3e30, 4e30}, dt)))[0], 5e30,
                1e24);
  }
  EXPECT_EQ(ToDouble(nd::norm(ArrayOf({2, 0}, {}), 2, {1})),
            (std::vector<double>{0, 0}));
}

TEST(Norm, OutDtypeAndBadArguments) {
  const NDArray x = ArrayOf({2}, {3, 4}, DType::kFloat16);
  const NDArray y =
      nd::Call("norm", {x}, {{"out_dtype", "float64"}, {"ord", "2"}});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{5}));
  ExpectError<InvalidArgument>([&] { nd::norm(x, 3); },
                               {"op \"norm\"", "ord=3", "1 or 2"});
  EXPECT_THROW(nd::norm(ArrayOf({2}, {1, 2}, DType::kInt32)), DTypeError);
  EXPECT_THROW(nd::Call("norm", {x}, {{"out_dtype", "int32"}}), DTypeError);
  EXPECT_THROW(nd::norm(x, 2, {1}), ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
