#include "imperative/executor.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "graph/pass.h"
#include "imperative/imperative.h"
#include "imperative/subgraph_hook.h"

namespace mx {
namespace {

// Sets every element of an array to `value` (a device array through a
// host array and a copy: its memory is not the host's to write).
void FillValue(const NDArray& a, double value) {
  if (!a.ctx().is_host()) {
    NDArray host(a.shape(), Context::CPU(), a.dtype());
    FillValue(host, value);
    CopyFromTo(host, a);
    return;
  }
  a.CheckAndAlloc();
  a.MarkWritten();
  const TBlob blob = a.blob();
  engine::Engine::Get()->PushSync(
      [blob, value](engine::RunContext) {
        // The size once, not per element: the loop's writes may alias the
        // blob's shape for all the compiler knows, and unoptimized builds
        // spent most of binding a 100M-weight model recomputing it.
        const int64_t n = blob.Size();
        MX_DTYPE_SWITCH(blob.dtype, T, {
          std::fill_n(blob.data<T>(), n,
                      static_cast<T>(static_cast<float>(value)));
        });
      },
      a.ctx(), {}, {a.var()}, engine::FnProperty::kNormal, 0, "FillValue");
}

void CheckCount(const char* what, size_t given,
                const std::vector<std::string>& names) {
  if (given != names.size()) {
    throw InvalidArgument(absl::StrCat("Executor::Bind: ", given, " ", what,
                                       " given for ", names.size(), " (",
                                       absl::StrJoin(names, ", "), ")"));
  }
}

}  // namespace

std::unique_ptr<Executor> Executor::Bind(const Symbol& symbol, Context ctx,
                                         std::vector<NDArray> args,
                                         std::vector<NDArray> arg_grads,
                                         std::vector<OpReqType> grad_reqs,
                                         std::vector<NDArray> aux) {
  std::unique_ptr<Executor> exec(new Executor());
  exec->symbol_ = symbol;
  exec->ctx_ = ctx;
  exec->arg_names_ = symbol.ListArguments();
  exec->aux_names_ = symbol.ListAuxiliaryStates();
  CheckCount("arguments", args.size(), exec->arg_names_);
  CheckCount("auxiliary states", aux.size(), exec->aux_names_);
  if (arg_grads.empty()) arg_grads.resize(args.size());
  CheckCount("gradient arrays", arg_grads.size(), exec->arg_names_);
  if (grad_reqs.empty()) {
    for (const NDArray& g : arg_grads) {
      grad_reqs.push_back(g.is_none() ? OpReqType::kNullOp
                                      : OpReqType::kWriteTo);
    }
  }
  CheckCount("gradient requests", grad_reqs.size(), exec->arg_names_);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_none()) {
      throw InvalidArgument(absl::StrCat("Executor::Bind: argument \"",
                                         exec->arg_names_[i], "\" is none"));
    }
  }
  exec->args_ = std::move(args);
  bool need_grad = false;
  for (OpReqType r : grad_reqs) need_grad |= r != OpReqType::kNullOp;
  // Arrays stay bound by the original names; only the graph changes. The
  // backend's selectors see the shapes and dtypes the arrays give.
  std::map<std::string, std::pair<TShape, DType>> bound;
  for (size_t i = 0; i < exec->args_.size(); ++i) {
    bound[exec->arg_names_[i]] = {exec->args_[i].shape(),
                                  exec->args_[i].dtype()};
  }
  for (size_t i = 0; i < aux.size(); ++i) {
    if (!aux[i].is_none()) {
      bound[exec->aux_names_[i]] = {aux[i].shape(), aux[i].dtype()};
    }
  }
  exec->symbol_ = ApplySubgraphBackendFromEnv(symbol, need_grad, bound);
  exec->grads_ = std::move(arg_grads);
  exec->grad_reqs_ = std::move(grad_reqs);
  exec->aux_ = std::move(aux);
  exec->Init();
  return exec;
}

