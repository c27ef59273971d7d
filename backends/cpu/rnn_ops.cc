// RNN (MXNet's fused recurrent layers, `rnn` / `_npx_rnn`): vanilla
// (rnn_relu, rnn_tanh), LSTM and GRU cells over data (T, N, I), num_layers
// deep, optionally bidirectional, with dropout p between layers in
// training, sequence lengths, and LSTM cell clipping; the parameters are
// MXNet's packed vector (backends/common/rnn_driver.h). Outputs: out
// (T, N, D*H), with state_outputs the final states hy (and cy for LSTM),
// and a hidden reserve (the saved gates and states, float32 for float16
// data) from which _backward_RNN backpropagates through time. The work is
// rnn_driver.h's, shared with the CUDA plugin; arithmetic is in float for
// float16 data. projection_size (LSTMP; cuDNN-only in MXNet) is
// NotImplemented.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/rnn_driver.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/random_draws.h"
#include "backends/cpu/rnn_step_rows.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

using mx_rnn::RnnConfig;
using mx_rnn::RnnMode;

struct RNNParam {
  int64_t state_size = 0;
  int64_t num_layers = 0;
  bool bidirectional = false;
  std::string mode;
  double p = 0;
  bool state_outputs = false;
  std::optional<int64_t> projection_size;
  std::optional<double> lstm_state_clip_min;
  std::optional<double> lstm_state_clip_max;
  bool lstm_state_clip_nan = false;
  bool use_sequence_length = false;
  static void Declare(ParamSchema<RNNParam>* s) {
    s->Field("state_size", &RNNParam::state_size)
        .Required()
        .Describe("Hidden units H per layer and direction.");
    s->Field("num_layers", &RNNParam::num_layers).Required();
    s->Field("bidirectional", &RNNParam::bidirectional);
    s->Field("mode", &RNNParam::mode)
        .Required()
        .Choices({"rnn_relu", "rnn_tanh", "lstm", "gru"});
    s->Field("p", &RNNParam::p)
        .Describe("Dropout on each layer's output but the last, training.");
    s->Field("state_outputs", &RNNParam::state_outputs)
        .Describe("Also output the final states.");
    s->Field("projection_size", &RNNParam::projection_size)
        .Describe("LSTMP: not implemented.");
    s->Field("lstm_state_clip_min", &RNNParam::lstm_state_clip_min);
    s->Field("lstm_state_clip_max", &RNNParam::lstm_state_clip_max);
    s->Field("lstm_state_clip_nan", &RNNParam::lstm_state_clip_nan)
        .Describe("Clipping turns NaN cell states into clip_min.");
    s->Field("use_sequence_length", &RNNParam::use_sequence_length)
        .Describe("Input sequence_length (N,) gives each sequence's steps.");
  }
};

// Any element count above this (parameters, reserve) is refused: a small
// graph file must not ask for terabytes through state_size.
constexpr double kMaxRnnElements = 0x1p34;

bool IsLstm(const RNNParam& p) { return p.mode == "lstm"; }

int NumVisibleOutputs(const NodeAttrs& attrs) {
  const RNNParam& p = attrs.get<RNNParam>();
  return p.state_outputs ? (IsLstm(p) ? 3 : 2) : 1;
}

std::vector<std::string> InputNames(const NodeAttrs& attrs) {
  const RNNParam& p = attrs.get<RNNParam>();
  std::vector<std::string> names = {"data", "parameters", "state"};
  if (IsLstm(p)) names.push_back("state_cell");
  if (p.use_sequence_length) names.push_back("sequence_length");
  return names;
}

