// One time step of MXNet's fused RNN op for one hidden unit of one
// sequence: the gate arithmetic of the vanilla (relu/tanh), LSTM and GRU
// cells, forward and backward, shared by the CPU kernel and the CUDA
// plugin (whose kernels run one thread per unit). The matrix products
// around a step (x and h projections, their gradients) are the caller's;
// backends/common/rnn_driver.h runs whole layers.
//
// Gate order and formulas are MXNet's (and cuDNN's):
//   vanilla: h = act(Wx x + bx + Wh h' + bh)
//   LSTM:    i, f, g, o = sig, sig, tanh, sig(Wx x + bx + Wh h' + bh)
//            c = f c' + i g (clipped to [clip_min, clip_max] if asked),
//            h = o tanh(c)
//   GRU:     r, z = sig(Wx x + bx + Wh h' + bh);
//            n = tanh(Wxn x + bxn + r (Whn h' + bhn)); h = (1 - z) n + z h'
// A sequence shorter than the step (sequence lengths) keeps its state and
// outputs 0 there.
#ifndef MXCORE_BACKENDS_COMMON_RNN_CELL_H_
#define MXCORE_BACKENDS_COMMON_RNN_CELL_H_

#include <cmath>
#include <cstdint>

#include "backends/common/host_device.h"

