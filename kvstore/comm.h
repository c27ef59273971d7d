// Comm: how a KVStore sums arrays across worker processes. Internal to
// //kvstore.
//
// Each call pushes engine operations (FnProperty::kCollective) that write
// the given arrays in place, so reductions wait for the computations that
// produce their inputs and later readers wait for them. Every process must
// make the same calls in the same order (the store's users do: the same
// program on every rank).
#ifndef MXCORE_KVSTORE_COMM_H_
#define MXCORE_KVSTORE_COMM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kvstore/kvstore.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace kvstore {

// An array reduced or broadcast in place, with the key it belongs to (for
// the cross-rank agreement check and error messages).
struct Piece {
  int key = 0;
  NDArray array;
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Each array becomes the sum of that array over all processes.
  virtual void AllReduce(std::vector<Piece> pieces, int priority) = 0;
  // Each array becomes rank 0's contents of it.
  virtual void Broadcast(std::vector<Piece> pieces, int priority) = 0;
  // Blocks until every process called Barrier (after the work pushed
  // before it).
  virtual void Barrier() = 0;
  virtual CommStats stats() const { return {}; }
  // Tells the other processes this one gave up (KVStore::Abort).
  virtual void Abort(const std::string& /*reason*/) {}
};

// One process: reductions are the identity.
std::unique_ptr<Comm> MakeLocalComm();

// Open MPI processes (mpirun); ConfigError when built without MPI or when
// MPI cannot start. All stores of a process share one communication
// thread, which initializes MPI (MPI_THREAD_FUNNELED) and finalizes it at
// exit.
std::unique_ptr<Comm> MakeMpiComm();

// Comms of store types built as targets of their own (//kvstore:nccl_comm,
// which needs CUDA), registered at static initialization; the factory
// throws a typed error when the type cannot run here.
using CommFactory = std::function<std::unique_ptr<Comm>()>;
void RegisterCommType(const std::string& type, CommFactory factory);
// Null when no linked target registered `type`.
CommFactory FindCommType(const std::string& type);

// Consecutive pieces of one dtype grouped into messages of at most
// `bucket_bytes` (a piece larger than that is a message of its own), in
// order. Returns the index ranges [begin, end) of each group.
std::vector<std::pair<size_t, size_t>> Buckets(const std::vector<Piece>& pieces,
                                               int64_t bucket_bytes);

// MX_KVSTORE_BUCKET_BYTES (default 1 MiB); ConfigError when bad.
int64_t BucketBytesFromEnv();

}  // namespace kvstore
}  // namespace mx

#endif  // MXCORE_KVSTORE_COMM_H_
