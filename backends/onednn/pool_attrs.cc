#include "backends/onednn/pool_attrs.h"

#include <string>
#include <utility>

#include "backends/common/attr_parse.h"

namespace mx_onednn {

std::optional<PoolAttrs> ReadPoolAttrs(const mxplugin::Attrs& a,
                                       std::string* why) {
  auto fail = [&](std::string reason) {
    *why = std::move(reason);
    return std::nullopt;
  };
  PoolAttrs p;
  const std::optional<bool> global =
      mxplugin::ParseBool(a.Get("global_pool", "False"));
  if (!global) return fail("cannot read global_pool");
  p.global = *global;
  // A global pooling has one window whatever the convention.
  const std::string convention = a.Get("pooling_convention", "valid");
  if (!p.global && convention != "valid" && convention != "full") {
    return fail("pooling_convention " + convention);
  }
  p.full = !p.global && convention == "full";
  const std::string layout = a.Get("layout", "None");
  if (layout != "None" && layout != "NCW" && layout != "NCHW" &&
      layout != "NCDHW") {
    return fail("layout " + layout);
  }
  const std::string include = a.Get("count_include_pad", "None");
  const std::optional<bool> with_pad = include == "None"
                                           ? std::optional<bool>(true)
                                           : mxplugin::ParseBool(include);
  if (!with_pad) return fail("cannot read count_include_pad");
  const std::string type = a.Get("pool_type", "max");
  if (type == "max") {
    p.algorithm = dnnl::algorithm::pooling_max;
  } else if (type == "avg") {
    p.algorithm = *with_pad ? dnnl::algorithm::pooling_avg_include_padding
                            : dnnl::algorithm::pooling_avg_exclude_padding;
  } else {
    return fail("pool_type " + type);
  }
  if (p.global) return p;
  for (auto [key, field] :
       {std::pair{"kernel", &p.kernel}, std::pair{"stride", &p.stride},
        std::pair{"pad", &p.pad}}) {
    const auto given = mxplugin::ParseTuple(a.Get(key, "None"));
    if (!given) return fail(std::string("cannot read ") + key);
    *field = *given;
  }
  return p;
}

}  // namespace mx_onednn
