#include "backends/onednn/pool_attrs.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/onednn/fused_region.h"
#include "gtest/gtest.h"

namespace mx_onednn {
namespace {

using Dict = std::map<std::string, std::string>;

std::optional<PoolAttrs> Read(const Dict& dict, std::string* why) {
  const mxplugin::OwnedAttrs attrs({dict.begin(), dict.end()}, "pool");
  return ReadPoolAttrs(attrs.view(), why);
}

TEST(ReadPoolAttrs, ReadsWhatOneDnnRuns) {
  std::string why;
  auto p = Read({{"kernel", "(3,2)"},
                 {"stride", "(2,1)"},
                 {"pool_type", "avg"},
                 {"count_include_pad", "False"},
                 {"pooling_convention", "full"}},
                &why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->algorithm, dnnl::algorithm::pooling_avg_exclude_padding);
  EXPECT_FALSE(p->global);
  EXPECT_TRUE(p->full);
  EXPECT_EQ(p->kernel, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(p->stride, (std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(p->pad.empty());
  p = Read({{"kernel", "(2,2)"}, {"pool_type", "avg"}}, &why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->algorithm, dnnl::algorithm::pooling_avg_include_padding);
  p = Read({{"global_pool", "True"}, {"kernel", "not a tuple"}}, &why);
  ASSERT_TRUE(p) << why;  // A global pooling reads no window.
  EXPECT_TRUE(p->global);
  EXPECT_EQ(p->algorithm, dnnl::algorithm::pooling_max);
}

TEST(ReadPoolAttrs, SaysWhyItDeclines) {
  const std::vector<std::pair<Dict, std::string>> cases = {
      {{{"kernel", "(2,2)"}, {"pool_type", "sum"}}, "pool_type sum"},
      {{{"kernel", "(2,2)"}, {"layout", "NHWC"}}, "layout NHWC"},
      {{{"kernel", "(2,2)"}, {"pooling_convention", "same"}},
       "pooling_convention same"},
      {{{"kernel", "(2,2)"}, {"count_include_pad", "maybe"}},
       "cannot read count_include_pad"},
      {{{"kernel", "(2,"}}, "cannot read kernel"},
      {{{"global_pool", "yes"}}, "cannot read global_pool"},
  };
  for (const auto& [dict, reason] : cases) {
    std::string why;
    EXPECT_FALSE(Read(dict, &why)) << reason;
    EXPECT_EQ(why, reason);
  }
}

TEST(ParsePoolStep, RegionStepsAreValidOrGlobalWithWindowsFilledIn) {
  auto step = [](const Dict& dict) {
    const mxplugin::OwnedAttrs attrs({dict.begin(), dict.end()}, "pool");
    return ParsePoolStep(attrs.view());
  };
  auto s = step({{"kernel", "(3,3)"}, {"pad", "(1,1)"}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->stride, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(s->pad, (std::vector<int64_t>{1, 1}));
  EXPECT_FALSE(step({{"kernel", "(3,3)"}, {"pooling_convention", "full"}}));
  EXPECT_TRUE(step({{"global_pool", "True"}, {"pooling_convention", "full"}}));
  EXPECT_TRUE(step({{"global_pool", "True"}, {"pooling_convention", "same"}}));
  EXPECT_FALSE(step({{"kernel", "(2,2)"}, {"pad", "(2,2)"}}));  // pad >= k
  EXPECT_FALSE(step({{"kernel", "(2,2)"}, {"stride", "(1,1,1)"}}));
  EXPECT_FALSE(step({}));  // No window.
}

}  // namespace
}  // namespace mx_onednn
