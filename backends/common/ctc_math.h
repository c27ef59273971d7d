// The CTC (connectionist temporal classification) forward-backward
// recursions in log space, shared by the CPU kernel of CTCLoss and the CUDA
// plugin's: host code, and device code where nvcc compiles it.
// ctc_math_test.cc checks them on the host.
//
// A label sequence l[0, L) is extended with blanks to S = 2L + 1 states
// (blank, l0, blank, l1, ..., blank). alpha_t(s) is the log-probability of
// the paths through state s at time t having emitted the first t + 1
// frames; beta_t(s) that of the paths from state s at time t to the end,
// the frame at t included. With lp_t the log-softmax of frame t:
//
//   alpha_0(s) = mx_math::CtcAlphaStart(lp_0, labels, s, blank);
//   alpha_t(s) = mx_math::CtcAlphaAt(alpha_{t-1}, lp_t, labels, s, blank);
//   log p = LogAddExp(alpha_{T-1}(S - 1), alpha_{T-1}(S - 2))
#ifndef MXCORE_BACKENDS_COMMON_CTC_MATH_H_
#define MXCORE_BACKENDS_COMMON_CTC_MATH_H_

#include <math.h>
#include <stdint.h>

#include "backends/common/host_device.h"

namespace mx_math {

// log(exp(a) + exp(b)) without overflow; -inf is the zero.
MX_HOST_DEVICE inline double LogAddExp(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  const double hi = a > b ? a : b, lo = a > b ? b : a;
  return hi + ::log1p(::exp(lo - hi));
}

// log sum_k exp(value(k)) for k in [0, n), the maximum taken out first: the
// log-softmax denominator of one frame's activations.
template <typename F>
MX_HOST_DEVICE inline double LogSumExp(int64_t n, F value) {
  double hi = -INFINITY;
  for (int64_t k = 0; k < n; ++k) {
    const double v = value(k);
    if (v > hi) hi = v;
  }
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += ::exp(value(k) - hi);
  return hi + ::log(sum);
}

// The symbol of state s: the blank at even s, label s / 2 at odd s.
MX_HOST_DEVICE inline int64_t CtcSymbol(const int64_t* labels, int64_t s,
                                        int64_t blank) {
  return s % 2 == 0 ? blank : labels[s / 2];
}

// Whether state s may be entered from s - 2, skipping a blank: s holds a
// label that differs from the previous label.
MX_HOST_DEVICE inline bool CtcCanSkip(const int64_t* labels, int64_t s) {
  return s % 2 == 1 && s >= 3 && labels[s / 2] != labels[s / 2 - 1];
}

// alpha_0(s): the first frame is in the leading blank or the first label.
MX_HOST_DEVICE inline double CtcAlphaStart(const double* lp,
                                           const int64_t* labels, int64_t s,
                                           int64_t blank) {
  return s > 1 ? -INFINITY : lp[CtcSymbol(labels, s, blank)];
}

// beta_{T-1}(s): the last frame is in the trailing blank or the last label.
MX_HOST_DEVICE inline double CtcBetaEnd(const double* lp, const int64_t* labels,
                                        int64_t s, int64_t num_states,
                                        int64_t blank) {
  return s < num_states - 2 ? -INFINITY : lp[CtcSymbol(labels, s, blank)];
}

// alpha_t(s) from row alpha_{t-1} (`prev`) and frame t's log-probabilities.
MX_HOST_DEVICE inline double CtcAlphaAt(const double* prev, const double* lp,
                                        const int64_t* labels, int64_t s,
                                        int64_t blank) {
  double a = prev[s];
  if (s >= 1) a = LogAddExp(a, prev[s - 1]);
  if (CtcCanSkip(labels, s)) a = LogAddExp(a, prev[s - 2]);
  return a + lp[CtcSymbol(labels, s, blank)];
}

// beta_t(s) from row beta_{t+1} (`next`, S states) and frame t's
// log-probabilities.
MX_HOST_DEVICE inline double CtcBetaAt(const double* next, const double* lp,
                                       const int64_t* labels, int64_t s,
                                       int64_t num_states, int64_t blank) {
  double b = next[s];
  if (s + 1 < num_states) b = LogAddExp(b, next[s + 1]);
  if (s + 2 < num_states && CtcCanSkip(labels, s + 2)) {
    b = LogAddExp(b, next[s + 2]);
  }
  return b + lp[CtcSymbol(labels, s, blank)];
}

// log p(labels) from the last frame's alpha row: paths end in the last
// label or the trailing blank.
MX_HOST_DEVICE inline double CtcLogLikelihood(const double* last_alpha,
                                              int64_t num_states) {
  return num_states > 1
             ? LogAddExp(last_alpha[num_states - 1], last_alpha[num_states - 2])
             : last_alpha[0];
}

// Frame t's gradient of -log p(labels) with respect to activation k (the
// softmax is part of the loss): softmax_k minus the posterior occupancy of
// the states holding k, from alpha_t and beta_t (both including frame t's
// emission, hence the lp[k] taken out) and log p.
MX_HOST_DEVICE inline double CtcGradAt(const double* alpha, const double* beta,
                                       const double* lp, const int64_t* labels,
                                       int64_t num_states, int64_t blank,
                                       double log_p, int64_t k) {
  double occupancy = -INFINITY;
  for (int64_t s = k == blank ? 0 : 1; s < num_states; s += 2) {
    if (CtcSymbol(labels, s, blank) == k) {
      occupancy = LogAddExp(occupancy, alpha[s] + beta[s]);
    }
  }
  if (occupancy == -INFINITY) return ::exp(lp[k]);  // Also when lp[k] is.
  return ::exp(lp[k]) - ::exp(occupancy - lp[k] - log_p);
}

}  // namespace mx_math

#endif  // MXCORE_BACKENDS_COMMON_CTC_MATH_H_
