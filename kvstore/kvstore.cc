#include "kvstore/kvstore.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "imperative/nd.h"
#include "kvstore/comm.h"

namespace mx {
namespace kvstore {

struct KVStore::Group {
  int key = 0;
  std::vector<NDArray> values;
  std::vector<size_t> positions;  // Where the key appears in the call.
};

namespace {

bool SameArray(const NDArray& a, const NDArray& b) {
  return a.SharesChunkWith(b) && a.byte_offset() == b.byte_offset() &&
         a.static_shape() == b.static_shape() && a.dtype() == b.dtype();
}

void CheckCounts(const char* who, size_t keys, size_t arrays,
                 const char* what) {
  if (keys != arrays) {
    throw InvalidArgument(absl::StrCat("KVStore::", who, ": ", keys,
                                       " keys but ", arrays, " ", what));
  }
}

void CheckLike(const char* who, int key, const NDArray& reference,
               const NDArray& a) {
  if (a.shape() != reference.shape()) {
    throw ShapeError(absl::StrCat("KVStore::", who, ": key ", key, " holds ",
                                  reference.shape().ToString(), ", got ",
                                  a.shape().ToString()));
  }
  if (a.dtype() != reference.dtype()) {
    throw DTypeError(absl::StrCat("KVStore::", who, ": key ", key, " holds ",
                                  DTypeName(reference.dtype()), ", got ",
                                  DTypeName(a.dtype())));
  }
}

// The sum of a key's values (one per device), on the first one's device.
NDArray Merge(const std::vector<NDArray>& values) {
  if (values.size() == 1) return values[0];
  std::vector<NDArray> here;
  for (const NDArray& v : values) {
    here.push_back(v.ctx() == values[0].ctx() ? v : v.Copy(values[0].ctx()));
  }
  return nd::add_n(here);
}

}  // namespace

std::unique_ptr<KVStore> KVStore::Create(const std::string& type) {
  if (type == "local" || type == "device") {
    return std::unique_ptr<KVStore>(new KVStore(type, MakeLocalComm()));
  }
  if (type == "dist_sync") {
    return std::unique_ptr<KVStore>(new KVStore(type, MakeMpiComm()));
  }
  if (CommFactory make = FindCommType(type)) {
    return std::unique_ptr<KVStore>(new KVStore(type, make()));
  }
  if (type == "nccl") {
    throw NotImplemented(
        "KVStore \"nccl\" needs //kvstore:nccl_comm linked (built where CUDA "
        "and NCCL are installed); use \"dist_sync\" or \"local\"");
  }
  throw NotFound(absl::StrCat("KVStore type \"", type,
                              "\": expected local, device, dist_sync or nccl"));
}

KVStore::KVStore(std::string type, std::unique_ptr<Comm> comm)
    : type_(std::move(type)), comm_(std::move(comm)) {}

KVStore::~KVStore() = default;

void KVStore::Abort(const std::string& reason) { comm_->Abort(reason); }

int KVStore::rank() const { return comm_->rank(); }
int KVStore::num_workers() const { return comm_->size(); }

const NDArray& KVStore::Stored(const char* who, int key) const {
  auto it = stored_.find(key);
  if (it == stored_.end()) {
    throw NotFound(absl::StrCat("KVStore::", who, ": key ", key,
                                " was not initialized (call Init first)"));
  }
  return it->second;
}

std::vector<KVStore::Group> KVStore::GroupByKey(
    const char* who, const std::vector<int>& keys,
    const std::vector<NDArray>& values, bool need_init) const {
  CheckCounts(who, keys.size(), values.size(), "values");
  std::vector<Group> groups;
  std::map<int, size_t> index;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (values[i].is_none()) {
      throw InvalidArgument(absl::StrCat("KVStore::", who,
                                         ": the value for key ", keys[i],
                                         " is a none array"));
    }
    auto [it, fresh] = index.emplace(keys[i], groups.size());
    if (fresh) {
      groups.push_back(Group{keys[i], {}, {}});
      if (need_init) {
        CheckLike(who, keys[i], Stored(who, keys[i]), values[i]);
      } else if (auto s = stored_.find(keys[i]); s != stored_.end()) {
        CheckLike(who, keys[i], s->second, values[i]);
      }
    }
    Group& g = groups[it->second];
    if (!g.values.empty()) CheckLike(who, g.key, g.values[0], values[i]);
    g.values.push_back(values[i]);
    g.positions.push_back(i);
  }
  return groups;
}

void KVStore::Init(const std::vector<int>& keys,
                   const std::vector<NDArray>& values) {
  std::vector<Group> groups =
      GroupByKey("Init", keys, values, /*need_init=*/false);
  for (const Group& g : groups) {
    if (stored_.count(g.key) != 0) {
      throw AlreadyExists(absl::StrCat("KVStore::Init: key ", g.key,
                                       " is initialized already"));
    }
  }
  std::vector<Piece> pieces;
  for (const Group& g : groups) {
    const NDArray& v = g.values[0];
    NDArray stored(v.shape(), v.ctx(), v.dtype());
    CopyFromTo(v, stored);
    pieces.push_back(Piece{g.key, stored});
  }
  // Stored once the communication took them: a call it refuses (an array
  // it cannot reduce) leaves the keys uninitialized.
  comm_->Broadcast(pieces, 0);
  for (const Piece& p : pieces) stored_.emplace(p.key, p.array);
}

void KVStore::Push(const std::vector<int>& keys,
                   const std::vector<NDArray>& values, int priority) {
  std::vector<Group> groups =
      GroupByKey("Push", keys, values, /*need_init=*/true);
  std::vector<Piece> pieces;
  for (const Group& g : groups) {
    const NDArray& stored = stored_.at(g.key);
    NDArray merged = Merge(g.values);
    // The reduction writes its buffer: never the caller's value.
    if (merged.ctx() != stored.ctx() || g.values.size() == 1) {
      NDArray buffer(stored.shape(), stored.ctx(), stored.dtype());
      CopyFromTo(merged, buffer, priority);
      merged = buffer;
    }
    pieces.push_back(Piece{g.key, merged});
  }
  comm_->AllReduce(pieces, priority);
  for (const Piece& p : pieces) {
    const NDArray& stored = stored_.at(p.key);
    if (updater_) {
      updater_(p.key, p.array, stored);
    } else {
      CopyFromTo(p.array, stored, priority);
    }
  }
}

void KVStore::Pull(const std::vector<int>& keys,
                   const std::vector<NDArray>& outs, int priority) {
  std::vector<Group> groups =
      GroupByKey("Pull", keys, outs, /*need_init=*/true);
  for (const Group& g : groups) {
    for (const NDArray& out : g.values) {
      CopyFromTo(stored_.at(g.key), out, priority);
    }
  }
}

void KVStore::PushPull(const std::vector<int>& keys,
                       const std::vector<NDArray>& values,
                       const std::vector<NDArray>& outs, int priority) {
  CheckCounts("PushPull", keys.size(), outs.size(), "outputs");
  if (updater_) {
    Push(keys, values, priority);
    Pull(keys, outs, priority);
    return;
  }
  std::vector<Group> groups =
      GroupByKey("PushPull", keys, values, /*need_init=*/false);
  // Every check before the collective is pushed: all ranks push it or none.
  for (const Group& g : groups) {
    for (size_t pos : g.positions) {
      if (outs[pos].is_none()) {
        throw InvalidArgument(
            absl::StrCat("KVStore::PushPull: the output for key ", g.key,
                         " is a none array"));
      }
      CheckLike("PushPull", g.key, g.values[0], outs[pos]);
    }
  }
  std::vector<Piece> pieces;
  for (const Group& g : groups) {
    const NDArray& target = outs[g.positions[0]];
    const NDArray merged = Merge(g.values);
    // In place when the one value is its own output: no copy.
    if (!SameArray(merged, target)) CopyFromTo(merged, target, priority);
    pieces.push_back(Piece{g.key, target});
  }
  comm_->AllReduce(pieces, priority);
  for (const Group& g : groups) {
    const NDArray& reduced = outs[g.positions[0]];
    for (size_t k = 1; k < g.positions.size(); ++k) {
      const NDArray& out = outs[g.positions[k]];
      if (!SameArray(out, reduced)) CopyFromTo(reduced, out, priority);
    }
    // An initialized key stores the sum, as Push would.
    if (auto s = stored_.find(g.key); s != stored_.end()) {
      CopyFromTo(reduced, s->second, priority);
    }
  }
}

void KVStore::Broadcast(const std::vector<int>& keys,
                        const std::vector<NDArray>& values,
                        const std::vector<NDArray>& outs, int priority) {
  CheckCounts("Broadcast", keys.size(), outs.size(), "outputs");
  Init(keys, values);
  Pull(keys, outs, priority);
}

void KVStore::Barrier() { comm_->Barrier(); }

CommStats KVStore::comm_stats() const { return comm_->stats(); }

void KVStore::SetOptimizer(Updater updater) { updater_ = std::move(updater); }

}  // namespace kvstore
}  // namespace mx
