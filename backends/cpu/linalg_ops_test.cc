#include <algorithm>
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

// Naive product of a (m x k, or k x m when ta) and b (k x n, or n x k when
// tb), all row-major.
std::vector<double> RefMatmul(const std::vector<double>& a,
                              const std::vector<double>& b, int64_t m,
                              int64_t n, int64_t k, bool ta, bool tb) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double av = ta ? a[q * m + i] : a[i * k + q];
        const double bv = tb ? b[j * k + q] : b[q * n + j];
        s += av * bv;
      }
      c[i * n + j] = s;
    }
  }
  return c;
}

double Tol(DType t) { return t == DType::kFloat16 ? 2e-2 : 1e-5; }

TEST(Dot, MatrixProductsWithTransposesMatchReference) {
  struct Case {
    int64_t m, n, k;
  };
  for (const Case& c : std::vector<Case>{
           {1, 1, 1}, {2, 3, 4}, {5, 1, 7}, {1, 6, 3}, {17, 9, 33}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
          const TShape sa = ta ? TShape{c.k, c.m} : TShape{c.m, c.k};
          const TShape sb = tb ? TShape{c.n, c.k} : TShape{c.k, c.n};
          NDArray a = RandomArray(sa, dt, -1, 1, 1);
          NDArray b = RandomArray(sb, dt, -1, 1, 2);
          NDArray y = nd::dot(a, b, ta, tb);
          ASSERT_EQ(y.shape(), (TShape{c.m, c.n}));
          EXPECT_EQ(y.dtype(), dt);
          EXPECT_TRUE(AllClose(
              ToDouble(y),
              RefMatmul(ToDouble(a), ToDouble(b), c.m, c.n, c.k, ta, tb),
              Tol(dt), Tol(dt)))
              << sa << " x " << sb << " ta=" << ta << " tb=" << tb << " "
              << DTypeName(dt);
        }
      }
    }
  }
}

TEST(Dot, VectorDotVectorHasShapeOne) {
  NDArray a = ArrayOf({3}, {1, 2, 3}, DType::kFloat64);
  NDArray b = ArrayOf({3}, {4, -5, 6}, DType::kFloat64);
  NDArray y = nd::dot(a, b);
  EXPECT_EQ(y.shape(), TShape{1});
  EXPECT_TRUE(AllClose(ToDouble(y), {1 * 4 - 2 * 5 + 3 * 6}));
}

TEST(Dot, VectorAndMatrix) {
  NDArray v = RandomArray({4}, DType::kFloat64, -1, 1, 3);
  NDArray m = RandomArray({4, 3}, DType::kFloat64, -1, 1, 4);
  NDArray vm = nd::dot(v, m);
  EXPECT_EQ(vm.shape(), TShape{3});
  EXPECT_TRUE(AllClose(ToDouble(vm), RefMatmul(ToDouble(v), ToDouble(m), 1, 3,
                                               4, false, false)));
  NDArray mt = RandomArray({3, 4}, DType::kFloat64, -1, 1, 5);
  NDArray mv = nd::dot(mt, v);
  EXPECT_EQ(mv.shape(), TShape{3});
  EXPECT_TRUE(AllClose(ToDouble(mv), RefMatmul(ToDouble(mt), ToDouble(v), 3, 1,
                                               4, false, false)));
}

TEST(Dot, NDContractsLastAxisOfLhsWithFirstOfRhs) {
  NDArray a = RandomArray({2, 3, 4}, DType::kFloat64, -1, 1, 6);
  NDArray b = RandomArray({4, 5, 2}, DType::kFloat64, -1, 1, 7);
  NDArray y = nd::dot(a, b);
  ASSERT_EQ(y.shape(), (TShape{2, 3, 5, 2}));
  const std::vector<double> va = ToDouble(a), vb = ToDouble(b);
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int p = 0; p < 5; ++p)
        for (int q = 0; q < 2; ++q) {
          double s = 0;
          for (int k = 0; k < 4; ++k) {
            s += va[(i * 3 + j) * 4 + k] * vb[(k * 5 + p) * 2 + q];
          }
          expected.push_back(s);
        }
  EXPECT_TRUE(AllClose(ToDouble(y), expected));
}

