// Fuzz target: nn::LoadArrays on a params file made of the raw bytes, in
// any format it detects (mxcore's, MXNet's NDArray list, MXNet 2's .npz
// and .npy).
// An mxcore file that loads must be canonical: saving the arrays again
// gives the same bytes (the format has one encoding per content and
// refuses trailing bytes). MXNet's format has several encodings (V1-V3,
// pre-V1), and so do .npz and .npy (compression, ZIP64, Fortran order):
// what loads must save, load back to the same arrays, and save to the same
// bytes again. Loaded arrays are also read (sum over the first
// axis) to catch shapes that do not match their storage.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz/fuzz_util.h"
#include "imperative/imperative.h"
#include "nn/mxnet_params_file.h"
#include "nn/npz_file.h"
#include "nn/params_file.h"

namespace {

std::string TempPath(const char* what) {
  const char* dir = getenv("TEST_TMPDIR");
  if (dir == nullptr) dir = getenv("TMPDIR");
  if (dir == nullptr) dir = "/tmp";
  return std::string(dir) + "/mxfuzz_" + what + "_" + std::to_string(getpid()) +
         ".params";
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) mx::fuzz::Finding("cannot write", path);
  if (size > 0) fwrite(data, 1, size, f);
  fclose(f);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool SameBytes(const mx::NDArray& a, const mx::NDArray& b) {
  if (a.is_none() || b.is_none()) return a.is_none() == b.is_none();
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const size_t n = static_cast<size_t>(a.size()) * mx::DTypeSize(a.dtype());
  if (n == 0) return true;
  std::string x(n, '\0'), y(n, '\0');
  a.SyncCopyToCPU(x.data(), static_cast<size_t>(a.size()));
  b.SyncCopyToCPU(y.data(), static_cast<size_t>(b.size()));
  return x == y;
}

// MXNet files: save, reload, compare; the writer's output is its own
// fixed point.
void CheckMXNetRoundTrip(const mx::nn::NamedArrays& arrays,
                         const std::string& out_path) {
  mx::nn::SaveMXNetArrays(out_path, arrays);
  const std::string first = ReadFile(out_path);
  const mx::nn::NamedArrays again = mx::nn::LoadMXNetArrays(out_path);
  if (again.size() != arrays.size()) {
    mx::fuzz::Finding("MXNet params round trip changed the array count",
                      std::to_string(arrays.size()));
  }
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (again[i].first != arrays[i].first ||
        !SameBytes(again[i].second, arrays[i].second)) {
      mx::fuzz::Finding("MXNet params round trip differs",
                        "array " + std::to_string(i));
    }
  }
  mx::nn::SaveMXNetArrays(out_path, again);
  if (ReadFile(out_path) != first) {
    mx::fuzz::Finding("MXNet params writer is not a fixed point",
                      std::to_string(arrays.size()) + " arrays");
  }
}

// .npz and .npy files: as MXNet's, through mxcore's writer (a bare .npy
// holds one unnamed array).
void CheckNumpyRoundTrip(const mx::nn::NamedArrays& arrays, bool npy,
                         const std::string& out_path) {
  mx::nn::NamedArrays again;
  if (npy) {
    mx::nn::SaveNpyArray(out_path, arrays.at(0).second);
    again = {{"", mx::nn::LoadNpyArray(out_path)}};
  } else {
    mx::nn::SaveNpzArrays(out_path, arrays);
    again = mx::nn::LoadNpzArrays(out_path);
  }
  const std::string first = ReadFile(out_path);
  if (again.size() != arrays.size()) {
    mx::fuzz::Finding("npz round trip changed the array count",
                      std::to_string(arrays.size()));
  }
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (again[i].first != arrays[i].first ||
        !SameBytes(again[i].second, arrays[i].second)) {
      mx::fuzz::Finding("npz round trip differs", "array " + std::to_string(i));
    }
  }
  if (npy) {
    mx::nn::SaveNpyArray(out_path, again[0].second);
  } else {
    mx::nn::SaveNpzArrays(out_path, again);
  }
  if (ReadFile(out_path) != first) {
    mx::fuzz::Finding("npz writer is not a fixed point",
                      std::to_string(arrays.size()) + " arrays");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mx::fuzz::InitEnvironment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string in_path = TempPath("in");
  static const std::string out_path = TempPath("out");
  WriteFile(in_path, data, size);
  mx::fuzz::Guard([&] {
    mx::nn::NamedArrays arrays = mx::nn::LoadArrays(in_path);
    for (const auto& entry : arrays) {
      const mx::NDArray& a = entry.second;
      mx::fuzz::Guard([&] {
        if (!a.is_none() && a.shape().ndim() > 0 && a.shape().Size() > 0) {
          mx::imperative::Invoke("sum", {a}, {{"axis", "0"}})[0].WaitToRead();
        }
      });
    }
    // It loaded, so it is at least 8 bytes long.
    if (std::memcmp(data, "PK", 2) == 0 ||
        std::memcmp(data, "\x93NUMPY", 6) == 0) {
      CheckNumpyRoundTrip(arrays, data[0] != 'P', out_path);
      return;
    }
    if (std::memcmp(data, "MXNNPRM1", 8) != 0) {  // MXNet's NDArray list
      CheckMXNetRoundTrip(arrays, out_path);
      return;
    }
    mx::nn::SaveArrays(out_path, arrays);
    if (ReadFile(out_path) !=
        std::string(reinterpret_cast<const char*>(data), size)) {
      mx::fuzz::Finding("params file round trip differs",
                        std::to_string(arrays.size()) + " arrays");
    }
  });
  return 0;
}
