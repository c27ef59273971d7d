#include "subgraph/subgraph_property.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "subgraph/subgraph_exec.h"

namespace mx {
namespace {

std::function<void()>& FirstUseHook() {
  static auto* hook = new std::function<void()>();
  return *hook;
}

}  // namespace

bool SubgraphProperty::HasAttr(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return attrs_.contains(key);
}

void SubgraphProperty::RemoveAttr(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  attrs_.erase(key);
}

std::shared_ptr<const std::any> SubgraphProperty::FindAttr(
    const std::string& key) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = attrs_.find(key);
    if (it != attrs_.end()) return it->second;
  }
  throw NotFound(absl::StrCat("subgraph property \"", name(),
                              "\" has no attribute \"", key, "\""));
}

SubgraphBackendRegistry* SubgraphBackendRegistry::Get() {
  static auto* registry = new SubgraphBackendRegistry();
  return registry;
}

void SubgraphBackendRegistry::SetFirstUseHook(std::function<void()> hook) {
  FirstUseHook() = std::move(hook);
}

void SubgraphBackendRegistry::RunFirstUseHook() const {
  // The hook may register backends (plugins), so it runs unlocked; it keeps
  // its own once-state and error.
  if (FirstUseHook()) FirstUseHook()();
}

void SubgraphBackendRegistry::Register(const std::string& backend,
                                       SubgraphPropertyPtr property) {
  if (backend == "NONE" || backend.empty()) {
    throw InvalidArgument(
        absl::StrCat("SubgraphBackendRegistry::Register: \"", backend,
                     "\" is reserved (NONE means no partitioning)"));
  }
  if (property == nullptr) {
    throw InvalidArgument(absl::StrCat("SubgraphBackendRegistry::Register(\"",
                                       backend, "\"): null property"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  backends_[backend].push_back(std::move(property));
}

void SubgraphBackendRegistry::Unregister(const std::string& backend) {
  std::lock_guard<std::mutex> lock(mu_);
  backends_.erase(backend);
}

bool SubgraphBackendRegistry::Has(const std::string& backend) const {
  RunFirstUseHook();
  std::lock_guard<std::mutex> lock(mu_);
  return backends_.contains(backend);
}

std::vector<SubgraphPropertyPtr> SubgraphBackendRegistry::Lookup(
    const std::string& backend) const {
  RunFirstUseHook();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = backends_.find(backend);
    if (it != backends_.end()) return it->second;
  }
  throw NotFound(absl::StrCat(
      "unknown subgraph backend \"", backend, "\"; registered: ",
      absl::StrJoin(ListNames(), ", "), " (or NONE for no partitioning)"));
}

std::vector<std::string> SubgraphBackendRegistry::ListNames() const {
  RunFirstUseHook();
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, props] : backends_) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> ListSubgraphBackends() {
  return SubgraphBackendRegistry::Get()->ListNames();
}

void SetSubgraphPropertyOpNames(const std::string& backend,
                                const std::vector<std::string>& op_names) {
  for (const SubgraphPropertyPtr& p :
       SubgraphBackendRegistry::Get()->Lookup(backend)) {
    p->SetAttr("op_names", op_names);
  }
}

void RemoveSubgraphPropertyOpNames(const std::string& backend) {
  for (const SubgraphPropertyPtr& p :
       SubgraphBackendRegistry::Get()->Lookup(backend)) {
    p->RemoveAttr("op_names");
  }
}

std::vector<NodePtr> SubgraphInputs(const Symbol& symbol) {
  std::vector<NodePtr> inputs = symbol.ListInputs();
  std::vector<std::pair<long, size_t>> keys;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto it = inputs[i]->attrs.dict.find(kSubgraphInputKey);
    keys.emplace_back(
        it == inputs[i]->attrs.dict.end() ? LONG_MAX : std::stol(it->second),
        i);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<NodePtr> ordered;
  for (const auto& [key, i] : keys) ordered.push_back(inputs[i]);
  return ordered;
}

NodePtr MakeSubgraphOpNode(const std::string& op_name, const Symbol& symbol,
                           const std::string& name) {
  NodePtr node = Node::Create(OpRegistry::Get()->Lookup(op_name), {}, name);
  node->attrs.subgraphs.push_back(std::make_shared<Symbol>(symbol));
  subgraph_internal::AttachSubgraphInfo(&node->attrs);
  return node;
}

}  // namespace mx
