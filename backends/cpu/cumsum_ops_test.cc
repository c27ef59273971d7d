#include <limits>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(Cumsum, AlongAnAxisAndFlattened) {
  const NDArray x = ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(ToDouble(nd::cumsum(x, 1)),
            (std::vector<double>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(ToDouble(nd::cumsum(x, 0)),
            (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(ToDouble(nd::cumsum(x, -1)), ToDouble(nd::cumsum(x, 1)));
  const NDArray flat = nd::cumsum(x);
  EXPECT_EQ(flat.shape(), TShape({6}));
  EXPECT_EQ(ToDouble(flat), (std::vector<double>{1, 3, 6, 10, 15, 21}));
  // Strided middle axis of a 3-d array against plain loops.
  const NDArray r = RandomArray({2, 4, 3}, DType::kFloat64, -1, 1, 6);
  const std::vector<double> rv = ToDouble(r), got = ToDouble(nd::cumsum(r, 1));
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 3; ++c) {
      double acc = 0;
      for (int b = 0; b < 4; ++b) {
        acc += rv[(a * 4 + b) * 3 + c];
        EXPECT_NEAR(got[(a * 4 + b) * 3 + c], acc, 1e-15);
      }
    }
  }
}

TEST(Cumsum, DtypesAccumulateWideAndBoolCounts) {
  const NDArray b = ArrayOf({4}, {1, 0, 1, 1}, DType::kBool);
  const NDArray bc = nd::cumsum(b);
  EXPECT_EQ(bc.dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(bc), (std::vector<double>{1, 1, 2, 3}));
  // int8 wraps as the output type does.
  const NDArray i8 = ArrayOf({3}, {100, 100, 100}, DType::kInt8);
  EXPECT_EQ(nd::cumsum(i8).ToVector<int8_t>(),
            (std::vector<int8_t>{100, -56, 44}));
  const NDArray wide = nd::Call("cumsum", {i8}, {{"dtype", "int32"}});
  EXPECT_EQ(wide.ToVector<int32_t>(), (std::vector<int32_t>{100, 200, 300}));
  // float32 sums run in double: 1e8 + 1 + 1 keeps the ones.
  const NDArray f = ArrayOf({3}, {1e8, 1, 1});
  const NDArray fd = nd::Call("cumsum", {f}, {{"dtype", "float64"}});
  EXPECT_EQ(ToDouble(fd), (std::vector<double>{1e8, 1e8 + 1, 1e8 + 2}));
  EXPECT_THROW(nd::cumsum(RandomArray({2, 3}), 2), ShapeError);
  EXPECT_EQ(nd::cumsum(ArrayOf({0, 3}, {}), 0).shape(), TShape({0, 3}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
