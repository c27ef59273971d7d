// MXNet 2's parameter files (.npz, .npy): fixtures written by Python's
// zipfile as numpy.savez, savez_compressed and MXNet 2's streaming writer
// lay them out (testdata/make_npz_fixtures.py), the writer against them,
// ZIP64, loading into blocks, and hostile archives.
#include "nn/npz_file.h"

#include <algorithm>
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
#include "nn/npy_format.h"
#include "nn/zip_archive.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

const std::string kFixtures = "nn/testdata/";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string WriteAll(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

const NDArray& Find(const NamedArrays& arrays, const std::string& name) {
  for (const auto& [n, a] : arrays) {
    if (n == name) return a;
  }
  static const NDArray none;
  ADD_FAILURE() << "no array " << name;
  return none;
}

// The arrays make_npz_fixtures.py writes, by name.
void ExpectFixtureArrays(const NamedArrays& arrays) {
  ASSERT_EQ(arrays.size(), 8u);  // README.txt is not an array
  EXPECT_EQ(arrays[0].first, "arg:fc_weight");
  EXPECT_EQ(arrays[7].first, "fortran");
  const NDArray& w = Find(arrays, "arg:fc_weight");
  EXPECT_EQ(w.shape(), TShape({2, 3}));
  EXPECT_EQ(w.dtype(), DType::kFloat32);
  EXPECT_EQ(ToDouble(w), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  const NDArray& b = Find(arrays, "arg:fc_bias");
  EXPECT_EQ(b.dtype(), DType::kInt64);
  std::vector<int64_t> ints(4);
  b.SyncCopyToCPU(ints.data(), 4);
  EXPECT_EQ(ints, (std::vector<int64_t>{-1, 0, 7, int64_t{1} << 40}));
  const NDArray& mask = Find(arrays, "aux:mask");
  EXPECT_EQ(mask.dtype(), DType::kBool);
  EXPECT_EQ(ToDouble(mask), (std::vector<double>{1, 0, 0, 1}));
  const NDArray& scalar = Find(arrays, "scalar");
  EXPECT_EQ(scalar.shape().ndim(), 0);
  EXPECT_EQ(scalar.dtype(), DType::kFloat16);
  EXPECT_EQ(ToDouble(scalar), std::vector<double>{1.5});
  const NDArray& empty = Find(arrays, "empty");
  EXPECT_EQ(empty.shape(), TShape({0, 3}));
  EXPECT_EQ(empty.dtype(), DType::kUInt8);
  EXPECT_TRUE(ToDouble(empty).empty());
  EXPECT_EQ(ToDouble(Find(arrays, "bytes")),
            (std::vector<double>{-128, 0, 127}));
  EXPECT_EQ(Find(arrays, "bytes").dtype(), DType::kInt8);
  EXPECT_EQ(ToDouble(Find(arrays, "int32")), (std::vector<double>{-5, 9}));
  // Stored by columns; loaded in C order.
  const NDArray& f = Find(arrays, "fortran");
  EXPECT_EQ(f.shape(), TShape({3, 2}));
  EXPECT_EQ(f.dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(f), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Npz, ReadsSavezLayout) {
  ExpectFixtureArrays(LoadNpzArrays(kFixtures + "savez.npz"));
}

TEST(Npz, ReadsDeflatedEntries) {  // numpy.savez_compressed
  ExpectFixtureArrays(LoadNpzArrays(kFixtures + "savez_compressed.npz"));
}

TEST(Npz, ReadsDataDescriptorEntries) {  // MXNet 2's miniz writer streams
  ExpectFixtureArrays(LoadNpzArrays(kFixtures + "streamed.npz"));
}

TEST(Npz, ReadsZip64LocalFields) {
  ExpectFixtureArrays(LoadNpzArrays(kFixtures + "zip64_local.npz"));
}

TEST(Npz, LoadArraysDetectsNpzAndNpy) {
  ExpectFixtureArrays(LoadArrays(kFixtures + "savez.npz"));
  const NamedArrays npy = LoadArrays(kFixtures + "fc_weight.npy");
  ASSERT_EQ(npy.size(), 1u);
  EXPECT_EQ(npy[0].first, "");
  EXPECT_EQ(ToDouble(npy[0].second), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ToDouble(LoadNpyArray(kFixtures + "fc_weight.npy")),
            ToDouble(npy[0].second));
}

// The writer's .npy bytes equal the independently written fixture's entry.
TEST(Npz, WriterMatchesNumpysEntryBytes) {
  std::ifstream in(kFixtures + "savez.npz", std::ios::binary);
  internal::ZipReader zip(kFixtures + "savez.npz", in);
  const NamedArrays arrays = LoadNpzArrays(kFixtures + "savez.npz");
  for (size_t i = 0; i < arrays.size(); ++i) {
    const NDArray& a = arrays[i].second;
    const std::vector<char> entry = zip.Read(zip.entries()[i]);
    const std::string header = internal::NpyHeader(a.shape(), a.dtype());
    if (arrays[i].first == "fortran") {  // the writer writes C order
      EXPECT_EQ(header.size() % 64, 0u);
      continue;
    }
    EXPECT_EQ(std::string(entry.data(), header.size()), header)
        << arrays[i].first;
  }
}

TEST(Npz, SaveLoadRoundTripsEveryDType) {
  NamedArrays arrays;
  for (DType t :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kUInt8,
        DType::kInt32, DType::kInt8, DType::kInt64, DType::kBool}) {
    arrays.emplace_back(std::string("a_") + DTypeName(t),
                        nd::cast(ArrayOf({2, 2}, {0, 1, 1, 0}), t));
  }
  arrays.emplace_back("scalar", ArrayOf(TShape(std::vector<int64_t>{}), {3.5}));
  arrays.emplace_back("zero_size", ArrayOf({0, 4}, {}));
  const std::string path = TempPath("round.npz");
  SaveNpzArrays(path, arrays);
  const NamedArrays back = LoadNpzArrays(path);
  ASSERT_EQ(back.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(back[i].first, arrays[i].first);
    EXPECT_EQ(back[i].second.dtype(), arrays[i].second.dtype());
    EXPECT_EQ(back[i].second.shape(), arrays[i].second.shape());
    EXPECT_EQ(ToDouble(back[i].second), ToDouble(arrays[i].second));
  }
  // Equal contents, equal bytes (fixed timestamps).
  const std::string again = TempPath("round_again.npz");
  SaveNpzArrays(again, back);
  EXPECT_EQ(ReadAll(again), ReadAll(path));
  SaveArrays(again, back, ParamsFormat::kNpz);
  EXPECT_EQ(ReadAll(again), ReadAll(path));
}

TEST(Npz, UnnamedArraysBecomeArrN) {
  const std::string path = TempPath("unnamed.npz");
  SaveNpzArrays(path, {{"", ArrayOf({1}, {1})}, {"", ArrayOf({1}, {2})}});
  const NamedArrays back = LoadNpzArrays(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "arr_0");
  EXPECT_EQ(back[1].first, "arr_1");
  EXPECT_THROW(
      SaveNpzArrays(path, {{"", ArrayOf({1}, {1})}, {"x", ArrayOf({1}, {2})}}),
      InvalidArgument);
  EXPECT_THROW(
      SaveNpzArrays(path, {{"x", ArrayOf({1}, {1})}, {"x", ArrayOf({1}, {2})}}),
      InvalidArgument);
  EXPECT_THROW(SaveNpzArrays(path, {{"x", NDArray()}}), InvalidArgument);
}

TEST(Npz, SaveNpyArrayWritesTheFixturesBytes) {
  const std::string path = TempPath("w.npy");
  SaveNpyArray(path, ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ReadAll(path), ReadAll(kFixtures + "fc_weight.npy"));
}

// Every size, offset and the end record in ZIP64 form, as a file over
// 4 GiB would have them.
TEST(Npz, Zip64RecordsRoundTrip) {
  const NamedArrays arrays = {{"w", ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6})},
                              {"b", ArrayOf({3}, {7, 8, 9})}};
  const std::string path = TempPath("zip64.npz");
  internal::SaveNpzArrays(path, arrays, /*zip64_from=*/0);
  const std::string bytes = ReadAll(path);
  EXPECT_NE(bytes.find(std::string("PK\x06\x06", 4)), std::string::npos);
  EXPECT_NE(bytes.find(std::string("PK\x06\x07", 4)), std::string::npos);
  const NamedArrays back = LoadNpzArrays(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(ToDouble(back[0].second), ToDouble(arrays[0].second));
  EXPECT_EQ(ToDouble(back[1].second), ToDouble(arrays[1].second));
}

TEST(Npz, EmptyArchive) {
  const std::string path = TempPath("empty.npz");
  SaveNpzArrays(path, {});
  EXPECT_EQ(ReadAll(path).substr(0, 4), std::string("PK\x05\x06", 4));
  EXPECT_TRUE(LoadNpzArrays(path).empty());
  EXPECT_TRUE(LoadArrays(path).empty());
}

// MXNet 2's HybridBlock.export names arrays "arg:NAME" / "aux:NAME" in an
// .npz; Gluon's save_parameters uses the structured names.
TEST(Npz, BlocksLoadMXNet2Files) {
  auto net = DenseBatchNormNet();
  const NDArray x = RandomArray({3, 5});
  const std::vector<double> expected = ToDouble((*net)(x));
  NamedArrays exported, structured;
  for (const auto& [name, p] : net->CollectParams()) {
    const bool aux = p->grad_req() == GradReq::kNull;
    exported.emplace_back((aux ? "aux:" : "arg:") + name,
                          p->data().Copy(Context::CPU()));
    structured.emplace_back(name, p->data().Copy(Context::CPU()));
  }
  const std::string export_path = TempPath("export-0000.params");
  const std::string saved_path = TempPath("saved.params");
  SaveNpzArrays(export_path, exported);
  net->SaveParameters(saved_path, ParamsFormat::kNpz);
  EXPECT_EQ(ReadAll(saved_path).substr(0, 4), std::string("PK\x03\x04", 4));
  for (const std::string& path : {export_path, saved_path}) {
    auto fresh = DenseBatchNormNet();
    (*fresh)(x);
    fresh->LoadParameters(path);
    EXPECT_EQ(ToDouble((*fresh)(x)), expected) << path;
  }
}

TEST(Npz, ExportAsMXNet2ImportsBack) {
  const std::string prefix = TempPath("mx2export");
  ExpectMXNetExportImportsBack(ParamsFormat::kNpz, prefix);
  EXPECT_EQ(LoadNpzArrays(prefix + "-0007.params").size(), 8u);  // an .npz
}

// ---- Hostile and unsupported files. ----

// A valid one-entry archive whose .npy bytes are `npy`, written by
// mxcore's zip writer, for tests that corrupt one thing.
std::string ArchiveOf(const std::string& name, const std::string& npy) {
  const std::string path = TempPath("crafted.npz");
  internal::ZipWriter zip(path);
  zip.Add(name, {npy});
  zip.Finish();
  return ReadAll(path);
}

std::string Npy(const std::string& dict, const std::string& data) {
  std::string header = dict + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

template <typename E>
std::string LoadError(const std::string& bytes) {
  const std::string path = WriteAll("hostile.npz", bytes);
  return ErrorOf<E>([&] { LoadArrays(path); });
}

TEST(NpzHostile, EveryTruncationAndByteFlipIsAnErrorOrLoads) {
  const std::string good = ReadAll(kFixtures + "savez_compressed.npz");
  for (size_t n = 0; n < good.size(); ++n) {
    const std::string path = WriteAll("cut.npz", good.substr(0, n));
    EXPECT_THROW(LoadArrays(path), Error) << "truncated to " << n;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5A);
    const std::string path = WriteAll("flip.npz", bad);
    try {
      LoadArrays(path);
    } catch (const Error&) {
    }  // Any other exception fails the test.
  }
}

TEST(NpzHostile, CrcMismatchIsNamed) {
  std::string bytes = ReadAll(kFixtures + "savez.npz");
  const size_t data = bytes.find("\x93NUMPY");
  bytes[data + 130] ^= 1;  // inside the first entry's float data
  const std::string msg = LoadError<InvalidArgument>(bytes);
  EXPECT_TRUE(Contains(msg, "CRC-32") && Contains(msg, "arg:fc_weight.npy"))
      << msg;
}

TEST(NpzHostile, HugeClaimedSizesFailBeforeAllocating) {
  // A stored entry claiming 2^40 bytes, in a ZIP64 central directory.
  const NamedArrays arrays = {{"w", ArrayOf({1}, {1})}};
  const std::string path = TempPath("huge.npz");
  internal::SaveNpzArrays(path, arrays, 0);
  std::string bytes = ReadAll(path);
  const size_t central = bytes.find(std::string("PK\x01\x02", 4));
  ASSERT_NE(central, std::string::npos);
  const size_t extra = central + 46 + std::strlen("w.npy") + 4;
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(&bytes[extra], &huge, 8);      // uncompressed size
  std::memcpy(&bytes[extra + 8], &huge, 8);  // compressed size
  const std::string msg = LoadError<InvalidArgument>(bytes);
  EXPECT_TRUE(Contains(msg, "truncated") || Contains(msg, "promised")) << msg;
}

// A deflated entry whose claimed size is larger or smaller than what it
// inflates to (the buffer grows with the output, not with the claim).
TEST(NpzHostile, DeflatedSizeClaimsMustMatch) {
  const std::string good = ReadAll(kFixtures + "savez_compressed.npz");
  const size_t central = good.find(std::string("PK\x01\x02", 4));
  ASSERT_NE(central, std::string::npos);
  uint32_t compressed, size;
  std::memcpy(&compressed, &good[central + 20], 4);
  std::memcpy(&size, &good[central + 24], 4);
  for (const uint32_t claim :
       {size - 1, size + 1, std::min<uint32_t>(compressed * 1000, 1u << 30)}) {
    std::string bad = good;
    std::memcpy(&bad[central + 24], &claim, 4);
    const std::string msg = LoadError<InvalidArgument>(bad);
    EXPECT_TRUE(Contains(msg, "does not inflate to") &&
                Contains(msg, "arg:fc_weight.npy"))
        << msg;
  }
}

TEST(NpzHostile, UnsupportedFeaturesAreNotImplemented) {
  const std::string npy =
      Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
          std::string(4, '\0'));
  std::string encrypted = ArchiveOf("w.npy", npy);
  const size_t central = encrypted.find(std::string("PK\x01\x02", 4));
  encrypted[central + 8] |= 1;  // the encryption flag
  EXPECT_TRUE(Contains(LoadError<NotImplemented>(encrypted), "encrypted"));
  std::string bzip2 = ArchiveOf("w.npy", npy);
  bzip2[bzip2.find(std::string("PK\x01\x02", 4)) + 10] = 12;
  EXPECT_TRUE(Contains(LoadError<NotImplemented>(bzip2), "method 12"));
  EXPECT_TRUE(Contains(
      LoadError<NotImplemented>(ArchiveOf("w/format.npy", npy)), "sparse"));
  for (const auto& [descr, what] :
       std::vector<std::pair<std::string, std::string>>{{">f4", "big-endian"},
                                                        {"<i2", "int16"},
                                                        {"<b2", "bfloat16"},
                                                        {"<c8", "complex64"},
                                                        {"<U3", "<U3"}}) {
    const std::string msg = LoadError<NotImplemented>(ArchiveOf(
        "w.npy", Npy("{'descr': '" + descr +
                         "', 'fortran_order': False, 'shape': (1,), }",
                     std::string(4, '\0'))));
    EXPECT_TRUE(Contains(msg, what)) << msg;
  }
  EXPECT_TRUE(Contains(
      LoadError<NotImplemented>(ArchiveOf(
          "w.npy", Npy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                       "'shape': (1,), }",
                       std::string(4, '\0')))),
      "structured"));
}

