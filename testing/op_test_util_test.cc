// The shared test helpers check what they claim, and fail when they should.
#include "testing/op_test_util.h"

#include "base/error.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "testing/cpu_reference.h"

namespace mx {
namespace testing {
namespace {

TEST(RandomArrays, SameSeedSameValuesAndOneSeedPerInput) {
  const std::vector<NDArray> a =
      RandomArrays({{2, 3}, {2, 3}}, DType::kFloat16);
  const std::vector<NDArray> b =
      RandomArrays({{2, 3}, {2, 3}}, DType::kFloat16);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].dtype(), DType::kFloat16);
  EXPECT_EQ(ToDouble(a[0]), ToDouble(b[0]));
  EXPECT_EQ(ToDouble(a[1]), ToDouble(b[1]));
  EXPECT_NE(ToDouble(a[0]), ToDouble(a[1]));
  EXPECT_EQ(ToDouble(a[1]),
            ToDouble(RandomArray({2, 3}, DType::kFloat16, -1, 1, 8)));
}

TEST(ExpectNear, ChecksShapeDTypeAndValues) {
  const NDArray x = ArrayOf({2}, {1, 2});
  ExpectNear(x, ArrayOf({2}, {1, 2.000001}));
  EXPECT_FALSE(NearArray(x, ArrayOf({2}, {1, 2.1})));
  EXPECT_FALSE(NearArray(x, ArrayOf({1, 2}, {1, 2})));
  EXPECT_FALSE(NearArray(x, ArrayOf({2}, {1, 2}, DType::kFloat64)));
  EXPECT_NONFATAL_FAILURE(ExpectNear(x, ArrayOf({2}, {0, 2})),
                          "1 of 2 elements differ");
}

TEST(ExpectError, PassesOnlyForTheTypeAndEveryPart) {
  auto shape_error = [] { throw ShapeError("op \"x\": shape (2,3)"); };
  ExpectError<ShapeError>(shape_error, {"op \"x\"", "(2,3)"});
  ExpectError<InvalidArgument>(shape_error, {"(2,3)"});  // a subclass
  EXPECT_NONFATAL_FAILURE(ExpectError<ShapeError>(shape_error, {"(3,2)"}),
                          "\"(3,2)\" not in");
  EXPECT_NONFATAL_FAILURE(ExpectError<DTypeError>(shape_error, {}),
                          "another type");
  EXPECT_NONFATAL_FAILURE(ExpectError<ShapeError>([] {}, {}), "no exception");
  EXPECT_EQ(ErrorOf<ShapeError>(shape_error), "op \"x\": shape (2,3)");
}

TEST(CpuReference, RunsTheBuiltInKernel) {
  const std::vector<NDArray> in = RandomArrays({{3, 4}, {3, 4}});
  const std::vector<NDArray> ref = CpuReference("elemwise_add", {}, in);
  ASSERT_EQ(ref.size(), 1u);
  std::vector<double> sum = ToDouble(in[0]);
  const std::vector<double> b = ToDouble(in[1]);
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += b[i];
  EXPECT_TRUE(AllClose(ToDouble(ref[0]), sum));
  EXPECT_TRUE(
      MatchesCpuReference({ArrayOf({3, 4}, sum)}, "elemwise_add", {}, in));
  EXPECT_FALSE(MatchesCpuReference({in[0]}, "elemwise_add", {}, in));
  EXPECT_FALSE(MatchesCpuReference({}, "elemwise_add", {}, in));
  EXPECT_TRUE(AddToAccumulates("elemwise_add", {}, in));
}

}  // namespace
}  // namespace testing
}  // namespace mx
