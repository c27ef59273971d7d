// RNN and _backward_RNN on the GPU: the CPU kernel's layer driver
// (backends/common/rnn_driver.h) over cuBLAS products and the step kernels
// of rnn_kernels.cu, so both devices run the same steps in the same order
// with the same reserve layout. float16 data runs in float32 (converted
// in the workspace), as on the CPU. Sequence lengths are read back and
// checked on the host (one stream synchronize), as CTCLoss's are.
#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "backends/common/rnn_driver.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/nn_kernels.h"
#include "backends/cuda/rnn_kernels.h"

namespace mx_cuda {
namespace {

using mx_rnn::RnnConfig;
using mx_rnn::RnnMode;
using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

struct RnnAttrs {
  RnnConfig config;
  bool state_outputs = false;
  bool use_lengths = false;
  int visible = 1;  // Visible outputs: out[, hy[, cy]].
};

// The attributes (checked by the op's shape inference already; read
// defensively) with the extents of data (T, N, I).
RnnAttrs ParseRnn(const std::string& op, const Attrs& attrs, const Tensor& x) {
  RnnAttrs a;
  RnnConfig& c = a.config;
  const std::string mode = attrs.Get("mode", "");
  if (mode == "rnn_relu") {
    c.mode = RnnMode::kRelu;
  } else if (mode == "rnn_tanh") {
    c.mode = RnnMode::kTanh;
  } else if (mode == "lstm") {
    c.mode = RnnMode::kLstm;
  } else if (mode == "gru") {
    c.mode = RnnMode::kGru;
  } else {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": mode=\"" + mode +
                                                "\" is not rnn_relu, rnn_tanh, "
                                                "lstm or gru");
  }
  c.layers = static_cast<int64_t>(NumberAttr(op, attrs, "num_layers", 0));
  c.state_size = static_cast<int64_t>(NumberAttr(op, attrs, "state_size", 0));
  c.dirs = FlagAttr(op, attrs, "bidirectional", "False") ? 2 : 1;
  c.dropout = NumberAttr(op, attrs, "p", 0);
  if (c.layers < 1 || c.state_size < 1 || !(c.dropout >= 0 && c.dropout <= 1)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": needs num_layers and state_size >= 1, p in [0, 1]");
  }
  if (NumberAttr(op, attrs, "projection_size", -1) != -1) {
    throw Error(MX_STATUS_NOT_IMPLEMENTED,
                op + ": projection_size (LSTMP) is not implemented");
  }
  const double lo = NumberAttr(op, attrs, "lstm_state_clip_min", NAN);
  const double hi = NumberAttr(op, attrs, "lstm_state_clip_max", NAN);
  c.clip = !std::isnan(lo);
  if (c.clip != !std::isnan(hi) || (c.clip && !(lo <= hi))) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": lstm_state_clip_min and lstm_state_clip_max go "
                     "together, with min <= max");
  }
  c.clip_min = c.clip ? lo : 0;
  c.clip_max = c.clip ? hi : 0;
  c.clip_nan = FlagAttr(op, attrs, "lstm_state_clip_nan", "False");
  a.state_outputs = FlagAttr(op, attrs, "state_outputs", "False");
  a.use_lengths = FlagAttr(op, attrs, "use_sequence_length", "False");
  a.visible = a.state_outputs ? (c.mode == RnnMode::kLstm ? 3 : 2) : 1;
  if (x.ndim() != 3) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": data must be (T, N, I)");
  }
  c.seq_len = x.dim(0);
  c.batch = x.dim(1);
  c.input_size = x.dim(2);
  // cuBLAS takes int extents.
  const int64_t gh = mx_rnn::GateCount(c.mode) * c.state_size;
  if (c.seq_len * c.batch > INT_MAX || gh > INT_MAX || c.input_size > INT_MAX ||
      c.dirs * c.state_size > INT_MAX) {
    Unsupported(op, "an extent over 2^31 - 1");
  }
  return a;
}

