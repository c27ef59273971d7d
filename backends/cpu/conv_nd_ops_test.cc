// 1-D (NCW) and 3-D (NCDHW) Convolution and Pooling against direct
// references written for any number of spatial axes; the kernel's rank
// picks the op's rank, as in MXNet.
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/conv_reference.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(ConvolutionND, OneAndThreeDMatchTheDirectReference) {
  const std::vector<ConvND> cases = {
      // data, kernel, stride, pad, dilate, filters, groups
      {{2, 3, 9}, {3}, {1}, {0}, {1}, 4, 1},
      {{2, 4, 11}, {3}, {2}, {2}, {2}, 6, 2},
      {{1, 2, 4, 5, 6}, {2, 3, 2}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, 3, 1},
      {{2, 4, 5, 4, 6}, {3, 2, 2}, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, 4, 2},
  };
  for (const ConvND& p : cases) {
    SCOPED_TRACE(TShape(p.data).ToString());
    const NDArray x = RandomArray(TShape(p.data), DType::kFloat64, -1, 1, 1);
    Dims wshape{p.filters, p.data[1] / p.groups};
    wshape.insert(wshape.end(), p.kernel.begin(), p.kernel.end());
    const NDArray w = RandomArray(TShape(wshape), DType::kFloat64, -1, 1, 2);
    const NDArray b = RandomArray({p.filters}, DType::kFloat64, -1, 1, 3);
    const NDArray y =
        nd::Convolution(x, w, b, TShape(p.kernel), p.filters, TShape(p.stride),
                        TShape(p.pad), TShape(p.dilate), p.groups);
    Dims expected_shape{p.data[0], p.filters};
    for (int64_t o : ConvOut(p)) expected_shape.push_back(o);
    ASSERT_EQ(y.shape(), TShape(expected_shape));
    EXPECT_TRUE(AllClose(ToDouble(y),
                         RefConv(p, ToDouble(x), ToDouble(w), ToDouble(b)),
                         1e-10, 1e-12));
  }
}

TEST(ConvolutionND, Float32OneD) {
  const ConvND p{{1, 2, 6}, {2}, {1}, {1}, {1}, 2, 1};
  const NDArray x = RandomArray({1, 2, 6}, DType::kFloat32, -1, 1, 4);
  const NDArray w = RandomArray({2, 2, 2}, DType::kFloat32, -1, 1, 5);
  const NDArray b = RandomArray({2}, DType::kFloat32, -1, 1, 6);
  const NDArray y = nd::Convolution(x, w, b, {2}, 2, {}, {1});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_TRUE(AllClose(ToDouble(y),
                       RefConv(p, ToDouble(x), ToDouble(w), ToDouble(b)), 1e-5,
                       1e-6));
}

TEST(ConvolutionND, WeightShapeFollowsTheKernelRank) {
  const NDArray x = RandomArray({1, 2, 3, 4, 4});
  ExpectError<ShapeError>(
      [&] {
        nd::Convolution(x, RandomArray({2, 2, 2, 2}), RandomArray({2}),
                        {2, 2, 2}, 2);
      },
      {"\"Convolution\"", "weight", "(2,2,2,2,2)"});
}

TEST(ConvolutionND, DataRankMustMatchTheKernelRank) {
  ExpectError<ShapeError>(
      [] {
        nd::Convolution(RandomArray({1, 2, 4, 4}), RandomArray({2, 2, 3}),
                        RandomArray({2}), {3}, 2);
      },
      {"\"Convolution\"", "(1,2,4,4)", "3-D shape (NCW)", "1-D kernel"});
  ExpectError<InvalidArgument>(
      [] {
        nd::Convolution(RandomArray({1, 2, 4, 4, 4, 4}),
                        RandomArray({2, 2, 1, 1, 1, 1}), RandomArray({2}),
                        {1, 1, 1, 1}, 2);
      },
      {"kernel=(1,1,1,1)", "1, 2 or 3 entries"});
}

