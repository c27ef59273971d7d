#include "subgraph/subgraph_exec.h"

#include <type_traits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "graph/pass.h"
#include "subgraph/subgraph_property.h"

namespace mx {
namespace subgraph_internal {
namespace {

// d += s. float16 adds in float; double and integers in their own type
// (a float sum lost double's precision and large integers), integers
// wrapping around as the elementwise kernels do, bool as "or".
template <typename T>
void AddInto(const T* s, T* d, size_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < n; ++i) d[i] = d[i] || s[i];
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (size_t i = 0; i < n; ++i) {
      d[i] = static_cast<T>(
          static_cast<U>(static_cast<U>(d[i]) + static_cast<U>(s[i])));
    }
  } else if constexpr (std::is_same_v<T, double>) {
    for (size_t i = 0; i < n; ++i) d[i] += s[i];
  } else {
    for (size_t i = 0; i < n; ++i) {
      d[i] =
          static_cast<T>(static_cast<float>(d[i]) + static_cast<float>(s[i]));
    }
  }
}

// dst (+)= src, elementwise, inside the operation running on `ctx`: on a
// device through its copy and its elemwise_add kernel, on the op's stream.
void WriteOut(const OpContext& ctx, const TBlob& src, OpReqType req,
              const TBlob& dst) {
  if (req == OpReqType::kNullOp) return;
  if (req != OpReqType::kAddTo) {
    if (src.dptr != dst.dptr) CopyBlob(src, dst, ctx.run_ctx);
    return;
  }
  if (dst.ctx.is_host()) {
    MX_DTYPE_SWITCH(src.dtype, T, {
      AddInto(src.data<T>(), dst.data<T>(), static_cast<size_t>(src.Size()));
    });
    return;
  }
  static const Op& add = OpRegistry::Get()->Lookup("elemwise_add");
  const FCompute* f = add.compute(dst.ctx.dev_type);
  if (f == nullptr) {
    throw NotImplemented(absl::StrCat(
        "subgraph op: adding an output to the existing gradient on ",
        dst.ctx.ToString(), " needs an elemwise_add kernel there"));
  }
  NodeAttrs attrs;
  attrs.op = &add;
  attrs.name = "subgraph_output_add";
  add.ParseAttrs(&attrs);
  OpContext add_ctx;
  add_ctx.is_train = ctx.is_train;
  add_ctx.run_ctx = ctx.run_ctx;
  for (const ResourceRequest& r : add.Resources(attrs)) {
    if (r.type == ResourceRequest::kTempSpace) {
      add_ctx.temp_space_requested = true;
    }
  }
  (*f)(add_ctx, attrs, {dst, src}, {OpReqType::kWriteInplace}, {dst});
}

template <typename T>
void MergeBack(const std::string& who, const char* what, const char* kind,
               const std::vector<T>& inferred, std::vector<T>* given,
               bool (*merge)(T*, const T&), std::string (*print)(const T&)) {
  for (size_t i = 0; i < given->size(); ++i) {
    T merged = (*given)[i];
    if (!merge(&merged, inferred[i])) {
      throw InvalidArgument(absl::StrCat(
          who, ": ", kind, " ", i, " has ", what, " ", print((*given)[i]),
          " but the subgraph gives ", print(inferred[i])));
    }
    (*given)[i] = merged;
  }
}

bool MergeType(DType* dst, const DType& src) {
  if (src == DType::kUnknown) return true;
  if (*dst == DType::kUnknown) *dst = src;
  return *dst == src;
}
std::string PrintShape(const TShape& s) { return s.ToString(); }
std::string PrintType(const DType& t) { return DTypeName(t); }

}  // namespace

const SubgraphInfo::Analysis& SubgraphInfo::Analyzed() const {
  std::call_once(once_, [this] {
    Analysis& a = analysis_;
    a.inputs = SubgraphInputs(symbol_);
    absl::flat_hash_map<const Node*, int> position;
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      position[a.inputs[i].get()] = static_cast<int>(i);
    }
    // Graph passes list inputs in depth-first order.
    for (const NodePtr& v : symbol_.ListInputs()) {
      a.dfs_to_op.push_back(position.at(v.get()));
    }
    absl::flat_hash_set<int> mutated;
    bool temp = false, random = false;
    DFSVisit(symbol_.outputs, [&](const NodePtr& n) {
      if (n->is_variable()) return;
      for (int m : n->op()->MutateInputs(n->attrs)) {
        if (m >= static_cast<int>(n->inputs.size())) continue;
        auto it = position.find(n->inputs[m].node.get());
        if (it != position.end()) mutated.insert(it->second);
      }
      for (const ResourceRequest& r : n->op()->Resources(n->attrs)) {
        (r.type == ResourceRequest::kTempSpace ? temp : random) = true;
      }
    });
    for (int i = 0; i < static_cast<int>(a.inputs.size()); ++i) {
      if (mutated.contains(i)) a.mutate_inputs.push_back(i);
    }
    if (temp) a.resources.push_back({ResourceRequest::kTempSpace});
    if (random) a.resources.push_back({ResourceRequest::kRandom});
  });
  return analysis_;
}

