#include "base/float_mode.h"

#include <atomic>

#include "base/env.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define MX_HAS_MXCSR 1
#endif

namespace mx {
namespace {

#ifdef MX_HAS_MXCSR
constexpr uint32_t kFlushToZero = 0x8000;      // MXCSR.FTZ
constexpr uint32_t kDenormalsAreZero = 0x0040;  // MXCSR.DAZ
constexpr uint32_t kModeBits = kFlushToZero | kDenormalsAreZero;
#else
constexpr uint32_t kModeBits = 0;
#endif

std::atomic<int>& Setting() {  // -1: not read from the environment yet.
  static std::atomic<int> setting{-1};
  return setting;
}

bool ReadSetting() {
  std::atomic<int>& s = Setting();
  int v = s.load(std::memory_order_acquire);
  if (v < 0) {
    const int from_env = env::GetBool("MX_CPU_FLUSH_DENORMALS", true) ? 1 : 0;
    int expected = -1;
    // A concurrent SetFlushDenormals wins over the environment's default.
    s.compare_exchange_strong(expected, from_env, std::memory_order_acq_rel);
    v = s.load(std::memory_order_acquire);
  }
  return v == 1;
}

thread_local bool tls_runtime_thread = false;

}  // namespace

bool SetFlushDenormals(bool on) {
  const bool previous = ReadSetting();
  Setting().store(on ? 1 : 0, std::memory_order_release);
  return previous;
}

bool FlushDenormals() { return ReadSetting(); }

uint32_t ThreadFloatMode() {
#ifdef MX_HAS_MXCSR
  return _mm_getcsr() & kModeBits;
#else
  return 0;
#endif
}

void SetThreadFloatMode(uint32_t mode) {
#ifdef MX_HAS_MXCSR
  const uint32_t csr = _mm_getcsr();
  const uint32_t want = (csr & ~kModeBits) | (mode & kModeBits);
  if (want != csr) _mm_setcsr(want);
#else
  (void)mode;
#endif
}

CpuFloatModeScope::CpuFloatModeScope()
    : restore_(ThreadFloatMode()), changed_(false) {
  const uint32_t want = FlushDenormals() ? kModeBits : 0;
  if (want != restore_) {
    SetThreadFloatMode(want);
    changed_ = !tls_runtime_thread;
  }
}

CpuFloatModeScope::~CpuFloatModeScope() {
  if (changed_) SetThreadFloatMode(restore_);
}

void CpuFloatModeScope::MarkRuntimeThread() { tls_runtime_thread = true; }

}  // namespace mx
