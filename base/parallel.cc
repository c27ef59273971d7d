#include "base/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "base/env.h"

namespace mx {

int KernelThreads() {
  static const int kThreads =
      static_cast<int>(env::GetInt("MX_CPU_KERNEL_NTHREADS", 1, 1, 256));
  return kThreads;
}

void ParallelFor(int64_t n, int64_t min_chunk,
                 const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t chunks = std::min<int64_t>(
      KernelThreads(), std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk)));
  if (chunks <= 1) {
    if (n > 0) fn(0, n);
    return;
  }
  std::vector<std::thread> threads;
  const int64_t step = (n + chunks - 1) / chunks;
  for (int64_t c = 1; c < chunks; ++c) {
    const int64_t begin = c * step, end = std::min(n, begin + step);
    if (begin < end) {
      threads.emplace_back([&fn, begin, end] { fn(begin, end); });
    }
  }
  fn(0, std::min(n, step));
  for (auto& t : threads) t.join();
}

}  // namespace mx
