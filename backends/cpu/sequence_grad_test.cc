// SequenceLast and SequenceReverse (SequenceMask's tests are in
// transformer_ops_grad_test.cc): values written out here, with and without
// lengths, both time axes, numerical gradients, and the lengths they
// refuse.
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

NDArray Iota(const TShape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.Size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return ArrayOf(shape, v);
}

const AttrDict kWithLengths = {{"use_sequence_length", "True"}};

TEST(SequenceLast, LastStepOfEachSequence) {
  const NDArray x = Iota({3, 2, 2});  // (T, B, 2)
  const NDArray all = nd::Call("SequenceLast", {x});
  EXPECT_EQ(all.shape(), TShape({2, 2}));
  EXPECT_TRUE(AllClose(ToDouble(all), {8, 9, 10, 11}));
  // Lengths 1 and 3; 2.7 truncates to 2 as in MXNet.
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("SequenceLast", {x, ArrayOf({2}, {1, 3})},
                                 kWithLengths)),
               {0, 1, 10, 11}));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("SequenceLast", {x, ArrayOf({2}, {2.7, 1})},
                                 kWithLengths)),
               {4, 5, 2, 3}));
  // (B, T, 2) with time on axis 1, lengths as int32.
  const NDArray y = Iota({2, 3, 2});
  const NDArray last =
      nd::Call("SequenceLast", {y, ArrayOf({2}, {2, 1}, DType::kInt32)},
               {{"use_sequence_length", "True"}, {"axis", "1"}});
  EXPECT_EQ(last.shape(), TShape({2, 2}));
  EXPECT_TRUE(AllClose(ToDouble(last), {2, 3, 6, 7}));
}

TEST(SequenceReverse, ReversesEachSequenceKeepingItsPadding) {
  const NDArray x = Iota({4, 2});  // (T, B)
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("SequenceReverse", {x})),
                       {6, 7, 4, 5, 2, 3, 0, 1}));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("SequenceReverse", {x, ArrayOf({2}, {3, 4})},
                                 kWithLengths)),
               {4, 7, 2, 5, 0, 3, 6, 1}));
  // A length of 0 leaves the sequence as it is.
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("SequenceReverse", {x, ArrayOf({2}, {0, 2})},
                                 kWithLengths)),
               {0, 3, 2, 1, 4, 5, 6, 7}));
}

TEST(SequenceOps, Gradients) {
  const NDArray lengths = ArrayOf({3}, {2, 4, 1}, DType::kInt32);
  for (const char* op : {"SequenceLast", "SequenceReverse"}) {
    EXPECT_TRUE(
        CheckGradient(op, {}, {RandomArray({4, 3, 2}, DType::kFloat64)}))
        << op;
    EXPECT_TRUE(CheckGradient(
        op, kWithLengths, {RandomArray({4, 3, 2}, DType::kFloat64), lengths}))
        << op;
  }
  EXPECT_TRUE(CheckGradient("SequenceLast",
                            {{"use_sequence_length", "True"}, {"axis", "1"}},
                            {RandomArray({3, 4}, DType::kFloat64), lengths}));
}

TEST(SequenceOps, RefusedLengthsAndShapes) {
  const NDArray x = Iota({3, 2});
  for (const std::vector<double>& bad :
       std::vector<std::vector<double>>{{0, 1}, {1, 4}, {NAN, 1}}) {
    ExpectError<InvalidArgument>(
        [&] {
          ToDouble(
              nd::Call("SequenceLast", {x, ArrayOf({2}, bad)}, kWithLengths));
        },
        {"SequenceLast", "sequence_length["});
  }
  ExpectError<InvalidArgument>(
      [&] {
        ToDouble(nd::Call("SequenceReverse", {x, ArrayOf({2}, {-1, 1})},
                          kWithLengths));
      },
      {"SequenceReverse", "sequence_length[0]=-1", "[0, 3]"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("SequenceReverse", {x}, {{"axis", "1"}});
      },
      {"SequenceReverse", "axis=1"});
  // No steps: no last step (MXNet reads before the data).
  ExpectError<InvalidArgument>(
      [&] {
        ToDouble(nd::Call("SequenceLast", {Iota({0, 3, 2})}));
      },
      {"SequenceLast", "0 steps"});
  EXPECT_EQ(nd::Call("SequenceReverse", {Iota({0, 3})}).shape(),
            TShape({0, 3}));
  ExpectError<ShapeError>([&] { nd::Call("SequenceLast", {Iota({3})}); },
                          {"SequenceLast", "at least 2 axes"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("SequenceLast", {x, ArrayOf({3}, {1, 1, 1})}, kWithLengths);
      },
      {"SequenceLast", "sequence_length"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
