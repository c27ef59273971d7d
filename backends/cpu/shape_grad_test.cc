// Numerical checks of the gradients of the shape, cast and strided ops:
// Reshape, Flatten, expand_dims, squeeze, reshape_like, Cast, _cast_like,
// transpose, slice, slice_axis and their scatters.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(ShapeGradient, Reshapes) {
  const NDArray x = RandomArray({2, 3, 4});
  EXPECT_TRUE(CheckGradient("Reshape", {{"shape", "(4,-1)"}}, {x}));
  EXPECT_TRUE(CheckGradient("reshape", {{"shape", "(0,-3)"}}, {x}));
  EXPECT_TRUE(CheckGradient("Flatten", {}, {x}));
  EXPECT_TRUE(CheckGradient("expand_dims", {{"axis", "-1"}}, {x}));
  EXPECT_TRUE(CheckGradient("squeeze", {}, {RandomArray({2, 1, 3, 1})}));
  EXPECT_TRUE(CheckGradient("squeeze", {}, {RandomArray({1, 1})}));
  EXPECT_TRUE(CheckGradient("_npi_squeeze", {}, {RandomArray({1, 1})}));
  EXPECT_TRUE(CheckGradient("squeeze", {{"axis", "(1,)"}},
                            {RandomArray({2, 1, 3, 1})}));
  GradCheckOptions o;
  o.skip = {1};
  EXPECT_TRUE(CheckGradient("reshape_like", {}, {x, RandomArray({6, 4})}, o));
}

TEST(ShapeGradient, Cast) {
  EXPECT_TRUE(
      CheckGradient("Cast", {{"dtype", "float64"}}, {RandomArray({2, 3})}));
  // float32 output: linear, so a wide step keeps rounding small.
  GradCheckOptions wide;
  wide.eps = 1e-2;
  wide.atol = 1e-4;
  EXPECT_TRUE(CheckGradient("cast", {{"dtype", "float32"}},
                            {RandomArray({2, 3})}, wide));
  wide.skip = {1};
  EXPECT_TRUE(CheckGradient("_cast_like", {},
                            {RandomArray({2, 3}), RandomArray({1})}, wide));
}

TEST(ShapeGradient, CastGradientHasTheInputDtype) {
  // float32 -> float64: the gradient comes back as float32.
  const NDArray x = RandomArray({3});
  const auto g = Gradients("Cast", {{"dtype", "float64"}}, {x},
                           {ArrayOf({3}, {1, 2, 3}, DType::kFloat64)});
  EXPECT_EQ(g[0], (std::vector<double>{1, 2, 3}));
}

TEST(ShapeGradient, Transpose) {
  const NDArray x = RandomArray({2, 3, 4});
  EXPECT_TRUE(CheckGradient("transpose", {}, {x}));
  EXPECT_TRUE(CheckGradient("transpose", {{"axes", "(1,2,0)"}}, {x}));
  EXPECT_TRUE(CheckGradient("transpose", {{"axes", "(-1,0,-2)"}}, {x}));
}

TEST(ShapeGradient, SwapAxis) {
  const NDArray x = RandomArray({2, 3, 4});
  EXPECT_TRUE(CheckGradient("SwapAxis", {{"dim1", "0"}, {"dim2", "2"}}, {x}));
  EXPECT_TRUE(CheckGradient("SwapAxis", {{"dim1", "-1"}, {"dim2", "1"}}, {x}));
}

