#include "kvstore/rank_notices.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace mx {
namespace kvstore {

void RankNotices::Start(MPI_Comm world) {
  MPI_Comm_dup(world, &comm_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Irecv(&incoming_, sizeof(Wire), MPI_BYTE, MPI_ANY_SOURCE, 0, comm_,
            &receive_);
}

std::optional<RankNotices::Notice> RankNotices::Poll() {
  if (receive_ == MPI_REQUEST_NULL) return std::nullopt;
  int done = 0;
  if (MPI_Test(&receive_, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) {
    return std::nullopt;
  }
  incoming_.text[sizeof(incoming_.text) - 1] = '\0';
  Notice notice{static_cast<Kind>(incoming_.kind), incoming_.rank,
                incoming_.seq, incoming_.text};
  MPI_Irecv(&incoming_, sizeof(Wire), MPI_BYTE, MPI_ANY_SOURCE, 0, comm_,
            &receive_);
  return notice;
}

void RankNotices::SendToAll(Kind kind, int64_t seq, std::string_view text,
                            double seconds) {
  if (comm_ == MPI_COMM_NULL) return;
  // Kept until the process ends: a send whose peer is gone may still read
  // it after this returns.
  sent_.emplace_back();
  Wire& out = sent_.back();
  out.kind = kind;
  out.rank = rank_;
  out.seq = seq;
  const size_t n = std::min(text.size(), sizeof(out.text) - 1);
  std::memcpy(out.text, text.data(), n);
  std::vector<MPI_Request> sends;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Request request;
    if (MPI_Isend(&out, sizeof(Wire), MPI_BYTE, r, 0, comm_, &request) ==
        MPI_SUCCESS) {
      sends.push_back(request);
    }
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int all_done = 0;
    if (MPI_Testall(static_cast<int>(sends.size()), sends.data(), &all_done,
                    MPI_STATUSES_IGNORE) != MPI_SUCCESS ||
        all_done || std::chrono::steady_clock::now() > deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  // A send still pending (its peer is gone) is left to MPI.
  for (MPI_Request& r : sends) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
}

void RankNotices::Finish() {
  if (comm_ == MPI_COMM_NULL) return;
  if (receive_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&receive_);
    MPI_Wait(&receive_, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&comm_);
}

}  // namespace kvstore
}  // namespace mx