TEST(Dot, NDTransposeContractsFirstAxisOfLhsAndLastAxisOfRhs) {
  NDArray a = RandomArray({4, 2, 3}, DType::kFloat64, -1, 1, 8);
  NDArray b = RandomArray({5, 2, 4}, DType::kFloat64, -1, 1, 9);
  NDArray y = nd::dot(a, b, true, true);
  ASSERT_EQ(y.shape(), (TShape{2, 3, 5, 2}));
  const std::vector<double> va = ToDouble(a), vb = ToDouble(b);
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int p = 0; p < 5; ++p)
        for (int q = 0; q < 2; ++q) {
          double s = 0;
          for (int k = 0; k < 4; ++k) {
            s += va[(k * 2 + i) * 3 + j] * vb[(p * 2 + q) * 4 + k];
          }
          expected.push_back(s);
        }
  EXPECT_TRUE(AllClose(ToDouble(y), expected));
}

TEST(Dot, ZeroSizeOperands) {
  NDArray a = RandomArray({0, 3}), b = RandomArray({3, 4});
  EXPECT_EQ(nd::dot(a, b).shape(), (TShape{0, 4}));
  EXPECT_TRUE(ToDouble(nd::dot(a, b)).empty());
  // An empty contraction gives zeros.
  NDArray c = RandomArray({2, 0}), d = RandomArray({0, 3});
  EXPECT_TRUE(AllClose(ToDouble(nd::dot(c, d)), std::vector<double>(6, 0.0)));
  // Wide enough that the product splits by columns over kernel threads.
  NDArray e = RandomArray({1, 0}), f = RandomArray({0, int64_t{1} << 21});
  const std::vector<double> wide = ToDouble(nd::dot(e, f));
  EXPECT_EQ(wide.size(), size_t{1} << 21);
  EXPECT_TRUE(
      std::all_of(wide.begin(), wide.end(), [](double v) { return v == 0; }));
}

TEST(Dot, MismatchedInnerDimsAreShapeErrorNamingBoth) {
  NDArray a = RandomArray({2, 3}), b = RandomArray({4, 5});
  try {
    nd::dot(a, b);
    FAIL();
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("op \"dot\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2,3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(4,5)"), std::string::npos) << msg;
  }
  EXPECT_THROW(nd::dot(a, RandomArray({3, 2}), false, true), ShapeError);
  EXPECT_EQ(nd::dot(a, RandomArray({5, 3}), false, true).shape(),
            (TShape{2, 5}));
}

TEST(Dot, BadInputsAreTypedErrors) {
  NDArray v = RandomArray({3});
  EXPECT_THROW(nd::dot(v, v, true, false), InvalidArgument);
  EXPECT_THROW(nd::dot(RandomArray(TShape::Scalar()), v), ShapeError);
  NDArray i = RandomArray({2, 2}, DType::kInt32);
  EXPECT_THROW(nd::dot(i, i), DTypeError);
  EXPECT_THROW(
      nd::dot(RandomArray({2, 2}), RandomArray({2, 2}, DType::kFloat64)),
      DTypeError);
}

TEST(BatchDot, AllTransposeCombinationsMatchReference) {
  for (int64_t batch : {1, 3}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
          const int64_t m = 4, n = 5, k = 6;
          const TShape sa = ta ? TShape{batch, k, m} : TShape{batch, m, k};
          const TShape sb = tb ? TShape{batch, n, k} : TShape{batch, k, n};
          NDArray a = RandomArray(sa, dt, -1, 1, 10);
          NDArray b = RandomArray(sb, dt, -1, 1, 11);
          NDArray y = nd::batch_dot(a, b, ta, tb);
          ASSERT_EQ(y.shape(), (TShape{batch, m, n}));
          const std::vector<double> va = ToDouble(a), vb = ToDouble(b);
          std::vector<double> expected;
          for (int64_t i = 0; i < batch; ++i) {
            std::vector<double> ai(va.begin() + i * m * k,
                                   va.begin() + (i + 1) * m * k);
            std::vector<double> bi(vb.begin() + i * k * n,
                                   vb.begin() + (i + 1) * k * n);
            std::vector<double> ci = RefMatmul(ai, bi, m, n, k, ta, tb);
            expected.insert(expected.end(), ci.begin(), ci.end());
          }
          EXPECT_TRUE(AllClose(ToDouble(y), expected, Tol(dt), Tol(dt)))
              << "batch=" << batch << " ta=" << ta << " tb=" << tb << " "
              << DTypeName(dt);
        }
      }
    }
  }
}

