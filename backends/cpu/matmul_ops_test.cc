// _npi_matmul (np.matmul) against a loop over its definition: 1-D
// operands, broadcast batches, float16, empty shapes and refused ones.
#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// NumPy's matmul for operands promoted to rank >= 2 (the caller drops the
// promoted axes from the expected shape).
std::vector<double> RefMatmul(const std::vector<double>& a, TShape as,
                              const std::vector<double>& b, TShape bs,
                              TShape* out) {
  std::vector<int64_t> ad(as.begin(), as.end()), bd(bs.begin(), bs.end());
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  const size_t nd = std::max(ad.size(), bd.size()) - 2;
  std::vector<int64_t> batch(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t x = d + ad.size() - 2 >= nd ? ad[d + ad.size() - 2 - nd] : 1;
    const int64_t y = d + bd.size() - 2 >= nd ? bd[d + bd.size() - 2 - nd] : 1;
    batch[d] = x == 1 ? y : x;  // broadcasting 0 against 1 gives 0
  }
  std::vector<int64_t> od = batch;
  od.push_back(m);
  od.push_back(n);
  const TShape os(od);
  std::vector<double> c(static_cast<size_t>(os.Size()));
  const TShape a2(ad), b2(bd);
  for (int64_t i = 0; i < os.Size(); ++i) {
    const std::vector<int64_t> idx = Unravel(i, os);
    double sum = 0;
    for (int64_t p = 0; p < k; ++p) {
      std::vector<int64_t> ia(ad.size()), ib(bd.size());
      for (size_t d = 0; d + 2 < ad.size(); ++d) {
        const int64_t v = idx[d + nd - (ad.size() - 2)];
        ia[d] = ad[d] == 1 ? 0 : v;
      }
      for (size_t d = 0; d + 2 < bd.size(); ++d) {
        const int64_t v = idx[d + nd - (bd.size() - 2)];
        ib[d] = bd[d] == 1 ? 0 : v;
      }
      ia[ad.size() - 2] = idx[nd];
      ia[ad.size() - 1] = p;
      ib[bd.size() - 2] = p;
      ib[bd.size() - 1] = idx[nd + 1];
      sum += a[Ravel(ia, a2)] * b[Ravel(ib, b2)];
    }
    c[i] = sum;
  }
  std::vector<int64_t> final_dims = batch;
  if (as.ndim() > 1) final_dims.push_back(m);
  if (bs.ndim() > 1) final_dims.push_back(n);
  *out = TShape(final_dims);
  return c;
}

TEST(NumpyMatmul, MatchesTheDefinition) {
  const std::vector<std::pair<TShape, TShape>> cases = {
      {{3, 4}, {4, 5}},
      {{4}, {4, 5}},
      {{3, 4}, {4}},
      {{4}, {4}},
      {{2, 3, 4}, {4, 5}},
      {{3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{2, 3, 4}, {4}},
      {{4}, {3, 4, 2}},
      {{1, 3, 4}, {2, 4, 1}},
      {{0, 3, 4}, {4, 2}},
      {{3, 0}, {0, 2}},
  };
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    const double tol = dt == DType::kFloat16 ? 2e-2 : 1e-5;
    for (const auto& [as, bs] : cases) {
      const NDArray a = RandomArray(as, dt, -1, 1, 1);
      const NDArray b = RandomArray(bs, dt, -1, 1, 2);
      TShape expected_shape;
      const std::vector<double> want =
          RefMatmul(ToDouble(a), as, ToDouble(b), bs, &expected_shape);
      const NDArray c = nd::Call("_npi_matmul", {a, b});
      EXPECT_EQ(c.shape(), expected_shape)
          << as.ToString() << " x " << bs.ToString();
      EXPECT_EQ(c.dtype(), dt);
      EXPECT_TRUE(AllClose(ToDouble(c), want, tol, tol))
          << as.ToString() << " x " << bs.ToString() << " " << DTypeName(dt);
    }
  }
}

TEST(NumpyMatmul, RefusedShapesAndDtypes) {
  EXPECT_THROW(
      nd::Call("_npi_matmul", {RandomArray({3, 4}), RandomArray({3, 4})}),
      ShapeError);
  EXPECT_THROW(
      nd::Call("_npi_matmul", {RandomArray({2, 3, 4}), RandomArray({3, 4, 2})}),
      ShapeError);  // batches 2 and 3
  EXPECT_THROW(nd::Call("_npi_matmul",
                        {RandomArray(TShape::Scalar()), RandomArray({3})}),
               ShapeError);
  EXPECT_THROW(nd::Call("_npi_matmul", {RandomArray({2, 2}, DType::kFloat64),
                                        RandomArray({2, 2})}),
               DTypeError);
  EXPECT_THROW(nd::Call("_npi_matmul", {RandomArray({2, 2}, DType::kInt32),
                                        RandomArray({2, 2}, DType::kInt32)}),
               DTypeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
