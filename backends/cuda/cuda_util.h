// Error handling and per-stream library handles inside the CUDA plugin.
// Every CUDA, cuBLAS and cuDNN status that is not success becomes an
// mxplugin::Error naming what was being done; the host turns it into the
// mx::Error of the same code (out of memory: RuntimeError naming the
// device and the bytes).
//
//   CheckCuda(cudaMemcpyAsync(...), "copy host->gpu(0)");
//   cublasHandle_t h = BlasHandle(dev_id, stream);
#ifndef MXCORE_BACKENDS_CUDA_CUDA_UTIL_H_
#define MXCORE_BACKENDS_CUDA_CUDA_UTIL_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <string>
#include <vector>

#include "backends/cuda/elementwise.h"
#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_cuda {

// Throws mxplugin::Error(RUNTIME_ERROR, "<what>: <CUDA's message>").
void CheckCuda(cudaError_t err, const std::string& what);
void CheckBlas(cublasStatus_t st, const std::string& what);
void CheckDnn(cudnnStatus_t st, const std::string& what);

// Why no device is usable ("" when one is): CUDA's message for the
// driver or device query, for the skip lines of tests and errors.
const std::string& NoDeviceReason();
int DeviceCount();

// Makes dev_id current on this thread (cheap when it already is).
void UseDevice(int dev_id);

// The cuBLAS / cuDNN handle of `stream` on dev_id, bound to it, made on
// first use and kept for the process (the engine's streams are few and
// long-lived; one thread at a time runs on a stream).
cublasHandle_t BlasHandle(int dev_id, cudaStream_t stream);
cudnnHandle_t DnnHandle(int dev_id, cudaStream_t stream);

// Scratch device memory of at least `bytes` for the kernel's stream,
// reused across calls: safe because the stream runs its operations in
// order (and growing it frees the old block with cudaFree, which waits
// for the device). One block per call: a second call may free the first.
void* Workspace(const mxplugin::KernelContext& ctx, size_t bytes);

// The kernel's stream, with its device made current.
cudaStream_t StreamOf(const mxplugin::KernelContext& ctx);

// Whether dtype is float32, float64 or float16.
bool IsFloat(int dtype);
// Throws DTypeError naming op unless t is float32, float64 or float16.
void RequireFloat(const std::string& op, const mxplugin::Tensor& t);
// The same, also accepting uint8, int8, int32 and int64 (not bool): for the
// kernels that compute on integers as the CPU's do.
void RequireNumeric(const std::string& op, const mxplugin::Tensor& t);

// Attribute readers for built-in ops' strings: a missing key (or "None"
// for numbers) gives `fallback`; unreadable text is InvalidArgument naming
// the op and key.
double NumberAttr(const std::string& op, const mxplugin::Attrs& attrs,
                  const std::string& key, double fallback);
bool FlagAttr(const std::string& op, const mxplugin::Attrs& attrs,
              const char* key, const char* fallback);

// The product of t's dims [begin, end).
int64_t Prod(const mxplugin::Tensor& t, int begin, int end);
// The axis attribute `key` (a missing key or "None": fallback) of an array
// of rank ndim, made non-negative; InvalidArgument naming op otherwise.
int AxisAttr(const std::string& op, const mxplugin::Attrs& attrs,
             const char* key, double fallback, int ndim);
