// InferShape and InferType: propagate partial knowledge through the graph,
// forward and backward, until nothing changes.
#include "absl/strings/str_cat.h"
#include "graph/pass.h"

namespace mx {
namespace {

struct ShapeTraits {
  using T = TShape;
  static constexpr const char* kName = "shape";
  static constexpr const char* kHint = "__shape__";
  static T Unknown() { return TShape(); }
  static bool Known(const T& v) { return v.is_known(); }
  static bool Merge(T* dst, const T& src) { return MergeShape(dst, src); }
  static T Parse(const std::string& s) { return TShape::Parse(s); }
  static std::string Print(const T& v) { return v.ToString(); }
  static const auto& Infer(const Op& op) { return op.infer_shape(); }
  [[noreturn]] static void Conflict(const std::string& msg) {
    throw ShapeError(msg);
  }
};

struct TypeTraits {
  using T = DType;
  static constexpr const char* kName = "dtype";
  static constexpr const char* kHint = "__dtype__";
  static T Unknown() { return DType::kUnknown; }
  static bool Known(const T& v) { return v != DType::kUnknown; }
  static bool Merge(T* dst, const T& src) {
    if (src == DType::kUnknown) return true;
    if (*dst == DType::kUnknown) {
      *dst = src;
      return true;
    }
    return *dst == src;
  }
  static T Parse(const std::string& s) { return ParseDType(s); }
  static std::string Print(const T& v) { return DTypeName(v); }
  static const auto& Infer(const Op& op) { return op.infer_type(); }
  [[noreturn]] static void Conflict(const std::string& msg) {
    throw DTypeError(msg);
  }
};

template <typename Traits>
Graph InferAttr(Graph g) {
  using T = typename Traits::T;
  const std::string name = Traits::kName;
  const IndexedGraph& idx = g.indexed_graph();
  std::vector<T> values(idx.num_node_entries(), Traits::Unknown());

  auto merge = [&](uint32_t eid, const T& v, const std::string& what) {
    T merged = values[eid];
    if (!Traits::Merge(&merged, v)) {
      Traits::Conflict(absl::StrCat(what, " has ", name, " ",
                                    Traits::Print(values[eid]), " but ",
                                    Traits::Print(v), " is required"));
    }
    const bool changed = !(merged == values[eid]);
    values[eid] = merged;
    return changed;
  };

  // Known inputs: the caller's list (aligned with input_nodes()) and hints.
  const std::string inputs_key = name + "_inputs";
  const std::vector<uint32_t>& inputs = idx.input_nodes();
  if (g.HasAttr(inputs_key)) {
    const auto& given = g.GetAttr<std::vector<T>>(inputs_key);
    if (given.size() != inputs.size()) {
      throw InvalidArgument(absl::StrCat(
          "Infer", name, ": graph attribute \"", inputs_key, "\" has ",
          given.size(), " entries for ", inputs.size(), " inputs"));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      merge(idx.entry_id(inputs[i], 0), given[i],
            absl::StrCat("input \"", idx[inputs[i]].source->name(), "\""));
    }
  }
  // Known outputs (aligned with outputs()): lets a caller such as a
  // subgraph op push what its consumers know back to the graph's inputs.
  const std::string outputs_key = name + "_outputs";
  if (g.HasAttr(outputs_key)) {
    const auto& given = g.GetAttr<std::vector<T>>(outputs_key);
    if (given.size() != idx.outputs().size()) {
      throw InvalidArgument(absl::StrCat(
          "Infer", name, ": graph attribute \"", outputs_key, "\" has ",
          given.size(), " entries for ", idx.outputs().size(), " outputs"));
    }
    for (size_t i = 0; i < given.size(); ++i) {
      merge(idx.entry_id(idx.outputs()[i]), given[i],
            absl::StrCat("output ", i));
    }
  }
  for (uint32_t nid : inputs) {
    const AttrDict& dict = idx[nid].source->attrs.dict;
    auto it = dict.find(Traits::kHint);
    if (it != dict.end()) {
      merge(idx.entry_id(nid, 0), Traits::Parse(it->second),
            absl::StrCat("input \"", idx[nid].source->name(), "\" (hint ",
                         Traits::kHint, "=", it->second, ")"));
    }
  }

  // One visit of an op node: run its inference on what is known.
  auto visit = [&](uint32_t nid) {
    const IndexedGraph::NodeInfo& info = idx[nid];
    const Node& node = *info.source;
    if (node.is_variable() || !Traits::Infer(*node.op())) return false;
    std::vector<T> in, out(node.num_outputs());
    for (const auto& e : info.inputs) in.push_back(values[idx.entry_id(e)]);
    for (uint32_t i = 0; i < out.size(); ++i) {
      out[i] = values[idx.entry_id(nid, i)];
    }
    Traits::Infer (*node.op())(node.attrs, &in, &out);
    bool changed = false;
    for (size_t i = 0; i < in.size(); ++i) {
      changed |= merge(idx.entry_id(info.inputs[i]), in[i],
                       absl::StrCat("node \"", node.name(), "\" input ", i));
    }
    for (uint32_t i = 0; i < out.size(); ++i) {
      changed |= merge(idx.entry_id(nid, i), out[i],
                       absl::StrCat("node \"", node.name(), "\" output ", i));
    }
    return changed;
  };

  const uint32_t n = static_cast<uint32_t>(idx.num_nodes());
  bool changed = true;
  for (int round = 0; changed && round < 64; ++round) {
    changed = false;
    for (uint32_t nid = 0; nid < n; ++nid) changed |= visit(nid);
    for (uint32_t nid = n; nid-- > 0;) changed |= visit(nid);
  }

  // Which nodes stay unknown, and why.
  size_t unknown_nodes = 0;
  std::string report;
  for (uint32_t nid = 0; nid < n; ++nid) {
    const Node& node = *idx[nid].source;
    std::vector<uint32_t> unknown;
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      if (!Traits::Known(values[idx.entry_id(nid, i)])) unknown.push_back(i);
    }
    if (unknown.empty()) continue;
    ++unknown_nodes;
    if (node.is_variable()) {
      absl::StrAppend(&report, "input \"", node.name(), "\": ", name,
                      " unknown (give it in ", inputs_key, " or ",
                      Traits::kHint, ")\n");
      continue;
    }
    absl::StrAppend(&report, "node \"", node.name(), "\" (", node.op()->name(),
                    "): output ", unknown[0], " unknown");
    if (!Traits::Infer(*node.op())) {
      absl::StrAppend(&report, "; the op has no ", name, " inference");
    } else {
      absl::StrAppend(&report, "; inputs:");
      for (const auto& e : idx[nid].inputs) {
        absl::StrAppend(&report, " ", idx[e.node_id].source->name(), "=",
                        Traits::Print(values[idx.entry_id(e)]));
      }
    }
    report += "\n";
  }
  g.SetAttr(name, std::move(values));
  g.SetAttr(name + "_num_unknown_nodes", unknown_nodes);
  g.SetAttr(name + "_unknown_report", report);
  return g;
}

MX_REGISTER_PASS((PassInfo{
    "InferShape",
    "Infers every entry's shape from input shapes and hints.",
    {},
    {"shape", "shape_num_unknown_nodes", "shape_unknown_report"},
    InferAttr<ShapeTraits>}));

MX_REGISTER_PASS((PassInfo{
    "InferType",
    "Infers every entry's dtype from input dtypes and hints.",
    {},
    {"dtype", "dtype_num_unknown_nodes", "dtype_unknown_report"},
    InferAttr<TypeTraits>}));

}  // namespace
}  // namespace mx
