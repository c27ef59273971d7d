#include "backends/onednn/dnnl_context.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backends/common/attr_parse.h"
#include "backends/onednn/openmp_runtime.h"

namespace mx_onednn {
namespace {

// Whether this thread's OpenMP team size was set for oneDNN.
thread_local bool tls_team_set = false;

// Compared with OpenMP's own setting, not a copy: anything else on the
// thread may have changed it.
void SetTeamSize(int n) {
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
  tls_team_set = true;
  MatchTeamFloatMode();
}

}  // namespace

const dnnl::engine& Engine() {
  // Every primitive is created through the engine, and oneDNN fixes a
  // primitive's team size when it is created (from the creating thread's
  // OpenMP setting): set it here too, not only before execution, or a
  // primitive first made on an unprepared thread runs with every core
  // (and, under TSan, with uninstrumented libgomp threads).
  PrepareThread();
  static const dnnl::engine* engine =
      new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

void WarmUp() {
  // On one thread: a team started on the loading thread would stay,
  // spinning against the engine's workers whenever it runs a kernel.
  const dnnl::engine& engine = Engine();
  struct Restore {
    int team = TeamSize();
    ~Restore() { SetTeamSize(team); }
  } restore;
  SetTeamSize(1);
  float x = -1.0f;
  const dnnl::memory::desc md = PlainDesc({1});
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference,
                                   dnnl::algorithm::eltwise_relu, md, 0.0f);
  dnnl::eltwise_forward::primitive_desc pd(desc, engine);
  dnnl::memory m = Wrap(md, &x);
  dnnl::stream stream(engine);
  dnnl::eltwise_forward(pd).execute(stream,
                                    {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}});
  stream.wait();
}

int KernelThreads() {
#if defined(__SANITIZE_THREAD__)
  return 1;
#else
  static const int threads = [] {
    const char* env = std::getenv("MX_CPU_KERNEL_NTHREADS");
    if (env == nullptr) return 1;
    const std::optional<int64_t> v = mxplugin::ParseInt(env);
    // The host validates the variable (ConfigError naming it) before any
    // kernel runs; a value it would refuse never gets here.
    return v && *v >= 1 && *v <= 256 ? static_cast<int>(*v) : 1;
  }();
  return threads;
#endif
}

void PrepareThread() {
  if (!tls_team_set) {
    SetTeamSize(KernelThreads());
  } else {
    MatchTeamFloatMode();
  }
}

int UseCallThreads(const mxplugin::KernelContext& ctx) {
  const int asked = ctx.num_threads();
  const int n = asked > 0 ? std::min(asked, KernelThreads()) : KernelThreads();
  SetTeamSize(n);
  return n;
}

int TeamSize() {
  PrepareThread();
  return omp_get_max_threads();
}

void UseTeamSize(int n) { SetTeamSize(n); }

void RegisterCpuKernel(mxplugin::Plugin& plugin, const std::string& op,
                       mxplugin::Kernel fn) {
  plugin.RegisterKernel(
      op, MX_DEVICE_CPU,
      [fn = std::move(fn)](const mxplugin::KernelContext& ctx,
                           const mxplugin::Attrs& attrs, mxplugin::Tensors in,
                           const int32_t* req, mxplugin::Tensors out) {
        UseCallThreads(ctx);
        fn(ctx, attrs, in, req, out);
      });
}

namespace {
std::atomic<int64_t> declined_calls{0};
std::atomic<int64_t> onednn_calls{0};
}  // namespace

int64_t DeclinedCalls() { return declined_calls.load(); }

void CountOnednnCall() { ++onednn_calls; }
int64_t OnednnCalls() { return onednn_calls.load(); }

void Decline(const std::string& op, const std::string& why) {
  ++declined_calls;
  static const bool verbose = [] {
    const char* env = std::getenv("MX_ONEDNN_VERBOSE");
    return env != nullptr && mxplugin::ParseBool(env).value_or(false);
  }();
  const std::string message =
      "onednn: " + op + " runs on the built-in " + "kernel: " + why;
  if (verbose) std::fprintf(stderr, "%s\n", message.c_str());
  throw mxplugin::Error(MX_STATUS_NOT_IMPLEMENTED, message);
}

void RequireFloat32(const std::string& op, mxplugin::Tensors in,
                    mxplugin::Tensors out) {
  for (mxplugin::Tensors ts : {in, out}) {
    for (int i = 0; i < ts.size(); ++i) {
      if (ts[i].dtype() != MX_DTYPE_FLOAT32) {
        Decline(op, "only float32 is handled");
      }
      if (ts[i].dev_type() != MX_DEVICE_CPU) Decline(op, "not on the CPU");
      if (ts[i].size() == 0) Decline(op, "an array has no elements");
    }
  }
}

