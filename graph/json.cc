// Symbol <-> MXNet's symbol JSON layout.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "graph/json_upgrade.h"
#include "graph/symbol.h"

namespace mx {
namespace {

using nlohmann::json;

// The MXNet release whose symbol layout this follows (1.9).
constexpr int kMXNetVersion = 10900;

// True when `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF): what nlohmann's serializer accepts.
bool IsUtf8(const std::string& s) {
  static constexpr uint32_t kMinCodePoint[] = {0, 0, 0x80, 0x800, 0x10000};
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char lead = s[i];
    int len = 1;
    uint32_t cp = lead;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      len = 2, cp = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      len = 3, cp = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      len = 4, cp = lead & 0x07;
    } else {
      return false;
    }
    if (s.size() - i < static_cast<size_t>(len)) return false;
    for (int k = 1; k < len; ++k) {
      const unsigned char c = s[i + k];
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < kMinCodePoint[len] || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

// JSON strings must be UTF-8; say which node and attribute is not, rather
// than letting nlohmann's type_error escape from dump().
void CheckUtf8(const Node& n) {
  const std::string node =
      absl::StrCat("Symbol::ToJSON: node \"", absl::CHexEscape(n.name()), "\"");
  if (!IsUtf8(n.name())) {
    throw InvalidArgument(node + ": the name is not valid UTF-8");
  }
  for (const auto& [key, value] : n.attrs.dict) {
    if (!IsUtf8(key) || !IsUtf8(value)) {
      throw InvalidArgument(absl::StrCat(node, ": attribute \"",
                                         absl::CHexEscape(key),
                                         "\" is not valid UTF-8"));
    }
  }
}

json SaveGraph(const std::vector<NodeEntry>& outputs) {
  absl::flat_hash_map<const Node*, int> ids;
  json nodes = json::array(), arg_nodes = json::array();
  json row_ptr = json::array({0});
  int64_t entries = 0;
  DFSVisit(outputs, [&](const NodePtr& n) {
    CheckUtf8(*n);
    const int id = static_cast<int>(ids.size());
    ids[n.get()] = id;
    json node = {{"op", n->is_variable() ? "null" : n->op()->name()},
                 {"name", n->name()}};
    if (!n->attrs.dict.empty()) node["attrs"] = n->attrs.dict;
    json inputs = json::array();
    for (const NodeEntry& e : n->inputs) {
      inputs.push_back({ids.at(e.node.get()), e.index, e.version});
    }
    node["inputs"] = inputs;
    if (!n->control_deps.empty()) {
      json deps = json::array();
      for (const NodePtr& d : n->control_deps) deps.push_back(ids.at(d.get()));
      node["control_deps"] = deps;
    }
    if (!n->attrs.subgraphs.empty()) {
      json subgraphs = json::array();
      for (const auto& sg : n->attrs.subgraphs) {
        subgraphs.push_back(SaveGraph(sg->outputs));
      }
      node["subgraphs"] = subgraphs;
    }
    if (n->is_variable()) arg_nodes.push_back(id);
    entries += n->num_outputs();
    row_ptr.push_back(entries);
    nodes.push_back(std::move(node));
  });
  json heads = json::array();
  for (const NodeEntry& e : outputs) {
    heads.push_back({ids.at(e.node.get()), e.index, e.version});
  }
  return {{"nodes", nodes},
          {"arg_nodes", arg_nodes},
          {"node_row_ptr", row_ptr},
          {"heads", heads},
          // mxcore's shapes follow NumPy semantics (-1 unknown, 0 a
          // zero-size dimension), which MXNet marks with is_np_shape.
          {"attrs",
           {{"mxnet_version", {"int", kMXNetVersion}},
            {"is_np_shape", {"int", 1}}}}};
}

[[noreturn]] void Malformed(const std::string& what) {
  throw InvalidArgument("Symbol::FromJSON: " + what);
}

// `v` when it is an integer in [0, max]; nullopt for anything else (floats,
// negatives, strings), so no float-to-integer cast (UB when out of range)
// and no wrap-around happens.
std::optional<int64_t> NonNegativeInt(const json& v, int64_t max) {
  if (max < 0 || !v.is_number_unsigned()) return std::nullopt;
  const uint64_t u = v.get<uint64_t>();
  if (u > static_cast<uint64_t>(max)) return std::nullopt;
  return static_cast<int64_t>(u);
}

// Requires `j[key]`, when present, to be an array (MXNet writes one; an
// object would otherwise be iterated over its values).
const json& ArrayField(const json& j, const char* key,
                       const std::string& where) {
  static const json* const kEmpty = new json(json::array());
  if (!j.contains(key)) return *kEmpty;
  const json& v = j[key];
  if (!v.is_array()) {
    Malformed(absl::StrCat(where, ": \"", key, "\" must be an array"));
  }
  return v;
}

NodeEntry ParseEntry(const json& j, const std::vector<NodePtr>& nodes,
                     const std::string& where) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::optional<int64_t> id_or =
      j.is_array() && j.size() >= 2 ? NonNegativeInt(j[0], kMax) : std::nullopt;
  const std::optional<int64_t> index_or =
      j.is_array() && j.size() >= 2 ? NonNegativeInt(j[1], kMax) : std::nullopt;
  if (!j.is_array() || j.size() < 2 || j.size() > 3 || !id_or || !index_or) {
    Malformed(where +
              ": an entry must be [node, index] or [node, index, "
              "version] of non-negative integers");
  }
  const int64_t id = *id_or, index = *index_or;
  if (id >= static_cast<int64_t>(nodes.size())) {
    Malformed(absl::StrCat(where, ": dangling input: node ", id,
                           " does not exist before this node"));
  }
  const NodePtr& src = nodes[id];
  if (index >= src->num_outputs()) {
    Malformed(absl::StrCat(where, ": input refers to output ", index,
                           " of node \"", src->name(), "\", which has ",
                           src->num_outputs()));
  }
  std::optional<int64_t> version = int64_t{0};
  if (j.size() == 3) {
    version = NonNegativeInt(j[2], std::numeric_limits<uint32_t>::max());
    if (!version) {
      Malformed(absl::StrCat(where, ": entry version ", j[2].dump(),
                             " is not an integer in [0, 4294967295]"));
    }
  }
  return NodeEntry{src, static_cast<uint32_t>(index),
                   static_cast<uint32_t>(*version)};
}

std::vector<NodeEntry> LoadGraph(const json& g) {
  if (!g.is_object() || !g.contains("nodes") || !g["nodes"].is_array() ||
      !g.contains("heads")) {
    Malformed("expected an object with \"nodes\" and \"heads\"");
  }
  const json& heads_json = ArrayField(g, "heads", "the graph");
  std::vector<NodePtr> nodes;
  for (const json& jn : g["nodes"]) {
    const std::string where = absl::StrCat("node ", nodes.size());
    if (!jn.is_object() || !jn.contains("op") || !jn.contains("name") ||
        !jn["op"].is_string() || !jn["name"].is_string()) {
      Malformed(where + ": needs string fields \"op\" and \"name\"");
    }
    const std::string op_name = jn["op"], name = jn["name"];
    const std::string label = absl::StrCat(where, " (\"", name, "\")");
    AttrDict dict;
    // Legacy "attr" / "param" keys were merged into "attrs" by
    // UpgradeLegacyJSON; any left over are not objects.
    for (const char* key : {"attrs", "attr", "param"}) {
      if (!jn.contains(key)) continue;
      if (!jn[key].is_object())
        Malformed(label + ": attributes must be an object");
      for (const auto& [k, v] : jn[key].items()) {
        dict[k] = v.is_string() ? v.get<std::string>() : v.dump();
      }
    }
    NodePtr node;
    if (op_name == "null") {
      node = Node::Variable(name);
      node->attrs.dict = std::move(dict);
    } else {
      const Op* op = OpRegistry::Get()->Find(op_name);
      if (op == nullptr) {
        throw NotFound(absl::StrCat("Symbol::FromJSON: ", label,
                                    " has unknown op \"", op_name, "\""));
      }
      node = Node::Create(*op, std::move(dict), name);
    }
    // A subgraph op's arity comes from its subgraph: attach it first.
    const json& subgraphs = ArrayField(jn, "subgraphs", label);
    if (!subgraphs.empty()) {
      for (const json& sg : subgraphs) {
        auto sym = std::make_shared<Symbol>();
        sym->outputs = LoadGraph(sg);
        node->attrs.subgraphs.push_back(sym);
      }
      const auto* attach =
          node->is_variable()
              ? nullptr
              : node->op()->GetAttr<FAttachSubgraphs>("FAttachSubgraphs");
      if (attach != nullptr) (*attach)(&node->attrs);
    }
    for (const json& e : ArrayField(jn, "inputs", label)) {
      node->inputs.push_back(ParseEntry(e, nodes, label));
    }
    if (node->is_variable() && !node->inputs.empty()) {
      Malformed(label + ": a variable (op \"null\") cannot have inputs");
    }
    if (!node->is_variable() && node->inputs.size() != node->num_inputs()) {
      Malformed(absl::StrCat(label, ": op \"", op_name, "\" takes ",
                             node->num_inputs(), " inputs but ",
                             node->inputs.size(), " are listed"));
    }
    for (const json& d : ArrayField(jn, "control_deps", label)) {
      const std::optional<int64_t> id =
          NonNegativeInt(d, static_cast<int64_t>(nodes.size()) - 1);
      if (!id) {
        Malformed(absl::StrCat(label, ": control dependency ", d.dump(),
                               " is not the index of an earlier node"));
      }
      node->control_deps.push_back(nodes[*id]);
    }
    nodes.push_back(node);
  }
  std::vector<NodeEntry> heads;
  for (const json& h : heads_json)
    heads.push_back(ParseEntry(h, nodes, "heads"));
  return heads;
}

// How deep arrays and objects nest in `text`, counting no further than
// `limit` + 1. Brackets inside strings do not count; anything malformed is
// left for the parser to report.
int NestingDepth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size() && deepest <= limit; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

std::string Symbol::ToJSON() const {
  const json g = SaveGraph(outputs);
  try {
    return g.dump(2);
  } catch (const json::exception& e) {
    // CheckUtf8 should have caught it; never let nlohmann's type escape.
    throw InvalidArgument(std::string("Symbol::ToJSON: ") + e.what());
  }
}

Symbol Symbol::FromJSON(const std::string& text) {
  // nlohmann's parser is iterative, but re-serializing attribute values and
  // LoadGraph's descent into "subgraphs" recurse: refuse deep documents
  // before parsing.
  if (NestingDepth(text, kMaxJSONDepth) > kMaxJSONDepth) {
    Malformed(absl::StrCat("arrays and objects nest deeper than ",
                           kMaxJSONDepth, " levels"));
  }
  json g;
  try {
    g = json::parse(text);
  } catch (const json::exception& e) {
    Malformed(std::string("not valid JSON: ") + e.what());
  }
  Symbol s;
  try {
    json_upgrade::UpgradeLegacyJSON(&g);
    s.outputs = LoadGraph(g);
  } catch (const json::exception& e) {
    Malformed(std::string("unexpected structure: ") + e.what());
  }
  return s;
}

}  // namespace mx
