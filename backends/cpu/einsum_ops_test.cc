// np.einsum (_npi_einsum) against the ops that compute the same thing
// (dot, batch_dot, _npi_matmul with broadcast batches, transpose, diag,
// broadcast_mul, sum), NumPy's implicit output (letters used once, in
// ASCII order, after the ellipsis axes), integer data, empty sums, 0-d
// operands, and typed errors for subscripts that do not fit.
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

NDArray Einsum(const std::string& subscripts, const std::vector<NDArray>& x) {
  return imperative::Invoke(
      "_npi_einsum", x,
      {{"subscripts", subscripts}, {"num_args", std::to_string(x.size())}})[0];
}
NDArray Op(const std::string& op, const std::vector<NDArray>& x,
           const AttrDict& attrs = {}) {
  return imperative::Invoke(op, x, attrs)[0];
}

TEST(Einsum, ProductsAsTheOpsThatComputeThem) {
  const NDArray a = RandomArray({3, 4}, DType::kFloat64, -1, 1, 1);
  const NDArray b = RandomArray({4, 5}, DType::kFloat64, -1, 1, 2);
  ExpectNear(Einsum("ij,jk->ik", {a, b}), Op("dot", {a, b}), 1e-12);
  ExpectNear(Einsum("ij,jk", {a, b}), Op("dot", {a, b}), 1e-12);  // implicit
  ExpectNear(Einsum("ik,kj->ji", {a, b}), Op("transpose", {Op("dot", {a, b})}),
             1e-12);
  const NDArray x = RandomArray({2, 3, 4}, DType::kFloat64, -1, 1, 3);
  const NDArray y = RandomArray({2, 4, 5}, DType::kFloat64, -1, 1, 4);
  ExpectNear(Einsum("bij,bjk->bik", {x, y}), Op("batch_dot", {x, y}), 1e-12);
  // Broadcast batches through the ellipsis: (2, 1, 3, 4) and (5, 4, 6).
  const NDArray p = RandomArray({2, 1, 3, 4}, DType::kFloat64, -1, 1, 5);
  const NDArray q = RandomArray({5, 4, 6}, DType::kFloat64, -1, 1, 6);
  const NDArray pq = Einsum("...ij,...jk->...ik", {p, q});
  EXPECT_EQ(pq.shape(), TShape({2, 5, 3, 6}));
  ExpectNear(pq, Op("_npi_matmul", {p, q}), 1e-12);
  ExpectNear(Einsum("...ij,...jk", {p, q}), pq, 1e-12);
  // Axes of length 1 broadcast: (1, 4) times (3, 4).
  const NDArray row = RandomArray({1, 4}, DType::kFloat64, -1, 1, 7);
  ExpectNear(Einsum("ij,ij->ij", {row, a}), Op("broadcast_mul", {row, a}),
             1e-12);
  // Three operands.
  const NDArray c = RandomArray({5, 2}, DType::kFloat64, -1, 1, 8);
  ExpectNear(Einsum("ij,jk,kl->il", {a, b, c}),
             Op("dot", {Op("dot", {a, b}), c}), 1e-12);
}

// Products large enough for the matrix-product path (einsum_gemm.h; its
// own test compares it with the direct contraction case by case).
TEST(Einsum, LargeProductsAsTheOpsThatComputeThem) {
  const NDArray a = RandomArray({48, 64}, DType::kFloat32, -1, 1, 11);
  const NDArray b = RandomArray({64, 40}, DType::kFloat32, -1, 1, 12);
  ExpectNear(Einsum("ij,jk->ik", {a, b}), Op("dot", {a, b}), 1e-5, 1e-5);
  ExpectNear(Einsum("ij,jk->ki", {a, b}), Op("transpose", {Op("dot", {a, b})}),
             1e-5, 1e-5);
  // Attention scores: (batch, heads, query, dim) x (batch, heads, key, dim).
  const NDArray q = RandomArray({2, 3, 16, 8}, DType::kFloat32, -1, 1, 13);
  const NDArray k = RandomArray({2, 3, 16, 8}, DType::kFloat32, -1, 1, 14);
  const AttrDict rows{{"shape", "(6, 16, 8)"}};
  ExpectNear(
      Op("reshape", {Einsum("bhqd,bhkd->bhqk", {q, k})},
         {{"shape", "(6, 16, 16)"}}),
      Op("batch_dot", {Op("reshape", {q}, rows), Op("reshape", {k}, rows)},
         {{"transpose_b", "true"}}),
      1e-5, 1e-5);
  // The gradients of a product: og b^T and a^T og.
  const NDArray og = RandomArray({48, 40}, DType::kFloat32, -1, 1, 15);
  const std::vector<NDArray> grads =
      imperative::Invoke("_backward_npi_einsum", {og, a, b},
                         {{"subscripts", "ij,jk->ik"}, {"num_args", "2"}});
  ExpectNear(grads[0], Op("dot", {og, b}, {{"transpose_b", "true"}}), 1e-5,
             1e-5);
  ExpectNear(grads[1], Op("dot", {a, og}, {{"transpose_a", "true"}}), 1e-5,
             1e-5);
}

