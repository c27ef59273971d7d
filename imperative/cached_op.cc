#include "imperative/cached_op.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "graph/pass.h"
#include "imperative/imperative.h"

namespace mx {

// Forward and gradient graph of one signature; shared by the recorded
// calls, which may outlive the CachedOp.
struct CachedOp::TrainingPlan {
  std::unique_ptr<GraphRunner> runner;
  uint32_t num_forward_nodes = 0;
  size_t num_outputs = 0;
  // Input position of head gradient i in the runner (-1: unused).
  std::vector<int> head_grad_inputs;
  // Per CachedOp input: whether its gradient is computed, and where in the
  // runner's outputs.
  std::vector<int> grad_output;
  std::vector<TShape> in_shapes;
  std::vector<DType> in_types;
  Context ctx;
};

namespace {

using TrainingPlan = CachedOp::TrainingPlan;

// One recorded call: the plan and the values of its run.
struct Call {
  std::shared_ptr<const TrainingPlan> plan;
  GraphRunner::State run;
};
using CallPtr = std::shared_ptr<Call>;

Call& CallOf(const NodeAttrs& attrs) {
  const auto* call = std::any_cast<CallPtr>(&attrs.parsed);
  if (call == nullptr) {
    throw InvalidArgument(absl::StrCat("op \"", attrs.op->name(),
                                       "\" is created by CachedOp calls only"));
  }
  return **call;
}

void RunForward(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                std::vector<NDArray>* outputs,
                const std::vector<OpReqType>& req) {
  Call& call = CallOf(attrs);
  const TrainingPlan& plan = *call.plan;
  call.run = plan.runner->Prepare(inputs, /*fresh_blocks=*/true,
                                  /*fresh_outputs=*/true);
  plan.runner->RunNodes(&call.run, 0, plan.num_forward_nodes,
                        imperative::IsTraining());
  std::vector<NDArray> all = plan.runner->Outputs(call.run);
  all.resize(plan.num_outputs);
  imperative::DeliverOutputs(all, req, outputs);
}

// Inputs: the output gradients; outputs: one gradient per CachedOp input
// (unwritten placeholders for inputs without one; nothing reads them).
// Given outputs (autograd's gradient arrays) are written by the gradient
// ops themselves where the runner can bind them, else copied into.
void RunBackward(const NodeAttrs& attrs, const std::vector<NDArray>& ograds,
                 std::vector<NDArray>* outputs,
                 const std::vector<OpReqType>& req) {
  Call& call = CallOf(attrs);
  const TrainingPlan& plan = *call.plan;
  for (size_t i = 0; i < ograds.size(); ++i) {
    if (plan.head_grad_inputs[i] >= 0) {
      plan.runner->SetInput(&call.run, plan.head_grad_inputs[i], ograds[i]);
    }
  }
  outputs->resize(plan.grad_output.size());
  // A retained call's earlier backward may have bound other arrays.
  plan.runner->UnbindOutputs(&call.run);
  std::vector<bool> bound(plan.grad_output.size(), false);
  for (size_t k = 0; k < plan.grad_output.size(); ++k) {
    const NDArray& given = (*outputs)[k];
    if (given.is_none() || plan.grad_output[k] < 0) continue;
    bool twice = false;  // One runner output for two inputs: copy both.
    for (size_t j = 0; j < plan.grad_output.size(); ++j) {
      twice |= j != k && plan.grad_output[j] == plan.grad_output[k];
    }
    bound[k] = !twice && plan.runner->BindOutput(
                             &call.run, plan.grad_output[k], given,
                             k < req.size() ? req[k] : OpReqType::kWriteTo);
  }
  plan.runner->RunNodes(&call.run, plan.num_forward_nodes,
                        plan.runner->num_nodes(), imperative::IsTraining());
  const std::vector<NDArray> all = plan.runner->Outputs(call.run);
  // The call keeps no reference to the caller's arrays.
  plan.runner->UnbindOutputs(&call.run);
  std::vector<NDArray> results;
  std::vector<OpReqType> requests = req;
  requests.resize(plan.grad_output.size(), OpReqType::kWriteTo);
  for (size_t k = 0; k < plan.grad_output.size(); ++k) {
    if (bound[k]) {
      results.push_back((*outputs)[k]);
      requests[k] = OpReqType::kNullOp;  // Written by the gradient op.
    } else if (plan.grad_output[k] >= 0) {
      results.push_back(all[plan.grad_output[k]]);
    } else if (!(*outputs)[k].is_none()) {
      // No gradient flows to this input; a given array gets zeros.
      imperative::InvokeOptions on;
      on.ctx = plan.ctx;
      results.push_back(
          imperative::Invoke("_zeros", {},
                             {{"shape", plan.in_shapes[k].ToString()},
                              {"dtype", DTypeName(plan.in_types[k])}},
                             on)[0]);
    } else {
      results.push_back(NDArray(plan.in_shapes[k], plan.ctx, plan.in_types[k]));
    }
  }
  imperative::DeliverOutputs(results, requests, outputs);
}

// _CachedOp_output: the output itself, then the call's recorded inputs.
struct TieParam {
  int num_args = 0;
  static void Declare(ParamSchema<TieParam>* s) {
    s->Field("num_args", &TieParam::num_args)
        .Required()
        .Describe("number of inputs (the output and the recorded inputs)");
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  OpRegistry::Get()
      ->Register("_CachedOp")
      .Describe("A CachedOp call recorded by autograd.")
      .SetNumInputs([](const NodeAttrs& a) {
        return static_cast<int>(CallOf(a).plan->in_shapes.size());
      })
      .SetNumOutputs([](const NodeAttrs& a) {
        return static_cast<int>(CallOf(a).plan->num_outputs);
      })
      .SetAttr<imperative::FInvoke>("FInvoke", RunForward)
      .SetAttr<FGradient>(
          "FGradient",
          [](const NodePtr& n, const std::vector<NodeEntry>& ograds) {
            auto bwd = std::make_shared<Node>();
            bwd->attrs.op = &OpRegistry::Get()->Lookup("_CachedOp_backward");
            bwd->attrs.name = n->name() + "_backward";
            bwd->attrs.parsed = n->attrs.parsed;
            bwd->inputs = ograds;
            const TrainingPlan& plan = *CallOf(n->attrs).plan;
            std::vector<NodeEntry> grads(n->inputs.size());
            for (uint32_t k = 0; k < grads.size(); ++k) {
              if (plan.grad_output[k] >= 0) grads[k] = NodeEntry{bwd, k, 0};
            }
            return grads;
          });
  OpRegistry::Get()
      ->Register("_CachedOp_backward")
      .Describe("The gradient of a recorded CachedOp call.")
      .SetNumInputs([](const NodeAttrs& a) {
        return static_cast<int>(CallOf(a).plan->num_outputs);
      })
      .SetNumOutputs([](const NodeAttrs& a) {
        return static_cast<int>(CallOf(a).plan->in_shapes.size());
      })
      .SetAttr<imperative::FInvoke>("FInvoke", RunBackward);
  OpRegistry::Get()
      ->Register("_CachedOp_output")
      .Describe(
          "An output of a CachedOp call run op by op (dynamic shapes), "
          "recorded with the call's recorded inputs as further inputs: "
          "returns input 0; its gradient goes to input 0 only.")
      .SetParams<TieParam>()
      .SetNumInputs([](const NodeAttrs& a) {
        return std::max(1, a.get<TieParam>().num_args);
      })
      .SetAttr<imperative::FInvoke>(
          "FInvoke",
          [](const NodeAttrs&, const std::vector<NDArray>& in,
             std::vector<NDArray>* out, const std::vector<OpReqType>& req) {
            imperative::DeliverOutputs({in[0]}, req, out);
          })
      .SetAttr<FGradient>(
          "FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& g) {
            std::vector<NodeEntry> grads(n->inputs.size());
            grads[0] = g[0];
            return grads;
          });
  return true;
}();

// A call recorded as one node ties every output to every recorded input,
// so Backward from any output reaches (and writes) all their gradients.
// Run op by op, only the ops are recorded: an output that depends on no
// recorded input would have no history, and Backward would reach only the
// inputs an output depends on. Recording each output once more with all
// recorded inputs attached gives the same reach.
void TieToRecordedInputs(const std::vector<NDArray>& inputs,
                         std::vector<NDArray>* outputs) {
  std::vector<NDArray> recorded;
  for (const NDArray& in : inputs) {
    if (!in.autograd_entry().empty()) recorded.push_back(in);
  }
  if (recorded.empty()) return;
  const NodeAttrs attrs =
      MakeAttrs(OpRegistry::Get()->Lookup("_CachedOp_output"),
                {{"num_args", std::to_string(recorded.size() + 1)}});
  for (NDArray& out : *outputs) {
    std::vector<NDArray> in = {out};
    in.insert(in.end(), recorded.begin(), recorded.end());
    std::vector<NDArray> tied;
    imperative::Invoke(attrs, in, &tied);
    out = tied[0];
  }
}

}  // namespace

CachedOp::CachedOp(Symbol symbol, Options options)
    : symbol_(std::move(symbol)),
      options_(options),
      input_names_(symbol_.ListInputNames()) {
  DFSVisit(symbol_.outputs, [this](const NodePtr& n) {
    dynamic_shape_ |= !n->is_variable() && n->op()->is_dynamic_shape();
  });
}

std::vector<NDArray> CachedOp::RunOpByOp(
    const std::vector<NDArray>& inputs) const {
  const Graph g(symbol_);
  const IndexedGraph& idx = g.indexed_graph();
  std::vector<NDArray> entries(idx.num_node_entries());
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries[idx.entry_id(idx.input_nodes()[i], 0)] = inputs[i];
  }
  imperative::InvokeOptions options;
  options.ctx = inputs[0].ctx();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node& node = *idx[nid].source;
    if (node.is_variable()) continue;
    std::vector<NDArray> in, out;
    for (const auto& e : idx[nid].inputs)
      in.push_back(entries[idx.entry_id(e)]);
    imperative::Invoke(node.attrs, in, &out, options);
    for (uint32_t i = 0; i < out.size(); ++i) {
      entries[idx.entry_id(nid, i)] = out[i];
    }
  }
  std::vector<NDArray> outputs;
  for (const auto& e : idx.outputs())
    outputs.push_back(entries[idx.entry_id(e)]);
  if (imperative::IsRecording()) TieToRecordedInputs(inputs, &outputs);
  return outputs;
}

