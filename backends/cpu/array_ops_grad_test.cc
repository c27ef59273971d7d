// Array-manipulation ops MXNet models use: slice_like, repeat, tile,
// reverse, shape_array, argsort, gather_nd and BlockGrad. Forward against
// values written out here, numerical gradients, and attribute errors.
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Iota(const TShape& shape, DType dtype = DType::kFloat32) {
  std::vector<double> v(static_cast<size_t>(shape.Size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return ArrayOf(shape, v, dtype);
}

TEST(SliceLike, CutsListedAxesToTheOtherShape) {
  const NDArray x = Iota({2, 3, 4});
  const NDArray like = RandomArray({9, 2, 2});
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("slice_like", {x, like}, {{"axes", "(1,2)"}})),
               {0, 1, 4, 5, 12, 13, 16, 17}));
  EXPECT_TRUE(AllClose(
      ToDouble(nd::Call("slice_like", {x, RandomArray({1, 1, 2})})), {0, 1}));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("slice_like", {x, like}, {{"axes", "(-1,)"}})),
               {0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21}));
}

TEST(SliceLike, GradientAndErrors) {
  GradCheckOptions data_only;  // shape_like's gradient is zero, unchecked.
  data_only.skip = {1};
  EXPECT_TRUE(CheckGradient("slice_like", {{"axes", "(0,2)"}},
                            {RandomArray({3, 2, 4}, DType::kFloat64),
                             RandomArray({2, 5, 3}, DType::kFloat64)},
                            data_only));
  ExpectError<ShapeError>(
      [&] {
        nd::Call("slice_like", {Iota({2, 3}), Iota({3, 3})},
                 {{"axes", "(0,)"}});
      },
      {"slice_like", "shape_like"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("slice_like", {Iota({2}), Iota({2})}, {{"axis", "0"}});
      },
      {"slice_like", "axis"});
}

TEST(Repeat, AlongAnAxisAndFlattened) {
  const NDArray x = Iota({2, 2});
  EXPECT_TRUE(AllClose(
      ToDouble(nd::Call("repeat", {x}, {{"repeats", "2"}, {"axis", "-1"}})),
      {0, 0, 1, 1, 2, 2, 3, 3}));
  const NDArray rows =
      nd::Call("repeat", {x}, {{"repeats", "2"}, {"axis", "0"}});
  EXPECT_EQ(rows.shape(), TShape({4, 2}));
  EXPECT_TRUE(AllClose(ToDouble(rows), {0, 1, 0, 1, 2, 3, 2, 3}));
  const NDArray flat = nd::Call("repeat", {x}, {{"repeats", "3"}});
  EXPECT_EQ(flat.shape(), TShape({12}));
  EXPECT_TRUE(AllClose(ToDouble(flat), {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}));
}

TEST(Repeat, GradientAndErrors) {
  EXPECT_TRUE(CheckGradient("repeat", {{"repeats", "3"}, {"axis", "1"}},
                            {RandomArray({2, 3}, DType::kFloat64)}));
  EXPECT_TRUE(CheckGradient("repeat", {{"repeats", "2"}},
                            {RandomArray({2, 2}, DType::kFloat64)}));
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("repeat", {Iota({2})}, {{"repeats", "-1"}});
      },
      {"repeat", "repeats"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("repeat", {Iota({2})}, {{"repeats", "4611686018427387904"}});
      },
      {"repeat", "64 bits"});
  ExpectError<InvalidArgument>([&] { nd::Call("repeat", {Iota({2})}); },
                               {"repeat", "repeats"});
}

TEST(Tile, RepeatsTheWholeArray) {
  const NDArray x = Iota({2, 2});
  const NDArray y = nd::Call("tile", {x}, {{"reps", "(2,)"}});
  EXPECT_EQ(y.shape(), TShape({2, 4}));
  EXPECT_TRUE(AllClose(ToDouble(y), {0, 1, 0, 1, 2, 3, 2, 3}));
  const NDArray z = nd::Call("tile", {Iota({2})}, {{"reps", "(2,1)"}});
  EXPECT_EQ(z.shape(), TShape({2, 2}));
  EXPECT_TRUE(AllClose(ToDouble(z), {0, 1, 0, 1}));
}

TEST(Tile, GradientAndErrors) {
  EXPECT_TRUE(CheckGradient("tile", {{"reps", "(2,1,3)"}},
                            {RandomArray({2, 3}, DType::kFloat64)}));
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("tile", {Iota({2})}, {{"reps", "(-2,)"}});
      },
      {"tile", "reps"});
}

TEST(Reverse, ReversesListedAxes) {
  const NDArray x = Iota({2, 3});
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("reverse", {x}, {{"axis", "1"}})),
                       {2, 1, 0, 5, 4, 3}));
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("flip", {x}, {{"axis", "(0,1)"}})),
                       {5, 4, 3, 2, 1, 0}));
  // Each listed axis flips once more (MXNet): twice is not at all.
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("reverse", {x}, {{"axis", "(1, 0, -1)"}})),
               {3, 4, 5, 0, 1, 2}));
  EXPECT_TRUE(CheckGradient("reverse", {{"axis", "(0,)"}},
                            {RandomArray({3, 2}, DType::kFloat64)}));
  ExpectError<ShapeError>(
      [&] {
        nd::Call("reverse", {x}, {{"axis", "2"}});
      },
      {"reverse"});
}

