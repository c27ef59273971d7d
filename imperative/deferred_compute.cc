// Deferred compute: tracing ops into graph nodes, and computing traced
// arrays when they are read.
#include "imperative/deferred_compute.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace mx {
namespace dc {
namespace {

// Stored in Node::info of traced nodes and of variables with data.
struct DCInfo {
  // The node's output arrays, detached (no history, so no cycle).
  std::vector<NDArray> outputs;
  Context ctx;
  bool computed = false;
};

DCInfo* InfoOf(const Node& node) {
  const auto* info = std::any_cast<std::shared_ptr<DCInfo>>(&node.info);
  return info == nullptr ? nullptr : info->get();
}

std::string Label(const NodeAttrs& attrs) {
  return absl::StrCat("deferred compute: op \"", attrs.op->name(), "\"");
}

// "cpu(1)" and the like, as Context::ToString writes them.
Context ParseContext(const std::string& s) {
  const size_t open = s.find('('), close = s.rfind(')');
  int id = 0;
  if (open == std::string::npos || close != s.size() - 1 ||
      !absl::SimpleAtoi(s.substr(open + 1, close - open - 1), &id)) {
    throw InvalidArgument("_copyto: bad context \"" + s + "\"");
  }
  const std::string type = s.substr(0, open);
  if (type == "cpu") return Context::CPU(id);
  if (type == "gpu") return Context::GPU(id);
  if (type == "cpu_pinned") return Context::CPUPinned(id);
  throw InvalidArgument("_copyto: bad context \"" + s + "\"");
}

struct CopyToParam {
  std::string ctx;
  static void Declare(ParamSchema<CopyToParam>* s) {
    s->Field("ctx", &CopyToParam::ctx).Required().Describe("target context");
  }
};

void Defer(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
           std::vector<NDArray>* outputs, const std::vector<TShape>& out_shapes,
           const std::vector<DType>& out_types, Context ctx) {
  auto node = std::make_shared<Node>();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ArrayHistory& h = inputs[i].deferred_entry();
    if (h.empty()) {
      throw InvalidArgument(absl::StrCat(
          Label(attrs), ": input ", i,
          " is neither associated with a variable (dc::SetVariable) nor "
          "computed by a traced op"));
    }
    node->inputs.push_back(NodeEntry{h.node, h.index, 0});
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    if (!(*outputs)[i].is_none() && !(*outputs)[i].deferred_entry().empty()) {
      throw NotImplemented(absl::StrCat(
          Label(attrs), " writes into output ", i,
          ", an array that already has a history; in-place writes are not "
          "supported while tracing"));
    }
  }
  static std::atomic<uint64_t> counter{0};
  node->attrs = attrs;
  if (node->attrs.name.empty()) {
    node->attrs.name = absl::StrCat(attrs.op->name(), counter++);
  }
  Context out_ctx = ctx;
  if (attrs.op->name() == "_copyto") {
    out_ctx = ParseContext(attrs.get<CopyToParam>().ctx);
  }
  auto info = std::make_shared<DCInfo>();
  info->ctx = ctx;
  for (size_t i = 0; i < outputs->size(); ++i) {
    NDArray& out = (*outputs)[i];
    if (out.is_none()) {
      const bool known =
          !attrs.op->is_dynamic_shape() && out_shapes[i].is_known();
      out = NDArray(known ? out_shapes[i] : TShape(), out_ctx, out_types[i]);
    }
    info->outputs.push_back(out.Detach());
    out.set_deferred_entry(ArrayHistory{node, static_cast<uint32_t>(i)});
  }
  node->info = std::move(info);
}

// Fills `target`, an array whose shape was unknown when traced (a static op
// after a dynamic-shape one), with `value` once that is computed.
void CopyIntoDynamic(const NDArray& value, const NDArray& target) {
  if (!value.ctx().is_host()) {
    throw NotImplemented(
        "deferred compute: unknown-shape outputs of static ops are only "
        "supported on host contexts");
  }
  target.MarkWritten();
  engine::Engine::Get()->PushSync(
      [value, target](engine::RunContext) {
        const TBlob src = value.blob();
        const TBlob dst = target.AllocDynamic(src.shape);
        std::memcpy(dst.dptr, src.dptr,
                    static_cast<size_t>(src.Size()) * DTypeSize(src.dtype));
      },
      value.ctx(), {value.var()}, {target.var()}, engine::FnProperty::kNormal,
      0, "DeferredCopyIntoDynamic");
}

void ComputeNode(const Node& node, DCInfo* info) {
  std::vector<NDArray> in;
  for (const NodeEntry& e : node.inputs) {
    in.push_back(InfoOf(*e.node)->outputs[e.index]);
  }
  std::vector<NDArray> out = info->outputs;
  std::vector<size_t> late;  // Outputs of unknown shape of a static op.
  if (!node.op()->is_dynamic_shape()) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].static_shape().is_known()) {
        late.push_back(i);
        out[i] = NDArray();
      }
    }
  }
  imperative::InvokeOptions options;
  options.ctx = info->ctx;
  imperative::Invoke(node.attrs, in, &out, options);
  for (size_t i : late) CopyIntoDynamic(out[i], info->outputs[i]);
  info->computed = true;
}

