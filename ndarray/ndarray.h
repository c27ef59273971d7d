// NDArray: an n-dimensional array whose reads and writes go through the
// engine.
//
// An NDArray is a view (shape, dtype, byte offset) of a shared chunk: device
// memory plus the engine var that orders every operation on it. Copies of an
// NDArray and views made by Reshape/Slice/At share the chunk, so they see
// each other's writes. Operations on arrays are asynchronous; the Sync* calls
// and Wait* calls block until the array's pending writes are done.
//
//   mx::NDArray a = mx::NDArray::FromVector<float>({2, 2}, {1, 2, 3, 4});
//   mx::NDArray row = a.At(1);               // shares memory: (2,) = [3, 4]
//   std::vector<float> v = row.ToVector<float>();
//   std::cout << a;                          // values, shape, dtype, context
#ifndef MXCORE_NDARRAY_NDARRAY_H_
#define MXCORE_NDARRAY_NDARRAY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "base/context.h"
#include "engine/engine.h"
#include "ndarray/dtype.h"
#include "ndarray/shape.h"
#include "ndarray/storage.h"

namespace mx {

struct Node;  // graph/node.h; arrays only point at nodes.

// Where an array came from in a recorded computation: output `index` of
// `node`. Autograd and deferred compute (layers above) keep one each; the
// array only carries it.
struct ArrayHistory {
  std::shared_ptr<Node> node;
  uint32_t index = 0;
  bool empty() const { return node == nullptr; }
};

// A typed view of raw memory, what kernels see.
struct TBlob {
  void* dptr = nullptr;
  TShape shape;
  DType dtype = DType::kFloat32;
  Context ctx;
  // The array's dependency variable when the blob views an NDArray
  // (invalid for temporaries): at run time, var.id() and var.version()
  // identify the contents a kernel reads.
  engine::VarHandle var;

  template <typename T>
  T* data() const {
    return static_cast<T*>(dptr);
  }
  int64_t Size() const { return shape.Size(); }
};

class NDArray {
 public:
  // A "none" array: no chunk. Most calls on it throw StateError.
  NDArray() = default;
  // Memory is allocated on first write unless `delay_alloc` is false. The
  // contents are undefined until written; reading first is a StateError.
  // An unknown `shape` makes an output of a dynamic-shape op (see shape()).
  explicit NDArray(const TShape& shape, Context ctx = Context::CPU(),
                   DType dtype = DType::kFloat32, bool delay_alloc = true);

  template <typename T>
  static NDArray FromVector(const TShape& shape, const std::vector<T>& values,
                            Context ctx = Context::CPU()) {
    NDArray a(shape, ctx, DTypeOf<T>::value);
    if constexpr (std::is_same_v<T, bool>) {  // vector<bool> packs bits.
      std::vector<uint8_t> bytes(values.begin(), values.end());
      a.SyncCopyFromCPU(bytes.data(), bytes.size());
    } else {
      a.SyncCopyFromCPU(values.data(), values.size());
    }
    return a;
  }

  bool is_none() const { return ptr_ == nullptr; }
  // For an output of a dynamic-shape op, waits for the op to compute it.
  const TShape& shape() const;
  // The shape as far as known now, without waiting (unknown for a
  // dynamic-shape output not computed yet).
  const TShape& static_shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Context ctx() const;
  int ndim() const { return shape().ndim(); }
  int64_t size() const { return shape().Size(); }
  size_t byte_offset() const { return byte_offset_; }
  engine::VarHandle var() const;
  // Completed writes to the underlying chunk.
  uint64_t version() const { return var().version(); }

  // Views sharing memory. A view has no autograd history of its own unless
  // it was made while recording from an array with one; then it is
  // recorded as the op it stands for (Reshape, slice_axis, slice_axis +
  // squeeze), so gradients flow back to the viewed array.
  //
  // Reshape: the target in MXNet's codes, as the Reshape op reads them (0
  // copies a dim, -1 infers one, -2 copies the rest, -3 merges two, -4
  // splits one; `reverse` applies them from the right; see reshape.h).
  NDArray Reshape(const TShape& shape, bool reverse = false) const;
  // Rows [begin, end) of the first axis.
  NDArray Slice(int64_t begin, int64_t end) const;
  // Row i of the first axis, with that axis dropped.
  NDArray At(int64_t i) const;
  // The chunk's memory (from its start) seen as `shape` of `dtype`; the view
  // must fit in the chunk. Used by executors to place values in planned
  // storage blocks.
  NDArray ViewAs(const TShape& shape, DType dtype) const;
  // Same data, without autograd or deferred-compute history and without
  // an attached gradient.
  NDArray Detach() const;

  // Histories, set by autograd (recording) and deferred compute (tracing).
  const ArrayHistory& autograd_entry() const { return autograd_entry_; }
  void set_autograd_entry(ArrayHistory h) { autograd_entry_ = std::move(h); }
  const ArrayHistory& deferred_entry() const { return deferred_entry_; }
  void set_deferred_entry(ArrayHistory h) { deferred_entry_ = std::move(h); }
  // The gradient buffer attached by autograd::AttachGrad (none otherwise).
  NDArray grad() const;
  void set_grad(const NDArray& grad);