// The forward inputs (data, parameters, state[, state_cell]) in[first..]
// checked against the config.
void CheckInputs(const std::string& op, const RnnConfig& c, Tensors in,
                 int first) {
  const int64_t states = c.layers * c.dirs;
  const bool lstm = c.mode == RnnMode::kLstm;
  if (in[first + 1].size() != mx_rnn::RnnParamCount<int64_t>(c)) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": parameters has the wrong number of elements");
  }
  for (int i = 2; i < (lstm ? 4 : 3); ++i) {
    const Tensor& st = in[first + i];
    if (st.ndim() != 3 || st.dim(0) != states || st.dim(1) != c.batch ||
        st.dim(2) != c.state_size) {
      throw Error(MX_STATUS_SHAPE_ERROR,
                  op + ": states must be (layers * directions, N, H)");
    }
  }
}

// The driver's device: cuBLAS products and the plugin's kernels on the
// kernel's stream, arithmetic type A (dtype `dt`).
template <typename A>
struct GpuRnnDevice {
  const std::string& op;
  const KernelContext& ctx;
  cudaStream_t s;
  int dt;

  void Gemm(const A* a, const A* b, A* c, int64_t m, int64_t n, int64_t k,
            bool ta, bool tb, bool accumulate) {
    mx_cuda::Gemm(op, ctx, dt, ta, tb, m, n, k, a, b, c, accumulate);
  }
  void Fill(A* p, int64_t n, A value) {
    CheckLaunch(op, LaunchFill(dt, n, static_cast<double>(value), p, s), dt);
  }
  void Copy(A* dst, const A* src, int64_t n) {
    if (n == 0) return;
    CheckCuda(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * sizeof(A),
                              cudaMemcpyDeviceToDevice, s),
              op);
  }
  void Multiply(A* x, const A* m, int64_t n) {
    CheckLaunch(
        op,
        LaunchBinary(Binary::kMul, dt, n, x, m, x, MX_REQ_WRITE, nullptr, s),
        dt);
  }
  void DropoutMask(A* mask, int64_t n, double p) {
    CheckLaunch(op, LaunchDropoutMask(dt, n, p, ctx.RandomU64(), mask, s), dt);
  }
  void StepForward(const mx_rnn::RnnStep<A>& st) {
    CheckLaunch(op, LaunchRnnStepForward(st, s), dt);
  }
  void StepBackward(const mx_rnn::RnnStepGrad<A>& st) {
    CheckLaunch(op, LaunchRnnStepBackward(st, s), dt);
  }
};

// An input in the arithmetic type: the tensor itself, or converted into
// `buf` (null while counting).
template <typename A>
const A* AccInput(const std::string& op, cudaStream_t s, int acc,
                  const Tensor& t, A* buf) {
  if (t.dtype() == acc) return t.data<A>();
  if (buf != nullptr) {
    CheckLaunch(op,
                LaunchCast(t.dtype(), acc, t.size(), t.data<void>(), buf, s),
                t.dtype());
  }
  return buf;
}

// Whether the driver can write output `t` directly (its dtype, a write).
bool Direct(const Tensor& t, int acc, int32_t req) {
  return t.dtype() == acc && req == MX_REQ_WRITE;
}

// Stores an A result into `out` as `req` says, through `cast` (out's
// dtype, out.size() elements) when the dtypes differ.
template <typename A>
void StoreOutput(const std::string& op, cudaStream_t s, int acc, const A* src,
                 const Tensor& out, int32_t req, void* cast) {
  if (req == MX_REQ_NULL || src == out.data<A>()) return;
  const void* from = src;
  if (out.dtype() != acc) {
    CheckLaunch(op, LaunchCast(acc, out.dtype(), out.size(), src, cast, s),
                acc);
    from = cast;
  }
  CheckLaunch(op,
              LaunchUnary(Unary::kIdentity, out.dtype(), out.size(), from,
                          out.data<void>(), req, s),
              out.dtype());
}

// Checked sequence lengths, read back from the device.
std::vector<int64_t> LengthsOf(const std::string& op, const KernelContext& ctx,
                               const RnnConfig& c, const Tensor& t) {
  if (t.size() != c.batch) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": sequence_length must be (N,)");
  }
  const std::vector<double> v = HostDoubles(op, ctx, t);
  std::vector<int64_t> lengths(v.size());
  const std::string error =
      mx_rnn::RnnLengths(v.data(), c.batch, c.seq_len, lengths.data());
  if (!error.empty())
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": " + error);
  return lengths;
}