void SubgraphInfo::InferShape(const std::string& who, std::vector<TShape>* in,
                              std::vector<TShape>* out) const {
  Graph g(symbol_);
  g.SetAttr("shape_inputs", ToDFS(*in));
  // What the outer graph knows of the outputs flows back to the inputs, as
  // through any other op (MXNet's subgraph op does the same).
  g.SetAttr("shape_outputs", *out);
  g = ApplyPass(std::move(g), "InferShape");
  const IndexedGraph& idx = g.indexed_graph();
  const auto& shapes = g.GetAttr<std::vector<TShape>>("shape");
  std::vector<TShape> ins(in->size()), outs;
  for (size_t j = 0; j < idx.input_nodes().size(); ++j) {
    ins[Analyzed().dfs_to_op[j]] =
        shapes[idx.entry_id(idx.input_nodes()[j], 0)];
  }
  for (const auto& e : idx.outputs()) outs.push_back(shapes[idx.entry_id(e)]);
  MergeBack<TShape>(who, "shape", "input", ins, in, MergeShape, PrintShape);
  MergeBack<TShape>(who, "shape", "output", outs, out, MergeShape, PrintShape);
}

void SubgraphInfo::InferType(const std::string& who, std::vector<DType>* in,
                             std::vector<DType>* out) const {
  Graph g(symbol_);
  g.SetAttr("dtype_inputs", ToDFS(*in));
  g.SetAttr("dtype_outputs", *out);
  g = ApplyPass(std::move(g), "InferType");
  const IndexedGraph& idx = g.indexed_graph();
  const auto& types = g.GetAttr<std::vector<DType>>("dtype");
  std::vector<DType> ins(in->size()), outs;
  for (size_t j = 0; j < idx.input_nodes().size(); ++j) {
    ins[Analyzed().dfs_to_op[j]] = types[idx.entry_id(idx.input_nodes()[j], 0)];
  }
  for (const auto& e : idx.outputs()) outs.push_back(types[idx.entry_id(e)]);
  MergeBack<DType>(who, "dtype", "input", ins, in, MergeType, PrintType);
  MergeBack<DType>(who, "dtype", "output", outs, out, MergeType, PrintType);
}

std::shared_ptr<const SubgraphInfo::Plan> SubgraphInfo::GetPlan(
    const std::vector<TBlob>& in) const {
  std::string key;
  std::vector<TShape> shapes;
  std::vector<DType> types;
  for (int op_index : Analyzed().dfs_to_op) {
    const TBlob& b = in[op_index];
    absl::StrAppend(&key, b.shape.ToString(), DTypeName(b.dtype), ";");
    shapes.push_back(b.shape);
    types.push_back(b.dtype);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
  }
  auto plan = std::make_shared<Plan>();
  plan->graph = Graph(symbol_);
  plan->graph.SetAttr("shape_inputs", shapes);
  plan->graph.SetAttr("dtype_inputs", types);
  plan->graph =
      ApplyPasses(std::move(plan->graph), {"InferShape", "InferType"});
  if (plan->graph.GetAttr<size_t>("shape_num_unknown_nodes") > 0) {
    throw ShapeError("subgraph: cannot infer all shapes:\n" +
                     plan->graph.GetAttr<std::string>("shape_unknown_report"));
  }
  plan->graph.indexed_graph();  // Build once, before sharing.
  std::lock_guard<std::mutex> lock(mu_);
  return plans_.emplace(key, plan).first->second;
}

