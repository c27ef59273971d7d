// A statically linked host (a default cc_binary) that loads a plugin and
// checks that the plugin sees the host's registries. Exit status 0 on
// success; prints what went wrong otherwise.
#include <dlfcn.h>

#include <iostream>

#include "imperative/imperative.h"
#include "subgraph/plugin.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: plugin_host <plugin.so>\n";
    return 2;
  }
  try {
    const mx::PluginInfo info = mx::LoadPlugin(argv[1]);
    void* handle = dlopen(info.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    auto fn = reinterpret_cast<void (*)(const void**, const void**)>(
        dlsym(handle, "mx_test_plugin_registries"));
    const void *ops = nullptr, *backends = nullptr;
    fn(&ops, &backends);
    if (ops != mx::OpRegistry::Get() ||
        backends != mx::SubgraphBackendRegistry::Get()) {
      std::cerr << "FAIL: the plugin has registries of its own\n";
      return 1;
    }
    mx::NDArray x({2}, mx::Context::CPU(), mx::DType::kFloat32);
    const float v[2] = {1.5f, -2};
    x.SyncCopyFromCPU(v, 2);
    const std::vector<float> y =
        mx::imperative::Invoke("_test_plugin_double", {x})[0].ToVector<float>();
    if (y != std::vector<float>{3, -4}) {
      std::cerr << "FAIL: plugin op computed the wrong values\n";
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "FAIL: " << e.what() << "\n";
    return 1;
  }
  std::cout << "OK: one registry shared by host and plugin\n";
  return 0;
}
