#include "tools/mxnet_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/error.h"
#include "graph/node.h"
#include "subgraph/partition_graph.h"
#include "subgraph/subgraph_property.h"

namespace mx {
namespace mxnet_model {
namespace {

// Deterministic per (seed, name), so two binds of a model agree.
std::mt19937 Rng(uint32_t seed, const std::string& name) {
  return std::mt19937(seed ^
                      static_cast<uint32_t>(std::hash<std::string>()(name)));
}

void Fill(NDArray a, const std::vector<float>& values,
          const std::string& name) {
  if (a.dtype() != DType::kFloat32) {
    throw NotImplemented(absl::StrCat("run_model: cannot fill \"", name,
                                      "\" of dtype ", DTypeName(a.dtype()),
                                      " (float32 only)"));
  }
  a.SyncCopyFromCPU(values.data(), values.size());
}

void FillInput(const NDArray& a, const InputSpec& spec, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(a.shape().Size()));
  std::mt19937 rng = Rng(seed, spec.name);
  int64_t n = 0;
  double v = 0;
  if (spec.fill == "uniform") {
    std::uniform_real_distribution<float> dist(0, 1);
    for (float& x : values) x = dist(rng);
  } else if (absl::StartsWith(spec.fill, "int") &&
             absl::SimpleAtoi(spec.fill.substr(3), &n) && n > 0) {
    std::uniform_int_distribution<int64_t> dist(0, n - 1);
    for (float& x : values) x = static_cast<float>(dist(rng));
  } else if (absl::StartsWith(spec.fill, "const") &&
             absl::SimpleAtod(spec.fill.substr(5), &v)) {
    std::fill(values.begin(), values.end(), static_cast<float>(v));
  } else {
    throw InvalidArgument(absl::StrCat("input \"", spec.name, "\": fill \"",
                                       spec.fill,
                                       "\" is not uniform, intN or constV"));
  }
  Fill(a, values, spec.name);
}

// Random weights that keep activations finite through deep networks:
// uniform(-s, s) with s = sqrt(3 / fan_in) for matrices and filters,
// (0.5, 1.5) for scales and variances, (-0.1, 0.1) for other vectors.
void FillWeight(const NDArray& a, const std::string& name, uint32_t seed) {
  const TShape& shape = a.shape();
  std::vector<float> values(static_cast<size_t>(shape.Size()));
  std::mt19937 rng = Rng(seed, name);
  float lo = -0.1f, hi = 0.1f;
  if (shape.ndim() >= 2 && shape[0] > 0) {
    const double fan_in = static_cast<double>(shape.Size()) / shape[0];
    hi = static_cast<float>(std::sqrt(3.0 / std::max(1.0, fan_in)));
    lo = -hi;
  } else if (absl::EndsWith(name, "gamma") || absl::EndsWith(name, "var")) {
    lo = 0.5f, hi = 1.5f;
  }
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& x : values) x = dist(rng);
  Fill(a, values, name);
}

}  // namespace

std::vector<InputSpec> ParseInputs(const std::string& text) {
  std::vector<InputSpec> specs;
  for (absl::string_view item : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    const std::vector<std::string> parts = absl::StrSplit(item, ':');
    if (parts.size() < 2 || parts.size() > 3 || parts[0].empty()) {
      throw InvalidArgument(absl::StrCat("input spec \"", item,
                                         "\": expected name:d0,d1,...[:fill]"));
    }
    InputSpec spec;
    spec.name = parts[0];
    std::vector<int64_t> dims;
    for (absl::string_view d : absl::StrSplit(parts[1], ',')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(d, &v) || v <= 0) {
        throw InvalidArgument(absl::StrCat("input spec \"", item,
                                           "\": dimension \"", d,
                                           "\" is not a positive integer"));
      }
      dims.push_back(v);
    }
    spec.shape = TShape(dims);
    if (parts.size() == 3) spec.fill = parts[2];
    specs.push_back(spec);
  }
  if (specs.empty())
    throw InvalidArgument("no input specs in \"" + text + "\"");
  return specs;
}

