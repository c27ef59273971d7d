// MXNet's NDArray-list parameter files: every record layout MXNet has
// written (V1-V3, pre-V1), the writer, hostile files, and loading them
// into blocks. The real files of ../shared/mxnet-models are read by
// //tests:mxnet_models_test.
#include "nn/mxnet_params_file.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "nn/nn.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

using ::mx::testing::ArrayOf;

constexpr uint32_t kV1 = 0xF993FAC8, kV2 = 0xF993FAC9, kV3 = 0xF993FACA;

// Builds an MXNet file byte by byte, as MXNet's NDArray::Save lays it out.
class FileBuilder {
 public:
  explicit FileBuilder(uint64_t count) {
    Put<uint64_t>(0x112);
    Put<uint64_t>(0);
    Put<uint64_t>(count);
  }
  template <typename T>
  FileBuilder& Put(T v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    return *this;
  }
  FileBuilder& Floats(const std::vector<float>& values) {
    for (float v : values) Put(v);
    return *this;
  }
  // magic, [storage type], int32 ndim + int64 dims.
  FileBuilder& Header(uint32_t magic, const std::vector<int64_t>& dims) {
    Put(magic);
    if (magic != kV1) Put<int32_t>(0);
    Put<int32_t>(static_cast<int32_t>(dims.size()));
    for (int64_t d : dims) Put(d);
    return *this;
  }
  // Context (cpu, 0) and the type flag.
  FileBuilder& CtxType(int32_t flag = 0) {
    return Put<int32_t>(1).Put<int32_t>(0).Put<int32_t>(flag);
  }
  FileBuilder& Names(const std::vector<std::string>& names) {
    Put<uint64_t>(names.size());
    for (const auto& n : names) {
      Put<uint64_t>(n.size());
      bytes_ += n;
    }
    return *this;
  }
  std::string Write(const std::string& name) const {
    const std::string path = TempPath(name);
    std::ofstream(path, std::ios::binary) << bytes_;
    return path;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(MXNetParams, V2RecordWithNamesLoads) {
  FileBuilder f(1);
  f.Header(kV2, {2}).CtxType().Floats({1.5f, -2}).Names({"arg:w"});
  const NamedArrays arrays = LoadMXNetArrays(f.Write("v2.params"));
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(arrays[0].first, "arg:w");
  EXPECT_EQ(arrays[0].second.shape(), TShape({2}));
  EXPECT_EQ(ToDouble(arrays[0].second), (std::vector<double>{1.5, -2}));
}

TEST(MXNetParams, V1RecordHasNoStorageType) {
  FileBuilder f(1);
  f.Header(kV1, {1, 2}).CtxType().Floats({3, 4}).Names({});
  const NamedArrays arrays = LoadMXNetArrays(f.Write("v1.params"));
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(arrays[0].first, "");
  EXPECT_EQ(arrays[0].second.shape(), TShape({1, 2}));
  EXPECT_EQ(ToDouble(arrays[0].second), (std::vector<double>{3, 4}));
}

TEST(MXNetParams, PreV1RecordStartsWithItsRankAndUint32Dims) {
  FileBuilder f(1);
  f.Put<uint32_t>(2).Put<uint32_t>(2).Put<uint32_t>(1);
  f.CtxType().Floats({5, 6}).Names({"w"});
  const NamedArrays arrays = LoadMXNetArrays(f.Write("v0.params"));
  EXPECT_EQ(arrays[0].second.shape(), TShape({2, 1}));
  EXPECT_EQ(ToDouble(arrays[0].second), (std::vector<double>{5, 6}));
}

TEST(MXNetParams, V3KeepsScalarsAndMarksEmptySlotsWithRankMinusOne) {
  FileBuilder f(2);
  f.Header(kV3, {}).CtxType().Floats({7});
  f.Put(kV3).Put<int32_t>(0).Put<int32_t>(-1);
  f.Names({"s", "none"});
  const NamedArrays arrays = LoadMXNetArrays(f.Write("v3.params"));
  EXPECT_EQ(arrays[0].second.shape().ndim(), 0);
  EXPECT_EQ(ToDouble(arrays[0].second), (std::vector<double>{7}));
  EXPECT_TRUE(arrays[1].second.is_none());
}

TEST(MXNetParams, V2RankZeroIsAnEmptySlot) {
  FileBuilder f(1);
  f.Header(kV2, {}).Names({});
  EXPECT_TRUE(LoadMXNetArrays(f.Write("slot.params"))[0].second.is_none());
}

TEST(MXNetParams, TypeFlagsAreMXNetsDTypeCodes) {
  FileBuilder f(3);
  f.Header(kV2, {2}).CtxType(4).Put<int32_t>(-3).Put<int32_t>(9);
  f.Header(kV2, {1}).CtxType(3).Put<uint8_t>(200);
  f.Header(kV2, {1}).CtxType(1).Put<double>(0.25);
  f.Names({"i", "u", "d"});
  const NamedArrays arrays = LoadMXNetArrays(f.Write("types.params"));
  EXPECT_EQ(arrays[0].second.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(arrays[0].second), (std::vector<double>{-3, 9}));
  EXPECT_EQ(arrays[1].second.dtype(), DType::kUInt8);
  EXPECT_EQ(ToDouble(arrays[1].second), (std::vector<double>{200}));
  EXPECT_EQ(arrays[2].second.dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(arrays[2].second), (std::vector<double>{0.25}));
}

TEST(MXNetParams, SparseStorageIsNotImplemented) {
  FileBuilder f(1);
  f.Put(kV2).Put<int32_t>(2);  // csr
  const std::string msg =
      ErrorOf<NotImplemented>([&] { LoadMXNetArrays(f.Write("csr.params")); });
  EXPECT_TRUE(Contains(msg, "csr") && Contains(msg, "array 0")) << msg;
}

TEST(MXNetParams, TypesMxcoreLacksAreNotImplemented) {
  FileBuilder f(1);
  f.Header(kV2, {1}).CtxType(12).Put<uint16_t>(0).Names({});
  const std::string msg =
      ErrorOf<NotImplemented>([&] { LoadMXNetArrays(f.Write("bf16.params")); });
  EXPECT_TRUE(Contains(msg, "bfloat16")) << msg;
}

TEST(MXNetParams, UnknownTypeFlagIsInvalid) {
  FileBuilder f(1);
  f.Header(kV2, {1}).CtxType(99).Floats({0}).Names({});
  EXPECT_TRUE(Contains(
      ErrorOf<InvalidArgument>([&] { LoadMXNetArrays(f.Write("t99.params")); }),
      "unknown type flag 99"));
}

// Hostile sizes: all are refused before anything is allocated for them.
TEST(MXNetParams, HugeArrayCountIsRefusedBeforeAllocating) {
  FileBuilder f(uint64_t{1} << 60);
  const std::string msg = ErrorOf<InvalidArgument>(
      [&] { LoadMXNetArrays(f.Write("count.params")); });
  EXPECT_TRUE(Contains(msg, "declares")) << msg;
}

TEST(MXNetParams, DataLargerThanTheFileIsRefused) {
  FileBuilder f(1);
  f.Header(kV2, {int64_t{1} << 40}).CtxType().Floats({1});
  const std::string msg =
      ErrorOf<InvalidArgument>([&] { LoadMXNetArrays(f.Write("big.params")); });
  EXPECT_TRUE(Contains(msg, "promised")) << msg;
}

TEST(MXNetParams, ShapeWhoseByteCountOverflowsIsRefused) {
  FileBuilder f(1);
  f.Header(kV2, {int64_t{1} << 40, int64_t{1} << 40}).CtxType();
  const std::string msg = ErrorOf<InvalidArgument>(
      [&] { LoadMXNetArrays(f.Write("overflow.params")); });
  EXPECT_TRUE(Contains(msg, "does not fit")) << msg;
}

TEST(MXNetParams, HugeNameLengthIsRefused) {
  FileBuilder f(1);
  f.Header(kV2, {1}).CtxType().Floats({1});
  f.Put<uint64_t>(1).Put<uint64_t>(uint64_t{1} << 50);
  EXPECT_THROW(LoadMXNetArrays(f.Write("name.params")), InvalidArgument);
}

TEST(MXNetParams, NegativeDimensionAndBadRankAreRefused) {
  FileBuilder neg(1);
  neg.Header(kV2, {-4}).CtxType();
  EXPECT_THROW(LoadMXNetArrays(neg.Write("neg.params")), InvalidArgument);
  FileBuilder rank(1);
  rank.Put(kV2).Put<int32_t>(0).Put<int32_t>(1000);
  EXPECT_THROW(LoadMXNetArrays(rank.Write("rank.params")), InvalidArgument);
}

TEST(MXNetParams, UnknownRecordMagicIsRefused) {
  FileBuilder f(1);
  f.Put<uint32_t>(0x12345678);
  const std::string msg = ErrorOf<InvalidArgument>(
      [&] { LoadMXNetArrays(f.Write("magic.params")); });
  EXPECT_TRUE(Contains(msg, "0x12345678")) << msg;
}

TEST(MXNetParams, NameCountMustMatchTheArrays) {
  FileBuilder f(1);
  f.Header(kV2, {1}).CtxType().Floats({1}).Names({"a", "b"});
  EXPECT_THROW(LoadMXNetArrays(f.Write("names.params")), InvalidArgument);
}

TEST(MXNetParams, TruncationAndTrailingBytesAreRefused) {
  FileBuilder f(1);
  f.Header(kV2, {2}).CtxType().Floats({1, 2}).Names({"w"});
  const std::string whole = f.bytes();
  for (size_t cut : {size_t{4}, size_t{30}, whole.size() - 1}) {
    const std::string path = TempPath("cut.params");
    std::ofstream(path, std::ios::binary) << whole.substr(0, cut);
    EXPECT_THROW(LoadMXNetArrays(path), InvalidArgument) << cut;
  }
  const std::string path = TempPath("trail.params");
  std::ofstream(path, std::ios::binary) << whole << "x";
  EXPECT_THROW(LoadMXNetArrays(path), InvalidArgument);
}

TEST(MXNetParams, WriterProducesMXNetsV2Bytes) {
  const std::string path = TempPath("written.params");
  SaveMXNetArrays(path, {{"arg:w", ArrayOf({2}, {1.5, -2})}});
  FileBuilder expected(1);
  expected.Header(kV2, {2}).CtxType().Floats({1.5f, -2}).Names({"arg:w"});
  EXPECT_EQ(ReadAll(path), expected.bytes());
}

TEST(MXNetParams, RoundTripIsExactForEveryDTypeAndShapeKind) {
  NamedArrays arrays;
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                  DType::kUInt8, DType::kInt32, DType::kInt8, DType::kInt64}) {
    arrays.emplace_back(DTypeName(t), RandomArray({2, 3}, t));
  }
  NDArray flags(TShape({3}), Context::CPU(), DType::kBool);
  const bool flag_values[3] = {true, false, true};
  flags.SyncCopyFromCPU(flag_values, 3);
  arrays.emplace_back("bool", flags);
  arrays.emplace_back("scalar", ArrayOf(TShape(std::vector<int64_t>{}), {4}));
  arrays.emplace_back("empty", NDArray(TShape({0, 3}), Context::CPU()));
  arrays.emplace_back("none", NDArray());
  const std::string path = TempPath("round.params");
  SaveMXNetArrays(path, arrays);
  const NamedArrays loaded = LoadMXNetArrays(path);
  ASSERT_EQ(loaded.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const NDArray& a = arrays[i].second;
    const NDArray& b = loaded[i].second;
    EXPECT_EQ(loaded[i].first, arrays[i].first);
    ASSERT_EQ(a.is_none(), b.is_none()) << arrays[i].first;
    if (a.is_none()) continue;
    EXPECT_EQ(a.shape(), b.shape()) << arrays[i].first;
    EXPECT_EQ(a.dtype(), b.dtype()) << arrays[i].first;
    if (a.size() > 0) {
      EXPECT_EQ(ToDouble(a), ToDouble(b)) << arrays[i].first;
    }
  }
  const std::string again = TempPath("round2.params");
  SaveMXNetArrays(again, loaded);
  EXPECT_EQ(ReadAll(again), ReadAll(path));
}