TEST(BatchDot, EmptyBatchAndShapeErrors) {
  EXPECT_EQ(
      nd::batch_dot(RandomArray({0, 2, 3}), RandomArray({0, 3, 4})).shape(),
      (TShape{0, 2, 4}));
  EXPECT_THROW(nd::batch_dot(RandomArray({2, 2, 3}), RandomArray({3, 3, 4})),
               ShapeError);
  EXPECT_THROW(nd::batch_dot(RandomArray({2, 2, 3}), RandomArray({2, 4, 4})),
               ShapeError);
  EXPECT_THROW(nd::batch_dot(RandomArray({2, 3}), RandomArray({3, 4})),
               ShapeError);
}

// out[i, h] = sum_k data[i, k] * weight[h, k] + bias[h].
std::vector<double> RefDense(const std::vector<double>& x,
                             const std::vector<double>& w,
                             const std::vector<double>& b, int64_t rows,
                             int64_t hidden, int64_t k) {
  std::vector<double> y = RefMatmul(x, w, rows, hidden, k, false, true);
  if (!b.empty()) {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t h = 0; h < hidden; ++h) y[i * hidden + h] += b[h];
  }
  return y;
}

TEST(FullyConnected, FlattenMatchesReference) {
  for (int64_t batch : {1, 4}) {
    for (bool no_bias : {false, true}) {
      for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
        NDArray x = RandomArray({batch, 2, 3, 2}, dt, -1, 1, 12);
        NDArray w = RandomArray({5, 12}, dt, -1, 1, 13);
        NDArray b = no_bias ? NDArray() : RandomArray({5}, dt, -1, 1, 14);
        NDArray y = nd::FullyConnected(x, w, b, 5, no_bias);
        ASSERT_EQ(y.shape(), (TShape{batch, 5}));
        EXPECT_EQ(y.dtype(), dt);
        EXPECT_TRUE(
            AllClose(ToDouble(y),
                     RefDense(ToDouble(x), ToDouble(w),
                              no_bias ? std::vector<double>{} : ToDouble(b),
                              batch, 5, 12),
                     Tol(dt), Tol(dt)))
            << "batch=" << batch << " no_bias=" << no_bias << " "
            << DTypeName(dt);
      }
    }
  }
}

TEST(FullyConnected, NoFlattenAppliesToLastAxis) {
  NDArray x = RandomArray({2, 3, 4}, DType::kFloat64, -1, 1, 15);
  NDArray w = RandomArray({6, 4}, DType::kFloat64, -1, 1, 16);
  NDArray b = RandomArray({6}, DType::kFloat64, -1, 1, 17);
  NDArray y = nd::FullyConnected(x, w, b, 6, false, /*flatten=*/false);
  ASSERT_EQ(y.shape(), (TShape{2, 3, 6}));
  EXPECT_TRUE(AllClose(
      ToDouble(y), RefDense(ToDouble(x), ToDouble(w), ToDouble(b), 6, 6, 4)));
}

TEST(FullyConnected, EmptyBatch) {
  NDArray y = nd::FullyConnected(RandomArray({0, 3}), RandomArray({2, 3}),
                                 RandomArray({2}), 2);
  EXPECT_EQ(y.shape(), (TShape{0, 2}));
  EXPECT_TRUE(ToDouble(y).empty());
}

void InferFC(const AttrDict& dict, std::vector<TShape>* in,
             std::vector<TShape>* out) {
  const Op& op = OpRegistry::Get()->Lookup("FullyConnected");
  NodeAttrs attrs = MakeAttrs(op, dict);
  op.infer_shape()(attrs, in, out);
}