TEST(ConvolutionND, AttributeRanksMustMatchTheKernel) {
  const NDArray x = RandomArray({1, 2, 6});
  const NDArray w = RandomArray({2, 2, 3}), b = RandomArray({2});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Convolution(x, w, b, {3}, 2, {1, 1});
      },
      {"stride=(1,1)", "1 entries"});
  ExpectError<NotImplemented>(
      [&] {
        nd::Call("Convolution", {x, w, b},
                 {{"kernel", "(3)"}, {"num_filter", "2"}, {"layout", "NWC"}});
      },
      {"layout=NWC", "NCW"});
  // The matching layout names are accepted.
  EXPECT_EQ(
      nd::Call("Convolution", {x, w, b},
               {{"kernel", "(3)"}, {"num_filter", "2"}, {"layout", "NCW"}})
          .shape(),
      (TShape{1, 2, 4}));
}

TEST(PoolingND, OneAndThreeDMatchTheDirectReference) {
  const std::vector<PoolND> cases = {
      // data, kernel, stride, pad, full
      {{2, 3, 9}, {3}, {2}, {1}, false},
      {{1, 2, 8}, {2}, {3}, {0}, true},
      {{1, 2, 4, 5, 6}, {2, 2, 3}, {2, 1, 2}, {0, 1, 1}, false},
      {{2, 1, 5, 4, 5}, {3, 2, 2}, {2, 2, 2}, {1, 0, 1}, true},
  };
  for (const PoolND& p : cases) {
    for (const std::string type : {"max", "avg", "sum"}) {
      for (bool include_pad : {true, false}) {
        SCOPED_TRACE(TShape(p.data).ToString() + " " + type);
        const NDArray x =
            RandomArray(TShape(p.data), DType::kFloat64, -1, 1, 7);
        const NDArray y = nd::Pooling(x, TShape(p.kernel), type,
                                      TShape(p.stride), TShape(p.pad), false,
                                      p.full ? "full" : "valid", include_pad);
        Dims expected_shape{p.data[0], p.data[1]};
        for (int64_t o : PoolOut(p)) expected_shape.push_back(o);
        ASSERT_EQ(y.shape(), TShape(expected_shape));
        EXPECT_TRUE(AllClose(ToDouble(y),
                             RefPool(p, type, include_pad, ToDouble(x)), 1e-12,
                             1e-12));
      }
    }
  }
}

TEST(PoolingND, GlobalPoolTakesTheRankFromTheData) {
  const NDArray x = ArrayOf({1, 2, 3}, {1, 5, 3, -1, -2, -6});
  const NDArray y = nd::Call("Pooling", {x}, {{"global_pool", "True"}});
  EXPECT_EQ(y.shape(), (TShape{1, 2, 1}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{5, -1}));
  const NDArray x3 = RandomArray({2, 1, 2, 3, 2}, DType::kFloat64);
  const std::vector<double> v = ToDouble(x3);
  const NDArray y3 = nd::Call("Pooling", {x3},
                              {{"global_pool", "True"}, {"pool_type", "sum"}});
  EXPECT_EQ(y3.shape(), (TShape{2, 1, 1, 1, 1}));
  double s0 = 0, s1 = 0;
  for (int i = 0; i < 12; ++i) {
    s0 += v[i];
    s1 += v[12 + i];
  }
  EXPECT_TRUE(AllClose(ToDouble(y3), {s0, s1}));
  ExpectError<ShapeError>(
      [] {
        nd::Call("Pooling", {RandomArray({2, 3})}, {{"global_pool", "True"}});
      },
      {"\"Pooling\"", "(2,3)", "3-D, 4-D or 5-D"});
}

TEST(PoolingND, DataRankMustMatchTheKernelRank) {
  ExpectError<ShapeError>(
      [] {
        nd::Pooling(RandomArray({1, 2, 4, 4}), {2, 2, 2});
      },
      {"\"Pooling\"", "(1,2,4,4)", "5-D shape (NCDHW)"});
  ExpectError<InvalidArgument>(
      [] {
        nd::Pooling(RandomArray({1, 2, 8}), {2}, "max", {2, 2});
      },
      {"stride=(2,2)", "1 entries"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
