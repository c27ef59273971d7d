#include "plugin/c_util.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/parallel.h"
#include "graph/random_engine.h"

namespace mx {
namespace plugin {

void ThrowIfFailed(MxStatusCode code, const MxStatus& status,
                   const std::string& who) {
  if (code == MX_STATUS_OK) return;
  // The message is the plugin's: never trust it to be terminated.
  const std::string message(status.message,
                            strnlen(status.message, sizeof(status.message)));
  const std::string text = absl::StrCat(
      who, ": ", message.empty() ? "(the plugin gave no message)" : message);
  switch (code) {
    case MX_STATUS_INVALID_ARGUMENT:
      throw InvalidArgument(text);
    case MX_STATUS_SHAPE_ERROR:
      throw ShapeError(text);
    case MX_STATUS_DTYPE_ERROR:
      throw DTypeError(text);
    case MX_STATUS_NOT_FOUND:
      throw NotFound(text);
    case MX_STATUS_ALREADY_EXISTS:
      throw AlreadyExists(text);
    case MX_STATUS_NOT_IMPLEMENTED:
      throw NotImplemented(text);
    case MX_STATUS_OUT_OF_MEMORY:
    case MX_STATUS_RUNTIME_ERROR:
      throw RuntimeError(text);
    default:
      throw RuntimeError(absl::StrCat(text, " (unknown status code ",
                                      static_cast<int>(code), ")"));
  }
}

MxStatus EmptyStatus() {
  MxStatus s;
  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  return s;
}

void CheckStructSize(size_t struct_size, size_t min_size, const char* type,
                     const std::string& who) {
  if (struct_size < min_size) {
    throw InvalidArgument(absl::StrCat(who, ": ", type, ".struct_size is ",
                                       struct_size,
                                       " but ABI 1.0 needs at "
                                       "least ",
                                       min_size));
  }
}

std::string CopyString(const char* s) { return s == nullptr ? "" : s; }

CTensors::CTensors(const std::vector<TBlob>& blobs)
    : data_(inline_), size_(static_cast<int32_t>(blobs.size())) {
  if (blobs.size() > kInline) {
    heap_ = std::make_unique<MxTensor[]>(blobs.size());
    data_ = heap_.get();
  }
  for (size_t i = 0; i < blobs.size(); ++i) {
    const TBlob& b = blobs[i];
    MxTensor& t = data_[i];
    t.struct_size = sizeof(MxTensor);
    t.data = b.dptr;
    t.dtype = static_cast<int32_t>(b.dtype);
    t.ndim = b.shape.ndim();
    t.shape = b.shape.begin();
    t.dev_type = b.ctx.dev_type;
    t.dev_id = b.ctx.dev_id;
  }
}

CAttrStrings::CAttrStrings(const AttrDict& dict, const char* node_name) {
  keys_.reserve(dict.size());
  values_.reserve(dict.size());
  for (const auto& [k, v] : dict) {
    keys_.push_back(k.c_str());
    values_.push_back(v.c_str());
  }
  c_.struct_size = sizeof(MxAttrs);
  c_.num = static_cast<int32_t>(keys_.size());
  c_.keys = keys_.data();
  c_.values = values_.data();
  c_.node_name = node_name;
}

absl::InlinedVector<int32_t, 8> CRequests(const std::vector<OpReqType>& req) {
  absl::InlinedVector<int32_t, 8> out;
  out.reserve(req.size());
  for (OpReqType r : req) {
    switch (r) {
      case OpReqType::kNullOp:
        out.push_back(MX_REQ_NULL);
        break;
      case OpReqType::kWriteTo:
        out.push_back(MX_REQ_WRITE);
        break;
      case OpReqType::kWriteInplace:
        out.push_back(MX_REQ_INPLACE);
        break;
      case OpReqType::kAddTo:
        out.push_back(MX_REQ_ADD);
        break;
    }
  }
  return out;
}

MxStatusCode CodeOf(const Error& e) {
  if (dynamic_cast<const AlreadyExists*>(&e)) return MX_STATUS_ALREADY_EXISTS;
  if (dynamic_cast<const ShapeError*>(&e)) return MX_STATUS_SHAPE_ERROR;
  if (dynamic_cast<const DTypeError*>(&e)) return MX_STATUS_DTYPE_ERROR;
  if (dynamic_cast<const InvalidArgument*>(&e)) {
    return MX_STATUS_INVALID_ARGUMENT;
  }
  if (dynamic_cast<const NotFound*>(&e)) return MX_STATUS_NOT_FOUND;
  if (dynamic_cast<const NotImplemented*>(&e)) return MX_STATUS_NOT_IMPLEMENTED;
  return MX_STATUS_RUNTIME_ERROR;
}

namespace {

using Host = CKernelContext::Host;

void* TempSpace(void* host, size_t bytes) {
  try {
    return static_cast<Host*>(host)->ctx->TempSpace(bytes);
  } catch (...) {
    return nullptr;  // Not requested, or no memory: the kernel reports it.
  }
}

uint64_t RandomU64(void* host) {
  const OpContext* ctx = static_cast<Host*>(host)->ctx;
  return ctx->rng == nullptr ? 0 : (*ctx->rng)();
}

void ParallelForC(void*, int64_t n, int64_t grain, MxParallelBody body,
                  void* arg) {
  ParallelFor(n, grain, [&](int64_t b, int64_t e) { body(arg, b, e); });
}

MxStatusCode Fail(MxStatus* status, MxStatusCode code,
                  const std::string& message) {
  if (status != nullptr) {
    const size_t n = std::min(message.size(), sizeof(status->message) - 1);
    std::memcpy(status->message, message.data(), n);
    status->message[n] = '\0';
  }
  return code;
}

// The shape a dynamic-shape kernel asks for, checked against what shape
// inference knew (rank and the known dims) before anything is allocated.
// Read when the kernel runs: every write ordered before it has completed,
// so the version is the one of the contents the kernel sees.
void InputVersion(void* host, int32_t index, uint64_t* array_id,
                  uint64_t* version) {
  const auto* h = static_cast<const CKernelContext::Host*>(host);
  *array_id = 0;
  *version = 0;
  if (index < 0 || static_cast<size_t>(index) >= h->inputs->size()) return;
  const engine::VarHandle& var = (*h->inputs)[index].var;
  if (!var.valid()) return;
  *array_id = var.id();
  *version = var.version();
}

MxStatusCode AllocOutput(void* host, int32_t index, int32_t ndim,
                         const int64_t* shape, const MxTensor** tensor,
                         MxStatus* status) {
  Host* h = static_cast<Host*>(host);
  if (h->dynamic_outputs == nullptr) {
    return Fail(status, MX_STATUS_INVALID_ARGUMENT,
                "alloc_output: the op is not dynamic-shape");
  }
  const std::vector<NDArray>& outs = *h->dynamic_outputs;
  if (index < 0 || index >= static_cast<int32_t>(outs.size())) {
    return Fail(
        status, MX_STATUS_INVALID_ARGUMENT,
        absl::StrCat("alloc_output: output ", index, " of ", outs.size()));
  }
  if (h->allocated[index]) {
    return Fail(
        status, MX_STATUS_RUNTIME_ERROR,
        absl::StrCat("alloc_output: output ", index, " is already allocated"));
  }
  // static_shape: shape() would wait for this very operation.
  const TShape& known = outs[index].static_shape();
  constexpr int32_t kMaxRank = 32;
  if (ndim < 0 || ndim > kMaxRank || (ndim > 0 && shape == nullptr) ||
      (known.ndim_known() && known.ndim() != ndim)) {
    return Fail(status, MX_STATUS_SHAPE_ERROR,
                absl::StrCat("alloc_output: output ", index, " of rank ", ndim,
                             " where shape inference gave ", known.ToString()));
  }
  std::vector<int64_t> dims(shape, shape + ndim);
  for (int d = 0; d < ndim; ++d) {
    if (dims[d] < 0 ||
        (known.ndim_known() && known[d] >= 0 && known[d] != dims[d])) {
      return Fail(
          status, MX_STATUS_SHAPE_ERROR,
          absl::StrCat("alloc_output: output ", index, " of shape ",
                       TShape(dims).ToString(), " where shape inference gave ",
                       known.ToString()));
    }
  }
  try {
    auto s = std::make_unique<TShape>(dims);
    const TBlob b = outs[index].AllocDynamic(*s);
    auto t = std::make_unique<MxTensor>();
    t->struct_size = sizeof(MxTensor);
    t->data = b.dptr;
    t->dtype = static_cast<int32_t>(b.dtype);
    t->ndim = ndim;
    t->shape = s->begin();
    t->dev_type = b.ctx.dev_type;
    t->dev_id = b.ctx.dev_id;
    *tensor = t.get();
    h->shapes.push_back(std::move(s));
    h->tensors.push_back(std::move(t));
    h->allocated[index] = true;
    return MX_STATUS_OK;
  } catch (const Error& e) {
    return Fail(status, CodeOf(e), e.what());
  } catch (const std::exception& e) {
    return Fail(status, MX_STATUS_RUNTIME_ERROR,
                absl::StrCat("alloc_output: ", e.what()));
  }
}

}  // namespace

CKernelContext::CKernelContext(const OpContext& ctx,
                               const std::vector<TBlob>& inputs,
                               const std::vector<NDArray>* dynamic_outputs)
    : host_{&ctx, &inputs, dynamic_outputs, {}, {}, {}} {
  if (dynamic_outputs != nullptr) {
    host_.allocated.assign(dynamic_outputs->size(), false);
  }
  // Up to the last field: sizeof would count the tail padding after
  // num_threads, where a later minor version's int32_t field would go.
  std::memset(&c_, 0, sizeof(c_));
  c_.struct_size = MX_STRUCT_SIZE_UPTO(MxKernelContext, num_threads);
  c_.is_train = ctx.is_train ? 1 : 0;
  c_.dev_type = ctx.run_ctx.ctx.dev_type;
  c_.dev_id = ctx.run_ctx.ctx.dev_id;
  c_.stream = ctx.run_ctx.stream;
  c_.host = &host_;
  c_.temp_space = TempSpace;
  c_.random_u64 = RandomU64;
  c_.parallel_for = ParallelForC;
  c_.alloc_output = dynamic_outputs != nullptr ? AllocOutput : nullptr;
  c_.input_version = InputVersion;
  c_.num_threads = KernelThreadsHere();
}

}  // namespace plugin
}  // namespace mx
