// The parts of Comm that do not depend on MPI: the one-process Comm and the
// grouping of arrays into messages.
#include "kvstore/comm.h"

#include <map>
#include <mutex>

#include "base/env.h"

namespace mx {
namespace kvstore {
namespace {

class LocalComm : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void AllReduce(std::vector<Piece>, int) override {}
  void Broadcast(std::vector<Piece>, int) override {}
  void Barrier() override {}
};

}  // namespace

std::unique_ptr<Comm> MakeLocalComm() { return std::make_unique<LocalComm>(); }

namespace {
std::mutex& CommTypesMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, CommFactory>& CommTypes() {
  static auto* types = new std::map<std::string, CommFactory>();
  return *types;
}
}  // namespace

void RegisterCommType(const std::string& type, CommFactory factory) {
  std::lock_guard<std::mutex> lock(CommTypesMutex());
  CommTypes()[type] = std::move(factory);
}

CommFactory FindCommType(const std::string& type) {
  std::lock_guard<std::mutex> lock(CommTypesMutex());
  auto it = CommTypes().find(type);
  return it == CommTypes().end() ? CommFactory() : it->second;
}

std::vector<std::pair<size_t, size_t>> Buckets(const std::vector<Piece>& pieces,
                                               int64_t bucket_bytes) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t begin = 0;
  int64_t bytes = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const int64_t size =
        pieces[i].array.static_shape().Size() *
        static_cast<int64_t>(DTypeSize(pieces[i].array.dtype()));
    const bool fits = i > begin &&
                      pieces[i].array.dtype() == pieces[begin].array.dtype() &&
                      bytes + size <= bucket_bytes;
    if (i > begin && !fits) {
      out.emplace_back(begin, i);
      begin = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (begin < pieces.size()) out.emplace_back(begin, pieces.size());
  return out;
}

int64_t BucketBytesFromEnv() {
  // 1 MiB: on shared memory a message of that size costs a few hundred
  // microseconds, so the per-message latency (~10 us) is amortized, while
  // the MLP and CNN here (1-2 MB of gradients) still split into several
  // messages that overlap backward. DDP's 25 MB suits larger models.
  return env::GetInt("MX_KVSTORE_BUCKET_BYTES", int64_t{1} << 20, 1,
                     int64_t{1} << 40);
}

}  // namespace kvstore
}  // namespace mx
