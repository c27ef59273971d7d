#include "imperative/graph_runner.h"

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "graph/pass.h"
#include "imperative/imperative.h"

namespace mx {

GraphRunner::GraphRunner(const Symbol& symbol, Context ctx,
                         const std::vector<TShape>& in_shapes,
                         const std::vector<DType>& in_types,
                         const std::string& who)
    : ctx_(ctx), graph_(symbol) {
  graph_.SetAttr("shape_inputs", in_shapes);
  graph_.SetAttr("dtype_inputs", in_types);
  graph_ = ApplyPasses(graph_, {"InferShape", "InferType"});
  if (graph_.GetAttr<size_t>("shape_num_unknown_nodes") > 0) {
    throw ShapeError(who + ": cannot infer all shapes:\n" +
                     graph_.GetAttr<std::string>("shape_unknown_report"));
  }
  if (graph_.GetAttr<size_t>("dtype_num_unknown_nodes") > 0) {
    throw DTypeError(who + ": cannot infer all dtypes:\n" +
                     graph_.GetAttr<std::string>("dtype_unknown_report"));
  }
  graph_ = ApplyPass(graph_, "PlanMemory");
  blocks_ = MakeBlocks();
}

std::vector<NDArray> GraphRunner::MakeBlocks() const {
  std::vector<NDArray> blocks;
  for (size_t bytes : graph_.GetAttr<std::vector<size_t>>("storage_bytes")) {
    blocks.emplace_back(TShape({static_cast<int64_t>(bytes)}), ctx_,
                        DType::kUInt8);
  }
  return blocks;
}

std::vector<NDArray> GraphRunner::Run(const std::vector<NDArray>& inputs,
                                      bool is_train, bool fresh_blocks,
                                      bool fresh_outputs) const {
  State state = Prepare(inputs, fresh_blocks, fresh_outputs);
  RunNodes(&state, 0, num_nodes(), is_train);
  return Outputs(state);
}

GraphRunner::State GraphRunner::Prepare(const std::vector<NDArray>& inputs,
                                        bool fresh_blocks,
                                        bool fresh_outputs) const {
  const IndexedGraph& idx = graph_.indexed_graph();
  const auto& shapes = graph_.GetAttr<std::vector<TShape>>("shape");
  const auto& types = graph_.GetAttr<std::vector<DType>>("dtype");
  const auto& storage_id = graph_.GetAttr<std::vector<int>>("storage_id");
  const std::vector<NDArray> blocks = fresh_blocks ? MakeBlocks() : blocks_;
  std::vector<bool> is_output(idx.num_node_entries(), false);
  if (fresh_outputs) {
    for (const auto& e : idx.outputs()) is_output[idx.entry_id(e)] = true;
  }
  State state;
  std::vector<NDArray>& entries = state.entries;
  entries.assign(idx.num_node_entries(), NDArray());
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries[idx.entry_id(idx.input_nodes()[i], 0)] = inputs[i];
  }
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node& node = *idx[nid].source;
    if (node.is_variable()) continue;
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      const uint32_t eid = idx.entry_id(nid, i);
      entries[eid] = is_output[eid] ? NDArray(shapes[eid], ctx_, types[eid])
                                    : blocks[storage_id[eid]].ViewAs(
                                          shapes[eid], types[eid]);
    }
  }
  return state;
}

void GraphRunner::SetInput(State* state, size_t i, const NDArray& value) const {
  const IndexedGraph& idx = graph_.indexed_graph();
  state->entries[idx.entry_id(idx.input_nodes()[i], 0)] = value;
}

void GraphRunner::RunNodes(State* state, uint32_t begin, uint32_t end,
                           bool is_train) const {
  const IndexedGraph& idx = graph_.indexed_graph();
  std::vector<NDArray>& entries = state->entries;
  imperative::TrainingScope mode(is_train);
  imperative::RecordingScope not_recorded(false);
  imperative::InvokeOptions options;
  options.ctx = ctx_;
  for (uint32_t nid = begin; nid < end; ++nid) {
    const Node& node = *idx[nid].source;
    if (node.is_variable()) continue;
    std::vector<NDArray> in, out;
    for (const auto& e : idx[nid].inputs)
      in.push_back(entries[idx.entry_id(e)]);
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      out.push_back(entries[idx.entry_id(nid, i)]);
    }
    imperative::Invoke(node.attrs, in, &out, options);
  }
}

std::vector<NDArray> GraphRunner::Outputs(const State& state) const {
  const IndexedGraph& idx = graph_.indexed_graph();
  std::vector<NDArray> outputs;
  for (const auto& e : idx.outputs())
    outputs.push_back(state.entries[idx.entry_id(e)]);
  return outputs;
}

std::string HeadGradName(size_t i) {
  return absl::StrCat("__head_grad", i, "__");
}

Symbol WithGradients(const Symbol& symbol, const std::vector<NodePtr>& xs) {
  std::vector<NodeEntry> heads, x_entries;
  for (size_t i = 0; i < symbol.outputs.size(); ++i) {
    heads.push_back(Symbol::Variable(HeadGradName(i)).outputs[0]);
  }
  for (const NodePtr& x : xs) x_entries.push_back(NodeEntry{x, 0, 0});
  Graph g(symbol);
  g.SetAttr("grad_ys", symbol.outputs);
  g.SetAttr("grad_ys_out_grad", heads);
  g.SetAttr("grad_xs", x_entries);
  const Graph grads = ApplyPass(g, "Gradient");
  Symbol out = symbol;
  out.outputs.insert(out.outputs.end(), grads.outputs.begin(),
                     grads.outputs.end());
  return out;
}

size_t GraphRunner::planned_bytes() const {
  return graph_.GetAttr<size_t>("memory_planned_bytes");
}

size_t GraphRunner::bytes_without_reuse() const {
  return graph_.GetAttr<size_t>("memory_bytes_without_reuse");
}

}  // namespace mx