TEST(MXNetParams, WriterRefusesPartlyNamedAndDuplicateNames) {
  EXPECT_THROW(SaveMXNetArrays(TempPath("p.params"), {{"a", RandomArray({1})},
                                                      {"", RandomArray({1})}}),
               InvalidArgument);
  EXPECT_THROW(SaveMXNetArrays(TempPath("d.params"), {{"a", RandomArray({1})},
                                                      {"a", RandomArray({1})}}),
               InvalidArgument);
}

TEST(MXNetParams, LoadArraysDetectsEitherFormatByMagic) {
  const NDArray w = ArrayOf({2}, {1, 2});
  const std::string mx = TempPath("either_mx.params");
  const std::string own = TempPath("either_own.params");
  SaveArrays(mx, {{"w", w}}, ParamsFormat::kMXNet);
  SaveArrays(own, {{"w", w}});
  EXPECT_EQ(ReadAll(mx).substr(0, 2), std::string("\x12\x01", 2));
  EXPECT_EQ(ReadAll(own).substr(0, 8), "MXNNPRM1");
  EXPECT_EQ(ToDouble(LoadArrays(mx)[0].second), ToDouble(w));
  EXPECT_EQ(ToDouble(LoadArrays(own)[0].second), ToDouble(w));
  const std::string neither = TempPath("neither.params");
  std::ofstream(neither, std::ios::binary) << "GIF89a, not params";
  const std::string msg =
      ErrorOf<InvalidArgument>([&] { LoadArrays(neither); });
  EXPECT_TRUE(Contains(msg, "MXNNPRM1") && Contains(msg, "0x112") &&
              Contains(msg, ".npz"))
      << msg;
}

