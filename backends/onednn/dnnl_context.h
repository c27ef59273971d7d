// What every oneDNN kernel of the plugin shares: the CPU engine, one
// stream per calling thread, the thread count oneDNN's OpenMP uses, plain
// (row-major) memory descriptors over mxcore's arrays, write requests,
// user-managed scratchpads, and declining a call.
//
//   RegisterCpuKernel(plugin, "Op", Kernel);  // OpenMP team size per call
//   dnnl::memory src = Wrap(PlainDesc({n, c, h, w}), x.data<float>());
//   OutputBuffer dst(out[0], req[0]);      // kAddTo goes through a buffer
//   Execute(prim, scratchpad_md, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, ...}});
//   dst.Finish();
#ifndef MXCORE_BACKENDS_ONEDNN_DNNL_CONTEXT_H_
#define MXCORE_BACKENDS_ONEDNN_DNNL_CONTEXT_H_

#include <dnnl.hpp>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

using Dims = dnnl::memory::dims;

const dnnl::engine& Engine();

// Creates and runs one tiny primitive, at plugin load: oneDNN builds its
// lazily created globals (primitive cache, CPU detection, JIT state) on
// the loading thread, before engine workers race to do it (races that
// ThreadSanitizer, blind to the uninstrumented library's guards, reports).
void WarmUp();

// Threads one kernel uses: MX_CPU_KERNEL_NTHREADS (1..256, default 1; the
// variable the built-in kernels read), forced to 1 under ThreadSanitizer
// (Debian's libgomp is not instrumented, so its worker threads would be
// reported as races in oneDNN code).
int KernelThreads();

// Applies KernelThreads() to OpenMP in the calling thread, unless a
// kernel call on it set a team size already (UseCallThreads): each engine
// worker gets its own OpenMP team, so W workers running oneDNN kernels use
// at most W * KernelThreads() cores.
void PrepareThread();

// Applies the call's thread count to OpenMP in the calling thread: the
// host's MxKernelContext.num_threads (1 for a small op the engine runs on
// the thread that pushed it, KernelThreads() on its workers), at most
// KernelThreads(). Returns that size. Kernels registered below call it
// first; the fused ops when they build their primitives.
int UseCallThreads(const mxplugin::KernelContext& ctx);

// The OpenMP team size this thread's oneDNN calls use now.
int TeamSize();

// Sets it to `n`. The fused ops keep primitives in their node state, made
// for the team size of the call that built them (UseCallThreads; oneDNN
// fixes it then); every call of the node runs with that size (rebuilding
// whenever a call came with another would thrash between a node's calls
// on the pushing thread and on a worker).
void UseTeamSize(int n);

// Registers a CPU kernel that runs with its call's threads (UseCallThreads).
void RegisterCpuKernel(mxplugin::Plugin& plugin, const std::string& op,
                       mxplugin::Kernel fn);

// Declines the call: the host runs the built-in kernel instead. With
// MX_ONEDNN_VERBOSE=1 the reason is printed to stderr.
[[noreturn]] void Decline(const std::string& op, const std::string& why);

// Calls declined so far (for mx_onednn_stats).
int64_t DeclinedCalls();

// oneDNN executions (primitives and sgemm calls) so far, for
// mx_onednn_calls; Execute counts its own.
void CountOnednnCall();
int64_t OnednnCalls();

// Declines unless every tensor is float32 on the CPU.
void RequireFloat32(const std::string& op, mxplugin::Tensors in,
                    mxplugin::Tensors out);

// Row-major float32 descriptor of `dims`.
dnnl::memory::desc PlainDesc(const Dims& dims);
// float32 descriptor with explicit strides (transposed views).
dnnl::memory::desc StridedDesc(const Dims& dims, const Dims& strides);
// A memory object over caller-owned data (not copied).
dnnl::memory Wrap(const dnnl::memory::desc& md, const void* data);

// "2x3x4": for cache keys.
std::string DimsKey(const Dims& dims);

