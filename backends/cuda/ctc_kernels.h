// Launchers of CTCLoss and its gradient (ctc_kernels.cu): one thread block
// per sequence runs the forward-backward recursions of
// backends/common/ctc_math.h in double over its frames. Return the launch
// status; never throw.
#ifndef MXCORE_BACKENDS_CUDA_CTC_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_CTC_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mx_cuda {

// One sequence: its frame count and labels[offset, offset + num_labels)
// of the packed label array (checked on the host).
struct CtcSequence {
  int64_t frames = 0, label_offset = 0, num_labels = 0;
};

// A launch covers sequences [first, first + count) of the n.
struct CtcBatch {
  int64_t t_max = 0, n = 0, classes = 0, blank = 0;
  int64_t max_states = 1;  // The largest 2L + 1.
  int64_t first = 0, count = 0;
};

// Scratch for the log-softmax and the alpha and beta lattices of `count`
// sequences.
size_t CtcScratchBytes(const CtcBatch& b);

// data x (t_max, n, classes) -> loss (n) and grad (t_max, n, classes), each
// as its request says (grad skipped for MX_REQ_NULL), for the launch's
// sequences. `seqs` (n) and `labels` are device arrays.
cudaError_t LaunchCtcLoss(int dtype, const CtcBatch& b, const CtcSequence* seqs,
                          const int64_t* labels, const void* x, void* loss,
                          int req_loss, void* grad, int req_grad, void* scratch,
                          cudaStream_t stream);

// dx (t_max, n, classes) (+)= og[n] * grad.
cudaError_t LaunchCtcLossBackward(int dtype, int64_t total, int64_t n,
                                  int64_t classes, const void* og,
                                  const void* grad, void* dx, int req,
                                  cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_CTC_KERNELS_H_
