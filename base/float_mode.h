// How CPU kernels treat denormal (subnormal) floats. As in MXNet
// (mx.util.set_flush_denorms, on by default), they are flushed to zero:
// results below the smallest normal float become 0 (FTZ) and such inputs
// read as 0 (DAZ). Arithmetic on denormals costs tens of times more
// than on normal numbers on x86 (a momentum buffer decaying towards zero
// under dead ReLUs doubled the SGD update's time), and values under 1e-38
// change no model's result. MX_CPU_FLUSH_DENORMALS=0 (or
// SetFlushDenormals(false)) keeps IEEE behaviour.
//
// The mode is applied where CPU kernels run: the engine runs each operation
// inside a CpuFloatModeScope, and ParallelFor's helper threads take the
// caller's mode. A user thread that runs an operation inline gets its own
// mode back when the operation ends. x86-64 only; elsewhere nothing changes.
//
//   bool was = mx::SetFlushDenormals(false);  // IEEE denormals from now on
//   ...
//   mx::SetFlushDenormals(was);
#ifndef MXCORE_BASE_FLOAT_MODE_H_
#define MXCORE_BASE_FLOAT_MODE_H_

#include <cstdint>

namespace mx {

// Sets the process-wide mode for operations that start from now on and
// returns the previous one. The first call of either function reads
// MX_CPU_FLUSH_DENORMALS (a boolean, default on; ConfigError if bad).
bool SetFlushDenormals(bool on);
bool FlushDenormals();

// The calling thread's denormal-handling bits (MXCSR's FTZ and DAZ; 0 off
// x86), and setting them: how a thread hands its mode to helper threads.
uint32_t ThreadFloatMode();
void SetThreadFloatMode(uint32_t mode);

// While alive, the calling thread computes in the process-wide mode. On
// exit the thread's previous mode comes back, except on runtime threads
// (engine workers), which keep it: they run nothing but operations.
class CpuFloatModeScope {
 public:
  CpuFloatModeScope();
  ~CpuFloatModeScope();
  CpuFloatModeScope(const CpuFloatModeScope&) = delete;
  CpuFloatModeScope& operator=(const CpuFloatModeScope&) = delete;

  // Marks the calling thread as a runtime thread (see above).
  static void MarkRuntimeThread();

 private:
  uint32_t restore_;
  bool changed_;
};

}  // namespace mx

#endif  // MXCORE_BASE_FLOAT_MODE_H_
