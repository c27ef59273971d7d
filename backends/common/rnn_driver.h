// MXNet's fused RNN op (vanilla relu/tanh, LSTM, GRU; layers,
// bidirectional, dropout between layers, sequence lengths, LSTM cell
// clipping), forward and backward through time, written once over a
// device: the CPU kernel and the CUDA plugin supply matrix products and
// the per-step cell kernels (backends/common/rnn_cell.h), this header the
// layout and the order of work.
//
//   CpuRnnDevice dev;  // Gemm, Fill, Copy, StepForward, ... (see below)
//   mx_rnn::RnnForward<float>(dev, config, inputs, y, hy, cy, reserve,
//                             scratch, /*train=*/true);
//
// Layouts are MXNet's: data (T, N, I), output (T, N, D*H) with the
// directions side by side, states (L*D, N, H) indexed layer * D +
// direction; the parameter vector holds, for each layer and direction, Wx
// (G*H, I_layer) then Wh (G*H, H), and after all weights, for each layer
// and direction, bx (G*H) then bh (G*H). Every pointer is the device's;
// the driver never reads values.
//
// A Dev offers, for the arithmetic type A:
//   Gemm(a, b, c, m, n, k, ta, tb, accumulate)  row-major c = op(a) op(b)
//   Fill(p, n, value), Copy(dst, src, n), Multiply(x, m, n)  (x *= m)
//   DropoutMask(mask, n, p)  0 with probability p, else 1/(1-p)
//   StepForward(RnnStep<A>), StepBackward(RnnStepGrad<A>)  all N*H units
#ifndef MXCORE_BACKENDS_COMMON_RNN_DRIVER_H_
#define MXCORE_BACKENDS_COMMON_RNN_DRIVER_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "backends/common/rnn_cell.h"

namespace mx_rnn {

struct RnnConfig {
  RnnMode mode = RnnMode::kLstm;
  int64_t layers = 1, dirs = 1;
  int64_t seq_len = 0, batch = 0, input_size = 0, state_size = 0;
  double dropout = 0;     // On each layer's output but the last.
  bool clip = false;      // LSTM cell states clipped to [min, max],
  bool clip_nan = false;  // NaN to clip_min (else it propagates).
  double clip_min = 0, clip_max = 0;
};

inline int64_t LayerInputSize(const RnnConfig& c, int64_t layer) {
  return layer == 0 ? c.input_size : c.dirs * c.state_size;
}

// Element counts in N (double to check bounds before int64 arithmetic).
template <typename N>
N RnnParamCount(const RnnConfig& c) {
  const N gh = N(GateCount(c.mode)) * N(c.state_size);
  N total = 0;
  for (int64_t l = 0; l < c.layers; ++l) {
    total += N(c.dirs) * gh * (N(LayerInputSize(c, l)) + N(c.state_size) + 2);
  }
  return total;
}

// One layer and direction's saved steps: gates (T, N, 4H) for LSTM and
// GRU, h (T, N, H), c (T, N, H) for LSTM.
template <typename N>
N RnnCellBlockCount(const RnnConfig& c) {
  const int per_unit = SavedGateCount(c.mode) + 1 + (c.mode == RnnMode::kLstm);
  return N(c.seq_len) * N(c.batch) * N(c.state_size) * N(per_unit);
}

// A layer's output (T, N, D*H).
template <typename N>
N RnnLayerOutputCount(const RnnConfig& c) {
  return N(c.seq_len) * N(c.batch) * N(c.dirs) * N(c.state_size);
}

// The reserve the backward pass reads: every layer and direction's cell
// block, then the outputs of all layers but the last (after dropout: the
// next layer's input), then their dropout masks when dropout > 0.
template <typename N>
N RnnReserveCount(const RnnConfig& c) {
  const N between = N(c.layers - 1) * RnnLayerOutputCount<N>(c);
  return N(c.layers) * N(c.dirs) * RnnCellBlockCount<N>(c) + between +
         (c.dropout > 0 ? between : N(0));
}

struct RnnWeightOffsets {
  int64_t wx, wh, bx, bh;
};

inline RnnWeightOffsets WeightOffsets(const RnnConfig& c, int64_t layer,
                                      int64_t dir) {
  const int64_t gh = GateCount(c.mode) * c.state_size;
  int64_t w = 0;
  for (int64_t l = 0; l < layer; ++l) {
    w += c.dirs * gh * (LayerInputSize(c, l) + c.state_size);
  }
  w += dir * gh * (LayerInputSize(c, layer) + c.state_size);
  int64_t all_weights = 0;
  for (int64_t l = 0; l < c.layers; ++l) {
    all_weights += c.dirs * gh * (LayerInputSize(c, l) + c.state_size);
  }
  const int64_t b = all_weights + (layer * c.dirs + dir) * 2 * gh;
  return {w, w + gh * LayerInputSize(c, layer), b, b + gh};
}

// Where one layer and direction's saved steps live in the reserve (E is
// A, or const A when reading).
template <typename E>
struct CellBlock {
  E* gates;  // (T, N, 4H) or unused.
  E* h;      // (T, N, H)
  E* c;      // (T, N, H) or null.
};

template <typename E>
CellBlock<E> CellBlockAt(const RnnConfig& c, E* reserve, int64_t layer,
                         int64_t dir) {
  const int64_t steps = c.seq_len * c.batch * c.state_size;
  E* base = reserve + (layer * c.dirs + dir) * RnnCellBlockCount<int64_t>(c);
  const int64_t gates = SavedGateCount(c.mode) * steps;
  return {base, base + gates,
          c.mode == RnnMode::kLstm ? base + gates + steps
                                   : static_cast<E*>(nullptr)};
}

template <typename E>
E* LayerOutputAt(const RnnConfig& c, E* reserve, int64_t layer) {
  return reserve + c.layers * c.dirs * RnnCellBlockCount<int64_t>(c) +
         layer * RnnLayerOutputCount<int64_t>(c);
}

template <typename E>
E* DropoutMaskAt(const RnnConfig& c, E* reserve, int64_t layer) {
  return LayerOutputAt(c, reserve, c.layers - 1) +
         layer * RnnLayerOutputCount<int64_t>(c);
}

// MXNet's sequence lengths (use_sequence_length): each of the n values
// truncated to an integer in [0, t_max] into `out`. Returns "" or a message
// naming the first value out of range (or NaN).
inline std::string RnnLengths(const double* v, int64_t n, int64_t t_max,
                              int64_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    if (!(v[i] >= 0 && v[i] < static_cast<double>(t_max) + 1)) {
      char msg[128];
      std::snprintf(
          msg, sizeof(msg), "sequence_length[%lld]=%g is outside [0, %lld]",
          static_cast<long long>(i), v[i], static_cast<long long>(t_max));
      return msg;
    }
    out[i] = static_cast<int64_t>(v[i]);
  }
  return "";
}

