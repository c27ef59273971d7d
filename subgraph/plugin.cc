#include "subgraph/plugin.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/env.h"

namespace mx {
namespace {

std::recursive_mutex& Mu() {
  static auto* mu = new std::recursive_mutex();
  return *mu;
}

std::vector<PluginInfo>& Loaded() {
  static auto* loaded = new std::vector<PluginInfo>();
  return *loaded;
}

// Records what a plugin registers so a failed load can be undone.
class Registrar : public PluginRegistrar {
 public:
  Op& RegisterOp(const std::string& name) override {
    Op& op = OpRegistry::Get()->Register(name);
    ops_.push_back(name);
    return op;
  }
  void RegisterSubgraphProperty(const std::string& backend,
                                SubgraphPropertyPtr property) override {
    SubgraphBackendRegistry* registry = SubgraphBackendRegistry::Get();
    const bool mine = std::find(backends_.begin(), backends_.end(), backend) !=
                      backends_.end();
    if (!mine && registry->Has(backend)) {
      throw AlreadyExists(absl::StrCat("subgraph backend \"", backend,
                                       "\" is already registered"));
    }
    registry->Register(backend, std::move(property));
    if (!mine) backends_.push_back(backend);
  }
  void Fail(const std::string& message) override { error_ = message; }

  void Rollback() {
    for (const std::string& op : ops_) OpRegistry::Get()->Unregister(op);
    for (const std::string& b : backends_) {
      SubgraphBackendRegistry::Get()->Unregister(b);
    }
  }
  const std::string& error() const { return error_; }
  const std::vector<std::string>& ops() const { return ops_; }
  const std::vector<std::string>& backends() const { return backends_; }

 private:
  std::vector<std::string> ops_, backends_;
  std::string error_;
};

// Set while this thread loads plugins, so registry use from inside a
// plugin does not try to load MX_PLUGINS again.
thread_local bool loading = false;

struct EnvState {
  bool done = false;
  bool failed = false;
  std::string error;
};

EnvState& Env() {
  static auto* state = new EnvState();
  return *state;
}

[[maybe_unused]] const bool kHookInstalled = [] {
  SubgraphBackendRegistry::SetFirstUseHook([] { LoadEnvPlugins(); });
  return true;
}();

}  // namespace

PluginInfo LoadPlugin(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(Mu());
  const std::string who = absl::StrCat("LoadPlugin(\"", path, "\")");
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) {
    throw NotFound(who + ": no such file");
  }
  char resolved[PATH_MAX];
  const std::string canonical =
      realpath(path.c_str(), resolved) != nullptr ? resolved : path;
  for (const PluginInfo& p : Loaded()) {
    if (p.path == canonical) {
      throw AlreadyExists(absl::StrCat(
          who, ": plugin \"", p.name, "\" is already loaded from ", canonical));
    }
  }
  // RTLD_NOW: a plugin needing symbols the host does not export fails
  // here, loudly, instead of at first call.
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const std::string err = dlerror();
    std::string hint;
    if (err.find("undefined symbol") != std::string::npos) {
      hint =
          " (the host must export mxcore's symbols: link it with "
          "//subgraph:plugin, which adds -rdynamic)";
    }
    throw RuntimeError(absl::StrCat(who, ": dlopen failed: ", err, hint));
  }
  auto init = reinterpret_cast<MxPluginInitFn>(dlsym(handle, "mx_plugin_init"));
  if (init == nullptr) {
    dlclose(handle);
    throw InvalidArgument(
        who + ": not an mxcore plugin (it exports no mx_plugin_init)");
  }
  int plugin_abi = 0;
  const char* name = "";
  Registrar registrar;
  bool was_loading = loading;
  loading = true;
  int rc = 2;
  try {
    rc = init(MX_PLUGIN_ABI_VERSION, &plugin_abi, &name, &registrar);
  } catch (const std::exception& e) {
    registrar.Fail(e.what());
  }
  loading = was_loading;
  if (rc == 1 || (rc == 0 && plugin_abi != MX_PLUGIN_ABI_VERSION)) {
    registrar.Rollback();
    throw InvalidArgument(absl::StrCat(
        who, ": plugin ABI version ", plugin_abi, " but the host has ",
        MX_PLUGIN_ABI_VERSION, "; rebuild the plugin"));
  }
  if (rc != 0) {
    // The handle stays open: code of the plugin may still be referenced
    // by objects the failed registration created.
    registrar.Rollback();
    throw AlreadyExists(absl::StrCat(who,
                                     ": registration failed, nothing "
                                     "was registered: ",
                                     registrar.error()));
  }
  PluginInfo info{canonical, name, plugin_abi, registrar.ops(),
                  registrar.backends()};
  Loaded().push_back(info);
  return info;
}

void LoadPluginList(const std::string& paths, const std::string& variable) {
  int k = 0;
  for (absl::string_view entry : absl::StrSplit(paths, ':')) {
    ++k;
    if (entry.empty()) continue;
    try {
      LoadPlugin(std::string(entry));
    } catch (const Error& e) {
      throw ConfigError(absl::StrCat(variable, " entry ", k, " (\"", entry,
                                     "\"): ", e.what()));
    }
  }
}

void LoadEnvPlugins() {
  if (loading) return;
  std::lock_guard<std::recursive_mutex> lock(Mu());
  EnvState& state = Env();
  if (!state.done) {
    state.done = true;
    try {
      if (std::optional<std::string> v = env::Get("MX_PLUGINS")) {
        LoadPluginList(*v, "MX_PLUGINS");
      }
    } catch (const ConfigError& e) {
      state.failed = true;
      state.error = e.what();
    }
  }
  if (state.failed) throw ConfigError(state.error);
}

std::vector<PluginInfo> ListPlugins() {
  LoadEnvPlugins();
  std::lock_guard<std::recursive_mutex> lock(Mu());
  return Loaded();
}

}  // namespace mx
