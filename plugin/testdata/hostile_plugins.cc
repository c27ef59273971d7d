// Plugins that must fail to load, each with a typed error and nothing left
// registered. One source, one variant per HOSTILE_* macro (see BUILD). Each
// first registers op "_hostile_first" so that rollback is observable.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace {

[[maybe_unused]] void RegisterFirst(mxplugin::Plugin& p) {
  p.RegisterOp(mxplugin::OpDef("_hostile_first")
                   .Inputs({"data"})
                   .InferShape(mxplugin::SameShape));
}

}  // namespace

#if defined(HOSTILE_THROW_INT)
// Throws a non-std::exception through the C++ layer.
MX_PLUGIN("throw_int", [](mxplugin::Plugin& p) {
  RegisterFirst(p);
  throw 42;
})
#elif defined(HOSTILE_THROW_STD)
MX_PLUGIN("throw_std", [](mxplugin::Plugin& p) {
  RegisterFirst(p);
  throw std::logic_error("registration blew up on purpose");
})
#elif defined(HOSTILE_ESCAPE)
// Lets an exception cross the C boundary (no C++ layer).
extern "C" __attribute__((visibility("default"))) MxStatusCode mx_plugin_init(
    const MxHostApi* host, MxPluginDesc* desc, MxStatus*) {
  desc->name = "escape";
  desc->abi_major = MX_PLUGIN_ABI_MAJOR;
  mxplugin::Plugin p(host);
  RegisterFirst(p);
  throw 7;
}
#elif defined(HOSTILE_CLASH)
// The second op name is taken by a built-in op.
MX_PLUGIN("clash", [](mxplugin::Plugin& p) {
  RegisterFirst(p);
  p.RegisterOp(
      mxplugin::OpDef("sin").Inputs({"data"}).InferShape(mxplugin::SameShape));
})
#elif defined(HOSTILE_CLASH_DEVICE)
// A device name another plugin (testdev) registered.
class Dev : public mxplugin::Device {
 public:
  std::string name() const override { return "testdev"; }
  int Count() override { return 1; }
  void* Alloc(int, size_t) override { return nullptr; }
  void Free(int, void*, size_t) override {}
  void* CreateStream(int) override { return nullptr; }
  void DestroyStream(int, void*) override {}
  void Synchronize(int, void*) override {}
  void* CreateEvent(int) override { return nullptr; }
  void DestroyEvent(int, void*) override {}
  void RecordEvent(int, void*, void*) override {}
  void WaitEvent(int, void*, void*) override {}
  bool QueryEvent(int, void*) override { return true; }
  void Copy(int, void*, const void*, size_t, int, void*) override {}
  void Memset(int, void*, int, size_t, void*) override {}
};
MX_PLUGIN("clash_device", [](mxplugin::Plugin& p) {
  RegisterFirst(p);
  p.RegisterDevice(std::make_shared<Dev>());
})
#elif defined(HOSTILE_NULL_NAME)
extern "C" __attribute__((visibility("default"))) MxStatusCode mx_plugin_init(
    const MxHostApi* host, MxPluginDesc* desc, MxStatus*) {
  desc->name = nullptr;
  desc->abi_major = MX_PLUGIN_ABI_MAJOR;
  mxplugin::Plugin p(host);
  RegisterFirst(p);
  return MX_STATUS_OK;
}
#elif defined(HOSTILE_BAD_CODE)
extern "C" __attribute__((visibility("default"))) MxStatusCode mx_plugin_init(
    const MxHostApi* host, MxPluginDesc* desc, MxStatus*) {
  desc->name = "bad_code";
  desc->abi_major = MX_PLUGIN_ABI_MAJOR;
  mxplugin::Plugin p(host);
  RegisterFirst(p);
  return static_cast<MxStatusCode>(77);
}
#elif defined(HOSTILE_NEWER_MAJOR)
// Built for ABI 2.x: the host must refuse it, naming both versions.
extern "C" __attribute__((visibility("default"))) MxStatusCode mx_plugin_init(
    const MxHostApi* host, MxPluginDesc* desc, MxStatus*) {
  desc->name = "newer_major";
  desc->abi_major = 2;
  desc->abi_minor = 3;
  if (host->abi_major != 2) return MX_STATUS_ABI_MISMATCH;
  return MX_STATUS_OK;
}
#elif defined(HOSTILE_SMALL_STRUCT)
// An MxOpDef smaller than ABI 1.0's.
extern "C" __attribute__((visibility("default"))) MxStatusCode mx_plugin_init(
    const MxHostApi* host, MxPluginDesc* desc, MxStatus* status) {
  desc->name = "small_struct";
  desc->abi_major = MX_PLUGIN_ABI_MAJOR;
  mxplugin::Plugin p(host);
  RegisterFirst(p);
  MxOpDef def;
  std::memset(&def, 0, sizeof(def));
  def.struct_size = 16;
  def.name = "_small_struct_op";
  return host->register_op(host->registrar, &def, status);
}
#elif defined(HOSTILE_DATA_SYMBOL)
// A data symbol with the entry point's name.
extern "C" __attribute__((visibility("default"))) int mx_plugin_init = 5;
#elif defined(HOSTILE_NOT_A_PLUGIN)
// A shared library without an entry point.
extern "C" __attribute__((visibility("default"))) int not_a_plugin() {
  return 1;
}
#elif defined(HOSTILE_RUNTIME_THEN_FAIL)
// Offers a thread runtime, then fails: the host must never run loops on it.
MX_PLUGIN("runtime_then_fail", [](mxplugin::Plugin& p) {
  RegisterFirst(p);
  p.OfferThreadRuntime([](void*, int64_t, MxParallelBody, void*) {
    std::fprintf(stderr, "a failed plugin's thread runtime ran\n");
    std::abort();
  });
  throw std::runtime_error("failed after offering a thread runtime");
})
#else
#error "define one HOSTILE_* variant"
#endif
