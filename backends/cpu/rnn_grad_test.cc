// RNN (MXNet's fused recurrent layers) against a plain reference written
// from MXNet's formulas, numerical gradients through time, sequence
// lengths, dropout between layers, LSTM clipping, dtypes and the typed
// errors.
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "imperative/nd.h"
#include "testing/cpu_reference.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

double Sig(double x) { return 1 / (1 + std::exp(-x)); }

struct Spec {
  std::string mode;
  int64_t layers, dirs, t, n, input, hidden;
};

int Gates(const std::string& mode) {
  return mode == "lstm" ? 4 : mode == "gru" ? 3 : 1;
}

int64_t ParamCount(const Spec& s) {
  int64_t total = 0;
  for (int64_t l = 0; l < s.layers; ++l) {
    const int64_t in = l == 0 ? s.input : s.dirs * s.hidden;
    total += s.dirs * Gates(s.mode) * s.hidden * (in + s.hidden + 2);
  }
  return total;
}

struct RefOut {
  std::vector<double> y, hy, cy;
};

// The layers step by step in double, reading the packed parameters with a
// cursor (all Wx, Wh by layer and direction, then all bx, bh); sequence i
// runs lengths[i] steps (T when empty) and outputs 0 after them.
RefOut Reference(const Spec& s, const std::vector<double>& x,
                 const std::vector<double>& w, const std::vector<double>& hx,
                 const std::vector<double>& cx,
                 const std::vector<int64_t>& lengths) {
  const int64_t g = Gates(s.mode), h = s.hidden, n = s.n;
  std::vector<const double*> wx, wh, bx, bh;
  const double* cursor = w.data();
  for (int64_t l = 0; l < s.layers; ++l) {
    const int64_t in = l == 0 ? s.input : s.dirs * h;
    for (int64_t d = 0; d < s.dirs; ++d) {
      wx.push_back(cursor);
      cursor += g * h * in;
      wh.push_back(cursor);
      cursor += g * h * h;
    }
  }
  for (int64_t k = 0; k < s.layers * s.dirs; ++k) {
    bx.push_back(cursor);
    cursor += g * h;
    bh.push_back(cursor);
    cursor += g * h;
  }
  RefOut r;
  r.hy.assign(s.layers * s.dirs * n * h, 0);
  r.cy.assign(s.layers * s.dirs * n * h, 0);
  std::vector<double> input = x;
  int64_t in_size = s.input;
  for (int64_t l = 0; l < s.layers; ++l) {
    std::vector<double> out(s.t * n * s.dirs * h, 0);
    for (int64_t d = 0; d < s.dirs; ++d) {
      const int64_t k = l * s.dirs + d;
      for (int64_t b = 0; b < n; ++b) {
        const int64_t len = lengths.empty() ? s.t : lengths[b];
        std::vector<double> hp(&hx[(k * n + b) * h], &hx[(k * n + b) * h] + h);
        std::vector<double> cp(h, 0);
        if (s.mode == "lstm") {
          cp.assign(&cx[(k * n + b) * h], &cx[(k * n + b) * h] + h);
        }
        for (int64_t step = 0; step < len; ++step) {
          const int64_t t = d == 0 ? step : len - 1 - step;
          const double* xt = &input[(t * n + b) * in_size];
          // a[gate][unit] = Wx x + bx, r[gate][unit] = Wh h + bh.
          std::vector<double> a(g * h), rr(g * h);
          for (int64_t row = 0; row < g * h; ++row) {
            a[row] = bx[k][row];
            for (int64_t c = 0; c < in_size; ++c) {
              a[row] += wx[k][row * in_size + c] * xt[c];
            }
            rr[row] = bh[k][row];
            for (int64_t c = 0; c < h; ++c)
              rr[row] += wh[k][row * h + c] * hp[c];
          }
          std::vector<double> hn(h), cn(h);
          for (int64_t j = 0; j < h; ++j) {
            if (s.mode == "rnn_tanh") {
              hn[j] = std::tanh(a[j] + rr[j]);
            } else if (s.mode == "rnn_relu") {
              hn[j] = std::max(0.0, a[j] + rr[j]);
            } else if (s.mode == "lstm") {
              const double i = Sig(a[j] + rr[j]);
              const double f = Sig(a[h + j] + rr[h + j]);
              const double gg = std::tanh(a[2 * h + j] + rr[2 * h + j]);
              const double o = Sig(a[3 * h + j] + rr[3 * h + j]);
              cn[j] = f * cp[j] + i * gg;
              hn[j] = o * std::tanh(cn[j]);
            } else {
              const double rg = Sig(a[j] + rr[j]);
              const double z = Sig(a[h + j] + rr[h + j]);
              const double nn = std::tanh(a[2 * h + j] + rg * rr[2 * h + j]);
              hn[j] = (1 - z) * nn + z * hp[j];
            }
          }
          hp = hn;
          cp = cn;
          for (int64_t j = 0; j < h; ++j) {
            out[(t * n + b) * s.dirs * h + d * h + j] = hn[j];
          }
        }
        for (int64_t j = 0; j < h; ++j) {
          r.hy[(k * n + b) * h + j] = hp[j];
          r.cy[(k * n + b) * h + j] = cp[j];
        }
      }
    }
    input = out;
    in_size = s.dirs * h;
  }
  r.y = input;
  return r;
}

