#include "tools/data/idx.h"

#include <zlib.h>

#include <cstdio>
#include <set>

#include "base/error.h"
#include "gtest/gtest.h"

namespace mx {
namespace data {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

void WriteGzip(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

void Put32(std::vector<uint8_t>* b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b->push_back(static_cast<uint8_t>(v >> s));
}

// n images of 2x3 whose pixels are all equal to the image's index, and
// labels i % 10.
void WriteTiny(int n, const std::string& images, const std::string& labels) {
  std::vector<uint8_t> img, lab;
  Put32(&img, 2051);
  Put32(&img, n);
  Put32(&img, 2);
  Put32(&img, 3);
  for (int i = 0; i < n; ++i) img.insert(img.end(), 6, static_cast<uint8_t>(i));
  Put32(&lab, 2049);
  Put32(&lab, n);
  for (int i = 0; i < n; ++i) lab.push_back(static_cast<uint8_t>(i % 10));
  WriteGzip(images, img);
  WriteGzip(labels, lab);
}

TEST(Idx, LoadsAndBatches) {
  const std::string images = TempPath("img.gz"), labels = TempPath("lab.gz");
  WriteTiny(10, images, labels);
  const Dataset d = LoadIdx(images, labels);
  EXPECT_EQ(d.size, 10);
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.cols, 3);
  EXPECT_FLOAT_EQ(d.images[6 * 4], 4 / 255.0f);
  EXPECT_EQ(d.labels[7], 7.0f);

  BatchIterator it(d, 4, /*shuffle=*/true, /*seed=*/3);
  EXPECT_EQ(it.batches_per_epoch(), 2);
  std::set<float> seen;
  NDArray x, y;
  int batches = 0;
  while (it.Next(&x, &y)) {
    ++batches;
    EXPECT_EQ(x.shape(), TShape({4, 1, 2, 3}));
    const std::vector<float> xv = x.ToVector<float>(), yv = y.ToVector<float>();
    for (int b = 0; b < 4; ++b) {
      // Pixels and label stay paired through the shuffle.
      EXPECT_FLOAT_EQ(xv[b * 6] * 255.0f, yv[b]);
      seen.insert(yv[b]);
    }
  }
  EXPECT_EQ(batches, 2);
  EXPECT_EQ(seen.size(), 8u);    // Distinct examples; the last 2 dropped.
  EXPECT_TRUE(it.Next(&x, &y));  // A new epoch.
}

TEST(Idx, ShardsTogetherSeeTheGlobalBatches) {
  const std::string images = TempPath("s_img.gz"),
                    labels = TempPath("s_lab.gz");
  WriteTiny(20, images, labels);
  const Dataset d = LoadIdx(images, labels);
  // One process with batch 6 and three shards with batch 2 each, the same
  // seed: shard k's batch is the k-th third of the global one, two epochs.
  BatchIterator whole(d, 6, /*shuffle=*/true, /*seed=*/5);
  std::vector<BatchIterator> shards;
  for (int k = 0; k < 3; ++k) shards.emplace_back(d, 2, true, 5, k, 3);
  EXPECT_EQ(shards[1].batches_per_epoch(), 3);
  for (int epoch = 0; epoch < 2; ++epoch) {
    NDArray x, y;
    while (whole.Next(&x, &y)) {
      const std::vector<float> want = y.ToVector<float>();
      for (int k = 0; k < 3; ++k) {
        NDArray sx, sy;
        ASSERT_TRUE(shards[k].Next(&sx, &sy));
        const std::vector<float> got = sy.ToVector<float>();
        EXPECT_EQ(got, std::vector<float>(want.begin() + 2 * k,
                                          want.begin() + 2 * k + 2));
      }
    }
    for (auto& s : shards) {
      NDArray sx, sy;
      EXPECT_FALSE(s.Next(&sx, &sy));
    }
  }
  EXPECT_THROW(BatchIterator(d, 2, true, 5, 3, 3), InvalidArgument);
  EXPECT_THROW(BatchIterator(d, 8, true, 5, 0, 3), InvalidArgument);
}

TEST(Idx, ClearErrors) {
  try {
    LoadFashionMNIST("/nonexistent", true);
    FAIL();
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/train-images"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"),
              std::string::npos);
  }
  const std::string images = TempPath("a.gz"), labels = TempPath("b.gz");
  WriteTiny(3, images, labels);
  try {
    LoadIdx(labels, images);  // Swapped: wrong magic numbers.
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("magic number 2049, expected 2051"),
              std::string::npos);
  }
  WriteGzip(images, {0, 0, 8, 3, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 9});
  EXPECT_THROW(LoadIdx(images, labels), InvalidArgument);  // Truncated.
  EXPECT_THROW(BatchIterator(LoadIdx(TempPath("a.gz"), labels), 0, false, 1),
               InvalidArgument);
}

// An images file whose header says count x rows x cols but holds no pixel
// data, and a labels file of `count` zero labels.
void WriteHeaderOnly(uint32_t count, uint32_t rows, uint32_t cols,
                     const std::string& images, const std::string& labels) {
  std::vector<uint8_t> img, lab;
  Put32(&img, 2051);
  Put32(&img, count);
  Put32(&img, rows);
  Put32(&img, cols);
  Put32(&lab, 2049);
  Put32(&lab, count);
  lab.resize(lab.size() + count, 0);
  WriteGzip(images, img);
  WriteGzip(labels, lab);
}

TEST(Idx, HeaderSizesThatOverflowAreAnError) {
  const std::string images = TempPath("o.gz"), labels = TempPath("ol.gz");
  WriteHeaderOnly(4, 1u << 31, 1u << 31, images, labels);
  try {
    LoadIdx(images, labels);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("multiply past int64"),
              std::string::npos)
        << e.what();
  }
}

TEST(Idx, EmptyImagesAreAnError) {
  const std::string images = TempPath("z.gz"), labels = TempPath("zl.gz");
  for (auto [rows, cols] : {std::pair<uint32_t, uint32_t>{0, 3}, {3, 0}}) {
    WriteHeaderOnly(2, rows, cols, images, labels);
    try {
      LoadIdx(images, labels);
      FAIL();
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("must be positive"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Idx, FashionMNISTIsInstalled) {
  const Dataset test = LoadFashionMNIST(kFashionMNISTDir, /*train=*/false);
  EXPECT_EQ(test.size, 10000);
  EXPECT_EQ(test.rows, 28);
  EXPECT_EQ(test.cols, 28);
}

}  // namespace
}  // namespace data
}  // namespace mx
