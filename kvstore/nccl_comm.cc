// The "nccl" KVStore's Comm: GPU arrays summed (ncclAllReduce) and
// broadcast (ncclBroadcast) by NCCL collectives queued on the engine's
// stream of the arrays' GPU, so they run in order with the kernels that
// compute the gradients and those that read the results, without a trip
// through host memory.
//
// One process: each GPU gets a communicator of one rank (the collectives
// are then the identity, queued and run by NCCL all the same); values of
// one key on several GPUs are summed by the KVStore before the Comm sees
// them, as for "local"; keys on different GPUs go to each GPU's
// communicator. Several processes are not supported yet: creating the
// store under a launcher that started more than one is a NotImplemented
// error pointing to dist_sync.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "engine/engine.h"
#include "kvstore/comm.h"

namespace mx {
namespace kvstore {
namespace {

void CheckNccl(ncclResult_t r, const std::string& what) {
  if (r != ncclSuccess) {
    throw RuntimeError(
        absl::StrCat("KVStore \"nccl\": ", what, ": ", ncclGetErrorString(r)));
  }
}

ncclDataType_t NcclType(DType t) {
  switch (t) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kInt32:
      return ncclInt32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kUInt8:
      return ncclUint8;
    case DType::kInt8:
      return ncclInt8;
    default:
      throw DTypeError(absl::StrCat("KVStore \"nccl\": NCCL cannot reduce ",
                                    DTypeName(t), " arrays"));
  }
}

// What the process keeps per GPU: its communicator, made on first use (on
// the GPU's worker), and an engine var every NCCL operation on that GPU
// writes. NCCL forbids two threads issuing work to one communicator (or to
// two on one device) at once, and the GPU has several workers: the var
// runs the collectives of all stores one at a time, in push order. Kept
// for the life of the process (never destroyed: at exit CUDA may be gone).
class Gpus {
 public:
  static Gpus& Get() {
    static Gpus* gpus = new Gpus();
    return *gpus;
  }
  engine::VarHandle VarFor(int dev) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = vars_.find(dev);
    if (it == vars_.end()) {
      it = vars_.emplace(dev, engine::Engine::Get()->NewVariable()).first;
    }
    return it->second;
  }
  // Called inside an operation holding VarFor(dev).
  ncclComm_t CommFor(int dev) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = comms_.find(dev);
    if (it != comms_.end()) return it->second;
    ncclComm_t comm = nullptr;
    CheckNccl(ncclCommInitAll(&comm, 1, &dev),
              absl::StrCat("ncclCommInitAll on gpu(", dev, ")"));
    comms_[dev] = comm;
    return comm;
  }

 private:
  std::mutex mu_;
  std::map<int, engine::VarHandle> vars_;
  std::map<int, ncclComm_t> comms_;
};

// The number of processes a launcher started, from the variables Open MPI,
// MPICH (PMI), PMIx launchers and torchrun set; 1 when none is set.
int LaunchedProcesses() {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "WORLD_SIZE"}) {
    if (const char* v = std::getenv(name)) {
      const int n = std::atoi(v);
      if (n > 1) return n;
    }
  }
  return 1;
}

