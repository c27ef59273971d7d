// tril / triu against the definition: element (..., i, j) kept where
// j - i <= k (tril) or j - i >= k (triu).
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// The masked copy of x (shape (..., rows, cols)) computed directly.
std::vector<double> Masked(const NDArray& x, int64_t k, bool lower) {
  const TShape& s = x.shape();
  const int64_t rows = s[s.ndim() - 2], cols = s[s.ndim() - 1];
  std::vector<double> v = ToDouble(x);
  for (size_t idx = 0; idx < v.size(); ++idx) {
    const int64_t j = static_cast<int64_t>(idx) % cols;
    const int64_t i = (static_cast<int64_t>(idx) / cols) % rows;
    if (lower ? j - i > k : j - i < k) v[idx] = 0;
  }
  return v;
}

TEST(Triangle, MatchesDefinitionForEveryDiagonal) {
  const NDArray x = RandomArray({3, 4}, DType::kFloat32, -1, 1, 2);
  for (int64_t k = -4; k <= 5; ++k) {
    EXPECT_EQ(ToDouble(nd::tril(x, k)), Masked(x, k, true)) << k;
    EXPECT_EQ(ToDouble(nd::triu(x, k)), Masked(x, k, false)) << k;
  }
}

TEST(Triangle, KnownMatrix) {
  const NDArray x = ArrayOf({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(ToDouble(nd::tril(x)),
            (std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  EXPECT_EQ(ToDouble(nd::triu(x, 1)),
            (std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(ToDouble(nd::tril(x, -1)),
            (std::vector<double>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
}

TEST(Triangle, AppliesToTheLastTwoAxesOfABatch) {
  const NDArray x = RandomArray({2, 3, 2, 5}, DType::kFloat64, -1, 1, 3);
  const NDArray y = nd::triu(x, -1);
  EXPECT_EQ(y.shape(), x.shape());
  EXPECT_EQ(ToDouble(y), Masked(x, -1, false));
}

TEST(Triangle, VectorBecomesSquareMatrixAsInNumPy) {
  const NDArray y = nd::tril(ArrayOf({3}, {1, 2, 3}));
  EXPECT_EQ(y.shape(), (TShape{3, 3}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 0, 0, 1, 2, 0, 1, 2, 3}));
  EXPECT_EQ(ToDouble(nd::triu(ArrayOf({2}, {1, 2}))),
            (std::vector<double>{1, 2, 0, 2}));
}

TEST(Triangle, KeepsIntegerAndBoolDTypes) {
  const NDArray xi = ArrayOf({2, 2}, {1, 2, 3, 4}, DType::kInt32);
  const NDArray yi = nd::tril(xi);
  EXPECT_EQ(yi.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(yi), (std::vector<double>{1, 0, 3, 4}));
  const NDArray yb = nd::triu(ArrayOf({2, 2}, {1, 1, 1, 1}, DType::kBool));
  EXPECT_EQ(yb.dtype(), DType::kBool);
  EXPECT_EQ(ToDouble(yb), (std::vector<double>{1, 1, 0, 1}));
}

TEST(Triangle, ScalarInputIsAShapeError) {
  ExpectError<ShapeError>([] { nd::tril(ArrayOf(TShape::Scalar(), {1})); },
                          {"\"tril\"", "shape ()", "at least 1 axis"});
}

TEST(Triangle, MXNetNumPyNamesAreAliases) {
  const NDArray x = RandomArray({3, 3});
  EXPECT_EQ(ToDouble(nd::Call("_npi_tril", {x}, {{"k", "1"}})),
            ToDouble(nd::tril(x, 1)));
  EXPECT_EQ(ToDouble(nd::Call("_npi_triu", {x})), ToDouble(nd::triu(x)));
}

}  // namespace
}  // namespace testing
}  // namespace mx
