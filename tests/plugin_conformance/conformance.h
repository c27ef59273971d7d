// The plugin conformance suite: one test program checking any plugin
// (MX_CONFORMANCE_PLUGIN) against the host's built-in CPU kernels. See
// README.md next to this file for what it checks and how to run it.
#ifndef MXCORE_TESTS_PLUGIN_CONFORMANCE_CONFORMANCE_H_
#define MXCORE_TESTS_PLUGIN_CONFORMANCE_CONFORMANCE_H_

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "graph/op.h"
#include "ndarray/ndarray.h"
#include "plugin/plugin.h"

namespace mx {
namespace conformance {

// ---- The op table (op_table.cc). ----

// How to call one existing op: input shapes per variant, value range,
// attribute sets taken from the op tests.
struct OpCase {
  std::string op;  // Canonical name (aliases map onto it).
  // Input shapes of variant v, for v in [0, num_variants).
  std::function<std::vector<TShape>(int v)> shapes;
  int num_variants = 3;
  std::vector<AttrDict> attrs = {{}};
  double lo = -1, hi = 1;  // Input values, uniform.
  // Per-input (lo, hi) overriding the above where given (BatchNorm's
  // variance must be positive).
  std::vector<std::pair<double, double>> ranges;
  bool train = false;        // Forward (and gradient) in training mode.
  std::vector<int> no_grad;  // Inputs without a gradient (aux states).
  // Inputs made as int32 integers in [lo, hi) of their range (indices,
  // argmax positions) whatever the case's dtype.
  std::vector<int> int32_inputs;
  // Inputs made bool (0 or 1 at random: masks; the floor of the input's
  // range where `ranges` gives one) whatever the case's dtype.
  std::vector<int> bool_inputs;
  // Inputs made float32 in a float16 case (BatchNorm's parameters and
  // statistics: MXNet's float16 BatchNorm takes them in float32).
  std::vector<int> float32_in_float16;
  // An attribute set to the case's dtype name (Embedding's "dtype", which
  // its weight must have).
  std::string dtype_attr;
  // Random-number ops: outputs are compared by shape and finiteness only
  // (a plugin's generator need not match the host's).
  bool random_values = false;
};

// Every existing op a CPU or device plugin is expected to claim.
const std::vector<OpCase>& KernelTable();
// Indices in KernelTable() of the cases of `op` (or of the op it is an
// alias of); empty when the table lacks it.
std::vector<int> FindCases(const std::string& op);

// Attribute sets for a plugin's new ops, by op name (ops not here are
// tried with no attributes).
const std::vector<AttrDict>& NewOpAttrs(const std::string& op);

// ---- Running one case. ----

enum class Outcome { kOk, kDTypeError, kError };

struct Result {
  Outcome outcome = Outcome::kOk;
  std::string error;
  std::vector<std::vector<double>> outputs;  // Visible outputs.
  std::vector<DType> output_dtypes;          // Theirs.
  std::vector<std::vector<double>> grads;    // Per input; empty if none.
  std::string grad_error;  // Set when the gradient could not be computed.
};

// Deterministic inputs of `c`'s variant v in `dtype`, on the CPU.
std::vector<NDArray> CaseInputs(const OpCase& c, int v, DType dtype);
// Visible outputs and gradients are read back as doubles; a kernel
// error surfaces as kDTypeError or kError instead.
// Runs c.op (attribute set a, variant v) with inputs copied to `ctx`;
// the gradient (autograd on ctx) when `grad` and the op has one.
Result RunCase(const OpCase& c, int a, int v, DType dtype, Context ctx,
               bool grad);

// (case index, attribute set, variant, dtype).
using CaseKey = std::tuple<int, int, int, int>;
// Whether the whole table gets references (MX_CONFORMANCE_REFERENCES=all:
// the repo's test_plugin run), which also runs the table-wide checks of
// the built-in kernels.
bool AllReferences();
// The built-in CPU results, computed before the plugin was loaded: for
// the cases of the ops it has kernels for, or for every case with
// MX_CONFORMANCE_REFERENCES=all.
const std::map<CaseKey, Result>& References();

// ---- The plugin under test. ----

const PluginInfo& Plugin();
// Ops with a kernel from the plugin: (op, device type) pairs, CPU ones
// found by the kernel changing when the plugin loaded.
std::vector<std::pair<std::string, int>> PluginKernels();
// Deliberately broken ops named in MX_CONFORMANCE_EXPECT_FAIL (e.g. a test
// plugin's error-reporting ops): checked to fail with a typed error.
bool ExpectedToFail(const std::string& op);

// Whether a plugin device type has units (a GPU plugin on a machine without
// a GPU has none: its kernel and device checks are skipped with one line
// saying so, printed once per device type).
bool DeviceHasUnits(int dev_type);

// Counts for the summary printed at the end.
struct Summary {
  std::atomic<int> kernels{0}, kernel_cases{0}, dtypes_declined{0};
  std::atomic<int> grads{0}, device_grads_skipped{0}, new_ops{0},
      new_op_grads{0}, failing_ops{0};
  std::atomic<int> properties{0}, graphs{0}, graph_grads{0}, subgraphs{0},
      float16_graphs{0}, float16_graphs_refused{0};
  std::atomic<int> devices{0}, concurrent_calls{0};
  // "op dtype" of the kernel cases a plugin declined (DTypeError) where the
  // built-in kernel computes them; written by the kernel check alone.
  std::set<std::string> declined_computable;
};
Summary& Counts();

double Rtol(DType dtype);
double Atol(DType dtype);
// The dtype whose tolerances compare an output of dtype `output` in a case
// run in `dtype`: the looser of the two (float32 results of int32 or
// float64 data, as _npi_sin's, round as float32).
DType ToleranceDType(DType dtype, DType output);

// The dtypes every kernel case runs in (References() holds each), and
// whether gradients are compared in one (not for int32: integer gradients
// are not defined).
const std::vector<DType>& CaseDTypes();
bool ComparesGradients(DType dtype);
// Whether a plugin kernel may not decline `dtype` (DTypeError) where the
// built-in kernel computes the case: the dtypes listed (by name) in
// MX_CONFORMANCE_REQUIRED_DTYPES, every dtype for "all"; float32 when it
// is unset.
bool DTypeRequired(DType dtype);

}  // namespace conformance
}  // namespace mx

#endif  // MXCORE_TESTS_PLUGIN_CONFORMANCE_CONFORMANCE_H_