namespace mx_rnn {

enum class RnnMode { kRelu = 0, kTanh = 1, kLstm = 2, kGru = 3 };

// Gate blocks per cell: the rows of Wx and Wh are `GateCount * H`.
MX_HOST_DEVICE inline int GateCount(RnnMode m) {
  return m == RnnMode::kLstm ? 4 : m == RnnMode::kGru ? 3 : 1;
}

// Saved activations per unit and step, besides h (and c for LSTM): LSTM
// i, f, g, o; GRU r, z, n and Whn h' + bhn; none for the vanilla cell.
MX_HOST_DEVICE inline int SavedGateCount(RnnMode m) {
  return m == RnnMode::kLstm || m == RnnMode::kGru ? 4 : 0;
}

// tanh and exp in the argument's precision on the host and the device.
MX_HOST_DEVICE inline float Tanh(float x) { return ::tanhf(x); }
MX_HOST_DEVICE inline double Tanh(double x) { return ::tanh(x); }
MX_HOST_DEVICE inline float Exp(float x) { return ::expf(x); }
MX_HOST_DEVICE inline double Exp(double x) { return ::exp(x); }

template <typename A>
MX_HOST_DEVICE inline A Sigmoid(A x) {
  return A(1) / (A(1) + Exp(-x));
}

// What every step kernel needs to know: the cell, the extents, the step
// and the sequences' lengths, LSTM clipping.
template <typename A>
struct RnnStepInfo {
  RnnMode mode;
  int64_t n, h_size;
  int64_t t;               // The time step, compared with the lengths.
  const int64_t* lengths;  // (N,) or null: every sequence is T long.
  bool clip;               // LSTM cell clipping,
  bool clip_nan;           // with NaN clipped to clip_min (else kept).
  A clip_min, clip_max;
};

// One step of one direction of one layer, rows n in [0, N), units j in
// [0, H); every (N, k*H) matrix is row-major with row stride k*H.
template <typename A>
struct RnnStep : RnnStepInfo<A> {
  const A* gx;      // (N, G*H) Wx x, no bias.
  const A* gh;      // (N, G*H) Wh h', no bias.
  const A* bx;      // (G*H,)
  const A* bh;      // (G*H,)
  const A* h_prev;  // (N, H)
  const A* c_prev;  // (N, H), LSTM only.
  A* gates;         // (N, 4*H) saved gates (LSTM, GRU).
  A* h;             // (N, H) new state (the old one where inactive).
  A* c;             // (N, H) new cell state, LSTM only.
  A* y;             // Output rows, stride y_stride; 0 where inactive.
  int64_t y_stride;
};

// An LSTM cell state after MXNet's clipping (lstm_state_clip_min/max/nan).
template <typename A>
MX_HOST_DEVICE inline A ClipCell(const RnnStepInfo<A>& s, A c) {
  if (!s.clip) return c;
  const bool nan = !(c == c);  // NOLINT: the NaN test
  return c < s.clip_min || (nan && s.clip_nan) ? s.clip_min
         : c > s.clip_max                      ? s.clip_max
                                               : c;
}

template <typename A>
MX_HOST_DEVICE inline bool Active(const RnnStepInfo<A>& s, int64_t row) {
  return s.lengths == nullptr || s.t < s.lengths[row];
}

// Unit i = row * H + j of step `s`.
template <typename A>
MX_HOST_DEVICE inline void RnnStepForwardAt(const RnnStep<A>& s, int64_t i) {
  const int64_t hs = s.h_size, row = i / hs, j = i % hs;
  const int64_t g = GateCount(s.mode) * hs;
  const A* gx = s.gx + row * g;
  const A* gh = s.gh + row * g;
  const A hp = s.h_prev[i];
  A* y = s.y + row * s.y_stride + j;
  if (!Active(s, row)) {
    s.h[i] = hp;
    if (s.mode == RnnMode::kLstm) s.c[i] = s.c_prev[i];
    *y = A(0);
    return;
  }
  A pre[4];  // Pre-activations of the gate blocks (GRU's n: unused).
  for (int k = 0; k < GateCount(s.mode); ++k) {
    const int64_t col = k * hs + j;
    pre[k] = gx[col] + s.bx[col] + gh[col] + s.bh[col];
  }
  A* saved = s.gates + row * 4 * hs + j;
  A h;
  switch (s.mode) {
    case RnnMode::kRelu: {
      const A a = pre[0];
      h = a > A(0) ? a : A(0);
      break;
    }
    case RnnMode::kTanh:
      h = Tanh(pre[0]);
      break;
    case RnnMode::kLstm: {
      const A in = Sigmoid(pre[0]), forget = Sigmoid(pre[1]);
      const A cell = Tanh(pre[2]), out = Sigmoid(pre[3]);
      const A c = ClipCell(s, forget * s.c_prev[i] + in * cell);
      saved[0] = in;
      saved[hs] = forget;
      saved[2 * hs] = cell;
      saved[3 * hs] = out;
      s.c[i] = c;
      h = out * Tanh(c);
      break;
    }
    case RnnMode::kGru: {
      const A r = Sigmoid(pre[0]), z = Sigmoid(pre[1]);
      const A hn = gh[2 * hs + j] + s.bh[2 * hs + j];
      const A n = Tanh(gx[2 * hs + j] + s.bx[2 * hs + j] + r * hn);
      saved[0] = r;
      saved[hs] = z;
      saved[2 * hs] = n;
      saved[3 * hs] = hn;
      h = (A(1) - z) * n + z * hp;
      break;
    }
  }
  s.h[i] = h;
  *y = h;
}

// The backward of one step. On entry dh holds the gradient reaching h from
// the later step (through Wh and directly) and dc the one reaching c; the
// output gradient dy is added where the sequence is active. On exit dgx
// and dgh hold the gradients of the pre-activations of the x and h
// projections (they differ only in GRU's n block), dc the gradient of
// c_prev, and dh the part of h_prev's gradient that does not pass through
// Wh (GRU's z h'; everything where inactive).
template <typename A>
struct RnnStepGrad : RnnStepInfo<A> {
  const A* gates;   // (N, 4*H) saved by the forward step.
  const A* h;       // (N, H) this step's state.
  const A* c;       // (N, H) this step's cell state (LSTM).
  const A* h_prev;  // (N, H)
  const A* c_prev;  // (N, H) (LSTM)
  const A* dy;      // Output gradient rows, stride dy_stride.
  int64_t dy_stride;
  A* dh;   // (N, H) in/out.
  A* dc;   // (N, H) in/out (LSTM).
  A* dgx;  // (N, G*H)
  A* dgh;  // (N, G*H)
};

template <typename A>
MX_HOST_DEVICE inline void RnnStepBackwardAt(const RnnStepGrad<A>& s,
                                             int64_t i) {
  const int64_t hs = s.h_size, row = i / hs, j = i % hs;
  const int64_t g = GateCount(s.mode) * hs;
  A* dgx = s.dgx + row * g + j;
  A* dgh = s.dgh + row * g + j;
  if (!Active(s, row)) {  // State carried through: gradients pass unchanged.
    for (int k = 0; k < GateCount(s.mode); ++k)
      dgx[k * hs] = dgh[k * hs] = A(0);
    return;
  }
  const A dh = s.dh[i] + s.dy[row * s.dy_stride + j];
  const A* saved = s.gates + row * 4 * hs + j;
  switch (s.mode) {
    case RnnMode::kRelu:
    case RnnMode::kTanh: {
      const A h = s.h[i];
      const A da = s.mode == RnnMode::kTanh ? dh * (A(1) - h * h)
                                            : (h > A(0) ? dh : A(0));
      dgx[0] = dgh[0] = da;
      s.dh[i] = A(0);
      break;
    }
    case RnnMode::kLstm: {
      const A in = saved[0], forget = saved[hs], cell = saved[2 * hs];
      const A out = saved[3 * hs], c = s.c[i], tc = Tanh(c);
      A dc = s.dc[i] + dh * out * (A(1) - tc * tc);
      // Clipped cell states pass no gradient back (c at a bound).
      if (s.clip && !(c > s.clip_min && c < s.clip_max)) dc = A(0);
      const A pre[4] = {dc * cell * in * (A(1) - in),
                        dc * s.c_prev[i] * forget * (A(1) - forget),
                        dc * in * (A(1) - cell * cell),
                        dh * tc * out * (A(1) - out)};
      for (int k = 0; k < 4; ++k) dgx[k * hs] = dgh[k * hs] = pre[k];
      s.dc[i] = dc * forget;
      s.dh[i] = A(0);
      break;
    }
    case RnnMode::kGru: {
      const A r = saved[0], z = saved[hs], n = saved[2 * hs];
      const A hn = saved[3 * hs];
      const A dn = dh * (A(1) - z) * (A(1) - n * n);
      const A dr = dn * hn * r * (A(1) - r);
      const A dz = dh * (s.h_prev[i] - n) * z * (A(1) - z);
      dgx[0] = dgh[0] = dr;
      dgx[hs] = dgh[hs] = dz;
      dgx[2 * hs] = dn;
      dgh[2 * hs] = dn * r;
      s.dh[i] = dh * z;
      break;
    }
  }
}

}  // namespace mx_rnn

#endif  // MXCORE_BACKENDS_COMMON_RNN_CELL_H_
