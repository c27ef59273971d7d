// OpenMP wait defaults the plugin loader applies before a plugin (and with
// it, possibly, GNU libgomp) is loaded.
//
// libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when it is loaded,
// and has no call to change them later. Its defaults suit a process whose
// only threads are OpenMP's: when it counts more of its threads than cores
// (every engine worker that runs a oneDNN kernel is a team master besides
// the initial thread, so 2 kernel threads on 2 cores already count 3), an
// idle team thread spins only ~100 times and then sleeps in the kernel, and
// each of the next region's wake-ups costs tens of microseconds. A train
// step runs a dozen short regions: the oneDNN MLP step took 1.9 ms at 2
// threads against 1.5 ms at 1.
//
// So, unless the user set either variable or libgomp is already in the
// process (then nothing can change), the loader sets
//   OMP_WAIT_POLICY=active  GOMP_SPINCOUNT=kGompSpinCount
// which makes every idle wait spin about 0.1 ms (libgomp counts ~100,000
// spins per ms), then sleep. Measured on the oneDNN MLP step at 2 threads:
// 1000-30000 spins gave 1.2-1.3 ms, 100000 gave 1.4 (the spinner takes the
// core the pushing thread needs), libgomp's defaults 1.9-2.0.
#ifndef MXCORE_PLUGIN_OPENMP_ENV_H_
#define MXCORE_PLUGIN_OPENMP_ENV_H_

namespace mx {
namespace plugin {

inline constexpr const char* kGompSpinCount = "10000";

// Sets the defaults above if they apply; returns whether it set them.
// Called with the loader's lock held, before the first dlopen of a plugin.
bool ApplyOpenMpWaitDefaults();

}  // namespace plugin
}  // namespace mx

#endif  // MXCORE_PLUGIN_OPENMP_ENV_H_