AttrDict AttrsOf(const Spec& s, bool state_outputs = true) {
  return {{"mode", s.mode},
          {"state_size", std::to_string(s.hidden)},
          {"num_layers", std::to_string(s.layers)},
          {"bidirectional", s.dirs == 2 ? "True" : "False"},
          {"state_outputs", state_outputs ? "True" : "False"}};
}

// data, parameters, state[, state_cell] for `s`, float64.
std::vector<NDArray> InputsOf(const Spec& s, uint32_t seed = 3) {
  const int64_t states = s.layers * s.dirs;
  std::vector<NDArray> in = {
      RandomArray({s.t, s.n, s.input}, DType::kFloat64, -1, 1, seed),
      RandomArray({ParamCount(s)}, DType::kFloat64, -0.6, 0.6, seed + 1),
      RandomArray({states, s.n, s.hidden}, DType::kFloat64, -1, 1, seed + 2)};
  if (s.mode == "lstm") {
    in.push_back(
        RandomArray({states, s.n, s.hidden}, DType::kFloat64, -1, 1, seed + 3));
  }
  return in;
}

const char* const kModes[] = {"rnn_relu", "rnn_tanh", "lstm", "gru"};

TEST(RNN, MatchesTheReferenceInEveryMode) {
  for (const char* mode : kModes) {
    for (const Spec& s :
         {Spec{mode, 1, 1, 4, 3, 5, 4}, Spec{mode, 2, 2, 5, 2, 3, 6},
          Spec{mode, 3, 1, 2, 1, 1, 2}}) {
      SCOPED_TRACE(::testing::Message()
                   << mode << " layers " << s.layers << " dirs " << s.dirs);
      const std::vector<NDArray> in = InputsOf(s);
      const std::vector<NDArray> out = nd::CallMulti("RNN", in, AttrsOf(s));
      // Visible outputs, then the hidden reserve.
      ASSERT_EQ(out.size(), s.mode == "lstm" ? 4u : 3u);
      EXPECT_EQ(out[0].shape(), TShape({s.t, s.n, s.dirs * s.hidden}));
      const RefOut r = Reference(
          s, ToDouble(in[0]), ToDouble(in[1]), ToDouble(in[2]),
          s.mode == "lstm" ? ToDouble(in[3]) : std::vector<double>(), {});
      EXPECT_TRUE(AllClose(ToDouble(out[0]), r.y, 1e-12, 1e-12));
      EXPECT_TRUE(AllClose(ToDouble(out[1]), r.hy, 1e-12, 1e-12));
      if (s.mode == "lstm") {
        EXPECT_TRUE(AllClose(ToDouble(out[2]), r.cy, 1e-12, 1e-12));
      }
    }
  }
}