template <typename A>
struct RnnInputs {
  const A* x;              // (T, N, I)
  const A* w;              // The parameter vector.
  const A* hx;             // (L*D, N, H)
  const A* cx;             // (L*D, N, H), LSTM only.
  const int64_t* lengths;  // (N,) or null.
};

// Scratch elements each pass needs.
inline int64_t RnnForwardScratchCount(const RnnConfig& c) {
  const int64_t gh = GateCount(c.mode) * c.state_size;
  return (c.seq_len + 1) * c.batch * gh;
}

inline int64_t RnnBackwardScratchCount(const RnnConfig& c) {
  const int64_t gh = GateCount(c.mode) * c.state_size;
  const int64_t tn = c.seq_len * c.batch;
  return 2 * tn * gh + 2 * c.batch * c.state_size + tn +
         (c.layers > 1 ? 2 * RnnLayerOutputCount<int64_t>(c) : 0);
}

namespace internal {

// The step a direction takes s-th, and the one before it.
inline int64_t StepTime(const RnnConfig& c, int64_t dir, int64_t s) {
  return dir == 0 ? s : c.seq_len - 1 - s;
}

template <typename A>
struct PrevState {
  const A* h;
  const A* c;
};

// The state step `s` of direction `dir` starts from (s = T: the final
// state).
template <typename A, typename E>
PrevState<A> PrevStateAt(const RnnConfig& c, const RnnInputs<A>& in,
                         const CellBlock<E>& blk, int64_t ld, int64_t dir,
                         int64_t s) {
  const int64_t nh = c.batch * c.state_size;
  if (s == 0) {
    return {in.hx + ld * nh, in.cx != nullptr ? in.cx + ld * nh : nullptr};
  }
  const int64_t tp = StepTime(c, dir, s - 1);
  return {blk.h + tp * nh, blk.c != nullptr ? blk.c + tp * nh : nullptr};
}

template <typename A>
RnnStepInfo<A> StepInfo(const RnnConfig& c, const RnnInputs<A>& in, int64_t t) {
  RnnStepInfo<A> info;
  info.mode = c.mode;
  info.n = c.batch;
  info.h_size = c.state_size;
  info.t = t;
  info.lengths = in.lengths;
  info.clip = c.clip;
  info.clip_nan = c.clip_nan;
  info.clip_min = static_cast<A>(c.clip_min);
  info.clip_max = static_cast<A>(c.clip_max);
  return info;
}

}  // namespace internal