std::unique_ptr<Executor> Executor::SimpleBind(
    const Symbol& symbol, Context ctx,
    const std::map<std::string, TShape>& shapes,
    const std::map<std::string, DType>& dtypes, OpReqType grad_req) {
  Graph g(symbol);
  const IndexedGraph& idx = g.indexed_graph();
  std::vector<TShape> in_shapes;
  std::vector<DType> in_types;
  for (uint32_t nid : idx.input_nodes()) {
    const std::string& name = idx[nid].source->name();
    auto s = shapes.find(name);
    in_shapes.push_back(s == shapes.end() ? TShape() : s->second);
    auto t = dtypes.find(name);
    in_types.push_back(t == dtypes.end() ? DType::kFloat32 : t->second);
  }
  g.SetAttr("shape_inputs", in_shapes);
  g.SetAttr("dtype_inputs", in_types);
  g = ApplyPasses(g, {"InferShape", "InferType"});
  if (g.GetAttr<size_t>("shape_num_unknown_nodes") > 0) {
    throw ShapeError("Executor::SimpleBind: cannot infer all shapes:\n" +
                     g.GetAttr<std::string>("shape_unknown_report"));
  }
  const auto& all_shapes = g.GetAttr<std::vector<TShape>>("shape");
  const auto& all_types = g.GetAttr<std::vector<DType>>("dtype");
  absl::flat_hash_map<std::string, std::pair<TShape, DType>> by_name;
  for (uint32_t nid : idx.input_nodes()) {
    const uint32_t eid = idx.entry_id(nid, 0);
    by_name[idx[nid].source->name()] = {all_shapes[eid], all_types[eid]};
  }
  auto make = [&](const std::string& name) {
    const auto& [shape, dtype] = by_name.at(name);
    NDArray a(shape, ctx, dtype);
    FillValue(a, 0);
    return a;
  };
  std::vector<NDArray> args, grads, aux;
  std::vector<OpReqType> reqs;
  for (const std::string& name : symbol.ListArguments()) {
    args.push_back(make(name));
    grads.push_back(grad_req == OpReqType::kNullOp ? NDArray() : make(name));
    reqs.push_back(grad_req);
  }
  for (const std::string& name : symbol.ListAuxiliaryStates()) {
    aux.push_back(make(name));
  }
  return Bind(symbol, ctx, std::move(args), std::move(grads), std::move(reqs),
              std::move(aux));
}

void Executor::Init() {
  absl::flat_hash_map<std::string, NDArray> bound;
  for (size_t i = 0; i < arg_names_.size(); ++i)
    bound[arg_names_[i]] = args_[i];
  for (size_t i = 0; i < aux_names_.size(); ++i) bound[aux_names_[i]] = aux_[i];
  for (const auto& [name, a] : bound) {
    if (a.ctx() != ctx_) {
      throw InvalidArgument(absl::StrCat("Executor::Bind: input \"", name,
                                         "\" is on ", a.ctx().ToString(),
                                         ", not ", ctx_.ToString()));
    }
  }
  const Graph forward(symbol_);
  num_forward_nodes_ =
      static_cast<uint32_t>(forward.indexed_graph().num_nodes());

  Symbol plan = symbol_;
  for (size_t i = 0; i < grad_reqs_.size(); ++i) {
    if (grad_reqs_[i] != OpReqType::kNullOp)
      grad_args_.push_back(static_cast<int>(i));
  }
  // Forward shapes decide the shapes of the head gradients.
  std::vector<TShape> in_shapes;
  std::vector<DType> in_types;
  for (uint32_t nid : forward.indexed_graph().input_nodes()) {
    const NDArray& a = bound.at(forward.indexed_graph()[nid].source->name());
    in_shapes.push_back(a.shape());
    in_types.push_back(a.dtype());
  }
  if (!grad_args_.empty()) {
    Graph inferred = forward;
    inferred.SetAttr("shape_inputs", in_shapes);
    inferred.SetAttr("dtype_inputs", in_types);
    inferred = ApplyPasses(inferred, {"InferShape", "InferType"});
    const auto& shapes = inferred.GetAttr<std::vector<TShape>>("shape");
    const auto& types = inferred.GetAttr<std::vector<DType>>("dtype");
    const IndexedGraph& fidx = inferred.indexed_graph();
    absl::flat_hash_map<std::string, NodePtr> arg_nodes;
    for (const NodePtr& n :
         symbol_.ListInputs(Symbol::InputKind::kReadOnlyArgs)) {
      arg_nodes[n->name()] = n;
    }
    for (size_t i = 0; i < symbol_.outputs.size(); ++i) {
      const uint32_t eid = fidx.entry_id(symbol_.outputs[i]);
      head_grads_.emplace_back(shapes[eid], ctx_, types[eid]);
      bound[HeadGradName(i)] = head_grads_.back();
    }
    std::vector<NodePtr> xs;
    for (int a : grad_args_) xs.push_back(arg_nodes.at(arg_names_[a]));
    plan = WithGradients(symbol_, xs);
  }
  const Graph combined(plan);
  in_shapes.clear();
  in_types.clear();
  for (uint32_t nid : combined.indexed_graph().input_nodes()) {
    const NDArray& a = bound.at(combined.indexed_graph()[nid].source->name());
    inputs_.push_back(a);
    in_shapes.push_back(a.shape());
    in_types.push_back(a.dtype());
  }
  // Backward may run more than once after a Forward: it must not
  // overwrite the forward values it reads.
  runner_ = std::make_unique<GraphRunner>(
      plan, ctx_, in_shapes, in_types, "Executor::Bind",
      grad_args_.empty() ? 0 : num_forward_nodes_);
}

