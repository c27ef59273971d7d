#include "nn/parameter.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "nn/trace_context.h"

namespace mx {
namespace nn {
namespace {

// Unknown dimensions are stored as 0 so shape() reads the same however
// the caller wrote them (0 or -1).
TShape Normalize(const TShape& shape) {
  if (!shape.ndim_known()) return shape;
  TShape out = shape;
  for (int d = 0; d < out.ndim(); ++d) {
    if (out[d] < 0) out[d] = 0;
  }
  return out;
}

OpReqType ReqOf(GradReq req) {
  return req == GradReq::kAdd ? OpReqType::kAddTo : OpReqType::kWriteTo;
}

}  // namespace

std::string ShapeString(const TShape& shape) {
  if (!shape.ndim_known()) return "<unknown>";
  return absl::StrCat("(", absl::StrJoin(shape.dims(), ","),
                      shape.ndim() == 1 ? ",)" : ")");
}

Parameter::Parameter(std::string name, TShape shape, Options options)
    : name_(std::move(name)),
      shape_(Normalize(shape)),
      options_(std::move(options)) {}

bool Parameter::shape_known() const {
  if (!shape_.ndim_known()) return false;
  for (int64_t d : shape_) {
    if (d <= 0) return false;
  }
  return true;
}

void Parameter::SetShape(const TShape& shape) {
  const TShape given = Normalize(shape);
  bool ok = given.ndim_known() &&
            (!shape_.ndim_known() || shape_.ndim() == given.ndim());
  for (int d = 0; ok && shape_.ndim_known() && d < given.ndim(); ++d) {
    ok = shape_[d] <= 0 || given[d] <= 0 || shape_[d] == given[d];
  }
  if (!ok) {
    throw ShapeError(absl::StrCat("Parameter \"", name_, "\": shape ",
                                  ShapeString(given), " contradicts its shape ",
                                  ShapeString(shape_)));
  }
  TShape merged = given;
  for (int d = 0; shape_.ndim_known() && d < merged.ndim(); ++d) {
    if (merged[d] <= 0) merged[d] = shape_[d];
  }
  shape_ = merged;
  if (deferred_ && shape_known()) {
    deferred_ = false;
    Create(deferred_init_, deferred_ctx_);
    deferred_init_ = nullptr;
  }
}

void Parameter::Initialize(const InitializerPtr& default_init, Context ctx,
                           bool force_reinit) {
  if (is_initialized() && !force_reinit) return;
  InitializerPtr init = options_.init ? options_.init : default_init;
  if (init == nullptr) init = init::Uniform();
  if (!shape_known()) {
    deferred_ = true;
    deferred_init_ = init;
    deferred_ctx_ = ctx;
    return;
  }
  Create(init, ctx);
}

void Parameter::Create(const InitializerPtr& init, Context ctx) {
  // Initialization may happen while a block traces its Forward (deferred
  // shapes) or while autograd records; it must be neither.
  imperative::DeferredComputeScope no_trace(false);
  imperative::RecordingScope no_record(false);
  NDArray value = init->Create(name_, shape_, options_.dtype, ctx);
  if (value.shape() != shape_ || value.dtype() != options_.dtype) {
    throw InvalidArgument(absl::StrCat(
        "Parameter \"", name_, "\": initializer ", init->ToString(),
        " made an array of shape ", value.shape().ToString(), " and dtype ",
        DTypeName(value.dtype()), " for shape ", shape_.ToString(), " and ",
        DTypeName(options_.dtype)));
  }
  data_ = value;
  if (options_.grad_req != GradReq::kNull) {
    autograd::AttachGrad(&data_, ReqOf(options_.grad_req));
  }
}

NDArray Parameter::RealData() const {
  if (!is_initialized()) {
    if (deferred_) {
      throw StateError(absl::StrCat(
          "Parameter \"", name_, "\" has unknown shape ", ShapeString(shape_),
          ": its initialization waits for the shape (set it with SetShape, "
          "e.g. in the block's InferShape, or run the block once)"));
    }
    throw StateError(absl::StrCat("Parameter \"", name_,
                                  "\" has not been initialized (call "
                                  "Initialize() on it or on its block)"));
  }
  return data_;
}

NDArray Parameter::data() const {
  NDArray value = RealData();
  if (imperative::IsDeferredCompute()) {
    if (internal::TraceContext* trace = internal::TraceContext::Current()) {
      return trace->VariableFor(*this, value);
    }
  }
  return value;
}

NDArray Parameter::grad() const {
  const NDArray value = RealData();
  if (options_.grad_req == GradReq::kNull) {
    throw StateError(absl::StrCat("Parameter \"", name_,
                                  "\" has no gradient (grad_req is null)"));
  }
  return value.grad();
}

void Parameter::ZeroGrad() {
  if (!is_initialized() || options_.grad_req == GradReq::kNull) return;
  imperative::DeferredComputeScope no_trace(false);
  imperative::RecordingScope no_record(false);
  const NDArray g = data_.grad();
  nd::CallInto("zeros_like", {g}, {}, g);
}

void Parameter::SetData(const NDArray& value, Context ctx) {
  SetShape(value.shape());
  if (!shape_known() || shape_ != value.shape()) {
    throw ShapeError(absl::StrCat(
        "Parameter \"", name_, "\": value of shape ", value.shape().ToString(),
        " does not fit its shape ", ShapeString(shape_)));
  }
  imperative::DeferredComputeScope no_trace(false);
  imperative::RecordingScope no_record(false);
  if (!is_initialized()) {
    deferred_ = false;
    deferred_init_ = nullptr;
    Create(init::Zeros(), ctx);
  }
  CopyFromTo(value, data_);
}

}  // namespace nn
}  // namespace mx
