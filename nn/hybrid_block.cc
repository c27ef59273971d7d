#include "nn/hybrid_block.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/error.h"
#include "imperative/deferred_compute.h"
#include "imperative/imperative.h"
#include "imperative/subgraph_hook.h"
#include "nn/params_file.h"
#include "nn/trace_context.h"

namespace mx {
namespace nn {
namespace {

// Turns parameter reads during a trace into variables named by structured
// name, created on first read so only the parameters Forward really uses
// become graph inputs.
class ParameterTrace : public internal::TraceContext {
 public:
  ParameterTrace(std::string block,
                 std::map<const Parameter*, std::string> names)
      : block_(std::move(block)), names_(std::move(names)) {}

  NDArray VariableFor(const Parameter& param, const NDArray& value) override {
    auto found = variables_.find(&param);
    if (found != variables_.end()) return found->second;
    auto name = names_.find(&param);
    if (name == names_.end()) {
      throw InvalidArgument(absl::StrCat(
          "hybridized ", block_, ": its Forward reads parameter \"",
          param.name(),
          "\", which is not registered in the block's tree (register the "
          "block that owns it with RegisterChild)"));
    }
    // A detached alias: the real array keeps no deferred-compute history.
    NDArray variable = value.Detach();
    dc::SetVariable({&variable}, {Symbol::Variable(name->second)});
    variables_.emplace(&param, variable);
    return variable;
  }

