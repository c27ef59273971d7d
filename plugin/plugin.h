// Loading backend plugins: shared libraries that add kernels, ops,
// subgraph backends and device types through the C plugin ABI
// (backends/plugin_api/mx_plugin.h).
//
// A plugin exports mx_plugin_init and links against nothing of mxcore, so a
// plugin built with another compiler or C++ library loads into any host of
// the same ABI major version, and the host exports no symbols (no
// -rdynamic). A failed load leaves nothing registered.
//
//   mx::LoadPlugin("/path/libmy_plugin.so");   // or MX_PLUGINS=a.so:b.so
//   for (const mx::PluginInfo& p : mx::ListPlugins()) std::cout << p.name;
//   mx::Context dev = mx::PluginDeviceContext("mydev", 0);
#ifndef MXCORE_PLUGIN_PLUGIN_H_
#define MXCORE_PLUGIN_PLUGIN_H_

#include <string>
#include <vector>

#include "base/context.h"

struct MxDeviceDef;

namespace mx {

struct PluginInfo {
  std::string path;  // As loaded (canonical).
  std::string name;  // As the plugin calls itself.
  int abi_major = 0;
  int abi_minor = 0;  // The minor version the plugin was built against.
  std::vector<std::string> ops;      // New ops.
  std::vector<std::string> kernels;  // Ops given kernels (existing or new).
  std::vector<std::string> backends;
  std::vector<std::string> devices;
  // Whether the host's parallel loops run on this plugin's thread runtime
  // (the first plugin to offer one; see MxThreadRuntimeDef).
  bool thread_runtime = false;
};

// Loads one plugin. Throws NotFound (no such file), InvalidArgument (not a
// regular file, not a shared library, no mx_plugin_init function, ABI
// major mismatch naming both versions, a struct smaller than ABI 1.0's, no
// plugin name), AlreadyExists (loaded before; an op, backend or device
// name taken), or the error a registration callback reported. Nothing
// stays registered after a failure, including what the plugin's static
// initializers registered.
PluginInfo LoadPlugin(const std::string& path);

// Sets OMP_WAIT_POLICY=active, GOMP_SPINCOUNT=10000 and KMP_BLOCKTIME=1
// unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set or an OpenMP runtime is
// loaded already: idle OpenMP threads (oneDNN's) spin ~0.1 ms before they
// sleep instead of libgomp's 100 spins when the engine's threads outnumber
// the cores (see plugin/openmp_env.h). Done at process start when
// MX_PLUGINS is set; a program that loads plugins with LoadPlugin calls it
// first thing in main, before any thread starts (setenv is not safe
// later). Returns whether it set them.
bool SetOpenMpWaitDefaults();

// Loads the `:`-separated paths in MX_PLUGINS, once per process; empty
// entries are skipped. Runs before the first op is invoked, on the first
// use of the subgraph backend registry and of ListPlugins; call it directly
// to use a plugin earlier. Throws ConfigError naming MX_PLUGINS and the
// entry (every later call throws it again); entries before the bad one stay
// loaded.
void LoadEnvPlugins();

// Loads a `:`-separated list as LoadEnvPlugins does, with errors naming
// `variable` (for tests and tools).
void LoadPluginList(const std::string& paths, const std::string& variable);

// Plugins loaded so far.
std::vector<PluginInfo> ListPlugins();

// The context of device `id` of the plugin device type called `type_name`
// ("gpu" included). Throws NotFound when no loaded plugin provides it.
Context PluginDeviceContext(const std::string& type_name, int id);

// The C functions of a plugin device type, for the conformance suite's
// direct checks of streams and events; null when no plugin registered it.
const struct MxDeviceDef* PluginDeviceFunctions(int dev_type);

}  // namespace mx

#endif  // MXCORE_PLUGIN_PLUGIN_H_