TEST(FullyConnected, ShapeInferenceFillsWeightAndBiasFromData) {
  std::vector<TShape> in{{8, 3, 4}, TShape(), TShape()}, out{TShape()};
  InferFC({{"num_hidden", "5"}}, &in, &out);
  EXPECT_EQ(in[1], (TShape{5, 12}));
  EXPECT_EQ(in[2], TShape{5});
  EXPECT_EQ(out[0], (TShape{8, 5}));

  std::vector<TShape> in2{{8, 3, 4}, TShape()}, out2{TShape()};
  InferFC({{"num_hidden", "5"}, {"no_bias", "True"}, {"flatten", "False"}},
          &in2, &out2);
  EXPECT_EQ(in2[1], (TShape{5, 4}));
  EXPECT_EQ(out2[0], (TShape{8, 3, 5}));
}

TEST(FullyConnected, ShapeInferenceWorksBackward) {
  // Unknown data: the weight and bias still get what num_hidden fixes.
  std::vector<TShape> in{TShape(), TShape(), TShape()}, out{TShape()};
  InferFC({{"num_hidden", "5"}}, &in, &out);
  EXPECT_EQ(in[1], (TShape{5, -1}));
  EXPECT_EQ(in[2], TShape{5});
  // Output and weight known: data follows.
  std::vector<TShape> in2{TShape(), {5, 4}, TShape()}, out2{{2, 7, 5}};
  InferFC({{"num_hidden", "5"}, {"flatten", "False"}}, &in2, &out2);
  EXPECT_EQ(in2[0], (TShape{2, 7, 4}));
  std::vector<TShape> in3{{-1, -1}, {5, 12}, TShape()}, out3{{8, 5}};
  InferFC({{"num_hidden", "5"}}, &in3, &out3);
  EXPECT_EQ(in3[0], (TShape{8, 12}));
}

TEST(FullyConnected, WrongWeightShapeNamesTheWeight) {
  try {
    nd::FullyConnected(RandomArray({2, 6}), RandomArray({3, 5}),
                       RandomArray({3}), 3);
    FAIL();
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("op \"FullyConnected\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3,5)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3,6)"), std::string::npos) << msg;
  }
  EXPECT_THROW(nd::FullyConnected(RandomArray({2, 6}), RandomArray({3, 6}),
                                  RandomArray({4}), 3),
               ShapeError);
}

TEST(FullyConnected, BadAttributesAndArityAreInvalidArgument) {
  NDArray x = RandomArray({2, 6}), w = RandomArray({3, 6});
  EXPECT_THROW(nd::Call("FullyConnected", {x, w}, {{"no_bias", "True"}}),
               InvalidArgument);  // num_hidden missing.
  EXPECT_THROW(nd::Call("FullyConnected", {x, w}, {{"num_hidden", "3"}}),
               InvalidArgument);  // bias missing.
  EXPECT_THROW(nd::FullyConnected(x, RandomArray({0, 6}), NDArray(), 0, true),
               InvalidArgument);
  EXPECT_THROW(nd::FullyConnected(RandomArray({2, 6}, DType::kInt32),
                                  RandomArray({3, 6}, DType::kInt32), NDArray(),
                                  3, true),
               DTypeError);
}

// Runs `op` with kAddTo into `out`, which already holds values.
void InvokeAddTo(const std::string& op, const AttrDict& attrs,
                 const std::vector<NDArray>& inputs, const NDArray& out) {
  std::vector<NDArray> outputs{out};
  imperative::InvokeOptions options;
  options.req = {OpReqType::kAddTo};
  imperative::Invoke(MakeAttrs(OpRegistry::Get()->Lookup(op), attrs), inputs,
                     &outputs, options);
}