class NcclComm : public Comm {
 public:
  NcclComm() {
    if (LaunchedProcesses() > 1) {
      throw NotImplemented(absl::StrCat(
          "KVStore \"nccl\": ", LaunchedProcesses(),
          " processes were launched; several processes are not supported "
          "yet: use \"dist_sync\" (GPU arrays are reduced through host "
          "memory)"));
    }
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
      cudaGetLastError();
      throw ConfigError(absl::StrCat(
          "KVStore \"nccl\": no usable GPU (",
          err != cudaSuccess ? cudaGetErrorString(err) : "no devices", ")"));
    }
  }

  int rank() const override { return 0; }
  int size() const override { return 1; }

  void AllReduce(std::vector<Piece> pieces, int priority) override {
    Run(std::move(pieces), priority, /*broadcast=*/false);
  }
  void Broadcast(std::vector<Piece> pieces, int priority) override {
    Run(std::move(pieces), priority, /*broadcast=*/true);
  }
  // One process: nothing to meet.
  void Barrier() override {}

  // Collectives and bytes NCCL completed (counted once queued on the
  // stream without error).
  CommStats stats() const override {
    CommStats s;
    s.collectives = counts_->collectives.load();
    s.bytes = counts_->bytes.load();
    return s;
  }

 private:
  struct Counts {
    std::atomic<int64_t> collectives{0}, bytes{0};
  };

  // One engine operation per GPU of the call: the collectives of its
  // pieces in one NCCL group, queued on the operation's stream. Checks
  // every piece before pushing anything.
  void Run(std::vector<Piece> pieces, int priority, bool broadcast) {
    const char* what = broadcast ? "Broadcast" : "AllReduce";
    const int gpu = Context::DeviceTypeFromName("gpu");
    std::map<int, std::vector<Piece>> by_device;
    for (Piece& p : pieces) {
      const Context c = p.array.ctx();
      if (c.dev_type != gpu) {
        throw InvalidArgument(absl::StrCat(
            "KVStore \"nccl\": ", what, " of key ", p.key, ": the array is on ",
            c.ToString(), "; NCCL reduces GPU arrays"));
      }
      NcclType(p.array.dtype());
      by_device[c.dev_id].push_back(std::move(p));
    }
    for (const auto& [dev, group] : by_device) {
      Push(dev, group, priority, broadcast);
    }
  }

  void Push(int dev, const std::vector<Piece>& pieces, int priority,
            bool broadcast) {
    std::vector<engine::VarHandle> vars = {Gpus::Get().VarFor(dev)};
    int64_t bytes = 0;
    for (const Piece& p : pieces) {
      p.array.CheckAndAlloc();
      const engine::VarHandle v = p.array.var();
      if (std::find(vars.begin(), vars.end(), v) == vars.end()) {
        vars.push_back(v);
      }
      bytes += p.array.shape().Size() *
               static_cast<int64_t>(DTypeSize(p.array.dtype()));
    }
    engine::Engine::Get()->PushSync(
        [pieces, broadcast, dev, bytes,
         counts = counts_](engine::RunContext rctx) {
          const cudaError_t set = cudaSetDevice(dev);
          if (set != cudaSuccess) {
            throw RuntimeError(absl::StrCat("KVStore \"nccl\": cudaSetDevice(",
                                            dev,
                                            "): ", cudaGetErrorString(set)));
          }
          ncclComm_t comm = Gpus::Get().CommFor(dev);
          auto stream = static_cast<cudaStream_t>(rctx.stream);
          CheckNccl(ncclGroupStart(), "ncclGroupStart");
          ncclResult_t r = ncclSuccess;
          for (const Piece& p : pieces) {
            const TBlob b = p.array.blob();
            const size_t n = static_cast<size_t>(b.Size());
            if (n == 0) continue;
            r = broadcast ? ncclBroadcast(b.dptr, b.dptr, n, NcclType(b.dtype),
                                          0, comm, stream)
                          : ncclAllReduce(b.dptr, b.dptr, n, NcclType(b.dtype),
                                          ncclSum, comm, stream);
            if (r != ncclSuccess) break;
          }
          const ncclResult_t end = ncclGroupEnd();
          CheckNccl(r, broadcast ? "ncclBroadcast" : "ncclAllReduce");
          CheckNccl(end, "ncclGroupEnd");
          counts->collectives.fetch_add(1);
          counts->bytes.fetch_add(bytes);
        },
        pieces[0].array.ctx(), {}, vars, engine::FnProperty::kOnDeviceWorkers,
        priority,
        broadcast ? "kvstore_nccl_broadcast" : "kvstore_nccl_allreduce");
  }

  std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCommType("nccl", [] { return std::make_unique<NcclComm>(); });
  return true;
}();

}  // namespace
}  // namespace kvstore
}  // namespace mx
