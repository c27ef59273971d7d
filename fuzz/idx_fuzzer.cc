// Fuzz target: data::LoadIdx and BatchIterator on an image file and a label
// file cut from the input.
//   byte 0: framing (even: files written raw; odd: gzip-compressed; LoadIdx
//           reads both through zlib)
//   bytes 1-2: length of the image file (u16, little-endian; capped at what
//           is left), the label file gets the remaining bytes after byte 3
//   byte 3: batch size (1 + byte3 % 8)
// A dataset that loads is iterated for up to two epochs of at most 64
// batches each.
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <string>

#include "fuzz/fuzz_util.h"
#include "tools/data/idx.h"

namespace {

std::string TempPath(const char* what) {
  const char* dir = getenv("TEST_TMPDIR");
  if (dir == nullptr) dir = getenv("TMPDIR");
  if (dir == nullptr) dir = "/tmp";
  return std::string(dir) + "/mxfuzz_idx_" + what + "_" +
         std::to_string(getpid()) + ".gz";
}

void WriteFile(const std::string& path, const std::string& bytes, bool gz) {
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb1");
    if (f == nullptr) mx::fuzz::Finding("cannot write", path);
    if (!bytes.empty()) gzwrite(f, bytes.data(), bytes.size());
    gzclose(f);
  } else {
    FILE* f = fopen(path.c_str(), "wb");
    if (f == nullptr) mx::fuzz::Finding("cannot write", path);
    if (!bytes.empty()) fwrite(bytes.data(), 1, bytes.size(), f);
    fclose(f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mx::fuzz::InitEnvironment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string images_path = TempPath("images");
  static const std::string labels_path = TempPath("labels");
  mx::fuzz::ByteReader in(data, size);
  const bool gz = in.U8() & 1;
  const size_t images_len = in.U16();
  const int64_t batch = 1 + in.U8() % 8;
  const std::string rest = in.Rest();
  const size_t cut = std::min(images_len, rest.size());
  WriteFile(images_path, rest.substr(0, cut), gz);
  WriteFile(labels_path, rest.substr(cut), gz);
  mx::fuzz::Guard([&] {
    mx::data::Dataset d = mx::data::LoadIdx(images_path, labels_path);
    mx::data::BatchIterator it(d, batch, /*shuffle=*/true, /*seed=*/1);
    for (int epoch = 0; epoch < 2; ++epoch) {
      mx::NDArray x, y;
      for (int b = 0; b < 64 && it.Next(&x, &y); ++b) {
        x.WaitToRead();
        y.WaitToRead();
      }
    }
  });
  return 0;
}