TEST(ShapeArray, IsTheShapeAsInt64) {
  const NDArray s = nd::Call("shape_array", {RandomArray({2, 0, 5})});
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_TRUE(AllClose(ToDouble(s), {2, 0, 5}));
  EXPECT_TRUE(
      CheckGradient("shape_array", {}, {RandomArray({2}, DType::kFloat64)}));
}

TEST(Argsort, AscendingDescendingAndFlattened) {
  const NDArray x = ArrayOf({2, 3}, {3, 1, 2, 0, 5, 5});
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("argsort", {x})), {1, 2, 0, 0, 1, 2}));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("argsort", {x},
                                 {{"axis", "1"}, {"is_ascend", "False"}})),
               {0, 2, 1, 1, 2, 0}));
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("argsort", {x}, {{"axis", "0"}})),
                       {1, 0, 0, 0, 1, 1}));
  const NDArray flat =
      nd::Call("argsort", {x}, {{"axis", "None"}, {"dtype", "int32"}});
  EXPECT_EQ(flat.dtype(), DType::kInt32);
  EXPECT_TRUE(AllClose(ToDouble(flat), {3, 1, 2, 0, 4, 5}));
}

TEST(Argsort, NaNSortsLastAndGradientIsZero) {
  const NDArray x = ArrayOf({3}, {2, NAN, 1});
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("argsort", {x})), {2, 0, 1}));
  EXPECT_TRUE(
      CheckGradient("argsort", {}, {RandomArray({4}, DType::kFloat64)}));
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("argsort", {x}, {{"dtype", "int3"}});
      },
      {"argsort", "dtype"});
}

// Indices in a dtype that holds every one of them exactly: float16 up to
// 2048, so a line of 2049 sorts and one of 2051 (whose last index, 2050,
// float16 holds, but not 2049) is refused rather than rounded.
TEST(Argsort, IndicesMustBeExactInTheirDtype) {
  std::vector<double> line(2051);
  for (size_t i = 0; i < line.size(); ++i) line[i] = -static_cast<double>(i);
  const NDArray ok = nd::Call(
      "argsort",
      {ArrayOf({2049}, std::vector<double>(line.begin(), line.begin() + 2049))},
      {{"dtype", "float16"}});
  EXPECT_EQ(ToDouble(ok)[0], 2048);
  ExpectError<InvalidArgument>(
      [&] {
        ToDouble(nd::Call("argsort", {ArrayOf({2051}, line)},
                          {{"dtype", "float16"}}));
      },
      {"argsort", "float16", "2050"});
}

TEST(GatherNd, PicksElementsAndSlices) {
  const NDArray x = Iota({2, 3, 2});
  // Two (row, column) pairs: (1, 2) and (0, 1) -> slices of 2.
  const NDArray idx = ArrayOf({2, 2}, {1, 0, 2, 1});
  const NDArray y = nd::Call("gather_nd", {x, idx});
  EXPECT_EQ(y.shape(), TShape({2, 2}));
  EXPECT_TRUE(AllClose(ToDouble(y), {10, 11, 2, 3}));
  const NDArray neg = ArrayOf({1, 1}, {-1}, DType::kInt32);
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("gather_nd", {x, neg})),
                       {6, 7, 8, 9, 10, 11}));
}

TEST(GatherNd, GradientAddsRepeatedPicks) {
  const NDArray idx = ArrayOf({1, 3}, {1, 1, 0}, DType::kInt64);
  EXPECT_TRUE(CheckGradient("gather_nd", {},
                            {RandomArray({2, 3}, DType::kFloat64), idx}));
  const auto g =
      Gradients("gather_nd", {}, {RandomArray({2}, DType::kFloat64), idx},
                {ArrayOf({3}, {1, 2, 4}, DType::kFloat64)});
  EXPECT_TRUE(AllClose(g[0], {4, 3}));
}

TEST(GatherNd, BadIndicesAreTypedErrors) {
  const NDArray x = Iota({2, 3});
  ExpectError<InvalidArgument>(
      [&] {
        ToDouble(nd::Call("gather_nd", {x, ArrayOf({2, 1}, {0, 3})}));
      },
      {"gather_nd", "indices", "3"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("gather_nd", {x, ArrayOf({3, 1}, {0, 0, 0})});
      },
      {"gather_nd", "indices"});
}

TEST(BlockGrad, IdentityWithZeroGradient) {
  const NDArray x = RandomArray({2, 3}, DType::kFloat64);
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("stop_gradient", {x})), ToDouble(x)));
  const auto g =
      Gradients("BlockGrad", {}, {x}, {RandomArray({2, 3}, DType::kFloat64)});
  EXPECT_TRUE(AllClose(g[0], std::vector<double>(6, 0.0)));
}

}  // namespace
}  // namespace testing
}  // namespace mx