// x as (outer, len, inner) around its "axis" attribute; the flattened
// array (1, size, 1) when that is "None", or missing and fallback "None".
struct AxisLines {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisLines AxisLinesOf(const std::string& op, const mxplugin::Attrs& attrs,
                      const mxplugin::Tensor& x, const char* fallback);

// A device flag for kernels that check their input (indices, lengths),
// zeroed on the kernel's stream, followed by `scratch_bytes` of scratch
// (*scratch; may be null) aligned for double atomics; both in Workspace.
int* FlagAndScratch(const mxplugin::KernelContext& ctx, const std::string& op,
                    size_t scratch_bytes, void** scratch);
// Waits for the stream and throws InvalidArgument "op: why" when a kernel
// set the flag.
void CheckFlag(const mxplugin::KernelContext& ctx, const std::string& op,
               const int* bad, const std::string& why);

// Throws for a launch status: cudaErrorInvalidValue (a dtype the launcher
// lacks) as DTypeError naming op and dtype, anything else as CheckCuda.
void CheckLaunch(const std::string& op, cudaError_t err, int dtype);

// Runs the strided gather-sum `gi` (elementwise.h) from src into out for
// kernel `op` (float dtypes; nothing for MX_REQ_NULL): broadcasts,
// transposes, slices and the reduce/broadcast gradients.
void RunGather(const std::string& op, const mxplugin::KernelContext& ctx,
               const GatherIndex& gi, const mxplugin::Tensor& src,
               const mxplugin::Tensor& out, int32_t req);

// Sets `out` to `value` as `req` says: written for a write, added for an
// add (nothing for 0), untouched for MX_REQ_NULL. For empty reductions and
// the zero gradients of inputs that lend only their shape.
void FillOutput(const std::string& op, cudaStream_t s,
                const mxplugin::Tensor& out, int32_t req, double value);

// `bytes` rounded up to 256: scratch buffers carved from one workspace
// stay aligned for any dtype and for cuDNN.
inline size_t AlignedBytes(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The inverse of RunGather for a gradient into zeros: src scattered into
// out along `gi` (out zeroed first unless MX_REQ_ADD).
void RunScatter(const std::string& op, const mxplugin::KernelContext& ctx,
                const GatherIndex& gi, const mxplugin::Tensor& src,
                const mxplugin::Tensor& out, int32_t req);

// Copies `bytes` of device memory at `src` to host memory at `dst` once the
// work queued on `s` so far is done (a stream synchronize: for kernels
// whose output size or error depends on device values). Errors name `what`.
void ReadBack(const std::string& what, cudaStream_t s, const void* src,
              void* dst, size_t bytes);

// A numeric tensor's values as host doubles: cast to float64 on the device
// (in the kernel's workspace), then read back (a stream synchronize).
std::vector<double> HostDoubles(const std::string& op,
                                const mxplugin::KernelContext& ctx,
                                const mxplugin::Tensor& t);

// Carves one workspace (Workspace allows one block per call) into aligned
// buffers. Run the same carving twice: first without a base to count the
// bytes, then over the workspace of that size.
//
//   auto carve = [&](ScratchCarver& c) { x = c.Take<float>(n); ... };
//   ScratchCarver count;
//   carve(count);
//   ScratchCarver real(Workspace(ctx, count.bytes()));
//   carve(real);
class ScratchCarver {
 public:
  explicit ScratchCarver(void* base = nullptr)
      : base_(static_cast<char*>(base)) {}
  // `count` elements of X (null while counting).
  template <typename X>
  X* Take(int64_t count) {
    X* p = base_ == nullptr ? nullptr : reinterpret_cast<X*>(base_ + used_);
    used_ += AlignedBytes(static_cast<size_t>(count) * sizeof(X));
    return p;
  }
  size_t bytes() const { return used_; }

 private:
  char* base_;
  size_t used_ = 0;
};

// Runs carve(ScratchCarver&) twice: once counting the bytes it takes,
// then over one workspace block of that size (no block for 0 bytes, when
// the pointers it took stay null).
//   CarveWorkspace(ctx, [&](ScratchCarver& c) { sums = c.Take<double>(n); });
template <typename Carve>
void CarveWorkspace(const mxplugin::KernelContext& ctx, Carve&& carve) {
  ScratchCarver count;
  carve(count);
  if (count.bytes() == 0) return;
  ScratchCarver real(Workspace(ctx, count.bytes()));
  carve(real);
}

// Row-major element strides of t's shape.
std::vector<int64_t> StridesOf(const mxplugin::Tensor& t);

// The broadcast index of out = a op b (shapes right-aligned; at most
// kMaxDims dimensions, else Unsupported).
BroadcastIndex MakeBroadcast(const std::string& op, const mxplugin::Tensor& a,
                             const mxplugin::Tensor& b,
                             const mxplugin::Tensor& out);

// A kernel that does not handle a case hands it back to the host.
[[noreturn]] void Unsupported(const std::string& op, const std::string& why);

// A boolean environment variable of the plugin: unset, "0"/"false" or
// "1"/"true"; anything else throws InvalidArgument naming the variable
// (the plugin checks its variables when it loads, so a typo fails the
// load instead of being ignored).
bool EnvFlag(const char* name);

// Registers `fn` as op's kernel on the gpu device. With MX_CUDA_PROFILE=1
// (read at load) every call is timed to the end of its GPU work, and a
// table of calls and time per op is printed to stderr at exit.
void RegisterGpuKernel(mxplugin::Plugin& plugin, const std::string& op,
                       mxplugin::Kernel fn);

// MxDType code -> "float32" etc.; bytes of one element (0: unknown).
const char* DTypeName(int dtype);
size_t DTypeSize(int dtype);
// Bytes of a tensor's elements.
size_t ByteSize(const mxplugin::Tensor& t);
// Zeroes `out` on the kernel's stream when `req` writes it (write or in
// place), so that a scatter-add after it writes; nothing for add or null.
void ZeroUnlessAdding(const std::string& op, const mxplugin::KernelContext& ctx,
                      const mxplugin::Tensor& out, int32_t req);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_CUDA_UTIL_H_
