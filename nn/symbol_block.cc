#include "nn/symbol_block.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "imperative/imperative.h"
#include "nn/params_file.h"

namespace mx {
namespace nn {

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
