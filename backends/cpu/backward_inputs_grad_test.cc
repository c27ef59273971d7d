// Backward ops called directly (as a graph file or a fuzzer can) check the
// inputs their kernels index, as the forward ops do: fuzz findings where a
// rank-0 array or a short gamma reached a kernel.
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Scalar() { return ArrayOf(TShape::Scalar(), {1}); }

TEST(BackwardInputs, L2NormalizationNeedsTheAxesOfItsMode) {
  ExpectError<ShapeError>(
      [] {
        nd::Call("_backward_L2Normalization", {Scalar(), Scalar()});
      },
      {"_backward_L2Normalization", "mode=instance"});
  ExpectError<ShapeError>(
      [] {
        nd::Call("_backward_L2Normalization",
                 {RandomArray({2, 3}), RandomArray({2, 3})},
                 {{"mode", "channel"}});
      },
      {"_backward_L2Normalization", "mode=channel"});
  EXPECT_EQ(nd::Call("_backward_L2Normalization",
                     {RandomArray({2, 3}), RandomArray({2, 3})})
                .shape(),
            TShape({2, 3}));
}

TEST(BackwardInputs, LayerNormGammaMatchesTheAxis) {
  const NDArray g = RandomArray({2, 4}), x = RandomArray({2, 4});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_backward_LayerNorm", {g, x, RandomArray({3})});
      },
      {"_backward_LayerNorm", "gamma"});
  ExpectError<ShapeError>(
      [] {
        nd::Call("_backward_LayerNorm", {Scalar(), Scalar(), Scalar()});
      },
      {"_backward_LayerNorm"});
  const std::vector<NDArray> grads =
      imperative::Invoke("_backward_LayerNorm", {g, x, RandomArray({4})});
  EXPECT_EQ(grads[1].shape(), TShape({4}));
}

TEST(BackwardInputs, PreluGammaHasOneSlopePerChannelOrOne) {
  const NDArray g = RandomArray({2, 3, 2}), x = RandomArray({2, 3, 2});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_backward_LeakyReLU_prelu", {g, x, RandomArray({2})});
      },
      {"_backward_LeakyReLU_prelu", "gamma"});
  ExpectError<ShapeError>(
      [] {
        nd::Call("_backward_LeakyReLU_prelu", {Scalar(), Scalar(), Scalar()});
      },
      {"_backward_LeakyReLU_prelu", "data"});
  for (int64_t slopes : {1, 3}) {
    const std::vector<NDArray> grads = imperative::Invoke(
        "_backward_LeakyReLU_prelu", {g, x, RandomArray({slopes})});
    EXPECT_EQ(grads[1].shape(), TShape({slopes}));
  }
}

// The kernel reads out_grad in data's dtype (a fuzz finding: uint8 bytes
// read as bool).
TEST(BackwardInputs, SliceLikeOutGradHasTheDataDType) {
  ExpectError<DTypeError>(
      [] {
        nd::Call("_backward_slice_like",
                 {RandomArray({2}, DType::kUInt8, 0, 9),
                  RandomArray({3}, DType::kBool, 0, 1)});
      },
      {"_backward_slice_like"});
  EXPECT_EQ(nd::Call("_backward_slice_like",
                     {ArrayOf({2}, {4, 5}), ArrayOf({3}, {0, 0, 0})})
                .ToVector<float>(),
            (std::vector<float>{4, 5, 0}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
