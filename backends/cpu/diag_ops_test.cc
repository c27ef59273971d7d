#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Diag(const NDArray& x, int k, int axis1 = 0, int axis2 = 1) {
  return nd::Call("diag", {x},
                  {{"k", nd::Attr(k)},
                   {"axis1", nd::Attr(axis1)},
                   {"axis2", nd::Attr(axis2)}});
}

TEST(Diag, VectorBecomesASquareMatrix) {
  const NDArray v = ArrayOf({2}, {5, 7});
  NDArray m = Diag(v, 0);
  EXPECT_EQ(m.shape(), TShape({2, 2}));
  EXPECT_EQ(ToDouble(m), (std::vector<double>{5, 0, 0, 7}));
  m = Diag(v, 1);
  EXPECT_EQ(m.shape(), TShape({3, 3}));
  EXPECT_EQ(ToDouble(m), (std::vector<double>{0, 5, 0, 0, 0, 7, 0, 0, 0}));
  m = Diag(ArrayOf({2}, {5, 7}, DType::kInt32), -1);
  EXPECT_EQ(m.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(m), (std::vector<double>{0, 0, 0, 5, 0, 0, 0, 7, 0}));
}

TEST(Diag, MatrixAndPlanesGiveTheirDiagonals) {
  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  std::vector<double> values(12);
  for (int i = 0; i < 12; ++i) values[i] = i;
  const NDArray a = ArrayOf({3, 4}, values);
  EXPECT_EQ(ToDouble(Diag(a, 0)), (std::vector<double>{0, 5, 10}));
  EXPECT_EQ(ToDouble(Diag(a, 1)), (std::vector<double>{1, 6, 11}));
  EXPECT_EQ(ToDouble(Diag(a, 3)), (std::vector<double>{3}));
  EXPECT_EQ(ToDouble(Diag(a, -2)), (std::vector<double>{8}));
  EXPECT_EQ(Diag(a, 4).shape(), TShape({0}));
  EXPECT_EQ(Diag(a, -3).shape(), TShape({0}));
  // (2, 3, 4) with axes (0, 2): output (3, 2), out[j, i] = x[i, j, i + k].
  const NDArray x = RandomArray({2, 3, 4}, DType::kFloat64, -1, 1, 3);
  const std::vector<double> xv = ToDouble(x);
  for (int k : {0, 1, -1, 2}) {
    const NDArray d = Diag(x, k, 0, 2);
    const int len = k >= 0 ? std::min(2, 4 - k) : std::min(2 + k, 4);
    ASSERT_EQ(d.shape(), TShape({3, len})) << k;
    const std::vector<double> dv = ToDouble(d);
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < len; ++i) {
        const int r = k >= 0 ? i : i - k, c = k >= 0 ? i + k : i;
        EXPECT_EQ(dv[j * len + i], xv[(r * 3 + j) * 4 + c]) << k;
      }
    }
  }
  // axis1 > axis2 reads the transposed planes.
  ExpectNear(Diag(x, 1, 2, 0), Diag(nd::transpose(x, {2, 1, 0}), 1, 0, 2), 0,
             0);
}

TEST(Diag, BadInputsAreTypedErrors) {
  ExpectError<InvalidArgument>(
      [] {
        Diag(RandomArray({2, 3}), 0, 1, -1);
      },
      {"op \"diag\"", "same axis"});
  EXPECT_THROW(Diag(RandomArray({2, 3}), 0, 0, 2), ShapeError);
  EXPECT_THROW(Diag(ArrayOf(TShape::Scalar(), {1}), 0), ShapeError);
  // The (2^31, 2^31) matrix is refused before anything is allocated.
  ExpectError<InvalidArgument>([] { Diag(ArrayOf({1}, {1}), 2147483647); },
                               {"(2147483648,2147483648)"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
