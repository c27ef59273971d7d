#include "nn/trace_context.h"

namespace mx {
namespace nn {
namespace internal {
namespace {
thread_local TraceContext* current = nullptr;
}  // namespace

TraceContext::TraceContext() : previous_(current) { current = this; }

TraceContext::~TraceContext() { current = previous_; }

TraceContext* TraceContext::Current() { return current; }

}  // namespace internal
}  // namespace nn
}  // namespace mx
