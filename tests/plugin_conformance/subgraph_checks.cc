// Subgraph properties: for every backend the plugin registers, the seed's
// structures 1-7 and random DAGs (over the ops the backend claims plus
// others) partition to graphs computing identical outputs, and equal
// gradients unless the backend is inference-only.
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "base/error.h"
#include "graph/node.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "subgraph/partition_graph.h"
#include "subgraph/subgraph_property.h"
#include "testing/op_test_util.h"
#include "testing/subgraph_test_util.h"
#include "tests/plugin_conformance/conformance.h"

namespace mx {
namespace conformance {
namespace {

using testing::RandomOpSpec;

bool InferenceOnly(const std::string& backend) {
  for (const auto& p : SubgraphBackendRegistry::Get()->Lookup(backend)) {
    if (p->inference_only()) return true;
  }
  return false;
}

// Ops a random DAG may use: the default pool and the plugin's new ops of
// arity 1 or 2 that map (3, 4) inputs to a (3, 4) output.
std::vector<RandomOpSpec> Candidates() {
  std::vector<RandomOpSpec> ops = testing::DefaultRandomOps();
  for (const std::string& name : Plugin().ops) {
    if (ExpectedToFail(name)) continue;
    const Op& op = OpRegistry::Get()->Lookup(name);
    const AttrDict& dict = NewOpAttrs(name)[0];
    try {
      const NodeAttrs attrs = MakeAttrs(op, dict);
      const int n = op.NumInputs(attrs);
      if (n < 1 || n > 2 || op.NumOutputs(attrs) != 1) continue;
      std::vector<TShape> in(n, TShape{3, 4}), out(1);
      op.infer_shape()(attrs, &in, &out);
      if (out[0] == TShape{3, 4}) ops.push_back({name, n, dict});
    } catch (const Error&) {
    }
  }
  return ops;
}

// The candidates the backend claims, found by partitioning a two-node
// chain of each.
std::vector<RandomOpSpec> Claimed(const std::string& backend,
                                  const std::vector<RandomOpSpec>& ops) {
  std::vector<RandomOpSpec> claimed;
  for (const RandomOpSpec& spec : ops) {
    std::vector<Symbol> in;
    for (int k = 0; k < spec.arity; ++k) {
      in.push_back(Symbol::Variable("x" + std::to_string(k), {3, 4}));
    }
    Symbol s = Symbol::Create(spec.op, in, spec.attrs);
    in[0] = s;
    s = Symbol::Create(spec.op, in, spec.attrs);
    PartitionReport report;
    PartitionGraph(s, backend, {}, &report);
    if (!report.subgraphs.empty()) claimed.push_back(spec);
  }
  return claimed;
}

// Whether every op of the graph has a gradient.
bool Differentiable(const Symbol& sym) {
  bool all = true;
  DFSVisit(sym.outputs, [&](const NodePtr& n) {
    all &=
        n->is_variable() || n->op()->GetAttr<FGradient>("FGradient") != nullptr;
  });
  return all;
}

// MX_CONFORMANCE_SUBGRAPH_RTOL: 0 (the default) asks partitioned graphs to
// compute bitwise what the unpartitioned ones do; a plugin whose property
// changes the algorithm (the onednn property's fused convolutions run
// oneDNN's direct convolution on blocked layouts) states its tolerance.
double SubgraphRtol() {
  const char* v = std::getenv("MX_CONFORMANCE_SUBGRAPH_RTOL");
  return v == nullptr ? 0.0 : std::atof(v);
}

// The same graph in float16 (inference), partitioned as a user's bind
// partitions it (MX_SUBGRAPH_BACKEND: after type inference, so a property
// sees the dtypes and may leave float16 nodes alone): where the
// unpartitioned graph runs (its ops take float16 throughout), the
// partitioned one computes the same, or, when the plugin does not require
// float16 (MX_CONFORMANCE_REQUIRED_DTYPES), its ops may refuse it with an
// mx::Error (counted).
void CheckFloat16Partition(const Symbol& sym, const std::string& backend) {
  std::map<std::string, DType> half;
  for (const std::string& name : sym.ListInputNames()) {
    half[name] = DType::kFloat16;
  }
  std::unique_ptr<Executor> a;
  try {
    a = Executor::SimpleBind(sym, Context::CPU(), {}, half, OpReqType::kNullOp);
    testing::FillRandom(a.get(), -1, 1);
    a->Forward();
    for (const NDArray& out : a->outputs()) out.WaitToRead();
  } catch (const Error&) {
    return;  // An op of the graph has no float16.
  }
  ++Counts().float16_graphs;
  std::unique_ptr<Executor> b;
  try {
    b = testing::SimpleBindWithBackend(sym, backend, {}, half);
    testing::CopyInputs(*a, b.get());
    b->Forward();
    for (const NDArray& out : b->outputs()) out.WaitToRead();
  } catch (const Error& e) {
    EXPECT_FALSE(DTypeRequired(DType::kFloat16))
        << "the float16 graph runs but its partition does not: " << e.what()
        << "\n"
        << sym.Print();
    ++Counts().float16_graphs_refused;
    return;
  }
  EXPECT_TRUE(testing::NearOutputs(*a, *b, SubgraphRtol()))
      << "float16 " << sym.Print();
}

void CheckPartition(const Symbol& sym, const std::string& backend,
                    bool inference_only) {
  PartitionReport report;
  const Symbol part = PartitionGraph(sym, backend, {}, &report);
  ++Counts().graphs;
  Counts().subgraphs += static_cast<int>(report.subgraphs.size());
  ASSERT_EQ(part.ListInputNames(), sym.ListInputNames());
  const bool grads = !inference_only && Differentiable(sym);
  const OpReqType req = grads ? OpReqType::kWriteTo : OpReqType::kNullOp;
  auto a = Executor::SimpleBind(sym, Context::CPU(), {}, {}, req);
  auto b = Executor::SimpleBind(part, Context::CPU(), {}, {}, req);
  testing::FillRandom(a.get(), -1, 1);
  testing::CopyInputs(*a, b.get());
  a->Forward();
  b->Forward();
  ASSERT_TRUE(testing::NearOutputs(*a, *b, SubgraphRtol())) << sym.Print();
  CheckFloat16Partition(sym, backend);
  if (!grads) return;
  ++Counts().graph_grads;
  testing::CopyInputs(*a, b.get());  // Restore aux states for training.
  a->Forward(/*is_train=*/true);
  b->Forward(/*is_train=*/true);
  EXPECT_TRUE(testing::NearOutputs(*a, *b, SubgraphRtol()))
      << "training " << sym.Print();
  a->Backward();
  b->Backward();
  const auto ga = a->grad_dict(), gb = b->grad_dict();
  ASSERT_EQ(ga.size(), gb.size());
  for (const auto& [name, g] : ga) {
    EXPECT_TRUE(testing::AllClose(testing::ToDouble(gb.at(name)),
                                  testing::ToDouble(g), 1e-6, 1e-7))
        << "gradient of " << name << " in " << sym.Print();
  }
}

TEST(SubgraphProperties, SeedStructuresAndRandomDagsComputeTheSame) {
  for (const std::string& backend : Plugin().backends) {
    SCOPED_TRACE("backend " + backend);
    ++Counts().properties;
    const bool inference_only = InferenceOnly(backend);
    const int before = Counts().subgraphs;
    for (int i = 1; i <= 7; ++i) {
      SCOPED_TRACE("seed structure " + std::to_string(i));
      CheckPartition(testing::SeedStructure(i), backend, inference_only);
    }
    const std::vector<RandomOpSpec> candidates = Candidates();
    const std::vector<RandomOpSpec> claimed = Claimed(backend, candidates);
    // Claimed ops weigh three times as much as the others.
    std::vector<RandomOpSpec> pool = candidates;
    for (int k = 0; k < 2; ++k) {
      pool.insert(pool.end(), claimed.begin(), claimed.end());
    }
    std::mt19937 rng(11);
    for (int trial = 0; trial < 60; ++trial) {
      SCOPED_TRACE("random DAG " + std::to_string(trial));
      CheckPartition(testing::RandomDag(
                         &rng, std::uniform_int_distribution<int>(1, 4)(rng),
                         std::uniform_int_distribution<int>(2, 20)(rng), pool),
                     backend, inference_only);
    }
    std::printf(
        "backend %s: claims %zu of %zu candidate ops; %d subgraphs "
        "formed over 7 seed structures and 60 random DAGs%s\n",
        backend.c_str(), claimed.size(), candidates.size(),
        Counts().subgraphs - before, inference_only ? " (inference only)" : "");
  }
}

}  // namespace
}  // namespace conformance
}  // namespace mx
