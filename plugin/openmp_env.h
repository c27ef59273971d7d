// OpenMP wait defaults for processes that load plugins through MX_PLUGINS.
//
// libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when it is loaded,
// and has no call to change them later. Its defaults suit a process whose
// only threads are OpenMP's: when it counts more of its threads than cores
// (every engine worker that runs a oneDNN kernel is a team master besides
// the initial thread, so 2 kernel threads on 2 cores already count 3), an
// idle team thread spins only ~100 times and then sleeps in the kernel, and
// each of the next region's wake-ups costs tens of microseconds. A train
// step runs a dozen short regions: the oneDNN MLP step took 1.9 ms at 2
// threads against 1.5 ms at 1. Only OMP_WAIT_POLICY=active raises that
// throttled spin (to min(1000, GOMP_SPINCOUNT)).
//
// So, when MX_PLUGINS is set, the plugin host sets at process start (static
// initialization: no other thread can be reading the environment yet)
//   OMP_WAIT_POLICY=active  GOMP_SPINCOUNT=kGompSpinCount  KMP_BLOCKTIME=1
// unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT, or an OpenMP
// runtime is already loaded (then it has read its environment). An idle
// libgomp thread then spins about 0.1 ms (libgomp counts ~100,000 spins per
// ms) before it sleeps. KMP_BLOCKTIME (kept if set) bounds LLVM's and
// Intel's runtimes, for which "active" alone means spinning forever.
// Measured on the oneDNN MLP step at 2 threads: 1000-30000 spins gave
// 1.2-1.3 ms, 100000 gave 1.4 (the spinner takes the core the pushing
// thread needs), libgomp's defaults 1.9-2.0. Plugins loaded later with
// LoadPlugin() get no defaults (setenv is unsafe once threads run) unless
// the program calls mx::SetOpenMpWaitDefaults() (plugin.h) at its start.
#ifndef MXCORE_PLUGIN_OPENMP_ENV_H_
#define MXCORE_PLUGIN_OPENMP_ENV_H_

namespace mx {
namespace plugin {

inline constexpr const char* kGompSpinCount = "10000";
inline constexpr const char* kKmpBlockTime = "1";

// Sets the defaults above if they apply; returns whether it set them.
// Only for static initialization (single-threaded); decided once.
bool ApplyOpenMpWaitDefaults();

}  // namespace plugin
}  // namespace mx

#endif  // MXCORE_PLUGIN_OPENMP_ENV_H_