void Executor::Forward(bool is_train) {
  // Planned outputs are reused: outputs() stays the same arrays.
  state_ = runner_->Prepare(inputs_, /*fresh_blocks=*/false,
                            /*fresh_outputs=*/false);
  runner_->RunNodes(&state_, 0, num_forward_nodes_, is_train);
  std::vector<NDArray> all = runner_->Outputs(state_);
  outputs_.assign(all.begin(), all.begin() + symbol_.outputs.size());
  forward_ran_ = true;
  forward_is_train_ = is_train;
}

void Executor::Backward(const std::vector<NDArray>& head_grads) {
  if (grad_args_.empty()) {
    throw StateError("Executor::Backward: no gradient was requested at bind");
  }
  if (!forward_ran_) {
    throw StateError("Executor::Backward: call Forward first");
  }
  if (!head_grads.empty() && head_grads.size() != head_grads_.size()) {
    throw InvalidArgument(
        absl::StrCat("Executor::Backward: ", head_grads.size(),
                     " head gradients for ", head_grads_.size(), " outputs"));
  }
  for (size_t i = 0; i < head_grads_.size(); ++i) {
    if (head_grads.empty()) {
      FillValue(head_grads_[i], 1.0);
    } else {
      CopyFromTo(head_grads[i], head_grads_[i]);
    }
  }
  // The gradient ops write the gradient arrays themselves where they can
  // (each under its request), as MXNet's executor does.
  std::vector<bool> bound(grad_args_.size());
  runner_->UnbindOutputs(&state_);
  for (size_t k = 0; k < grad_args_.size(); ++k) {
    const int a = grad_args_[k];
    bound[k] = runner_->BindOutput(&state_, symbol_.outputs.size() + k,
                                   grads_[a], grad_reqs_[a]);
  }
  runner_->RunNodes(&state_, num_forward_nodes_, runner_->num_nodes(),
                    forward_is_train_);
  const std::vector<NDArray> all = runner_->Outputs(state_);
  for (size_t k = 0; k < grad_args_.size(); ++k) {
    if (bound[k]) continue;
    const int a = grad_args_[k];
    const NDArray& result = all[symbol_.outputs.size() + k];
    if (grad_reqs_[a] == OpReqType::kAddTo) {
      std::vector<NDArray> out{grads_[a]};
      imperative::Invoke(
          MakeAttrs(OpRegistry::Get()->Lookup("elemwise_add"), {}),
          {grads_[a], result}, &out);
    } else {
      CopyFromTo(result, grads_[a]);
    }
  }
}

std::map<std::string, NDArray> Executor::arg_dict() const {
  std::map<std::string, NDArray> d;
  for (size_t i = 0; i < arg_names_.size(); ++i) d[arg_names_[i]] = args_[i];
  return d;
}

std::map<std::string, NDArray> Executor::grad_dict() const {
  std::map<std::string, NDArray> d;
  for (size_t i = 0; i < arg_names_.size(); ++i) {
    if (!grads_[i].is_none()) d[arg_names_[i]] = grads_[i];
  }
  return d;
}

std::map<std::string, NDArray> Executor::aux_dict() const {
  std::map<std::string, NDArray> d;
  for (size_t i = 0; i < aux_names_.size(); ++i) d[aux_names_[i]] = aux_[i];
  return d;
}

size_t Executor::planned_bytes() const { return runner_->planned_bytes(); }

size_t Executor::bytes_without_reuse() const {
  return runner_->bytes_without_reuse();
}

}  // namespace mx
