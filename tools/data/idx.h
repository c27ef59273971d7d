// Image datasets in the IDX format of MNIST and Fashion-MNIST (gzip'd),
// and shuffled mini-batches over them.
//
//   Dataset train = LoadFashionMNIST(kFashionMNISTDir, /*train=*/true);
//   BatchIterator it(train, /*batch_size=*/64, /*shuffle=*/true, /*seed=*/1);
//   NDArray x, y;
//   while (it.Next(&x, &y)) { ... }   // x: (64, 1, 28, 28), y: (64,)
#ifndef MXCORE_TOOLS_DATA_IDX_H_
#define MXCORE_TOOLS_DATA_IDX_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx {
namespace data {

// Where the Debian package dataset-fashion-mnist installs the files.
inline constexpr char kFashionMNISTDir[] = "/usr/share/datasets/fashion-mnist";

struct Dataset {
  // Pixels scaled to [0, 1], (N, 1, rows, cols) float32.
  std::vector<float> images;
  // Class indices as float32 (what softmax_cross_entropy takes).
  std::vector<float> labels;
  int64_t size = 0, rows = 0, cols = 0;
};

// Reads a gzip'd IDX image file (magic 2051) and label file (2049). A
// missing file is NotFound naming it (and `package_hint`, if given); a
// malformed one is InvalidArgument naming the file and the problem.
Dataset LoadIdx(const std::string& images_gz, const std::string& labels_gz,
                const std::string& package_hint = "");

// train-*-ubyte.gz or t10k-*-ubyte.gz under `dir`.
Dataset LoadFashionMNIST(const std::string& dir, bool train);

// Mini-batches in a (re)shuffled order; the last, smaller batch is
// dropped so every batch has the same shape.
//
// Sharded for data-parallel training (shard = rank, num_shards = number
// of ranks): every shard shuffles with the same seed, each global batch is
// batch_size * num_shards consecutive examples of that order, and shard k
// gets its k-th slice, so the ranks together see exactly what one process
// with the global batch would.
class BatchIterator {
 public:
  BatchIterator(const Dataset& data, int64_t batch_size, bool shuffle,
                uint64_t seed, int shard = 0, int num_shards = 1);
  // The next batch as fresh CPU arrays; false at the end of an epoch (the
  // next call starts a new, reshuffled epoch).
  bool Next(NDArray* images, NDArray* labels);
  int64_t batches_per_epoch() const;

 private:
  const Dataset& data_;
  const int64_t batch_size_;
  const bool shuffle_;
  const int shard_, num_shards_;
  std::mt19937_64 rng_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0;
};

}  // namespace data
}  // namespace mx

#endif  // MXCORE_TOOLS_DATA_IDX_H_