TEST(RNN, OnlyTheOutputWithoutStateOutputs) {
  const Spec s{"gru", 1, 2, 3, 2, 2, 3};
  const std::vector<NDArray> out =
      nd::CallMulti("rnn", InputsOf(s), AttrsOf(s, false));
  ASSERT_EQ(out.size(), 2u);  // out and the reserve.
  EXPECT_EQ(out[0].shape(), TShape({3, 2, 6}));
}

TEST(RNN, SequenceLengthsStopEachSequence) {
  // Lengths 5, 0, 2, 3: outputs past a length are 0, the final states are
  // those after the last step (the initial ones for length 0), and the
  // reverse direction starts at each sequence's last step.
  for (const char* mode : kModes) {
    SCOPED_TRACE(mode);
    const Spec s{mode, 2, 2, 5, 4, 3, 3};
    std::vector<NDArray> in = InputsOf(s, 9);
    const std::vector<int64_t> lengths = {5, 0, 2, 3};
    in.push_back(ArrayOf({4}, {5, 0, 2, 3}, DType::kInt32));
    AttrDict attrs = AttrsOf(s);
    attrs["use_sequence_length"] = "True";
    const std::vector<NDArray> out = nd::CallMulti("RNN", in, attrs);
    const RefOut r = Reference(
        s, ToDouble(in[0]), ToDouble(in[1]), ToDouble(in[2]),
        s.mode == "lstm" ? ToDouble(in[3]) : std::vector<double>(), lengths);
    EXPECT_TRUE(AllClose(ToDouble(out[0]), r.y, 1e-12, 1e-12));
    EXPECT_TRUE(AllClose(ToDouble(out[1]), r.hy, 1e-12, 1e-12));
    if (s.mode == "lstm") {
      EXPECT_TRUE(AllClose(ToDouble(out[2]), r.cy, 1e-12, 1e-12));
    }
  }
}

TEST(RNNGradient, MatchesNumericalGradientsThroughTime) {
  for (const char* mode : kModes) {
    SCOPED_TRACE(mode);
    const Spec s{mode, 2, 2, 3, 2, 3, 2};
    EXPECT_TRUE(CheckGradient("RNN", AttrsOf(s), InputsOf(s, 21)));
    // Without state outputs only out's gradient flows back.
    EXPECT_TRUE(CheckGradient("RNN", AttrsOf(s, false), InputsOf(s, 31)));
  }
}

TEST(RNNGradient, WithSequenceLengths) {
  for (const char* mode : kModes) {
    SCOPED_TRACE(mode);
    const Spec s{mode, 2, 2, 4, 3, 2, 2};
    std::vector<NDArray> in = InputsOf(s, 41);
    in.push_back(ArrayOf({3}, {2, 4, 1}, DType::kInt32));
    AttrDict attrs = AttrsOf(s);
    attrs["use_sequence_length"] = "True";
    EXPECT_TRUE(CheckGradient("RNN", attrs, in));
  }
}

TEST(RNNGradient, ClippedCellStatesPassNoGradient) {
  const Spec s{"lstm", 1, 1, 4, 3, 2, 3};
  AttrDict attrs = AttrsOf(s);
  attrs["lstm_state_clip_min"] = "-0.25";
  attrs["lstm_state_clip_max"] = "0.3";
  const std::vector<NDArray> in = InputsOf(s, 51);
  const std::vector<NDArray> out = nd::CallMulti("RNN", in, attrs);
  const std::vector<double> cy = ToDouble(out[2]);
  int clipped = 0;
  for (double c : cy) {
    EXPECT_GE(c, -0.25);
    EXPECT_LE(c, 0.3);
    clipped += c == -0.25 || c == 0.3;
  }
  EXPECT_GT(clipped, 0);  // The check below covers both kinds of state.
  EXPECT_TRUE(CheckGradient("RNN", attrs, in));
}

