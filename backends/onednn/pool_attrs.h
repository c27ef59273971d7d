// A Pooling node's attributes as oneDNN's pooling runs them, read once for
// both users: the Pooling kernels (pooling_kernels.cc, with shapes) and the
// region property (region_builder.cc), which claims poolings before any
// shape is known.
//
//   std::string why;
//   std::optional<PoolAttrs> p = ReadPoolAttrs(attrs, &why);
//   if (!p) Decline("Pooling", why);  // sum/lp, another layout, unreadable
#ifndef MXCORE_BACKENDS_ONEDNN_POOL_ATTRS_H_
#define MXCORE_BACKENDS_ONEDNN_POOL_ATTRS_H_

#include <dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

struct PoolAttrs {
  // pooling_max, pooling_avg_include_padding or _exclude_padding.
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  bool global = false;
  // pooling_convention "full" (output size rounds up); a global pooling
  // accepts any convention and is never "full".
  bool full = false;
  // As given (empty when absent); not read for a global pooling.
  std::vector<int64_t> kernel, stride, pad;
};

// nullopt, with the reason in `why`, for what oneDNN's pooling does not
// run (pool_type sum or lp, a channels-last layout, another convention)
// and for attributes that do not parse (the built-in kernel reports those).
std::optional<PoolAttrs> ReadPoolAttrs(const mxplugin::Attrs& attrs,
                                       std::string* why);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_POOL_ATTRS_H_
