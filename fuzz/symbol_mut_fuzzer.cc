// Fuzz target: structure-aware mutation of valid Symbol JSON.
//
// LLVMFuzzerCustomMutator parses the input with nlohmann::json and changes
// the graph the way a hostile but well-formed document would: a node's op
// (any registered op), its attributes (known keys, enum words, small and
// huge numbers, junk), its inputs (node/output/version indices, added or
// dropped), the heads, node names, whole nodes added or removed. Inputs that
// do not parse as JSON get libFuzzer's byte mutations. The seed corpus
// (fuzz/corpus/symbol_mut) is graphs written by Symbol::ToJSON
// (fuzz/corpus_gen.cc). The test body is the same as symbol_json_fuzzer's.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "fuzz/fuzz_util.h"
#include "fuzz/symbol_checks.h"
#include "fuzz/vocab.h"
#include "nlohmann/json.hpp"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size,
                                   size_t max_size);

namespace {

using nlohmann::json;

template <typename T>
const T& Pick(const std::vector<T>& v, std::mt19937* rng) {
  return v[(*rng)() % v.size()];
}

std::string RandomValue(std::mt19937* rng) {
  switch ((*rng)() % 5) {
    case 0:
      return Pick(mx::fuzz::AttrWords(), rng);
    case 1:
      return Pick(mx::fuzz::WildValues(), rng);
    case 2:
      return std::to_string(static_cast<int>((*rng)() % 11) - 3);
    case 3: {
      std::string t = "(";
      int n = (*rng)() % 5;
      for (int i = 0; i < n; ++i) {
        if (i) t += ",";
        t += std::to_string(static_cast<int>((*rng)() % 8) - 1);
      }
      return t + ")";
    }
    default: {
      // A byte-mutated copy of a word.
      std::string w = Pick(mx::fuzz::AttrWords(), rng);
      w.resize(w.size() + 4);
      size_t n = LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(&w[0]),
                                  w.size() - 4, w.size());
      w.resize(n);
      return w;
    }
  }
}

json RandomEntry(size_t num_nodes, std::mt19937* rng) {
  int node = num_nodes == 0 ? 0 : (*rng)() % (num_nodes + 1);
  if ((*rng)() % 16 == 0) node = -1;
  int index = (*rng)() % 8 == 0 ? (*rng)() % 4 : 0;
  int version = (*rng)() % 8 == 0 ? (*rng)() % 3 : 0;
  return json::array({node, index, version});
}

// One structural change to document `j`; false when it had nothing to act on.
bool MutateGraph(json* j, std::mt19937* rng) {
  if (!j->is_object()) return false;
  json& nodes = (*j)["nodes"];
  if (!nodes.is_array()) return false;
  const size_t n = nodes.size();
  auto node_at = [&]() -> json* {
    if (n == 0) return nullptr;
    json& node = nodes[(*rng)() % n];
    return node.is_object() ? &node : nullptr;
  };
  switch ((*rng)() % 10) {
    case 0: {  // Change an op.
      json* node = node_at();
      if (!node) return false;
      (*node)["op"] = (*rng)() % 8 == 0 ? std::string("null")
                                        : Pick(mx::fuzz::OpNames(), rng);
      return true;
    }
    case 1:
    case 2: {  // Set an attribute.
      json* node = node_at();
      if (!node) return false;
      json& attrs = (*node)["attrs"];
      if (!attrs.is_object()) attrs = json::object();
      attrs[Pick(mx::fuzz::AttrKeys(), rng)] = RandomValue(rng);
      return true;
    }
    case 3: {  // Drop an attribute.
      json* node = node_at();
      if (!node || !(*node)["attrs"].is_object() || (*node)["attrs"].empty())
        return false;
      json& attrs = (*node)["attrs"];
      auto it = attrs.begin();
      std::advance(it, (*rng)() % attrs.size());
      attrs.erase(it.key());
      return true;
    }
    case 4: {  // Rewire, add or drop an input.
      json* node = node_at();
      if (!node) return false;
      json& inputs = (*node)["inputs"];
      if (!inputs.is_array()) inputs = json::array();
      int what = (*rng)() % 3;
      if (what == 0 || inputs.empty()) {
        inputs.push_back(RandomEntry(n, rng));
      } else if (what == 1) {
        inputs[(*rng)() % inputs.size()] = RandomEntry(n, rng);
      } else {
        inputs.erase(inputs.begin() + (*rng)() % inputs.size());
      }
      return true;
    }
    case 5: {  // Change the heads.
      json& heads = (*j)["heads"];
      if (!heads.is_array()) heads = json::array();
      if (heads.empty() || (*rng)() % 2) {
        heads.push_back(RandomEntry(n, rng));
      } else {
        heads[(*rng)() % heads.size()] = RandomEntry(n, rng);
      }
      return true;
    }
    case 6: {  // Append an op node reading earlier nodes.
      json node = json::object();
      node["op"] = Pick(mx::fuzz::OpNames(), rng);
      node["name"] = "fz" + std::to_string(n);
      json inputs = json::array();
      int k = (*rng)() % 4;
      for (int i = 0; i < k; ++i) inputs.push_back(RandomEntry(n, rng));
      node["inputs"] = inputs;
      if ((*rng)() % 2) {
        node["attrs"] = {{Pick(mx::fuzz::AttrKeys(), rng), RandomValue(rng)}};
      }
      nodes.push_back(node);
      (*j)["heads"] = json::array({json::array({n, 0, 0})});
      return true;
    }
    case 7: {  // Remove a node (later references dangle or shift).
      if (n == 0) return false;
      nodes.erase(nodes.begin() + (*rng)() % n);
      return true;
    }
    case 8: {  // Rename a node (duplicates, empty names).
      json* node = node_at();
      if (!node) return false;
      (*node)["name"] = (*rng)() % 2 && n > 0 && nodes[0].is_object() &&
                                nodes[0].contains("name")
                            ? nodes[0]["name"]
                            : json(RandomValue(rng));
      return true;
    }
    default: {  // Control dependencies or a subgraph.
      json* node = node_at();
      if (!node) return false;
      if ((*rng)() % 2) {
        (*node)["control_deps"] = json::array({(*rng)() % (n + 1)});
      } else {
        json sub = *j;
        sub.erase("subgraphs");
        (*node)["subgraphs"] = json::array({sub});
      }
      return true;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mx::fuzz::InitEnvironment();
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned int seed) {
  std::mt19937 rng(seed);
  json j = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || rng() % 16 == 0) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  int rounds = 1 + rng() % 3;
  bool changed = false;
  for (int i = 0; i < rounds; ++i) changed |= MutateGraph(&j, &rng);
  if (!changed) return LLVMFuzzerMutate(data, size, max_size);
  std::string out = j.dump(-1, ' ', /*ensure_ascii=*/false,
                           json::error_handler_t::replace);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mx::fuzz::CheckSymbolJSON(
      std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
