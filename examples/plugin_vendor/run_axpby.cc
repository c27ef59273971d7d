// Runs the vendor's op from a program linked with the installed
// libmxcore.so; the plugin comes from MX_PLUGINS (loaded before the first
// op runs).
#include <cstdio>
#include <vector>

#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "plugin/plugin.h"

int main() {
  using namespace mx;  // NOLINT: an example
  const NDArray a = nd::arange(0, 4), b = nd::ones({4});
  const std::vector<float> y =
      imperative::Invoke("vendor_axpby", {a, b}, {{"alpha", "2"}, {"beta", "-1"}})[0]
          .ToVector<float>();
  const std::vector<float> want = {-1, 1, 3, 5};
  std::printf("vendor_axpby: %g %g %g %g\n", y[0], y[1], y[2], y[3]);
  if (y != want) {
    std::printf("FAILED: want -1 1 3 5\n");
    return 1;
  }
  for (const auto& p : ListPlugins()) std::printf("plugin loaded: %s\n", p.name.c_str());
  std::printf("OK\n");
  return 0;
}