TEST(RNNGradient, DropoutBetweenLayersInTraining) {
  const Spec s{"lstm", 3, 2, 3, 2, 2, 3};
  AttrDict attrs = AttrsOf(s);
  attrs["p"] = "0.5";
  const std::vector<NDArray> in = InputsOf(s, 61);
  GradCheckOptions train;
  train.is_train = true;
  EXPECT_TRUE(CheckGradient("RNN", attrs, in, train));
  // Outside training dropout is the identity.
  const std::vector<NDArray> with_p = nd::CallMulti("RNN", in, attrs);
  const std::vector<NDArray> without = nd::CallMulti("RNN", in, AttrsOf(s));
  EXPECT_TRUE(AllClose(ToDouble(with_p[0]), ToDouble(without[0]), 0, 0));
}

// float32 runs a vectorized step of its own (backends/cpu/rnn_step_rows.h)
// and float16 computes in float32: both follow float64 (which the tests
// above hold to the reference) in every mode, with sequence lengths and
// LSTM clipping, at a hidden size that is no multiple of a vector.
TEST(RNN, Float32AndFloat16FollowFloat64) {
  for (const char* mode : kModes) {
    for (bool lengths : {false, true}) {
      SCOPED_TRACE(std::string(mode) + (lengths ? " with lengths" : ""));
      const Spec s{mode, 2, 2, 4, 3, 5, 13};
      std::vector<NDArray> in = InputsOf(s, 71);
      AttrDict attrs = AttrsOf(s);
      const size_t floats = in.size();
      if (lengths) {
        in.push_back(ArrayOf({3}, {4, 0, 2}, DType::kInt32));
        attrs["use_sequence_length"] = "True";
        if (s.mode == "lstm") {
          attrs["lstm_state_clip_min"] = "-0.4";
          attrs["lstm_state_clip_max"] = "0.5";
        }
      }
      const std::vector<NDArray> want = nd::CallMulti("RNN", in, attrs);
      const size_t visible = s.mode == "lstm" ? 3 : 2;
      for (DType dt : {DType::kFloat32, DType::kFloat16}) {
        std::vector<NDArray> cast = in;
        for (size_t i = 0; i < floats; ++i) {
          cast[i] = nd::Call("Cast", {in[i]}, {{"dtype", DTypeName(dt)}});
        }
        const std::vector<NDArray> got = nd::CallMulti("RNN", cast, attrs);
        const double tol = dt == DType::kFloat32 ? 1e-5 : 5e-3;
        for (size_t k = 0; k < visible; ++k) {
          EXPECT_EQ(got[k].dtype(), dt);
          EXPECT_TRUE(AllClose(ToDouble(got[k]), ToDouble(want[k]), tol, tol))
              << "output " << k << " in " << DTypeName(dt);
        }
      }
    }
  }
}

