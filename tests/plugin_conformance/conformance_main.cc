// The conformance suite's main: computes every built-in CPU reference of
// the op table, then loads the plugin (its kernels replace the built-in
// ones), runs the checks and prints a summary per category.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <typeinfo>

#include "autograd/autograd.h"
#include "backends/plugin_api/mx_plugin.h"
#include "base/error.h"
#include "graph/node.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"
#include "tests/plugin_conformance/conformance.h"

namespace mx {
namespace conformance {
namespace {

PluginInfo* g_plugin = nullptr;
std::map<CaseKey, Result>* g_references = nullptr;
// The CPU kernel of every table op before loading, to spot replacements.
std::map<std::string, std::string>* g_cpu_kernels = nullptr;

std::string KernelIdentity(const Op& op) {
  std::string id;
  if (const FCompute* f = op.compute(Context::kCPU)) {
    id += std::string("c:") + f->target_type().name();
  }
  if (const FStatefulCompute* f = op.stateful_compute(Context::kCPU)) {
    id += std::string("s:") + f->target_type().name();
  }
  if (const FComputeDynamic* f = op.compute_dynamic(Context::kCPU)) {
    id += std::string("d:") + f->target_type().name();
  }
  return id;
}

void ComputeReferences() {
  g_references = new std::map<CaseKey, Result>();
  g_cpu_kernels = new std::map<std::string, std::string>();
  const auto& table = KernelTable();
  for (size_t i = 0; i < table.size(); ++i) {
    const OpCase& c = table[i];
    if (const Op* op = OpRegistry::Get()->Find(c.op)) {
      (*g_cpu_kernels)[c.op] = KernelIdentity(*op);
    }
    for (size_t a = 0; a < c.attrs.size(); ++a) {
      for (int v = 0; v < c.num_variants; ++v) {
        for (DType dt : CaseDTypes()) {
          (*g_references)[{static_cast<int>(i), static_cast<int>(a), v,
                           static_cast<int>(dt)}] =
              RunCase(c, a, v, dt, Context::CPU(), ComparesGradients(dt));
        }
      }
    }
  }
}

void PrintSummary() {
  const Summary& s = Counts();
  const PluginInfo& p = Plugin();
  std::printf(
      "\n== plugin conformance: %s (%s) ==\n"
      "kernels for existing ops: %d (op, device) kernels, %d cases compared, "
      "%d gradient comparisons (%d on the device skipped: a backward op has "
      "no kernel there), %d (case, dtype) declined with DTypeError\n"
      "new ops: %d checked (%d gradient checks), %d expected-to-fail ops "
      "failed with typed errors\n"
      "subgraph properties: %d backends, %d graphs partitioned (%d with "
      "gradients compared), %d subgraphs formed\n"
      "devices: %d checked\n"
      "concurrency: %d concurrent kernel calls compared\n",
      p.name.c_str(), p.path.c_str(), s.kernels.load(), s.kernel_cases.load(),
      s.grads.load(), s.device_grads_skipped.load(), s.dtypes_declined.load(),
      s.new_ops.load(), s.new_op_grads.load(), s.failing_ops.load(),
      s.properties.load(), s.graphs.load(), s.graph_grads.load(),
      s.subgraphs.load(), s.devices.load(), s.concurrent_calls.load());
}

}  // namespace

std::vector<NDArray> CaseInputs(const OpCase& c, int v, DType dtype) {
  const std::vector<TShape> shapes = c.shapes(v);
  std::vector<NDArray> in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto range =
        i < c.ranges.size() ? c.ranges[i] : std::make_pair(c.lo, c.hi);
    const uint32_t seed = static_cast<uint32_t>(1000 * v + 17 * i + 1);
    const bool integers =
        std::find(c.int32_inputs.begin(), c.int32_inputs.end(),
                  static_cast<int>(i)) != c.int32_inputs.end();
    if (integers || dtype == DType::kInt32) {
      // Integers in [lo, hi) for index inputs, in [8 lo, 8 hi) for integer
      // data (signs, zeros and products that leave int8's range): the
      // floor of uniform values, then int32.
      const double scale = integers ? 1 : 8;
      NDArray f =
          testing::RandomArray(shapes[i], DType::kFloat64, scale * range.first,
                               scale * range.second, seed);
      std::vector<double> vals = testing::ToDouble(f);
      for (double& x : vals) x = std::floor(x);
      in.push_back(nd::cast(testing::ArrayOf(shapes[i], vals), DType::kInt32));
    } else {
      in.push_back(testing::RandomArray(shapes[i], dtype, range.first,
                                        range.second, seed));
    }
  }
  return in;
}

Result RunCase(const OpCase& c, int a, int v, DType dtype, Context ctx,
               bool grad) {
  Result r;
  const AttrDict& attrs = c.attrs[a];
  const Op* op = nullptr;
  int visible = 0;
  try {
    op = &OpRegistry::Get()->Lookup(c.op);
    visible = op->NumVisibleOutputs(MakeAttrs(*op, attrs));
    std::vector<NDArray> in = CaseInputs(c, v, dtype);
    if (!ctx.is_host()) {
      for (NDArray& x : in) x = x.Copy(ctx);
    }
    std::vector<NDArray> out;
    {
      imperative::TrainingScope mode(c.train);
      out = imperative::Invoke(c.op, in, attrs);
    }
    for (int k = 0; k < visible; ++k) {
      r.outputs.push_back(testing::ToDouble(
          ctx.is_host() ? out[k] : out[k].Copy(Context::CPU())));
    }
  } catch (const DTypeError& e) {
    r.outcome = Outcome::kDTypeError;
    r.error = e.what();
    return r;
  } catch (const Error& e) {
    r.outcome = Outcome::kError;
    r.error = e.what();
    return r;
  }
  if (!grad || op->GetAttr<FGradient>("FGradient") == nullptr) {
    return r;
  }
  // The gradient through autograd on ctx: on a device, every backward op
  // (and helper) the gradient graph needs runs on that device too.
  try {
    std::vector<NDArray> in = CaseInputs(c, v, dtype);
    if (!ctx.is_host()) {
      for (NDArray& x : in) x = x.Copy(ctx);
    }
    const std::set<int> skip(c.no_grad.begin(), c.no_grad.end());
    for (size_t i = 0; i < in.size(); ++i) {
      if (!skip.count(static_cast<int>(i))) autograd::AttachGrad(&in[i]);
    }
    std::vector<NDArray> out, heads, head_grads;
    {
      autograd::RecordScope record(c.train);
      out = imperative::Invoke(c.op, in, attrs);
    }
    for (int k = 0; k < visible; ++k) {
      heads.push_back(out[k]);
      NDArray g = testing::RandomArray(out[k].shape(), dtype, -1, 1,
                                       static_cast<uint32_t>(99 + k));
      head_grads.push_back(ctx.is_host() ? g : g.Copy(ctx));
    }
    autograd::Backward(heads, head_grads);
    for (size_t i = 0; i < in.size(); ++i) {
      if (skip.count(static_cast<int>(i))) {
        r.grads.push_back(std::vector<double>());
        continue;
      }
      const NDArray g = in[i].grad();
      r.grads.push_back(
          testing::ToDouble(ctx.is_host() ? g : g.Copy(Context::CPU())));
    }
  } catch (const Error& e) {
    r.grads.clear();
    r.grad_error = e.what();
  }
  return r;
}

const std::map<CaseKey, Result>& References() { return *g_references; }

const PluginInfo& Plugin() { return *g_plugin; }

std::vector<std::pair<std::string, int>> PluginKernels() {
  std::vector<int> devices;
  for (const std::string& d : Plugin().devices) {
    devices.push_back(PluginDeviceContext(d, 0).dev_type);
  }
  const std::set<std::string> new_ops(Plugin().ops.begin(), Plugin().ops.end());
  std::vector<std::pair<std::string, int>> kernels;
  for (const std::string& name : Plugin().kernels) {
    if (new_ops.count(name)) continue;
    const Op& op = OpRegistry::Get()->Lookup(name);
    bool found = false;
    auto it = g_cpu_kernels->find(op.name());
    if (it == g_cpu_kernels->end() || it->second != KernelIdentity(op)) {
      // Not in the table (reported by the kernel check) or replaced.
      kernels.emplace_back(name, Context::kCPU);
      found = true;
    }
    for (int dt : devices) {
      if (op.compute(dt) != nullptr || op.stateful_compute(dt) != nullptr ||
          op.compute_dynamic(dt) != nullptr) {
        kernels.emplace_back(name, dt);
        found = true;
      }
    }
    EXPECT_TRUE(found) << "the plugin lists a kernel for \"" << name
                       << "\" but it replaced no CPU kernel and added none "
                          "on its devices";
  }
  return kernels;
}

bool DeviceHasUnits(int dev_type) {
  if (dev_type == Context::kCPU) return true;
  const MxDeviceDef* d = PluginDeviceFunctions(dev_type);
  const int n = d == nullptr ? 0 : d->count(d->user_data);
  if (n == 0) {
    static std::mutex mu;
    static std::set<int> reported;
    std::lock_guard<std::mutex> lock(mu);
    if (reported.insert(dev_type).second) {
      std::printf(
          "device type %d (%s) has no units on this machine: its "
          "kernel and device checks are skipped\n",
          dev_type,
          Context{static_cast<Context::DeviceType>(dev_type), 0}
              .ToString()
              .c_str());
    }
  }
  return n > 0;
}

bool ExpectedToFail(const std::string& op) {
  const char* list = std::getenv("MX_CONFORMANCE_EXPECT_FAIL");
  std::stringstream ss(list ? list : "");
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == op) return true;
  }
  return false;
}

Summary& Counts() {
  static Summary* s = new Summary();
  return *s;
}

const std::vector<DType>& CaseDTypes() {
  static const auto* dtypes =
      new std::vector<DType>{DType::kFloat32, DType::kFloat64, DType::kInt32};
  return *dtypes;
}
bool ComparesGradients(DType dtype) { return dtype != DType::kInt32; }

// Integers must match exactly.
double Rtol(DType dtype) {
  return dtype == DType::kInt32 ? 0 : dtype == DType::kFloat64 ? 1e-9 : 1e-5;
}
double Atol(DType dtype) {
  return dtype == DType::kInt32 ? 0 : dtype == DType::kFloat64 ? 1e-12 : 1e-6;
}

}  // namespace conformance
}  // namespace mx

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* path = std::getenv("MX_CONFORMANCE_PLUGIN");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr, "set MX_CONFORMANCE_PLUGIN to the plugin to check\n");
    return 2;
  }
  mx::conformance::ComputeReferences();
  try {
    mx::conformance::g_plugin = new mx::PluginInfo(mx::LoadPlugin(path));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: could not load %s: %s\n", path, e.what());
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  mx::conformance::PrintSummary();
  return rc;
}
