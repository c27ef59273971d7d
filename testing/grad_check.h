// Numerical gradient checks for operators (tests only).
//
// CheckGradient builds a one-op graph, binds it with gradients and compares
// the backward pass (the op's FGradient) against central differences of
// L = sum_k sum(head_grad_k * output_k), computed in float64.
//
//   EXPECT_TRUE(CheckGradient("FullyConnected", {{"num_hidden", "3"}},
//                             {RandomArray({2, 4}), RandomArray({3, 4}),
//                              RandomArray({3})}));
//   CheckSecondOrder("tan", {}, {RandomArray({3})}, RandomArray({3}));
#ifndef MXCORE_TESTING_GRAD_CHECK_H_
#define MXCORE_TESTING_GRAD_CHECK_H_

#include <cstdint>
#include <vector>

#include "graph/op.h"
#include "gtest/gtest.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace testing {

struct GradCheckOptions {
  double eps = 1e-6;
  double rtol = 1e-4;
  double atol = 1e-6;
  // Forward in training mode (BatchNorm batch statistics, Dropout).
  bool is_train = false;
  // Op inputs (by position) whose gradient is not checked and not
  // requested. Integer inputs and auxiliary states are always skipped.
  std::vector<int> skip;
  // Random generators are reseeded with this before every forward pass so
  // random ops (Dropout) see the same mask each time.
  uint64_t seed = 1;
};

// `inputs` in the op's input order; floating-point ones are converted to
// float64. Fails (with the first mismatches) when an analytic gradient
// differs from the numerical one, or when the op has no gradient.
::testing::AssertionResult CheckGradient(const std::string& op,
                                         const AttrDict& attrs,
                                         const std::vector<NDArray>& inputs,
                                         const GradCheckOptions& options = {});

// The analytic gradient (the op's FGradient run by the executor) of every
// input of `op` at `inputs`, for these head gradients, as doubles. For
// checks at points where the numerical gradient is undefined (ties).
std::vector<std::vector<double>> Gradients(const std::string& op,
                                           const AttrDict& attrs,
                                           const std::vector<NDArray>& inputs,
                                           const std::vector<NDArray>& heads);

// Second derivatives: builds G = d<head, op(inputs)>/d(inputs[wrt]) as a
// graph (the op's FGradient, with `head` an argument) and checks the
// gradient of <v, G> for a random v with respect to every floating-point
// input and the head against central differences, in float64. Mismatches
// are test failures (EXPECT) naming the op and the argument.
void CheckSecondOrder(const std::string& op, const AttrDict& attrs,
                      const std::vector<NDArray>& inputs, const NDArray& head,
                      int wrt = 0);

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_GRAD_CHECK_H_
