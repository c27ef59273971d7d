// KVStore: values kept under integer keys and summed across devices and
// worker processes, in MXNet's sense (data-parallel training).
//
//   auto kv = mx::kvstore::KVStore::Create("dist_sync");  // under mpirun
//   kv->Init({0}, {weight});           // every rank now holds rank 0's value
//   kv->PushPull({0}, {grad}, {grad}); // grad = sum of every rank's grad
//   grad.WaitToRead();
//
// Types: "local" (one process; sums the values given for a key, e.g. one
// per device), "dist_sync" (processes started by mpirun, reduced with
// Open MPI; see README "Distributed training"), "nccl" (GPU arrays reduced
// with NCCL on the GPU's stream, one process; needs //kvstore:nccl_comm linked,
// else a NotImplemented error).
//
// Every call is asynchronous: it pushes engine operations that read the
// given arrays and write the outputs, so a reduction starts as soon as its
// gradients are computed and overlaps the rest of backward. dist_sync
// groups consecutive small arrays of one call into one message (buckets of
// MX_KVSTORE_BUCKET_BYTES). Bad arguments are thrown by the call itself: a
// key unknown to Push/Pull is NotFound, a shape or dtype other than the
// key's is ShapeError/DTypeError, mismatched counts InvalidArgument (under
// dist_sync a rank that throws there leaves the others waiting in that
// collective until MX_KVSTORE_TIMEOUT). What the communication finds
// reaches the caller at the next wait on an output: processes that disagree
// on the keys, shapes or dtypes of a call get an InvalidArgument on every
// rank naming the ranks that differ; an input whose computation failed on
// one rank fails the collective on every rank (that rank keeps its own
// error); an MPI failure or timeout is a RuntimeError, for this and every
// later collective.
#ifndef MXCORE_KVSTORE_KVSTORE_H_
#define MXCORE_KVSTORE_KVSTORE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx {
namespace kvstore {

class Comm;  // How values are summed across processes (comm.h).

// What a store's communication did so far (all stores of the process together).
struct CommStats {
  int64_t collectives = 0;  // Messages (buckets, broadcasts, barriers).
  int64_t bytes = 0;        // Payload summed or broadcast.
  // Time the communication thread spent in them, from the start of a
  // collective (its inputs computed) to its end, overlapping computation.
  double seconds = 0;
};

// Installed by SetOptimizer: updates `stored` in place from the summed
// pushed value `merged` of `key` (nn::KVStoreUpdater wraps an optimizer).
using Updater =
    std::function<void(int key, const NDArray& merged, const NDArray& stored)>;

class KVStore {
 public:
  // "local", "device" (the same as local), "dist_sync", "nccl", or a type
  // a linked target registered (comm.h). An unknown type is NotFound;
  // dist_sync without Open MPI is ConfigError; nccl without
  // //kvstore:nccl_comm linked is NotImplemented.
  static std::unique_ptr<KVStore> Create(const std::string& type);
  ~KVStore();
  KVStore(const KVStore&) = delete;
  KVStore& operator=(const KVStore&) = delete;

  const std::string& type() const { return type_; }
  // This process's rank in [0, num_workers()).
  int rank() const;
  int num_workers() const;

  // Stores a copy of each value under its key (a key initialized twice is
  // AlreadyExists). dist_sync stores rank 0's value on every rank.
  void Init(const std::vector<int>& keys, const std::vector<NDArray>& values);
  // Sums the values of each key (a key may be listed once per device),
  // then across workers, and stores the sum, or applies the optimizer
  // (SetOptimizer) to the stored value with it.
  void Push(const std::vector<int>& keys, const std::vector<NDArray>& values,
            int priority = 0);
  // Copies each key's stored value into its outputs.
  void Pull(const std::vector<int>& keys, const std::vector<NDArray>& outs,
            int priority = 0);
  // Push then Pull. Without an optimizer the keys need no Init: each out
  // receives the sum over workers of the key's values (outs may be the
  // values themselves, reduced in place: no copy), and an initialized key
  // stores that sum.
  void PushPull(const std::vector<int>& keys,
                const std::vector<NDArray>& values,
                const std::vector<NDArray>& outs, int priority = 0);
  // Init with `values`, then Pull into `outs`: rank 0's values everywhere.
  void Broadcast(const std::vector<int>& keys,
                 const std::vector<NDArray>& values,
                 const std::vector<NDArray>& outs, int priority = 0);
  // Blocks until every worker reached its Barrier (after the reductions
  // pushed before it).
  void Barrier();

  // Pushed values update the stored ones with `updater` after the
  // reduction (MXNet's update_on_kvstore); every rank applies it to the
  // same sum, so stored values stay equal across ranks.
  void SetOptimizer(Updater updater);
  bool has_optimizer() const { return static_cast<bool>(updater_); }

  // For a rank that cannot go on (its program caught an error): tells every
  // other rank, whose pending and later collectives then fail within
  // milliseconds with a RuntimeError naming this rank and `reason`, instead
  // of waiting out MX_KVSTORE_TIMEOUT; this process's collectives fail too
  // from then on, and the process should exit with a nonzero status (MPI
  // is not finalized). No-op for local stores.
  //   catch (const mx::Error& e) { kv->Abort(e.what()); throw; }
  void Abort(const std::string& reason);

  // Collectives, bytes and seconds of communication so far (dist_sync;
  // zeros for local), for benchmarks and the trainer's report.
  CommStats comm_stats() const;

 private:
  KVStore(std::string type, std::unique_ptr<Comm> comm);
  struct Group;  // The values of one key in one call.
  std::vector<Group> GroupByKey(const char* who, const std::vector<int>& keys,
                                const std::vector<NDArray>& values,
                                bool need_init) const;
  const NDArray& Stored(const char* who, int key) const;

  std::string type_;
  std::unique_ptr<Comm> comm_;
  std::map<int, NDArray> stored_;
  Updater updater_;
};

}  // namespace kvstore
}  // namespace mx

#endif  // MXCORE_KVSTORE_KVSTORE_H_
