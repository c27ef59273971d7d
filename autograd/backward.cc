// Variables, Backward and Grad: build the gradient graph of the recorded
// nodes and run it op by op.
#include <atomic>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "autograd/record.h"
#include "base/error.h"
#include "graph/graph.h"
#include "graph/pass.h"

namespace mx {
namespace autograd {

using internal::AGInfo;
using internal::InfoOf;

namespace {

// A recorded intermediate keeps its node (and so its history); the node
// gets the gradient buffer, which Backward fills like a leaf's.
void MarkIntermediate(const Node& node, uint32_t output, AGInfo* info,
                      const NDArray& grad, OpReqType req) {
  if (info->marked && info->marked_output != output) {
    throw NotImplemented(absl::StrCat(
        "AttachGrad: output ", info->marked_output, " of op \"",
        node.op()->name(), "\" (node \"", node.name(),
        "\") already has a gradient attached; attaching gradients to several "
        "outputs of one op is not supported"));
  }
  info->marked = true;
  info->marked_output = output;
  info->grad = grad.Detach();
  info->grad_req = req;
  info->fresh_grad = false;
}

}  // namespace

void MarkVariables(const std::vector<NDArray*>& variables,
                   const std::vector<NDArray>& gradients,
                   const std::vector<OpReqType>& reqs) {
  if (variables.size() != gradients.size() || variables.size() != reqs.size()) {
    throw InvalidArgument(absl::StrCat(
        "MarkVariables: ", variables.size(), " variables, ", gradients.size(),
        " gradients and ", reqs.size(), " requests; they must match"));
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    NDArray* x = variables[i];
    const NDArray& g = gradients[i];
    if (x == nullptr || x->is_none()) {
      throw InvalidArgument(
          absl::StrCat("MarkVariables: variable ", i, " is none"));
    }
    if (reqs[i] != OpReqType::kNullOp &&
        (g.is_none() || g.shape() != x->shape() || g.dtype() != x->dtype())) {
      throw ShapeError(absl::StrCat(
          "MarkVariables: the gradient of variable ", i, " must be ",
          x->shape().ToString(), " ", DTypeName(x->dtype()), "; got ",
          g.is_none() ? std::string("none")
                      : g.shape().ToString() + " " + DTypeName(g.dtype())));
    }
    const ArrayHistory& h = x->autograd_entry();
    AGInfo* recorded = h.empty() ? nullptr : InfoOf(*h.node);
    if (recorded != nullptr && !h.node->is_variable()) {
      MarkIntermediate(*h.node, h.index, recorded, g, reqs[i]);
      x->set_grad(g);
      continue;
    }
    NodeAttrs attrs;
    // Unique names, so a graph exported with GetSymbol has distinct inputs.
    static std::atomic<uint64_t> counter{0};
    attrs.name = absl::StrCat("var", counter++);
    auto node = std::make_shared<Node>();
    node->attrs = std::move(attrs);
    auto info = std::make_shared<AGInfo>();
    info->values = {x->Detach()};
    info->marked = true;
    info->grad = g.Detach();
    info->grad_req = reqs[i];
    node->info = std::move(info);
    x->set_autograd_entry(ArrayHistory{node, 0});
    x->set_grad(g);
  }
}

void AttachGrad(NDArray* x, OpReqType req) {
  if (x == nullptr || x->is_none()) {
    throw InvalidArgument("AttachGrad: the array is none");
  }
  imperative::RecordingScope pause(false);
  NDArray g = imperative::Invoke("zeros_like", {*x})[0];
  MarkVariables({x}, {g}, {req});
}

namespace {

// The AGInfo holding x's attached gradient, or null.
AGInfo* AttachedInfo(const NDArray& x) {
  const ArrayHistory& h = x.autograd_entry();
  AGInfo* info = h.empty() ? nullptr : InfoOf(*h.node);
  if (info == nullptr || !info->marked || info->marked_output != h.index) {
    return nullptr;
  }
  return info;
}

// AttachedInfo of *x; InvalidArgument for a none array, StateError when
// it has no gradient attached.
AGInfo* RequireAttached(const NDArray* x, const char* who) {
  if (x == nullptr || x->is_none()) {
    throw InvalidArgument(absl::StrCat(who, ": the array is none"));
  }
  AGInfo* info = AttachedInfo(*x);
  if (info == nullptr) {
    throw StateError(
        absl::StrCat(who, ": the array has no gradient attached (AttachGrad)"));
  }
  return info;
}

}  // namespace

bool IsGradFresh(const NDArray& x) {
  const AGInfo* info = x.is_none() ? nullptr : AttachedInfo(x);
  return info != nullptr && info->fresh_grad;
}

void SetGradFresh(NDArray* x, bool fresh) {
  RequireAttached(x, "SetGradFresh")->fresh_grad = fresh;
}

void DropGrad(NDArray* x) {
  AGInfo* info = RequireAttached(x, "DropGrad");
  const ArrayHistory h = x->autograd_entry();
  info->marked = false;
  info->grad = NDArray();
  info->grad_req = OpReqType::kNullOp;
  x->set_grad(NDArray());
  // A leaf becomes a plain array again; graphs already recorded from it
  // see a constant. An intermediate keeps its history.
  if (h.node->is_variable()) x->set_autograd_entry(ArrayHistory{});
}

namespace {

struct Plan {
  std::vector<NodeEntry> ys;
  std::vector<NodePtr> recorded;  // Op nodes of the recorded graph.
};

Plan CollectHeads(const std::vector<NDArray>& heads, const char* who) {
  Plan plan;
  for (size_t i = 0; i < heads.size(); ++i) {
    const ArrayHistory& h = heads[i].autograd_entry();
    if (h.empty()) {
      throw StateError(absl::StrCat(
          who, ": head ", i,
          " is not part of a recorded graph (compute it inside a RecordScope "
          "from an array with AttachGrad)"));
    }
    plan.ys.push_back(NodeEntry{h.node, h.index, 0});
  }
  DFSVisit(plan.ys, [&](const NodePtr& n) {
    const AGInfo* info = InfoOf(*n);
    if (n->is_variable() || info == nullptr) return;
    if (info->freed) {
      throw StateError(absl::StrCat(
          who, ": the recorded graph (op \"", n->op()->name(),
          "\") was freed by an earlier backward; pass retain_graph=true to "
          "differentiate it again"));
    }
    plan.recorded.push_back(n);
  });
  return plan;
}

// zeros_like(output) of a forward output whose value was not kept (an
// output with no gradient flowing in): zeros from the recorded shape.
std::optional<NDArray> ZerosFromMetadata(
    const Node& n,
    const absl::flat_hash_map<const Node*, std::vector<NDArray>>& values) {
  if (n.op()->name() != "zeros_like") return std::nullopt;
  const NodeEntry& e = n.inputs[0];
  const AGInfo* info = InfoOf(*e.node);
  if (info == nullptr || values.contains(e.node.get()) ||
      e.index >= info->shapes.size() || !info->values[e.index].is_none()) {
    return std::nullopt;
  }
  imperative::InvokeOptions on;
  on.ctx = info->ctx;
  return imperative::Invoke("_zeros", {},
                            {{"shape", info->shapes[e.index].ToString()},
                             {"dtype", DTypeName(info->types[e.index])}},
                            on)[0];
}

// Where Backward wants one gradient: the variable's gradient array and its
// request.
struct GradTarget {
  NDArray grad;
  OpReqType req;
};

// Runs the gradient graph of `plan.ys` with respect to `xs`; returns one
// gradient per x. With `targets`, the op computing gradient i writes it
// straight into targets[i] (as MXNet's Backward does) when nothing else
// reads that result and the request is kWriteTo or kAddTo, and
// (*written)[i] says so; the others are left to the caller.
std::vector<NDArray> Differentiate(
    const Plan& plan, const std::vector<NDArray>& heads,
    const std::vector<NDArray>& head_grads, const std::vector<NodeEntry>& xs,
    bool create_graph, bool train_mode, const char* who,
    const std::vector<GradTarget>* targets = nullptr,
    std::vector<bool>* written = nullptr) {
  if (!head_grads.empty() && head_grads.size() != heads.size()) {
    throw InvalidArgument(absl::StrCat(who, ": ", head_grads.size(),
                                       " head gradients for ", heads.size(),
                                       " heads"));
  }
  // Head gradients enter the gradient graph as placeholder variables.
  absl::flat_hash_map<const Node*, std::vector<NDArray>> values;
  std::vector<NodeEntry> head_entries;
  for (size_t i = 0; i < heads.size(); ++i) {
    NDArray g = head_grads.empty() ? NDArray() : head_grads[i];
    if (g.is_none()) {
      imperative::RecordingScope pause(false);
      g = imperative::Invoke("ones_like", {heads[i]})[0];
    } else if (g.shape() != heads[i].shape()) {
      throw ShapeError(absl::StrCat(who, ": head gradient ", i, " has shape ",
                                    g.shape().ToString(), " but the head has ",
                                    heads[i].shape().ToString()));
    }
    NodePtr placeholder = Node::Variable(absl::StrCat("head_grad", i));
    values[placeholder.get()] = {g};
    head_entries.push_back(NodeEntry{placeholder, 0, 0});
  }
  Graph g;
  g.SetAttr("grad_ys", plan.ys);
  g.SetAttr("grad_ys_out_grad", head_entries);
  g.SetAttr("grad_xs", xs);
  g = ApplyPass(std::move(g), "Gradient");

  // Topological order, and how many consumers each node has left, so
  // intermediate gradients are released as soon as they are used.
  std::vector<NodePtr> order;
  absl::flat_hash_map<const Node*, int> uses;
  DFSVisit(g.outputs, [&](const NodePtr& n) {
    order.push_back(n);
    for (const NodeEntry& e : n->inputs) ++uses[e.node.get()];
  });
  for (const NodeEntry& e : g.outputs) ++uses[e.node.get()];

  // Gradient outputs their op may write into the targets: listed once,
  // read by no node (-1: not allowed).
  absl::flat_hash_map<std::pair<const Node*, uint32_t>, int> direct;
  if (targets != nullptr) {
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const auto key =
          std::make_pair(g.outputs[i].node.get(), g.outputs[i].index);
      auto [it, fresh] = direct.emplace(key, static_cast<int>(i));
      if (!fresh) it->second = -1;
    }
    // Arrays the gradient ops read (head gradients, kept forward values):
    // a target sharing memory with one of them is written after all ops,
    // by the copy, or an op could read it already overwritten.
    std::vector<NDArray> read;
    for (const auto& [node, v] : values)
      read.insert(read.end(), v.begin(), v.end());
    for (const NodePtr& n : order) {
      const bool gradient_op = !n->is_variable() && InfoOf(*n) == nullptr;
      for (const NodeEntry& e : n->inputs) {
        auto it = direct.find(std::make_pair(e.node.get(), e.index));
        if (it != direct.end()) it->second = -1;
        const AGInfo* info = InfoOf(*e.node);
        if (gradient_op && info != nullptr && e.index < info->values.size()) {
          read.push_back(info->values[e.index]);
        }
      }
    }
    for (auto& [entry, i] : direct) {
      if (i < 0) continue;
      for (const NDArray& a : read) {
        if (!a.is_none() && a.SharesChunkWith((*targets)[i].grad)) {
          i = -1;
          break;
        }
      }
    }
  }

