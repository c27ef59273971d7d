// LoadArrays on hostile files: sizes read from a file are checked for
// overflow and against the file's length before anything is allocated
// (issue 16, findings F16, F17).
#include "nn/params_file.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

template <typename T>
void Append(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// One float32 entry "w" with `dims`, a stated byte count and `data`.
std::string OneEntry(const std::vector<int64_t>& dims, uint64_t nbytes,
                     const std::string& data = "", int32_t dtype = 0) {
  std::string f = "MXNNPRM1";
  Append<uint64_t>(&f, 1);
  Append<uint32_t>(&f, 1);
  f += "w";
  Append<int32_t>(&f, dtype);  // 0: float32
  Append<uint32_t>(&f, static_cast<uint32_t>(dims.size()));
  for (int64_t d : dims) Append<int64_t>(&f, d);
  Append<uint64_t>(&f, nbytes);
  return f + data;
}

std::string Write(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(ParamsFile, WellFormedHandWrittenEntryLoads) {
  std::string data(8, '\0');
  const float values[2] = {1.5f, -2};
  std::memcpy(data.data(), values, 8);
  const auto arrays = LoadArrays(Write("hand.params", OneEntry({2}, 8, data)));
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(ToDouble(arrays[0].second), (std::vector<double>{1.5, -2}));
}

// Found by //fuzz:params_file_fuzzer: a bool entry holding byte 32 loaded,
// and reading it (sum) was undefined behaviour.
TEST(ParamsFile, BoolDataOtherThanZeroOrOneIsAnError) {
  const std::string ok = Write(
      "bool_ok.params", OneEntry({3}, 3, std::string("\x01\x00\x01", 3), 7));
  EXPECT_EQ(ToDouble(LoadArrays(ok)[0].second), (std::vector<double>{1, 0, 1}));
  const std::string path = Write(
      "bool_bad.params", OneEntry({3}, 3, std::string("\x01\x20\x00", 3), 7));
  const std::string msg = ErrorOf<InvalidArgument>([&] { LoadArrays(path); });
  EXPECT_TRUE(Contains(msg, path) && Contains(msg, "\"w\"") &&
              Contains(msg, "element 1") && Contains(msg, "byte 32"))
      << msg;
}

TEST(ParamsFile, HugeByteCountIsTruncatedNotAllocated) {
  // (2^38,) float32 promises 1 TiB in a 45-byte file.
  const std::string path =
      Write("huge.params", OneEntry({int64_t{1} << 38}, uint64_t{1} << 40));
  const std::string msg = ErrorOf<InvalidArgument>([&] { LoadArrays(path); });
  EXPECT_TRUE(Contains(msg, path) && Contains(msg, "truncated") &&
              Contains(msg, "\"w\""))
      << msg;
}

TEST(ParamsFile, ShapeWhoseByteCountOverflowsIsAnError) {
  // 2^32 x 2^32 elements wrap to 0 in uint64 arithmetic; so do 2^62 x 4 x 4
  // bytes.
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{int64_t{1} << 32, int64_t{1} << 32},
        std::vector<int64_t>{int64_t{1} << 62, 4}}) {
    const std::string path = Write("overflow.params", OneEntry(dims, 0));
    const std::string msg = ErrorOf<InvalidArgument>([&] { LoadArrays(path); });
    EXPECT_TRUE(Contains(msg, "does not fit in int64")) << msg;
  }
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
