#include "plugin/c_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/parallel.h"

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

namespace {

void* TempSpace(void* host, size_t bytes) {
  try {
    return static_cast<const OpContext*>(host)->TempSpace(bytes);
  } catch (...) {
    return nullptr;  // Not requested, or no memory: the kernel reports it.
  }
}

uint64_t RandomU64(void* host) {
  const OpContext* ctx = static_cast<const OpContext*>(host);
  return ctx->rng == nullptr ? 0 : (*ctx->rng)();
}

void ParallelForC(void*, int64_t n, int64_t grain, MxParallelBody body,
                  void* arg) {
  ParallelFor(n, grain, [&](int64_t b, int64_t e) { body(arg, b, e); });
}

}  // namespace

CKernelContext::CKernelContext(const OpContext& ctx) {
  c_.struct_size = sizeof(c_);
  c_.is_train = ctx.is_train ? 1 : 0;
  c_.dev_type = ctx.run_ctx.ctx.dev_type;
  c_.dev_id = ctx.run_ctx.ctx.dev_id;
  c_.stream = ctx.run_ctx.stream;
  c_.host = const_cast<OpContext*>(&ctx);
  c_.temp_space = TempSpace;
  c_.random_u64 = RandomU64;
  c_.parallel_for = ParallelForC;
}

}  // namespace plugin
}  // namespace mx
