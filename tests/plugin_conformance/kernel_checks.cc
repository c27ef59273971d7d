// Kernels for existing ops: every kernel the plugin registers, on the CPU
// or on its own device, against the built-in CPU reference (outputs, and
// gradients through autograd on the same device), and the same kernels
// called concurrently.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <thread>

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

using testing::AllClose;

Context DeviceContext(int dev_type) {
  Context ctx;
  ctx.dev_type = static_cast<Context::DeviceType>(dev_type);
  ctx.dev_id = 0;
  return ctx;
}

std::string Describe(const OpCase& c, int a, int v, DType dt, int dev) {
  std::ostringstream os;
  os << c.op << " attrs {";
  for (const auto& [k, val] : c.attrs[a]) os << k << "=" << val << " ";
  os << "} inputs";
  for (const TShape& s : c.shapes(v)) os << " " << s;
  os << " dtype " << DTypeName(dt) << " on "
     << (dev == Context::kCPU ? "cpu" : DeviceContext(dev).ToString());
  return os.str();
}

// Random-number outputs: the same size and finite values.
bool SameSizeAndFinite(const std::vector<double>& got,
                       const std::vector<double>& ref) {
  if (got.size() != ref.size()) return false;
  for (double v : got) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

// Compares one plugin result with the reference; false on mismatch.
// A device's gradient that cannot run (a backward op without a kernel
// there) fails only when the plugin says its device has every gradient.
bool DeviceGradientsRequired() {
  const char* v = std::getenv("MX_CONFORMANCE_DEVICE_GRADIENTS");
  return v != nullptr && std::string(v) == "1";
}

void Compare(const std::string& op, const Result& ref, const Result& got,
             DType dt, bool grads, bool on_device, bool random_values,
             const std::string& what) {
  SCOPED_TRACE(what);
  if (got.outcome == Outcome::kDTypeError) {
    EXPECT_NE(dt, DType::kFloat32)
        << "float32 must work; the kernel raised " << got.error;
    ++Counts().dtypes_declined;
    if (ref.outcome == Outcome::kOk) {
      Counts().declined_computable.insert(op + " " + DTypeName(dt));
      EXPECT_FALSE(DTypeRequired(dt))
          << "the built-in kernel computes this case in " << DTypeName(dt)
          << ", which MX_CONFORMANCE_REQUIRED_DTYPES requires of the "
             "plugin; the kernel raised "
          << got.error;
    }
    return;
  }
  ++Counts().kernel_cases;
  if (ref.outcome != Outcome::kOk) return;  // Built-in fails too.
  ASSERT_EQ(got.outcome, Outcome::kOk) << got.error;
  ASSERT_EQ(got.outputs.size(), ref.outputs.size());
  for (size_t k = 0; k < ref.outputs.size(); ++k) {
    if (random_values) {
      EXPECT_TRUE(SameSizeAndFinite(got.outputs[k], ref.outputs[k]))
          << "output " << k;
      continue;
    }
    const DType tol = ToleranceDType(dt, ref.output_dtypes[k]);
    EXPECT_TRUE(AllClose(got.outputs[k], ref.outputs[k], Rtol(tol), Atol(tol)))
        << "output " << k;
  }
  if (random_values) return;
  if (!grads || !ref.grad_error.empty() || ref.grads.empty()) return;
  if (on_device && !got.grad_error.empty() && !DeviceGradientsRequired()) {
    ++Counts().device_grads_skipped;
    return;
  }
  ++Counts().grads;
  ASSERT_TRUE(got.grad_error.empty()) << got.grad_error;
  ASSERT_EQ(got.grads.size(), ref.grads.size());
  for (size_t i = 0; i < ref.grads.size(); ++i) {
    EXPECT_TRUE(
        AllClose(got.grads[i], ref.grads[i], 10 * Rtol(dt), 10 * Atol(dt)))
        << "gradient of input " << i;
  }
}

// Every case with a reference: the whole table with
// MX_CONFORMANCE_REFERENCES=all (//tests/plugin_conformance:test_plugin),
// else the cases of the plugin's ops.
TEST(Table, EveryCaseRunsOnTheBuiltInKernels) {
  for (const auto& [key, ref] : References()) {
    const auto& [i, a, v, dt] = key;
    const OpCase& c = KernelTable()[i];
    if (static_cast<DType>(dt) != DType::kFloat32) continue;
    SCOPED_TRACE(Describe(c, a, v, DType::kFloat32, Context::kCPU));
    EXPECT_EQ(ref.outcome, Outcome::kOk) << ref.error;
    const Op* op = OpRegistry::Get()->Find(c.op);
    if (op != nullptr && op->GetAttr<FGradient>("FGradient") != nullptr) {
      EXPECT_TRUE(ref.grad_error.empty()) << ref.grad_error;
    }
  }
}

// Every case with one input in another dtype than the case's float32 (data
// inputs float64, float16 or bool; index inputs int64, uint8 or float32):
// the built-in kernels either run or raise an mx::Error. A kernel that
// reads an input as another type than it has (as _backward_RNN read a
// float16 reserve as float32) reads past its end: under ASan that fails
// here. Only with every reference (the repo's test_plugin run).
TEST(Table, InputsOfOtherDTypesRunOrAreTypedErrors) {
  if (!AllReferences()) {
    GTEST_SKIP()
        << "the table-wide checks run with MX_CONFORMANCE_REFERENCES=all";
  }
  int ran = 0, refused = 0;
  for (const OpCase& c : KernelTable()) {
    if (OpRegistry::Get()->Find(c.op) == nullptr) continue;
    for (size_t a = 0; a < c.attrs.size(); ++a) {
      const std::vector<NDArray> base = CaseInputs(c, 0, DType::kFloat32);
      for (size_t k = 0; k < base.size(); ++k) {
        const bool index =
            std::find(c.int32_inputs.begin(), c.int32_inputs.end(),
                      static_cast<int>(k)) != c.int32_inputs.end() ||
            std::find(c.bool_inputs.begin(), c.bool_inputs.end(),
                      static_cast<int>(k)) != c.bool_inputs.end();
        const std::vector<DType> others =
            index ? std::vector<DType>{DType::kInt64, DType::kUInt8,
                                       DType::kFloat32}
                  : std::vector<DType>{DType::kFloat64, DType::kFloat16,
                                       DType::kBool};
        for (DType other : others) {
          SCOPED_TRACE(Describe(c, static_cast<int>(a), 0, DType::kFloat32,
                                Context::kCPU) +
                       ", input " + std::to_string(k) + " " + DTypeName(other));
          std::vector<NDArray> in = base;
          try {
            in[k] = nd::cast(base[k], other);
            imperative::TrainingScope mode(c.train);
            for (const NDArray& out :
                 imperative::Invoke(c.op, in, c.attrs[a])) {
              out.WaitToRead();
            }
            ++ran;
          } catch (const Error&) {
            ++refused;
          } catch (const std::exception& e) {
            ADD_FAILURE() << "not an mx::Error: " << e.what();
          }
        }
      }
    }
  }
  std::printf("inputs of other dtypes: %d calls ran, %d typed errors\n", ran,
              refused);
}

// After a case's first mismatch: whether the built-in CPU kernels give
// the stored reference again (computed before the plugin loaded), so that
// a reference that was itself wrong (nondeterminism on the CPU side) is
// told apart from a wrong plugin kernel.
void ExplainMismatch(const OpCase& c, int a, int v, DType dt, bool grads,
                     const Result& ref, const Result& got) {
  // Exactly equal lists (NaN equal to NaN).
  const auto same = [](const std::vector<std::vector<double>>& x,
                       const std::vector<std::vector<double>>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!AllClose(x[i], y[i], 0, 0)) return false;
    }
    return true;
  };
  const Result again = RunCase(c, a, v, dt, Context::CPU(), grads);
  const bool grads_same = same(again.grads, ref.grads);
  bool grads_like_got = again.grads.size() == got.grads.size();
  for (size_t i = 0; grads_like_got && i < got.grads.size(); ++i) {
    grads_like_got = static_cast<bool>(
        AllClose(got.grads[i], again.grads[i], 10 * Rtol(dt), 10 * Atol(dt)));
  }
  std::printf(
      "conformance: %s: the CPU run again gives %s outputs and %s gradients "
      "as the reference%s\n",
      Describe(c, a, v, dt, Context::kCPU).c_str(),
      same(again.outputs, ref.outputs) ? "the same" : "OTHER",
      grads_same ? "the same" : "OTHER",
      !grads_same && grads_like_got ? " (its gradients match the plugin's)"
                                    : "");
}

