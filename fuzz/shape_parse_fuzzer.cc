// Fuzz target: TShape::Parse on raw text. A parsed shape must print and
// parse back to itself, and Size() answers or raises ShapeError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "ndarray/shape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mx::fuzz::Guard([&] {
    mx::TShape s = mx::TShape::Parse(text);
    mx::fuzz::Guard([&] { s.Size(); });
    const std::string printed = s.ToString();
    mx::TShape again;
    try {
      again = mx::TShape::Parse(printed);
    } catch (const mx::Error& e) {
      mx::fuzz::Finding("ToString output does not parse",
                        printed + ": " + e.what());
    }
    if (again != s) {
      mx::fuzz::Finding("Parse(ToString(s)) != s", printed);
    }
  });
  return 0;
}