TEST(NpzHostile, MalformedArraysAreInvalidArguments) {
  const std::string f4 = "'descr': '<f4', 'fortran_order': False, ";
  for (const auto& [npy, what] :
       std::vector<std::pair<std::string, std::string>>{
           {Npy("{" + f4 + "'shape': (2,), }", std::string(4, '\0')),
            "needs 8 bytes"},
           {Npy("{" + f4 + "'shape': (1 << 62, 4), }", ""), "expected"},
           {Npy("{" + f4 + "'shape': (4611686018427387904, 4), }", ""),
            "more than 2^63"},
           {Npy("{" + f4 + "'shape': (1,), 'extra': 1, }", std::string(4, 0)),
            "unexpected key"},
           {Npy("{'descr': '<f4', 'shape': (1,), }", std::string(4, 0)),
            "lacks"},
           {Npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                "\x01\x02"),
            "bool element 1"},
           {std::string("\x93NUMPY\x04\x00", 8) + std::string(8, ' '),
            "version 4.0"},
           {"not an array", "no \\x93NUMPY"}}) {
    const std::string msg = LoadError<InvalidArgument>(ArchiveOf("w.npy", npy));
    EXPECT_TRUE(Contains(msg, what) && Contains(msg, "w.npy")) << msg;
  }
  const std::string npy =
      Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
          std::string(4, '\0'));
  const std::string path = TempPath("dup.npz");
  {
    internal::ZipWriter zip(path);
    zip.Add("w.npy", {npy});
    zip.Add("w.npy", {npy});
    zip.Finish();
  }
  EXPECT_TRUE(
      Contains(ErrorOf<InvalidArgument>([&] { LoadArrays(path); }), "repeats"));
  EXPECT_THROW(LoadNpzArrays(TempPath("no_such_file.npz")), NotFound);
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