void SubgraphInfo::Run(const OpContext& ctx, const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req,
                       const std::vector<TBlob>& out) const {
  std::shared_ptr<const Plan> plan = GetPlan(in);
  const IndexedGraph& idx = plan->graph.indexed_graph();
  const auto& shapes = plan->graph.GetAttr<std::vector<TShape>>("shape");
  const auto& types = plan->graph.GetAttr<std::vector<DType>>("dtype");
  const Context dev = ctx.run_ctx.ctx;
  // Pinned host memory runs the CPU kernels, as in Invoke.
  const int dev_type =
      dev.dev_type == Context::kCPUPinned ? Context::kCPU : dev.dev_type;

  std::vector<TBlob> entries(idx.num_node_entries());
  for (size_t j = 0; j < idx.input_nodes().size(); ++j) {
    entries[idx.entry_id(idx.input_nodes()[j], 0)] =
        in[Analyzed().dfs_to_op[j]];
  }
  // An output written once, by overwrite, goes straight to the caller's
  // memory; the others are computed aside and copied.
  std::vector<int> uses(idx.num_node_entries(), 0), direct(uses.size(), -1);
  for (const auto& e : idx.outputs()) ++uses[idx.entry_id(e)];
  for (size_t k = 0; k < idx.outputs().size(); ++k) {
    const auto& e = idx.outputs()[k];
    const uint32_t eid = idx.entry_id(e);
    if (!idx[e.node_id].source->is_variable() && uses[eid] == 1 &&
        req[k] == OpReqType::kWriteTo) {
      direct[eid] = static_cast<int>(k);
    }
  }
  // Inner entries live in temp space of the op's context: on a device it
  // goes back to the pool only once the op's stream has run the inner
  // kernels (OpContext waits for it).
  OpContext scratch;
  scratch.run_ctx = ctx.run_ctx;
  if (dev_type == Context::kCPU) scratch.run_ctx.ctx = Context::CPU();
  scratch.temp_space_requested = true;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node& node = *idx[nid].source;
    if (node.is_variable()) continue;
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      const uint32_t eid = idx.entry_id(nid, i);
      if (direct[eid] >= 0) {
        entries[eid] = out[direct[eid]];
        continue;
      }
      void* p = scratch.TempSpace(static_cast<size_t>(shapes[eid].Size()) *
                                  DTypeSize(types[eid]));
      entries[eid] = TBlob{p, shapes[eid], types[eid], dev, {}};
    }
  }
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node& node = *idx[nid].source;
    if (node.is_variable()) continue;
    const Op& op = *node.op();
    OpContext octx;
    octx.is_train = ctx.is_train;
    octx.run_ctx = ctx.run_ctx;
    octx.rng = ctx.rng;
    for (const ResourceRequest& r : op.Resources(node.attrs)) {
      if (r.type == ResourceRequest::kTempSpace) {
        octx.temp_space_requested = true;
      }
    }
    std::vector<TBlob> ins, outs;
    std::vector<TShape> in_shapes;
    std::vector<DType> in_types;
    for (const auto& e : idx[nid].inputs) {
      ins.push_back(entries[idx.entry_id(e)]);
      in_shapes.push_back(ins.back().shape);
      in_types.push_back(ins.back().dtype);
    }
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      outs.push_back(entries[idx.entry_id(nid, i)]);
    }
    const std::vector<OpReqType> reqs(outs.size(), OpReqType::kWriteTo);
    if (const FCompute* f = op.compute(dev_type)) {
      (*f)(octx, node.attrs, ins, reqs, outs);
    } else if (const FStatefulCompute* s = op.stateful_compute(dev_type);
               s != nullptr && op.create_state()) {
      OpStatePtr state =
          op.create_state()(node.attrs, dev, in_shapes, in_types);
      (*s)(state, octx, ins, reqs, outs);
    } else {
      throw NotImplemented(
          absl::StrCat("subgraph op: inner op \"", op.name(), "\" (node \"",
                       node.name(), "\") has no kernel for ", dev.ToString(),
                       " that can run inside a subgraph"));
    }
  }
  for (size_t k = 0; k < idx.outputs().size(); ++k) {
    const uint32_t eid = idx.entry_id(idx.outputs()[k]);
    if (direct[eid] == static_cast<int>(k)) continue;
    WriteOut(ctx, entries[eid], req[k], out[k]);
  }
}

std::shared_ptr<const SubgraphInfo> GetSubgraphInfo(const NodeAttrs& attrs) {
  using Ptr = std::shared_ptr<const SubgraphInfo>;
  if (const Ptr* info = std::any_cast<Ptr>(&attrs.parsed)) return *info;
  if (attrs.subgraphs.empty() || attrs.subgraphs[0] == nullptr) {
    throw InvalidArgument(
        absl::StrCat("subgraph op \"", attrs.name, "\" holds no subgraph"));
  }
  return std::make_shared<const SubgraphInfo>(*attrs.subgraphs[0]);
}

void AttachSubgraphInfo(NodeAttrs* attrs) {
  if (attrs->subgraphs.empty() || attrs->subgraphs[0] == nullptr) {
    throw InvalidArgument(
        absl::StrCat("subgraph op \"", attrs->name, "\" holds no subgraph"));
  }
  attrs->parsed = std::shared_ptr<const SubgraphInfo>(
      std::make_shared<SubgraphInfo>(*attrs->subgraphs[0]));
}

}  // namespace subgraph_internal
}  // namespace mx
