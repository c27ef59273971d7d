#include "plugin/openmp_env.h"

#include <dlfcn.h>

#include <cstdlib>

namespace mx {
namespace plugin {

bool ApplyOpenMpWaitDefaults() {
  static bool applied = [] {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr ||
        std::getenv("GOMP_SPINCOUNT") != nullptr) {
      return false;  // the user's choice stands
    }
    // Already loaded (the host links it, or an earlier library did): it has
    // read its environment and would ignore ours.
    if (void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(gomp);
      return false;
    }
    // overwrite=0: a variable set by another thread since the check wins.
    setenv("OMP_WAIT_POLICY", "active", 0);
    setenv("GOMP_SPINCOUNT", kGompSpinCount, 0);
    return true;
  }();
  return applied;
}

}  // namespace plugin
}  // namespace mx