dnnl::memory::desc PlainDesc(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return StridedDesc(dims, strides);
}

dnnl::memory::desc StridedDesc(const Dims& dims, const Dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

dnnl::memory Wrap(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, Engine(), const_cast<void*>(data));
}

std::string DimsKey(const Dims& dims) {
  std::string key;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) key += 'x';
    key += std::to_string(dims[i]);
  }
  return key;
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void Execute(const dnnl::primitive& p, const dnnl::memory::desc& scratchpad,
             std::unordered_map<int, dnnl::memory> args) {
  PrepareThread();
  CountOnednnCall();
  thread_local dnnl::stream stream(Engine());
  // Grows to the largest scratchpad this thread has needed; 64-byte
  // aligned as oneDNN prefers.
  thread_local std::unique_ptr<char[]> buffer;
  thread_local size_t buffer_size = 0;
  const size_t bytes = scratchpad.get_size();
  if (bytes > 0) {
    if (bytes + 64 > buffer_size) {
      buffer_size = bytes + 64;
      buffer.reset(new char[buffer_size]);
    }
    void* aligned = buffer.get();
    size_t space = buffer_size;
    std::align(64, bytes, aligned, space);
    args.emplace(DNNL_ARG_SCRATCHPAD, Wrap(scratchpad, aligned));
  }
  p.execute(stream, args);
  stream.wait();
}

void* AlignedBuffer::Reserve(size_t bytes) {
  if (bytes + 64 > size_) {
    size_ = bytes + 64;
    data_.reset(new char[size_]);
    void* aligned = data_.get();
    size_t space = size_;
    aligned_ = std::align(64, bytes, aligned, space);
  }
  return aligned_;
}

void* ThreadBuffer(int slot, size_t bytes) {
  thread_local AlignedBuffer buffers[4];
  return buffers[slot].Reserve(bytes);
}

Relayout::Relayout(const dnnl::memory::desc& plain,
                   const dnnl::memory::desc& chosen)
    : plain_(plain), chosen_(chosen), reorders_(plain != chosen) {
  if (!reorders_) return;
  to_chosen_ = dnnl::reorder(
      dnnl::reorder::primitive_desc(Engine(), plain_, Engine(), chosen_));
  to_plain_ = dnnl::reorder(
      dnnl::reorder::primitive_desc(Engine(), chosen_, Engine(), plain_));
}

dnnl::memory Relayout::Input(const void* data, int slot) const {
  dnnl::memory plain = Wrap(plain_, data);
  if (!reorders_) return plain;
  dnnl::memory chosen = Wrap(chosen_, ThreadBuffer(slot, chosen_.get_size()));
  Execute(to_chosen_, dnnl::memory::desc(),
          {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, chosen}});
  return chosen;
}

void Relayout::InputTo(const void* data, const dnnl::memory& target) const {
  if (reorders_) {
    Execute(to_chosen_, dnnl::memory::desc(),
            {{DNNL_ARG_FROM, Wrap(plain_, data)}, {DNNL_ARG_TO, target}});
  } else if (target.get_data_handle() != data) {
    std::memcpy(target.get_data_handle(), data, plain_.get_size());
  }
}

dnnl::memory Relayout::Output(void* data, int slot) const {
  if (!reorders_) return Wrap(plain_, data);
  return Wrap(chosen_, ThreadBuffer(slot, chosen_.get_size()));
}

void Relayout::Finish(const dnnl::memory& written, void* data) const {
  if (!reorders_) return;
  Execute(to_plain_, dnnl::memory::desc(),
          {{DNNL_ARG_FROM, written}, {DNNL_ARG_TO, Wrap(plain_, data)}});
}

OutputBuffer::OutputBuffer(const mxplugin::Tensor& out, int32_t req,
                           std::vector<const void*> must_not_alias)
    : array_(out.data<float>()), size_(out.size()), req_(req) {
  target_ = array_;
  bool aliased = false;
  for (const void* p : must_not_alias) aliased |= p == array_;
  if (req_ == MX_REQ_ADD || (req_ != MX_REQ_NULL && aliased)) {
    temp_.resize(static_cast<size_t>(size_));
    target_ = temp_.data();
    copy_back_ = true;
  }
}

float* OutputBuffer::DataOrScratch() {
  if (!skip()) return target_;
  temp_.resize(static_cast<size_t>(size_));
  return temp_.data();
}

void OutputBuffer::Finish() {
  if (!copy_back_) return;
  if (req_ == MX_REQ_ADD) {
    for (int64_t i = 0; i < size_; ++i) array_[i] += temp_[i];
  } else {
    std::copy(temp_.begin(), temp_.end(), array_);
  }
}

}  // namespace mx_onednn
