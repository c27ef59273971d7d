#include "testing/subgraph_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "subgraph/partition_graph.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {

std::unique_ptr<Executor> SimpleBindWithBackend(
    const Symbol& net, const std::string& backend,
    const std::map<std::string, TShape>& shapes,
    const std::map<std::string, DType>& dtypes) {
  ScopedEnv env("MX_SUBGRAPH_BACKEND", backend);
  return Executor::SimpleBind(net, Context::CPU(), shapes, dtypes,
                              OpReqType::kNullOp);
}

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

int ExpectSameForwardBackward(const Symbol& reference, const Symbol& tested,
                              Context ctx,
                              const std::map<std::string, TShape>& shapes,
                              OpReqType req, double tol) {
  std::map<std::string, DType> types;
  for (const auto& [name, shape] : shapes) types[name] = DType::kFloat64;
  std::unique_ptr<Executor> ref;
  {
    ScopedEnv unpartitioned("MX_SUBGRAPH_BACKEND", "NONE");
    ref = Executor::SimpleBind(reference, Context::CPU(), shapes, types, req);
  }
  auto got = Executor::SimpleBind(tested, ctx, shapes, types, req);
  FillRandom(ref.get(), -1, 1);
  CopyInputs(*ref, got.get());
  std::vector<NDArray> ref_heads, got_heads;
  for (size_t i = 0; i < ref->outputs().size(); ++i) {
    ref_heads.push_back(RandomArray(ref->outputs()[i].shape(), DType::kFloat64,
                                    -1, 1, static_cast<uint32_t>(11 + i)));
    got_heads.push_back(ref_heads.back().Copy(ctx));
  }
  for (int round = 0; round < 2; ++round) {
    ref->Forward(true);
    ref->Backward(ref_heads);
    got->Forward(true);
    got->Backward(got_heads);
  }
  for (const auto& [name, g] : ref->grad_dict()) {
    EXPECT_TRUE(
        AllClose(ToDouble(got->grad_dict().at(name)), ToDouble(g), tol, tol))
        << "gradient of " << name;
  }
  if (got->outputs().size() != ref->outputs().size()) {
    ADD_FAILURE() << got->outputs().size() << " outputs, want "
                  << ref->outputs().size();
    return -1;
  }
  for (size_t i = 0; i < ref->outputs().size(); ++i) {
    EXPECT_TRUE(AllClose(ToDouble(got->outputs()[i]),
                         ToDouble(ref->outputs()[i]), tol, tol))
        << "output " << i;
  }
  return CountOps(got->symbol(), "_default_subgraph_op");
}

Symbol PartitionWithDefault(const Symbol& symbol,
                            const std::vector<std::string>& op_names) {
  SetSubgraphPropertyOpNames("default", op_names);
  const Symbol partitioned = PartitionGraph(symbol, "default");
  RemoveSubgraphPropertyOpNames("default");
  return partitioned;
}

::testing::AssertionResult SameOutputs(const Executor& a, const Executor& b) {
  return NearOutputs(a, b, 0);
}

