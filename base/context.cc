#include "base/context.h"

#include <map>
#include <mutex>

namespace mx {
namespace {

std::mutex& NamesMu() {
  static auto* mu = new std::mutex();
  return *mu;
}

std::map<int, std::string>& Names() {
  static auto* names = new std::map<int, std::string>();
  return *names;
}

}  // namespace

void Context::SetDeviceTypeName(int dev_type, const std::string& name) {
  std::lock_guard<std::mutex> lock(NamesMu());
  Names()[dev_type] = name;
}

void Context::ClearDeviceTypeName(int dev_type) {
  std::lock_guard<std::mutex> lock(NamesMu());
  Names().erase(dev_type);
}

int Context::DeviceTypeFromName(const std::string& name) {
  if (name == "cpu") return kCPU;
  if (name == "gpu") return kGPU;
  if (name == "cpu_pinned") return kCPUPinned;
  std::lock_guard<std::mutex> lock(NamesMu());
  for (const auto& [type, n] : Names()) {
    if (n == name) return type;
  }
  return -1;
}

std::string Context::ToString() const {
  std::string name;
  switch (dev_type) {
    case kCPU:
      name = "cpu";
      break;
    case kGPU:
      name = "gpu";
      break;
    case kCPUPinned:
      name = "cpu_pinned";
      break;
    default: {
      std::lock_guard<std::mutex> lock(NamesMu());
      auto it = Names().find(dev_type);
      name = it != Names().end()
                 ? it->second
                 : "dev" + std::to_string(static_cast<int>(dev_type));
    }
  }
  return name + "(" + std::to_string(dev_id) + ")";
}

std::ostream& operator<<(std::ostream& os, const Context& ctx) {
  return os << ctx.ToString();
}

}  // namespace mx
