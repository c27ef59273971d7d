#include "ndarray/ndarray.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "engine/engine.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

TEST(TShape, KnownUnknownAndSize) {
  EXPECT_FALSE(TShape().ndim_known());
  EXPECT_EQ(TShape().ToString(), "<unknown>");
  EXPECT_EQ(TShape({2, 3}).Size(), 6);
  EXPECT_EQ(TShape({2, -1}).Size(), -1);
  EXPECT_FALSE(TShape({2, -1}).is_known());
  EXPECT_EQ(TShape::Scalar().Size(), 1);
  EXPECT_EQ(TShape::Scalar().ToString(), "()");
  EXPECT_EQ(TShape({4}).ToString(), "(4,)");
  EXPECT_EQ(TShape({0, 3}).Size(), 0);
}

TEST(TShape, ParseRoundTrip) {
  EXPECT_EQ(TShape::Parse("(2,3)"), TShape({2, 3}));
  EXPECT_EQ(TShape::Parse("[2, 3]"), TShape({2, 3}));
  EXPECT_EQ(TShape::Parse("(4,)"), TShape({4}));
  EXPECT_EQ(TShape::Parse("()"), TShape::Scalar());
  EXPECT_EQ(TShape::Parse("7"), TShape({7}));
  EXPECT_EQ(TShape::Parse(TShape({1, -1, 5}).ToString()), TShape({1, -1, 5}));
  EXPECT_THROW(TShape::Parse("(2,x)"), InvalidArgument);
  EXPECT_THROW(TShape::Parse("(2,3"), InvalidArgument);
}

TEST(TShape, MergeFillsUnknownsAndDetectsContradictions) {
  TShape a{-1, 3};
  EXPECT_TRUE(MergeShape(&a, TShape({2, -1})));
  EXPECT_EQ(a, TShape({2, 3}));
  EXPECT_FALSE(MergeShape(&a, TShape({2, 4})));
  EXPECT_FALSE(MergeShape(&a, TShape({2, 3, 1})));
  TShape u;
  EXPECT_TRUE(MergeShape(&u, TShape({5})));
  EXPECT_EQ(u, TShape({5}));
}

TEST(TShape, CheckAxisWrapsNegatives) {
  TShape s{2, 3, 4};
  EXPECT_EQ(s.CheckAxis(-1, "test"), 2);
  EXPECT_THROW(s.CheckAxis(3, "test"), ShapeError);
}

TEST(DType, NamesSizesAndParsing) {
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kInt64), 8u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_EQ(ParseDType("int8"), DType::kInt8);
  EXPECT_EQ(ParseDType("0"), DType::kFloat32);
  EXPECT_STREQ(DTypeName(DType::kUInt8), "uint8");
  EXPECT_THROW(ParseDType("complex64"), DTypeError);
}

