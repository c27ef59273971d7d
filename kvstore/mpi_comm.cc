// Comm over Open MPI. One communication thread per process initializes MPI
// (MPI_THREAD_FUNNELED: it makes every MPI call, so the engine's workers
// never enter MPI and no thread-multiple support is needed) and runs the
// collectives in the order the program asked for them, which is the same on
// every rank. A collective is an engine operation (kCollective) writing its
// arrays: when the engine runs it (its inputs are computed), it hands the
// job to this thread and returns; the thread completes it. So reductions of
// late layers run while backward computes earlier ones.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/env.h"
#include "base/error.h"
#include "engine/engine.h"
#include "kvstore/comm.h"
#include "kvstore/rank_notices.h"

namespace mx {
namespace kvstore {
namespace {

// Every rank fails the collective together because an input failed on
// some rank: the store stays usable.
class InputFailedOnARank : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

struct Job {
  enum Kind { kAllReduce, kBroadcast, kBarrier, kStop } kind;
  std::vector<Piece> pieces;  // Host arrays.
  // Set when the engine runs the job's operation (or at once for barriers).
  bool ready = false;
  // An input's computation failed on this rank (RunContext::
  // upstream_failed), or the operation could not be pushed: the ranks
  // still meet, then every rank fails the collective.
  bool failed_here = false;
  std::optional<engine::CallbackOnComplete> on_complete;
  std::promise<void> finished;  // Barrier and stop.
};

// float16 has no MPI type: summed as 16-bit words through float.
void HalfSum(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[i] = float16::FromFloat(float16::ToFloat(a[i]) + float16::ToFloat(b[i]));
  }
}

// FNV-1a: the same on every rank of one program.
uint64_t Fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string Describe(const Job& job) {
  static const char* kNames[] = {"AllReduce", "Broadcast", "Barrier", "stop"};
  std::vector<std::string> parts;
  for (const Piece& p : job.pieces) {
    parts.push_back(absl::StrCat("key ", p.key, " ",
                                 p.array.static_shape().ToString(), " ",
                                 DTypeName(p.array.dtype())));
  }
  return absl::StrCat(kNames[job.kind], " of [", absl::StrJoin(parts, ", "),
                      "]");
}

class MpiWorld {
 public:
  // Starts the thread and MPI once per process; throws ConfigError (every
  // call) when MPI could not start.
  static MpiWorld& Get() {
    static MpiWorld* world = [] {
      // The engine must outlive the thread's last jobs: created first, it
      // is destroyed after the exit handler below ran.
      engine::Engine::Get();
      static MpiWorld* created = new MpiWorld();
      std::atexit([] { created->Stop(); });
      return created;
    }();
    if (world->start_error_) std::rethrow_exception(world->start_error_);
    return *world;
  }

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Queues a job (in the order every rank runs them); false once the
  // thread has stopped at exit (the job will never run).
  bool Enqueue(std::shared_ptr<Job> job) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return false;
    queue_.push_back(std::move(job));
    if (queue_.back()->ready) cv_.notify_one();
    return true;
  }

  CommStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

  // Tells the other ranks this one gave up (they fail naming it) and breaks
  // this process's collectives. Waits up to a few seconds for the notices
  // to leave; once is enough.
  void Abort(const std::string& reason) {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopped_ || abort_requested_) return;
    abort_requested_ = true;
    abort_reason_ = reason;
    abort_pending_ = true;
    cv_.notify_one();
    abort_cv_.wait_for(lock, std::chrono::seconds(5),
                       [&] { return !abort_pending_; });
  }

  void MarkReady(Job* job, std::optional<engine::CallbackOnComplete> done,
                 bool failed_here) {
    std::lock_guard<std::mutex> lock(mu_);
    job->on_complete = done;
    job->failed_here = failed_here;
    job->ready = true;
    cv_.notify_one();
  }

 private:
  MpiWorld() {
    timeout_s_ = env::GetInt("MX_KVSTORE_TIMEOUT", 300, 0, 86400 * 365);
    std::promise<void> started;
    std::future<void> start = started.get_future();
    thread_ = std::thread([this, &started] { Loop(&started); });
    try {
      start.get();
    } catch (...) {
      start_error_ = std::current_exception();
    }
  }

  void Stop() {
    if (!thread_.joinable()) return;
    auto job = std::make_shared<Job>();
    job->kind = Job::kStop;
    job->ready = true;
    {
      // Later jobs (and an Abort) would never run: refuse them.
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      queue_.push_back(job);
      stopped_ = true;
      cv_.notify_one();
    }
    thread_.join();
  }