TEST(Kernels, ClaimedExistingOpsMatchTheCpuReference) {
  std::set<std::string> counted;
  for (const auto& [name, dev] : PluginKernels()) {
    const std::vector<int> cases = FindCases(name);
    if (cases.empty()) {
      ADD_FAILURE() << "the plugin registers a kernel for \"" << name
                    << "\", which the conformance table has no case for: add "
                       "its input shapes and attribute sets (from its op "
                       "tests) to tests/plugin_conformance/op_table.cc";
      continue;
    }
    ++Counts().kernels;
    if (!DeviceHasUnits(dev)) continue;
    const Context ctx =
        dev == Context::kCPU ? Context::CPU() : DeviceContext(dev);
    for (int i : cases) {
      const OpCase& c = KernelTable()[i];
      for (int a = 0; a < static_cast<int>(c.attrs.size()); ++a) {
        for (int v = 0; v < c.num_variants; ++v) {
          for (DType dt : CaseDTypes()) {
            const bool grads = ComparesGradients(dt);
            const Result& ref =
                References().at({i, a, v, static_cast<int>(dt)});
            const Result got = RunCase(c, a, v, dt, ctx, grads);
            const bool failed_before = ::testing::Test::HasFailure();
            Compare(c.op, ref, got, dt, grads, !ctx.is_host(), c.random_values,
                    Describe(c, a, v, dt, dev));
            // (On a plugin's own device only: a CPU plugin's kernels have
            // replaced the built-in ones.)
            if (!ctx.is_host() && !failed_before &&
                ::testing::Test::HasFailure()) {
              ExplainMismatch(c, a, v, dt, grads, ref, got);
            }
          }
        }
      }
    }
  }
}

