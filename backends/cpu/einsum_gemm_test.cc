// einsum's matrix-product path (einsum_gemm.h) against the direct
// contraction (ContractElement in double) on the same factors: forward
// contractions and both operands' gradients of two-operand einsums, in
// float32, float64 and float16, written and added to; and the cases the
// path must decline (left to the direct contraction).
#include "backends/cpu/einsum_gemm.h"

#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/common/einsum.h"
#include "gtest/gtest.h"

namespace mx {
namespace cpu {
namespace {

using mx_math::EinsumContraction;
using Shapes = std::vector<std::vector<int64_t>>;

int64_t SizeOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

mx_math::EinsumPlan PlanFor(const std::string& subscripts,
                            const Shapes& shapes) {
  mx_math::EinsumPlan plan;
  const std::string why = mx_math::EinsumPlanOf(subscripts, shapes, &plan);
  EXPECT_EQ(why, "") << subscripts;
  return plan;
}

template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_same_v<T, float16>) {
    return static_cast<float>(v);
  } else {
    return static_cast<double>(v);
  }
}

// Factor values in [-1, 1), already rounded to T.
template <typename T>
std::vector<T> RandomFactor(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<T>(uniform(rng)));
  return v;
}

// Runs c through ContractByGemm into a target holding `initial` (with
// req) and expects the direct contraction (plus `initial` for kAddTo).
template <typename T>
void ExpectGemmMatchesDirect(const EinsumContraction& c,
                             const std::vector<int64_t>& f0_shape,
                             const std::vector<int64_t>& f1_shape,
                             int64_t target_size, OpReqType req, double tol,
                             const std::string& what) {
  const std::vector<T> f0 = RandomFactor<T>(SizeOf(f0_shape), 1);
  const std::vector<T> f1 = RandomFactor<T>(SizeOf(f1_shape), 2);
  const std::vector<T> initial = RandomFactor<T>(target_size, 3);
  std::vector<T> target = initial;
  ASSERT_TRUE(ContractByGemm<T>(c, f0.data(), SizeOf(f0_shape), f1.data(),
                                SizeOf(f1_shape), req, target.data()))
      << what << " did not take the matrix-product path";
  const auto load = [&](int f, int64_t at) {
    return ToDouble(f == 0 ? f0[at] : f1[at]);
  };
  for (int64_t e = 0; e < target_size; ++e) {
    double expected = mx_math::ContractElement<double>(c, e, load);
    if (req == OpReqType::kAddTo) {
      expected += ToDouble(initial[e]);
    }
    ASSERT_NEAR(ToDouble(target[e]), expected, tol * (1 + std::abs(expected)))
        << what << " element " << e;
  }
}

struct Case {
  std::string subscripts;
  Shapes shapes;
  // The operands whose gradients are matrix products (Declines shows why
  // the others are not).
  std::vector<int> gemm_gradients = {0, 1};
};

// Two-operand einsums whose output and gradients are all matrix products:
// plain, batched, attention-shaped, transposed outputs, several M and K
// labels, a row-wise dot (batch and K only), an outer product (K = 1),
// broadcast batches through "...", and a diagonal read from an operand.
const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {"ij,jk->ik", {{64, 32}, {32, 48}}},
      {"bij,bjk->bik", {{4, 16, 32}, {4, 32, 8}}},
      {"bhqd,bhkd->bhqk", {{2, 3, 16, 8}, {2, 3, 16, 8}}},
      {"ij,kj->ki", {{20, 30}, {40, 30}}},
      {"abc,cd->dba", {{4, 8, 32}, {32, 16}}},
      {"abcd,cde->abe", {{4, 6, 5, 6}, {5, 6, 12}}},
      {"ij,ij->i", {{64, 128}, {64, 128}}},
      {"i,j->ij", {{100}, {60}}},
      {"...ij,...jk->...ik", {{3, 1, 8, 16}, {4, 16, 8}}, {1}},
      {"ij,jk", {{40, 50}, {50, 30}}},
      {"ii,ij->j", {{64, 64}, {64, 64}}, {1}},
  };
  return *cases;
}

