#include "backends/onednn/weight_cache.h"

#include <atomic>

namespace mx_onednn {
namespace {

std::atomic<int64_t> preparations{0};

}  // namespace

bool WeightCache::Fresh(const mxplugin::KernelContext& ctx,
                        const std::vector<int>& inputs,
                        const std::vector<bool>& own_writes) {
  // `now`: what the inputs hold; `after`: what they will hold once this
  // call's own writes complete (what the next call sees if nothing else
  // wrote them).
  std::vector<mxplugin::KernelContext::InputVersion> now, after;
  bool known = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    mxplugin::KernelContext::InputVersion v = ctx.InputVersionOf(inputs[i]);
    known &= v.known();
    now.push_back(v);
    if (i < own_writes.size() && own_writes[i]) ++v.version;
    after.push_back(v);
  }
  const bool fresh = valid_ && known && now == expected_;
  if (!fresh) CountWeightPreparation();
  expected_ = std::move(after);
  valid_ = known;
  return fresh;
}

void CountWeightPreparation() {
  preparations.fetch_add(1, std::memory_order_relaxed);
}

int64_t WeightPreparations() {
  return preparations.load(std::memory_order_relaxed);
}

}  // namespace mx_onednn
