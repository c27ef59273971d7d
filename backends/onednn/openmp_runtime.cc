#include "backends/onednn/openmp_runtime.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace mx_onednn {
namespace {

std::atomic<int64_t> loops{0};
int runtime_threads = 1;  // Set once, before the runtime is offered.

void RunChunks(void*, int64_t chunks, MxParallelBody body, void* arg) {
  loops.fetch_add(1, std::memory_order_relaxed);
  const int threads =
      static_cast<int>(std::min<int64_t>(chunks, runtime_threads));
  // Nested loops run on the calling thread (as libgomp would, without
  // nested parallelism, but without entering a region).
  if (threads <= 1 || omp_in_parallel()) {
    body(arg, 0, chunks);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) body(arg, c, c + 1);
}

}  // namespace

void OfferOpenMpRuntime(mxplugin::Plugin& plugin, int max_threads) {
  if (max_threads <= 1) return;
  runtime_threads = max_threads;
  plugin.OfferThreadRuntime(RunChunks);
}

int64_t OpenMpRuntimeLoops() { return loops.load(); }

}  // namespace mx_onednn