Symbol LoadSymbolFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw NotFound(absl::StrCat("symbol file \"", path, "\" cannot be opened"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return Symbol::FromJSON(text.str());
}

namespace {

// An argument named *label that no input spec names (MXNet's training
// graphs carry their loss's label).
bool IsUnnamedLabel(const std::string& name,
                    const std::set<std::string>& given) {
  return !given.count(name) && absl::EndsWith(name, "label");
}

std::set<std::string> InputNames(const std::vector<InputSpec>& inputs) {
  std::set<std::string> names;
  for (const InputSpec& spec : inputs) names.insert(spec.name);
  return names;
}

// The arguments no spec names and that are not labels, and every auxiliary
// state: what Bind fills from params or at random.
std::map<std::string, NDArray> WeightsOf(const Executor& exec,
                                         const std::vector<InputSpec>& inputs) {
  const std::set<std::string> given = InputNames(inputs);
  std::map<std::string, NDArray> weights;
  for (const auto& [name, a] : exec.arg_dict()) {
    if (!given.count(name) && !IsUnnamedLabel(name, given)) {
      weights[name] = a;
    }
  }
  for (const auto& [name, a] : exec.aux_dict()) weights[name] = a;
  return weights;
}

}  // namespace

std::unique_ptr<Executor> BindUnfilled(const Symbol& symbol,
                                       const std::vector<InputSpec>& inputs,
                                       uint32_t seed) {
  std::map<std::string, TShape> shapes;
  std::map<std::string, const InputSpec*> by_name;
  const std::set<std::string> given = InputNames(inputs);
  const std::vector<std::string> args = symbol.ListArguments();
  for (const InputSpec& spec : inputs) {
    if (std::find(args.begin(), args.end(), spec.name) == args.end()) {
      throw InvalidArgument(absl::StrCat("input \"", spec.name,
                                         "\" is not an argument of the graph (",
                                         absl::StrJoin(args, ", "), ")"));
    }
    shapes[spec.name] = spec.shape;
    by_name[spec.name] = &spec;
  }
  for (const std::string& name : args) {
    if (IsUnnamedLabel(name, given)) shapes[name] = TShape({1});
  }
  auto exec = Executor::SimpleBind(symbol, Context::CPU(), shapes, {},
                                   OpReqType::kNullOp);
  for (const auto& [name, a] : exec->arg_dict()) {
    if (by_name.count(name)) {
      FillInput(a, *by_name[name], seed);
    } else if (IsUnnamedLabel(name, given)) {
      Fill(a, std::vector<float>(static_cast<size_t>(a.shape().Size()), 0),
           name);
    }
  }
  return exec;
}

void FillRandomWeights(const Executor& exec,
                       const std::vector<InputSpec>& inputs, uint32_t seed) {
  for (const auto& [name, a] : WeightsOf(exec, inputs)) {
    FillWeight(a, name, seed);
  }
}

std::unique_ptr<Executor> Bind(const Symbol& symbol,
                               const std::vector<InputSpec>& inputs,
                               const std::optional<nn::NamedArrays>& params,
                               uint32_t seed) {
  auto exec = BindUnfilled(symbol, inputs, seed);
  if (!params) {
    FillRandomWeights(*exec, inputs, seed);
    return exec;
  }
  std::map<std::string, NDArray> weights = WeightsOf(*exec, inputs);
  std::vector<std::string> extra, mismatched;
  std::set<std::string> loaded;
  for (const auto& [stored, array] : *params) {
    std::string name = stored;
    if (absl::StartsWith(name, "arg:") || absl::StartsWith(name, "aux:")) {
      name = name.substr(4);
    }
    auto it = weights.find(name);
    if (it == weights.end()) {
      extra.push_back(stored);
      continue;
    }
    if (array.is_none() || array.shape() != it->second.shape() ||
        array.dtype() != it->second.dtype()) {
      mismatched.push_back(absl::StrCat(
          name, ": file ",
          array.is_none() ? std::string("empty slot")
                          : absl::StrCat(array.shape().ToString(), " ",
                                         DTypeName(array.dtype())),
          ", graph ", it->second.shape().ToString(), " ",
          DTypeName(it->second.dtype())));
      continue;
    }
    CopyFromTo(array, it->second);
    loaded.insert(name);
  }
  std::vector<std::string> missing;
  for (const auto& [name, a] : weights) {
    if (!loaded.count(name)) missing.push_back(name);
  }
  if (!mismatched.empty() || !missing.empty() || !extra.empty()) {
    throw InvalidArgument(absl::StrCat(
        "the parameters do not fit the graph:",
        mismatched.empty() ? ""
                           : absl::StrCat(" shape/dtype differs: ",
                                          absl::StrJoin(mismatched, "; "), "."),
        missing.empty()
            ? ""
            : absl::StrCat(" missing: ", absl::StrJoin(missing, ", "), "."),
        extra.empty() ? ""
                      : absl::StrCat(" not in the graph: ",
                                     absl::StrJoin(extra, ", "), ".")));
  }
  for (auto& [name, a] : weights) a.WaitToRead();
  return exec;
}

std::vector<double> ToDoubles(const NDArray& a) {
  auto as = [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> v = a.ToVector<T>();
    return std::vector<double>(v.begin(), v.end());
  };
  switch (a.dtype()) {
    case DType::kFloat32:
      return as(float{});
    case DType::kFloat64:
      return as(double{});
    case DType::kUInt8:
      return as(uint8_t{});
    case DType::kInt8:
      return as(int8_t{});
    case DType::kInt32:
      return as(int32_t{});
    case DType::kInt64:
      return as(int64_t{});
    case DType::kBool:
      return as(bool{});
    default:
      throw NotImplemented(absl::StrCat("cannot print an output of dtype ",
                                        DTypeName(a.dtype())));
  }
}

std::vector<std::string> OpNames(const Symbol& symbol) {
  std::set<std::string> names;
  DFSVisit(symbol.outputs, [&](const NodePtr& n) {
    if (!n->is_variable()) names.insert(n->op()->name());
  });
  return std::vector<std::string>(names.begin(), names.end());
}

Symbol Partition(const Symbol& symbol, const std::string& backend,
                 std::vector<std::string> op_names) {
  if (backend != "default") return PartitionGraph(symbol, backend);
  if (op_names.empty()) op_names = OpNames(symbol);
  SetSubgraphPropertyOpNames("default", op_names);
  try {
    Symbol out = PartitionGraph(symbol, "default");
    RemoveSubgraphPropertyOpNames("default");
    return out;
  } catch (...) {
    RemoveSubgraphPropertyOpNames("default");
    throw;
  }
}

std::unique_ptr<Executor> BindLike(const Symbol& symbol, const Executor& like) {
  const auto arg_dict = like.arg_dict();
  const auto aux_dict = like.aux_dict();
  std::vector<NDArray> args, aux;
  for (const std::string& name : symbol.ListArguments()) {
    args.push_back(arg_dict.at(name).Copy(Context::CPU()));
  }
  for (const std::string& name : symbol.ListAuxiliaryStates()) {
    aux.push_back(aux_dict.at(name).Copy(Context::CPU()));
  }
  return Executor::Bind(symbol, Context::CPU(), args, {}, {}, aux);
}

}  // namespace mxnet_model
}  // namespace mx