// The attributes checked and turned into the driver's config (extents from
// data's shape; 0 where unknown).
RnnConfig ConfigOf(const NodeAttrs& attrs, const TShape& data) {
  const RNNParam& p = attrs.get<RNNParam>();
  if (p.state_size < 1 || p.num_layers < 1) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": state_size=", p.state_size,
                     " and num_layers=", p.num_layers, " must be at least 1"));
  }
  if (!(p.p >= 0 && p.p <= 1)) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": p=", p.p, " must be in [0, 1]"));
  }
  if (p.projection_size.has_value()) {
    throw NotImplemented(absl::StrCat(
        OpLabel(attrs), ": projection_size (LSTMP) is not implemented"));
  }
  const bool has_min = p.lstm_state_clip_min.has_value();
  if (has_min != p.lstm_state_clip_max.has_value() || (has_min && !IsLstm(p)) ||
      (has_min && !(*p.lstm_state_clip_min <= *p.lstm_state_clip_max))) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs),
                     ": lstm_state_clip_min and lstm_state_clip_max go "
                     "together, with mode=lstm and min <= max"));
  }
  RnnConfig c;
  c.mode = p.mode == "rnn_relu"   ? RnnMode::kRelu
           : p.mode == "rnn_tanh" ? RnnMode::kTanh
           : p.mode == "gru"      ? RnnMode::kGru
                                  : RnnMode::kLstm;
  c.layers = p.num_layers;
  c.dirs = p.bidirectional ? 2 : 1;
  c.state_size = p.state_size;
  c.dropout = p.p;
  c.clip = has_min;
  c.clip_nan = p.lstm_state_clip_nan;
  c.clip_min = has_min ? *p.lstm_state_clip_min : 0;
  c.clip_max = has_min ? *p.lstm_state_clip_max : 0;
  if (data.is_known()) {
    c.seq_len = data[0];
    c.batch = data[1];
    c.input_size = data[2];
  }
  const double params = mx_rnn::RnnParamCount<double>(c);
  const double reserve = mx_rnn::RnnReserveCount<double>(c);
  if (params > kMaxRnnElements || reserve > kMaxRnnElements) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": ", params, " parameters and ", reserve,
                     " saved values for data ", data.ToString(),
                     " exceed the bound of 2^34 elements"));
  }
  return c;
}

void RNNShape(const NodeAttrs& attrs, std::vector<TShape>* in,
              std::vector<TShape>* out) {
  const RNNParam& p = attrs.get<RNNParam>();
  const TShape& d = (*in)[0];
  if (d.ndim_known() && d.ndim() != 3) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(), "; (T, N, I) needed"));
  }
  const RnnConfig c = ConfigOf(attrs, d);
  if (!d.is_known()) return;
  const int64_t states = c.layers * c.dirs;
  AssignShape(attrs, in, 1, TShape{mx_rnn::RnnParamCount<int64_t>(c)}, false);
  const TShape state{states, c.batch, c.state_size};
  AssignShape(attrs, in, 2, state, false);
  int next = 3;
  if (IsLstm(p)) AssignShape(attrs, in, next++, state, false);
  if (p.use_sequence_length)
    AssignShape(attrs, in, next, TShape{c.batch}, false);
  AssignShape(attrs, out, 0, TShape{c.seq_len, c.batch, c.dirs * c.state_size},
              true);
  const int visible = NumVisibleOutputs(attrs);
  for (int i = 1; i < visible; ++i) AssignShape(attrs, out, i, state, true);
  AssignShape(attrs, out, visible, TShape{mx_rnn::RnnReserveCount<int64_t>(c)},
              true);
}

// The reserve holds float32 for float16 data, the data's type otherwise.
DType ReserveType(DType d) {
  return d == DType::kFloat16 ? DType::kFloat32 : d;
}

void RNNType(const NodeAttrs& attrs, std::vector<DType>* in,
             std::vector<DType>* out) {
  const RNNParam& p = attrs.get<RNNParam>();
  const DType d = (*in)[0];
  if (d == DType::kUnknown) return;
  RequireFloat(attrs, d);
  const int floats = IsLstm(p) ? 4 : 3;
  for (int i = 1; i < floats; ++i) AssignType(attrs, in, i, d, false);
  if (p.use_sequence_length && (*in)[floats] != DType::kUnknown) {
    RequireIndexType(attrs, (*in)[floats], floats, "sequence_length");
  }
  const int visible = NumVisibleOutputs(attrs);
  for (int i = 0; i < visible; ++i) AssignType(attrs, out, i, d, true);
  AssignType(attrs, out, visible, ReserveType(d), true);
}

