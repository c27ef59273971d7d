#include "backends/onednn/openmp_runtime.h"

#include <omp.h>

#include <xmmintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

// libgomp's entry point for a parallel region (what GCC emits for
// `#pragma omp parallel`; exported and versioned since GCC 4.9): runs
// fn(data) on a team of `num_threads` (the caller is member 0) and returns
// when all are done. Called directly because the loops must run on
// libgomp, the runtime Debian's libdnnl is built against (one team, one
// OMP_NUM_THREADS, no second pool spinning beside oneDNN's), whichever
// compiler builds the plugin: clang's OpenMP code generation targets
// LLVM's libomp (`__kmpc_*`), which libgomp does not provide.
extern "C" void GOMP_parallel(void (*fn)(void*), void* data,
                              unsigned num_threads, unsigned flags);

namespace mx_onednn {
namespace {

std::atomic<int64_t> loops{0};
int runtime_threads = 1;  // Set once, before the runtime is offered.

struct Loop {
  int64_t chunks;
  MxParallelBody body;
  void* arg;
};

// Each team member runs a contiguous share of the chunks, the first
// `chunks % team` members one more (OpenMP's `schedule(static)`).
void RunShare(void* data) {
  const Loop& loop = *static_cast<const Loop*>(data);
  const int64_t team = omp_get_num_threads();
  const int64_t member = omp_get_thread_num();
  const int64_t share = loop.chunks / team;
  const int64_t extra = loop.chunks % team;
  const int64_t begin = member * share + std::min(member, extra);
  const int64_t end = begin + share + (member < extra ? 1 : 0);
  for (int64_t c = begin; c < end; ++c) loop.body(loop.arg, c, c + 1);
}

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
  Loop loop{chunks, body, arg};
  GOMP_parallel(RunShare, &loop, static_cast<unsigned>(threads), 0);
}

constexpr uint32_t kFloatModeBits = 0x8040;  // MXCSR: FTZ | DAZ.

void SetFloatMode(void* data) {
  const uint32_t mode = *static_cast<const uint32_t*>(data);
  const uint32_t csr = _mm_getcsr();
  if ((csr & kFloatModeBits) != mode) {
    _mm_setcsr((csr & ~kFloatModeBits) | mode);
  }
}

// The mode this thread's team was given, and to how many threads.
thread_local uint32_t tls_team_mode = ~0u;
thread_local int tls_team_threads = 0;

}  // namespace

void MatchTeamFloatMode() {
  uint32_t mode = _mm_getcsr() & kFloatModeBits;
  const int team = omp_get_max_threads();
  if (mode == tls_team_mode && team <= tls_team_threads) return;
  // Inside a region, nested ones run on this thread alone.
  if (team > 1 && !omp_in_parallel()) {
    GOMP_parallel(SetFloatMode, &mode, static_cast<unsigned>(team), 0);
  }
  // Threads beyond `team` (from a larger team before) did not get a new
  // mode: a later, larger team hands it over again.
  tls_team_threads =
      mode == tls_team_mode ? std::max(team, tls_team_threads) : team;
  tls_team_mode = mode;
}

void OfferOpenMpRuntime(mxplugin::Plugin& plugin, int max_threads) {
  if (max_threads <= 1) return;
  runtime_threads = max_threads;
  plugin.OfferThreadRuntime(RunChunks);
}

int64_t OpenMpRuntimeLoops() { return loops.load(); }

}  // namespace mx_onednn
