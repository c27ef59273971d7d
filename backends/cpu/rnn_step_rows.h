// The RNN step of backends/common/rnn_cell.h for float32, forward and
// backward, over whole rows with Eigen's vectorized exp and tanh. The
// per-unit step calls libm's scalar expf/tanhf five times per LSTM unit
// forward (~40% of a CPU LSTM's inference time) and once backward; the
// results here are the per-unit step's up to float rounding (Eigen's
// float tanh is within a few ulps of libm's).
// float64 keeps the per-unit step, the reference this one is tested
// against (backends/cpu/rnn_grad_test.cc).
//
//   ParallelFor(s.n, rows_per_chunk, [&](int64_t b, int64_t e) {
//     cpu::RnnStepForwardRows(s, b, e);
//   });
#ifndef MXCORE_BACKENDS_CPU_RNN_STEP_ROWS_H_
#define MXCORE_BACKENDS_CPU_RNN_STEP_ROWS_H_

#include <cstdint>

#include "backends/common/rnn_cell.h"

namespace mx {
namespace cpu {

// Runs step `s` for the sequences (rows) [row_begin, row_end).
void RnnStepForwardRows(const mx_rnn::RnnStep<float>& s, int64_t row_begin,
                        int64_t row_end);

// The backward of step `s` for the rows [row_begin, row_end).
void RnnStepBackwardRows(const mx_rnn::RnnStepGrad<float>& s, int64_t row_begin,
                         int64_t row_end);

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_RNN_STEP_ROWS_H_
