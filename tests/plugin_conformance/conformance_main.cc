// The conformance suite's main: computes every built-in CPU reference of
// the op table, then loads the plugin (its kernels replace the built-in
// ones), runs the checks and prints a summary per category.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

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

// The line prefix of the child's answer in KernelsOfPlugin.
constexpr char kKernelLine[] = "conformance-kernel: ";

// The ops the plugin named by MX_CONFORMANCE_PLUGIN registers kernels for,
// asked of a child process: this program run again with
// MX_CONFORMANCE_LIST_KERNELS=1 (and the same environment, so the same
// MX_CONFORMANCE_PLUGIN), which loads the plugin and prints them. This process
// must compute its references before it loads the plugin (whose kernels replace
// the built-in ones), so it cannot load it to find out. nullopt when the child
// failed.
std::optional<std::set<std::string>> KernelsOfPlugin() {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.push_back(*e);
  env_strings.push_back("MX_CONFORMANCE_LIST_KERNELS=1");
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  char exe[] = "/proc/self/exe";
  char* argv[] = {exe, nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, exe, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n = 0;
  while (spawned == 0 && (n = read(fds[0], buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  if (spawned != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return std::nullopt;
  }
  std::set<std::string> names;
  std::stringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(kKernelLine, 0) == 0) {
      names.insert(line.substr(sizeof(kKernelLine) - 1));
    }
  }
  return names;
}

// `only`: the ops whose cases get a reference (nullopt: all).
void ComputeReferences(const std::optional<std::set<std::string>>& only) {
  g_references = new std::map<CaseKey, Result>();
  g_cpu_kernels = new std::map<std::string, std::string>();
  const auto& table = KernelTable();
  std::set<int> wanted;
  if (only) {
    for (const std::string& op : *only) {
      for (int i : FindCases(op)) wanted.insert(i);
    }
  }
  for (size_t i = 0; i < table.size(); ++i) {
    const OpCase& c = table[i];
    if (const Op* op = OpRegistry::Get()->Find(c.op)) {
      (*g_cpu_kernels)[c.op] = KernelIdentity(*op);
    }
    if (only && !wanted.count(static_cast<int>(i))) continue;
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
      "gradients compared, %d also in float16 of which %d refused by the "
      "plugin's ops), %d subgraphs formed\n"
      "devices: %d checked\n"
      "concurrency: %d concurrent kernel calls compared\n"
      "references: %zu (case, dtype) results of the built-in kernels (%s)\n",
      p.name.c_str(), p.path.c_str(), s.kernels.load(), s.kernel_cases.load(),
      s.grads.load(), s.device_grads_skipped.load(), s.dtypes_declined.load(),
      s.new_ops.load(), s.new_op_grads.load(), s.failing_ops.load(),
      s.properties.load(), s.graphs.load(), s.graph_grads.load(),
      s.float16_graphs.load(), s.float16_graphs_refused.load(),
      s.subgraphs.load(), s.devices.load(), s.concurrent_calls.load(),
      g_references->size(),
      AllReferences() ? "every case of the table"
                      : "the claimed ops' cases; MX_CONFORMANCE_REFERENCES=all "
                        "computes every case");
  // What a user of these dtypes would find missing from the plugin.
  std::printf(
      "declined where the built-in kernels compute the case: %zu "
      "(op, dtype)%s",
      s.declined_computable.size(), s.declined_computable.empty() ? "\n" : ":");
  for (const std::string& d : s.declined_computable) {
    std::printf(" [%s]", d.c_str());
  }
  if (!s.declined_computable.empty()) std::printf("\n");
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
    const bool bools = std::find(c.bool_inputs.begin(), c.bool_inputs.end(),
                                 static_cast<int>(i)) != c.bool_inputs.end();
    if (bools) {
      // 0 or 1 at random, unless the case narrows the range ({1, 2}: all
      // true).
      const auto bits =
          i < c.ranges.size() ? c.ranges[i] : std::make_pair(0.0, 2.0);
      std::vector<double> vals = testing::ToDouble(testing::RandomArray(
          shapes[i], DType::kFloat64, bits.first, bits.second, seed));
      for (double& x : vals) x = std::floor(x);
      in.push_back(nd::cast(testing::ArrayOf(shapes[i], vals), DType::kBool));
    } else if (integers || dtype == DType::kInt32) {
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
      const bool float32 =
          dtype == DType::kFloat16 &&
          std::find(c.float32_in_float16.begin(), c.float32_in_float16.end(),
                    static_cast<int>(i)) != c.float32_in_float16.end();
      in.push_back(testing::RandomArray(shapes[i],
                                        float32 ? DType::kFloat32 : dtype,
                                        range.first, range.second, seed));
    }
  }
  return in;
}

Result RunCase(const OpCase& c, int a, int v, DType dtype, Context ctx,
               bool grad) {
  Result r;
  AttrDict attrs = c.attrs[a];
  if (!c.dtype_attr.empty()) attrs[c.dtype_attr] = DTypeName(dtype);
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
      r.output_dtypes.push_back(out[k].dtype());
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
      // In the output's dtype where that is a float one (softmax's dtype
      // may differ from the data's); integer outputs keep the case's.
      const DType gt = IsFloat(out[k].dtype()) ? out[k].dtype() : dtype;
      NDArray g = testing::RandomArray(out[k].shape(), gt, -1, 1,
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

// Every case gets a reference with MX_CONFORMANCE_REFERENCES=all, else
// only the cases of the ops the plugin registers kernels for (the
// default: computing all of them took most of a small plugin's run, ~12 s
// under ASan, for cases no check reads).
bool AllReferences() {
  const char* v = std::getenv("MX_CONFORMANCE_REFERENCES");
  return v != nullptr && std::string(v) == "all";
}

Summary& Counts() {
  static Summary* s = new Summary();
  return *s;
}

const std::vector<DType>& CaseDTypes() {
  static const auto* dtypes = new std::vector<DType>{
      DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32};
  return *dtypes;
}
bool ComparesGradients(DType dtype) { return dtype != DType::kInt32; }

bool DTypeRequired(DType dtype) {
  const char* v = std::getenv("MX_CONFORMANCE_REQUIRED_DTYPES");
  const std::string list = v != nullptr && *v != '\0' ? v : "float32";
  if (list == "all") return true;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == DTypeName(dtype)) return true;
  }
  return false;
}

namespace {

struct Tolerance {
  double rtol, atol;
};

// Integers must match exactly. float16 keeps 11 significant bits (one
// rounding is 4.9e-4 of the value): a few roundings apart.
Tolerance ToleranceOf(DType dtype) {
  switch (dtype) {
    case DType::kInt32:
      return {0, 0};
    case DType::kFloat64:
      return {1e-9, 1e-12};
    case DType::kFloat16:
      return {5e-3, 5e-3};
    default:
      return {1e-5, 1e-6};
  }
}

}  // namespace

double Rtol(DType dtype) { return ToleranceOf(dtype).rtol; }
double Atol(DType dtype) { return ToleranceOf(dtype).atol; }
DType ToleranceDType(DType dtype, DType output) {
  // From exact to loosest; integer and bool outputs are exact.
  const auto looseness = [](DType t) {
    switch (t) {
      case DType::kFloat64:
        return 1;
      case DType::kFloat32:
        return 2;
      case DType::kFloat16:
        return 3;
      default:
        return 0;
    }
  };
  return looseness(output) > looseness(dtype) ? output : dtype;
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
  if (const char* list = std::getenv("MX_CONFORMANCE_LIST_KERNELS");
      list != nullptr && std::string(list) == "1") {
    // The child of KernelsOfPlugin.
    try {
      for (const std::string& name : mx::LoadPlugin(path).kernels) {
        std::printf("%s%s\n", mx::conformance::kKernelLine, name.c_str());
      }
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "could not load %s: %s\n", path, e.what());
      return 1;
    }
  }
  std::optional<std::set<std::string>> claimed;
  if (!mx::conformance::AllReferences()) {
    claimed = mx::conformance::KernelsOfPlugin();
    // A failed child: every reference, as with MX_CONFORMANCE_REFERENCES=all
    // (the load below reports why the plugin does not load).
    if (!claimed) std::printf("listing the plugin's kernels failed\n");
  }
  mx::conformance::ComputeReferences(claimed);
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