TEST(ShapeGradient, Slice) {
  const NDArray x = RandomArray({4, 5});
  for (const AttrDict& attrs : std::vector<AttrDict>{
           {{"begin", "(1,)"}, {"end", "(3,)"}},
           {{"begin", "(None,1)"}, {"end", "(None,-1)"}},
           {{"begin", "(3,4)"}, {"end", "(None,0)"}, {"step", "(-2,-2)"}},
           {{"begin", "(0,0)"}, {"end", "(4,5)"}, {"step", "(2,3)"}}}) {
    EXPECT_TRUE(CheckGradient("slice", attrs, {x}))
        << attrs.at("begin") << " " << attrs.at("end");
  }
  EXPECT_TRUE(CheckGradient(
      "slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "4"}}, {x}));
  EXPECT_TRUE(CheckGradient(
      "slice_axis", {{"axis", "-2"}, {"begin", "-2"}, {"end", "None"}}, {x}));
}

TEST(ShapeGradient, SliceScatters) {
  GradCheckOptions o;
  o.skip = {1};
  const NDArray like = RandomArray({4, 5});
  EXPECT_TRUE(CheckGradient(
      "_backward_slice",
      {{"begin", "(3,None)"}, {"end", "(None,None)"}, {"step", "(-2,2)"}},
      {RandomArray({2, 3}), like}, o));
  EXPECT_TRUE(CheckGradient("_backward_slice_axis",
                            {{"axis", "1"}, {"begin", "1"}, {"end", "4"}},
                            {RandomArray({4, 3}), like}, o));
}

TEST(ShapeGradient, SliceScatterWritesZerosOutside) {
  const auto y = ToDouble(
      nd::Call("_backward_slice_axis", {ArrayOf({2}, {5, 6}), RandomArray({4})},
               {{"axis", "0"}, {"begin", "1"}, {"end", "3"}}));
  EXPECT_EQ(y, (std::vector<double>{0, 5, 6, 0}));
}

TEST(ShapeGradient, DepthToSpaceAndSpaceToDepth) {
  EXPECT_TRUE(CheckGradient("depth_to_space", {{"block_size", "2"}},
                            {RandomArray({2, 8, 3, 2})}));
  EXPECT_TRUE(CheckGradient("space_to_depth", {{"block_size", "2"}},
                            {RandomArray({2, 3, 4, 6})}));
  CheckSecondOrder("depth_to_space", {{"block_size", "2"}},
                   {RandomArray({1, 4, 2, 2})}, RandomArray({1, 1, 4, 4}));
}

TEST(ShapeGradient, DiagAndItsBackward) {
  EXPECT_TRUE(CheckGradient("diag", {{"k", "1"}}, {RandomArray({3})}));
  EXPECT_TRUE(CheckGradient("diag", {{"k", "-1"}}, {RandomArray({3, 4})}));
  EXPECT_TRUE(CheckGradient("diag",
                            {{"k", "0"}, {"axis1", "2"}, {"axis2", "0"}},
                            {RandomArray({3, 2, 4})}));
  GradCheckOptions o;
  o.skip = {1};  // data lends its shape only.
  EXPECT_TRUE(CheckGradient("_backward_diag", {{"k", "1"}},
                            {RandomArray({3}), RandomArray({3, 4})}, o));
  EXPECT_TRUE(CheckGradient("_backward_diag", {{"k", "-2"}},
                            {RandomArray({5, 5}), RandomArray({3})}, o));
  CheckSecondOrder("diag", {{"k", "1"}}, {RandomArray({3, 4})},
                   RandomArray({3}));
}

TEST(ShapeGradient, BilinearResize2D) {
  for (const AttrDict& attrs :
       {AttrDict{{"height", "5"}, {"width", "3"}},
        AttrDict{{"height", "2"}, {"width", "7"}, {"align_corners", "0"}},
        AttrDict{{"scale_height", "2"}, {"scale_width", "2"}}}) {
    EXPECT_TRUE(CheckGradient("_contrib_BilinearResize2D", attrs,
                              {RandomArray({2, 2, 3, 4})}));
  }
  GradCheckOptions o;
  o.skip = {1};  // like lends its size only (its gradient is 0).
  EXPECT_TRUE(
      CheckGradient("_contrib_BilinearResize2D", {{"mode", "like"}},
                    {RandomArray({1, 2, 3, 3}), RandomArray({1, 1, 5, 2})}, o));
  CheckSecondOrder("_contrib_BilinearResize2D",
                   {{"height", "4"}, {"width", "5"}},
                   {RandomArray({1, 1, 3, 3})}, RandomArray({1, 1, 4, 5}));
}

TEST(ShapeGradient, CropAndItsBackward) {
  EXPECT_TRUE(CheckGradient(
      "Crop", {{"num_args", "1"}, {"h_w", "(2, 3)"}, {"offset", "(1, 0)"}},
      {RandomArray({2, 2, 4, 5})}));
  GradCheckOptions o;
  o.skip = {1};  // crop_like lends its size only (its gradient is 0).
  EXPECT_TRUE(
      CheckGradient("Crop", {{"num_args", "2"}, {"center_crop", "1"}},
                    {RandomArray({1, 2, 5, 5}), RandomArray({1, 1, 3, 2})}, o));
  CheckSecondOrder("Crop", {{"num_args", "1"}, {"h_w", "(2, 2)"}},
                   {RandomArray({1, 1, 3, 3})}, RandomArray({1, 1, 2, 2}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