  // Deferred compute installs the function that computes an array's
  // recorded history; reads of a traced array that nothing wrote yet (wait,
  // copy, print, shape of a dynamic-shape output) call it first.
  using DeferredComputeFn = void (*)(const NDArray&);
  static void SetDeferredComputeHook(DeferredComputeFn fn);
  // Views and copies of traced arrays made while tracing are traced too
  // (as reshape / slice / copy ops): the hook returns true and sets `out`
  // when it traced the call.
  struct TracedCall {
    enum Method { kReshape, kSlice, kAt, kCopy } method;
    TShape shape;                // kReshape (the codes)
    int64_t begin = 0, end = 0;  // kSlice (begin, end), kAt (begin)
    Context ctx{};               // kCopy
    bool reverse = false;        // kReshape
  };
  using TraceMethodFn = bool (*)(const NDArray& self, const TracedCall& call,
                                 NDArray* out);
  static void SetTraceMethodHook(TraceMethodFn fn);
  // Autograd installs the function that records a view (`call` is kReshape,
  // kSlice or kAt) of `self`, an array with an autograd history, while
  // recording: it sets `view`'s history. Views of arrays without a history
  // never call it.
  using RecordViewFn = void (*)(const NDArray& self, const TracedCall& call,
                                NDArray* view);
  static void SetRecordViewHook(RecordViewFn fn);
  // True when both are views of the same chunk.
  bool SharesChunkWith(const NDArray& other) const {
    return ptr_ != nullptr && ptr_ == other.ptr_;
  }

  // Blocks until pending writes (WaitToRead) or all pending operations
  // (WaitToWrite; counts as a write) on the array are done; rethrows their
  // errors.
  void WaitToRead() const;
  void WaitToWrite() const;

  // Blocking copies from/to host memory; `count` must equal size().
  void SyncCopyFromCPU(const void* data, size_t count);
  void SyncCopyToCPU(void* data, size_t count) const;
  template <typename T>
  std::vector<T> ToVector() const {
    if (DTypeOf<T>::value != dtype_) ThrowDTypeMismatch(DTypeOf<T>::value);
    if constexpr (std::is_same_v<T, bool>) {  // vector<bool> packs bits.
      std::vector<uint8_t> bytes(static_cast<size_t>(size()));
      SyncCopyToCPU(bytes.data(), bytes.size());
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(static_cast<size_t>(size()));
      SyncCopyToCPU(out.data(), out.size());
      return out;
    }
  }
  // A new array on `ctx` with the same contents (asynchronous).
  NDArray Copy(Context ctx) const;

  // Internal, for operator invocation: the kernel's view of this array.
  // REQUIRES: allocated (CheckAndAlloc) and accessed inside an engine op.
  TBlob blob() const;
  // blob() written into an existing record, without a temporary (Invoke
  // fills its recycled launch records so).
  void FillBlob(TBlob* blob) const;
  void CheckAndAlloc() const;
  // Whether anything has been scheduled to write the chunk; reading an
  // array that nothing wrote is an error.
  bool is_written() const;
  void MarkWritten() const;
  // Throws StateError naming `who` unless the array is written.
  void CheckReadable(const char* who) const;
  // Dynamic-shape outputs: allocates the chunk for `shape` from inside the
  // engine op that computes it, and records the shape.
  TBlob AllocDynamic(const TShape& shape) const;

  // "[[1, 2],\n [3, 4]]\n<NDArray 2x2 float32 @cpu(0)>", at most
  // `edge` leading and trailing items per axis. Waits for the array.
  std::string ToString(int edge = 3) const;

 private:
  struct Chunk;
  void ThrowDTypeMismatch(DType requested) const;
  void CheckNotNone(const char* who) const;
  // Computes a traced array's history if it is still pending.
  void ComputeDeferred() const;
  bool TraceMethod(const TracedCall& call, NDArray* out) const;
  // A view of this chunk with `shape` at `byte_offset`, without history.
  NDArray View(const TShape& shape, size_t byte_offset) const;
  // Gives `view` (of this array) its autograd history, if it gets one.
  void RecordView(const TracedCall& call, NDArray* view) const;

  std::shared_ptr<Chunk> ptr_;
  mutable TShape shape_;
  DType dtype_ = DType::kFloat32;
  size_t byte_offset_ = 0;
  ArrayHistory autograd_entry_;
  ArrayHistory deferred_entry_;
  std::shared_ptr<NDArray> grad_;
};

// Copies `from` into `to` (same shape; the dtype is converted) through the
// engine. Host contexts copy directly; device copies need a device plugin.
void CopyFromTo(const NDArray& from, const NDArray& to, int priority = 0);

// CopyFromTo's copy step, for a kernel copying between blobs of the
// operation it runs (on `rctx`'s stream for a device; same shape, and the
// same dtype where a device is involved).
void CopyBlob(const TBlob& from, const TBlob& to, engine::RunContext rctx);

// Device plugins register copies between host and their device type.
using DeviceCopyFn =
    std::function<void(const TBlob& from, const TBlob& to, engine::RunContext)>;
void RegisterDeviceCopy(int dev_type, DeviceCopyFn fn);
void UnregisterDeviceCopy(int dev_type);

std::ostream& operator<<(std::ostream& os, const NDArray& a);

}  // namespace mx

#endif  // MXCORE_NDARRAY_NDARRAY_H_
