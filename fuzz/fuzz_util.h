// Helpers shared by the libFuzzer targets in //fuzz.
//
// Every target defines LLVMFuzzerTestOneInput and runs its body inside
// MX_FUZZ_BODY: an mx::Error (any subclass) is the expected answer to bad
// input; any other exception escaping is a finding and aborts with its type
// and message, so libFuzzer (or the replay test) reports the input.
#ifndef MXCORE_FUZZ_FUZZ_UTIL_H_
#define MXCORE_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <typeinfo>

#include "base/error.h"

namespace mx {
namespace fuzz {

[[noreturn]] inline void Finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "\n*** mxcore fuzz finding: %s: %s\n", what,
               detail.c_str());
  std::fflush(stderr);
  std::abort();
}

// MX_FUZZ_VERBOSE=1 prints every mx::Error the targets swallow (to check
// what a seed reaches).
inline bool Verbose() {
  static const bool verbose = getenv("MX_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

// Runs `body`; mx::Error is fine, anything else is a finding.
template <typename F>
void Guard(F&& body) {
  try {
    body();
  } catch (const mx::Error& e) {
    if (Verbose()) std::fprintf(stderr, "  mx::Error: %s\n", e.what());
  } catch (const std::exception& e) {
    Finding("untyped exception escaped",
            std::string(typeid(e).name()) + ": " + e.what());
  } catch (...) {
    Finding("non-std exception escaped", "(unknown type)");
  }
}

// Reads typed values from the fuzzer's bytes; past the end everything is 0.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t remaining() const { return size_ - pos_; }
  bool empty() const { return pos_ >= size_; }
  uint8_t U8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t U16() { return static_cast<uint16_t>(U8() | (U8() << 8)); }
  uint32_t U32() { return U16() | (static_cast<uint32_t>(U16()) << 16); }
  // An integer in [lo, hi] (inclusive); REQUIRES lo <= hi, hi - lo < 2^16.
  int Range(int lo, int hi) { return lo + U16() % (hi - lo + 1); }
  bool Bool() { return U8() & 1; }
  // A string of at most `max_len` bytes: a length byte, then the bytes.
  std::string String(size_t max_len) {
    size_t n = U8() % (max_len + 1);
    n = std::min(n, remaining());
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  // Up to `n` raw bytes.
  std::string Bytes(size_t n) {
    n = std::min(n, remaining());
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::string Rest() { return Bytes(remaining()); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Makes the engine synchronous and quiet so findings have short stacks.
// Call from LLVMFuzzerInitialize (before anything touches the engine).
inline void InitEnvironment() {
  setenv("MX_ENGINE_TYPE", "NaiveEngine", /*overwrite=*/0);
}

}  // namespace fuzz
}  // namespace mx

#endif  // MXCORE_FUZZ_FUZZ_UTIL_H_