TEST(FullyConnected, AddToRequestAccumulates) {
  for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
    NDArray x = RandomArray({3, 4}, dt, -1, 1, 18);
    NDArray w = RandomArray({2, 4}, dt, -1, 1, 19);
    NDArray b = RandomArray({2}, dt, -1, 1, 20);
    NDArray y = RandomArray({3, 2}, dt, -1, 1, 21);
    std::vector<double> expected =
        RefDense(ToDouble(x), ToDouble(w), ToDouble(b), 3, 2, 4);
    const std::vector<double> before = ToDouble(y);
    for (size_t i = 0; i < expected.size(); ++i) expected[i] += before[i];
    InvokeAddTo("FullyConnected", {{"num_hidden", "2"}}, {x, w, b}, y);
    EXPECT_TRUE(AllClose(ToDouble(y), expected, Tol(dt), Tol(dt)))
        << DTypeName(dt);
  }
}

// Products past kMinGemmSliceMacs (2^20 multiply-adds) per slice split
// over the kernel threads (linalg_ops_test_3threads): by rows when c is
// tall, by columns when wide; overwrite and kAddTo.
TEST(Dot, LargeProductsSplitByRowsOrColumnsMatchReference) {
  struct Case {
    int64_t m, n, k;
  };
  for (const Case& c : std::vector<Case>{{301, 37, 200}, {29, 263, 300}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const TShape sa = ta ? TShape{c.k, c.m} : TShape{c.m, c.k};
        const TShape sb = tb ? TShape{c.n, c.k} : TShape{c.k, c.n};
        NDArray a = RandomArray(sa, DType::kFloat64, -1, 1, 5);
        NDArray b = RandomArray(sb, DType::kFloat64, -1, 1, 6);
        const std::vector<double> ref =
            RefMatmul(ToDouble(a), ToDouble(b), c.m, c.n, c.k, ta, tb);
        NDArray y = nd::dot(a, b, ta, tb);
        EXPECT_TRUE(AllClose(ToDouble(y), ref, 1e-10, 1e-10))
            << sa << " x " << sb << " ta=" << ta << " tb=" << tb;
        NDArray acc = RandomArray({c.m, c.n}, DType::kFloat64, -1, 1, 7);
        std::vector<double> expected = ToDouble(acc);
        for (size_t i = 0; i < expected.size(); ++i) expected[i] += ref[i];
        InvokeAddTo(
            "dot",
            {{"transpose_a", ta ? "1" : "0"}, {"transpose_b", tb ? "1" : "0"}},
            {a, b}, acc);
        EXPECT_TRUE(AllClose(ToDouble(acc), expected, 1e-10, 1e-10))
            << "kAddTo " << sa << " x " << sb;
      }
    }
  }
}

TEST(Dot, AddToRequestAccumulates) {
  NDArray a = RandomArray({2, 3}, DType::kFloat64, -1, 1, 22);
  NDArray b = RandomArray({3, 4}, DType::kFloat64, -1, 1, 23);
  NDArray y = RandomArray({2, 4}, DType::kFloat64, -1, 1, 24);
  std::vector<double> expected =
      RefMatmul(ToDouble(a), ToDouble(b), 2, 4, 3, false, false);
  const std::vector<double> before = ToDouble(y);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] += before[i];
  InvokeAddTo("dot", {}, {a, b}, y);
  EXPECT_TRUE(AllClose(ToDouble(y), expected));
}

// The kernel reads dot's geometry from lhs and rhs; shape inference must
// refuse operands dot would refuse (issue 16 F10: scalars indexed out of
// range).
TEST(DotBackward, OperandsDotRefusesAreShapeErrors) {
  NDArray scalar = ArrayOf(TShape::Scalar(), {1});
  EXPECT_THROW(imperative::Invoke("_backward_dot",
                                  {ArrayOf({0, 0, 0, 0}, {}), scalar, scalar}),
               ShapeError);
  // out_grad must have dot's output shape.
  EXPECT_THROW(imperative::Invoke("_backward_dot",
                                  {RandomArray({3}), RandomArray({2, 3}),
                                   RandomArray({3, 4})}),
               ShapeError);
  const auto grads = imperative::Invoke(
      "_backward_dot",
      {RandomArray({2, 4}), RandomArray({2, 3}), RandomArray({3, 4})});
  EXPECT_EQ(grads[0].shape(), TShape({2, 3}));
  EXPECT_EQ(grads[1].shape(), TShape({3, 4}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
