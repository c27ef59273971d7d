// GPU kernels for argsort, sort, topk and _backward_topk: every element
// ranked in its line (sort_kernels.cu: CUB radix sorts), then the kept ones
// placed by rank as values, indices or a mask; semantics as
// backends/cpu/ordering_ops.cc (stable order, NaN last). _backward_topk
// raises for positions outside the line, as the CPU.
#include <cstdint>
#include <string>

#include "backends/common/mxnet_math.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/index_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

enum class Returns { kValue, kIndices, kMask, kBoth };

// What one of the three ops computes, read as the CPU reads its attributes.
struct Ordering {
  Returns ret;
  double k;  // < 1: the whole line.
  bool ascend;
};

Ordering OrderingOf(const std::string& op, const Attrs& attrs) {
  if (op == "argsort") {
    return {Returns::kIndices, 0, FlagAttr(op, attrs, "is_ascend", "True")};
  }
  if (op == "sort") {
    return {Returns::kValue, 0, FlagAttr(op, attrs, "is_ascend", "True")};
  }
  const std::string ret = attrs.Get("ret_typ", "indices");
  Ordering o{Returns::kIndices, NumberAttr(op, attrs, "k", 1),
             FlagAttr(op, attrs, "is_ascend", "False")};
  if (ret == "value") {
    o.ret = Returns::kValue;
  } else if (ret == "mask") {
    o.ret = Returns::kMask;
  } else if (ret == "both") {
    o.ret = Returns::kBoth;
  } else if (ret != "indices") {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": ret_typ=" + ret);
  }
  return o;
}

int64_t KeptOf(const std::string& op, const Ordering& o, int64_t len) {
  if (o.k < 1) return len;
  if (o.k > static_cast<double>(len) || o.k != static_cast<int64_t>(o.k)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": k=" + std::to_string(o.k) + " but the axis has " +
                    std::to_string(len) + " elements");
  }
  return static_cast<int64_t>(o.k);
}

template <const char* kOp>
void Order(const KernelContext& ctx, const Attrs& attrs, Tensors in,
           const int32_t* req, Tensors out) {
  const std::string op = kOp;
  const Tensor& x = in[0];
  RequireNumeric(op, x);
  const Ordering o = OrderingOf(op, attrs);
  const AxisLines l = AxisLinesOf(op, attrs, x, "-1");
  const int64_t keep = KeptOf(op, o, l.len);
  const bool has_values = o.ret == Returns::kValue || o.ret == Returns::kBoth;
  const int values = has_values ? 0 : -1;
  const int indices = o.ret == Returns::kIndices ? 0 : has_values ? 1 : -1;
  if (indices >= 0 &&
      l.len - 1 > mx_math::LargestExactIndex(out[indices].dtype())) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": dtype=" + DTypeName(out[indices].dtype()) +
                    " cannot hold indices up to " + std::to_string(l.len - 1));
  }
  if (x.size() == 0) return;
  cudaStream_t s = StreamOf(ctx);
  if (x.size() > int64_t{UINT32_MAX}) {
    throw Error(MX_STATUS_NOT_IMPLEMENTED,
                op + ": sorting " + std::to_string(x.size()) +
                    " elements at once (at most 2^32 - 1)");
  }
  RankBuffers sorting{};
  CheckLaunch(op,
              RankSortTempBytes(x.dtype(), l.outer, l.len, l.inner,
                                &sorting.temp_bytes),
              x.dtype());
  int64_t* rank = nullptr;
  const auto carve = [&](ScratchCarver& c) {
    rank = c.Take<int64_t>(x.size());
    const int64_t key_bytes =
        x.size() * static_cast<int64_t>(RankKeyBytes(x.dtype()));
    sorting.keys_in = c.Take<char>(key_bytes);
    sorting.keys_out = c.Take<char>(key_bytes);
    sorting.positions_in = c.Take<uint32_t>(x.size());
    sorting.positions_out = c.Take<uint32_t>(x.size());
    sorting.temp = c.Take<char>(static_cast<int64_t>(sorting.temp_bytes));
  };
  CarveWorkspace(ctx, carve);
  CheckLaunch(op,
              LaunchRank(x.dtype(), l.outer, l.len, l.inner, o.ascend,
                         x.data<void>(), sorting, rank, s),
              x.dtype());
  const auto place = [&](Placed what, int slot, const void* from) {
    CheckLaunch(op,
                LaunchPlaceByRank(what, out[slot].dtype(), l.outer, l.len,
                                  l.inner, keep, rank, from,
                                  out[slot].data<void>(), req[slot], s),
                out[slot].dtype());
  };
  if (values >= 0) place(Placed::kValue, values, x.data<void>());
  if (indices >= 0) place(Placed::kIndex, indices, nullptr);
  if (o.ret == Returns::kMask) place(Placed::kMask, 0, x.data<void>());
}

constexpr char kArgsort[] = "argsort";
constexpr char kSort[] = "sort";
constexpr char kTopK[] = "topk";

// (out_grad, indices, data) -> data_grad.
void BackwardTopK(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_topk";
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, out[0]);
  const AxisLines l = AxisLinesOf(op, attrs, in[2], "-1");
  const int64_t lines = l.outer * l.inner;
  const int64_t keep = lines == 0 ? 0 : in[1].size() / lines;
  void* scratch = nullptr;
  int* bad = FlagAndScratch(
      ctx, op, IndexScratchBytes(out[0].dtype(), out[0].size()), &scratch);
  CheckLaunch(op,
              LaunchScatterKept(out[0].dtype(), in[1].dtype(), l.outer, l.len,
                                l.inner, keep, in[0].data<void>(),
                                in[1].data<void>(), out[0].data<void>(), req[0],
                                bad, scratch, StreamOf(ctx)),
              in[1].dtype());
  // As the CPU: a position the kept values cannot have come from is an
  // error (one stream synchronize per call to read the flag back).
  CheckFlag(ctx, op, bad,
            "an index outside [0, " + std::to_string(l.len) +
                ") or not a whole number");
}

}  // namespace

void RegisterOrderingOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "argsort", Order<kArgsort>);
  RegisterGpuKernel(plugin, "sort", Order<kSort>);
  RegisterGpuKernel(plugin, "topk", Order<kTopK>);
  RegisterGpuKernel(plugin, "_backward_topk", BackwardTopK);
}

}  // namespace mx_cuda