template <typename T>
void CheckEveryCase(double tol) {
  for (const Case& k : Cases()) {
    const mx_math::EinsumPlan plan = PlanFor(k.subscripts, k.shapes);
    const int64_t out_size = SizeOf(plan.output_shape);
    for (OpReqType req : {OpReqType::kWriteTo, OpReqType::kAddTo}) {
      const std::string how = req == OpReqType::kAddTo ? " (add)" : "";
      ExpectGemmMatchesDirect<T>(mx_math::ForwardContraction(plan, k.shapes),
                                 k.shapes[0], k.shapes[1], out_size, req, tol,
                                 k.subscripts + how);
      // Operand j's gradient: out_grad times the other operand.
      for (int j : k.gemm_gradients) {
        ExpectGemmMatchesDirect<T>(
            mx_math::GradientContraction(plan, k.shapes, j), plan.output_shape,
            k.shapes[1 - j], SizeOf(k.shapes[j]), req, tol,
            k.subscripts + " gradient " + std::to_string(j) + how);
      }
    }
  }
}

TEST(EinsumGemm, MatchesTheDirectContractionFloat32) {
  CheckEveryCase<float>(1e-5);
}
TEST(EinsumGemm, MatchesTheDirectContractionFloat64) {
  CheckEveryCase<double>(1e-12);
}
TEST(EinsumGemm, MatchesTheDirectContractionFloat16) {
  // Products in float; the result rounds to float16 once.
  CheckEveryCase<float16>(2e-3);
}

TEST(EinsumGemm, Declines) {
  const auto takes = [](const EinsumContraction& c, const Shapes& factors) {
    std::vector<float> f0(SizeOf(factors[0]), 1.f), f1(SizeOf(factors[1]), 1.f);
    std::vector<float> target(1 << 16, 0.f);
    return ContractByGemm<float>(c, f0.data(), SizeOf(factors[0]), f1.data(),
                                 SizeOf(factors[1]), OpReqType::kWriteTo,
                                 target.data());
  };
  // Too small to gain (8 multiply-adds).
  Shapes s = {{2, 2}, {2, 2}};
  mx_math::EinsumPlan plan = PlanFor("ij,jk->ik", s);
  EXPECT_FALSE(takes(mx_math::ForwardContraction(plan, s), s));
  // Three factors.
  s = {{32, 32}, {32, 32}, {32, 32}};
  plan = PlanFor("ij,jk,kl->il", s);
  EXPECT_FALSE(takes(mx_math::ForwardContraction(plan, s), {s[0], s[1]}));
  // A target with a repeated label: the gradient of "ii,ij->j" for its
  // first operand is zero off the diagonal.
  s = {{64, 64}, {64, 64}};
  plan = PlanFor("ii,ij->j", s);
  EXPECT_FALSE(takes(mx_math::GradientContraction(plan, s, 0),
                     {plan.output_shape, s[1]}));
  // A target axis of length 1 under a longer label (a broadcast operand's
  // gradient sums along it).
  s = {{1, 64}, {64, 64}};
  plan = PlanFor("ij,ij->ij", s);
  EXPECT_FALSE(takes(mx_math::GradientContraction(plan, s, 0),
                     {plan.output_shape, s[1]}));
  // An empty label.
  s = {{64, 0}, {0, 64}};
  plan = PlanFor("ij,jk->ik", s);
  EXPECT_FALSE(takes(mx_math::ForwardContraction(plan, s), s));
  // Packing would repeat each factor along the other's label: "i,j->"
  // packs 2 * 100 * 100 elements from 200.
  s = {{100}, {100}};
  plan = PlanFor("i,j->", s);
  EXPECT_FALSE(takes(mx_math::ForwardContraction(plan, s), s));
}

}  // namespace
}  // namespace cpu
}  // namespace mx
