// The plugin loader: dlopen, the ABI handshake and all-or-nothing
// registration (see plugin.h).
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/env.h"
#include "base/error.h"
#include "graph/op.h"
#include "ndarray/storage.h"
#include "plugin/c_util.h"
#include "plugin/openmp_env.h"
#include "plugin/plugin.h"
#include "plugin/registrar.h"
#include "subgraph/subgraph_property.h"

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

// Set while this thread loads plugins, so registry use from inside a
// plugin does not try to load MX_PLUGINS again.
thread_local bool loading = false;

// Ops and backends registered at one moment, to undo registrations a
// plugin made outside the host table (a C++ plugin's static initializers
// could reach a host that exports symbols). REQUIRES Mu() and `loading`.
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

struct EnvState {
  bool done = false;
  bool failed = false;
  std::string error;
};

EnvState& Env() {
  static auto* state = new EnvState();
  return *state;
}

bool LoadEnvPluginsHook() {
  if (loading) return false;
  LoadEnvPlugins();
  return true;
}

[[maybe_unused]] const bool kHooksInstalled = [] {
  // Before main's threads exist: it may set environment variables.
  plugin::ApplyOpenMpWaitDefaults();
  SubgraphBackendRegistry::SetFirstUseHook([] { LoadEnvPlugins(); });
  OpRegistry::SetPluginHook(LoadEnvPluginsHook);
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
  MxPluginDesc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  plugin::Registrar registrar(canonical, &desc);
  auto fail = [&](const auto& error) {
    registrar.Rollback();
    before.UndoNewer();
    throw error;
  };
  // RTLD_NOW: a plugin needing symbols nobody provides fails here, loudly.
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    fail(InvalidArgument(absl::StrCat(
        who, ": not a loadable shared library: ", err ? err : "?",
        " (a plugin links against nothing of mxcore; see mx_plugin.h)")));
  }
  // The handle stays open after a failure: code of the plugin may still be
  // referenced by objects its registrations created.
  void* entry = dlsym(handle, MX_PLUGIN_INIT_SYMBOL);
  if (entry == nullptr) {
    fail(InvalidArgument(who + ": not an mxcore plugin (it exports no "
                               "mx_plugin_init)"));
  }
  if (!IsFunctionSymbol(entry)) {
    fail(InvalidArgument(who + ": its mx_plugin_init is not a function"));
  }
  auto init = reinterpret_cast<MxPluginInitFn>(entry);
  MxStatus status = plugin::EmptyStatus();
  MxStatusCode rc = MX_STATUS_RUNTIME_ERROR;
  try {
    rc = init(registrar.api(), &desc, &status);
  } catch (...) {
    // C++ plugins catch at the boundary (mx_plugin_cpp.h); anything that
    // still escapes is the plugin's bug, reported, not propagated.
    fail(RuntimeError(who + ": mx_plugin_init let an exception escape "
                            "(plugins must return a status); nothing was "
                            "registered"));
  }
  if (rc == MX_STATUS_ABI_MISMATCH || desc.abi_major != MX_PLUGIN_ABI_MAJOR) {
    fail(InvalidArgument(absl::StrCat(
        who, ": plugin ABI version ", desc.abi_major, ".", desc.abi_minor,
        " but the host has ", MX_PLUGIN_ABI_MAJOR, ".", MX_PLUGIN_ABI_MINOR,
        " (major versions must match); rebuild the plugin")));
  }
  if (desc.name == nullptr || desc.name[0] == '\0') {
    fail(InvalidArgument(who + ": mx_plugin_init gave no plugin name"));
  }
  if (rc != MX_STATUS_OK) {
    std::string reason(status.message,
                       strnlen(status.message, sizeof(status.message)));
    if (reason.empty()) reason = registrar.first_error();
    if (reason.empty()) reason = "(no reason given)";
    const std::string msg =
        absl::StrCat(who, ": plugin \"", desc.name,
                     "\" failed to register, nothing was registered: ", reason);
    switch (rc) {
      case MX_STATUS_ALREADY_EXISTS:
        fail(AlreadyExists(msg));
      case MX_STATUS_INVALID_ARGUMENT:
      case MX_STATUS_SHAPE_ERROR:
      case MX_STATUS_DTYPE_ERROR:
        fail(InvalidArgument(msg));
      case MX_STATUS_NOT_FOUND:
        fail(NotFound(msg));
      case MX_STATUS_NOT_IMPLEMENTED:
        fail(NotImplemented(msg));
      case MX_STATUS_OUT_OF_MEMORY:
      case MX_STATUS_RUNTIME_ERROR:
        fail(RuntimeError(msg));
      default:
        fail(InvalidArgument(absl::StrCat(msg,
                                          " (and it returned the unknown "
                                          "status code ",
                                          static_cast<int>(rc), ")")));
    }
  }
  PluginInfo info;
  info.path = canonical;
  info.name = desc.name;
  info.abi_major = desc.abi_major;
  info.abi_minor = desc.abi_minor;
  info.ops = registrar.ops();
  info.kernels = registrar.kernels();
  info.backends = registrar.backends();
  info.devices = registrar.devices();
  info.thread_runtime = registrar.Commit();
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

Context PluginDeviceContext(const std::string& type_name, int id) {
  LoadEnvPlugins();
  const int type = Context::DeviceTypeFromName(type_name);
  if (type < 0 || type == Context::kCPU || type == Context::kCPUPinned ||
      (type == Context::kGPU && !Storage::Get()->HasDevice(type))) {
    throw NotFound(absl::StrCat("no loaded plugin provides device type \"",
                                type_name, "\""));
  }
  return Context{static_cast<Context::DeviceType>(type), id};
}

}  // namespace mx
