// GPU kernels for CTCLoss and _backward_CTCLoss (ctc_kernels.cu). Labels
// and lengths are read back to the host and checked with the CPU kernel's
// rules (backends/common/ctc_labels.h), as MXNet's kernel reads them
// back: a CTCLoss call synchronizes its stream once.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/common/ctc_labels.h"
#include "backends/cuda/ctc_kernels.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// (data, label[, data_lengths][, label_lengths]) -> (loss, grad).
void CtcLoss(const KernelContext& ctx, const Attrs& attrs, Tensors in,
             const int32_t* req, Tensors out) {
  const std::string op = "CTCLoss";
  const Tensor &x = in[0], &label = in[1];
  RequireFloat(op, x);
  const bool use_data = FlagAttr(op, attrs, "use_data_lengths", "False");
  const bool use_label = FlagAttr(op, attrs, "use_label_lengths", "False");
  const std::string blank_label = attrs.Get("blank_label", "first");
  if (blank_label != "first" && blank_label != "last") {
    throw Error(
        MX_STATUS_INVALID_ARGUMENT,
        op + ": blank_label=\"" + blank_label + "\" is not first or last");
  }
  if (x.ndim() != 3 || label.ndim() != 2 || label.dim(0) != x.dim(1) ||
      x.dim(2) < 1) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": needs data (T, N, C) and label (N, L)");
  }
  mx_ctc::CtcInput c;
  c.t_max = x.dim(0);
  c.n = x.dim(1);
  c.classes = x.dim(2);
  c.l_max = label.dim(1);
  c.blank_first = blank_label == "first";
  const std::vector<double> labels = HostDoubles(op, ctx, label);
  c.labels = labels.data();
  std::vector<double> lengths[2];
  int next = 2;
  for (int which = 0; which < 2; ++which) {
    if (!(which == 0 ? use_data : use_label)) continue;
    if (in[next].size() != c.n) {
      throw Error(MX_STATUS_SHAPE_ERROR, op + ": lengths must be (N,)");
    }
    lengths[which] = HostDoubles(op, ctx, in[next++]);
    (which == 0 ? c.data_lengths : c.label_lengths) = lengths[which].data();
  }
  mx_ctc::CtcSequences seqs;
  const std::string error = mx_ctc::PackCtcLabels(c, &seqs);
  if (!error.empty()) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": " + error);
  }
  CtcBatch b;
  b.t_max = c.t_max;
  b.n = c.n;
  b.classes = c.classes;
  b.blank = seqs.blank;
  b.max_states = seqs.max_states;
  std::vector<CtcSequence> host_seqs(static_cast<size_t>(c.n));
  for (int64_t i = 0; i < c.n; ++i) {
    host_seqs[i] =
        CtcSequence{seqs.frames[i], seqs.label_offset[i], seqs.num_labels[i]};
  }
  // Sequences, packed labels and the lattices in one workspace, the
  // sequences in groups whose lattices stay under 2 GiB (one sequence's is
  // bounded by the label check). The copies are from pageable memory:
  // staged before cudaMemcpyAsync returns.
  CtcBatch one = b;
  one.count = 1;
  const size_t per_sequence = CtcScratchBytes(one);
  const int64_t group = std::max<int64_t>(
      1, static_cast<int64_t>((size_t{2} << 30) / per_sequence));
  b.count = std::min(group, b.n);
  const size_t seq_bytes = AlignedBytes(host_seqs.size() * sizeof(CtcSequence));
  const size_t label_bytes = AlignedBytes(seqs.labels.size() * sizeof(int64_t));
  char* scratch = static_cast<char*>(
      Workspace(ctx, seq_bytes + label_bytes + CtcScratchBytes(b)));
  cudaStream_t s = StreamOf(ctx);
  auto* dev_seqs = reinterpret_cast<CtcSequence*>(scratch);
  auto* dev_labels = reinterpret_cast<int64_t*>(scratch + seq_bytes);
  if (!host_seqs.empty()) {
    CheckCuda(cudaMemcpyAsync(dev_seqs, host_seqs.data(),
                              host_seqs.size() * sizeof(CtcSequence),
                              cudaMemcpyHostToDevice, s),
              op);
  }
  if (!seqs.labels.empty()) {
    CheckCuda(cudaMemcpyAsync(dev_labels, seqs.labels.data(),
                              seqs.labels.size() * sizeof(int64_t),
                              cudaMemcpyHostToDevice, s),
              op);
  }
  for (b.first = 0; b.first < b.n; b.first += group) {
    b.count = std::min(group, b.n - b.first);
    CheckLaunch(
        op,
        LaunchCtcLoss(x.dtype(), b, dev_seqs, dev_labels, x.data<void>(),
                      out[0].data<void>(), req[0], out[1].data<void>(), req[1],
                      scratch + seq_bytes + label_bytes, s),
        x.dtype());
  }
}

// (out_grad (N,), grad (T, N, C)) -> data_grad.
void CtcLossBackward(const KernelContext& ctx, const Attrs&, Tensors in,
                     const int32_t* req, Tensors out) {
  const std::string op = "_backward_CTCLoss";
  const Tensor &og = in[0], &g = in[1];
  RequireFloat(op, g);
  if (g.ndim() != 3 || og.size() != g.dim(1) || out[0].size() != g.size()) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": needs out_grad (N,) and grad (T, N, C)");
  }
  CheckLaunch(op,
              LaunchCtcLossBackward(g.dtype(), g.size(), g.dim(1), g.dim(2),
                                    og.data<void>(), g.data<void>(),
                                    out[0].data<void>(), req[0], StreamOf(ctx)),
              g.dtype());
}

}  // namespace

void RegisterCtcOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "CTCLoss", CtcLoss);
  RegisterGpuKernel(plugin, "_backward_CTCLoss", CtcLossBackward);
}

}  // namespace mx_cuda
