// Runs a model saved by MXNet (or exported here): loads the symbol file and
// an optional parameter file (MXNet's format or mxcore's), prints its
// inputs and outputs, runs forward on random (or constant) data, optionally
// partitioned by a subgraph backend, and reports the time per batch.
//
//   bazel run --config=opt //tools:run_model --
//       --symbol=$PWD/../shared/mxnet-models/mlnet_mlp-symbol.json
//       --params=$PWD/../shared/mxnet-models/params/mlnet_mlp-0004.params
//       --inputs='data:1,4:const1' --batches=20          (one command line)
//
// Plugins in MX_PLUGINS load first (their kernels run; their subgraph
// backends can be named with --backend, e.g. onednn).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/error.h"
#include "nn/params_file.h"
#include "plugin/plugin.h"
#include "tools/mxnet_model.h"

ABSL_FLAG(std::string, symbol, "", "the model's -symbol.json file");
ABSL_FLAG(std::string, params, "",
          "its .params file (MXNet's NDArray list, MXNet 2's .npz or "
          "mxcore's format); empty: random weights");
ABSL_FLAG(std::string, inputs, "data:1,3,224,224",
          "input shapes and fills: name:d0,d1,...[:fill];... with fill "
          "uniform (default), intN or constV");
ABSL_FLAG(std::string, backend, "NONE",
          "subgraph backend to partition with (NONE: none)");
ABSL_FLAG(std::string, subgraph_ops, "",
          "for --backend=default: comma-separated ops it claims (empty: all)");
ABSL_FLAG(double, check, -1,
          "with --backend: also run the unpartitioned graph on the same "
          "weights and inputs and fail (exit 1) when an output differs by "
          "more than this times the output's largest magnitude (e.g. 1e-4); "
          "negative: no check");
ABSL_FLAG(int, batches, 10, "timed forward passes (after one warm-up)");
ABSL_FLAG(int, show, 5, "output values printed per output");