  auto value_of = [&](const NodeEntry& e) -> NDArray {
    auto it = values.find(e.node.get());
    if (it != values.end()) return it->second[e.index];
    const AGInfo* info = InfoOf(*e.node);
    if (info == nullptr || e.index >= info->values.size() ||
        info->values[e.index].is_none()) {
      throw StateError(absl::StrCat(who, ": the value of \"", e.node->name(),
                                    "\" output ", e.index,
                                    " was not kept for the gradient"));
    }
    NDArray v = info->values[e.index];
    // Higher order: gradient ops read forward values as recorded arrays.
    if (create_graph) v.set_autograd_entry(ArrayHistory{e.node, e.index});
    return v;
  };

  imperative::RecordingScope record(create_graph);
  imperative::TrainingScope train(train_mode);
  for (const NodePtr& n : order) {
    if (n->is_variable() || InfoOf(*n) != nullptr) continue;  // Forward.
    // Such ops (a recorded CachedOp's backward) read values autograd does
    // not see, so their results could not be differentiated again.
    if (create_graph && n->op()->GetAttr<imperative::FInvoke>("FInvoke") &&
        !n->op()->GetAttr<FGradient>("FGradient")) {
      throw NotImplemented(absl::StrCat(
          who, ": create_graph needs the gradient of op \"", n->op()->name(),
          "\", which has no gradient (higher order is not supported through "
          "it)"));
    }
    std::vector<NDArray> out;
    if (std::optional<NDArray> zeros = ZerosFromMetadata(*n, values)) {
      out = {*zeros};
    } else {
      std::vector<NDArray> in;
      for (const NodeEntry& e : n->inputs) in.push_back(value_of(e));
      imperative::InvokeOptions options;
      // (Dynamic-shape ops allocate their outputs themselves.)
      const bool can_bind = targets != nullptr && !n->op()->is_dynamic_shape();
      for (uint32_t k = 0; can_bind && k < n->num_outputs(); ++k) {
        auto it = direct.find(std::make_pair(n.get(), k));
        if (it == direct.end() || it->second < 0) continue;
        const GradTarget& t = (*targets)[it->second];
        if (t.req != OpReqType::kWriteTo && t.req != OpReqType::kAddTo)
          continue;
        out.resize(n->num_outputs());
        options.req.resize(n->num_outputs(), OpReqType::kWriteTo);
        out[k] = t.grad;
        options.req[k] = t.req;
        (*written)[it->second] = true;
      }
      imperative::Invoke(n->attrs, in, &out, options);
    }
    values[n.get()] = std::move(out);
    for (const NodeEntry& e : n->inputs) {
      if (--uses[e.node.get()] == 0) values.erase(e.node.get());
    }
  }
  std::vector<NDArray> grads;
  for (const NodeEntry& e : g.outputs) grads.push_back(value_of(e));
  return grads;
}

void Release(const Plan& plan) {
  for (const NodePtr& n : plan.recorded) {
    AGInfo* info = InfoOf(*n);
    for (NDArray& v : info->values) v = NDArray();
    info->freed = true;
    // Constants feeding the graph keep values too.
    for (const NodeEntry& e : n->inputs) {
      AGInfo* in = InfoOf(*e.node);
      if (in != nullptr && e.node->is_variable() && !in->marked) {
        for (NDArray& v : in->values) v = NDArray();
      }
    }
  }
}

}  // namespace

void Backward(const std::vector<NDArray>& heads,
              const std::vector<NDArray>& head_grads,
              const BackwardOptions& options) {
  const Plan plan = CollectHeads(heads, "Backward");
  std::vector<NodeEntry> xs;
  std::vector<AGInfo*> targets;
  DFSVisit(plan.ys, [&](const NodePtr& n) {
    AGInfo* info = InfoOf(*n);
    if (info != nullptr && info->marked &&
        info->grad_req != OpReqType::kNullOp) {
      xs.push_back(NodeEntry{n, info->marked_output, 0});
      targets.push_back(info);
    }
  });
  if (xs.empty()) {
    throw StateError(
        "Backward: no variable with a gradient request is reachable from the "
        "heads (mark inputs with AttachGrad before recording)");
  }
  std::vector<GradTarget> dest;
  for (AGInfo* t : targets) dest.push_back({t->grad, t->grad_req});
  std::vector<bool> written(xs.size(), false);
  const std::vector<NDArray> grads =
      Differentiate(plan, heads, head_grads, xs, /*create_graph=*/false,
                    options.train_mode, "Backward", &dest, &written);
  // The rest are copied (or added) into their buffers.
  std::vector<NDArray> computed, buffers;
  std::vector<OpReqType> reqs;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (written[i]) continue;  // The gradient op wrote targets[i]->grad.
    computed.push_back(grads[i]);
    buffers.push_back(targets[i]->grad);
    reqs.push_back(targets[i]->grad_req);
  }
  imperative::RecordingScope pause(false);
  imperative::DeliverOutputs(computed, reqs, &buffers);
  for (AGInfo* t : targets) t->fresh_grad = true;
  if (!options.retain_graph) Release(plan);
}

std::vector<NDArray> Grad(const std::vector<NDArray>& heads,
                          const std::vector<NDArray>& variables,
                          const std::vector<NDArray>& head_grads,
                          const GradOptions& options) {
  const Plan plan = CollectHeads(heads, "Grad");
  std::vector<NodeEntry> xs;
  for (size_t i = 0; i < variables.size(); ++i) {
    const ArrayHistory& h = variables[i].autograd_entry();
    const AGInfo* info = h.empty() ? nullptr : InfoOf(*h.node);
    if (info == nullptr || !info->marked || info->marked_output != h.index) {
      throw InvalidArgument(absl::StrCat(
          "Grad: variable ", i,
          " was not marked (call AttachGrad or MarkVariables before "
          "recording)"));
    }
    xs.push_back(NodeEntry{h.node, h.index, 0});
  }
  std::vector<NDArray> grads =
      Differentiate(plan, heads, head_grads, xs, options.create_graph,
                    options.train_mode, "Grad");
  if (!options.create_graph) {
    for (NDArray& g : grads) g = g.Detach();
    if (!options.retain_graph) Release(plan);
  }
  return grads;
}

}  // namespace autograd
}  // namespace mx
