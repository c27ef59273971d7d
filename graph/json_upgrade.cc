#include "graph/json_upgrade.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "ndarray/shape.h"

namespace mx {
namespace json_upgrade {
namespace {

using nlohmann::json;

// MXNet versions are MAJOR*10000 + MINOR*100 + PATCH (0.9.4 = 904).
constexpr int kV0_9_0 = 900;
constexpr int kV0_9_4 = 904;
constexpr int kV2_0_0 = 20000;

// The document's node list, or nullptr when it has none (LoadGraph reports
// malformed documents; the upgrades only skip what they cannot read).
json* Nodes(json* doc) {
  if (!doc->is_object() || !doc->contains("nodes")) return nullptr;
  json& nodes = (*doc)["nodes"];
  return nodes.is_array() ? &nodes : nullptr;
}

json* Attrs(json& node) {
  if (!node.is_object() || !node.contains("attrs")) return nullptr;
  json& attrs = node["attrs"];
  return attrs.is_object() ? &attrs : nullptr;
}

bool IsNpShape(const json& doc) {
  if (!doc.contains("attrs") || !doc["attrs"].is_object()) return false;
  const json& attrs = doc["attrs"];
  if (!attrs.contains("is_np_shape")) return false;
  const json& v = attrs["is_np_shape"];
  return v.is_array() && v.size() == 2 && v[1].is_number_integer() &&
         v[1].get<int64_t>() != 0;
}

// Rewrites node references `id` after `inserted[k]` nodes were placed
// before old node k (prefix sums in `shift`: new id = id + shift[id]).
void Renumber(json& id, const std::vector<int64_t>& shift) {
  // Parsed non-negative numbers are unsigned; built ones may be signed.
  if (!id.is_number_integer() || id.get<int64_t>() < 0) return;
  const uint64_t old = id.get<uint64_t>();
  const int64_t add = old < shift.size() ? shift[old] : shift.back();
  id = old + static_cast<uint64_t>(add);
}

void RenumberEntries(json& entries, const std::vector<int64_t>& shift) {
  if (!entries.is_array()) return;
  for (json& e : entries) {
    if (e.is_array() && !e.empty()) Renumber(e[0], shift);
  }
}

}  // namespace

int DocumentVersion(const json& doc) {
  if (!doc.is_object() || !doc.contains("attrs") || !doc["attrs"].is_object())
    return 0;
  const json& attrs = doc["attrs"];
  if (!attrs.contains("mxnet_version")) return 0;
  const json& v = attrs["mxnet_version"];
  if (!v.is_array() || v.size() != 2 || !v[1].is_number_integer()) {
    throw InvalidArgument(
        absl::StrCat("Symbol::FromJSON: graph attribute \"mxnet_version\" is ",
                     v.dump(), "; expected [\"int\", VERSION]"));
  }
  const int64_t version = v[1].get<int64_t>();
  return version < 0 || version > 1000000 ? 0 : static_cast<int>(version);
}

void MergeAttributeKeys(json* doc) {
  json* nodes = Nodes(doc);
  if (nodes == nullptr) return;
  for (json& node : *nodes) {
    if (!node.is_object()) continue;
    for (const char* legacy : {"attr", "param"}) {
      if (!node.contains(legacy)) continue;
      json& from = node[legacy];
      if (!from.is_object()) continue;  // LoadGraph names the bad field
      if (!node.contains("attrs")) node["attrs"] = json::object();
      json& to = node["attrs"];
      if (!to.is_object()) continue;
      for (auto& [k, v] : from.items()) to[k] = v;
      node.erase(legacy);
    }
  }
}

void RenameHiddenKeys(json* doc) {
  static const char* const kHidden[] = {"ctx_group", "lr_mult", "wd_mult",
                                        "force_mirroring", "mirror_stage"};
  json* nodes = Nodes(doc);
  if (nodes == nullptr) return;
  for (json& node : *nodes) {
    json* attrs = Attrs(node);
    if (attrs == nullptr) continue;
    std::vector<std::string> keys;
    for (const auto& item : attrs->items()) keys.push_back(item.key());
    for (const std::string& key : keys) {
      bool hidden = false;
      for (const char* h : kHidden) {
        hidden = hidden || key == h ||
                 absl::EndsWith(key, absl::StrCat("_", h));  // weight_lr_mult
      }
      if (!hidden || absl::StartsWith(key, "__")) continue;
      const std::string renamed = absl::StrCat("__", key, "__");
      if (!attrs->contains(renamed)) (*attrs)[renamed] = (*attrs)[key];
      attrs->erase(key);
    }
  }
}

void AddBatchNormAuxInputs(json* doc) {
  json* nodes_ptr = Nodes(doc);
  if (nodes_ptr == nullptr) return;
  json& nodes = *nodes_ptr;
  std::vector<size_t> targets;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& n = nodes[i];
    if (n.is_object() && n.contains("op") && n["op"] == "BatchNorm" &&
        n.contains("name") && n["name"].is_string() && n.contains("inputs") &&
        n["inputs"].is_array() && n["inputs"].size() == 3) {
      targets.push_back(i);
    }
  }
  if (targets.empty()) return;
  // shift[i]: how many nodes are inserted before old node i (two per
  // BatchNorm at or before i); the last slot is for ids past the end.
  std::vector<int64_t> shift(nodes.size() + 1, 0);
  for (size_t t : targets) {
    for (size_t i = t; i < shift.size(); ++i) shift[i] += 2;
  }
  json upgraded = json::array();
  size_t next_target = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    json node = nodes[i];
    if (node.is_object()) {
      if (node.contains("inputs")) RenumberEntries(node["inputs"], shift);
      if (node.contains("control_deps") && node["control_deps"].is_array()) {
        for (json& d : node["control_deps"]) Renumber(d, shift);
      }
    }
    if (next_target < targets.size() && targets[next_target] == i) {
      ++next_target;
      const std::string name = node["name"];
      const uint64_t first = upgraded.size();
      for (const char* stat : {"_moving_mean", "_moving_var"}) {
        upgraded.push_back(
            {{"op", "null"}, {"name", name + stat}, {"inputs", json::array()}});
      }
      const uint64_t zero = 0;
      node["inputs"].push_back({first, zero, zero});
      node["inputs"].push_back({first + 1, zero, zero});
    }
    upgraded.push_back(std::move(node));
  }
  nodes = std::move(upgraded);
  if (doc->contains("heads")) RenumberEntries((*doc)["heads"], shift);
  // Both are derived indexes the loader does not read; stale now.
  doc->erase("arg_nodes");
  doc->erase("node_row_ptr");
}