namespace {

std::string Describe(const mx::NDArray& a) {
  return a.shape().ToString() + " " + mx::DTypeName(a.dtype());
}

// Runs `unpartitioned` on copies of `partitioned`'s weights and inputs
// and compares each output (the largest difference relative to the
// unpartitioned output's largest magnitude); false beyond `tolerance`.
bool CheckAgainstUnpartitioned(const mx::Symbol& unpartitioned,
                               const mx::Executor& partitioned,
                               double tolerance) {
  using namespace mx;
  auto ref = mxnet_model::BindLike(unpartitioned, partitioned);
  ref->Forward();
  if (ref->outputs().size() != partitioned.outputs().size()) {
    std::printf("check: %zu outputs, the unpartitioned graph has %zu\n",
                partitioned.outputs().size(), ref->outputs().size());
    std::printf("check: FAILED\n");
    return false;
  }
  bool ok = true;
  for (size_t i = 0; ok && i < ref->outputs().size(); ++i) {
    const std::vector<double> want = mxnet_model::ToDoubles(ref->outputs()[i]);
    const std::vector<double> got =
        mxnet_model::ToDoubles(partitioned.outputs()[i]);
    if (got.size() != want.size()) {
      std::printf(
          "check: output %zu has %zu values, the unpartitioned "
          "graph's %zu\n",
          i, got.size(), want.size());
      ok = false;
      break;
    }
    double scale = 0, diff = 0;
    for (size_t j = 0; j < want.size(); ++j) {
      if (std::isfinite(want[j])) scale = std::max(scale, std::abs(want[j]));
      // The same value (also the same infinity, or NaN on both sides) is
      // no difference; NaN on one side is an infinite one.
      if (got[j] == want[j] || (std::isnan(got[j]) && std::isnan(want[j])))
        continue;
      const double d = std::abs(got[j] - want[j]);
      diff = std::isfinite(d) ? std::max(diff, d) : INFINITY;
    }
    const double relative = scale > 0 ? diff / scale : diff;
    std::printf(
        "check: output %zu differs from the unpartitioned graph's by "
        "%.3g (%.3g of its largest magnitude %.4g)\n",
        i, diff, relative, scale);
    ok = relative <= tolerance;
  }
  if (!ok) std::printf("check: FAILED (tolerance %g)\n", tolerance);
  return ok;
}

int Run() {
  using namespace mx;
  const Symbol loaded =
      mxnet_model::LoadSymbolFile(absl::GetFlag(FLAGS_symbol));
  const auto inputs = mxnet_model::ParseInputs(absl::GetFlag(FLAGS_inputs));
  std::optional<nn::NamedArrays> params;
  if (!absl::GetFlag(FLAGS_params).empty()) {
    params = nn::LoadArrays(absl::GetFlag(FLAGS_params));
    std::printf("params: %zu arrays from %s\n", params->size(),
                absl::GetFlag(FLAGS_params).c_str());
  }
  LoadEnvPlugins();  // Loaded on first use anyway; listed here.
  for (const PluginInfo& p : ListPlugins()) {
    std::printf("plugin: %s (%s)\n", p.name.c_str(), p.path.c_str());
  }
  Symbol symbol = loaded;
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (backend != "NONE") {
    const std::string ops = absl::GetFlag(FLAGS_subgraph_ops);
    symbol = mxnet_model::Partition(
        loaded, backend,
        ops.empty() ? std::vector<std::string>{}
                    : std::vector<std::string>(absl::StrSplit(ops, ',')));
  }
  std::printf("ops: %s\n",
              absl::StrJoin(mxnet_model::OpNames(symbol), " ").c_str());
  auto exec = mxnet_model::Bind(symbol, inputs, params);
  for (const auto& spec : inputs) {
    std::printf("input  %s %s (%s)\n", spec.name.c_str(),
                spec.shape.ToString().c_str(), spec.fill.c_str());
  }
  std::printf("weights: %zu arguments, %zu auxiliary states\n",
              exec->arg_dict().size() - inputs.size(), exec->aux_dict().size());
  exec->Forward();  // warm-up
  const std::vector<std::string> names = symbol.ListOutputNames();
  for (size_t i = 0; i < exec->outputs().size(); ++i) {
    const NDArray& out = exec->outputs()[i];
    const std::vector<double> values = mxnet_model::ToDoubles(out);
    double sum = 0;
    for (float v : values) sum += v;
    const size_t shown =
        std::min<size_t>(values.size(), absl::GetFlag(FLAGS_show));
    std::printf(
        "output %s %s sum %.7g first [%s]\n",
        i < names.size() ? names[i].c_str() : "?", Describe(out).c_str(), sum,
        absl::StrJoin(values.begin(), values.begin() + shown, ", ",
                      [](std::string* s, double v) { absl::StrAppend(s, v); })
            .c_str());
  }
  const double tolerance = absl::GetFlag(FLAGS_check);
  if (tolerance >= 0 && backend != "NONE" &&
      !CheckAgainstUnpartitioned(loaded, *exec, tolerance)) {
    return 1;
  }
  std::vector<double> ms;
  for (int b = 0; b < absl::GetFlag(FLAGS_batches); ++b) {
    const auto start = std::chrono::steady_clock::now();
    exec->Forward();
    for (const NDArray& out : exec->outputs()) out.WaitToRead();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    std::printf(
        "time per batch: median %.3f ms, min %.3f ms over %zu batches\n",
        ms[ms.size() / 2], ms.front(), ms.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "run_model --symbol=M-symbol.json [--params=M-0000.params] "
      "[--inputs=data:1,3,224,224] [--backend=default] [--batches=10]");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_symbol).empty()) {
    std::fprintf(stderr, "run_model: --symbol is required\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_check) >= 0 &&
      absl::GetFlag(FLAGS_backend) == "NONE") {
    std::fprintf(stderr, "run_model: --check needs --backend\n");
    return 2;
  }
  try {
    return Run();
  } catch (const std::exception& e) {  // mx::Error, and any other
    std::fprintf(stderr, "run_model: %s\n", e.what());
    return 1;
  }
}