TEST(DType, Float16RoundTripsExactlyRepresentableValues) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, std::ldexp(1.0f, -14),
                  std::ldexp(1.0f, -24), std::ldexp(3.0f, -20)}) {
    EXPECT_FLOAT_EQ(static_cast<float>(float16(f)), f) << f;
  }
  EXPECT_EQ(float16(0.1f).bits, 0x2E66);  // Nearest half to 0.1.
  EXPECT_TRUE(std::isinf(static_cast<float>(float16(1e6f))));
  EXPECT_TRUE(std::isnan(
      static_cast<float>(float16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Storage, PoolReusesFreedBlocksAndTracksPeak) {
  Storage* s = Storage::Get();
  const Context ctx = Context::CPU(3);  // A context no other test uses.
  StorageHandle a = s->Alloc(1000, ctx);
  StorageHandle b = s->Alloc(5000, ctx);
  Storage::Stats stats = s->GetStats(ctx);
  EXPECT_EQ(stats.bytes_in_use,
            Storage::RoundedSize(1000) + Storage::RoundedSize(5000));
  EXPECT_EQ(stats.num_device_allocs, 2);
  void* first = a.dptr;
  s->Free(a);
  StorageHandle c = s->Alloc(900, ctx);  // Same size class as 1000.
  EXPECT_EQ(c.dptr, first);
  stats = s->GetStats(ctx);
  EXPECT_EQ(stats.num_reuses, 1);
  EXPECT_EQ(stats.peak_bytes_in_use,
            Storage::RoundedSize(1000) + Storage::RoundedSize(5000));
  s->Free(b);
  s->Free(c);
  EXPECT_EQ(s->GetStats(ctx).bytes_in_use, 0u);
  EXPECT_GT(s->GetStats(ctx).bytes_pooled, 0u);
  s->ReleasePooled(ctx);
  EXPECT_EQ(s->GetStats(ctx).bytes_pooled, 0u);
  EXPECT_EQ(s->Alloc(0, ctx).dptr, nullptr);
}

TEST(Storage, UnknownDeviceIsNotFound) {
  EXPECT_THROW(Storage::Get()->Alloc(16, Context::GPU(0)), NotFound);
  EXPECT_FALSE(Storage::Get()->HasDevice(Context::kGPU));
}

TEST(Storage, HostAllocatorIsBuiltIn) {
  EXPECT_TRUE(Storage::Get()->HasDevice(Context::kCPU));
  EXPECT_TRUE(Storage::Get()->HasDevice(Context::kCPUPinned));
  EXPECT_THROW(Storage::Get()->UnregisterDevice(Context::kCPU),
               InvalidArgument);
  EXPECT_TRUE(Storage::Get()->HasDevice(Context::kCPU));
}

TEST(Storage, ReuseCountsAndPeakOnEveryPath) {
  // Arrays of earlier tests may still be freed by the engine: wait.
  engine::Engine::Get()->WaitForAll();
  Storage* s = Storage::Get();
  const Context ctx = Context::CPU();
  s->ReleasePooled(ctx);
  const Storage::Stats start = s->GetStats(ctx);
  s->ResetPeak(ctx);
  StorageHandle a = s->Alloc(1000, ctx);  // From the device.
  s->Free(a);
  StorageHandle b = s->Alloc(1000, ctx);  // Reused, one lock.
  Storage::Stats stats = s->GetStats(ctx);
  EXPECT_EQ(stats.num_device_allocs, start.num_device_allocs + 1);
  EXPECT_EQ(stats.num_reuses, start.num_reuses + 1);
  EXPECT_EQ(stats.bytes_in_use, start.bytes_in_use + 1024);
  EXPECT_EQ(stats.peak_bytes_in_use, start.bytes_in_use + 1024);
  EXPECT_EQ(b.dptr, a.dptr);
  s->Free(b);
  EXPECT_EQ(s->GetStats(ctx).bytes_in_use, start.bytes_in_use);
}

TEST(NDArray, FromVectorToVector) {
  NDArray a = NDArray::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(a.shape(), TShape({2, 3}));
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_EQ(a.ctx(), Context::CPU());
  EXPECT_EQ(a.ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(a.version(), 1u);
  EXPECT_THROW(a.ToVector<double>(), DTypeError);
}

TEST(NDArray, ViewsShareMemory) {
  NDArray a = NDArray::FromVector<int32_t>({3, 2}, {0, 1, 2, 3, 4, 5});
  NDArray row = a.At(1);
  EXPECT_EQ(row.shape(), TShape({2}));
  EXPECT_EQ(row.ToVector<int32_t>(), (std::vector<int32_t>{2, 3}));
  NDArray rows = a.Slice(1, 3);
  EXPECT_EQ(rows.shape(), TShape({2, 2}));
  rows.SyncCopyFromCPU(std::vector<int32_t>{9, 9, 8, 8}.data(), 4);
  EXPECT_EQ(a.ToVector<int32_t>(), (std::vector<int32_t>{0, 1, 9, 9, 8, 8}));
  NDArray flat = a.Reshape({-1});
  EXPECT_EQ(flat.shape(), TShape({6}));
  EXPECT_TRUE(flat.SharesChunkWith(a));
  EXPECT_EQ(a.At(2).At(1).shape(), TShape::Scalar());
  EXPECT_EQ(a.At(2).At(1).ToVector<int32_t>(), (std::vector<int32_t>{8}));
}

// The view applies MXNet's codes as the Reshape op does (shared
// implementation, ndarray/reshape.h) and stays a view of the same memory.
TEST(NDArray, ReshapeViewAcceptsMxnetSpecialCodes) {
  std::vector<int32_t> values(24);
  for (int i = 0; i < 24; ++i) values[i] = i;
  NDArray a = NDArray::FromVector<int32_t>({2, 3, 4}, values);
  const std::vector<std::tuple<TShape, bool, TShape>> cases = {
      {{0, -1}, false, {2, 12}},      {{0, -1}, true, {3, 8}},
      {{-3, 0}, false, {6, 4}},       {{-4, 1, 2, -2}, false, {1, 2, 3, 4}},
      {{-2, 1}, false, {2, 3, 4, 1}}, {{-1, 0}, true, {6, 4}},
      {{4, 0, 2}, false, {4, 3, 2}},
  };
  for (const auto& [codes, reverse, expected] : cases) {
    NDArray v = a.Reshape(codes, reverse);
    EXPECT_EQ(v.shape(), expected) << codes << " reverse " << reverse;
    EXPECT_TRUE(v.SharesChunkWith(a));
    EXPECT_EQ(v.ToVector<int32_t>(), values);
  }
  // Of a slice: the view keeps the slice's offset.
  EXPECT_EQ(a.At(1).Reshape({-3}).ToVector<int32_t>(),
            std::vector<int32_t>(values.begin() + 12, values.end()));
  try {
    a.Reshape({-4, 4, -1});
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "NDArray::Reshape: cannot reshape (2,3,4) to shape=(-4,4,-1)"),
        std::string::npos)
        << e.what();
  }
}

// A view is a new array for autograd: the base's gradient buffer (and
// history) describe the base, not the view.
TEST(NDArray, ViewsDoNotCarryTheBaseGradient) {
  NDArray a = NDArray::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  a.set_grad(NDArray::FromVector<float>({2, 3}, {0, 0, 0, 0, 0, 0}));
  EXPECT_FALSE(a.grad().is_none());
  EXPECT_TRUE(a.Reshape({-1}).grad().is_none());
  EXPECT_TRUE(a.Slice(0, 1).grad().is_none());
  EXPECT_TRUE(a.At(1).grad().is_none());
  EXPECT_TRUE(a.Reshape({-1}).autograd_entry().empty());
}

TEST(NDArray, ViewAsReinterpretsTheChunk) {
  NDArray block({16}, Context::CPU(), DType::kUInt8);
  NDArray f = block.ViewAs({2, 2}, DType::kFloat32);
  f.SyncCopyFromCPU(std::vector<float>{1, 2, 3, 4}.data(), 4);
  EXPECT_EQ(block.ViewAs({4}, DType::kFloat32).ToVector<float>(),
            (std::vector<float>{1, 2, 3, 4}));
  EXPECT_THROW(block.ViewAs({5}, DType::kFloat32), ShapeError);
}

TEST(NDArray, BadViewsAreShapeErrors) {
  NDArray a = NDArray::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(a.Reshape({4, 2}), ShapeError);
  EXPECT_THROW(a.Reshape({-1, -1}), ShapeError);
  EXPECT_THROW(a.Slice(1, 3), ShapeError);
  EXPECT_THROW(a.Slice(2, 1), ShapeError);
  EXPECT_THROW(a.At(2), ShapeError);
  EXPECT_THROW(a.At(0).At(0).At(0), ShapeError);
}

TEST(NDArray, ReadingNeverWrittenArrayIsStateError) {
  NDArray a({2, 2});
  try {
    a.ToVector<float>();
    FAIL() << "expected StateError";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("read before anything wrote it"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(NDArray().WaitToRead(), StateError);
  NDArray b({2, 2});
  EXPECT_THROW(CopyFromTo(a, b), StateError);
}

TEST(NDArray, CopyFromToConvertsDType) {
  NDArray a = NDArray::FromVector<float>({4}, {1.5f, -2.0f, 0.0f, 3.0f});
  NDArray b({4}, Context::CPU(), DType::kInt32);
  CopyFromTo(a, b);
  EXPECT_EQ(b.ToVector<int32_t>(), (std::vector<int32_t>{1, -2, 0, 3}));
  NDArray c({4}, Context::CPU(), DType::kBool);
  CopyFromTo(a, c);
  EXPECT_EQ(c.ToVector<bool>(), (std::vector<bool>{true, true, false, true}));
  NDArray h({4}, Context::CPU(), DType::kFloat16);
  CopyFromTo(a, h);
  NDArray back({4});
  CopyFromTo(h, back);
  EXPECT_EQ(back.ToVector<float>(), a.ToVector<float>());
  NDArray wrong({5});
  EXPECT_THROW(CopyFromTo(a, wrong), ShapeError);
  EXPECT_EQ(a.Copy(Context::CPU(1)).ToVector<float>(), a.ToVector<float>());
}

// Out-of-range floats convert as the Cast op converts them: truncated,
// saturated at the integer's range, NaN 0 (a plain cast is undefined
// behaviour there; clang's UBSan flagged -1 to uint8).
TEST(NDArray, CopyFromToSaturatesFloatsToIntegers) {
  const std::vector<float> v = {-1.5f, 300.0f, std::nanf(""), 2.7f, -1e20f};
  NDArray a = NDArray::FromVector<float>({5}, v);
  NDArray u({5}, Context::CPU(), DType::kUInt8);
  CopyFromTo(a, u);
  EXPECT_EQ(u.ToVector<uint8_t>(), (std::vector<uint8_t>{0, 255, 0, 2, 0}));
  NDArray i8({5}, Context::CPU(), DType::kInt8);
  CopyFromTo(a, i8);
  EXPECT_EQ(i8.ToVector<int8_t>(), (std::vector<int8_t>{-1, 127, 0, 2, -128}));
  NDArray i64({5}, Context::CPU(), DType::kInt64);
  CopyFromTo(a, i64);
  EXPECT_EQ(i64.ToVector<int64_t>(),
            (std::vector<int64_t>{-1, 300, 0, 2,
                                  std::numeric_limits<int64_t>::min()}));
}

TEST(NDArray, GpuArrayWithoutPluginIsNotFound) {
  try {
    NDArray a({2}, Context::GPU(0));
    FAIL() << "expected NotFound";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("gpu(0)"), std::string::npos);
  }
}

TEST(NDArray, PrintsValuesShapeDTypeAndContext) {
  NDArray a = NDArray::FromVector<float>({2, 2}, {1, 2.5f, 3, 4});
  EXPECT_EQ(a.ToString(),
            "[[1, 2.5],\n [3, 4]]\n<NDArray 2x2 float32 @cpu(0)>");
  std::vector<int64_t> big(100);
  for (int i = 0; i < 100; ++i) big[i] = i;
  NDArray b = NDArray::FromVector<int64_t>({100}, big);
  EXPECT_EQ(b.ToString(2), "[0, 1, ..., 98, 99]\n<NDArray 100 int64 @cpu(0)>");
  NDArray s = NDArray::FromVector<bool>(TShape::Scalar(), {true});
  EXPECT_EQ(s.ToString(), "true\n<NDArray scalar bool @cpu(0)>");
  EXPECT_EQ(NDArray().ToString(), "<NDArray none>");
}

TEST(NDArray, ZeroSizeArrays) {
  NDArray a = NDArray::FromVector<float>({0, 3}, {});
  EXPECT_EQ(a.size(), 0);
  EXPECT_TRUE(a.ToVector<float>().empty());
  EXPECT_EQ(a.ToString(), "[]\n<NDArray 0x3 float32 @cpu(0)>");
}

TEST(NDArray, UsedFromSeveralThreads) {
  NDArray a = NDArray::FromVector<float>({1000}, std::vector<float>(1000, 2));
  std::vector<std::thread> threads;
  std::vector<float> sums(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      NDArray copy = a.Copy(Context::CPU());
      for (float v : copy.ToVector<float>()) sums[t] += v;
    });
  }
  for (auto& th : threads) th.join();
  for (float s : sums) EXPECT_EQ(s, 2000);
}

TEST(NDArray, WaitToWriteCountsAsWrite) {
  NDArray a = NDArray::FromVector<float>({1}, {1});
  const uint64_t v = a.version();
  a.WaitToWrite();
  EXPECT_EQ(a.version(), v + 1);
}

}  // namespace
}  // namespace mx
