// Memory retained by recording (run on the NaiveEngine, see BUILD, so
// that the figure measures what autograd keeps alive, not how many
// asynchronous ops are in flight).
#include <cmath>
#include <iostream>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace autograd {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

size_t BytesInUse() {
  return Storage::Get()->GetStats(Context::CPU()).bytes_in_use;
}

// A chain of 100 ops on a 4 MB array: recording keeps only what the
// gradients read, so peak memory stays a few arrays, not 100.
TEST(Autograd, LongChainKeepsMemoryBounded) {
  const int64_t n = 1 << 20;  // float32: 4 MiB
  const size_t bytes = n * 4;
  NDArray x = RandomArray({n});
  AttachGrad(&x);
  engine::Engine::Get()->WaitForAll();
  Storage::Get()->ResetPeak(Context::CPU());
  const size_t base = BytesInUse();
  NDArray y = x;
  {
    RecordScope record;
    for (int i = 0; i < 100; ++i) {
      y = i % 2 == 0 ? y * 1.01 : y + 0.5;
    }
  }
  Backward({y});
  x.grad().WaitToRead();
  const size_t peak =
      Storage::Get()->GetStats(Context::CPU()).peak_bytes_in_use - base;
  std::cout << "peak over 100 recorded ops + backward: "
            << static_cast<double>(peak) / bytes << " arrays of 4 MiB\n";
  EXPECT_LE(peak, 4 * bytes);
  EXPECT_TRUE(AllClose(ToDouble(x.grad()),
                       std::vector<double>(n, std::pow(1.01, 50)), 1e-4));
}

// Ops whose gradients read their outputs (tanh) keep exactly those.
TEST(AutogradMemory, SavedValuesAreWhatGradientsRead) {
  const int64_t n = 1 << 18;  // float32: 1 MiB
  const size_t bytes = n * 4;
  NDArray x = RandomArray({n});
  AttachGrad(&x);
  const size_t base = BytesInUse();
  NDArray y = x;
  {
    RecordScope record;
    for (int i = 0; i < 10; ++i) y = nd::tanh(y);
  }
  // Ten tanh outputs (the last one is y itself).
  EXPECT_EQ(BytesInUse() - base, 10 * bytes);
  Backward({y});
  y = NDArray();
  // Backward released them; the gradient buffer remains.
  EXPECT_EQ(BytesInUse() - base, 0u);
}

}  // namespace
}  // namespace autograd
}  // namespace mx