size_t CachedOp::num_plans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plans_.size() + training_plans_.size();
}

std::string CachedOp::Signature(const std::vector<NDArray>& inputs) const {
  if (inputs.size() != input_names_.size()) {
    throw InvalidArgument(absl::StrCat(
        "CachedOp::Forward: ", inputs.size(), " inputs given for ",
        input_names_.size(), " (", absl::StrJoin(input_names_, ", "), ")"));
  }
  if (inputs.empty()) {
    throw InvalidArgument("CachedOp::Forward: the graph has no inputs");
  }
  std::string signature = inputs[0].ctx().ToString();
  for (const NDArray& in : inputs) {
    absl::StrAppend(&signature, ";", in.shape().ToString(),
                    DTypeName(in.dtype()));
  }
  return signature;
}

std::vector<NDArray> CachedOp::Forward(const std::vector<NDArray>& inputs) {
  std::string signature = Signature(inputs);
  if (dynamic_shape_) return RunOpByOp(inputs);
  if (imperative::IsRecording()) {
    for (const NDArray& in : inputs) {
      if (!in.autograd_entry().empty()) {
        return RecordedForward(inputs, std::move(signature));
      }
    }
  }
  const Context ctx = inputs[0].ctx();
  std::vector<TShape> shapes;
  std::vector<DType> types;
  for (const NDArray& in : inputs) {
    shapes.push_back(in.shape());
    types.push_back(in.dtype());
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<GraphRunner>& plan = plans_[signature];
  if (plan == nullptr) {
    try {
      plan = std::make_unique<GraphRunner>(symbol_, ctx, shapes, types,
                                           "CachedOp::Forward");
    } catch (...) {
      plans_.erase(signature);
      throw;
    }
  }
  return plan->Run(inputs, imperative::IsTraining(),
                   /*fresh_blocks=*/!options_.static_alloc,
                   /*fresh_outputs=*/!options_.static_shape);
}

namespace {

std::shared_ptr<const TrainingPlan> MakeTrainingPlan(
    const Symbol& symbol, const std::vector<NDArray>& inputs,
    const std::vector<bool>& needs_grad) {
  auto plan = std::make_shared<TrainingPlan>();
  plan->ctx = inputs[0].ctx();
  plan->num_outputs = symbol.outputs.size();
  const std::vector<NodePtr> nodes = symbol.ListInputs();
  std::vector<NodePtr> xs;
  for (size_t k = 0; k < inputs.size(); ++k) {
    plan->in_shapes.push_back(inputs[k].shape());
    plan->in_types.push_back(inputs[k].dtype());
    plan->grad_output.push_back(
        needs_grad[k] ? static_cast<int>(plan->num_outputs + xs.size()) : -1);
    if (needs_grad[k]) xs.push_back(nodes[k]);
  }
  // Head gradients take the shapes and dtypes of the outputs.
  Graph forward(symbol);
  forward.SetAttr("shape_inputs", plan->in_shapes);
  forward.SetAttr("dtype_inputs", plan->in_types);
  forward = ApplyPasses(forward, {"InferShape", "InferType"});
  plan->num_forward_nodes =
      static_cast<uint32_t>(forward.indexed_graph().num_nodes());
  std::map<std::string, std::pair<TShape, DType>> known;
  for (size_t k = 0; k < inputs.size(); ++k) {
    known[nodes[k]->name()] = {plan->in_shapes[k], plan->in_types[k]};
  }
  const IndexedGraph& fidx = forward.indexed_graph();
  for (size_t i = 0; i < symbol.outputs.size(); ++i) {
    const uint32_t eid = fidx.entry_id(symbol.outputs[i]);
    known[HeadGradName(i)] = {
        forward.GetAttr<std::vector<TShape>>("shape")[eid],
        forward.GetAttr<std::vector<DType>>("dtype")[eid]};
  }

  const Symbol combined = WithGradients(symbol, xs);
  const Graph g(combined);
  std::vector<TShape> shapes;
  std::vector<DType> types;
  std::map<std::string, int> position;
  const auto& input_nodes = g.indexed_graph().input_nodes();
  for (size_t i = 0; i < input_nodes.size(); ++i) {
    const std::string& name = g.indexed_graph()[input_nodes[i]].source->name();
    shapes.push_back(known.at(name).first);
    types.push_back(known.at(name).second);
    position[name] = static_cast<int>(i);
  }
  for (size_t i = 0; i < symbol.outputs.size(); ++i) {
    auto it = position.find(HeadGradName(i));
    plan->head_grad_inputs.push_back(it == position.end() ? -1 : it->second);
  }
  // The backward part runs again on a call kept with retain_graph: it
  // must not overwrite the forward values it reads.
  plan->runner = std::make_unique<GraphRunner>(combined, plan->ctx, shapes,
                                               types, "CachedOp::Forward",
                                               plan->num_forward_nodes);
  return plan;
}

}  // namespace

std::vector<NDArray> CachedOp::RecordedForward(
    const std::vector<NDArray>& inputs, std::string signature) {
  std::vector<bool> needs_grad;
  for (const NDArray& in : inputs) {
    const bool grad = !in.autograd_entry().empty() && IsFloat(in.dtype());
    needs_grad.push_back(grad);
    signature += grad ? ";g" : ";-";
  }
  std::shared_ptr<const TrainingPlan> plan;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<const TrainingPlan>& cached = training_plans_[signature];
    if (cached == nullptr) {
      try {
        cached = MakeTrainingPlan(symbol_, inputs, needs_grad);
      } catch (...) {
        training_plans_.erase(signature);
        throw;
      }
    }
    plan = cached;
  }
  auto call = std::make_shared<Call>();
  call->plan = std::move(plan);
  NodeAttrs attrs;
  attrs.op = &OpRegistry::Get()->Lookup("_CachedOp");
  attrs.name = "cached_op";
  attrs.parsed = call;
  std::vector<NDArray> outputs;
  imperative::Invoke(attrs, inputs, &outputs);
  return outputs;
}

}  // namespace mx
