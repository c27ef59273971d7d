// A parallel loop over the CPU kernel threads, shared by the built-in CPU
// kernels and plugins (through the plugin ABI's parallel_for), so that
// both use one thread budget instead of oversubscribing the machine.
//
//   mx::ParallelFor(n, /*min_chunk=*/4096, [&](int64_t b, int64_t e) {
//     for (int64_t i = b; i < e; ++i) y[i] = 2 * x[i];
//   });
#ifndef MXCORE_BASE_PARALLEL_H_
#define MXCORE_BASE_PARALLEL_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace mx {

// Runs fn(begin, end) over [0, n) in chunks of at least `min_chunk`, on up
// to MX_CPU_KERNEL_NTHREADS threads (default 1: the engine already runs
// independent ops in parallel): the caller and a persistent pool of
// MX_CPU_KERNEL_NTHREADS - 1 threads started on first use (or the chunk
// runner set by SetChunkRunner below). Small n runs inline. Callable from
// several threads at once and from inside `fn` (callers run unclaimed chunks
// themselves, so nothing waits on a busy pool). An exception thrown by `fn`
// reaches the caller once every chunk has finished (the first one, if several
// threw). `fn` is only borrowed (no copy, no allocation: kernels call this for
// every op).
void ParallelFor(int64_t n, int64_t min_chunk,
                 absl::FunctionRef<void(int64_t, int64_t)> fn);

// Calls body(arg, begin, end) over ranges of chunks that together cover
// [0, chunks) once, on at most `chunks` threads (the caller among them),
// and returns when all calls have returned; `body` never throws. The same
// shape as the plugin ABI's MxThreadRuntimeDef.run, so a plugin's runtime
// is used as it is.
using ChunkRunner = void (*)(void* user_data, int64_t chunks,
                             void (*body)(void* arg, int64_t begin,
                                          int64_t end),
                             void* arg);

// From now on ParallelFor runs its chunks through `runner` instead of its
// own pool: a plugin's thread runtime (oneDNN's OpenMP), so that one set of
// threads serves every CPU kernel instead of two competing for the cores.
// The first call wins; returns whether this one did. `runner` and
// `user_data` must stay valid for the life of the process.
bool SetChunkRunner(ChunkRunner runner, void* user_data);

// The thread count ParallelFor uses (MX_CPU_KERNEL_NTHREADS).
int KernelThreads();

// The threads a kernel running on this thread may use: KernelThreads(), or
// fewer inside a ScopedKernelThreads. ParallelFor uses this many, and the
// plugin host passes it to plugin kernels (MxKernelContext.num_threads) for
// their own thread runtimes.
int KernelThreadsHere();

// Limits KernelThreadsHere() on this thread to `n` (>= 1) while alive.
// The engine runs small ops on the pushing thread with one: a thread team
// started there would compete with the engine's workers for the cores.
class ScopedKernelThreads {
 public:
  explicit ScopedKernelThreads(int n);
  ~ScopedKernelThreads();
  ScopedKernelThreads(const ScopedKernelThreads&) = delete;
  ScopedKernelThreads& operator=(const ScopedKernelThreads&) = delete;

 private:
  int saved_;
};

}  // namespace mx

#endif  // MXCORE_BASE_PARALLEL_H_
