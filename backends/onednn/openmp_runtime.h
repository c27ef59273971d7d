// The plugin's OpenMP threads offered as the host's thread runtime
// (MxThreadRuntimeDef): the built-in kernels' parallel loops then run on
// the same libgomp team as oneDNN's kernels, instead of on the host's own
// pool, whose threads would compete with the team's spinning ones for the
// cores.
//
//   OfferOpenMpRuntime(plugin, KernelThreads());  // in its registration
#ifndef MXCORE_BACKENDS_ONEDNN_OPENMP_RUNTIME_H_
#define MXCORE_BACKENDS_ONEDNN_OPENMP_RUNTIME_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

// Offers the runtime, whose loops use at most `max_threads` threads,
// unless that is 1 (the plugin's kernels then run single-threaded, as
// under ThreadSanitizer, which cannot see libgomp's synchronization).
void OfferOpenMpRuntime(mxplugin::Plugin& plugin, int max_threads);

// Loops run through the runtime so far (for mx_onednn_runtime_loops).
int64_t OpenMpRuntimeLoops();

// Gives the calling thread's OpenMP team (the threads oneDNN's kernels run
// on when called from here) the thread's float mode: how denormals are
// handled (MXCSR's FTZ and DAZ; the host flushes them by default and sets
// the mode on the threads that run kernels). One register read when the
// team has it already; a parallel region when the mode changed or the team
// grew since.
void MatchTeamFloatMode();

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_OPENMP_RUNTIME_H_
