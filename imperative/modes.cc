// Thread-local execution modes.
#include "imperative/imperative.h"

namespace mx {
namespace imperative {
namespace {

thread_local bool tls_training = false;
thread_local bool tls_recording = false;
thread_local bool tls_deferred = false;

bool Exchange(bool* flag, bool on) {
  bool previous = *flag;
  *flag = on;
  return previous;
}

}  // namespace

bool IsTraining() { return tls_training; }
bool SetTraining(bool on) { return Exchange(&tls_training, on); }
bool IsRecording() { return tls_recording; }
bool SetRecording(bool on) { return Exchange(&tls_recording, on); }
bool IsDeferredCompute() { return tls_deferred; }
bool SetDeferredCompute(bool on) { return Exchange(&tls_deferred, on); }

}  // namespace imperative
}  // namespace mx