// An attribute with a user scratchpad (so concurrent executions of one
// cached primitive from several engine workers never share one).
dnnl::primitive_attr UserScratchpadAttr();

// Runs `p` on this thread's stream with a scratchpad of `scratchpad`
// bytes from a per-thread buffer, and waits.
void Execute(const dnnl::primitive& p, const dnnl::memory::desc& scratchpad,
             std::unordered_map<int, dnnl::memory> args);

// A 64-byte aligned buffer, reused; it grows (dropping its contents) when
// asked for more than it holds.
class AlignedBuffer {
 public:
  // At least `bytes`, 64-byte aligned.
  void* Reserve(size_t bytes);
  void* data() const { return aligned_; }  // What Reserve returned last.
  size_t capacity() const { return size_ < 64 ? 0 : size_ - 64; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  void* aligned_ = nullptr;
};

// A 64-byte aligned buffer of at least `bytes` owned by the calling
// thread, one per `slot` (0..3), grown as needed and reused by every call
// on the thread: scratch space a kernel needs only while it runs.
void* ThreadBuffer(int slot, size_t bytes);

// One argument of a primitive created with format_tag::any, between
// mxcore's row-major array and the layout the primitive chose (blocked,
// e.g. nChw16c, where oneDNN's direct kernels are several times faster
// than on plain layouts): reorders only when the two differ.
//
//   Relayout src(PlainDesc(dims), pd.src_desc());
//   dnnl::memory s = src.Input(x, /*slot=*/0);      // plain or a copy
//   dnnl::memory d = dst.Output(y, /*slot=*/1);     // y or a buffer
//   Execute(prim, ..., {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}});
//   dst.Finish(d, y);                               // copies back if needed
class Relayout {
 public:
  Relayout() = default;
  Relayout(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen);
  // The identity: the primitive uses `plain` itself.
  explicit Relayout(const dnnl::memory::desc& plain) : Relayout(plain, plain) {}
  const dnnl::memory::desc& chosen() const { return chosen_; }
  // `data` (plain) in the chosen layout: itself, or a copy in this thread's
  // ThreadBuffer(slot).
  dnnl::memory Input(const void* data, int slot) const;
  // Writes `data` (plain) into `target` (chosen layout, e.g. what Output
  // returned): a reorder, a copy, or nothing when they are one buffer.
  // (Any two layouts of one shape work: "plain" is just where data is.)
  void InputTo(const void* data, const dnnl::memory& target) const;
  // Where the primitive writes an output that ends up in `data` (plain):
  // `data` itself, or this thread's ThreadBuffer(slot).
  dnnl::memory Output(void* data, int slot) const;
  // Copies what the primitive wrote to `written` into `data` when they
  // differ.
  void Finish(const dnnl::memory& written, void* data) const;

 private:
  dnnl::memory::desc plain_, chosen_;
  bool reorders_ = false;
  dnnl::reorder to_chosen_, to_plain_;
};

// Where a kernel writes one output under its write request: the array
// itself for kWriteTo/kWriteInplace, a temporary for kAddTo (added to the
// array by Finish). `must_not_alias` lists input data the primitive reads
// that must not share memory with the output (in-place requests on ops
// oneDNN cannot run in place go through the temporary as well).
class OutputBuffer {
 public:
  OutputBuffer(const mxplugin::Tensor& out, int32_t req,
               std::vector<const void*> must_not_alias = {});
  bool skip() const { return req_ == MX_REQ_NULL; }
  float* data() { return target_; }
  // For primitives that write the output whether it is wanted or not: a
  // scratch buffer (never copied back) when the request is null.
  float* DataOrScratch();
  // Adds or copies the temporary into the array; no-op otherwise.
  void Finish();

 private:
  float* array_;
  int64_t size_;
  int32_t req_;
  std::vector<float> temp_;
  float* target_;
  bool copy_back_ = false;
};

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_DNNL_CONTEXT_H_
