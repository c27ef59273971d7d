#include "testing/grad_check.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "base/error.h"
#include "graph/graph.h"
#include "graph/pass.h"
#include "graph/symbol.h"
#include "imperative/executor.h"
#include "imperative/imperative.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray AsFloat64(const NDArray& a) {
  if (!IsFloat(a.dtype())) return a.Copy(a.ctx());
  NDArray out(a.shape(), a.ctx(), DType::kFloat64);
  CopyFromTo(a, out);
  return out;
}

double Loss(Executor* exec, const std::vector<std::vector<double>>& head,
            const GradCheckOptions& o) {
  random::Seed(o.seed);
  exec->Forward(o.is_train);
  double loss = 0;
  for (size_t k = 0; k < head.size(); ++k) {
    const std::vector<double> y = ToDouble(exec->outputs()[k]);
    for (size_t j = 0; j < y.size(); ++j) loss += head[k][j] * y[j];
  }
  return loss;
}

}  // namespace

::testing::AssertionResult CheckGradient(const std::string& op,
                                         const AttrDict& attrs,
                                         const std::vector<NDArray>& inputs,
                                         const GradCheckOptions& o) {
  std::vector<Symbol> vars;
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    vars.push_back(Symbol::Variable(name));
    position[name] = i;
  }
  const Symbol sym = Symbol::Create(op, vars, attrs, "checked");
  std::vector<NDArray> values;
  for (const NDArray& a : inputs) values.push_back(AsFloat64(a));

  std::vector<NDArray> args, grads, aux;
  std::vector<OpReqType> reqs;
  std::vector<size_t> checked;  // Input positions, parallel to grads.
  for (const std::string& name : sym.ListArguments()) {
    const size_t i = position.at(name);
    args.push_back(values[i]);
    const bool skip = !IsFloat(values[i].dtype()) ||
                      std::count(o.skip.begin(), o.skip.end(), i) > 0;
    reqs.push_back(skip ? OpReqType::kNullOp : OpReqType::kWriteTo);
    grads.push_back(
        skip ? NDArray()
             : NDArray(values[i].shape(), values[i].ctx(), DType::kFloat64));
    if (!skip) checked.push_back(i);
  }
  for (const std::string& name : sym.ListAuxiliaryStates()) {
    aux.push_back(values[position.at(name)]);
  }
  if (checked.empty()) {
    return ::testing::AssertionFailure() << op << ": no input to check";
  }
  auto exec = Executor::Bind(sym, Context::CPU(), args, grads, reqs, aux);

  // Random head gradients, one per visible output.
  random::Seed(o.seed);
  exec->Forward(o.is_train);
  std::mt19937 gen(1234);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<std::vector<double>> head;
  std::vector<NDArray> head_arrays;
  for (const NDArray& y : exec->outputs()) {
    std::vector<double> h(static_cast<size_t>(y.size()));
    for (double& v : h) v = dist(gen);
    head.push_back(h);
    head_arrays.push_back(NDArray::FromVector<double>(y.shape(), h));
  }
  try {
    exec->Backward(head_arrays);
  } catch (const Error& e) {
    return ::testing::AssertionFailure()
           << op << ": backward failed: " << e.what();
  }
  std::vector<std::vector<double>> analytic;
  for (const NDArray& g : grads) {
    if (!g.is_none()) analytic.push_back(ToDouble(g));
  }

  for (size_t c = 0; c < checked.size(); ++c) {
    NDArray x = values[checked[c]];
    std::vector<double> data = ToDouble(x);
    std::vector<double> numeric(data.size());
    for (size_t j = 0; j < data.size(); ++j) {
      const double saved = data[j];
      data[j] = saved + o.eps;
      x.SyncCopyFromCPU(data.data(), data.size());
      const double plus = Loss(exec.get(), head, o);
      data[j] = saved - o.eps;
      x.SyncCopyFromCPU(data.data(), data.size());
      const double minus = Loss(exec.get(), head, o);
      data[j] = saved;
      x.SyncCopyFromCPU(data.data(), data.size());
      numeric[j] = (plus - minus) / (2 * o.eps);
    }
    ::testing::AssertionResult close =
        AllClose(analytic[c], numeric, o.rtol, o.atol);
    if (!close) {
      return ::testing::AssertionFailure()
             << op << ": gradient of input " << checked[c]
             << " (analytic vs numeric): " << close.message();
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<std::vector<double>> Gradients(const std::string& op,
                                           const AttrDict& attrs,
                                           const std::vector<NDArray>& inputs,
                                           const std::vector<NDArray>& heads) {
  std::vector<Symbol> vars;
  std::vector<NDArray> grads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    vars.push_back(Symbol::Variable("in" + std::to_string(i)));
    grads.emplace_back(inputs[i].shape(), inputs[i].ctx(), inputs[i].dtype());
  }
  auto exec = Executor::Bind(
      Symbol::Create(op, vars, attrs, "n"), Context::CPU(), inputs, grads,
      std::vector<OpReqType>(inputs.size(), OpReqType::kWriteTo), {});
  exec->Forward();
  exec->Backward(heads);
  std::vector<std::vector<double>> out;
  for (const NDArray& g : grads) out.push_back(ToDouble(g));
  return out;
}

namespace {

// The symbol of d<head, op(inputs)>/d(inputs[wrt]): arguments in0.. and
// head.
Symbol FirstGradient(const std::string& op, const AttrDict& attrs, int n,
                     int wrt) {
  std::vector<Symbol> vars;
  for (int i = 0; i < n; ++i) {
    vars.push_back(Symbol::Variable("in" + std::to_string(i)));
  }
  const Symbol y = Symbol::Create(op, vars, attrs, "f");
  Graph g(y);
  g.SetAttr("grad_ys", y.outputs);
  g.SetAttr("grad_ys_out_grad",
            std::vector<NodeEntry>{Symbol::Variable("head").outputs[0]});
  g.SetAttr("grad_xs", std::vector<NodeEntry>{vars[wrt].outputs[0]});
  Symbol grad;
  grad.outputs = ApplyPass(g, "Gradient").outputs;
  return grad;
}

}  // namespace

void CheckSecondOrder(const std::string& op, const AttrDict& attrs,
                      const std::vector<NDArray>& inputs, const NDArray& head,
                      int wrt) {
  const Symbol grad =
      FirstGradient(op, attrs, static_cast<int>(inputs.size()), wrt);
  std::vector<NDArray> args;
  for (const std::string& name : grad.ListArguments()) {
    const NDArray& a =
        name == "head" ? head : inputs[std::stoi(name.substr(2))];
    args.push_back(AsFloat64(a));  // Indices: kept, not differentiated.
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

}  // namespace testing
}  // namespace mx