// Computes every pending node `a` depends on, in order, each once.
void Compute(const NDArray& a) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  imperative::DeferredComputeScope not_tracing(false);
  imperative::RecordingScope not_recording(false);
  // Post-order walk that stops at computed nodes.
  std::vector<std::pair<const Node*, size_t>> stack;
  absl::flat_hash_set<const Node*> seen;
  std::vector<const Node*> order;
  const Node* root = a.deferred_entry().node.get();
  stack.emplace_back(root, 0);
  seen.insert(root);
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (next < n->inputs.size()) {
      const Node* in = n->inputs[next++].node.get();
      const DCInfo* info = InfoOf(*in);
      if (info == nullptr) {
        throw InvalidArgument(absl::StrCat("deferred compute: input \"",
                                           in->name(), "\" has no data"));
      }
      if (!info->computed && seen.insert(in).second) stack.emplace_back(in, 0);
      continue;
    }
    order.push_back(n);
    stack.pop_back();
  }
  for (const Node* n : order) {
    DCInfo* info = InfoOf(*n);
    if (!info->computed) ComputeNode(*n, info);
  }
}

// Views and copies while tracing become ops.
bool TraceMethod(const NDArray& self, const NDArray::TracedCall& call,
                 NDArray* out) {
  if (!IsDeferredCompute()) return false;
  using Call = NDArray::TracedCall;
  auto op = [](const std::string& name, const NDArray& x,
               const AttrDict& attrs) {
    return imperative::Invoke(name, {x}, attrs)[0];
  };
  switch (call.method) {
    case Call::kReshape:
      *out = op("Reshape", self,
                {{"shape", call.shape.ToString()},
                 {"reverse", call.reverse ? "True" : "False"}});
      return true;
    case Call::kSlice:
    case Call::kAt: {
      NDArray rows = op("slice_axis", self,
                        {{"axis", "0"},
                         {"begin", absl::StrCat(call.begin)},
                         {"end", absl::StrCat(call.end)}});
      *out = call.method == Call::kSlice
                 ? rows
                 : op("_npi_squeeze", rows, {{"axis", "0"}});
      return true;
    }
    case Call::kCopy:
      *out = op("_copyto", self, {{"ctx", call.ctx.ToString()}});
      return true;
  }
  return false;
}

// _copyto: a copy to the context in attribute "ctx" (traced Copy calls).
// Graph executors run everything on their own context, so there it is a
// plain copy into the planned output.
void CopyTo(const NodeAttrs& attrs, const std::vector<NDArray>& in,
            std::vector<NDArray>* out, const std::vector<OpReqType>& req) {
  const OpReqType r = req.empty() ? OpReqType::kWriteTo : req[0];
  if (r == OpReqType::kNullOp) return;
  if (!(*out)[0].is_none() && r != OpReqType::kAddTo) {
    CopyFromTo(in[0], (*out)[0]);
    return;
  }
  // A new array, or one to add to the given output (on its context).
  NDArray copy(in[0].shape(),
               (*out)[0].is_none() ? ParseContext(attrs.get<CopyToParam>().ctx)
                                   : (*out)[0].ctx(),
               in[0].dtype());
  CopyFromTo(in[0], copy);
  imperative::DeliverOutputs({copy}, req, out);
}

[[maybe_unused]] const bool kInstalled = [] {
  imperative::InvokeHooks hooks;
  hooks.defer = Defer;
  imperative::InstallInvokeHooks(hooks);
  NDArray::SetDeferredComputeHook(Compute);
  NDArray::SetTraceMethodHook(TraceMethod);
  OpRegistry::Get()
      ->Register("_copyto")
      .Describe("Copy to another context (from traced NDArray::Copy).")
      .SetParams<CopyToParam>()
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetInferShape(SameShape)
      .SetInferType(SameType)
      .SetAttr<imperative::FInvoke>("FInvoke", CopyTo)
      // Graphs run on one context, where the copy is the identity.
      .SetAttr<FGradient>(
          "FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& g) {
            return std::vector<NodeEntry>{
                MakeNode("_copy", {g[0]}, {}, n->name() + "_backward")};
          });
  return true;
}();

}  // namespace

void SetVariable(const std::vector<NDArray*>& arrays,
                 const std::vector<Symbol>& variables) {
  if (arrays.size() != variables.size()) {
    throw InvalidArgument(absl::StrCat("dc::SetVariable: ", arrays.size(),
                                       " arrays but ", variables.size(),
                                       " variables"));
  }
  for (size_t i = 0; i < arrays.size(); ++i) {
    const Symbol& v = variables[i];
    if (v.outputs.size() != 1 || !v.outputs[0].node->is_variable()) {
      throw InvalidArgument(absl::StrCat("dc::SetVariable: symbol ", i,
                                         " is not a single variable"));
    }
    NDArray* a = arrays[i];
    if (a == nullptr || a->is_none()) {
      throw InvalidArgument(
          absl::StrCat("dc::SetVariable: array ", i, " is none"));
    }
    const NodePtr& node = v.outputs[0].node;
    const ArrayHistory& h = a->deferred_entry();
    if (!h.empty() && h.node != node) {
      throw InvalidArgument(
          absl::StrCat("dc::SetVariable: array ", i,
                       " is already associated with \"", h.node->name(),
                       "\"; cannot associate it with \"", node->name(), "\""));
    }
    auto info = std::make_shared<DCInfo>();
    info->outputs = {a->Detach()};
    info->ctx = a->ctx();
    info->computed = true;
    node->info = std::move(info);
    a->set_deferred_entry(ArrayHistory{node, 0});
  }
}

Symbol GetSymbol(const std::vector<NDArray>& outputs) {
  Symbol traced;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ArrayHistory& h = outputs[i].deferred_entry();
    if (h.empty()) {
      throw InvalidArgument(absl::StrCat(
          "dc::GetSymbol: output ", i,
          " was not computed while tracing and is not a variable"));
    }
    traced.outputs.push_back(NodeEntry{h.node, h.index, 0});
  }
  // A copy without the traced data, so the symbol does not keep it alive.
  Symbol out = traced.Copy();
  DFSVisit(out.outputs, [](const NodePtr& n) { n->info.reset(); });
  return out;
}

}  // namespace dc
}  // namespace mx
