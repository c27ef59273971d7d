// pick and _backward_pick: MXNet's documented examples, every axis, mode
// and index dtype against a reference, and bad arguments as typed errors.
#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(Pick, MXNetDocumentedExamples) {
  const NDArray x = ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(ToDouble(nd::pick(x, ArrayOf({2}, {0, 1}), 0)),
            std::vector<double>({1, 4}));
  EXPECT_EQ(ToDouble(nd::pick(x, ArrayOf({3}, {0, 1, 0}), 1)),
            std::vector<double>({1, 4, 5}));
  EXPECT_EQ(ToDouble(nd::pick(x, ArrayOf({3}, {2, -1, -2}), 1, false, "wrap")),
            std::vector<double>({1, 4, 5}));
  // keepdims; 2 is out of range and clipped to 1.
  const NDArray y = nd::pick(x, ArrayOf({3, 1}, {1, 0, 2}), 1, true);
  EXPECT_EQ(y.shape(), TShape({3, 1}));
  EXPECT_EQ(ToDouble(y), std::vector<double>({2, 3, 6}));
  // The default axis is the last.
  EXPECT_EQ(ToDouble(nd::Call("pick", {x, ArrayOf({3}, {1, 1, 0})}, {})),
            std::vector<double>({2, 4, 5}));
}

// out[o, t] = data[o, position(index[o, t]), t] for data (outer, n, inner).
std::vector<double> ReferencePick(const std::vector<double>& data,
                                  const std::vector<double>& index,
                                  int64_t outer, int64_t n, int64_t inner,
                                  bool wrap) {
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t t = 0; t < inner; ++t) {
      const double raw = index[o * inner + t];
      int64_t i = std::isnan(raw) ? 0 : static_cast<int64_t>(raw);
      i = wrap ? ((i % n) + n) % n
               : std::min<int64_t>(std::max<int64_t>(i, 0), n - 1);
      out.push_back(data[(o * n + i) * inner + t]);
    }
  }
  return out;
}

TEST(Pick, EveryAxisModeAndIndexDTypeMatchesTheReference) {
  const TShape shape{2, 3, 4};
  const NDArray data = RandomArray(shape, DType::kFloat64, -1, 1, 3);
  const std::vector<double> d = ToDouble(data);
  for (int axis : {0, 1, 2, -1, -3}) {
    const int a = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> kept;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < 3; ++k) {
      if (k < a) outer *= shape[k];
      if (k > a) inner *= shape[k];
      if (k != a) kept.push_back(shape[k]);
    }
    const int64_t n = shape[a];
    // In range, negative, too large, and a fraction (truncated).
    std::vector<double> raw;
    for (int64_t k = 0; k < outer * inner; ++k) {
      const double choices[] = {0, 1, -1, 7, -9, 2.7, static_cast<double>(n)};
      raw.push_back(choices[k % 7]);
    }
    for (const char* mode : {"clip", "wrap"}) {
      for (DType index_dtype :
           {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kFloat64}) {
        SCOPED_TRACE(::testing::Message() << "axis " << axis << " " << mode
                                          << " " << DTypeName(index_dtype));
        std::vector<double> idx = raw;
        if (index_dtype == DType::kInt32 || index_dtype == DType::kInt64) {
          for (double& v : idx) v = std::trunc(v);
        }
        const NDArray index = ArrayOf(TShape(kept), idx, index_dtype);
        const NDArray y = nd::pick(data, index, axis, false, mode);
        EXPECT_EQ(y.shape(), TShape(kept));
        EXPECT_EQ(y.dtype(), DType::kFloat64);
        EXPECT_EQ(ToDouble(y), ReferencePick(d, idx, outer, n, inner,
                                             std::string(mode) == "wrap"));
        // Its gradient: out_grad at the picked positions, 0 elsewhere.
        const NDArray og = RandomArray(TShape(kept), DType::kFloat64, 1, 2, 4);
        const std::vector<double> dx = ToDouble(imperative::Invoke(
            "_backward_pick", {og, index, data},
            {{"axis", std::to_string(axis)}, {"mode", mode}})[0]);
        const NDArray position_of =
            nd::arange(0, static_cast<double>(d.size()), 1, Context::CPU(),
                       DType::kFloat64);
        const std::vector<double> picked_at = ToDouble(nd::pick(
            nd::reshape(position_of, shape), index, axis, false, mode));
        std::vector<double> want(d.size(), 0);
        const std::vector<double> g = ToDouble(og);
        for (size_t k = 0; k < g.size(); ++k) {
          want[static_cast<size_t>(picked_at[k])] = g[k];
        }
        EXPECT_EQ(dx, want);
      }
    }
  }
}

TEST(Pick, NaNIndexIsZeroAndIntegerDataKeepsItsDType) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const NDArray x = ArrayOf({2, 3}, {10, 11, 12, 20, 21, 22}, DType::kInt32);
  const NDArray y = nd::pick(x, ArrayOf({2}, {nan, 2}), 1);
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.ToVector<int32_t>(), (std::vector<int32_t>{10, 22}));
}

TEST(Pick, EmptyInputsAndBadArgumentsAreTypedErrors) {
  const NDArray x = RandomArray({3, 2});
  // Empty outputs are fine.
  EXPECT_EQ(nd::pick(ArrayOf({0, 2}, {}), ArrayOf({0}, {}), 1).shape(),
            TShape({0}));
  ExpectError<ShapeError>(
      [&] {
        nd::pick(ArrayOf({3, 0}, {}), ArrayOf({3}, {0, 0, 0}), 1);
      },
      {"op \"pick\"", "(3,0)", "length 0"});
  ExpectError<ShapeError>(
      [&] {
        nd::pick(x, ArrayOf({2}, {0, 1}), 1);
      },
      {"op \"pick\"", "(2,)", "(3,)"});
  ExpectError<ShapeError>(
      [&] {
        nd::pick(x, ArrayOf({3}, {0, 1, 0}), 2);
      },
      {"op \"pick\""});
  ExpectError<InvalidArgument>(
      [&] {
        nd::pick(x, ArrayOf({3}, {0, 1, 0}), 1, false, "raise");
      },
      {"op \"pick\"", "mode"});
  ExpectError<DTypeError>(
      [&] {
        nd::pick(x, ArrayOf({3}, {0, 1, 0}, DType::kBool), 1);
      },
      {"op \"pick\"", "index", "bool"});
  ExpectError<NotImplemented>(
      [&] {
        nd::Call("pick", {x, ArrayOf({3}, {0, 1, 0})}, {{"axis", "None"}});
      },
      {"op \"pick\"", "axis=None"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
