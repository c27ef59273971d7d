// _split_v2 / _npi_split: pieces at indices (as np.split passes them, with
// a leading 0, and not), equal sections, squeeze_axis, and errors.
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

std::vector<NDArray> Split(const NDArray& x, const AttrDict& attrs,
                           const std::string& op = "_npi_split") {
  return imperative::Invoke(op, {x}, attrs);
}

TEST(SplitV2, AtIndicesAsNpSplit) {
  // np.split(arange(6), (2, 3)) -> [0 1], [2], [3 4 5]
  const NDArray x = ArrayOf({6}, {0, 1, 2, 3, 4, 5});
  const auto y = Split(x, {{"indices", "(0, 2, 3)"}, {"axis", "0"}});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(ToDouble(y[0]), (std::vector<double>{0, 1}));
  EXPECT_EQ(ToDouble(y[1]), (std::vector<double>{2}));
  EXPECT_EQ(ToDouble(y[2]), (std::vector<double>{3, 4, 5}));
  // A first index past 0 drops what precedes it (MXNet's kernel); an empty
  // piece where two indices are equal.
  const auto z =
      Split(x, {{"indices", "(1, 4, 4)"}, {"axis", "-1"}}, "_split_v2");
  EXPECT_EQ(ToDouble(z[0]), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(z[1].shape(), TShape({0}));
  EXPECT_EQ(ToDouble(z[2]), (std::vector<double>{4, 5}));
}

TEST(SplitV2, SectionsAxesAndSqueeze) {
  const NDArray x = ArrayOf({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto y = Split(x, {{"sections", "3"}, {"axis", "1"}});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[1].shape(), TShape({2, 1, 2}));
  EXPECT_EQ(ToDouble(y[1]), (std::vector<double>{2, 3, 8, 9}));
  y = Split(x, {{"sections", "2"}, {"axis", "0"}, {"squeeze_axis", "True"}});
  EXPECT_EQ(y[1].shape(), TShape({3, 2}));
  EXPECT_EQ(ToDouble(y[1]), (std::vector<double>{6, 7, 8, 9, 10, 11}));
  y = Split(x, {{"indices", "(0, 1)"}, {"axis", "2"}, {"squeeze_axis", "1"}});
  EXPECT_EQ(ToDouble(y[0]), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  // Integer data.
  y = Split(nd::cast(x, DType::kInt64), {{"sections", "2"}, {"axis", "2"}});
  EXPECT_EQ(y[0].dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(y[1]), (std::vector<double>{1, 3, 5, 7, 9, 11}));
}

TEST(SplitV2, BadSplitsAreTypedErrors) {
  const NDArray x = RandomArray({4, 3});
  EXPECT_THROW(Split(x, {{"sections", "3"}, {"axis", "0"}}), ShapeError);
  EXPECT_THROW(Split(x, {{"indices", "(0, 5)"}, {"axis", "0"}}),
               InvalidArgument);
  EXPECT_THROW(Split(x, {{"indices", "(0, 3, 2)"}, {"axis", "0"}}),
               InvalidArgument);
  EXPECT_THROW(Split(x, {{"axis", "0"}}), InvalidArgument);  // no pieces
  EXPECT_THROW(Split(x, {{"indices", "(0, 2)"}, {"axis", "2"}}),
               InvalidArgument);
  EXPECT_THROW(
      Split(x, {{"indices", "(0, 2)"}, {"axis", "0"}, {"squeeze_axis", "1"}}),
      ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
