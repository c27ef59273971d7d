#include "base/context.h"

namespace mx {

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
    default:
      name = "dev" + std::to_string(static_cast<int>(dev_type));
  }
  return name + "(" + std::to_string(dev_id) + ")";
}

std::ostream& operator<<(std::ostream& os, const Context& ctx) {
  return os << ctx.ToString();
}

}  // namespace mx