::testing::AssertionResult NearOutputs(const Executor& a, const Executor& b,
                                       double rtol) {
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
    double scale = 0;
    for (double v : y) {
      if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
    }
    for (size_t k = 0; k < x.size(); ++k) {
      // rtol 0: bitwise. Otherwise equal values (infinities too) and NaN
      // against NaN are the same, and others must be within rtol.
      const bool same =
          rtol <= 0
              ? std::memcmp(&x[k], &y[k], sizeof(double)) == 0
              : x[k] == y[k] || (std::isnan(x[k]) && std::isnan(y[k])) ||
                    std::abs(x[k] - y[k]) <= rtol * (std::abs(y[k]) + scale);
      if (!same) {
        return ::testing::AssertionFailure()
               << "output " << i << "[" << k << "]: " << x[k] << " vs " << y[k]
               << (rtol > 0 ? " (rtol " + std::to_string(rtol) + ")" : "");
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
    auto exec = SimpleBindWithBackend(symbol, "default", shapes, {});
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

namespace {

Symbol Var(const std::string& name, const TShape& shape = TShape()) {
  return Symbol::Variable(name, shape);
}
Symbol Op(const std::string& op, const std::vector<Symbol>& in,
          const AttrDict& attrs = {}, const std::string& name = "") {
  return Symbol::Create(op, in, attrs, name);
}

Symbol Diamond() {
  Symbol e = Op("exp", {Var("data", {2, 3, 10, 10})}, {}, "exp0");
  return Op("elemwise_add",
            {Op("cos", {e}, {}, "cos0"), Op("sin", {e}, {}, "sin0")}, {},
            "add0");
}

}  // namespace

SubgraphNet TwoOutputNet() {
  Symbol x = Var("x"), w = Var("w");
  Symbol a = Op("exp", {x}, {}, "a");
  Symbol b = Op("sin", {a}, {}, "b");
  Symbol c = Op("elemwise_mul", {a, w}, {}, "c");
  Symbol d = Op("tanh", {c}, {}, "d");
  Symbol e = Op("elemwise_add", {b, d}, {}, "e");
  Symbol f = Op("elemwise_mul", {e, x}, {}, "f");
  return {Symbol::Group({Op("_mul_scalar", {f}, {{"scalar", "3"}}, "g"), b}),
          {"exp", "sin", "elemwise_mul", "elemwise_add", "_mul_scalar"}};
}

SubgraphNet ScaledSumNet() {
  Symbol x = Var("x"), w = Var("w");
  return {Op("_mul_scalar", {Op("elemwise_add", {x, w}, {}, "sum")},
             {{"scalar", "3"}}, "scaled"),
          {"elemwise_add", "_mul_scalar"}};
}

Symbol SeedStructure(int i) {
  switch (i) {
    case 1: {
      Symbol data1 = Var("data1", {2, 3, 10, 10}), data2 = Var("data2");
      Symbol conv1 =
          Op("Convolution", {data1, data2},
             {{"kernel", "(2,2)"}, {"num_filter", "1"}, {"no_bias", "true"}},
             "conv1");
      Symbol conv2 =
          Op("Convolution", {data2},
             {{"kernel", "(1,1)"}, {"num_filter", "1"}, {"no_bias", "true"}},
             "conv2");
      return Symbol::Group({conv1, conv2});
    }
    case 2:
      return Diamond();
    case 3:
      return Op("BatchNorm", {Op("BatchNorm", {Diamond()}, {}, "bn0")}, {},
                "bn1");
    case 4: {
      Symbol e = Op("exp", {Var("data", {2, 3, 10, 10})});
      return Symbol::Group({e, e, e});
    }
    case 5: {
      Symbol data = Var("data", {2, 3, 10, 10});
      return Op("elemwise_add", {data, data});
    }
    case 6: {
      // data2 is declared (1, 0, 2, 2) in the seed, 0 meaning unknown.
      Symbol data1 = Var("data1", {3, 3, 10, 10});
      Symbol data3 = Op("sin", {Var("data2", {1, -1, 2, 2})}, {}, "sin6");
      return Op("Convolution", {data1, data3},
                {{"kernel", "(2,2)"}, {"num_filter", "1"}}, "conv6");
    }
    case 7: {
      Symbol s = Op("sin", {Var("data", {1})}, {}, "sin7");
      Symbol c = Op("cos", {s});
      for (int k = 0; k < 5; ++k) c = Op("cos", {c});
      return Op("elemwise_add", {s, c}, {}, "add7");
    }
    default:
      ADD_FAILURE() << "no seed structure " << i;
      return Symbol();
  }
}

const std::vector<RandomOpSpec>& DefaultRandomOps() {
  static const auto* ops = new std::vector<RandomOpSpec>{
      {"sin", 1, {}},
      {"cos", 1, {}},
      {"tanh", 1, {}},
      {"relu", 1, {}},
      {"negative", 1, {}},
      {"elemwise_add", 2, {}},
      {"elemwise_mul", 2, {}},
      {"elemwise_sub", 2, {}},
      {"_mul_scalar", 1, {{"scalar", "0.5"}}},
      {"_plus_scalar", 1, {{"scalar", "1"}}},
  };
  return *ops;
}

Symbol RandomDag(std::mt19937* rng, int num_vars, int num_ops,
                 const std::vector<RandomOpSpec>& ops) {
  std::vector<Symbol> pool;
  for (int i = 0; i < num_vars; ++i) {
    pool.push_back(Symbol::Variable("x" + std::to_string(i), {3, 4}));
  }
  auto pick = [&] {
    return pool[std::uniform_int_distribution<size_t>(0,
                                                      pool.size() - 1)(*rng)];
  };
  for (int i = 0; i < num_ops; ++i) {
    const RandomOpSpec& spec =
        ops[std::uniform_int_distribution<size_t>(0, ops.size() - 1)(*rng)];
    std::vector<Symbol> in;
    for (int k = 0; k < spec.arity; ++k) in.push_back(pick());
    pool.push_back(
        Symbol::Create(spec.op, in, spec.attrs, "n" + std::to_string(i)));
  }
  std::vector<Symbol> outs{pool.back()};
  const int extra = std::uniform_int_distribution<int>(0, 3)(*rng);
  for (int i = 0; i < extra; ++i) {
    Symbol s = pick();
    if (!s.outputs[0].node->is_variable()) outs.push_back(s);
  }
  return Symbol::Group(outs);
}

}  // namespace testing
}  // namespace mx