// The same for the gradients of every input (the vectorized float32
// backward step against float64's per-unit one).
TEST(RNNGradient, Float32FollowsFloat64) {
  for (const char* mode : kModes) {
    for (bool lengths : {false, true}) {
      SCOPED_TRACE(std::string(mode) + (lengths ? " with lengths" : ""));
      const Spec s{mode, 2, 2, 4, 3, 5, 11};
      std::vector<NDArray> in = InputsOf(s, 91);
      AttrDict attrs = AttrsOf(s);
      const size_t floats = in.size();
      if (lengths) {
        in.push_back(ArrayOf({3}, {3, 0, 4}, DType::kInt32));
        attrs["use_sequence_length"] = "True";
        if (s.mode == "lstm") {
          attrs["lstm_state_clip_min"] = "-0.4";
          attrs["lstm_state_clip_max"] = "0.5";
        }
      }
      const int64_t states = s.layers * s.dirs;
      std::vector<NDArray> heads = {
          RandomArray({s.t, s.n, s.dirs * s.hidden}, DType::kFloat64, -1, 1,
                      92),
          RandomArray({states, s.n, s.hidden}, DType::kFloat64, -1, 1, 93)};
      if (s.mode == "lstm") {
        heads.push_back(
            RandomArray({states, s.n, s.hidden}, DType::kFloat64, -1, 1, 94));
      }
      const auto want = Gradients("RNN", attrs, in, heads);
      auto to_float = [](std::vector<NDArray>* arrays, size_t count) {
        for (size_t i = 0; i < count; ++i) {
          (*arrays)[i] =
              nd::Call("Cast", {(*arrays)[i]}, {{"dtype", "float32"}});
        }
      };
      to_float(&in, floats);
      to_float(&heads, heads.size());
      const auto got = Gradients("RNN", attrs, in, heads);
      for (size_t k = 0; k < floats; ++k) {
        EXPECT_TRUE(AllClose(got[k], want[k], 1e-4, 1e-4)) << "input " << k;
      }
    }
  }
}

// A NaN in the data reaches the same outputs in float32 as in float64
// (rnn_relu's max(a, 0) turns it into 0 in both).
TEST(RNN, NaNFollowsFloat64InFloat32) {
  for (const char* mode : kModes) {
    SCOPED_TRACE(mode);
    const Spec s{mode, 1, 2, 3, 2, 3, 9};
    std::vector<NDArray> in = InputsOf(s, 81);
    std::vector<double> x = ToDouble(in[0]);
    x[s.input + 1] = std::nan("");  // Step 0, sequence 1.
    in[0] = ArrayOf({s.t, s.n, s.input}, x, DType::kFloat64);
    const std::vector<double> want =
        ToDouble(nd::CallMulti("RNN", in, AttrsOf(s))[0]);
    for (NDArray& a : in) a = nd::Call("Cast", {a}, {{"dtype", "float32"}});
    const std::vector<double> got =
        ToDouble(nd::CallMulti("RNN", in, AttrsOf(s))[0]);
    int nans = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(std::isnan(got[i]), std::isnan(want[i])) << "at " << i;
      nans += std::isnan(want[i]);
    }
    if (s.mode != "rnn_relu") EXPECT_GT(nans, 0);
  }
}