TEST(MXNetParams, LoadParametersDropsArgAndAuxPrefixes) {
  Dense dense(2);
  dense.Initialize();
  dense(RandomArray({1, 3}));
  const NDArray weight = RandomArray({2, 3});
  const NDArray bias = RandomArray({2});
  const std::string path = TempPath("prefixed.params");
  SaveMXNetArrays(path, {{"arg:weight", weight}, {"aux:bias", bias}});
  dense.LoadParameters(path);
  EXPECT_EQ(ToDouble(dense.CollectParams()[0].second->data()),
            ToDouble(weight));
  EXPECT_EQ(ToDouble(dense.CollectParams()[1].second->data()), ToDouble(bias));
}

TEST(MXNetParams, LoadParametersRefusesUnnamedLists) {
  Dense dense(2);
  const std::string path = TempPath("unnamed.params");
  SaveMXNetArrays(path, {{"", RandomArray({2, 3})}});
  EXPECT_TRUE(
      Contains(ErrorOf<InvalidArgument>([&] { dense.LoadParameters(path); }),
               "unnamed"));
}

TEST(MXNetParams, ExportInMXNetFormatImportsBack) {
  const std::string prefix = TempPath("mxexport");
  ExpectMXNetExportImportsBack(ParamsFormat::kMXNet, prefix);
  // In MXNet's NDArray-list format (LoadMXNetArrays reads nothing else):
  // two Dense layers' weight and bias, BatchNorm's four arrays.
  EXPECT_EQ(LoadMXNetArrays(prefix + "-0007.params").size(), 8u);
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
