// RankNotices: short point-to-point messages a dist_sync rank sends every
// other rank outside the collectives, so that a rank that failed or
// stalled is named instead of leaving the others waiting out
// MX_KVSTORE_TIMEOUT in silence. Internal to //kvstore; only the
// communication thread calls it (MPI_THREAD_FUNNELED).
//
//   notices.Start(comm);                  // posts the first receive
//   notices.Read(what);                   // while waiting on a collective:
//                                         // throws when a peer failed
//   notices.GiveUp(what, seq, timeout);   // after MX_KVSTORE_TIMEOUT
//   notices.SendFailed(completed, "why"); // KVStore::Abort
#ifndef MXCORE_KVSTORE_RANK_NOTICES_H_
#define MXCORE_KVSTORE_RANK_NOTICES_H_

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace mx {
namespace kvstore {

// Throws RuntimeError "KVStore dist_sync: <what> failed: <MPI's text>"
// unless rc is MPI_SUCCESS.
void CheckMpi(int rc, const char* what);

class RankNotices {
 public:
  // Duplicates `comm` (so notices never match the collectives' traffic)
  // and posts the first receive.
  void Start(MPI_Comm comm);
  // Handles the notices that arrived while this rank waits in collective
  // number `seq` (`what` names the rank and the collective, for errors):
  // a peer that failed before finishing collective `seq` makes it throw a
  // RuntimeError naming that peer and its reason (one that failed after
  // it did its part: this collective completes, the next one throws); a
  // peer that gave up waiting (its timeout) makes this rank give up too
  // (GiveUp), so that every rank names the silent ones.
  void Read(const std::string& what, int64_t seq, double timeout_s);
  // After MX_KVSTORE_TIMEOUT (or a peer's): tells the other ranks, gives
  // theirs a moment to arrive, and throws a RuntimeError naming the ranks
  // that never reported waiting (stalled, still computing, or no longer
  // calling the store) and those that gave up.
  [[noreturn]] void GiveUp(const std::string& what, int64_t seq,
                           double timeout_s, bool own_timeout);
  // Tells every other rank this one failed (KVStore::Abort) after
  // finishing `completed` collectives.
  void SendFailed(int64_t completed, std::string_view reason);
  // Cancels the pending receive and frees the communicator.
  void Finish();

 private:
  enum Kind : int32_t {
    kFailed = 1,    // The sender gave up (KVStore::Abort) after finishing
                    // seq collectives; text says why.
    kTimedOut = 2,  // The sender waited MX_KVSTORE_TIMEOUT in collective seq.
  };
  // The wire format: fixed size, so one receive buffer fits every notice.
  struct Wire {
    int32_t kind;
    int32_t rank;
    int64_t seq;
    char text[496];  // NUL-terminated; "..." ends a cut one.
  };
  // True when a notice was taken (the receive is posted again).
  bool Take(Wire* notice);
  // Takes every notice that arrived: throws for a peer that failed before
  // finishing collective `seq`; true when a peer gave up waiting.
  bool Drain(const std::string& what, int64_t seq);
  // Sends to every other rank; waits at most `seconds` for the sends to
  // leave (small messages go at once; a dead peer does not block).
  void SendToAll(Kind kind, int64_t seq, std::string_view text, double seconds);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  Wire incoming_{};
  MPI_Request receive_ = MPI_REQUEST_NULL;
  std::deque<Wire> sent_;       // Stable addresses for pending sends.
  std::set<int> gave_up_;       // Peers whose timeout notice arrived.
  std::optional<Wire> failed_;  // The first failure notice.
  bool sent_timeout_ = false;
};

}  // namespace kvstore
}  // namespace mx

#endif  // MXCORE_KVSTORE_RANK_NOTICES_H_
