#include "nn/symbol_block.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "graph/graph.h"
#include "graph/pass.h"
#include "imperative/imperative.h"
#include "nn/params_file.h"

namespace mx {
namespace nn {

namespace {

// MXNet's initializers pick by the parameter's name: BatchNorm's scale and
// variance start at one, shifts, means and biases at zero, and only the
// rest ("weight") take the initializer passed to Initialize(). Null: the
// passed one.
InitializerPtr InitializerForName(const std::string& name) {
  for (const char* suffix : {"gamma", "moving_var", "running_var"}) {
    if (absl::EndsWith(name, suffix)) return init::Ones();
  }
  for (const char* suffix : {"beta", "bias", "moving_mean", "running_mean"}) {
    if (absl::EndsWith(name, suffix)) return init::Zeros();
  }
  return nullptr;
}

}  // namespace

SymbolBlock::SymbolBlock(Symbol symbol, std::vector<std::string> input_names)
    : symbol_(std::move(symbol)),
      input_names_(std::move(input_names)),
      op_(symbol_) {
  const std::vector<std::string> graph_inputs = symbol_.ListInputNames();
  const std::vector<std::string> aux = symbol_.ListAuxiliaryStates();
  const std::set<std::string> aux_set(aux.begin(), aux.end());
  for (const std::string& name : input_names_) {
    if (std::find(graph_inputs.begin(), graph_inputs.end(), name) ==
        graph_inputs.end()) {
      throw InvalidArgument(absl::StrCat(
          "SymbolBlock: input \"", name, "\" is not an input of the graph (",
          absl::StrJoin(graph_inputs, ", "), ")"));
    }
  }
  for (const std::string& name : graph_inputs) {
    auto it = std::find(input_names_.begin(), input_names_.end(), name);
    if (it != input_names_.end()) {
      input_index_.push_back(static_cast<int>(it - input_names_.begin()));
      params_by_input_.push_back(nullptr);
      continue;
    }
    Parameter::Options options;
    if (aux_set.count(name)) options.grad_req = GradReq::kNull;
    options.init = InitializerForName(name);
    auto param = std::make_shared<Parameter>(name, TShape(), options);
    RegisterGraphParameter(name, param);
    input_index_.push_back(-1);
    params_by_input_.push_back(param);
  }
}

std::shared_ptr<SymbolBlock> SymbolBlock::Import(
    const std::string& symbol_file, const std::vector<std::string>& input_names,
    const std::string& params_file, Context ctx) {
  std::ifstream in(symbol_file);
  if (!in) {
    throw NotFound(absl::StrCat("SymbolBlock::Import: symbol file \"",
                                symbol_file, "\" cannot be opened"));
  }
  std::stringstream text;
  text << in.rdbuf();
  Symbol symbol;
  try {
    symbol = Symbol::FromJSON(text.str());
  } catch (const Error& e) {
    throw InvalidArgument(absl::StrCat("SymbolBlock::Import: symbol file \"",
                                       symbol_file, "\": ", e.what()));
  }
  auto block = std::make_shared<SymbolBlock>(std::move(symbol), input_names);
  if (!params_file.empty()) block->LoadParameters(params_file, {}, ctx);
  return block;
}

std::vector<NDArray> SymbolBlock::Call(const std::vector<NDArray>& inputs) {
  if (imperative::IsDeferredCompute()) {
    throw NotImplemented(
        "SymbolBlock cannot be called inside another block's trace; call it "
        "outside the hybridized block");
  }
  return Block::Call(inputs);
}

void SymbolBlock::InferShape(const std::vector<NDArray>& inputs) {
  if (inputs.size() != input_names_.size()) return;  // Forward reports it.
  std::vector<TShape> shapes;
  for (size_t i = 0; i < input_index_.size(); ++i) {
    if (input_index_[i] >= 0) {
      shapes.push_back(inputs[input_index_[i]].shape());
      continue;
    }
    // Parameters keep unknown dimensions as 0; inference reads -1.
    TShape shape = params_by_input_[i]->shape();
    for (int d = 0; shape.ndim_known() && d < shape.ndim(); ++d) {
      if (shape[d] <= 0) shape[d] = -1;
    }
    shapes.push_back(shape);
  }
  Graph g(symbol_);
  g.SetAttr("shape_inputs", shapes);
  try {
    g = ApplyPass(std::move(g), "InferShape");
  } catch (const ShapeError& e) {
    throw ShapeError(
        absl::StrCat("SymbolBlock: inferring parameter shapes: ", e.what()));
  }
  const IndexedGraph& idx = g.indexed_graph();
  const auto& inferred = g.GetAttr<std::vector<TShape>>("shape");
  for (size_t i = 0; i < input_index_.size(); ++i) {
    const TShape& shape = inferred[idx.entry_id(idx.input_nodes()[i], 0)];
    if (input_index_[i] < 0 && shape.ndim_known()) {
      params_by_input_[i]->SetShape(shape);
    }
  }
}

void SymbolBlock::Export(const std::string& prefix, int epoch,
                         ParamsFormat format) const {
  NamedArrays arrays;
  for (size_t i = 0; i < input_index_.size(); ++i) {
    if (input_index_[i] < 0) {
      const ParameterPtr& param = params_by_input_[i];
      arrays.emplace_back(param->name(), param->data());
    }
  }
  WriteModel(TypeName(), prefix, epoch, symbol_, arrays, format);
}

std::vector<NDArray> SymbolBlock::Forward(const std::vector<NDArray>& inputs) {
  if (inputs.size() != input_names_.size()) {
    throw InvalidArgument(absl::StrCat(
        "SymbolBlock: ", inputs.size(), " inputs given for ",
        input_names_.size(), " (", absl::StrJoin(input_names_, ", "), ")"));
  }
  std::vector<NDArray> args;
  for (size_t i = 0; i < input_index_.size(); ++i) {
    args.push_back(input_index_[i] >= 0 ? inputs[input_index_[i]]
                                        : params_by_input_[i]->data());
  }
  return op_.Forward(args);
}

}  // namespace nn
}  // namespace mx
