#include "imperative/graph_runner.h"

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "base/error.h"
#include "engine/engine.h"
#include "graph/pass.h"
#include "imperative/imperative.h"

namespace mx {
namespace {

int BulkMaxNodes() {
  static const int kNodes =
      static_cast<int>(env::GetInt("MX_EXEC_BULK_MAX_NODES", 15, 0, 1 << 20));
  return kNodes;
}

// Whether node `nid` can run inside a bulk segment: a plain kernel for the
// context, no random numbers, and every planned alias of an output with an
// input is an in-place pairing the op allows on equal shapes and dtypes.
bool Bulkable(const Graph& g, uint32_t nid, Context ctx) {
  const IndexedGraph& idx = g.indexed_graph();
  const Node& node = *idx[nid].source;
  const Op& op = *node.op();
  const int dev_type =
      ctx.dev_type == Context::kCPUPinned ? Context::kCPU : ctx.dev_type;
  if (op.compute(dev_type) == nullptr || op.compute_dynamic(dev_type) ||
      op.is_dynamic_shape() ||
      op.GetAttr<imperative::FInvoke>("FInvoke") != nullptr) {
    return false;
  }
  for (const ResourceRequest& r : op.Resources(node.attrs)) {
    if (r.type != ResourceRequest::kTempSpace) return false;
  }
  const auto& storage = g.GetAttr<std::vector<int>>("storage_id");
  const auto& shapes = g.GetAttr<std::vector<TShape>>("shape");
  const auto& dtypes = g.GetAttr<std::vector<DType>>("dtype");
  const auto inplace = op.InplaceOptions(node.attrs);
  const auto& inputs = idx[nid].inputs;
  for (uint32_t i = 0; i < node.num_outputs(); ++i) {
    const uint32_t out = idx.entry_id(nid, i);
    for (size_t j = 0; j < inputs.size(); ++j) {
      const uint32_t in = idx.entry_id(inputs[j]);
      if (storage[in] < 0 || storage[in] != storage[out]) continue;
      bool allowed = shapes[in] == shapes[out] && dtypes[in] == dtypes[out];
      bool listed = false;
      for (const auto& [a, b] : inplace) {
        listed |= a == static_cast<int>(j) && b == static_cast<int>(i);
      }
      if (!allowed || !listed) return false;
    }
  }
  return true;
}

// One op of a segment, with everything its kernel needs.
struct SegmentStep {
  const NodeAttrs* attrs;
  const FCompute* compute;
  std::vector<TBlob> in, out;
  std::vector<OpReqType> req;
  bool temp_space = false;
};

struct Segment {
  std::shared_ptr<const Graph> nodes_alive;
  std::vector<SegmentStep> steps;
  bool is_train = false;
};

}  // namespace

GraphRunner::GraphRunner(const Symbol& symbol, Context ctx,
                         const std::vector<TShape>& in_shapes,
                         const std::vector<DType>& in_types,
                         const std::string& who, uint32_t rerun_from_node)
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
  if (rerun_from_node > 0) {
    graph_.SetAttr("memory_rerun_from_node", rerun_from_node);
  }
  graph_ = ApplyPass(graph_, "PlanMemory");
  blocks_ = MakeBlocks();
  OpRegistry::RunPluginHook();  // Plugin kernels take over first.
  const IndexedGraph& idx = graph_.indexed_graph();
  bulk_max_nodes_ = BulkMaxNodes();
  bulk_nodes_.resize(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node& node = *idx[nid].source;
    BulkNode& b = bulk_nodes_[nid];
    b.bulkable = !node.is_variable() && Bulkable(graph_, nid, ctx_);
    if (!b.bulkable) continue;
    // Bulkable ops ask for no resource but temporary space.
    b.temp_space = !node.op()->Resources(node.attrs).empty();
    b.mutated = node.op()->MutateInputs(node.attrs);
  }
  // Outputs that no node reads and the graph does not return are asked
  // for with kNullOp, as MXNet's executors do: kernels skip them (e.g. the
  // data gradient of a first convolution, whose input needs none).
  readers_ = idx.EntryReaders();
  const std::vector<int>& readers = readers_;
  output_reqs_.resize(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node& node = *idx[nid].source;
    if (node.is_variable()) continue;
    std::vector<OpReqType> reqs(node.num_outputs(), OpReqType::kWriteTo);
    bool unread = false;
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      if (readers[idx.entry_id(nid, i)] > 0) continue;
      reqs[i] = OpReqType::kNullOp;
      unread = true;
    }
    if (unread) output_reqs_[nid] = std::move(reqs);
  }
  nodes_alive_ = std::make_shared<const Graph>(graph_);
  node_states_.resize(num_nodes());
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
    CheckInput(i, inputs[i]);
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