// Runs all layers: y (T, N, D*H), hy and cy (L*D, N, H; either may be
// null), and the reserve. scratch holds RnnForwardScratchCount elements.
template <typename A, typename Dev>
void RnnForward(Dev& dev, const RnnConfig& c, const RnnInputs<A>& in, A* y,
                A* hy, A* cy, A* reserve, A* scratch, bool train) {
  using internal::PrevStateAt;
  using internal::StepInfo;
  using internal::StepTime;
  const int64_t t_max = c.seq_len, n = c.batch, hs = c.state_size;
  const int64_t gh = GateCount(c.mode) * hs, nh = n * hs;
  const int64_t out_cols = c.dirs * hs;
  A* gx_all = scratch;
  A* gh_step = scratch + t_max * n * gh;
  for (int64_t l = 0; l < c.layers; ++l) {
    const A* x = l == 0 ? in.x : LayerOutputAt(c, reserve, l - 1);
    A* out = l == c.layers - 1 ? y : LayerOutputAt(c, reserve, l);
    const int64_t isz = LayerInputSize(c, l);
    for (int64_t d = 0; d < c.dirs; ++d) {
      const RnnWeightOffsets w = WeightOffsets(c, l, d);
      const CellBlock<A> blk = CellBlockAt(c, reserve, l, d);
      const int64_t ld = l * c.dirs + d;
      dev.Gemm(x, in.w + w.wx, gx_all, t_max * n, gh, isz, false, true, false);
      for (int64_t s = 0; s < t_max; ++s) {
        const int64_t t = StepTime(c, d, s);
        const internal::PrevState<A> prev = PrevStateAt(c, in, blk, ld, d, s);
        dev.Gemm(prev.h, in.w + w.wh, gh_step, n, gh, hs, false, true, false);
        RnnStep<A> st;
        static_cast<RnnStepInfo<A>&>(st) = StepInfo<A>(c, in, t);
        st.gx = gx_all + t * n * gh;
        st.gh = gh_step;
        st.bx = in.w + w.bx;
        st.bh = in.w + w.bh;
        st.h_prev = prev.h;
        st.c_prev = prev.c;
        st.gates = blk.gates + t * n * 4 * hs;
        st.h = blk.h + t * nh;
        st.c = blk.c != nullptr ? blk.c + t * nh : nullptr;
        st.y = out + t * n * out_cols + d * hs;
        st.y_stride = out_cols;
        dev.StepForward(st);
      }
      // The final state: after the last step (the initial one if T = 0).
      const internal::PrevState<A> last = PrevStateAt(c, in, blk, ld, d, t_max);
      if (hy != nullptr) dev.Copy(hy + ld * nh, last.h, nh);
      if (cy != nullptr && last.c != nullptr)
        dev.Copy(cy + ld * nh, last.c, nh);
    }
    if (l < c.layers - 1 && c.dropout > 0) {
      A* mask = DropoutMaskAt(c, reserve, l);
      const int64_t count = RnnLayerOutputCount<int64_t>(c);
      if (train) {
        dev.DropoutMask(mask, count, c.dropout);
      } else {
        dev.Fill(mask, count, A(1));
      }
      dev.Multiply(out, mask, count);
    }
  }
}

template <typename A>
struct RnnGrads {
  const A* dy;   // (T, N, D*H)
  const A* dhy;  // (L*D, N, H) or null (zero).
  const A* dcy;  // (L*D, N, H) or null (zero).
  A* dx;         // (T, N, I)
  A* dw;         // The parameter vector's gradient.
  A* dhx;        // (L*D, N, H)
  A* dcx;        // (L*D, N, H), LSTM only.
};

