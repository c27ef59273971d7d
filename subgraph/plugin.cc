#include "subgraph/plugin.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>

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
    Op* op = nullptr;
    try {
      op = &OpRegistry::Get()->Register(name);
    } catch (const AlreadyExists&) {
      clashed_ = true;
      throw;
    }
    ops_.push_back(name);
    return *op;
  }
  void RegisterSubgraphProperty(const std::string& backend,
                                SubgraphPropertyPtr property) override {
    SubgraphBackendRegistry* registry = SubgraphBackendRegistry::Get();
    const bool mine = std::find(backends_.begin(), backends_.end(), backend) !=
                      backends_.end();
    if (!mine && registry->Has(backend)) {
      clashed_ = true;
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
  // Whether a name the plugin asked for was taken (an AlreadyExists).
  bool clashed() const { return clashed_; }
  const std::vector<std::string>& ops() const { return ops_; }
  const std::vector<std::string>& backends() const { return backends_; }

 private:
  std::vector<std::string> ops_, backends_;
  std::string error_;
  bool clashed_ = false;
};

// Ops and backends registered at one moment, to undo registrations a
// plugin made outside the registrar (its static initializers run inside
// dlopen). REQUIRES the plugin mutex and `loading` (so listing backends
// does not load MX_PLUGINS).
struct RegistrySnapshot {
  std::set<std::string> ops, backends;

  static RegistrySnapshot Take() {
    RegistrySnapshot s;
    for (std::string& n : OpRegistry::Get()->ListNames()) s.ops.insert(n);
    for (std::string& n : SubgraphBackendRegistry::Get()->ListNames()) {
      s.backends.insert(n);
    }
    return s;
  }
  // Unregisters everything registered since this snapshot.
  void UndoNewer() const {
    for (const std::string& n : OpRegistry::Get()->ListNames()) {
      if (!ops.count(n)) OpRegistry::Get()->Unregister(n);
    }
    for (const std::string& n : SubgraphBackendRegistry::Get()->ListNames()) {
      if (!backends.count(n)) SubgraphBackendRegistry::Get()->Unregister(n);
    }
  }
};

// Whether `address` (from dlsym) is the start of a function: a data symbol
// named mx_plugin_init must not be called.
bool IsFunctionSymbol(void* address) {
  Dl_info info;
  ElfW(Sym)* sym = nullptr;
  if (dladdr1(address, &info, reinterpret_cast<void**>(&sym), RTLD_DL_SYMENT) ==
          0 ||
      sym == nullptr) {
    return false;
  }
  const int type = ELF64_ST_TYPE(sym->st_info);
  return type == STT_FUNC || type == STT_GNU_IFUNC;
}

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
  // dlopen of a FIFO blocks until a writer appears, and devices or
  // directories are never libraries.
  if (!S_ISREG(st.st_mode)) {
    throw InvalidArgument(who +
                          ": not a regular file (a plugin is a shared "
                          "library file)");
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
  struct RestoreLoading {
    bool was = loading;
    ~RestoreLoading() { loading = was; }
  } restore_loading;
  loading = true;
  const RegistrySnapshot before = RegistrySnapshot::Take();
  Registrar registrar;
  // Every failure below leaves nothing registered: neither what went
  // through the registrar nor what static initializers added.
  auto fail = [&](const auto& error) {
    registrar.Rollback();
    before.UndoNewer();
    throw error;
  };
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
    fail(RuntimeError(absl::StrCat(who, ": dlopen failed: ", err, hint)));
  }
  // The handle stays open after a failure from here on: code of the plugin
  // may still be referenced by objects its registrations created.
  void* entry = dlsym(handle, "mx_plugin_init");
  if (entry == nullptr) {
    fail(InvalidArgument(who + ": not an mxcore plugin (it exports no "
                               "mx_plugin_init)"));
  }
  if (!IsFunctionSymbol(entry)) {
    fail(InvalidArgument(who + ": its mx_plugin_init is not a function"));
  }
  auto init = reinterpret_cast<MxPluginInitFn>(entry);
  int plugin_abi = 0;
  const char* name = "";
  int rc = 2;
  try {
    rc = init(MX_PLUGIN_ABI_VERSION, &plugin_abi, &name, &registrar);
  } catch (const std::exception& e) {
    registrar.Fail(e.what());
  } catch (...) {
    registrar.Fail(
        "mx_plugin_init threw an object that is not a "
        "std::exception");
  }
  if (rc == 1 || (rc == 0 && plugin_abi != MX_PLUGIN_ABI_VERSION)) {
    fail(InvalidArgument(absl::StrCat(
        who, ": plugin ABI version ", plugin_abi, " but the host has ",
        MX_PLUGIN_ABI_VERSION, "; rebuild the plugin")));
  }
  const std::string reason =
      registrar.error().empty() ? "(no reason given)" : registrar.error();
  if (rc == 2) {
    const std::string msg = absl::StrCat(
        who, ": registration failed, nothing was registered: ", reason);
    if (registrar.clashed()) fail(AlreadyExists(msg));
    fail(RuntimeError(msg));
  }
  if (rc != 0) {
    fail(InvalidArgument(absl::StrCat(
        who, ": mx_plugin_init returned ", rc,
        " (expected 0: loaded, 1: ABI mismatch, 2: registration failed); "
        "nothing was registered")));
  }
  if (name == nullptr) {
    fail(InvalidArgument(who + ": mx_plugin_init gave no plugin name"));
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
