#include "tools/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace mx {
namespace data {
namespace {

// The whole decompressed file.
std::vector<uint8_t> ReadGzip(const std::string& path,
                              const std::string& package_hint) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    std::string msg = absl::StrCat("cannot open dataset file ", path);
    if (!package_hint.empty()) {
      absl::StrAppend(&msg, " (install the Debian package ", package_hint,
                      ", e.g. with tools/setup.sh)");
    }
    throw NotFound(msg);
  }
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) {
    bytes.insert(bytes.end(), buf, buf + n);
  }
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw InvalidArgument("corrupt gzip data in " + path);
  return bytes;
}

uint32_t BigEndian(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) |
         (uint32_t{b[at + 2]} << 8) | uint32_t{b[at + 3]};
}

// Checks the header: magic, then `dims` sizes; returns the sizes.
std::vector<int64_t> Header(const std::vector<uint8_t>& b, uint32_t magic,
                            int dims, const std::string& path) {
  const size_t header = 4 + 4 * static_cast<size_t>(dims);
  if (b.size() >= 4 && BigEndian(b, 0) != magic) {
    throw InvalidArgument(absl::StrCat(path, ": magic number ", BigEndian(b, 0),
                                       ", expected ", magic));
  }
  if (b.size() < header) {
    throw InvalidArgument(absl::StrCat(path, ": ", b.size(),
                                       " bytes is too short for an IDX "
                                       "header"));
  }
  std::vector<int64_t> sizes;
  for (int d = 0; d < dims; ++d) sizes.push_back(BigEndian(b, 4 + 4 * d));
  const std::optional<int64_t> count = CheckedProduct(sizes);
  if (!count) {
    throw InvalidArgument(absl::StrCat(path, ": the header's sizes (",
                                       absl::StrJoin(sizes, ", "),
                                       ") multiply past int64"));
  }
  if (b.size() - header != static_cast<uint64_t>(*count)) {
    throw InvalidArgument(absl::StrCat(path, ": ", b.size() - header,
                                       " data bytes, the header promises ",
                                       *count));
  }
  return sizes;
}

}  // namespace

Dataset LoadIdx(const std::string& images_gz, const std::string& labels_gz,
                const std::string& package_hint) {
  const std::vector<uint8_t> img = ReadGzip(images_gz, package_hint);
  const std::vector<uint8_t> lab = ReadGzip(labels_gz, package_hint);
  const std::vector<int64_t> isz = Header(img, 2051, 3, images_gz);
  const std::vector<int64_t> lsz = Header(lab, 2049, 1, labels_gz);
  if (isz[0] != lsz[0]) {
    throw InvalidArgument(absl::StrCat(images_gz, " has ", isz[0],
                                       " images but ", labels_gz, " has ",
                                       lsz[0], " labels"));
  }
  if (isz[1] == 0 || isz[2] == 0) {
    // Batches of empty images would index an empty pixel buffer.
    throw InvalidArgument(absl::StrCat(images_gz, " has images of ", isz[1],
                                       "x", isz[2],
                                       " pixels; both must be positive"));
  }
  Dataset d;
  d.size = isz[0];
  d.rows = isz[1];
  d.cols = isz[2];
  d.images.resize(img.size() - 16);
  for (size_t i = 0; i < d.images.size(); ++i) {
    d.images[i] = img[16 + i] / 255.0f;
  }
  d.labels.assign(lab.begin() + 8, lab.end());
  return d;
}

Dataset LoadFashionMNIST(const std::string& dir, bool train) {
  const std::string prefix = absl::StrCat(dir, "/", train ? "train" : "t10k");
  return LoadIdx(prefix + "-images-idx3-ubyte.gz",
                 prefix + "-labels-idx1-ubyte.gz", "dataset-fashion-mnist");
}

BatchIterator::BatchIterator(const Dataset& data, int64_t batch_size,
                             bool shuffle, uint64_t seed, int shard,
                             int num_shards)
    : data_(data),
      batch_size_(batch_size),
      shuffle_(shuffle),
      shard_(shard),
      num_shards_(num_shards),
      rng_(seed) {
  if (num_shards < 1 || shard < 0 || shard >= num_shards) {
    throw InvalidArgument(
        absl::StrCat("BatchIterator: shard ", shard, " of ", num_shards));
  }
  if (batch_size <= 0 || batch_size * num_shards > data.size) {
    throw InvalidArgument(absl::StrCat("BatchIterator: batch size ", batch_size,
                                       " x ", num_shards, " shards for ",
                                       data.size, " examples"));
  }
  order_.resize(data.size);
  std::iota(order_.begin(), order_.end(), 0);
  if (shuffle_) std::shuffle(order_.begin(), order_.end(), rng_);
}

int64_t BatchIterator::batches_per_epoch() const {
  return data_.size / (batch_size_ * num_shards_);
}

bool BatchIterator::Next(NDArray* images, NDArray* labels) {
  const int64_t global = batch_size_ * num_shards_;
  if (pos_ + global > data_.size) {
    pos_ = 0;
    if (shuffle_) std::shuffle(order_.begin(), order_.end(), rng_);
    return false;
  }
  const int64_t pixels = data_.rows * data_.cols;
  std::vector<float> x(static_cast<size_t>(batch_size_ * pixels));
  std::vector<float> y(static_cast<size_t>(batch_size_));
  for (int64_t b = 0; b < batch_size_; ++b) {
    const int64_t i = order_[pos_ + shard_ * batch_size_ + b];
    std::memcpy(&x[b * pixels], &data_.images[i * pixels],
                pixels * sizeof(float));
    y[b] = data_.labels[i];
  }
  pos_ += global;
  *images =
      NDArray::FromVector<float>({batch_size_, 1, data_.rows, data_.cols}, x);
  *labels = NDArray::FromVector<float>({batch_size_}, y);
  return true;
}

}  // namespace data
}  // namespace mx
