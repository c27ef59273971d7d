#include "ndarray/ndarray.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/object_pool.h"
#include "ndarray/reshape.h"

namespace mx {

struct NDArray::Chunk {
  Chunk(Context c, size_t nbytes, bool dynamic_shape)
      : engine(engine::Engine::GetShared()),
        var(engine->NewVariable()),
        ctx(c),
        bytes(nbytes),
        dynamic(dynamic_shape) {}

  ~Chunk() {
    // Most arrays are dropped after their last operation completed.
    if (engine->DeleteVariableIfIdle(var)) {
      Storage::Get()->Free(storage);
      return;
    }
    StorageHandle s = storage;
    engine->DeleteVariable([s](engine::RunContext) { Storage::Get()->Free(s); },
                           ctx, var);
  }

  // Before the chunk is shared: no lock.
  void AllocUnshared() {
    storage = Storage::Get()->Alloc(bytes, ctx);
    allocated.store(true, std::memory_order_relaxed);
  }

  void Alloc() {
    if (allocated.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(mu);
    if (allocated.load(std::memory_order_relaxed)) return;
    storage = Storage::Get()->Alloc(bytes, ctx);
    allocated.store(true, std::memory_order_release);
  }

  // Holds the engine alive while arrays are destroyed, also at exit.
  std::shared_ptr<engine::Engine> engine;
  engine::VarHandle var;
  Context ctx;
  size_t bytes;
  const bool dynamic;
  std::mutex mu;
  std::atomic<bool> allocated{false};
  std::atomic<bool> written{false};
  StorageHandle storage;
  // Dynamic-shape outputs: set by the op that computes them.
  TShape computed_shape;
};

namespace {

size_t ByteSize(const TShape& shape, DType dtype) {
  if (!shape.is_known()) return 0;
  const std::optional<int64_t> bytes =
      CheckedProduct(shape.dims(), static_cast<int64_t>(DTypeSize(dtype)));
  if (!bytes) {
    throw ShapeError(absl::StrCat("an array of shape ", shape.ToString(),
                                  " and dtype ", DTypeName(dtype),
                                  " needs more bytes than fit in int64"));
  }
  return static_cast<size_t>(*bytes);
}

std::mutex& CopyRegistryMutex() {
  static std::mutex mu;
  return mu;
}

absl::flat_hash_map<int, DeviceCopyFn>& CopyRegistry() {
  static auto* registry = new absl::flat_hash_map<int, DeviceCopyFn>();
  return *registry;
}

// Host-to-host copy with dtype conversion (as the Cast op converts).
void HostCopy(const TBlob& from, const TBlob& to) {
  const size_t n = static_cast<size_t>(from.Size());
  if (n == 0) return;  // Zero-size arrays have no memory.
  if (from.dtype == to.dtype) {
    std::memmove(to.dptr, from.dptr, n * DTypeSize(from.dtype));
    return;
  }
  MX_DTYPE_SWITCH(from.dtype, SrcT, {
    MX_DTYPE_SWITCH(to.dtype, DstT, {
      const SrcT* src = from.data<SrcT>();
      DstT* dst = to.data<DstT>();
      for (size_t i = 0; i < n; ++i) dst[i] = ConvertElement<DstT>(src[i]);
    });
  });
}

}  // namespace

NDArray::NDArray(const TShape& shape, Context ctx, DType dtype,
                 bool delay_alloc)
    : shape_(shape), dtype_(dtype) {
  if (DTypeSize(dtype) == 0) ThrowUnsupportedDType(dtype, "NDArray");
  if (!Storage::Get()->HasDevice(ctx.dev_type)) {
    throw NotFound(absl::StrCat("NDArray on ", ctx.ToString(),
                                ": no device plugin provides this device; "
                                "load one with MX_PLUGINS or mx::LoadPlugin"));
  }
  for (int i = 0; i < shape.ndim(); ++i) {
    if (shape[i] < -1) {
      throw ShapeError(absl::StrCat("NDArray: negative dimension in shape ",
                                    shape.ToString()));
    }
  }
  ptr_ = std::allocate_shared<Chunk>(PoolAllocator<Chunk>(), ctx,
                                     ByteSize(shape, dtype), !shape.is_known());
  if (!delay_alloc && shape.is_known()) ptr_->AllocUnshared();
}

void NDArray::CheckNotNone(const char* who) const {
  if (ptr_ == nullptr) {
    throw StateError(absl::StrCat(who,
                                  ": the array is none (default-"
                                  "constructed, holds no data)"));
  }
}

const TShape& NDArray::shape() const {
  if (ptr_ != nullptr && ptr_->dynamic && !shape_.is_known()) {
    ComputeDeferred();
    WaitToRead();
    std::lock_guard<std::mutex> lock(ptr_->mu);
    if (!shape_.is_known()) shape_ = ptr_->computed_shape;
  }
  return shape_;
}

Context NDArray::ctx() const {
  CheckNotNone("NDArray::ctx");
  return ptr_->ctx;
}

engine::VarHandle NDArray::var() const {
  CheckNotNone("NDArray::var");
  return ptr_->var;
}

NDArray NDArray::View(const TShape& shape, size_t byte_offset) const {
  NDArray view = *this;
  view.shape_ = shape;
  view.byte_offset_ = byte_offset;
  // The base's history and gradient describe the base, not the view (a
  // view carrying them would send its gradient, of its own shape, into the
  // base's slot).
  view.autograd_entry_ = {};
  view.grad_.reset();
  return view;
}

NDArray NDArray::Reshape(const TShape& target, bool reverse) const {
  CheckNotNone("NDArray::Reshape");
  TracedCall call{TracedCall::kReshape, target};
  call.reverse = reverse;
  if (NDArray traced; TraceMethod(call, &traced)) return traced;
  NDArray view = View(
      InferReshape(shape(), target, reverse, "NDArray::Reshape"), byte_offset_);
  RecordView(call, &view);
  return view;
}

NDArray NDArray::Slice(int64_t begin, int64_t end) const {
  CheckNotNone("NDArray::Slice");
  const TracedCall call{TracedCall::kSlice, TShape(), begin, end};
  if (NDArray traced; TraceMethod(call, &traced)) return traced;
  const TShape& s = shape();
  if (s.ndim() < 1) {
    throw ShapeError("NDArray::Slice: cannot slice a scalar (shape ())");
  }
  if (begin < 0 || begin > end || end > s[0]) {
    throw ShapeError(absl::StrCat("NDArray::Slice: range [", begin, ", ", end,
                                  ") is invalid for shape ", s.ToString()));
  }
  TShape rows = s;
  rows[0] = end - begin;
  NDArray view = View(
      rows, byte_offset_ + begin * s.ProdDims(1, s.ndim()) * DTypeSize(dtype_));
  RecordView(call, &view);
  return view;
}

NDArray NDArray::At(int64_t i) const {
  CheckNotNone("NDArray::At");
  const TracedCall call{TracedCall::kAt, TShape(), i, i + 1};
  if (NDArray traced; TraceMethod(call, &traced)) return traced;
  const TShape& s = shape();
  if (s.ndim() < 1 || i < 0 || i >= s[0]) {
    throw ShapeError(absl::StrCat("NDArray::At: index ", i,
                                  " is out of range for shape ", s.ToString()));
  }
  NDArray view =
      View(TShape(s.begin() + 1, s.end()),
           byte_offset_ + i * s.ProdDims(1, s.ndim()) * DTypeSize(dtype_));
  RecordView(call, &view);
  return view;
}

NDArray NDArray::ViewAs(const TShape& shape, DType dtype) const {
  CheckNotNone("NDArray::ViewAs");
  const size_t bytes = ByteSize(shape, dtype);
  if (!shape.is_known() || bytes > ptr_->bytes) {
    throw ShapeError(absl::StrCat(
        "NDArray::ViewAs: ", shape.ToString(), " ", DTypeName(dtype), " (",
        bytes, " bytes) does not fit in a chunk of ", ptr_->bytes, " bytes"));
  }
  NDArray view = *this;
  view.shape_ = shape;
  view.dtype_ = dtype;
  view.byte_offset_ = 0;
  return view;
}

NDArray NDArray::Detach() const {
  NDArray out = *this;
  out.autograd_entry_ = {};
  out.deferred_entry_ = {};
  out.grad_.reset();
  return out;
}

NDArray NDArray::grad() const { return grad_ ? *grad_ : NDArray(); }

void NDArray::set_grad(const NDArray& grad) {
  grad_ = grad.is_none() ? nullptr : std::make_shared<NDArray>(grad.Detach());
}

namespace {
std::atomic<NDArray::DeferredComputeFn> deferred_compute_hook{nullptr};
std::atomic<NDArray::TraceMethodFn> trace_method_hook{nullptr};
std::atomic<NDArray::RecordViewFn> record_view_hook{nullptr};
}  // namespace

void NDArray::SetDeferredComputeHook(DeferredComputeFn fn) {
  deferred_compute_hook.store(fn);
}

void NDArray::SetTraceMethodHook(TraceMethodFn fn) {
  trace_method_hook.store(fn);
}

void NDArray::SetRecordViewHook(RecordViewFn fn) { record_view_hook.store(fn); }

void NDArray::RecordView(const TracedCall& call, NDArray* view) const {
  // Views of arrays without history (the common case) cost nothing more.
  if (autograd_entry_.empty()) return;
  RecordViewFn fn = record_view_hook.load(std::memory_order_acquire);
  if (fn != nullptr) fn(*this, call, view);
}

bool NDArray::TraceMethod(const TracedCall& call, NDArray* out) const {
  if (deferred_entry_.empty()) return false;
  TraceMethodFn fn = trace_method_hook.load();
  return fn != nullptr && fn(*this, call, out);
}

void NDArray::ComputeDeferred() const {
  if (deferred_entry_.empty() || ptr_ == nullptr || is_written()) return;
  DeferredComputeFn fn = deferred_compute_hook.load();
  if (fn != nullptr) fn(*this);
}

void NDArray::WaitToRead() const {
  CheckNotNone("NDArray::WaitToRead");
  ComputeDeferred();
  ptr_->engine->WaitForVar(ptr_->var);
}

void NDArray::WaitToWrite() const {
  CheckNotNone("NDArray::WaitToWrite");
  ptr_->engine->PushSync([](engine::RunContext) {}, ptr_->ctx, {}, {ptr_->var},
                         engine::FnProperty::kNormal, 0, "WaitToWrite");
  ptr_->engine->WaitForVar(ptr_->var);
}

void NDArray::CheckAndAlloc() const {
  CheckNotNone("NDArray::CheckAndAlloc");
  if (!ptr_->dynamic) ptr_->Alloc();
}

bool NDArray::is_written() const {
  return ptr_ != nullptr && ptr_->written.load(std::memory_order_acquire);
}

void NDArray::MarkWritten() const {
  CheckNotNone("NDArray::MarkWritten");
  ptr_->written.store(true, std::memory_order_release);
}

void NDArray::CheckReadable(const char* who) const {
  CheckNotNone(who);
  ComputeDeferred();
  if (!is_written()) {
    throw StateError(absl::StrCat(
        who, ": array ", shape_.ToString(), " ", DTypeName(dtype_), " on ",
        ptr_->ctx.ToString(), " is read before anything wrote it"));
  }
}

TBlob NDArray::blob() const {
  TBlob b;
  FillBlob(&b);
  return b;
}

void NDArray::FillBlob(TBlob* b) const {
  b->dptr = ptr_->storage.dptr == nullptr
                ? nullptr
                : static_cast<char*>(ptr_->storage.dptr) + byte_offset_;
  b->shape = shape_;
  b->dtype = dtype_;
  b->ctx = ptr_->ctx;
  b->var = ptr_->var;
}

TBlob NDArray::AllocDynamic(const TShape& shape) const {
  CheckNotNone("NDArray::AllocDynamic");
  if (!ptr_->dynamic || ptr_->allocated.load()) {
    throw StateError(
        "NDArray::AllocDynamic: not an unallocated output of a "
        "dynamic-shape op");
  }
  {
    std::lock_guard<std::mutex> lock(ptr_->mu);
    ptr_->bytes = ByteSize(shape, dtype_);
    ptr_->computed_shape = shape;
  }
  ptr_->Alloc();
  TBlob b = blob();
  b.shape = shape;
  return b;
}

void NDArray::SyncCopyFromCPU(const void* data, size_t count) {
  CheckNotNone("NDArray::SyncCopyFromCPU");
  if (static_cast<int64_t>(count) != size()) {
    throw ShapeError(absl::StrCat("NDArray::SyncCopyFromCPU: got ", count,
                                  " elements for an array of shape ",
                                  shape().ToString()));
  }
  if (!ptr_->ctx.is_host()) {
    NDArray host(shape_, Context::CPU(), dtype_);
    host.SyncCopyFromCPU(data, count);
    CopyFromTo(host, *this);
    WaitToRead();
    return;
  }
  CheckAndAlloc();
  MarkWritten();
  TBlob dst = blob();
  ptr_->engine->PushSync(
      [dst, data](engine::RunContext) {
        const size_t bytes = dst.Size() * DTypeSize(dst.dtype);
        if (bytes > 0) std::memcpy(dst.dptr, data, bytes);
      },
      ptr_->ctx, {}, {ptr_->var}, engine::FnProperty::kNormal, 0,
      "SyncCopyFromCPU");
  ptr_->engine->WaitForVar(ptr_->var);
}

void NDArray::SyncCopyToCPU(void* data, size_t count) const {
  CheckReadable("NDArray::SyncCopyToCPU");
  if (static_cast<int64_t>(count) != size()) {
    throw ShapeError(absl::StrCat("NDArray::SyncCopyToCPU: room for ", count,
                                  " elements, but the array has shape ",
                                  shape().ToString()));
  }
  if (!ptr_->ctx.is_host()) {
    Copy(Context::CPU()).SyncCopyToCPU(data, count);
    return;
  }
  WaitToRead();
  if (count > 0) {
    std::memcpy(data, blob().dptr, count * DTypeSize(dtype_));
  }
}

NDArray NDArray::Copy(Context ctx) const {
  if (NDArray traced;
      TraceMethod({TracedCall::kCopy, TShape(), 0, 0, ctx}, &traced)) {
    return traced;
  }
  NDArray out(shape(), ctx, dtype_);
  CopyFromTo(*this, out);
  return out;
}

void NDArray::ThrowDTypeMismatch(DType requested) const {
  throw DTypeError(absl::StrCat("NDArray: requested elements as ",
                                DTypeName(requested), " but the array is ",
                                DTypeName(dtype_)));
}

namespace {

// The copy between two contexts: direct between host memories, else the
// one the device plugin registered; NotFound naming both when there is none.
DeviceCopyFn FindCopy(const char* who, Context fctx, Context tctx) {
  if (fctx.is_host() && tctx.is_host()) {
    return [](const TBlob& f, const TBlob& t, engine::RunContext) {
      HostCopy(f, t);
    };
  }
  const int dev_type = fctx.is_host() ? tctx.dev_type : fctx.dev_type;
  {
    std::lock_guard<std::mutex> lock(CopyRegistryMutex());
    auto it = CopyRegistry().find(dev_type);
    if (it != CopyRegistry().end()) return it->second;
  }
  throw NotFound(absl::StrCat(who, " ", fctx.ToString(), " -> ",
                              tctx.ToString(),
                              ": no device plugin registered copies for "
                              "this device"));
}

}  // namespace

void CopyFromTo(const NDArray& from, const NDArray& to, int priority) {
  from.CheckReadable("CopyFromTo (source)");
  if (to.is_none()) throw StateError("CopyFromTo: the destination is none");
  if (from.shape() != to.shape()) {
    throw ShapeError(absl::StrCat(
        "CopyFromTo: source shape ", from.shape().ToString(),
        " differs from destination shape ", to.shape().ToString()));
  }
  const Context fctx = from.ctx(), tctx = to.ctx();
  DeviceCopyFn copy = FindCopy("CopyFromTo", fctx, tctx);
  engine::FnProperty prop = engine::FnProperty::kNormal;
  Context exec = tctx;
  if (!fctx.is_host() || !tctx.is_host()) {
    prop = fctx.is_host() ? engine::FnProperty::kCopyToDevice
                          : engine::FnProperty::kCopyFromDevice;
    exec = fctx.is_host() ? tctx : fctx;
  }
  to.CheckAndAlloc();
  to.MarkWritten();
  const TBlob src = from.blob(), dst = to.blob();
  engine::Engine::Get()->PushSync(
      [copy, src, dst](engine::RunContext rctx) { copy(src, dst, rctx); }, exec,
      {from.var()}, {to.var()}, prop, priority, "CopyFromTo");
}

void CopyBlob(const TBlob& from, const TBlob& to, engine::RunContext rctx) {
  if (from.shape != to.shape) {
    throw ShapeError(
        absl::StrCat("CopyBlob: source shape ", from.shape.ToString(),
                     " differs from destination shape ", to.shape.ToString()));
  }
  FindCopy("CopyBlob", from.ctx, to.ctx)(from, to, rctx);
}

void RegisterDeviceCopy(int dev_type, DeviceCopyFn fn) {
  std::lock_guard<std::mutex> lock(CopyRegistryMutex());
  if (!CopyRegistry().emplace(dev_type, std::move(fn)).second) {
    throw AlreadyExists(absl::StrCat("RegisterDeviceCopy: device type ",
                                     dev_type, " already has a copy function"));
  }
}

void UnregisterDeviceCopy(int dev_type) {
  std::lock_guard<std::mutex> lock(CopyRegistryMutex());
  CopyRegistry().erase(dev_type);
}

namespace {

template <typename T>
void PrintValue(std::ostream& os, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, int8_t> ||
                       std::is_same_v<T, uint8_t>) {
    os << static_cast<int>(v);
  } else if constexpr (std::is_integral_v<T>) {
    os << v;
  } else if constexpr (std::is_same_v<T, double>) {
    os << v;
  } else {
    os << static_cast<float>(v);
  }
}

template <typename T>
void PrintAxis(std::ostream& os, const T* data, const TShape& s, int axis,
               int64_t offset, int edge) {
  if (axis == s.ndim()) {
    PrintValue(os, data[offset]);
    return;
  }
  const int64_t n = s[axis];
  const int64_t stride = s.ProdDims(axis + 1, s.ndim());
  os << "[";
  for (int64_t i = 0; i < n; ++i) {
    if (n > 2 * edge && i == edge) {
      os << "...";
      i = n - edge - 1;
      if (i + 1 < n) os << ", ";
      continue;
    }
    PrintAxis(os, data, s, axis + 1, offset + i * stride, edge);
    if (i + 1 < n) {
      os << ",";
      if (axis + 1 < s.ndim()) {
        os << "\n" << std::string(axis + 1, ' ');
      } else {
        os << " ";
      }
    }
  }
  os << "]";
}

}  // namespace

std::string NDArray::ToString(int edge) const {
  if (is_none()) return "<NDArray none>";
  std::ostringstream os;
  os.precision(6);
  const TShape& s = shape();
  NDArray host = ctx().is_host() ? *this : Copy(Context::CPU());
  host.CheckReadable("NDArray::ToString");
  host.WaitToRead();
  MX_DTYPE_SWITCH(dtype_, T, {
    PrintAxis(os, static_cast<const T*>(host.blob().dptr), s, 0, 0, edge);
  });
  std::string dims;
  for (int i = 0; i < s.ndim(); ++i) {
    absl::StrAppend(&dims, i ? "x" : "", s[i]);
  }
  os << "\n<NDArray " << (s.ndim() == 0 ? "scalar" : dims) << " "
     << DTypeName(dtype_) << " @" << ctx().ToString() << ">";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const NDArray& a) {
  return os << a.ToString();
}

}  // namespace mx