// The graph MXNet 1.x's Gluon exports for a hybridized rnn.LSTM(3,
// input_size=2): each parameter flattened by Reshape, joined by
// _rnn_param_concat, zero begin states whose batch axis (0) shape
// inference fills, and the RNN node.
TEST(RNN, RunsTheGraphGluonExports) {
  const char* kJson = R"JSON({
    "nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "lstm0_l0_i2h_weight",
       "attrs": {"__dtype__": "0", "__shape__": "(12, 2)"}, "inputs": []},
      {"op": "null", "name": "lstm0_l0_h2h_weight",
       "attrs": {"__dtype__": "0", "__shape__": "(12, 3)"}, "inputs": []},
      {"op": "null", "name": "lstm0_l0_i2h_bias",
       "attrs": {"__dtype__": "0", "__shape__": "(12,)"}, "inputs": []},
      {"op": "null", "name": "lstm0_l0_h2h_bias",
       "attrs": {"__dtype__": "0", "__shape__": "(12,)"}, "inputs": []},
      {"op": "Reshape", "name": "lstm0_reshape0", "attrs": {"shape": "(-1,)"},
       "inputs": [[1, 0, 0]]},
      {"op": "Reshape", "name": "lstm0_reshape1", "attrs": {"shape": "(-1,)"},
       "inputs": [[2, 0, 0]]},
      {"op": "Reshape", "name": "lstm0_reshape2", "attrs": {"shape": "(-1,)"},
       "inputs": [[3, 0, 0]]},
      {"op": "Reshape", "name": "lstm0_reshape3", "attrs": {"shape": "(-1,)"},
       "inputs": [[4, 0, 0]]},
      {"op": "_rnn_param_concat", "name": "lstm0_rnn_param_concat0",
       "attrs": {"dim": "0", "num_args": "4"},
       "inputs": [[5, 0, 0], [6, 0, 0], [7, 0, 0], [8, 0, 0]]},
      {"op": "_zeros", "name": "lstm0_begin_state_0",
       "attrs": {"__layout__": "LNC", "dtype": "float32",
                 "shape": "(1, 0, 3)"}, "inputs": []},
      {"op": "_zeros", "name": "lstm0_begin_state_1",
       "attrs": {"__layout__": "LNC", "dtype": "float32",
                 "shape": "(1, 0, 3)"}, "inputs": []},
      {"op": "RNN", "name": "lstm0_rnn0",
       "attrs": {"bidirectional": "False", "lstm_state_clip_max": "None",
                 "lstm_state_clip_min": "None", "lstm_state_clip_nan": "False",
                 "mode": "lstm", "num_layers": "1", "p": "0.0",
                 "projection_size": "None", "state_outputs": "True",
                 "state_size": "3", "use_sequence_length": "False"},
       "inputs": [[0, 0, 0], [9, 0, 0], [10, 0, 0], [11, 0, 0]]}
    ],
    "arg_nodes": [0, 1, 2, 3, 4],
    "heads": [[12, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10600]}
  })JSON";
  const Symbol net = Symbol::FromJSON(kJson);
  const std::vector<std::string> args = net.ListArguments();
  ASSERT_EQ(args.size(), 5u);
  const std::vector<TShape> shapes = {{4, 2, 2}, {12, 2}, {12, 3}, {12}, {12}};
  std::vector<NDArray> values;
  for (size_t i = 0; i < shapes.size(); ++i) {
    values.push_back(RandomArray(shapes[i], DType::kFloat32, -1, 1, 80 + i));
  }
  auto exec = Executor::Bind(net, Context::CPU(), values, {}, {}, {});
  exec->Forward();
  std::vector<NDArray> flat;
  for (size_t i = 1; i < values.size(); ++i) {
    flat.push_back(nd::reshape(values[i], {-1}));
  }
  const NDArray zeros = nd::zeros({1, 2, 3});
  const NDArray want = nd::CallMulti(
      "RNN", {values[0], nd::concat(flat, 0), zeros, zeros},
      {{"mode", "lstm"}, {"state_size", "3"}, {"num_layers", "1"}})[0];
  EXPECT_TRUE(AllClose(ToDouble(exec->outputs()[0]), ToDouble(want), 0, 0));
}

