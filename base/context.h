// Device context: where an array lives and where an operation runs.
//
// A Context is a device type plus a device id. CPU is always present; other
// device types come from device plugins, which register a type id above
// kFirstPluginDevice.
//
//   mx::Context c = mx::Context::CPU();     // cpu(0)
//   mx::Context g = mx::Context::GPU(1);    // gpu(1)
//   std::cout << g;                         // prints "gpu(1)"
#ifndef MXCORE_BASE_CONTEXT_H_
#define MXCORE_BASE_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace mx {

struct Context {
  enum DeviceType : int32_t {
    kCPU = 1,
    kGPU = 2,
    kCPUPinned = 3,
    // Device plugins register their own types from here on.
    kFirstPluginDevice = 16,
  };

  DeviceType dev_type = kCPU;
  int32_t dev_id = 0;

  static Context CPU(int32_t id = 0) { return {kCPU, id}; }
  static Context GPU(int32_t id = 0) { return {kGPU, id}; }
  static Context CPUPinned(int32_t id = 0) { return {kCPUPinned, id}; }

  // True for contexts whose memory the host can address directly.
  bool is_host() const { return dev_type == kCPU || dev_type == kCPUPinned; }

  // "cpu(0)", "gpu(1)", "cpu_pinned(0)"; a plugin device by its registered
  // name ("mydev(0)"), else "dev16(0)".
  std::string ToString() const;

  // Names a plugin device type (used by ToString and FromName).
  static void SetDeviceTypeName(int dev_type, const std::string& name);
  static void ClearDeviceTypeName(int dev_type);
  // The device type called `name` ("cpu", "gpu", "cpu_pinned" or a plugin
  // device); -1 when unknown.
  static int DeviceTypeFromName(const std::string& name);

  friend bool operator==(const Context& a, const Context& b) {
    return a.dev_type == b.dev_type && a.dev_id == b.dev_id;
  }
  friend bool operator!=(const Context& a, const Context& b) {
    return !(a == b);
  }
  friend bool operator<(const Context& a, const Context& b) {
    return a.dev_type != b.dev_type ? a.dev_type < b.dev_type
                                    : a.dev_id < b.dev_id;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Context& c) {
    return H::combine(std::move(h), static_cast<int32_t>(c.dev_type), c.dev_id);
  }
};

std::ostream& operator<<(std::ostream& os, const Context& ctx);

}  // namespace mx

template <>
struct std::hash<mx::Context> {
  size_t operator()(const mx::Context& c) const {
    return (static_cast<size_t>(c.dev_type) << 32) ^
           static_cast<uint32_t>(c.dev_id);
  }
};

#endif  // MXCORE_BASE_CONTEXT_H_
