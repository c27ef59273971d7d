// Backend plugins: shared libraries that add ops and subgraph backends.
//
// A plugin exports one C entry point, mx_plugin_init, defined with
// MX_DEFINE_PLUGIN. The host passes its ABI version; the plugin reports its
// own and, when they agree, registers its ops (with kernels per device) and
// SubgraphProperties through a PluginRegistrar. A failed load leaves
// nothing registered. Plugins compile against headers only (target
// //subgraph:plugin_api) and resolve mxcore symbols from the host, which
// is why //subgraph:plugin links its users with -rdynamic: host and plugin
// then share one instance of every registry.
//
//   // my_plugin.cc, built as cc_binary(name = "libmy.so", linkshared = 1)
//   void Register(mx::PluginRegistrar& r) {
//     r.RegisterOp("my_op").SetNumInputs(1).SetCompute(...);
//     r.RegisterSubgraphProperty("my", std::make_shared<MyProperty>());
//   }
//   MX_DEFINE_PLUGIN("my", Register)
//
//   // Host: MX_PLUGINS=/path/libmy.so, or explicitly:
//   mx::LoadPlugin("/path/libmy.so");
#ifndef MXCORE_SUBGRAPH_PLUGIN_H_
#define MXCORE_SUBGRAPH_PLUGIN_H_

#include <exception>
#include <string>
#include <vector>

#include "graph/op.h"
#include "subgraph/subgraph_property.h"

#ifndef MX_PLUGIN_ABI_VERSION
// Bumped whenever a header a plugin compiles against changes layout.
#define MX_PLUGIN_ABI_VERSION 1
#endif

namespace mx {

// What a plugin registers through; implemented by the host. Pure virtual,
// so calls go through the host's vtable.
class PluginRegistrar {
 public:
  virtual ~PluginRegistrar() = default;
  // A new op. Throws AlreadyExists when the name is taken.
  virtual Op& RegisterOp(const std::string& name) = 0;
  // Adds `property` to a new backend `backend` (several properties may
  // join one backend of this plugin). Throws AlreadyExists when another
  // plugin or the host registered `backend`.
  virtual void RegisterSubgraphProperty(const std::string& backend,
                                        SubgraphPropertyPtr property) = 0;
  // Used by MX_DEFINE_PLUGIN to report an exception's message.
  virtual void Fail(const std::string& message) = 0;
};

struct PluginInfo {
  std::string path;  // As loaded (canonical).
  std::string name;  // As the plugin calls itself.
  int abi_version = 0;
  std::vector<std::string> ops;
  std::vector<std::string> backends;
};

// Loads one plugin. Throws NotFound (no such file), RuntimeError (dlopen
// failed: not a shared library, or symbols the host does not export;
// registration threw), InvalidArgument (not a regular file; no
// mx_plugin_init function; ABI version mismatch; no plugin name; an unknown
// return code), AlreadyExists (loaded before; an op or backend name taken).
// Nothing stays registered after a failure, including what the plugin's
// static initializers registered.
PluginInfo LoadPlugin(const std::string& path);

// Loads the `:`-separated paths in MX_PLUGINS, once per process; empty
// entries are skipped. Runs on the first use of the subgraph backend
// registry (partitioning, ListSubgraphBackends) and of ListPlugins; call it
// directly to use a plugin's ops before that. Throws ConfigError naming
// MX_PLUGINS and the entry (every later call throws it again); entries
// before the bad one stay loaded.
void LoadEnvPlugins();

// Loads a `:`-separated list as LoadEnvPlugins does, with errors naming
// `variable` (for tests and tools).
void LoadPluginList(const std::string& paths, const std::string& variable);

// Plugins loaded so far.
std::vector<PluginInfo> ListPlugins();

}  // namespace mx

// Signature of the entry point: returns 0 on success, 1 on an ABI
// mismatch (nothing registered), 2 when registration threw.
extern "C" typedef int (*MxPluginInitFn)(int host_abi, int* plugin_abi,
                                         const char** plugin_name,
                                         mx::PluginRegistrar* registrar);

// Defines mx_plugin_init for a plugin called `name` whose registration
// function is `fn(mx::PluginRegistrar&)`.
#define MX_DEFINE_PLUGIN(name, fn)                                      \
  extern "C" __attribute__((visibility("default"))) int mx_plugin_init( \
      int host_abi, int* plugin_abi, const char** plugin_name,          \
      ::mx::PluginRegistrar* registrar) {                               \
    *plugin_abi = MX_PLUGIN_ABI_VERSION;                                \
    *plugin_name = name;                                                \
    if (host_abi != MX_PLUGIN_ABI_VERSION) return 1;                    \
    try {                                                               \
      fn(*registrar);                                                   \
    } catch (const std::exception& e) {                                 \
      registrar->Fail(e.what());                                        \
      return 2;                                                         \
    } catch (...) {                                                     \
      registrar->Fail("threw an object that is not a std::exception");  \
      return 2;                                                         \
    }                                                                   \
    return 0;                                                           \
  }

#endif  // MXCORE_SUBGRAPH_PLUGIN_H_
