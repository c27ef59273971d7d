// The oneDNN CPU backend plugin, libmx_onednn.so: oneDNN kernels that take
// precedence over the built-in Eigen kernels on the CPU. Load it with
// MX_PLUGINS=/path/libmx_onednn.so or mx::LoadPlugin. A call oneDNN cannot
// run (another dtype, an odd layout or attribute) is declined and runs on
// the built-in kernel (MX_ONEDNN_VERBOSE=1 prints why).
#include <cstdint>

#include "backends/onednn/batch_norm_kernels.h"
#include "backends/onednn/conv_kernels.h"
#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/eltwise_kernels.h"
#include "backends/onednn/fusion_property.h"
#include "backends/onednn/join_add_kernels.h"
#include "backends/onednn/matmul_kernels.h"
#include "backends/onednn/openmp_runtime.h"
#include "backends/onednn/pooling_kernels.h"
#include "backends/onednn/primitive_cache.h"
#include "backends/onednn/softmax_kernels.h"
#include "backends/onednn/weight_cache.h"
#include "backends/plugin_api/mx_plugin_cpp.h"

MX_PLUGIN("onednn", [](mxplugin::Plugin& plugin) {
  mx_onednn::WarmUp();
  mx_onednn::RegisterMatmulKernels(plugin);
  mx_onednn::RegisterConvKernels(plugin);
  mx_onednn::RegisterPoolingKernels(plugin);
  mx_onednn::RegisterEltwiseKernels(plugin);
  mx_onednn::RegisterSoftmaxKernels(plugin);
  mx_onednn::RegisterBatchNormKernels(plugin);
  mx_onednn::RegisterJoinAddKernels(plugin);
  mx_onednn::RegisterFusionProperty(plugin);
  mx_onednn::OfferOpenMpRuntime(plugin, mx_onednn::KernelThreads());
})

// For tests and diagnostics (found with dlsym; not part of the plugin
// ABI): primitive cache hits, misses and entries, and calls declined to
// the built-in kernels, since the plugin loaded.
extern "C" __attribute__((visibility("default"))) void mx_onednn_stats(
    int64_t* cache_hits, int64_t* cache_misses, int64_t* cache_entries,
    int64_t* declined_calls) {
  const mx_onednn::PrimitiveCache& cache = mx_onednn::PrimitiveCache::Global();
  *cache_hits = static_cast<int64_t>(cache.hits());
  *cache_misses = static_cast<int64_t>(cache.misses());
  *cache_entries = static_cast<int64_t>(cache.size());
  *declined_calls = mx_onednn::DeclinedCalls();
}

// Weights the fused ops prepared (folded and reordered) since the plugin
// loaded: once per node unless an input they come from changed.
extern "C" __attribute__((visibility("default"))) int64_t
mx_onednn_weight_preparations() {
  return mx_onednn::WeightPreparations();
}

// The host's parallel loops run on the plugin's OpenMP threads so far.
extern "C" __attribute__((visibility("default"))) int64_t
mx_onednn_runtime_loops() {
  return mx_onednn::OpenMpRuntimeLoops();
}

// oneDNN executions (primitives and sgemm calls) since the plugin loaded.
extern "C" __attribute__((visibility("default"))) int64_t mx_onednn_calls() {
  return mx_onednn::OnednnCalls();
}