// The forward inputs in the arithmetic type, carved from one workspace
// with the kernel's other buffers.
template <typename A>
struct StagedInputs {
  A* casts[4] = {};
  int64_t* lengths = nullptr;
  mx_rnn::RnnInputs<A> view{};

  void Carve(ScratchCarver& sc, int acc, const RnnAttrs& a, Tensors in,
             int first) {
    const int count = a.config.mode == RnnMode::kLstm ? 4 : 3;
    for (int i = 0; i < count; ++i) {
      const Tensor& t = in[first + i];
      casts[i] = t.dtype() == acc ? nullptr : sc.Take<A>(t.size());
    }
    if (a.use_lengths) lengths = sc.Take<int64_t>(a.config.batch);
  }
  void Stage(const std::string& op, cudaStream_t s, int acc, const RnnAttrs& a,
             Tensors in, int first, const std::vector<int64_t>& host_lengths) {
    const bool lstm = a.config.mode == RnnMode::kLstm;
    view.x = AccInput(op, s, acc, in[first], casts[0]);
    view.w = AccInput(op, s, acc, in[first + 1], casts[1]);
    view.hx = AccInput(op, s, acc, in[first + 2], casts[2]);
    view.cx = lstm ? AccInput(op, s, acc, in[first + 3], casts[3]) : nullptr;
    if (a.use_lengths && !host_lengths.empty()) {
      // From pageable memory: staged before cudaMemcpyAsync returns.
      CheckCuda(cudaMemcpyAsync(lengths, host_lengths.data(),
                                host_lengths.size() * sizeof(int64_t),
                                cudaMemcpyHostToDevice, s),
                op);
    }
    view.lengths = a.use_lengths ? lengths : nullptr;
  }
};

// A result buffer: the output itself when direct, else carved (with a
// cast buffer when the dtypes differ).
template <typename A>
struct Result {
  A* data = nullptr;
  void* cast = nullptr;

  void Carve(ScratchCarver& sc, int acc, const Tensor& out, int32_t req) {
    if (Direct(out, acc, req)) {
      data = out.data<A>();
      return;
    }
    data = sc.Take<A>(out.size());
    if (out.dtype() != acc) cast = sc.Take<char>(ByteSize(out));
  }
};

template <typename A>
void RnnForwardOn(const std::string& op, const KernelContext& ctx, int acc,
                  const RnnAttrs& a, Tensors in, const int32_t* req,
                  Tensors out) {
  const RnnConfig& c = a.config;
  cudaStream_t s = StreamOf(ctx);
  const int lengths_input = c.mode == RnnMode::kLstm ? 4 : 3;
  const std::vector<int64_t> host_lengths =
      a.use_lengths ? LengthsOf(op, ctx, c, in[lengths_input])
                    : std::vector<int64_t>();
  const Tensor& reserve_out = out[a.visible];
  if (reserve_out.dtype() != acc ||
      reserve_out.size() != mx_rnn::RnnReserveCount<int64_t>(c)) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": the reserve output is wrong");
  }
  StagedInputs<A> inputs;
  Result<A> results[4];  // out[, hy[, cy]], then the reserve.
  A* scratch = nullptr;
  const auto carve = [&](ScratchCarver& sc) {
    inputs.Carve(sc, acc, a, in, 0);
    for (int i = 0; i <= a.visible; ++i) {
      results[i].Carve(sc, acc, out[i], req[i]);
    }
    scratch = sc.Take<A>(mx_rnn::RnnForwardScratchCount(c));
  };
  CarveWorkspace(ctx, carve);
  inputs.Stage(op, s, acc, a, in, 0, host_lengths);
  GpuRnnDevice<A> dev{op, ctx, s, acc};
  mx_rnn::RnnForward<A>(dev, c, inputs.view, results[0].data,
                        a.visible > 1 ? results[1].data : nullptr,
                        a.visible > 2 ? results[2].data : nullptr,
                        results[a.visible].data, scratch, ctx.is_train());
  for (int i = 0; i <= a.visible; ++i) {
    StoreOutput(op, s, acc, results[i].data, out[i], req[i], results[i].cast);
  }
}

// The arithmetic type's dtype: float32 for float16 data.
int AccDtype(int dtype) {
  return dtype == MX_DTYPE_FLOAT16 ? MX_DTYPE_FLOAT32 : dtype;
}

