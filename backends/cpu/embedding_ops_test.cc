// Embedding: rows of the weight at the indices, shapes, dtypes and errors.
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(Embedding, LooksUpRowsOfTheWeight) {
  const NDArray w = RandomArray({5, 3}, DType::kFloat32, -1, 1, 2);
  const NDArray idx = ArrayOf({2, 2}, {4, 0, 2, 4});
  const NDArray y = nd::Embedding(idx, w, 5, 3);
  EXPECT_EQ(y.shape(), (TShape{2, 2, 3}));
  const std::vector<double> wv = ToDouble(w);
  std::vector<double> expected;
  for (int row : {4, 0, 2, 4}) {
    for (int c = 0; c < 3; ++c) expected.push_back(wv[row * 3 + c]);
  }
  EXPECT_EQ(ToDouble(y), expected);
}

TEST(Embedding, IntegerIndicesAndFloat64Weight) {
  const NDArray w = ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6}, DType::kFloat64);
  const NDArray y =
      nd::Call("Embedding", {ArrayOf({3}, {2, 2, 1}, DType::kInt64), w},
               {{"input_dim", "3"}, {"output_dim", "2"}, {"dtype", "float64"}});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{5, 6, 5, 6, 3, 4}));
}

// As MXNet does, out-of-range indices are clipped to [0, input_dim).
TEST(Embedding, ClipsOutOfRangeIndices) {
  const NDArray w = ArrayOf({2, 1}, {10, 20});
  EXPECT_EQ(ToDouble(nd::Embedding(ArrayOf({3}, {-3, 1, 7}), w, 2, 1)),
            (std::vector<double>{10, 20, 20}));
}

TEST(Embedding, WeightOfTheWrongShapeIsAShapeError) {
  ExpectError<ShapeError>(
      [] {
        nd::Embedding(ArrayOf({1}, {0}), RandomArray({4, 3}), 4, 2);
      },
      {"\"Embedding\"", "weight", "(4,3)", "(4,2)"});
}

TEST(Embedding, NonPositiveDimsAreInvalid) {
  ExpectError<InvalidArgument>(
      [] {
        nd::Embedding(ArrayOf({1}, {0}), RandomArray({1, 2}), 0, 2);
      },
      {"\"Embedding\"", "input_dim=0", "positive"});
}

TEST(Embedding, MissingAttributeIsInvalid) {
  ExpectError<InvalidArgument>(
      [] {
        nd::Call("Embedding", {ArrayOf({1}, {0}), RandomArray({1, 2})},
                 {{"input_dim", "1"}});
      },
      {"output_dim"});
}

TEST(Embedding, BoolIndicesAreADTypeError) {
  ExpectError<DTypeError>(
      [] {
        nd::Embedding(ArrayOf({1}, {1}, DType::kBool), RandomArray({2, 2}), 2,
                      2);
      },
      {"\"Embedding\"", "bool"});
}

TEST(Embedding, WeightDTypeMustMatchTheAttribute) {
  ExpectError<DTypeError>(
      [] {
        nd::Embedding(ArrayOf({1}, {1}), RandomArray({2, 2}, DType::kFloat64),
                      2, 2);
      },
      {"\"Embedding\"", "float64", "float32"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