 private:
  std::string block_;
  std::map<const Parameter*, std::string> names_;
  std::map<const Parameter*, NDArray> variables_;
};

// What a trace depends on besides its inputs: the blocks of the tree, and
// each parameter's identity, dtype and shape. Compared exactly on every
// hybridized call (a few words per parameter).
void AppendStamp(const Block& block, std::vector<intptr_t>* stamp) {
  stamp->push_back(reinterpret_cast<intptr_t>(&block));
  for (const auto& [name, param] : block.own_params()) {
    stamp->push_back(reinterpret_cast<intptr_t>(param.get()));
    stamp->push_back(static_cast<intptr_t>(param->dtype()));
    const TShape& shape = param->shape();
    stamp->push_back(shape.ndim_known() ? shape.ndim() : -1);
    for (int d = 0; shape.ndim_known() && d < shape.ndim(); ++d) {
      stamp->push_back(static_cast<intptr_t>(shape[d]));
    }
  }
  stamp->push_back(static_cast<intptr_t>(block.children().size()));
  for (const auto& [name, child] : block.children()) {
    AppendStamp(*child, stamp);
  }
}

std::vector<intptr_t> TreeStamp(const Block& block) {
  std::vector<intptr_t> stamp;
  AppendStamp(block, &stamp);
  return stamp;
}

}  // namespace

// One traced signature: the graph, its CachedOp and where each graph input
// comes from.
struct HybridBlock::Trace {
  Symbol symbol;
  std::unique_ptr<CachedOp> op;
  // Per graph input (ListInputNames order): the call's input index, or -1
  // for a parameter.
  std::vector<int> input_index;
  std::vector<ParameterPtr> params;  // null where input_index >= 0
  std::vector<std::string> names;
};

std::vector<std::string> HybridBlock::InputNames(size_t n) {
  if (n == 1) return {"data"};
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(absl::StrCat("data", i));
  return names;
}

void HybridBlock::Hybridize(bool active) { Hybridize(active, options_); }

void HybridBlock::Hybridize(bool active, CachedOp::Options options) {
  if (active != active_ || options.static_alloc != options_.static_alloc ||
      options.static_shape != options_.static_shape) {
    ClearTraces();
  }
  active_ = active;
  options_ = options;
  for (const auto& [name, child] : children()) {
    if (auto* hybrid = dynamic_cast<HybridBlock*>(child.get())) {
      hybrid->Hybridize(active, options);
    } else {
      child->Hybridize(active);
    }
  }
}

void HybridBlock::ClearTraces() {
  traces_.clear();
  latest_ = nullptr;
}

const Symbol& HybridBlock::cached_symbol() const {
  symbol();  // Throws when there is no trace.
  return latest_->op->symbol();
}

const Symbol& HybridBlock::symbol() const {
  if (latest_ == nullptr) {
    throw StateError(absl::StrCat(TypeName(),
                                  " has no traced graph: call Hybridize() and "
                                  "run the block once first"));
  }
  if (TreeStamp(*this) != stamp_) {
    throw StateError(absl::StrCat(
        TypeName(),
        "'s children or parameters changed since its latest trace: run the "
        "block again to trace the new structure"));
  }
  return latest_->symbol;
}

std::shared_ptr<HybridBlock::Trace> HybridBlock::MakeTrace(
    const std::vector<NDArray>& inputs) {
  if (inputs.empty()) {
    throw InvalidArgument(
        absl::StrCat("hybridized ", TypeName(), " was called with no inputs"));
  }
  const ParameterList params = CollectParams();
  std::map<const Parameter*, std::string> names;
  std::map<std::string, ParameterPtr> by_name;
  for (const auto& [name, param] : params) {
    names.emplace(param.get(), name);
    by_name.emplace(name, param);
  }
  const std::vector<std::string> input_names = InputNames(inputs.size());
  for (const std::string& name : input_names) {
    if (by_name.count(name)) {
      throw InvalidArgument(
          absl::StrCat("hybridized ", TypeName(), ": parameter \"", name,
                       "\" has the name of an input variable; rename it"));
    }
  }

  auto trace = std::make_shared<Trace>();
  {
    // Tracing must not record autograd history; the training flag stays.
    imperative::RecordingScope no_record(false);
    ParameterTrace context(TypeName(), names);
    std::vector<NDArray> vars;
    for (const NDArray& in : inputs) vars.push_back(in.Detach());
    std::vector<NDArray*> var_ptrs;
    std::vector<Symbol> var_symbols;
    for (size_t i = 0; i < vars.size(); ++i) {
      var_ptrs.push_back(&vars[i]);
      var_symbols.push_back(Symbol::Variable(input_names[i]));
    }
    std::vector<NDArray> outputs;
    {
      imperative::DeferredComputeScope tracing(true);
      dc::SetVariable(var_ptrs, var_symbols);
      outputs = Block::Call(vars);
    }
    if (outputs.empty()) {
      throw InvalidArgument(
          absl::StrCat(TypeName(), "::Forward returned no outputs"));
    }
    trace->symbol = dc::GetSymbol(outputs);
  }

  trace->names = trace->symbol.ListInputNames();
  for (const std::string& name : trace->names) {
    int index = -1;
    for (size_t i = 0; i < input_names.size(); ++i) {
      if (input_names[i] == name) index = static_cast<int>(i);
    }
    ParameterPtr param;
    if (index < 0) {
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        throw StateError(absl::StrCat(
            "hybridized ", TypeName(), ": traced graph input \"", name,
            "\" is neither an input nor a parameter of the block"));
      }
      param = it->second;
    }
    trace->input_index.push_back(index);
    trace->params.push_back(param);
  }
  // MX_SUBGRAPH_BACKEND partitions the graph the CachedOp runs; the traced
  // symbol (what Export writes) stays unpartitioned. Inference-only
  // properties apply only to traces made while not recording. The
  // backend's selectors see the shapes and dtypes of the traced inputs and
  // parameters.
  std::map<std::string, std::pair<TShape, DType>> known;
  for (size_t i = 0; i < trace->names.size(); ++i) {
    const int index = trace->input_index[i];
    const ParameterPtr& param = trace->params[i];
    if (index >= 0) {
      known[trace->names[i]] = {inputs[index].shape(), inputs[index].dtype()};
    } else if (param != nullptr && param->is_initialized()) {
      const NDArray a = param->data();
      known[trace->names[i]] = {a.shape(), a.dtype()};
    }
  }
  trace->op = std::make_unique<CachedOp>(
      ApplySubgraphBackendFromEnv(trace->symbol, imperative::IsRecording(),
                                  known),
      options_);
  return trace;
}

std::vector<NDArray> HybridBlock::Call(const std::vector<NDArray>& inputs) {
  // Inside a parent's trace the parent's graph takes this block's ops.
  if (!active_ || imperative::IsDeferredCompute()) return Block::Call(inputs);
  // With a subgraph backend, recording calls get traces of their own: the
  // backend may apply inference-only rewrites to the others.
  const char* backend = std::getenv("MX_SUBGRAPH_BACKEND");
  const bool partitioned =
      backend != nullptr && *backend != '\0' && std::string(backend) != "NONE";
  std::string signature =
      partitioned && imperative::IsRecording() ? "grad;" : "";
  for (const NDArray& in : inputs) {
    absl::StrAppend(&signature, in.ctx().ToString(), in.shape().ToString(),
                    DTypeName(in.dtype()), ";");
  }
  if (TreeStamp(*this) != stamp_) ClearTraces();
  std::shared_ptr<Trace>& trace = traces_[signature];
  if (trace == nullptr) {
    try {
      trace = MakeTrace(inputs);
    } catch (...) {
      traces_.erase(signature);
      throw;
    }
    ++num_traces_;
    // Tracing completes deferred parameter shapes.
    stamp_ = TreeStamp(*this);
  }
  latest_ = trace;
  std::vector<NDArray> args;
  for (size_t i = 0; i < trace->input_index.size(); ++i) {
    args.push_back(trace->input_index[i] >= 0 ? inputs[trace->input_index[i]]
                                              : trace->params[i]->data());
  }
  return trace->op->Forward(args);
}

void HybridBlock::Export(const std::string& prefix, int epoch,
                         ParamsFormat format) const {
  const Symbol& graph = symbol();
  NamedArrays arrays;
  for (size_t i = 0; i < latest_->params.size(); ++i) {
    if (latest_->params[i] != nullptr) {
      arrays.emplace_back(latest_->names[i], latest_->params[i]->data());
    }
  }
  WriteModel(TypeName(), prefix, epoch, graph, arrays, format);
}

void HybridBlock::WriteModel(const std::string& who, const std::string& prefix,
                             int epoch, const Symbol& graph,
                             const NamedArrays& arrays, ParamsFormat format) {
  const std::string symbol_file = prefix + "-symbol.json";
  std::ofstream out(symbol_file, std::ios::trunc);
  out << graph.ToJSON();
  out.close();
  if (!out) {
    throw RuntimeError(
        absl::StrCat(who, "::Export: cannot write \"", symbol_file, "\""));
  }
  const std::string params_file =
      absl::StrFormat("%s-%04d.params", prefix, epoch);
  if (format == ParamsFormat::kMxcore) {
    SaveArrays(params_file, arrays);
    return;
  }
  // MXNet's export (1.x and 2) marks auxiliary states (BatchNorm's moving
  // statistics) "aux:" and everything else "arg:".
  const std::vector<std::string> aux = graph.ListAuxiliaryStates();
  const std::set<std::string> aux_set(aux.begin(), aux.end());
  NamedArrays prefixed;
  for (const auto& [name, array] : arrays) {
    prefixed.emplace_back((aux_set.count(name) ? "aux:" : "arg:") + name,
                          array);
  }
  SaveArrays(params_file, prefixed, format);
}

}  // namespace nn
}  // namespace mx