// (data, parameters, state[, state_cell][, sequence_length]) ->
// (out[, hy[, cy]], reserve).
void Rnn(const KernelContext& ctx, const Attrs& attrs, Tensors in,
         const int32_t* req, Tensors out) {
  const std::string op = "RNN";
  RequireFloat(op, in[0]);
  const RnnAttrs a = ParseRnn(op, attrs, in[0]);
  CheckInputs(op, a.config, in, 0);
  const int acc = AccDtype(in[0].dtype());
  if (acc == MX_DTYPE_FLOAT64) {
    RnnForwardOn<double>(op, ctx, acc, a, in, req, out);
  } else {
    RnnForwardOn<float>(op, ctx, acc, a, in, req, out);
  }
}

template <typename A>
void RnnBackwardOn(const std::string& op, const KernelContext& ctx, int acc,
                   const RnnAttrs& a, Tensors in, const int32_t* req,
                   Tensors out) {
  const RnnConfig& c = a.config;
  const bool lstm = c.mode == RnnMode::kLstm;
  cudaStream_t s = StreamOf(ctx);
  const int heads = a.visible;
  const int lengths_input = heads + (lstm ? 4 : 3);
  const std::vector<int64_t> host_lengths =
      a.use_lengths ? LengthsOf(op, ctx, c, in[lengths_input])
                    : std::vector<int64_t>();
  const Tensor& reserve = in[lengths_input + (a.use_lengths ? 1 : 0)];
  if (reserve.dtype() != acc ||
      reserve.size() != mx_rnn::RnnReserveCount<int64_t>(c)) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": the reserve input is wrong");
  }
  StagedInputs<A> inputs;
  A* head_casts[3] = {};
  Result<A> results[4];
  A* scratch = nullptr;
  const int grads = lstm ? 4 : 3;
  const auto carve = [&](ScratchCarver& sc) {
    inputs.Carve(sc, acc, a, in, heads);
    for (int i = 0; i < heads; ++i) {
      head_casts[i] = in[i].dtype() == acc ? nullptr : sc.Take<A>(in[i].size());
    }
    // Every gradient is computed (the driver writes them all).
    for (int i = 0; i < grads; ++i) {
      results[i].Carve(sc, acc, out[i],
                       req[i] == MX_REQ_NULL ? MX_REQ_ADD : req[i]);
    }
    scratch = sc.Take<A>(mx_rnn::RnnBackwardScratchCount(c));
  };
  CarveWorkspace(ctx, carve);
  inputs.Stage(op, s, acc, a, in, heads, host_lengths);
  mx_rnn::RnnGrads<A> g{};
  g.dy = AccInput(op, s, acc, in[0], head_casts[0]);
  if (heads > 1) g.dhy = AccInput(op, s, acc, in[1], head_casts[1]);
  if (heads > 2) g.dcy = AccInput(op, s, acc, in[2], head_casts[2]);
  g.dx = results[0].data;
  g.dw = results[1].data;
  g.dhx = results[2].data;
  g.dcx = lstm ? results[3].data : nullptr;
  GpuRnnDevice<A> dev{op, ctx, s, acc};
  mx_rnn::RnnBackward<A>(dev, c, inputs.view, reserve.data<A>(), g, scratch);
  for (int i = 0; i < grads; ++i) {
    StoreOutput(op, s, acc, results[i].data, out[i], req[i], results[i].cast);
  }
}

// (dy[, dhy[, dcy]], data, parameters, state[, state_cell]
// [, sequence_length], reserve) -> gradients of data, parameters,
// state[, state_cell].
void RnnBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "_backward_RNN";
  RequireFloat(op, out[0]);
  const RnnAttrs a = ParseRnn(op, attrs, out[0]);
  CheckInputs(op, a.config, in, a.visible);
  const int acc = AccDtype(out[0].dtype());
  if (acc == MX_DTYPE_FLOAT64) {
    RnnBackwardOn<double>(op, ctx, acc, a, in, req, out);
  } else {
    RnnBackwardOn<float>(op, ctx, acc, a, in, req, out);
  }
}

}  // namespace

void RegisterRnnOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "RNN", Rnn);
  RegisterGpuKernel(plugin, "_backward_RNN", RnnBackward);
}

}  // namespace mx_cuda