// Sequence lengths as int64, each in [0, T] (truncated, as MXNet's casts).
std::vector<int64_t> LengthsOf(const NodeAttrs& attrs, const TBlob& b,
                               int64_t t_max) {
  const std::vector<double> values = DoublesOf(b);
  std::vector<int64_t> lengths(values.size());
  const std::string error =
      mx_rnn::RnnLengths(values.data(), static_cast<int64_t>(values.size()),
                         t_max, lengths.data());
  if (!error.empty()) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", error));
  }
  return lengths;
}

// Rows per ParallelFor chunk: about 1024 units, as the per-unit loop.
int64_t RowsPerChunk(int64_t h_size) {
  return std::max<int64_t>(1, 1024 / std::max<int64_t>(1, h_size));
}

// The driver's device on the CPU: Eigen products and parallel loops.
template <typename A>
struct CpuRnnDevice {
  RandomEngine* rng = nullptr;

  void Gemm(const A* a, const A* b, A* c, int64_t m, int64_t n, int64_t k,
            bool ta, bool tb, bool accumulate) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
      if (!accumulate) std::fill(c, c + m * n, A(0));
      return;
    }
    cpu::Gemm<A>(a, b, c, m, n, k, ta, tb, accumulate);
  }
  void Fill(A* p, int64_t n, A value) { std::fill(p, p + n, value); }
  void Copy(A* dst, const A* src, int64_t n) { std::copy(src, src + n, dst); }
  void Multiply(A* x, const A* m, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] *= m[i];
  }
  // The Dropout op's rule and draws.
  void DropoutMask(A* mask, int64_t n, double p) {
    DrawDropoutMask(*rng, p, mask, n);
  }
  void StepForward(const mx_rnn::RnnStep<A>& s) {
    RunStep(s, RnnStepForwardRows, mx_rnn::RnnStepForwardAt<A>);
  }
  void StepBackward(const mx_rnn::RnnStepGrad<A>& s) {
    RunStep(s, RnnStepBackwardRows, mx_rnn::RnnStepBackwardAt<A>);
  }

 private:
  // float32 by rows with the vectorized step (rnn_step_rows.h), other
  // types unit by unit with rnn_cell.h's.
  template <typename Step, typename Rows, typename Unit>
  static void RunStep(const Step& s, Rows rows, Unit unit) {
    if constexpr (std::is_same_v<A, float>) {
      ParallelFor(s.n, RowsPerChunk(s.h_size),
                  [&](int64_t b, int64_t e) { rows(s, b, e); });
    } else {
      ParallelFor(s.n * s.h_size, 1024, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) unit(s, i);
      });
    }
  }
};

// An input in the arithmetic type: the blob itself, or a converted copy.
template <typename T, typename A>
const A* AccData(const TBlob& b, std::vector<A>* copy) {
  if constexpr (std::is_same_v<T, A>) {
    return b.data<A>();
  } else {
    const T* v = b.data<T>();
    copy->resize(b.Size());
    for (size_t i = 0; i < copy->size(); ++i) (*copy)[i] = static_cast<A>(v[i]);
    return copy->data();
  }
}

// Scratch of n elements from the op's temp space (pooled: no page faults
// from a fresh allocation every call).
template <typename A>
A* Temp(const OpContext& ctx, int64_t n) {
  return ctx.TempSpace<A>(static_cast<size_t>(std::max<int64_t>(1, n)));
}

// Where the driver writes result `out`: the output itself when it has the
// arithmetic type and is written, else temp space (then StoreResult).
template <typename T, typename A>
A* ResultBuffer(const OpContext& ctx, const TBlob& out, OpReqType req) {
  if constexpr (std::is_same_v<T, A>) {
    if (req == OpReqType::kWriteTo) return out.data<A>();
  }
  return Temp<A>(ctx, out.Size());
}

