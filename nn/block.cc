#include "nn/block.h"

#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "nn/params_file.h"

namespace mx {
namespace nn {
namespace {

void Collect(const Block& block, const std::string& prefix,
             std::set<const Parameter*>* seen, ParameterList* out) {
  for (const auto& [name, param] : block.own_params()) {
    if (seen->insert(param.get()).second) {
      out->emplace_back(prefix + name, param);
    }
  }
  for (const auto& [name, child] : block.children()) {
    Collect(*child, prefix + name + ".", seen, out);
  }
}

}  // namespace

void Block::InferShape(const std::vector<NDArray>&) {}

std::vector<std::string> Block::UnknownShapeParams() const {
  std::vector<std::string> unknown;
  for (const auto& [name, param] : params_) {
    if (!param->shape_known()) {
      unknown.push_back(absl::StrCat(name, " ", ShapeString(param->shape())));
    }
  }
  return unknown;
}

std::vector<NDArray> Block::Call(const std::vector<NDArray>& inputs) {
  if (!UnknownShapeParams().empty()) {
    InferShape(inputs);
    const std::vector<std::string> unknown = UnknownShapeParams();
    if (!unknown.empty()) {
      throw StateError(absl::StrCat(
          TypeName(),
          " has parameters with unknown shape: ", absl::StrJoin(unknown, ", "),
          ". Give their shapes in the constructor or override ", TypeName(),
          "::InferShape(inputs) to set them from the first input"));
    }
  }
  return Forward(inputs);
}

NDArray Block::operator()(const NDArray& input) {
  std::vector<NDArray> out = Call({input});
  if (out.size() != 1) {
    throw InvalidArgument(absl::StrCat(TypeName(), " returned ", out.size(),
                                       " outputs where one was expected"));
  }
  return out[0];
}

void Block::CheckName(const std::string& name, bool for_child,
                      bool allow_dots) const {
  if (name.empty() || (!allow_dots && name.find('.') != std::string::npos)) {
    throw InvalidArgument(absl::StrCat(TypeName(), ": name \"", name,
                                       "\" must be non-empty and have no '.'"));
  }
  // A child replaces a child and a parameter a parameter; one kind cannot
  // replace the other (MXNet raises TypeError there).
  if (for_child && FindParam(name) != nullptr) {
    throw AlreadyExists(absl::StrCat(TypeName(), ": \"", name,
                                     "\" is already a parameter; a child "
                                     "cannot replace it"));
  }
  for (const auto& c : children_) {
    if (!for_child && c.first == name) {
      throw AlreadyExists(absl::StrCat(TypeName(), ": \"", name,
                                       "\" is already a child; a parameter "
                                       "cannot replace it"));
    }
  }
}

ParameterPtr* Block::FindParam(const std::string& name) {
  for (auto& p : params_) {
    if (p.first == name) return &p.second;
  }
  return nullptr;
}

const ParameterPtr* Block::FindParam(const std::string& name) const {
  return const_cast<Block*>(this)->FindParam(name);
}

void Block::AddChild(const std::string& name, std::shared_ptr<Block> child) {
  if (child == nullptr) {
    throw InvalidArgument(
        absl::StrCat(TypeName(), ": child \"", name, "\" is null"));
  }
  CheckName(name, /*for_child=*/true);
  for (auto& c : children_) {
    if (c.first == name) {  // Replaced in place: names keep their order.
      c.second = std::move(child);
      return;
    }
  }
  children_.emplace_back(name, std::move(child));
}

ParameterPtr Block::RegisterParameter(const std::string& name,
                                      const TShape& shape,
                                      Parameter::Options options) {
  return RegisterParameter(
      name, std::make_shared<Parameter>(name, shape, std::move(options)));
}

ParameterPtr Block::RegisterParameter(const std::string& name,
                                      ParameterPtr param) {
  CheckName(name, /*for_child=*/false);
  if (ParameterPtr* existing = FindParam(name)) {
    *existing = param;
  } else {
    params_.emplace_back(name, param);
  }
  return param;
}

ParameterPtr Block::RegisterGraphParameter(const std::string& name,
                                           ParameterPtr param) {
  if (!children_.empty()) {
    throw StateError(absl::StrCat(
        TypeName(), ": graph parameters need a block without children"));
  }
  CheckName(name, /*for_child=*/false, /*allow_dots=*/true);
  if (FindParam(name) != nullptr) {
    throw AlreadyExists(absl::StrCat(TypeName(), ": graph parameter \"", name,
                                     "\" is registered twice"));
  }
  params_.emplace_back(name, param);
  return param;
}

ParameterList Block::CollectParams() const {
  ParameterList out;
  std::set<const Parameter*> seen;
  Collect(*this, "", &seen, &out);
  return out;
}

void Block::Initialize(const InitializerPtr& init, Context ctx,
                       bool force_reinit) {
  for (auto& [name, param] : CollectParams()) {
    param->Initialize(init, ctx, force_reinit);
  }
}

void Block::ZeroGrad() {
  for (auto& [name, param] : CollectParams()) param->ZeroGrad();
}

void Block::Hybridize(bool active) {
  for (auto& [name, child] : children_) child->Hybridize(active);
}

void Block::SaveParameters(const std::string& file, ParamsFormat format) const {
  NamedArrays arrays;
  std::vector<std::string> missing;
  for (const auto& [name, param] : CollectParams()) {
    if (!param->is_initialized()) {
      missing.push_back(name);
      continue;
    }
    arrays.emplace_back(name, param->data());
  }
  if (!missing.empty()) {
    throw StateError(absl::StrCat(
        TypeName(), "::SaveParameters(\"", file,
        "\"): parameters not initialized yet: ", absl::StrJoin(missing, ", ")));
  }
  SaveArrays(file, arrays, format);
}

namespace {

// MXNet's Module and HybridBlock.export name parameters "arg:NAME" and
// auxiliary states "aux:NAME"; Gluon loads them under NAME. Also refuses
// what cannot be a parameter: unnamed arrays (a plain mx.nd.save list) and
// empty slots.
NamedArrays StripMXNetPrefixes(const std::string& file, NamedArrays arrays) {
  std::set<std::string> seen;
  for (auto& [name, array] : arrays) {
    if (name.empty()) {
      throw InvalidArgument(absl::StrCat(
          "LoadParameters: \"", file,
          "\" holds unnamed arrays (an NDArray list, not parameters)"));
    }
    if (array.is_none()) {
      throw InvalidArgument(absl::StrCat("LoadParameters: \"", file,
                                         "\": parameter \"", name,
                                         "\" is an empty slot"));
    }
    if (absl::StartsWith(name, "arg:") || absl::StartsWith(name, "aux:")) {
      name = name.substr(4);
    }
    if (!seen.insert(name).second) {
      throw InvalidArgument(absl::StrCat("LoadParameters: \"", file,
                                         "\" holds parameter \"", name,
                                         "\" twice (as arg: and aux:)"));
    }
  }
  return arrays;
}

}  // namespace

void Block::LoadParameters(const std::string& file, LoadOptions options,
                           Context ctx) {
  const NamedArrays loaded = StripMXNetPrefixes(file, LoadArrays(file));
  std::map<std::string, NDArray> by_name(loaded.begin(), loaded.end());
  const ParameterList params = CollectParams();
  std::vector<std::string> missing, extra;
  std::set<std::string> known;
  for (const auto& [name, param] : params) {
    known.insert(name);
    if (by_name.count(name) == 0) missing.push_back(name);
  }
  for (const auto& [name, array] : loaded) {
    if (known.count(name) == 0) extra.push_back(name);
  }
  if (!missing.empty() && !options.allow_missing) {
    throw InvalidArgument(
        absl::StrCat(TypeName(), "::LoadParameters: \"", file,
                     "\" lacks parameters: ", absl::StrJoin(missing, ", "),
                     " (LoadOptions::allow_missing keeps their values)"));
  }
  if (!extra.empty() && !options.ignore_extra) {
    throw InvalidArgument(absl::StrCat(
        TypeName(), "::LoadParameters: \"", file,
        "\" has parameters the block does not: ", absl::StrJoin(extra, ", "),
        " (LoadOptions::ignore_extra skips them)"));
  }
  for (const auto& [name, param] : params) {
    auto it = by_name.find(name);
    if (it == by_name.end()) continue;
    try {
      param->SetData(it->second, ctx);
    } catch (const ShapeError& e) {
      throw ShapeError(absl::StrCat(TypeName(), "::LoadParameters(\"", file,
                                    "\"): parameter \"", name,
                                    "\": ", e.what()));
    }
  }
}

}  // namespace nn
}  // namespace mx
