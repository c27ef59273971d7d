// Fuzz target: Symbol::FromJSON on raw bytes, then ToJSON round trip,
// listings and InferShape/InferType (fuzz/symbol_checks.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "fuzz/symbol_checks.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mx::fuzz::InitEnvironment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mx::fuzz::CheckSymbolJSON(
      std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
