#include "plugin/openmp_env.h"

#include <dlfcn.h>

#include <cstdlib>

#include "plugin/plugin.h"

namespace mx {
namespace plugin {
namespace {

// Whether an OpenMP runtime is in the process already (it read its
// environment when it was loaded and would ignore ours).
bool OpenMpRuntimeLoaded() {
  for (const char* soname :
       {"libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so"}) {
    if (void* lib = dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(lib);
      return true;
    }
  }
  return false;
}

}  // namespace

bool ApplyOpenMpWaitDefaults() {
  static const bool applied = [] {
    const char* plugins = std::getenv("MX_PLUGINS");
    if (plugins == nullptr || *plugins == '\0') return false;
    return SetOpenMpWaitDefaults();
  }();
  return applied;
}

}  // namespace plugin

bool SetOpenMpWaitDefaults() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr ||
      std::getenv("GOMP_SPINCOUNT") != nullptr) {
    return false;  // the user's choice stands
  }
  if (plugin::OpenMpRuntimeLoaded()) return false;
  setenv("OMP_WAIT_POLICY", "active", 0);
  setenv("GOMP_SPINCOUNT", plugin::kGompSpinCount, 0);
  setenv("KMP_BLOCKTIME", plugin::kKmpBlockTime, 0);  // a user's value stays
  return true;
}

}  // namespace mx
