// MXNet's fused attention products against loops written from MXNet's
// definitions (reshape to (seq, batch, heads, parts, head_dim), per-head
// matrix products), numerical gradients of all four, typed shape errors.
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

constexpr int kHeads = 2, kHd = 3, kBatch = 2;

// x[t, b, (h * parts + part) * hd + d] of a (seq, batch, heads*parts*hd)
// array's values.
double At(const std::vector<double>& x, int64_t batch, int64_t parts, int64_t t,
          int64_t b, int64_t h, int64_t part, int64_t d) {
  const int64_t width = kHeads * parts * kHd;
  return x[(t * batch + b) * width + (h * parts + part) * kHd + d];
}

// Per-head q k^T / sqrt(hd): q part qp of `parts` in q, k part kp in k.
std::vector<double> RefQK(const std::vector<double>& q, int64_t q_parts,
                          int64_t qp, int64_t lq, const std::vector<double>& k,
                          int64_t k_parts, int64_t kp, int64_t lk) {
  std::vector<double> out;
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t h = 0; h < kHeads; ++h) {
      for (int64_t i = 0; i < lq; ++i) {
        for (int64_t j = 0; j < lk; ++j) {
          double s = 0;
          for (int64_t d = 0; d < kHd; ++d) {
            s += At(q, kBatch, q_parts, i, b, h, qp, d) *
                 At(k, kBatch, k_parts, j, b, h, kp, d);
          }
          out.push_back(s / std::sqrt(static_cast<double>(kHd)));
        }
      }
    }
  }
  return out;
}

// Per-head attention v, laid out (lq, batch, heads * hd).
std::vector<double> RefValAtt(const std::vector<double>& att, int64_t lq,
                              int64_t lk, const std::vector<double>& v,
                              int64_t parts, int64_t vp) {
  std::vector<double> out(static_cast<size_t>(lq * kBatch * kHeads * kHd));
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t h = 0; h < kHeads; ++h) {
      for (int64_t i = 0; i < lq; ++i) {
        for (int64_t d = 0; d < kHd; ++d) {
          double s = 0;
          for (int64_t j = 0; j < lk; ++j) {
            s += att[((b * kHeads + h) * lq + i) * lk + j] *
                 At(v, kBatch, parts, j, b, h, vp, d);
          }
          out[(i * kBatch + b) * kHeads * kHd + h * kHd + d] = s;
        }
      }
    }
  }
  return out;
}

const AttrDict kAttrs = {{"heads", std::to_string(kHeads)}};

TEST(InterleavedMatmul, SelfAttentionMatchesMXNetsDefinition) {
  const int64_t len = 4;
  const NDArray qkv =
      RandomArray({len, kBatch, 3 * kHeads * kHd}, DType::kFloat64, -1, 1, 3);
  const NDArray scores =
      nd::Call("_contrib_interleaved_matmul_selfatt_qk", {qkv}, kAttrs);
  EXPECT_EQ(scores.shape(), TShape({kBatch * kHeads, len, len}));
  const std::vector<double> x = ToDouble(qkv);
  EXPECT_TRUE(AllClose(ToDouble(scores), RefQK(x, 3, 0, len, x, 3, 1, len),
                       1e-12, 1e-12));
  const NDArray att =
      RandomArray({kBatch * kHeads, len, len}, DType::kFloat64, 0, 1, 4);
  const NDArray out = nd::Call("_contrib_interleaved_matmul_selfatt_valatt",
                               {qkv, att}, kAttrs);
  EXPECT_EQ(out.shape(), TShape({len, kBatch, kHeads * kHd}));
  EXPECT_TRUE(AllClose(ToDouble(out),
                       RefValAtt(ToDouble(att), len, len, x, 3, 2), 1e-12,
                       1e-12));
}

