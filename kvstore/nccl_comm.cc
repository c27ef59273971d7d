// The "nccl" KVStore's Comm: GPU arrays summed (ncclAllReduce) and
// broadcast (ncclBroadcast) by NCCL collectives queued on the engine's
// stream of the arrays' GPU, so they run in order with the kernels that
// compute the gradients and those that read the results, without a trip
// through host memory.
//
// One process: each GPU gets a communicator of one rank (the collectives
// are then the identity, still run end to end by NCCL); values of one key
// on several GPUs are summed by the KVStore before the Comm sees them, as
// for "local". Several processes (mpirun) are not supported yet: creating
// the store there is a NotImplemented error pointing to dist_sync.
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

// Communicators by device, made on first use (on the device's worker) and
// destroyed with the last operation that holds the state.
class Communicators {
 public:
  ~Communicators() {
    for (auto& [dev, comm] : comms_) ncclCommDestroy(comm);
  }
  ncclComm_t For(int dev) {
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
  std::map<int, ncclComm_t> comms_;
};

class NcclComm : public Comm {
 public:
  NcclComm() : comms_(std::make_shared<Communicators>()) {
    const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
    if (world != nullptr && std::atoi(world) > 1) {
      throw NotImplemented(
          "KVStore \"nccl\": several processes (mpirun) are not supported "
          "yet; use \"dist_sync\" (GPU arrays are reduced through host "
          "memory)");
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

  CommStats stats() const override {
    CommStats s;
    s.collectives = collectives_.load();
    s.bytes = bytes_.load();
    return s;
  }

 private:
  // One engine operation per call, on the arrays' GPU: the collectives of
  // all pieces in one NCCL group, queued on the operation's stream.
  void Run(std::vector<Piece> pieces, int priority, bool broadcast) {
    if (pieces.empty()) return;
    const char* what = broadcast ? "Broadcast" : "AllReduce";
    const int gpu = Context::DeviceTypeFromName("gpu");
    const Context ctx = pieces[0].array.ctx();
    std::vector<engine::VarHandle> vars;
    int64_t bytes = 0;
    for (Piece& p : pieces) {
      const Context c = p.array.ctx();
      if (c.dev_type != gpu || c != ctx) {
        throw InvalidArgument(absl::StrCat(
            "KVStore \"nccl\": ", what, " of key ", p.key, ": the array is on ",
            c.ToString(), "; every array of a call must be on one GPU (",
            ctx.ToString(), " here)"));
      }
      NcclType(p.array.dtype());
      p.array.CheckAndAlloc();
      const engine::VarHandle v = p.array.var();
      if (std::find(vars.begin(), vars.end(), v) == vars.end()) {
        vars.push_back(v);
      }
      bytes += p.array.shape().Size() *
               static_cast<int64_t>(DTypeSize(p.array.dtype()));
    }
    std::shared_ptr<Communicators> comms = comms_;
    engine::Engine::Get()->PushSync(
        [comms, pieces, broadcast, dev = ctx.dev_id](engine::RunContext rctx) {
          const cudaError_t set = cudaSetDevice(dev);
          if (set != cudaSuccess) {
            throw RuntimeError(absl::StrCat("KVStore \"nccl\": cudaSetDevice(",
                                            dev,
                                            "): ", cudaGetErrorString(set)));
          }
          ncclComm_t comm = comms->For(dev);
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
        },
        ctx, {}, vars, engine::FnProperty::kNormal, priority,
        broadcast ? "kvstore_nccl_broadcast" : "kvstore_nccl_allreduce");
    collectives_.fetch_add(1);
    bytes_.fetch_add(bytes);
  }

  std::shared_ptr<Communicators> comms_;
  std::atomic<int64_t> collectives_{0}, bytes_{0};
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCommType("nccl", [] { return std::make_unique<NcclComm>(); });
  return true;
}();

}  // namespace
}  // namespace kvstore
}  // namespace mx