// Backpropagation through time from the reserve RnnForward wrote: every
// gradient in `g` is written (not accumulated). scratch holds
// RnnBackwardScratchCount elements.
template <typename A, typename Dev>
void RnnBackward(Dev& dev, const RnnConfig& c, const RnnInputs<A>& in,
                 const A* reserve, const RnnGrads<A>& g, A* scratch) {
  using internal::PrevStateAt;
  using internal::StepInfo;
  using internal::StepTime;
  const int64_t t_max = c.seq_len, n = c.batch, hs = c.state_size;
  const int64_t gh = GateCount(c.mode) * hs, nh = n * hs, tn = t_max * n;
  const int64_t out_cols = c.dirs * hs;
  const bool lstm = c.mode == RnnMode::kLstm;
  A* dgx_all = scratch;
  A* dgh_all = dgx_all + tn * gh;
  A* dh = dgh_all + tn * gh;
  A* dc = dh + nh;
  A* ones = dc + nh;
  A* layer_grads[2] = {ones + tn, ones + tn + RnnLayerOutputCount<int64_t>(c)};
  dev.Fill(g.dw, RnnParamCount<int64_t>(c), A(0));
  dev.Fill(ones, tn, A(1));
  const A* dy = g.dy;
  for (int64_t l = c.layers - 1; l >= 0; --l) {
    const int64_t isz = LayerInputSize(c, l);
    const A* x = l == 0 ? in.x : LayerOutputAt(c, reserve, l - 1);
    A* dx = l == 0 ? g.dx : layer_grads[l % 2];
    for (int64_t d = 0; d < c.dirs; ++d) {
      const RnnWeightOffsets w = WeightOffsets(c, l, d);
      const CellBlock<const A> blk = CellBlockAt(c, reserve, l, d);
      const int64_t ld = l * c.dirs + d;
      if (g.dhy != nullptr) {
        dev.Copy(dh, g.dhy + ld * nh, nh);
      } else {
        dev.Fill(dh, nh, A(0));
      }
      if (lstm && g.dcy != nullptr) {
        dev.Copy(dc, g.dcy + ld * nh, nh);
      } else {
        dev.Fill(dc, nh, A(0));
      }
      for (int64_t s = t_max - 1; s >= 0; --s) {
        const int64_t t = StepTime(c, d, s);
        const internal::PrevState<A> prev = PrevStateAt(c, in, blk, ld, d, s);
        RnnStepGrad<A> sg;
        static_cast<RnnStepInfo<A>&>(sg) = StepInfo<A>(c, in, t);
        sg.gates = blk.gates + t * n * 4 * hs;
        sg.h = blk.h + t * nh;
        sg.c = blk.c != nullptr ? blk.c + t * nh : nullptr;
        sg.h_prev = prev.h;
        sg.c_prev = prev.c;
        sg.dy = dy + t * n * out_cols + d * hs;
        sg.dy_stride = out_cols;
        sg.dh = dh;
        sg.dc = dc;
        sg.dgx = dgx_all + t * n * gh;
        sg.dgh = dgh_all + t * n * gh;
        dev.StepBackward(sg);
        dev.Gemm(sg.dgh, in.w + w.wh, dh, n, hs, gh, false, false, true);
      }
      dev.Copy(g.dhx + ld * nh, dh, nh);
      if (lstm) dev.Copy(g.dcx + ld * nh, dc, nh);
      if (tn == 0) continue;
      // Weight gradients: sums over all steps of gate gradient x input.
      dev.Gemm(dgx_all, x, g.dw + w.wx, gh, isz, tn, true, false, true);
      // Wh pairs each step with the state it started from: the previous
      // step's (one product over T - 1 steps) or the initial state.
      const A* hx = in.hx + ld * nh;
      const int64_t later = d == 0 ? 1 : 0;  // First step with a stored h'.
      const int64_t stored = d == 0 ? 0 : 1;
      if (t_max > 1) {
        dev.Gemm(dgh_all + later * n * gh, blk.h + stored * nh, g.dw + w.wh, gh,
                 hs, (t_max - 1) * n, true, false, true);
      }
      const int64_t first = StepTime(c, d, 0);
      dev.Gemm(dgh_all + first * n * gh, hx, g.dw + w.wh, gh, hs, n, true,
               false, true);
      dev.Gemm(ones, dgx_all, g.dw + w.bx, 1, gh, tn, false, false, true);
      dev.Gemm(ones, dgh_all, g.dw + w.bh, 1, gh, tn, false, false, true);
      dev.Gemm(dgx_all, in.w + w.wx, dx, tn, isz, gh, false, false, d > 0);
    }
    if (l > 0) {
      if (c.dropout > 0) {
        dev.Multiply(dx, DropoutMaskAt(c, reserve, l - 1),
                     RnnLayerOutputCount<int64_t>(c));
      }
      dy = dx;
    }
  }
}

}  // namespace mx_rnn

#endif  // MXCORE_BACKENDS_COMMON_RNN_DRIVER_H_
