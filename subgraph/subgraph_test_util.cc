#include "subgraph/subgraph_test_util.h"

#include <cstdlib>
#include <cstring>
#include <functional>

#include "backends/cpu/op_test_util.h"
#include "subgraph/partition_graph.h"

namespace mx {
namespace testing {

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
  if (const char* old = std::getenv(name)) {
    had_ = true;
    old_ = old;
  }
  setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (had_) {
    setenv(name_.c_str(), old_.c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

void FillRandom(Executor* exec, double lo, double hi) {
  auto fill = [&](const std::map<std::string, NDArray>& arrays) {
    for (const auto& [name, a] : arrays) {
      const uint32_t seed =
          static_cast<uint32_t>(std::hash<std::string>()(name));
      CopyFromTo(RandomArray(a.shape(), a.dtype(), lo, hi, seed), a);
    }
  };
  fill(exec->arg_dict());
  fill(exec->aux_dict());
}

void CopyInputs(const Executor& from, Executor* to) {
  for (const auto& [name, a] : from.arg_dict()) {
    CopyFromTo(a, to->arg_dict().at(name));
  }
  for (const auto& [name, a] : from.aux_dict()) {
    CopyFromTo(a, to->aux_dict().at(name));
  }
}

::testing::AssertionResult SameOutputs(const Executor& a, const Executor& b) {
  if (a.outputs().size() != b.outputs().size()) {
    return ::testing::AssertionFailure()
           << a.outputs().size() << " vs " << b.outputs().size() << " outputs";
  }
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    const std::vector<double> x = ToDouble(a.outputs()[i]);
    const std::vector<double> y = ToDouble(b.outputs()[i]);
    if (x.size() != y.size()) {
      return ::testing::AssertionFailure() << "output " << i << " sizes differ";
    }
    for (size_t k = 0; k < x.size(); ++k) {
      if (std::memcmp(&x[k], &y[k], sizeof(double)) != 0) {
        return ::testing::AssertionFailure()
               << "output " << i << "[" << k << "]: " << x[k] << " vs " << y[k];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

int CountOps(const Symbol& symbol, const std::string& op) {
  int count = 0;
  DFSVisit(symbol.outputs, [&](const NodePtr& n) {
    count += !n->is_variable() && n->op()->name() == op;
  });
  return count;
}

namespace {

void ExpectSameLists(const Symbol& a, const Symbol& b) {
  EXPECT_EQ(a.ListInputNames(), b.ListInputNames());
  EXPECT_EQ(a.ListArguments(), b.ListArguments());
  EXPECT_EQ(a.ListAuxiliaryStates(), b.ListAuxiliaryStates());
}

std::unique_ptr<Executor> BindLike(const Symbol& symbol,
                                   const Executor& shapes_from) {
  std::vector<NDArray> args, aux;
  for (const std::string& name : symbol.ListArguments()) {
    const NDArray a = shapes_from.arg_dict().at(name);
    args.emplace_back(a.shape(), a.ctx(), a.dtype());
    CopyFromTo(a, args.back());
  }
  for (const std::string& name : symbol.ListAuxiliaryStates()) {
    const NDArray a = shapes_from.aux_dict().at(name);
    aux.emplace_back(a.shape(), a.ctx(), a.dtype());
    CopyFromTo(a, aux.back());
  }
  return Executor::Bind(symbol, Context::CPU(), args, {}, {}, aux);
}

}  // namespace

void CheckFourWays(const Symbol& symbol,
                   const std::vector<std::string>& op_names,
                   const std::map<std::string, TShape>& shapes) {
  const Context cpu = Context::CPU();
  auto reference =
      Executor::SimpleBind(symbol, cpu, shapes, {}, OpReqType::kNullOp);
  FillRandom(reference.get());
  reference->Forward();

  SetSubgraphPropertyOpNames("default", op_names);
  const Symbol partitioned = PartitionGraph(symbol, "default");
  ExpectSameLists(symbol, partitioned);
  {  // 1: partition, then SimpleBind.
    SCOPED_TRACE("partition + SimpleBind");
    auto exec =
        Executor::SimpleBind(partitioned, cpu, shapes, {}, OpReqType::kNullOp);
    CopyInputs(*reference, exec.get());
    exec->Forward();
    EXPECT_TRUE(SameOutputs(*reference, *exec));
  }
  {  // 2: MX_SUBGRAPH_BACKEND, SimpleBind.
    SCOPED_TRACE("MX_SUBGRAPH_BACKEND + SimpleBind");
    ScopedEnv env("MX_SUBGRAPH_BACKEND", "default");
    auto exec =
        Executor::SimpleBind(symbol, cpu, shapes, {}, OpReqType::kNullOp);
    EXPECT_EQ(CountOps(exec->symbol(), "_default_subgraph_op"),
              CountOps(partitioned, "_default_subgraph_op"));
    CopyInputs(*reference, exec.get());
    exec->Forward();
    EXPECT_TRUE(SameOutputs(*reference, *exec));
  }
  {  // 3: partition, then Bind.
    SCOPED_TRACE("partition + Bind");
    auto exec = BindLike(partitioned, *reference);
    exec->Forward();
    EXPECT_TRUE(SameOutputs(*reference, *exec));
  }
  {  // 4: MX_SUBGRAPH_BACKEND, Bind.
    SCOPED_TRACE("MX_SUBGRAPH_BACKEND + Bind");
    ScopedEnv env("MX_SUBGRAPH_BACKEND", "default");
    auto exec = BindLike(symbol, *reference);
    exec->Forward();
    EXPECT_TRUE(SameOutputs(*reference, *exec));
  }
  RemoveSubgraphPropertyOpNames("default");
}

}  // namespace testing
}  // namespace mx
