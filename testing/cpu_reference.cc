#include "testing/cpu_reference.h"

#include <utility>

#include "imperative/imperative.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {

std::vector<NDArray> CpuReference(const std::string& op, const AttrDict& attrs,
                                  const std::vector<NDArray>& inputs) {
  // A plain forward call: no recording, no tracing.
  imperative::RecordingScope no_record(false);
  imperative::DeferredComputeScope no_trace(false);
  std::vector<NDArray> cpu_inputs;
  for (const NDArray& in : inputs)
    cpu_inputs.push_back(in.Copy(Context::CPU()));
  std::vector<NDArray> out = imperative::Invoke(op, cpu_inputs, attrs);
  for (NDArray& o : out) o.WaitToRead();
  return out;
}

::testing::AssertionResult MatchesCpuReference(
    const std::vector<NDArray>& actual, const std::string& op,
    const AttrDict& attrs, const std::vector<NDArray>& inputs, double rtol,
    double atol) {
  const std::vector<NDArray> expected = CpuReference(op, attrs, inputs);
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << op << ": " << actual.size() << " outputs but the CPU reference "
           << "has " << expected.size();
  }
  for (size_t k = 0; k < actual.size(); ++k) {
    ::testing::AssertionResult r =
        NearArray(actual[k].Copy(Context::CPU()), expected[k], rtol, atol);
    if (!r)
      return ::testing::AssertionFailure()
             << op << " output " << k << ": " << r.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult AddToAccumulates(const std::string& op,
                                            const AttrDict& attrs,
                                            const std::vector<NDArray>& inputs,
                                            uint32_t seed) {
  const std::vector<NDArray> written = CpuReference(op, attrs, inputs);
  std::vector<NDArray> acc;
  std::vector<std::vector<double>> expected;
  for (size_t k = 0; k < written.size(); ++k) {
    acc.push_back(RandomArray(written[k].shape(), written[k].dtype(), -1, 1,
                              seed + static_cast<uint32_t>(k)));
    std::vector<double> e = ToDouble(acc[k]);
    const std::vector<double> w = ToDouble(written[k]);
    for (size_t j = 0; j < e.size(); ++j) e[j] += w[j];
    expected.push_back(std::move(e));
  }
  imperative::InvokeOptions options;
  options.req.assign(written.size(), OpReqType::kAddTo);
  {
    imperative::RecordingScope no_record(false);
    imperative::DeferredComputeScope no_trace(false);
    std::vector<NDArray> cpu_inputs;
    for (const NDArray& in : inputs) {
      cpu_inputs.push_back(in.Copy(Context::CPU()));
    }
    imperative::Invoke(MakeAttrs(OpRegistry::Get()->Lookup(op), attrs),
                       cpu_inputs, &acc, options);
  }
  for (size_t k = 0; k < acc.size(); ++k) {
    ::testing::AssertionResult r = AllClose(ToDouble(acc[k]), expected[k]);
    if (!r) {
      return ::testing::AssertionFailure()
             << op << " output " << k << " with kAddTo: " << r.message();
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace testing
}  // namespace mx
