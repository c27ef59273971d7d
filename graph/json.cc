// Symbol <-> MXNet's symbol JSON layout.
#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "graph/symbol.h"

namespace mx {
namespace {

using nlohmann::json;

// The MXNet release whose symbol layout this follows (1.9).
constexpr int kMXNetVersion = 10900;

json SaveGraph(const std::vector<NodeEntry>& outputs) {
  absl::flat_hash_map<const Node*, int> ids;
  json nodes = json::array(), arg_nodes = json::array();
  json row_ptr = json::array({0});
  int entries = 0;
  DFSVisit(outputs, [&](const NodePtr& n) {
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
    entries += static_cast<int>(n->num_outputs());
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
          {"attrs", {{"mxnet_version", {"int", kMXNetVersion}}}}};
}

[[noreturn]] void Malformed(const std::string& what) {
  throw InvalidArgument("Symbol::FromJSON: " + what);
}

NodeEntry ParseEntry(const json& j, const std::vector<NodePtr>& nodes,
                     const std::string& where) {
  if (!j.is_array() || j.size() < 2 || j.size() > 3 ||
      !j[0].is_number_integer() || !j[1].is_number_integer()) {
    Malformed(where +
              ": an entry must be [node, index] or [node, index, "
              "version]");
  }
  const int64_t id = j[0].get<int64_t>(), index = j[1].get<int64_t>();
  if (id < 0 || id >= static_cast<int64_t>(nodes.size())) {
    Malformed(absl::StrCat(where, ": dangling input: node ", id,
                           " does not exist before this node"));
  }
  const NodePtr& src = nodes[id];
  if (index < 0 || index >= src->num_outputs()) {
    Malformed(absl::StrCat(where, ": input refers to output ", index,
                           " of node \"", src->name(), "\", which has ",
                           src->num_outputs()));
  }
  const uint32_t version = j.size() == 3 ? j[2].get<uint32_t>() : 0;
  return NodeEntry{src, static_cast<uint32_t>(index), version};
}

std::vector<NodeEntry> LoadGraph(const json& g) {
  if (!g.is_object() || !g.contains("nodes") || !g["nodes"].is_array() ||
      !g.contains("heads")) {
    Malformed("expected an object with \"nodes\" and \"heads\"");
  }
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
    if (jn.contains("subgraphs")) {
      for (const json& sg : jn["subgraphs"]) {
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
    if (jn.contains("inputs")) {
      for (const json& e : jn["inputs"]) {
        node->inputs.push_back(ParseEntry(e, nodes, label));
      }
    }
    if (!node->is_variable() && node->inputs.size() != node->num_inputs()) {
      Malformed(absl::StrCat(label, ": op \"", op_name, "\" takes ",
                             node->num_inputs(), " inputs but ",
                             node->inputs.size(), " are listed"));
    }
    if (jn.contains("control_deps")) {
      for (const json& d : jn["control_deps"]) {
        const int64_t id = d.get<int64_t>();
        if (id < 0 || id >= static_cast<int64_t>(nodes.size())) {
          Malformed(absl::StrCat(label, ": dangling control dependency ", id));
        }
        node->control_deps.push_back(nodes[id]);
      }
    }
    nodes.push_back(node);
  }
  std::vector<NodeEntry> heads;
  for (const json& h : g["heads"])
    heads.push_back(ParseEntry(h, nodes, "heads"));
  return heads;
}

}  // namespace

std::string Symbol::ToJSON() const { return SaveGraph(outputs).dump(2); }

Symbol Symbol::FromJSON(const std::string& text) {
  json g;
  try {
    g = json::parse(text);
  } catch (const json::exception& e) {
    Malformed(std::string("not valid JSON: ") + e.what());
  }
  Symbol s;
  try {
    s.outputs = LoadGraph(g);
  } catch (const json::exception& e) {
    Malformed(std::string("unexpected structure: ") + e.what());
  }
  return s;
}

}  // namespace mx
