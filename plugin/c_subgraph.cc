// Subgraph properties registered through the C plugin ABI: the selector
// callbacks see read-only C views of nodes, and the replacing node is
// built from the op name and attributes the plugin returns.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "graph/node.h"
#include "graph/symbol.h"
#include "plugin/c_util.h"
#include "plugin/registrar.h"
#include "subgraph/recorded_types.h"

namespace mx {
namespace plugin {
namespace {

// The storage behind one MxNodeView.
struct NodeViewData {
  std::optional<CAttrStrings> attrs;
  std::vector<int32_t> input_nodes, input_outputs;
  std::vector<int32_t> out_ndims, out_dtypes;
  std::vector<std::vector<int64_t>> out_dims;
  std::vector<const int64_t*> out_shapes;
  MxNodeView view;
};

// Fills `d` for `n`. Input indices come from `index` (graph views); without
// one (selector views) they are -1. Strings point into the node, which
// outlives the view.
void FillView(const Node& n,
              const absl::flat_hash_map<const Node*, int32_t>* index,
              NodeViewData* d) {
  d->attrs.emplace(n.attrs.dict, n.name().c_str());
  for (const NodeEntry& e : n.inputs) {
    int32_t i = -1;
    if (index != nullptr) {
      auto it = index->find(e.node.get());
      if (it != index->end()) i = it->second;
    }
    d->input_nodes.push_back(i);
    d->input_outputs.push_back(static_cast<int32_t>(e.index));
  }
  const int num_outputs = n.is_variable() ? 1 : n.op()->NumOutputs(n.attrs);
  // Shapes and dtypes the graph recorded (the executor infers them from the
  // bound arrays before partitioning); unknown otherwise.
  d->out_ndims.assign(num_outputs, -1);
  d->out_dtypes.assign(num_outputs, MX_DTYPE_UNKNOWN);
  d->out_dims.assign(num_outputs, {});
  d->out_shapes.assign(num_outputs, nullptr);
  const NodeOutputTypes* recorded = RecordedOutputTypes(n);
  for (int k = 0; recorded != nullptr && k < num_outputs &&
                  k < static_cast<int>(recorded->dtypes.size());
       ++k) {
    d->out_dtypes[k] = static_cast<int32_t>(recorded->dtypes[k]);
    const TShape& shape = recorded->shapes[k];
    if (!shape.ndim_known()) continue;
    d->out_ndims[k] = shape.ndim();
    d->out_dims[k].assign(shape.begin(), shape.begin() + shape.ndim());
    d->out_shapes[k] = d->out_dims[k].data();
  }
  MxNodeView& v = d->view;
  v.struct_size = sizeof(MxNodeView);
  v.op_name = n.is_variable() ? "" : n.op()->name().c_str();
  v.node_name = n.name().c_str();
  v.attrs = *d->attrs->get();
  v.num_inputs = static_cast<int32_t>(n.inputs.size());
  v.input_nodes = d->input_nodes.data();
  v.input_outputs = d->input_outputs.data();
  v.num_outputs = num_outputs;
  v.output_ndims = d->out_ndims.data();
  v.output_shapes = d->out_shapes.data();
  v.output_dtypes = d->out_dtypes.data();
  v.has_control_deps = n.control_deps.empty() ? 0 : 1;
}

// Copied from the plugin's MxSubgraphPropertyDef.
struct CPropertyDef {
  std::string who, backend, name;
  bool inference_only = false;
  MxStatusCode (*create_selector)(void*, void**, MxStatus*) = nullptr;
  void (*destroy_selector)(void*, void*) = nullptr;
  MxSelectorDef selector{};
  MxStatusCode (*create_node)(void*, const MxGraphView*, int32_t,
                              MxSubgraphNode*, MxStatus*) = nullptr;
  void* user_data = nullptr;

  std::string Label() const {
    return absl::StrCat(who, ": subgraph property \"", name, "\"");
  }
};

class CSelector : public SubgraphSelector {
 public:
  CSelector(std::shared_ptr<const CPropertyDef> def, void* selector)
      : def_(std::move(def)), selector_(selector) {}
  ~CSelector() override {
    if (def_->destroy_selector != nullptr) {
      def_->destroy_selector(def_->user_data, selector_);
    }
  }
  bool Select(const Node& seed) override {
    return def_->selector.select(selector_, View(seed)) != 0;
  }
  bool SelectInput(const Node& cur, const Node& input) override {
    if (def_->selector.select_input == nullptr) return false;
    return def_->selector.select_input(selector_, View(cur), View(input)) != 0;
  }
  bool SelectOutput(const Node& cur, const Node& output) override {
    if (def_->selector.select_output == nullptr) return false;
    return def_->selector.select_output(selector_, View(cur), View(output)) !=
           0;
  }
  std::vector<const Node*> Filter(
      const std::vector<const Node*>& candidates) override {
    if (def_->selector.filter == nullptr) return candidates;
    std::vector<const MxNodeView*> views;
    for (const Node* n : candidates) views.push_back(View(*n));
    std::vector<int32_t> keep(candidates.size(), 1);
    def_->selector.filter(selector_, static_cast<int32_t>(views.size()),
                          views.data(), keep.data());
    std::vector<const Node*> kept;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (keep[i] != 0) kept.push_back(candidates[i]);
    }
    return kept;
  }

 private:
  const MxNodeView* View(const Node& n) {
    std::unique_ptr<NodeViewData>& d = views_[&n];
    if (d == nullptr) {
      d = std::make_unique<NodeViewData>();
      FillView(n, nullptr, d.get());
    }
    return &d->view;
  }