TEST(Einsum, DiagonalsSumsTransposesAndOuterProducts) {
  const NDArray m = ArrayOf({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(ToDouble(Einsum("ii->i", {m})), (std::vector<double>{1, 5, 9}));
  const NDArray trace = Einsum("ii", {m});  // implicit: i used twice
  EXPECT_EQ(trace.shape(), TShape::Scalar());
  EXPECT_EQ(ToDouble(trace), (std::vector<double>{15}));
  EXPECT_EQ(ToDouble(Einsum("ij->", {m})), (std::vector<double>{45}));
  EXPECT_EQ(ToDouble(Einsum("ij->j", {m})), (std::vector<double>{12, 15, 18}));
  // Implicit output in ASCII order: "ba" is the transpose.
  ExpectNear(Einsum("ba", {m}), Op("transpose", {m}), 0);
  // 'J' (used twice) is summed; the output is "ik".
  const NDArray a = RandomArray({2, 3}, DType::kFloat32, -1, 1, 9);
  const NDArray b = RandomArray({3, 4}, DType::kFloat32, -1, 1, 10);
  ExpectNear(Einsum("iJ,Jk", {a, b}), Op("dot", {a, b}), 1e-6);
  // Outer and inner products; a 0-d operand.
  const NDArray u = ArrayOf({2}, {1, 2}), v = ArrayOf({3}, {3, 4, 5});
  EXPECT_EQ(ToDouble(Einsum("i,j->ij", {u, v})),
            (std::vector<double>{3, 4, 5, 6, 8, 10}));
  EXPECT_EQ(ToDouble(Einsum("i,i", {u, u})), (std::vector<double>{5}));
  EXPECT_EQ(ToDouble(Einsum(",i->i", {ArrayOf(TShape::Scalar(), {2}), v})),
            (std::vector<double>{6, 8, 10}));
  // A diagonal of a 3-D operand against another operand: "iij,j->i".
  const NDArray t = ArrayOf({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(ToDouble(Einsum("iij,j->i", {t, ArrayOf({2}, {1, 10})})),
            (std::vector<double>{21, 87}));
}

TEST(Einsum, IntegerDataAndEmptySums) {
  const NDArray a = ArrayOf({2, 2}, {1, 2, 3, 4}, DType::kInt32);
  const NDArray b = ArrayOf({2, 2}, {5, 6, 7, 8}, DType::kInt32);
  const NDArray ab = Einsum("ij,jk->ik", {a, b});
  EXPECT_EQ(ab.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(ab), (std::vector<double>{19, 22, 43, 50}));
  // int8 sums wrap: 100 + 100 = -56.
  const NDArray c = ArrayOf({2}, {100, 100}, DType::kInt8);
  EXPECT_EQ(ToDouble(Einsum("i->", {c})), (std::vector<double>{-56}));
  // A contracted axis of length 0 gives zeros; an output axis of length 0
  // gives an empty array.
  const NDArray e =
      Einsum("ij,jk->ik", {RandomArray({2, 0}), RandomArray({0, 3})});
  EXPECT_EQ(ToDouble(e), std::vector<double>(6, 0));
  EXPECT_EQ(Einsum("ij->j", {RandomArray({2, 0})}).shape(), TShape({0}));
}

TEST(Einsum, SubscriptsThatDoNotFitAreTypedErrors) {
  const NDArray a = RandomArray({3, 4}), b = RandomArray({4, 5});
  const auto shape_error = [&](const std::string& s,
                               const std::vector<NDArray>& x,
                               const std::string& part) {
    ExpectError<ShapeError>([&] { Einsum(s, x); }, {"_npi_einsum", part});
  };
  shape_error("ij->ij", {a, b}, "name 1 operands but there are 2");
  shape_error("ij,jk,kl", {a, b}, "name 3 operands");
  shape_error("i1,jk", {a, b}, "neither a letter");
  shape_error("ijk,jk", {a, b}, "name 3 axes but operand 0 has 2");
  shape_error("i,jk", {a, b}, "name 1 axes");
  shape_error("ij,jk->ik", {a, RandomArray({5, 5})}, "do not broadcast");
  shape_error("ij,jk->iz", {a, b}, "'z' is in no operand");
  shape_error("ij,jk->ii", {a, b}, "names 'i' twice");
  shape_error("...j,jk->k", {RandomArray({2, 4}), b}, "has no '...'");
  shape_error("......i", {RandomArray({2})}, "two ellipses");
  shape_error("ii", {a}, "repeats 'i' on axes of lengths 3 and 4");
  EXPECT_THROW(Einsum("ij,jk", {a, Op("Cast", {b}, {{"dtype", "float64"}})}),
               DTypeError);
  EXPECT_THROW(Einsum("i", {ArrayOf({2}, {1, 0}, DType::kBool)}), DTypeError);
  std::vector<NDArray> nine(9, RandomArray({2}));
  EXPECT_THROW(Einsum("i,i,i,i,i,i,i,i,i", nine), InvalidArgument);
}

}  // namespace
}  // namespace testing
}  // namespace mx
