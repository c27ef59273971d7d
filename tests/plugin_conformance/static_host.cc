// A default cc_binary host (mxcore linked statically, no -rdynamic) that
// loads a plugin built like libtest_plugin.so and runs one of its ops and
// its kernel for the built-in op `negative`. Exit status 0 on success.
#include <dlfcn.h>

#include <iostream>
#include <vector>

#include "imperative/imperative.h"
#include "plugin/plugin.h"

namespace {

std::vector<float> Run(const std::string& op, const mx::AttrDict& attrs) {
  mx::NDArray x({3}, mx::Context::CPU(), mx::DType::kFloat32);
  const float v[3] = {1.5f, -2, 4};
  x.SyncCopyFromCPU(v, 3);
  return mx::imperative::Invoke(op, {x}, attrs)[0].ToVector<float>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: static_host <libtest_plugin.so>\n";
    return 2;
  }
  try {
    const mx::PluginInfo info = mx::LoadPlugin(argv[1]);
    void* handle = dlopen(info.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    auto calls = handle == nullptr
                     ? nullptr
                     : reinterpret_cast<int (*)()>(
                           dlsym(handle, "mx_test_plugin_negative_calls"));
    if (calls == nullptr) {
      std::cerr << "FAIL: mx_test_plugin_negative_calls not found\n";
      return 1;
    }
    if (Run("_test_plugin_scale", {{"scale", "2"}}) !=
        std::vector<float>{3, -4, 8}) {
      std::cerr << "FAIL: the plugin's op computed the wrong values\n";
      return 1;
    }
    const int before = calls();
    if (Run("negative", {}) != std::vector<float>{-1.5f, 2, -4} ||
        calls() != before + 1) {
      std::cerr << "FAIL: the plugin's kernel for negative did not run\n";
      return 1;
    }
    std::cout << "OK: " << info.name << " loaded into a static host\n";
  } catch (const std::exception& e) {
    std::cerr << "FAIL: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
