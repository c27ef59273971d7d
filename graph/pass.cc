#include "graph/pass.h"

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mx {
namespace {
std::mutex& PassMutex() {
  static std::mutex mu;
  return mu;
}
}  // namespace

PassRegistry* PassRegistry::Get() {
  static PassRegistry* registry = new PassRegistry();
  return registry;
}

void PassRegistry::Register(PassInfo info) {
  std::lock_guard<std::mutex> lock(PassMutex());
  const std::string name = info.name;
  if (!passes_.emplace(name, std::move(info)).second) {
    throw AlreadyExists(
        absl::StrCat("pass \"", name, "\" is already registered"));
  }
}

const PassInfo& PassRegistry::Lookup(const std::string& name) const {
  {
    std::lock_guard<std::mutex> lock(PassMutex());
    auto it = passes_.find(name);
    if (it != passes_.end()) return it->second;
  }
  throw NotFound(absl::StrCat("unknown pass \"", name, "\"; registered: ",
                              absl::StrJoin(ListNames(), ", ")));
}

std::vector<std::string> PassRegistry::ListNames() const {
  std::lock_guard<std::mutex> lock(PassMutex());
  std::vector<std::string> names;
  for (const auto& [name, info] : passes_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

Graph ApplyPass(Graph graph, const std::string& name) {
  const PassInfo& pass = PassRegistry::Get()->Lookup(name);
  for (const std::string& attr : pass.needs) {
    if (graph.HasAttr(attr)) continue;
    std::string providers;
    for (const std::string& other : PassRegistry::Get()->ListNames()) {
      const PassInfo& p = PassRegistry::Get()->Lookup(other);
      if (std::find(p.provides.begin(), p.provides.end(), attr) !=
          p.provides.end()) {
        providers += (providers.empty() ? "" : ", ") + other;
      }
    }
    throw InvalidArgument(absl::StrCat(
        "pass \"", name, "\" needs graph attribute \"", attr, "\"",
        providers.empty() ? "" : absl::StrCat(" (run ", providers, " first)")));
  }
  return pass.run(std::move(graph));
}

Graph ApplyPasses(Graph graph, const std::vector<std::string>& names) {
  for (const std::string& name : names)
    graph = ApplyPass(std::move(graph), name);
  return graph;
}

}  // namespace mx
