// Helpers shared by the nn tests. The tests live in namespace
// mx::nn::testing, where these and the //testing helpers re-exported below
// are visible unqualified, next to everything in mx::nn.
#ifndef MXCORE_NN_NN_TEST_UTIL_H_
#define MXCORE_NN_NN_TEST_UTIL_H_

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "imperative/nd.h"
#include "nn/nn.h"
#include "testing/op_test_util.h"

namespace mx {
namespace nn {
namespace testing {

using ::mx::testing::AllClose;
using ::mx::testing::ArrayOf;
using ::mx::testing::Contains;
using ::mx::testing::ErrorOf;
using ::mx::testing::RandomArray;
using ::mx::testing::ToDouble;

// A path under the test's scratch directory.
inline std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// Outputs and gradients of one recorded call.
struct RunResult {
  std::vector<double> output;
  std::map<std::string, std::vector<double>> grads;  // by structured name
  std::vector<double> input_grad;
};

// Calls `block` on a copy of `x` (with a gradient attached) under
// autograd recording in training mode, back-propagates `head_grad` and
// returns the output and every gradient.
inline RunResult RunWithGrad(Block& block, const NDArray& x,
                             const NDArray& head_grad) {
  NDArray input = x.Copy(x.ctx());
  autograd::AttachGrad(&input);
  NDArray y;
  {
    autograd::RecordScope record;
    y = block(input);
  }
  autograd::Backward({y}, {head_grad});
  RunResult r;
  r.output = ToDouble(y);
  for (const auto& [name, p] : block.CollectParams()) {
    if (p->grad_req() != GradReq::kNull) r.grads[name] = ToDouble(p->grad());
  }
  r.input_grad = ToDouble(input.grad());
  return r;
}

// Dense(4, relu), BatchNorm, Dense(2), initialized: parameters with
// arguments and auxiliary states, for the parameter-file tests.
inline std::shared_ptr<HybridSequential> DenseBatchNormNet() {
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<Dense>(4, "relu"))
      .Add(std::make_shared<BatchNorm>())
      .Add(std::make_shared<Dense>(2));
  net->Initialize(init::Xavier());
  return net;
}

// Exports a hybridized DenseBatchNormNet as `prefix`-symbol.json and
// `prefix`-0007.params in `format`, checks that the parameter file names
// every array "arg:" or "aux:" (BatchNorm's two statistics) as MXNet's
// export does, and that SymbolBlock::Import computes what the net did.
inline void ExpectMXNetExportImportsBack(ParamsFormat format,
                                         const std::string& prefix) {
  auto net = DenseBatchNormNet();
  net->Hybridize();
  const NDArray x = RandomArray({3, 5});
  const std::vector<double> expected = ToDouble((*net)(x));
  net->Export(prefix, 7, format);
  const NamedArrays raw = LoadArrays(prefix + "-0007.params");
  int args = 0, aux = 0;
  for (const auto& [name, array] : raw) {
    args += name.rfind("arg:", 0) == 0;
    aux += name.rfind("aux:", 0) == 0;
  }
  EXPECT_EQ(aux, 2);
  EXPECT_EQ(args + aux, static_cast<int>(raw.size()));
  auto loaded = SymbolBlock::Import(prefix + "-symbol.json", {"data"},
                                    prefix + "-0007.params");
  EXPECT_EQ(ToDouble((*loaded)(x)), expected);
}

}  // namespace testing
}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_NN_TEST_UTIL_H_