// (float16 goes through the same Assign; AddToAccumulates compares in
// double, finer than a float16 sum rounds.)
TEST(RNN, AddToAccumulates) {
  const Spec s{"lstm", 2, 2, 3, 2, 3, 2};
  for (DType dt : {DType::kFloat64, DType::kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    std::vector<NDArray> in;
    for (const NDArray& a : InputsOf(s, 91)) {
      in.push_back(nd::Call("Cast", {a}, {{"dtype", DTypeName(dt)}}));
    }
    EXPECT_TRUE(AddToAccumulates("RNN", AttrsOf(s), in));
    // The gradient op: head gradients of out, hy, cy, the forward inputs
    // and the reserve of a forward pass.
    const std::vector<NDArray> fwd = nd::CallMulti("RNN", in, AttrsOf(s));
    std::vector<NDArray> back;
    for (int i = 0; i < 3; ++i) {
      back.push_back(nd::Call(
          "Cast", {RandomArray(fwd[i].shape(), DType::kFloat64, -1, 1, 93 + i)},
          {{"dtype", DTypeName(dt)}}));
    }
    back.insert(back.end(), in.begin(), in.end());
    back.push_back(fwd[3]);
    EXPECT_TRUE(AddToAccumulates("_backward_RNN", AttrsOf(s), back));
  }
}

TEST(RNN, ParameterCountIsMXNets) {
  // GetRnnParamSize: (I + H + 2) * G * H per direction for layer 0, then
  // (D * H + H + 2) * G * H.
  const Spec s{"lstm", 2, 2, 1, 1, 10, 20};
  EXPECT_EQ(ParamCount(s), 2 * 80 * 32 + 2 * 80 * 62);
  ExpectError<ShapeError>(
      [&] {
        std::vector<NDArray> in = InputsOf(s);
        in[1] = RandomArray({ParamCount(s) - 1}, DType::kFloat64);
        nd::CallMulti("RNN", in, AttrsOf(s));
      },
      {"RNN", "parameters"});
}

TEST(RNN, BadInputsAreTypedErrors) {
  const Spec s{"gru", 1, 1, 2, 2, 2, 2};
  const std::vector<NDArray> in = InputsOf(s);
  ExpectError<ShapeError>(
      [&] {
        nd::CallMulti("RNN", {RandomArray({2, 2}), in[1], in[2]}, AttrsOf(s));
      },
      {"RNN", "(T, N, I)"});
  AttrDict proj = AttrsOf(s);
  proj["mode"] = "lstm";
  proj["projection_size"] = "2";
  ExpectError<NotImplemented>(
      [&] {
        nd::CallMulti("RNN", InputsOf({"lstm", 1, 1, 2, 2, 2, 2}), proj);
      },
      {"projection_size"});
  AttrDict half_clip = AttrsOf({"lstm", 1, 1, 2, 2, 2, 2});
  half_clip["lstm_state_clip_min"] = "-1";
  ExpectError<InvalidArgument>(
      [&] {
        nd::CallMulti("RNN", InputsOf({"lstm", 1, 1, 2, 2, 2, 2}), half_clip);
      },
      {"lstm_state_clip_min"});
  AttrDict lengths = AttrsOf(s);
  lengths["use_sequence_length"] = "True";
  ExpectError<InvalidArgument>(
      [&] {
        ToDouble(nd::CallMulti(
            "RNN", {in[0], in[1], in[2], ArrayOf({2}, {1, 3})}, lengths)[0]);
      },
      {"sequence_length[1]=3", "[0, 2]"});
  AttrDict p = AttrsOf(s);
  p["p"] = "1.5";
  ExpectError<InvalidArgument>([&] { nd::CallMulti("RNN", in, p); }, {"p=1.5"});
  // A state_size asking for ~2^62 parameters fails before any allocation.
  AttrDict huge = AttrsOf(s);
  huge["state_size"] = "2000000000";
  ExpectError<InvalidArgument>([&] { nd::CallMulti("RNN", in, huge); },
                               {"2^34"});
  // The gradient op called alone with float16 data and a float16 reserve
  // (RNN's is float32, which the kernel reads): a DTypeError naming the
  // reserve, not a read past its end (the conformance suite's float16
  // cases found it under ASan).
  std::vector<NDArray> half;
  for (const NDArray& a : in) half.push_back(nd::cast(a, DType::kFloat16));
  const std::vector<NDArray> fwd = nd::CallMulti("RNN", half, AttrsOf(s));
  EXPECT_EQ(fwd.back().dtype(), DType::kFloat32);
  std::vector<NDArray> back = {
      nd::cast(RandomArray(fwd[0].shape()), DType::kFloat16),
      nd::cast(RandomArray(fwd[1].shape()), DType::kFloat16)};
  back.insert(back.end(), half.begin(), half.end());
  back.push_back(nd::cast(fwd.back(), DType::kFloat16));
  ExpectError<DTypeError>(
      [&] { nd::CallMulti("_backward_RNN", back, AttrsOf(s)); },
      {"_backward_RNN", "float16", "float32"});
  back.back() = fwd.back();  // The forward's own reserve runs.
  EXPECT_EQ(nd::CallMulti("_backward_RNN", back, AttrsOf(s))[0].dtype(),
            DType::kFloat16);
}

}  // namespace
}  // namespace testing
}  // namespace mx