  std::shared_ptr<const CPropertyDef> def_;
  void* selector_;
  absl::flat_hash_map<const Node*, std::unique_ptr<NodeViewData>> views_;
};

class CProperty : public SubgraphProperty {
 public:
  explicit CProperty(std::shared_ptr<const CPropertyDef> def)
      : def_(std::move(def)) {}

  std::string name() const override { return def_->name; }
  bool inference_only() const override { return def_->inference_only; }

  SubgraphSelectorPtr CreateSubgraphSelector() const override {
    void* selector = nullptr;
    if (def_->create_selector != nullptr) {
      MxStatus status = EmptyStatus();
      ThrowIfFailed(def_->create_selector(def_->user_data, &selector, &status),
                    status, def_->Label() + ": create_selector");
    }
    return std::make_shared<CSelector>(def_, selector);
  }

  NodePtr CreateSubgraphNode(const Symbol& symbol, int id) const override {
    // The graph view: every node in topological order.
    std::vector<NodePtr> order;
    absl::flat_hash_map<const Node*, int32_t> index;
    DFSVisit(symbol.outputs, [&](const NodePtr& n) {
      index[n.get()] = static_cast<int32_t>(order.size());
      order.push_back(n);
    });
    std::vector<std::unique_ptr<NodeViewData>> data;
    std::vector<MxNodeView> views;
    for (const NodePtr& n : order) {
      data.push_back(std::make_unique<NodeViewData>());
      FillView(*n, &index, data.back().get());
      views.push_back(data.back()->view);
    }
    std::vector<int32_t> inputs, out_nodes, out_indices;
    for (const NodePtr& v : SubgraphInputs(symbol)) {
      auto it = index.find(v.get());
      inputs.push_back(it == index.end() ? -1 : it->second);
    }
    for (const NodeEntry& e : symbol.outputs) {
      out_nodes.push_back(index.at(e.node.get()));
      out_indices.push_back(static_cast<int32_t>(e.index));
    }
    const std::string json = symbol.ToJSON();
    MxGraphView g;
    g.struct_size = sizeof(g);
    g.num_nodes = static_cast<int32_t>(views.size());
    g.nodes = views.data();
    g.num_inputs = static_cast<int32_t>(inputs.size());
    g.input_nodes = inputs.data();
    g.num_outputs = static_cast<int32_t>(out_nodes.size());
    g.output_nodes = out_nodes.data();
    g.output_indices = out_indices.data();
    g.json = json.c_str();

    MxSubgraphNode node;
    std::memset(&node, 0, sizeof(node));
    node.struct_size = sizeof(node);
    MxStatus status = EmptyStatus();
    const std::string label = absl::StrCat(def_->Label(), ": create_node");
    ThrowIfFailed(def_->create_node(def_->user_data, &g, id, &node, &status),
                  status, label);
    if (node.op_name == nullptr) return nullptr;  // Rejected.
    const std::string op_name = node.op_name;
    const Op* op = OpRegistry::Get()->Find(op_name);
    if (op == nullptr) {
      throw NotFound(
          absl::StrCat(label, ": op \"", op_name, "\" is not registered"));
    }
    if (node.num_attrs < 0 ||
        (node.num_attrs > 0 &&
         (node.keys == nullptr || node.values == nullptr))) {
      throw InvalidArgument(label + ": bad attribute list");
    }
    AttrDict dict;
    for (int i = 0; i < node.num_attrs; ++i) {
      dict[CopyString(node.keys[i])] = CopyString(node.values[i]);
    }
    const std::string name = absl::StrCat(def_->name, id);
    if (node.attach_subgraph == 0) return Node::Create(*op, dict, name);
    auto n = std::make_shared<Node>();
    n->attrs.op = op;
    n->attrs.name = name;
    n->attrs.dict = std::move(dict);
    n->attrs.subgraphs.push_back(std::make_shared<Symbol>(symbol));
    if (const auto* attach =
            op->GetAttr<FAttachSubgraphs>("FAttachSubgraphs")) {
      (*attach)(&n->attrs);
    }
    op->ParseAttrs(&n->attrs);
    return n;
  }

 private:
  std::shared_ptr<const CPropertyDef> def_;
};

}  // namespace

std::shared_ptr<SubgraphProperty> MakeCSubgraphProperty(
    const MxSubgraphPropertyDef& def, const std::string& who) {
  CheckStructSize(def.struct_size,
                  MX_STRUCT_SIZE_UPTO(MxSubgraphPropertyDef, user_data),
                  "MxSubgraphPropertyDef", who);
  CheckStructSize(def.selector.struct_size,
                  MX_STRUCT_SIZE_UPTO(MxSelectorDef, filter), "MxSelectorDef",
                  who);
  auto c = std::make_shared<CPropertyDef>();
  c->who = who;
  c->backend = CopyString(def.backend);
  c->name = CopyString(def.name);
  if (c->backend.empty() || c->name.empty()) {
    throw InvalidArgument(who +
                          ": a subgraph property needs a backend and "
                          "a name");
  }
  if (def.selector.select == nullptr || def.create_node == nullptr) {
    throw InvalidArgument(c->Label() + ": select and create_node are required");
  }
  c->inference_only = def.inference_only != 0;
  c->create_selector = def.create_selector;
  c->destroy_selector = def.destroy_selector;
  c->selector = def.selector;
  c->create_node = def.create_node;
  c->user_data = def.user_data;
  return std::make_shared<CProperty>(std::move(c));
}

}  // namespace plugin
}  // namespace mx
