#include "backends/cpu/rnn_step_rows.h"

#include <Eigen/Core>

namespace mx {
namespace cpu {
namespace {

using mx_rnn::RnnMode;
using Row = Eigen::Map<Eigen::ArrayXf>;
using ConstRow = Eigen::Map<const Eigen::ArrayXf>;

// 1 / (1 + exp(-x)) with Eigen's vectorized exp, accurate to a few ulps.
// (Eigen's own float logistic is a rational fit whose relative error
// reaches 1e-3 below x = -9.)
template <typename In, typename Out>
void SigmoidInto(const In& x, Out&& out) {
  out = (1.0f + (-x).exp()).inverse();
}

void ActiveRow(const mx_rnn::RnnStep<float>& s, int64_t row) {
  const int64_t hs = s.h_size;
  const int64_t g = mx_rnn::GateCount(s.mode) * hs;
  const ConstRow gx(s.gx + row * g, g), gh(s.gh + row * g, g);
  const ConstRow bx(s.bx, g), bh(s.bh, g);
  const ConstRow h_prev(s.h_prev + row * hs, hs);
  Row h(s.h + row * hs, hs);
  switch (s.mode) {
    case RnnMode::kRelu:
      h = gx + bx + gh + bh;
      h = (h > 0.0f).select(h, 0.0f);  // NaN to 0, as `a > 0 ? a : 0`.
      break;
    case RnnMode::kTanh:
      h = (gx + bx + gh + bh).tanh();
      break;
    case RnnMode::kLstm: {
      Row saved(s.gates + row * 4 * hs, 4 * hs);  // i, f, g, o
      saved = gx + bx + gh + bh;
      for (int k : {0, 1, 3}) {
        SigmoidInto(saved.segment(k * hs, hs), saved.segment(k * hs, hs));
      }
      saved.segment(2 * hs, hs) = saved.segment(2 * hs, hs).tanh();
      const ConstRow c_prev(s.c_prev + row * hs, hs);
      Row c(s.c + row * hs, hs);
      c = saved.segment(hs, hs) * c_prev +
          saved.segment(0, hs) * saved.segment(2 * hs, hs);
      if (s.clip) {
        for (int64_t j = 0; j < hs; ++j) c[j] = mx_rnn::ClipCell(s, c[j]);
      }
      h = saved.segment(3 * hs, hs) * c.tanh();
      break;
    }
    case RnnMode::kGru: {
      Row saved(s.gates + row * 4 * hs, 4 * hs);  // r, z, n, Whn h' + bhn
      const int64_t rz = 2 * hs;
      SigmoidInto(gx.head(rz) + bx.head(rz) + gh.head(rz) + bh.head(rz),
                  saved.head(rz));
      const auto r = saved.segment(0, hs);
      const auto z = saved.segment(hs, hs);
      saved.segment(3 * hs, hs) = gh.segment(rz, hs) + bh.segment(rz, hs);
      saved.segment(2 * hs, hs) = (gx.segment(rz, hs) + bx.segment(rz, hs) +
                                   r * saved.segment(3 * hs, hs))
                                      .tanh();
      h = (1.0f - z) * saved.segment(2 * hs, hs) + z * h_prev;
      break;
    }
  }
  Row(s.y + row * s.y_stride, hs) = h;
}

// The backward of an active row, rnn_cell.h's RnnStepBackwardAt.
void ActiveRowBackward(const mx_rnn::RnnStepGrad<float>& s, int64_t row) {
  const int64_t hs = s.h_size;
  const int64_t g = mx_rnn::GateCount(s.mode) * hs;
  Row dgx(s.dgx + row * g, g), dgh(s.dgh + row * g, g);
  Row dh(s.dh + row * hs, hs);  // The gradient reaching h, in place.
  dh += ConstRow(s.dy + row * s.dy_stride, hs);
  const ConstRow saved(s.gates + row * 4 * hs, 4 * hs);
  switch (s.mode) {
    case RnnMode::kRelu:
    case RnnMode::kTanh: {
      const ConstRow h(s.h + row * hs, hs);
      if (s.mode == RnnMode::kTanh) {
        dgx = dh * (1.0f - h * h);
      } else {
        dgx = (h > 0.0f).select(dh, 0.0f);
      }
      dgh = dgx;
      dh.setZero();
      break;
    }
    case RnnMode::kLstm: {
      const auto in = saved.segment(0, hs), forget = saved.segment(hs, hs);
      const auto cell = saved.segment(2 * hs, hs);
      const auto out = saved.segment(3 * hs, hs);
      const ConstRow c(s.c + row * hs, hs), c_prev(s.c_prev + row * hs, hs);
      Row dc(s.dc + row * hs, hs);        // The gradient reaching c, in place.
      auto tc = dgx.segment(3 * hs, hs);  // tanh(c) until the last block.
      tc = c.tanh();
      dc += dh * out * (1.0f - tc * tc);
      if (s.clip) {  // Clipped cell states pass no gradient back.
        dc = (c > s.clip_min && c < s.clip_max).select(dc, 0.0f);
      }
      dgx.segment(0, hs) = dc * cell * in * (1.0f - in);
      dgx.segment(hs, hs) = dc * c_prev * forget * (1.0f - forget);
      dgx.segment(2 * hs, hs) = dc * in * (1.0f - cell * cell);
      tc = dh * tc * out * (1.0f - out);
      dgh = dgx;
      dc *= forget;
      dh.setZero();
      break;
    }
    case RnnMode::kGru: {
      const auto r = saved.segment(0, hs), z = saved.segment(hs, hs);
      const auto n = saved.segment(2 * hs, hs);
      const auto hn = saved.segment(3 * hs, hs);
      const ConstRow h_prev(s.h_prev + row * hs, hs);
      auto dn = dgx.segment(2 * hs, hs);
      dn = dh * (1.0f - z) * (1.0f - n * n);
      dgx.segment(0, hs) = dn * hn * r * (1.0f - r);
      dgx.segment(hs, hs) = dh * (h_prev - n) * z * (1.0f - z);
      dgh.head(2 * hs) = dgx.head(2 * hs);
      dgh.segment(2 * hs, hs) = dn * r;
      dh *= z;
      break;
    }
  }
}

// Runs `row_step` on the rows of [b, e) whose sequence is active at this
// step, and rnn_cell.h's per-unit `unit_step` on the others (a finished
// sequence carries its state, or its gradients, through).
template <typename Step, typename RowStep, typename UnitStep>
void ForRows(const Step& s, int64_t b, int64_t e, RowStep row_step,
             UnitStep unit_step) {
  for (int64_t row = b; row < e; ++row) {
    if (mx_rnn::Active(s, row)) {
      row_step(s, row);
    } else {
      for (int64_t j = 0; j < s.h_size; ++j) unit_step(s, row * s.h_size + j);
    }
  }
}

}  // namespace

void RnnStepForwardRows(const mx_rnn::RnnStep<float>& s, int64_t row_begin,
                        int64_t row_end) {
  ForRows(s, row_begin, row_end, ActiveRow, mx_rnn::RnnStepForwardAt<float>);
}

void RnnStepBackwardRows(const mx_rnn::RnnStepGrad<float>& s, int64_t row_begin,
                         int64_t row_end) {
  ForRows(s, row_begin, row_end, ActiveRowBackward,
          mx_rnn::RnnStepBackwardAt<float>);
}

}  // namespace cpu
}  // namespace mx
