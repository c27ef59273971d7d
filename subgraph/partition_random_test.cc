// Property-based: random DAGs with random claimed op sets. The partitioned
// graph must be acyclic, list the same inputs in the same order and compute
// the same outputs.
#include <random>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "subgraph/partition_graph.h"
#include "testing/op_test_util.h"
#include "testing/subgraph_test_util.h"

namespace mx {
namespace {

// Three-colour DFS over inputs and control dependencies.
bool IsAcyclic(const Symbol& s) {
  absl::flat_hash_map<const Node*, int> colour;  // 1 open, 2 done.
  std::vector<std::pair<const Node*, size_t>> stack;
  for (const NodeEntry& head : s.outputs) {
    if (colour[head.node.get()] != 0) continue;
    stack.emplace_back(head.node.get(), 0);
    colour[head.node.get()] = 1;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const size_t total = n->inputs.size() + n->control_deps.size();
      if (next == total) {
        colour[n] = 2;
        stack.pop_back();
        continue;
      }
      const Node* c = next < n->inputs.size()
                          ? n->inputs[next].node.get()
                          : n->control_deps[next - n->inputs.size()].get();
      ++next;
      const int col = colour[c];
      if (col == 1) return false;
      if (col == 0) {
        colour[c] = 1;
        stack.emplace_back(c, 0);
      }
    }
  }
  return true;
}

TEST(PartitionRandom, AcyclicSameInputsSameOutputs) {
  std::mt19937 rng(2024);
  int partitioned_graphs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Symbol sym =
        testing::RandomDag(&rng, std::uniform_int_distribution<int>(1, 4)(rng),
                           std::uniform_int_distribution<int>(2, 24)(rng));
    std::vector<std::string> names;
    for (const auto& spec : testing::DefaultRandomOps()) {
      if (rng() % 2) names.push_back(spec.op);
    }
    SetSubgraphPropertyOpNames("default", names);
    const Symbol part = PartitionGraph(sym, "default");
    RemoveSubgraphPropertyOpNames("default");
    partitioned_graphs += testing::CountOps(part, "_default_subgraph_op") > 0;
    ASSERT_TRUE(IsAcyclic(part)) << sym.Print();
    ASSERT_EQ(part.ListInputNames(), sym.ListInputNames()) << sym.Print();
    auto a =
        Executor::SimpleBind(sym, Context::CPU(), {}, {}, OpReqType::kNullOp);
    auto b =
        Executor::SimpleBind(part, Context::CPU(), {}, {}, OpReqType::kNullOp);
    testing::FillRandom(a.get(), -1, 1);
    testing::CopyInputs(*a, b.get());
    a->Forward();
    b->Forward();
    ASSERT_TRUE(testing::SameOutputs(*a, *b)) << sym.Print();
  }
  EXPECT_GT(partitioned_graphs, 200);
}

}  // namespace
}  // namespace mx