namespace {

// The shape `text` parses to with its 0 dimensions made -1 (unknown);
// nullopt when it does not parse (InferShape reports it with its node).
std::optional<TShape> WithUnknownDims(const std::string& text) {
  TShape shape;
  try {
    shape = TShape::Parse(text);
  } catch (const InvalidArgument&) {
    return std::nullopt;
  }
  for (int d = 0; d < shape.ndim(); ++d) {
    if (shape[d] == 0) shape[d] = -1;
  }
  return shape;
}

// Creation ops whose `shape` attribute MXNet 1.x completes by shape
// inference where it is 0 (Gluon's begin_state writes (L, 0, H)).
bool IsCreationOp(const json& node) {
  if (!node.contains("op") || !node["op"].is_string()) return false;
  const std::string op = node["op"];
  return op == "_zeros" || op == "_ones" || op == "_full" ||
         op == "_zeros_without_dtype";
}

}  // namespace

void MarkUnknownShapeDims(json* doc) {
  if (IsNpShape(*doc)) return;
  json* nodes = Nodes(doc);
  if (nodes == nullptr) return;
  for (json& node : *nodes) {
    json* attrs = Attrs(node);
    if (attrs == nullptr) continue;
    if (attrs->contains("__shape__") && (*attrs)["__shape__"].is_string()) {
      const std::optional<TShape> hint =
          WithUnknownDims((*attrs)["__shape__"].get<std::string>());
      if (hint && hint->ndim() == 0) {
        attrs->erase("__shape__");  // "()": no hint.
      } else if (hint) {
        (*attrs)["__shape__"] = hint->ToString();
      }
    }
    if (IsCreationOp(node) && attrs->contains("shape") &&
        (*attrs)["shape"].is_string()) {
      const std::optional<TShape> shape =
          WithUnknownDims((*attrs)["shape"].get<std::string>());
      if (shape && shape->ndim() > 0) (*attrs)["shape"] = shape->ToString();
    }
  }
}

void UpgradeLegacyJSON(json* doc) {
  const int version = DocumentVersion(*doc);
  MergeAttributeKeys(doc);
  if (version < kV0_9_0) RenameHiddenKeys(doc);
  if (version < kV0_9_4) AddBatchNormAuxInputs(doc);
  if (version < kV2_0_0) MarkUnknownShapeDims(doc);
}

}  // namespace json_upgrade
}  // namespace mx