  void Start(std::promise<void>* started) {
    int initialized = 0, provided = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
              MPI_SUCCESS ||
          provided < MPI_THREAD_FUNNELED) {
        throw ConfigError(
            "KVStore dist_sync: MPI_Init_thread failed (start the program "
            "with mpirun)");
      }
      owns_mpi_ = true;
    } else {
      // Initialized by the program: this thread is not MPI's main thread.
      MPI_Query_thread(&provided);
      if (provided < MPI_THREAD_MULTIPLE) {
        throw ConfigError(
            "KVStore dist_sync: MPI was initialized by the program without "
            "MPI_THREAD_MULTIPLE; initialize it with MPI_Init_thread("
            "MPI_THREAD_MULTIPLE) or let the KVStore initialize it");
      }
    }
    CheckMpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    CheckMpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
             "MPI_Comm_set_errhandler");
    CheckMpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    CheckMpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    CheckMpi(MPI_Op_create(&HalfSum, /*commute=*/1, &half_sum_),
             "MPI_Op_create");
    notices_.Start(comm_);
    started->set_value();
  }

  void Loop(std::promise<void>* started) {
    try {
      Start(started);
    } catch (...) {
      started->set_exception(std::current_exception());
      return;
    }
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] {
          return abort_pending_ || (!queue_.empty() && queue_.front()->ready);
        });
        if (abort_pending_) {
          lock.unlock();
          SendAbort(/*completed=*/seq_);
          continue;
        }
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      if (job->kind == Job::kStop) {
        Finish();
        job->finished.set_value();
        return;
      }
      std::exception_ptr error = broken_;
      if (!error) {
        try {
          const auto start = std::chrono::steady_clock::now();
          const int64_t bytes = Run(*job);
          const double seconds = std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - start)
                                     .count();
          std::lock_guard<std::mutex> lock(mu_);
          ++stats_.collectives;
          stats_.bytes += bytes;
          stats_.seconds += seconds;
        } catch (const InputFailedOnARank&) {
          // The rank whose input failed keeps that error (the engine gives
          // it to what the job writes); the others get this one.
          if (!job->failed_here) error = std::current_exception();
        } catch (const InvalidArgument&) {
          error = std::current_exception();  // Every rank agrees on it.
        } catch (const Error&) {
          // MPI failed or timed out: the ranks may be out of step.
          error = broken_ = std::current_exception();
        } catch (const std::exception& e) {
          error = broken_ = std::make_exception_ptr(RuntimeError(absl::StrCat(
              "KVStore dist_sync: ", Describe(*job), ": ", e.what())));
        }
      }
      if (job->on_complete) {
        if (error) {
          (*job->on_complete)(error);
        } else {
          (*job->on_complete)();
        }
      } else if (error) {
        job->finished.set_exception(error);
      } else {
        job->finished.set_value();
      }
    }
  }

  void Finish() {
    // Broken (an MPI failure, a timeout, a peer's or this rank's abort): a
    // collective may still be pending, so MPI cannot end; mpirun reports
    // the rank as ended without MPI_Finalize, and the job fails.
    if (broken_) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;  // The program finalized the MPI it started.
    notices_.Finish();
    MPI_Op_free(&half_sum_);
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  // Sends this rank's failure notice (Abort) and breaks the store.
  void SendAbort(int64_t completed) {
    std::string reason;
    {
      std::lock_guard<std::mutex> lock(mu_);
      reason = abort_reason_;
    }
    // A store already broken by a peer's notice, a timeout or MPI tells
    // nobody: the peers know, and a second notice could be read first and
    // blame the wrong rank.
    if (!broken_) {
      notices_.SendFailed(completed, reason);
      broken_ = std::make_exception_ptr(RuntimeError(absl::StrCat(
          "KVStore dist_sync: rank ", rank_, " aborted: ", reason)));
    }
    std::lock_guard<std::mutex> lock(mu_);
    abort_pending_ = false;
    abort_cv_.notify_all();
  }

  // Completes a nonblocking collective, giving the CPU to the computation
  // while it waits: yields first (small messages finish within
  // microseconds), then polls every 50 us, reading the other ranks'
  // notices too. A failed rank's notice, this rank's Abort, or
  // MX_KVSTORE_TIMEOUT seconds end it with an error, and Loop marks the
  // store broken: this and every later collective fail.
  void Wait(MPI_Request* request, const std::string& what) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (;;) {
      int done = 0;
      CheckMpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      if (abort_pending_) {
        SendAbort(/*completed=*/seq_ - 1);
        std::rethrow_exception(broken_);
      }
      notices_.Read(what, seq_, timeout_s_);
      const double waited =
          std::chrono::duration<double>(Clock::now() - start).count();
      if (timeout_s_ > 0 && waited > timeout_s_) {
        notices_.GiveUp(what, seq_, timeout_s_, /*own_timeout=*/true);
      }
      if (waited < 1e-3) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  // Every rank must ask for the same collective: compares a fingerprint of
  // the job's kind, keys, shapes and dtypes across ranks first, so a
  // mismatch is an error on every rank instead of a wrong sum or a hang.
  void Agree(const Job& job, const std::string& what) {
    const std::string mine = Describe(job);
    const uint64_t local[2] = {Fingerprint(mine), job.failed_here ? 1u : 0u};
    std::vector<uint64_t> all(2 * size_);
    MPI_Request request;
    CheckMpi(MPI_Iallgather(local, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T,
                            comm_, &request),
             "MPI_Iallgather");
    Wait(&request, what);
    std::vector<int> differ, failed;
    for (int r = 0; r < size_; ++r) {
      if (all[2 * r] != all[0]) differ.push_back(r);
      if (all[2 * r + 1] != 0) failed.push_back(r);
    }
    if (!failed.empty()) {
      throw InputFailedOnARank(absl::StrCat(
          "KVStore dist_sync: ", mine, ": an input failed on rank(s) ",
          absl::StrJoin(failed, ", "),
          ", so no rank ran it (that rank's error reached its outputs)"));
    }
    if (!differ.empty()) {
      throw InvalidArgument(absl::StrCat(
          "KVStore dist_sync: the ranks disagree on a collective: rank(s) ",
          absl::StrJoin(differ, ", "),
          " asked for different keys, shapes or dtypes than rank 0 (rank ",
          rank_, " asked for ", mine, ")"));
    }
  }

  // Returns the bytes sent.
  int64_t Run(Job& job) {
    ++seq_;
    // Names this rank and the collective in errors.
    const std::string what =
        absl::StrCat("KVStore dist_sync: rank ", rank_, ": ", Describe(job));
    Agree(job, what);
    MPI_Request request;
    if (job.kind == Job::kBarrier) {
      CheckMpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
      Wait(&request, what);
      return 0;
    }
    const DType dtype = job.pieces[0].array.dtype();
    MPI_Datatype type;
    MPI_Op op = MPI_SUM;
    switch (dtype) {
      case DType::kFloat32:
        type = MPI_FLOAT;
        break;
      case DType::kFloat64:
        type = MPI_DOUBLE;
        break;
      case DType::kFloat16:
        type = MPI_UINT16_T;
        op = half_sum_;
        break;
      case DType::kUInt8:
        type = MPI_UINT8_T;
        break;
      case DType::kInt8:
        type = MPI_INT8_T;
        break;
      case DType::kInt32:
        type = MPI_INT32_T;
        break;
      case DType::kInt64:
        type = MPI_INT64_T;
        break;
      default:
        throw DTypeError(absl::StrCat("KVStore dist_sync: ", Describe(job),
                                      ": dtype ", DTypeName(dtype),
                                      " cannot be reduced"));
    }
    // One array is sent from its own memory; several are packed.
    const size_t element = DTypeSize(dtype);
    int64_t count = 0;
    for (const Piece& p : job.pieces) count += p.array.static_shape().Size();
    const bool packed = job.pieces.size() > 1;
    // Copies every piece into the pack (or back out of it).
    auto copy_pieces = [&](bool into_pack) {
      size_t offset = 0;
      for (const Piece& p : job.pieces) {
        const size_t bytes = p.array.static_shape().Size() * element;
        char* piece = static_cast<char*>(p.array.blob().dptr);
        if (into_pack) {
          std::memcpy(pack_.data() + offset, piece, bytes);
        } else {
          std::memcpy(piece, pack_.data() + offset, bytes);
        }
        offset += bytes;
      }
    };
    void* data = job.pieces[0].array.blob().dptr;
    if (packed) {
      pack_.resize(static_cast<size_t>(count) * element);
      data = pack_.data();
      copy_pieces(/*into_pack=*/true);
    }
    // Large messages go in 1 MiB segments, one collective each: Open MPI's
    // nonblocking algorithms advance a step per poll, so one huge request
    // polled at intervals crawls (a 64 MB allreduce ran at 0.25 GB/s), while
    // segments of the size that reaches full speed keep that speed.
    const int64_t segment = std::max<int64_t>(1, (int64_t{1} << 20) / element);
    for (int64_t begin = 0; begin < count; begin += segment) {
      const int n = static_cast<int>(std::min(segment, count - begin));
      char* at = static_cast<char*>(data) + begin * element;
      if (job.kind == Job::kAllReduce) {
        CheckMpi(MPI_Iallreduce(MPI_IN_PLACE, at, n, type, op, comm_, &request),
                 "MPI_Iallreduce");
      } else {
        CheckMpi(MPI_Ibcast(at, n, type, 0, comm_, &request), "MPI_Ibcast");
      }
      Wait(&request, what);
    }
    if (packed) copy_pieces(/*into_pack=*/false);
    return count * static_cast<int64_t>(element);
  }

  std::thread thread_;
  std::exception_ptr start_error_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopped_ = false;  // Stop ran: no job is queued any more.
  // Abort: asked once; pending until the thread sent the notices.
  bool abort_requested_ = false;
  std::atomic<bool> abort_pending_{false};
  std::string abort_reason_;
  std::condition_variable abort_cv_;
  CommStats stats_;
  // Only the thread touches these after Start.
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Op half_sum_ = MPI_OP_NULL;
  int rank_ = 0, size_ = 1;
  bool owns_mpi_ = false;
  int64_t timeout_s_ = 300;
  std::exception_ptr broken_;
  std::vector<char> pack_;
  RankNotices notices_;
  int64_t seq_ = 0;  // Collectives this rank started.
};

constexpr char kStopped[] =
    "KVStore dist_sync: the communication thread stopped at exit";

class MpiComm : public Comm {
 public:
  MpiComm() : world_(MpiWorld::Get()), bucket_bytes_(BucketBytesFromEnv()) {}
  int rank() const override { return world_.rank(); }
  int size() const override { return world_.size(); }

  void AllReduce(std::vector<Piece> pieces, int priority) override {
    Collective(Job::kAllReduce, std::move(pieces), priority);
  }
  void Broadcast(std::vector<Piece> pieces, int priority) override {
    Collective(Job::kBroadcast, std::move(pieces), priority);
  }

  CommStats stats() const override { return world_.stats(); }
  void Abort(const std::string& reason) override { world_.Abort(reason); }

  void Barrier() override {
    auto job = std::make_shared<Job>();
    job->kind = Job::kBarrier;
    job->ready = true;
    std::future<void> done = job->finished.get_future();
    if (!world_.Enqueue(job)) throw StateError(kStopped);
    done.get();
  }

 private:
  // One engine operation per bucket, writing the bucket's arrays (through
  // host copies for device arrays: Open MPI here is not CUDA-aware).
  void Collective(Job::Kind kind, std::vector<Piece> pieces, int priority) {
    std::vector<NDArray> originals;
    for (Piece& p : pieces) {
      originals.push_back(p.array);
      if (!p.array.ctx().is_host()) {
        NDArray host(p.array.shape(), Context::CPU(), p.array.dtype());
        CopyFromTo(p.array, host, priority);
        p.array = host;
      }
    }
    engine::Engine* engine = engine::Engine::Get();
    for (const auto& [begin, end] : Buckets(pieces, bucket_bytes_)) {
      auto job = std::make_shared<Job>();
      job->kind = kind;
      std::vector<engine::VarHandle> vars;
      for (size_t i = begin; i < end; ++i) {
        pieces[i].array.CheckAndAlloc();
        // Views of one array share its var: written once.
        const engine::VarHandle v = pieces[i].array.var();
        if (std::find(vars.begin(), vars.end(), v) == vars.end()) {
          vars.push_back(v);
        }
        job->pieces.push_back(pieces[i]);
      }
      // The order every rank runs them in; the push follows at once, so
      // the job becomes ready (kCollective operations are never skipped).
      if (!world_.Enqueue(job)) throw StateError(kStopped);
      MpiWorld* world = &world_;
      try {
        engine->PushAsync(
            [world, job](engine::RunContext rctx,
                         engine::CallbackOnComplete done) {
              world->MarkReady(job.get(), done, rctx.upstream_failed);
            },
            Context::CPU(), {}, vars, engine::FnProperty::kCollective, priority,
            kind == Job::kAllReduce ? "kvstore_allreduce"
                                    : "kvstore_broadcast");
      } catch (...) {
        // Still meet the other ranks (they fail this collective too), so
        // the queue and the ranks stay in step.
        world->MarkReady(job.get(), std::nullopt, /*failed_here=*/true);
        throw;
      }
    }
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (!originals[i].ctx().is_host()) {
        CopyFromTo(pieces[i].array, originals[i], priority);
      }
    }
  }

  MpiWorld& world_;
  const int64_t bucket_bytes_;
};

}  // namespace

std::unique_ptr<Comm> MakeMpiComm() { return std::make_unique<MpiComm>(); }

}  // namespace kvstore
}  // namespace mx