void GraphRunner::CheckInput(size_t i, const NDArray& value) const {
  if (value.is_none()) return;
  const IndexedGraph& idx = graph_.indexed_graph();
  const uint32_t eid = idx.entry_id(idx.input_nodes()[i], 0);
  const TShape& shape = graph_.GetAttr<std::vector<TShape>>("shape")[eid];
  const DType dtype = graph_.GetAttr<std::vector<DType>>("dtype")[eid];
  // The plan (and the bulk segments' kernels) assume these.
  const std::string what = absl::StrCat(
      "graph input ", i, " (", idx[idx.input_nodes()[i]].source->name(), ")");
  if (value.ctx() != ctx_) {
    throw InvalidArgument(absl::StrCat(what, " is on ", value.ctx().ToString(),
                                       " but the graph runs on ",
                                       ctx_.ToString()));
  }
  if (value.shape() != shape) {
    throw ShapeError(absl::StrCat(what, " has shape ", value.shape().ToString(),
                                  " but the plan was made for ",
                                  shape.ToString()));
  }
  if (value.dtype() != dtype) {
    throw DTypeError(absl::StrCat(what, " has dtype ", DTypeName(value.dtype()),
                                  " but the plan was made for ",
                                  DTypeName(dtype)));
  }
}

void GraphRunner::SetInput(State* state, size_t i, const NDArray& value) const {
  CheckInput(i, value);
  const IndexedGraph& idx = graph_.indexed_graph();
  state->entries[idx.entry_id(idx.input_nodes()[i], 0)] = value;
}

bool GraphRunner::BindOutput(State* state, size_t i, const NDArray& target,
                             OpReqType req) const {
  const IndexedGraph& idx = graph_.indexed_graph();
  if (i >= idx.outputs().size() || target.is_none() ||
      (req != OpReqType::kWriteTo && req != OpReqType::kAddTo)) {
    return false;
  }
  const auto& e = idx.outputs()[i];
  const uint32_t eid = idx.entry_id(e);
  const Node& node = *idx[e.node_id].source;
  if (node.is_variable() || node.op()->is_dynamic_shape() ||
      readers_[eid] != 1 || target.ctx() != ctx_ ||
      target.shape() != graph_.GetAttr<std::vector<TShape>>("shape")[eid] ||
      target.dtype() != graph_.GetAttr<std::vector<DType>>("dtype")[eid]) {
    return false;
  }
  for (uint32_t nid : idx.input_nodes()) {
    if (target.SharesChunkWith(state->entries[idx.entry_id(nid, 0)])) {
      return false;
    }
  }
  state->entries[eid] = target;
  for (auto& [entry, r] : state->bound) {
    if (entry == eid) {
      r = req;
      return true;
    }
  }
  state->bound.emplace_back(eid, req);
  return true;
}

void GraphRunner::UnbindOutputs(State* state) const {
  const auto& shapes = graph_.GetAttr<std::vector<TShape>>("shape");
  const auto& types = graph_.GetAttr<std::vector<DType>>("dtype");
  for (const auto& [eid, req] : state->bound) {
    state->entries[eid] = NDArray(shapes[eid], ctx_, types[eid]);
  }
  state->bound.clear();
}

std::vector<OpReqType> GraphRunner::OutputRequests(const State& state,
                                                   uint32_t nid) const {
  const IndexedGraph& idx = graph_.indexed_graph();
  std::vector<OpReqType> reqs = output_reqs_[nid];
  for (const auto& [eid, req] : state.bound) {
    const uint32_t first = idx.entry_id(nid, 0);
    const uint32_t n = idx[nid].source->num_outputs();
    if (eid < first || eid >= first + n) continue;
    if (reqs.empty()) reqs.assign(n, OpReqType::kWriteTo);
    reqs[eid - first] = req;
  }
  return reqs;
}

void GraphRunner::InvokeNode(State* state, uint32_t nid) const {
  const IndexedGraph& idx = graph_.indexed_graph();
  const Node& node = *idx[nid].source;
  std::vector<NDArray>& entries = state->entries;
  std::vector<NDArray> in, out;
  for (const auto& e : idx[nid].inputs) in.push_back(entries[idx.entry_id(e)]);
  for (uint32_t i = 0; i < node.num_outputs(); ++i) {
    out.push_back(entries[idx.entry_id(nid, i)]);
  }
  imperative::InvokeOptions options;
  options.ctx = ctx_;
  options.state_slot = &node_states_[nid];
  options.req = OutputRequests(*state, nid);  // Empty: all kWriteTo.
  imperative::Invoke(node.attrs, in, &out, options);
}

