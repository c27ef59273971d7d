#include "kvstore/rank_notices.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace mx {
namespace kvstore {

void CheckMpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw RuntimeError(absl::StrCat("KVStore dist_sync: ", what,
                                  " failed: ", std::string(text, len)));
}

void RankNotices::Start(MPI_Comm comm) {
  CheckMpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  CheckMpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
           "MPI_Comm_set_errhandler");
  CheckMpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  CheckMpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  CheckMpi(MPI_Irecv(&incoming_, sizeof(Wire), MPI_BYTE, MPI_ANY_SOURCE, 0,
                     comm_, &receive_),
           "MPI_Irecv");
}

bool RankNotices::Take(Wire* notice) {
  if (receive_ == MPI_REQUEST_NULL) return false;
  int done = 0;
  CheckMpi(MPI_Test(&receive_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  if (!done) return false;
  *notice = incoming_;
  notice->text[sizeof(notice->text) - 1] = '\0';
  CheckMpi(MPI_Irecv(&incoming_, sizeof(Wire), MPI_BYTE, MPI_ANY_SOURCE, 0,
                     comm_, &receive_),
           "MPI_Irecv");
  return true;
}

bool RankNotices::Drain(const std::string& what, int64_t seq) {
  Wire n;
  bool peer_gave_up = false;
  while (Take(&n)) {
    if (n.kind == kFailed) {
      if (!failed_) failed_ = n;  // The first failure is the cause.
    } else {
      gave_up_.insert(n.rank);
      peer_gave_up = true;
    }
  }
  // A peer that failed after finishing this collective did its part in
  // it: this one still completes, and the next one fails.
  if (failed_ && failed_->seq < seq) {
    throw RuntimeError(absl::StrCat(what, " cannot complete: rank ",
                                    failed_->rank, " failed: ", failed_->text));
  }
  return peer_gave_up;
}

void RankNotices::Read(const std::string& what, int64_t seq, double timeout_s) {
  if (Drain(what, seq)) GiveUp(what, seq, timeout_s, /*own_timeout=*/false);
}

void RankNotices::GiveUp(const std::string& what, int64_t seq, double timeout_s,
                         bool own_timeout) {
  if (!sent_timeout_) {
    sent_timeout_ = true;
    SendToAll(kTimedOut, seq, "", /*seconds=*/1);
  }
  // The others' timeouts fire at about the same time: wait a little for
  // their notices, so that only silent ranks are named as such.
  const auto grace_end =
      std::chrono::steady_clock::now() +
      std::chrono::duration<double>(std::min(2.0, timeout_s));
  while (static_cast<int>(gave_up_.size()) < size_ - 1 &&
         std::chrono::steady_clock::now() < grace_end) {
    // Given up anyway: a failed peer is the better explanation.
    Drain(what, /*seq=*/std::numeric_limits<int64_t>::max());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<int> silent, waited;
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) (gave_up_.count(r) ? waited : silent).push_back(r);
  }
  std::string message =
      own_timeout
          ? absl::StrCat(what, " did not complete within ", timeout_s,
                         " s (MX_KVSTORE_TIMEOUT)")
          : absl::StrCat(what, " cannot complete: rank(s) ",
                         absl::StrJoin(waited, ", "), " gave up waiting after ",
                         timeout_s, " s (MX_KVSTORE_TIMEOUT)");
  if (!silent.empty()) {
    absl::StrAppend(&message, ": rank(s) ", absl::StrJoin(silent, ", "),
                    " never reported waiting in a collective (stalled, still "
                    "computing or no longer calling the store)");
  }
  if (own_timeout && !waited.empty()) {
    absl::StrAppend(&message, "; rank(s) ", absl::StrJoin(waited, ", "),
                    " gave up too");
  }
  throw RuntimeError(message);
}

void RankNotices::SendFailed(int64_t completed, std::string_view reason) {
  SendToAll(kFailed, completed, reason, /*seconds=*/2);
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
  const size_t room = sizeof(out.text) - 1;
  if (text.size() <= room) {
    std::memcpy(out.text, text.data(), text.size());
  } else {
    std::memcpy(out.text, text.data(), room - 3);
    std::memcpy(out.text + room - 3, "...", 3);
  }
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