// Many independent invocations of every plugin kernel from several
// threads at once (the engine has MX_CPU_WORKER_NTHREADS workers), each
// compared with the reference.
TEST(Concurrency, KernelsCalledFromSeveralThreadsAgree) {
  const auto kernels = PluginKernels();
  constexpr int kThreads = 4, kRounds = 3;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&kernels, t] {
      for (int round = 0; round < kRounds; ++round) {
        for (size_t k = 0; k < kernels.size(); ++k) {
          const auto& [name, dev] = kernels[(k + t) % kernels.size()];
          if (!DeviceHasUnits(dev)) continue;
          const Context ctx =
              dev == Context::kCPU ? Context::CPU() : DeviceContext(dev);
          for (int i : FindCases(name)) {
            const OpCase& c = KernelTable()[i];
            for (int a = 0; a < static_cast<int>(c.attrs.size()); ++a) {
              const int v = (a + t + round) % c.num_variants;
              const DType dt = DType::kFloat32;
              const Result& ref =
                  References().at({i, a, v, static_cast<int>(dt)});
              if (ref.outcome != Outcome::kOk) continue;
              const Result got = RunCase(c, a, v, dt, ctx, false);
              ++Counts().concurrent_calls;
              EXPECT_EQ(got.outcome, Outcome::kOk)
                  << Describe(c, a, v, dt, dev) << ": " << got.error;
              if (got.outcome != Outcome::kOk) continue;
              for (size_t o = 0; o < ref.outputs.size(); ++o) {
                EXPECT_TRUE(
                    c.random_values
                        ? SameSizeAndFinite(got.outputs[o], ref.outputs[o])
                        : AllClose(
                              got.outputs[o], ref.outputs[o],
                              Rtol(ToleranceDType(dt, ref.output_dtypes[o])),
                              Atol(ToleranceDType(dt, ref.output_dtypes[o]))))
                    << Describe(c, a, v, dt, dev) << " output " << o;
              }
            }
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace
}  // namespace conformance
}  // namespace mx