void GraphRunner::RunNodes(State* state, uint32_t begin, uint32_t end,
                           bool is_train) const {
  imperative::TrainingScope mode(is_train);
  imperative::RecordingScope not_recorded(false);
  const bool bulk = bulk_max_nodes_ > 1 && !imperative::IsDeferredCompute();
  size_t pushes = 0;
  std::vector<uint32_t> segment;
  auto flush = [&] {
    if (segment.empty()) return;
    PushSegment(state, segment, is_train);
    segment.clear();
    ++pushes;
  };
  for (uint32_t nid = begin; nid < end; ++nid) {
    if (graph_.indexed_graph()[nid].source->is_variable()) continue;
    if (bulk && bulk_nodes_[nid].bulkable) {
      segment.push_back(nid);
      if (segment.size() >= static_cast<size_t>(bulk_max_nodes_)) flush();
      continue;
    }
    flush();
    InvokeNode(state, nid);
    ++pushes;
  }
  flush();
  last_pushes_ = pushes;
}

void GraphRunner::PushSegment(State* state, const std::vector<uint32_t>& nids,
                              bool is_train) const {
  const IndexedGraph& idx = graph_.indexed_graph();
  std::vector<NDArray>& entries = state->entries;
  const int dev_type =
      ctx_.dev_type == Context::kCPUPinned ? Context::kCPU : ctx_.dev_type;
  auto segment = std::make_shared<Segment>();
  segment->nodes_alive = nodes_alive_;
  segment->is_train = is_train;
  segment->steps.reserve(nids.size());
  absl::InlinedVector<engine::VarHandle, 32> reads, writes;
  auto write = [&](const NDArray& a) {
    a.CheckAndAlloc();
    a.MarkWritten();
    for (const engine::VarHandle& w : writes) {
      if (w == a.var()) return;  // Two entries of one block: one write.
    }
    writes.push_back(a.var());
  };
  for (uint32_t nid : nids) {
    const Node& node = *idx[nid].source;
    const Op& op = *node.op();
    SegmentStep& step = segment->steps.emplace_back();
    step.attrs = &node.attrs;
    step.compute = op.compute(dev_type);
    const auto& inputs = idx[nid].inputs;
    const BulkNode& bulk = bulk_nodes_[nid];
    step.temp_space = bulk.temp_space;
    step.in.reserve(inputs.size());
    for (size_t j = 0; j < inputs.size(); ++j) {
      const NDArray& a = entries[idx.entry_id(inputs[j])];
      bool is_mutated = false;
      for (int m : bulk.mutated) is_mutated |= m == static_cast<int>(j);
      if (is_mutated) {
        write(a);
      } else {
        if (!a.is_written()) {
          a.CheckReadable(absl::StrCat("op \"", op.name(), "\" (node \"",
                                       node.name(), "\") input ", j)
                              .c_str());
        }
        reads.push_back(a.var());
      }
      step.in.push_back(a.blob());
    }
    step.out.reserve(node.num_outputs());
    step.req = OutputRequests(*state, nid);
    if (step.req.empty())
      step.req.assign(node.num_outputs(), OpReqType::kWriteTo);
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      const NDArray& out = entries[idx.entry_id(nid, i)];
      write(out);
      // The plan's in-place pairings (checked when the node was found
      // bulkable); fresh output arrays share nothing.
      for (const auto& e : inputs) {
        if (step.req[i] != OpReqType::kNullOp &&
            out.SharesChunkWith(entries[idx.entry_id(e)])) {
          step.req[i] = OpReqType::kWriteInplace;
        }
      }
      step.out.push_back(out.blob());
    }
  }
  engine::Engine::Get()->PushSync(
      [segment](engine::RunContext rctx) {
        for (const SegmentStep& step : segment->steps) {
          OpContext ctx;
          ctx.is_train = segment->is_train;
          ctx.run_ctx = rctx;
          ctx.temp_space_requested = step.temp_space;
          (*step.compute)(ctx, *step.attrs, step.in, step.req, step.out);
        }
      },
      ctx_, reads, writes, engine::FnProperty::kNormal, 0, "_bulk_segment");
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