template <typename T, typename A>
void StoreResult(const TBlob& out, OpReqType req, const A* result) {
  if (req == OpReqType::kNullOp ||
      static_cast<const void*>(result) == out.data<T>()) {
    return;
  }
  T* dst = out.data<T>();
  const int64_t n = out.Size();
  for (int64_t i = 0; i < n; ++i) Assign(dst + i, req, result[i]);
}

// The forward inputs (data, parameters, state[, state_cell]
// [, sequence_length]) starting at `in[first]`, in the arithmetic type.
template <typename T, typename A>
struct AccInputs {
  std::vector<A> copies[4];
  std::vector<int64_t> lengths;
  mx_rnn::RnnInputs<A> view{};

  AccInputs(const NodeAttrs& attrs, const RnnConfig& c,
            const std::vector<TBlob>& in, size_t first) {
    const RNNParam& p = attrs.get<RNNParam>();
    view.x = AccData<T, A>(in[first], &copies[0]);
    view.w = AccData<T, A>(in[first + 1], &copies[1]);
    view.hx = AccData<T, A>(in[first + 2], &copies[2]);
    size_t next = first + 3;
    if (IsLstm(p)) view.cx = AccData<T, A>(in[next++], &copies[3]);
    if (p.use_sequence_length) {
      lengths = LengthsOf(attrs, in[next], c.seq_len);
      view.lengths = lengths.data();
    }
  }
};

void RNNCompute(const OpContext& ctx, const NodeAttrs& attrs,
                const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& out) {
  const RnnConfig c = ConfigOf(attrs, in[0].shape);
  const int visible = NumVisibleOutputs(attrs);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const AccInputs<T, A> inputs(attrs, c, in, 0);
    CpuRnnDevice<A> dev;
    if (ctx.is_train && c.dropout > 0) dev.rng = &ctx.random();
    A* results[3] = {};
    for (int i = 0; i < visible; ++i) {
      results[i] = ResultBuffer<T, A>(ctx, out[i], req[i]);
    }
    // The reserve has the arithmetic type (float32 for float16 data).
    A* reserve = ResultBuffer<A, A>(ctx, out[visible], req[visible]);
    mx_rnn::RnnForward<A>(
        dev, c, inputs.view, results[0], results[1], results[2], reserve,
        Temp<A>(ctx, mx_rnn::RnnForwardScratchCount(c)), ctx.is_train);
    for (int i = 0; i < visible; ++i) {
      StoreResult<T>(out[i], req[i], results[i]);
    }
    StoreResult<A>(out[visible], req[visible], reserve);
  });
}

MX_REGISTER_OP(RNN)
    .Describe(
        "MXNet's fused RNN layers (rnn_relu, rnn_tanh, lstm, gru) over "
        "data (T, N, I) with packed parameters; out (T, N, D*H) and, with "
        "state_outputs, the final states.")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return static_cast<int>(InputNames(attrs).size());
    })
    .SetInputNames(InputNames)
    .SetNumOutputs([](const NodeAttrs& attrs) {
      return NumVisibleOutputs(attrs) + 1;
    })
    .SetNumVisibleOutputs(NumVisibleOutputs)
    .SetParams<RNNParam>()
    .SetInferShape(RNNShape)
    .SetInferType(RNNType)
    .SetResourceRequest([](const NodeAttrs&) {
      return std::vector<ResourceRequest>{{ResourceRequest::kTempSpace},
                                          {ResourceRequest::kRandom}};
    })
    .SetCompute(Context::kCPU, RNNCompute)
    .AddAlias("rnn")
    .AddAlias("_npx_rnn");

// Inputs: the head gradients of the visible outputs (dy[, dhy[, dcy]]),
// the forward inputs, the reserve. Outputs: gradients of data,
// parameters, state[, state_cell].
int NumHeads(const NodeAttrs& attrs) { return NumVisibleOutputs(attrs); }

void RNNBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  const size_t heads = static_cast<size_t>(NumHeads(attrs));
  const RnnConfig c = ConfigOf(attrs, in[heads].shape);
  const bool lstm = c.mode == RnnMode::kLstm;
  MX_FLOAT_DTYPE_SWITCH(in[heads].dtype, T, {
    using A = AccType<T>;
    const AccInputs<T, A> inputs(attrs, c, in, heads);
    std::vector<A> dy_copy, dhy_copy, dcy_copy;
    mx_rnn::RnnGrads<A> g{};
    g.dy = AccData<T, A>(in[0], &dy_copy);
    if (heads > 1) g.dhy = AccData<T, A>(in[1], &dhy_copy);
    if (heads > 2) g.dcy = AccData<T, A>(in[2], &dcy_copy);
    A* grads[4] = {};
    for (size_t i = 0; i < out.size(); ++i) {
      grads[i] = ResultBuffer<T, A>(ctx, out[i], req[i]);
    }
    g.dx = grads[0];
    g.dw = grads[1];
    g.dhx = grads[2];
    g.dcx = lstm ? grads[3] : nullptr;
    CpuRnnDevice<A> dev;
    mx_rnn::RnnBackward<A>(dev, c, inputs.view, in.back().data<A>(), g,
                           Temp<A>(ctx, mx_rnn::RnnBackwardScratchCount(c)));
    for (size_t i = 0; i < out.size(); ++i) {
      StoreResult<T>(out[i], req[i], grads[i]);
    }
  });
}

MX_REGISTER_OP(_backward_RNN)
    .Describe("Gradient of RNN: backpropagation through time.")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return NumHeads(attrs) + static_cast<int>(InputNames(attrs).size()) + 1;
    })
    .SetNumOutputs([](const NodeAttrs& attrs) {
      return IsLstm(attrs.get<RNNParam>()) ? 4 : 3;
    })
    .SetParams<RNNParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const size_t heads = static_cast<size_t>(NumHeads(attrs));
      for (size_t i = 0; i < out->size(); ++i) {
        AssignShape(attrs, out, static_cast<int>(i), (*in)[heads + i], true);
      }
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      // The forward's types: head gradients and float inputs in the data's
      // dtype, the reserve in its arithmetic type (the kernel reads it as
      // that: a float16 reserve would be read past its end).
      const int heads = NumHeads(attrs);
      const DType d = (*in)[heads];
      if (d == DType::kUnknown) return;
      RequireFloat(attrs, d);
      for (int i = 0; i < heads; ++i) AssignType(attrs, in, i, d, false);
      const int floats = IsLstm(attrs.get<RNNParam>()) ? 4 : 3;
      for (int i = 1; i < floats; ++i)
        AssignType(attrs, in, heads + i, d, false);
      const int reserve = static_cast<int>(in->size()) - 1;
      if (attrs.get<RNNParam>().use_sequence_length &&
          (*in)[heads + floats] != DType::kUnknown) {
        RequireIndexType(attrs, (*in)[heads + floats], heads + floats,
                         "sequence_length");
      }
      AssignType(attrs, in, reserve, ReserveType(d), false);
      for (size_t i = 0; i < out->size(); ++i) {
        AssignType(attrs, out, static_cast<int>(i), d, true);
      }
    })
    .SetResourceRequest([](const NodeAttrs&) {
      return std::vector<ResourceRequest>{{ResourceRequest::kTempSpace}};
    })
    .SetCompute(Context::kCPU, RNNBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  // sequence_length gets zeros.
  SetGradient("RNN", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const NodeAttrs& attrs = b.n->attrs;
    const int heads = NumHeads(attrs);
    std::vector<NodeEntry> in(g.begin(), g.begin() + heads);
    const int forward_inputs = static_cast<int>(InputNames(attrs).size());
    for (int i = 0; i < forward_inputs; ++i) in.push_back(b.x(i));
    in.push_back(b.y(heads));
    const NodeEntry grad = b.Op("_backward_RNN", in, attrs.dict);
    const size_t outputs = IsLstm(attrs.get<RNNParam>()) ? 4 : 3;
    return WithZeroGradsFrom(b, OutputsOf(grad, outputs), outputs);
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