TEST(InterleavedMatmul, EncoderDecoderMatchesMXNetsDefinition) {
  const int64_t lq = 3, lk = 5;
  const NDArray q =
      RandomArray({lq, kBatch, kHeads * kHd}, DType::kFloat64, -1, 1, 5);
  const NDArray kv =
      RandomArray({lk, kBatch, 2 * kHeads * kHd}, DType::kFloat64, -1, 1, 6);
  const NDArray scores =
      nd::Call("_contrib_interleaved_matmul_encdec_qk", {q, kv}, kAttrs);
  EXPECT_EQ(scores.shape(), TShape({kBatch * kHeads, lq, lk}));
  EXPECT_TRUE(AllClose(ToDouble(scores),
                       RefQK(ToDouble(q), 1, 0, lq, ToDouble(kv), 2, 0, lk),
                       1e-12, 1e-12));
  const NDArray att =
      RandomArray({kBatch * kHeads, lq, lk}, DType::kFloat64, 0, 1, 7);
  const NDArray out =
      nd::Call("_contrib_interleaved_matmul_encdec_valatt", {kv, att}, kAttrs);
  EXPECT_EQ(out.shape(), TShape({lq, kBatch, kHeads * kHd}));
  EXPECT_TRUE(AllClose(ToDouble(out),
                       RefValAtt(ToDouble(att), lq, lk, ToDouble(kv), 2, 1),
                       1e-12, 1e-12));
  // float32 and float16 follow float64.
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    const NDArray low =
        nd::Call("_contrib_interleaved_matmul_encdec_qk",
                 {nd::Call("Cast", {q}, {{"dtype", DTypeName(dt)}}),
                  nd::Call("Cast", {kv}, {{"dtype", DTypeName(dt)}})},
                 kAttrs);
    EXPECT_EQ(low.dtype(), dt);
    EXPECT_TRUE(AllClose(ToDouble(low), ToDouble(scores), 3e-3, 3e-3));
  }
}

TEST(InterleavedMatmul, Gradients) {
  const int64_t len = 3, lq = 2, lk = 4;
  const auto rand = [](TShape s, uint32_t seed) {
    return RandomArray(s, DType::kFloat64, -1, 1, seed);
  };
  EXPECT_TRUE(CheckGradient("_contrib_interleaved_matmul_selfatt_qk", kAttrs,
                            {rand({len, kBatch, 3 * kHeads * kHd}, 1)}));
  EXPECT_TRUE(CheckGradient("_contrib_interleaved_matmul_selfatt_valatt",
                            kAttrs,
                            {rand({len, kBatch, 3 * kHeads * kHd}, 2),
                             rand({kBatch * kHeads, len, len}, 3)}));
  EXPECT_TRUE(CheckGradient("_contrib_interleaved_matmul_encdec_qk", kAttrs,
                            {rand({lq, kBatch, kHeads * kHd}, 4),
                             rand({lk, kBatch, 2 * kHeads * kHd}, 5)}));
  EXPECT_TRUE(CheckGradient("_contrib_interleaved_matmul_encdec_valatt", kAttrs,
                            {rand({lk, kBatch, 2 * kHeads * kHd}, 6),
                             rand({kBatch * kHeads, lq, lk}, 7)}));
}

// Empty sequences: empty or zero outputs, no offsets from empty arrays.
TEST(InterleavedMatmul, EmptySequences) {
  const NDArray qkv = ArrayOf({0, kBatch, 3 * kHeads * kHd}, {});
  EXPECT_EQ(
      nd::Call("_contrib_interleaved_matmul_selfatt_qk", {qkv}, kAttrs).shape(),
      TShape({kBatch * kHeads, 0, 0}));
  // No queries: d keys_values is attention^T g over an empty sum, 0.
  const NDArray kv = RandomArray({3, kBatch, 2 * kHeads * kHd});
  const NDArray att = ArrayOf({kBatch * kHeads, 0, 3}, {});
  const NDArray g = ArrayOf({0, kBatch, kHeads * kHd}, {});
  const std::vector<NDArray> grads = nd::CallMulti(
      "_backward_interleaved_matmul_encdec_valatt", {g, kv, att}, kAttrs);
  EXPECT_TRUE(AllClose(ToDouble(grads[0]),
                       std::vector<double>(3 * kBatch * 2 * kHeads * kHd, 0)));
}

TEST(InterleavedMatmul, ShapeErrors) {
  const NDArray qkv = RandomArray({4, kBatch, 3 * kHeads * kHd});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_contrib_interleaved_matmul_selfatt_qk", {qkv},
                 {{"heads", "4"}});
      },
      {"_contrib_interleaved_matmul_selfatt_qk", "heads (4)"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_contrib_interleaved_matmul_selfatt_qk", {qkv},
                 {{"heads", "0"}});
      },
      {"_contrib_interleaved_matmul_selfatt_qk", "heads=0"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_contrib_interleaved_matmul_selfatt_valatt",
                 {qkv, RandomArray({kBatch * kHeads, 4, 3})}, kAttrs);
      },
      {"attention", "(4,4,4)"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_contrib_interleaved_matmul_encdec_qk",
                 {RandomArray({2, kBatch, kHeads * kHd}),
                  RandomArray({3, kBatch, kHeads * kHd})},
                 kAttrs);
      },
      {"keys_values", "(3,2,12)"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_contrib_interleaved_matmul_selfatt_qk",
                 {RandomArray({4, 12})}, kAttrs);
      },
      {"3 axes"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
