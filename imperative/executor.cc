#include "imperative/executor.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "graph/pass.h"
#include "imperative/imperative.h"

namespace mx {
namespace {

void FillZeros(const NDArray& a) {
  a.CheckAndAlloc();
  a.MarkWritten();
  const TBlob blob = a.blob();
  engine::Engine::Get()->PushSync(
      [blob](engine::RunContext) {
        const size_t bytes = blob.Size() * DTypeSize(blob.dtype);
        if (bytes > 0) std::memset(blob.dptr, 0, bytes);
      },
      a.ctx(), {}, {a.var()}, engine::FnProperty::kNormal, 0, "FillZeros");
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
    FillZeros(a);
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
  Graph graph(symbol_);
  const IndexedGraph& idx = graph.indexed_graph();
  absl::flat_hash_map<std::string, NDArray> bound;
  for (size_t i = 0; i < arg_names_.size(); ++i)
    bound[arg_names_[i]] = args_[i];
  for (size_t i = 0; i < aux_names_.size(); ++i) bound[aux_names_[i]] = aux_[i];
  std::vector<TShape> in_shapes;
  std::vector<DType> in_types;
  for (uint32_t nid : idx.input_nodes()) {
    const NDArray& a = bound.at(idx[nid].source->name());
    if (a.ctx() != ctx_) {
      throw InvalidArgument(absl::StrCat(
          "Executor::Bind: input \"", idx[nid].source->name(), "\" is on ",
          a.ctx().ToString(), ", not ", ctx_.ToString()));
    }
    inputs_.push_back(a);
    in_shapes.push_back(a.shape());
    in_types.push_back(a.dtype());
  }
  runner_ = std::make_unique<GraphRunner>(symbol_, ctx_, in_shapes, in_types,
                                          "Executor::Bind");
}

void Executor::Forward(bool is_train) {
  // Planned outputs are reused: outputs() stays the same arrays.
  outputs_ = runner_->Run(inputs_, is_train, /*fresh_blocks=*/false,
                          /*fresh_outputs=*/false);
}

void Executor::Backward(const std::vector<NDArray>&) {
  throw NotImplemented(
      "Executor::Backward: operator gradients are not implemented yet (they "
      "come with the autograd issue); Forward works");
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
