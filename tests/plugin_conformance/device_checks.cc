// Devices: allocation, bit-exact copies, stream and event order (through
// the plugin's C functions), and allocation failure as a typed error.
#include <cmath>
#include <cstring>
#include <random>

#include "backends/plugin_api/mx_plugin.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "testing/op_test_util.h"
#include "tests/plugin_conformance/conformance.h"

namespace mx {
namespace conformance {
namespace {

const size_t kSizes[] = {0, 1, 7, 1023, 4097, (size_t{1} << 18) + 3};

MxStatus NewStatus() {
  MxStatus st;
  std::memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  return st;
}

std::vector<uint32_t> RandomBits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = rng();
  return v;
}

#define MX_OK(call) ASSERT_EQ((call), MX_STATUS_OK) << st.message

void CheckDevice(const std::string& name) {
  const Context dev0 = PluginDeviceContext(name, 0);
  const MxDeviceDef* d = PluginDeviceFunctions(dev0.dev_type);
  ASSERT_NE(d, nullptr);
  void* u = d->user_data;
  const int count = d->count(u);
  ASSERT_GE(count, 1);
  const Context dev_last = PluginDeviceContext(name, count - 1);
  MxStatus st = NewStatus();

  // NDArray copies host -> dev 0 -> last dev -> dev 0 -> host, bit-exact
  // (random bit patterns, NaN payloads included).
  for (size_t n : kSizes) {
    SCOPED_TRACE(name + ": " + std::to_string(n) + " elements");
    const std::vector<uint32_t> bits = RandomBits(n, static_cast<uint32_t>(n));
    NDArray host({static_cast<int64_t>(n)}, Context::CPU(), DType::kFloat32);
    host.SyncCopyFromCPU(bits.data(), n);
    NDArray back =
        host.Copy(dev0).Copy(dev_last).Copy(dev0).Copy(Context::CPU());
    std::vector<float> out = back.ToVector<float>();
    ASSERT_EQ(out.size(), n);
    EXPECT_EQ(n == 0 ? 0 : std::memcmp(out.data(), bits.data(), 4 * n), 0);
  }

  // The C functions directly: alloc, copies on a stream, free.
  void* s = nullptr;
  MX_OK(d->create_stream(u, 0, &s, &st));
  for (size_t n : kSizes) {
    SCOPED_TRACE(name + ": " + std::to_string(n) + " bytes, C functions");
    const std::vector<uint32_t> bits = RandomBits(n / 4 + 1, 3);
    std::vector<char> in(n), out(n, 0);
    if (n > 0) std::memcpy(in.data(), bits.data(), n);
    void *a = nullptr, *b = nullptr;
    MX_OK(d->alloc(u, 0, n, &a, &st));
    MX_OK(d->alloc(u, 0, n, &b, &st));
    MX_OK(d->copy(u, 0, a, in.data(), n, 0, s, &st));
    MX_OK(d->copy(u, 0, b, a, n, 2, s, &st));
    MX_OK(d->copy(u, 0, out.data(), b, n, 1, s, &st));
    MX_OK(d->synchronize(u, 0, s, &st));
    EXPECT_EQ(out, in);
    MX_OK(d->free(u, 0, a, n, &st));
    MX_OK(d->free(u, 0, b, n, &st));
  }

  // Streams and events: s1 writes A and records; s2 waits, then writes B
  // and reads back. The last write wins whatever the timing.
  void *s2 = nullptr, *ev = nullptr, *buf = nullptr;
  MX_OK(d->create_stream(u, 0, &s2, &st));
  MX_OK(d->create_event(u, 0, &ev, &st));
  const size_t n = size_t{1} << 20;
  MX_OK(d->alloc(u, 0, n, &buf, &st));
  for (int round = 0; round < 5; ++round) {
    std::vector<char> a(n, static_cast<char>(1 + round)), b(n, 'b'), out(n, 0);
    MX_OK(d->copy(u, 0, buf, a.data(), n, 0, s, &st));
    MX_OK(d->record_event(u, 0, ev, s, &st));
    MX_OK(d->wait_event(u, 0, ev, s2, &st));
    MX_OK(d->copy(u, 0, buf, b.data(), n, 0, s2, &st));
    MX_OK(d->copy(u, 0, out.data(), buf, n, 1, s2, &st));
    MX_OK(d->synchronize(u, 0, s2, &st));
    int32_t done = 0;
    MX_OK(d->query_event(u, 0, ev, &done, &st));
    EXPECT_EQ(done, 1);
    EXPECT_TRUE(out == b) << "round " << round << ": the earlier write won";
  }
  if (MX_HAS_FIELD(d, MxDeviceDef, memset) && d->memset != nullptr) {
    std::vector<char> out(n, 0);
    MX_OK(d->memset(u, 0, buf, 7, n, s, &st));
    MX_OK(d->copy(u, 0, out.data(), buf, n, 1, s, &st));
    MX_OK(d->synchronize(u, 0, s, &st));
    EXPECT_EQ(out, std::vector<char>(n, 7));
  }
  MX_OK(d->free(u, 0, buf, n, &st));
  MX_OK(d->destroy_event(u, 0, ev, &st));
  MX_OK(d->destroy_stream(u, 0, s, &st));
  MX_OK(d->destroy_stream(u, 0, s2, &st));

  // An allocation the device cannot satisfy is an mx::Error; the process
  // stays usable.
  try {
    NDArray huge({int64_t{1} << 48}, dev0, DType::kFloat32,
                 /*delay_alloc=*/false);
    huge.WaitToRead();
    ADD_FAILURE() << name << ": allocating 2^50 bytes succeeded";
  } catch (const Error& e) {
    EXPECT_TRUE(testing::Contains(e.what(), dev0.ToString())) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << name
                  << ": allocation failure is not an mx::Error: " << e.what();
  }
  EXPECT_EQ(
      testing::ToDouble(
          testing::ArrayOf({3}, {1, 2, 3}).Copy(dev0).Copy(Context::CPU())),
      (std::vector<double>{1, 2, 3}));
}

TEST(Devices, MemoryCopiesStreamsEventsAndErrors) {
  for (const std::string& name : Plugin().devices) {
    SCOPED_TRACE("device " + name);
    if (!DeviceHasUnits(PluginDeviceContext(name, 0).dev_type)) continue;
    CheckDevice(name);
    ++Counts().devices;
  }
}

}  // namespace
}  // namespace conformance
}  // namespace mx
