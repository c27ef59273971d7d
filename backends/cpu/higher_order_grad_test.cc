// Gradient graphs are made of differentiable ops: the gradient of a
// gradient, checked against central differences of the first gradient.
#include <string>
#include <vector>

#include "backends/cpu/grad_check.h"
#include "backends/cpu/op_test_util.h"
#include "graph/graph.h"
#include "graph/pass.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"

namespace mx {
namespace testing {
namespace {

// The symbol of d<head, op(inputs)>/d(inputs[0]): arguments in0.. and head.
Symbol FirstGradient(const std::string& op, const AttrDict& attrs, int n) {
  std::vector<Symbol> vars;
  for (int i = 0; i < n; ++i) {
    vars.push_back(Symbol::Variable("in" + std::to_string(i)));
  }
  const Symbol y = Symbol::Create(op, vars, attrs, "f");
  Graph g(y);
  g.SetAttr("grad_ys", y.outputs);
  g.SetAttr("grad_ys_out_grad",
            std::vector<NodeEntry>{Symbol::Variable("head").outputs[0]});
  g.SetAttr("grad_xs", std::vector<NodeEntry>{vars[0].outputs[0]});
  Symbol grad;
  grad.outputs = ApplyPass(g, "Gradient").outputs;
  return grad;
}

// Checks d<v, G>/d(args) of the first-gradient symbol G, in float64.
void CheckSecondOrder(const std::string& op, const AttrDict& attrs,
                      const std::vector<NDArray>& inputs, const NDArray& head) {
  const Symbol grad = FirstGradient(op, attrs, static_cast<int>(inputs.size()));
  std::vector<NDArray> args;
  for (const std::string& name : grad.ListArguments()) {
    const NDArray& a =
        name == "head" ? head : inputs[std::stoi(name.substr(2))];
    if (!IsFloat(a.dtype())) {  // Indices: kept, not differentiated.
      args.push_back(a);
      continue;
    }
    NDArray d(a.shape(), a.ctx(), DType::kFloat64);
    CopyFromTo(a, d);
    args.push_back(d);
  }
  std::vector<NDArray> grads;
  std::vector<OpReqType> reqs;
  for (const NDArray& a : args) {
    const bool f = IsFloat(a.dtype());
    grads.push_back(f ? NDArray(a.shape(), a.ctx(), DType::kFloat64)
                      : NDArray());
    reqs.push_back(f ? OpReqType::kWriteTo : OpReqType::kNullOp);
  }
  auto exec = Executor::Bind(grad, Context::CPU(), args, grads, reqs, {});
  exec->Forward();
  const TShape vshape = exec->outputs()[0].shape();
  const NDArray v = RandomArray(vshape, DType::kFloat64, -1, 1, 99);
  const std::vector<double> vv = ToDouble(v);
  exec->Backward({v});
  auto loss = [&] {
    exec->Forward();
    const std::vector<double> y = ToDouble(exec->outputs()[0]);
    double s = 0;
    for (size_t j = 0; j < y.size(); ++j) s += vv[j] * y[j];
    return s;
  };
  const double eps = 1e-6;
  for (size_t i = 0; i < args.size(); ++i) {
    if (reqs[i] == OpReqType::kNullOp) continue;
    const std::vector<double> analytic = ToDouble(grads[i]);
    std::vector<double> x = ToDouble(args[i]), numeric(x.size());
    for (size_t j = 0; j < x.size(); ++j) {
      const double saved = x[j];
      x[j] = saved + eps;
      args[i].SyncCopyFromCPU(x.data(), x.size());
      const double plus = loss();
      x[j] = saved - eps;
      args[i].SyncCopyFromCPU(x.data(), x.size());
      const double minus = loss();
      x[j] = saved;
      args[i].SyncCopyFromCPU(x.data(), x.size());
      numeric[j] = (plus - minus) / (2 * eps);
    }
    EXPECT_TRUE(AllClose(analytic, numeric, 1e-4, 1e-6))
        << op << ": second-order gradient of argument "
        << grad.ListArguments()[i];
  }
}

TEST(HigherOrderGradient, BroadcastArithmetic) {
  const NDArray head = RandomArray({2, 3}, DType::kFloat32, -1, 1, 5);
  for (const char* op : {"broadcast_mul", "broadcast_div", "broadcast_power",
                         "broadcast_add", "broadcast_maximum"}) {
    CheckSecondOrder(op, {},
                     {RandomArray({2, 3}, DType::kFloat32, 0.5, 2, 1),
                      RandomArray({3}, DType::kFloat32, 0.5, 2, 2)},
                     head);
  }
}

TEST(HigherOrderGradient, ReductionsAndShapes) {
  const NDArray x = RandomArray({2, 3, 4}, DType::kFloat32, 0.5, 2, 1);
  // The first gradients of these are linear in the head (and constant or
  // piecewise constant in x), so this checks the helper ops' gradients.
  CheckSecondOrder("mean", {{"axis", "1"}}, {x},
                   RandomArray({2, 4}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("max", {{"axis", "(0,2)"}, {"keepdims", "1"}}, {x},
                   RandomArray({1, 3, 1}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder(
      "slice",
      {{"begin", "(1,None,3)"}, {"end", "(2,2,0)"}, {"step", "(1,1,-2)"}}, {x},
      RandomArray({1, 2, 2}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("take", {{"axis", "2"}},
                   {x, ArrayOf({2}, {3, 3}, DType::kInt64)},
                   RandomArray({2, 3, 2}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("Concat", {{"num_args", "2"}, {"dim", "1"}},
                   {x, RandomArray({2, 1, 4})},
                   RandomArray({2, 4, 4}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("broadcast_to", {{"shape", "(2,2,3,4)"}}, {x},
                   RandomArray({2, 2, 3, 4}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("Cast", {{"dtype", "float64"}}, {x},
                   RandomArray({2, 3, 4}, DType::kFloat32, -1, 1, 2));
}

}  // namespace
}  // namespace testing
}  // namespace mx
