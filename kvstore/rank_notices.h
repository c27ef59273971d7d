// RankNotices: short point-to-point messages a dist_sync rank sends every
// other rank outside the collectives, so that a rank that failed or
// stalled is named instead of leaving the others waiting out
// MX_KVSTORE_TIMEOUT in silence. Internal to //kvstore; only the
// communication thread calls it (MPI_THREAD_FUNNELED).
//
//   notices.Start(MPI_COMM_WORLD);          // posts the first receive
//   if (auto n = notices.Poll()) ...        // while waiting on a collective
//   notices.SendToAll(RankNotices::kFailed, seq, "out of memory");
#ifndef MXCORE_KVSTORE_RANK_NOTICES_H_
#define MXCORE_KVSTORE_RANK_NOTICES_H_

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace mx {
namespace kvstore {

class RankNotices {
 public:
  enum Kind : int32_t {
    kFailed = 1,    // The sender gave up (KVStore::Abort); text says why.
    kTimedOut = 2,  // The sender waited MX_KVSTORE_TIMEOUT in collective seq.
  };
  struct Notice {
    Kind kind;
    int rank;     // The sender.
    int64_t seq;  // The sender's collective count when it sent.
    std::string text;
  };

  // Duplicates `world` (so notices never match the collectives' traffic)
  // and posts the first receive.
  void Start(MPI_Comm world);
  // The next notice that arrived, if any.
  std::optional<Notice> Poll();
  // Sends a notice to every other rank and waits at most `seconds` for the
  // sends to leave (small messages go at once; a dead peer does not block).
  void SendToAll(Kind kind, int64_t seq, std::string_view text, double seconds);
  // Cancels the pending receive and frees the communicator.
  void Finish();

 private:
  // The wire format: fixed size, so one receive buffer fits every notice.
  struct Wire {
    int32_t kind;
    int32_t rank;
    int64_t seq;
    char text[240];  // NUL-terminated, truncated.
  };
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  Wire incoming_{};
  std::deque<Wire> sent_;  // Stable addresses for pending sends.
  MPI_Request receive_ = MPI_REQUEST_NULL;
};

}  // namespace kvstore
}  // namespace mx

#endif  // MXCORE_KVSTORE_RANK_NOTICES_H_
