// Plugin kernels as mxcore kernels: the call through the C ABI, declines
// that fall back to the replaced kernel, and kernels registered for
// existing ops (MxKernelDef).
#include "plugin/c_kernel.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "graph/node.h"
#include "graph/op.h"
#include "plugin/c_util.h"
#include "plugin/registrar.h"

namespace mx {
namespace plugin {

std::string KernelLabel(const std::string& who, const NodeAttrs& attrs) {
  return absl::StrCat(who, ": op ",
                      attrs.op != nullptr ? attrs.op->name() : "?",
                      attrs.name.empty() ? "" : " \"" + attrs.name + "\"");
}

FCompute WrapCompute(MxComputeFn fn, void* user_data, std::string who,
                     bool c_op,
                     std::shared_ptr<const Op::DeviceKernels> fallback) {
  return [fn, user_data, who, c_op, fallback](
             const OpContext& ctx, const NodeAttrs& attrs,
             const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
             const std::vector<TBlob>& out) {
    const CTensors cin(in), cout(out);
    const auto creq = CRequests(req);
    const CKernelContext cctx(ctx, in);
    MxStatus status;
    status.struct_size = sizeof(status);
    status.message[0] = '\0';
    // A built-in op's node: its attribute strings.
    std::optional<CAttrStrings> host_attrs;
    const void* c_attrs =
        c_op ? ParsedOf(attrs)
             : host_attrs.emplace(attrs.dict, attrs.name.c_str()).get();
    const MxStatusCode code =
        fn(user_data, c_attrs, cctx.get(), cin.data(), cin.size(), creq.data(),
           cout.data(), cout.size(), &status);
    if (code == MX_STATUS_NOT_IMPLEMENTED && fallback != nullptr &&
        fallback->compute) {
      return (*fallback->compute)(ctx, attrs, in, req, out);
    }
    // The label is built only on failure: this is on every kernel call.
    if (code != MX_STATUS_OK) {
      ThrowIfFailed(code, status, KernelLabel(who, attrs));
    }
  };
}

FComputeDynamic WrapComputeDynamic(
    MxComputeFn fn, void* user_data, std::string who,
    std::shared_ptr<const Op::DeviceKernels> fallback) {
  return [fn, user_data, who, fallback](
             const OpContext& ctx, const NodeAttrs& attrs,
             const std::vector<TBlob>& in, const std::vector<NDArray>& out) {
    const CTensors cin(in);
    std::vector<MxTensor> cout(out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      const Context c = out[i].ctx();
      cout[i] = MxTensor{sizeof(MxTensor),
                         nullptr,
                         static_cast<int32_t>(out[i].dtype()),
                         -1,
                         nullptr,
                         c.dev_type,
                         c.dev_id};
    }
    const std::vector<int32_t> creq(out.size(), MX_REQ_WRITE);
    const CKernelContext cctx(ctx, in, &out);
    MxStatus status = EmptyStatus();
    const CAttrStrings host_attrs(attrs.dict, attrs.name.c_str());
    const MxStatusCode code = fn(
        user_data, host_attrs.get(), cctx.get(), cin.data(), cin.size(),
        creq.data(), cout.data(), static_cast<int32_t>(cout.size()), &status);
    if (code == MX_STATUS_NOT_IMPLEMENTED && cctx.NumAllocated() == 0 &&
        fallback != nullptr && fallback->compute_dynamic) {
      return (*fallback->compute_dynamic)(ctx, attrs, in, out);
    }
    if (code != MX_STATUS_OK) {
      ThrowIfFailed(code, status, KernelLabel(who, attrs));
    }
    if (cctx.NumAllocated() != out.size()) {
      throw RuntimeError(
          absl::StrCat(KernelLabel(who, attrs),
                       ": the kernel of a dynamic-shape op "
                       "allocated ",
                       cctx.NumAllocated(), " of its ", out.size(),
                       " outputs (each must be allocated with alloc_output)"));
    }
  };
}

void CheckDevType(int32_t dev_type, const std::string& label) {
  if (dev_type <= 0 || dev_type == Context::kCPUPinned) {
    throw InvalidArgument(absl::StrCat(label, ": device type ", dev_type,
                                       " is not one kernels run on"));
  }
}

void AddCKernel(const MxKernelDef& def, const std::string& who,
                UndoList* undo) {
  CheckStructSize(def.struct_size, MX_STRUCT_SIZE_UPTO(MxKernelDef, user_data),
                  "MxKernelDef", who);
  const std::string op_name = CopyString(def.op_name);
  const std::string label =
      absl::StrCat(who, ": kernel for op \"", op_name, "\"");
  if (def.compute == nullptr) throw InvalidArgument(label + ": null compute");
  CheckDevType(def.dev_type, label);
  if (OpRegistry::Get()->Find(op_name) == nullptr) {
    throw NotFound(label + ": no such op");
  }
  Op& op = OpRegistry::Get()->Mutable(op_name);
  const int dev_type = def.dev_type;
  // What a decline falls back to: the kernel the op had for the type, also
  // when that was its kernel for every device (which TakeKernels leaves).
  const FCompute* had = op.compute(dev_type);
  auto fallback = std::make_shared<Op::DeviceKernels>();
  if (had != nullptr) fallback->compute = *had;
  auto previous = std::make_shared<Op::DeviceKernels>(op.TakeKernels(dev_type));
  fallback->compute_dynamic = previous->compute_dynamic;
  fallback->stateful_compute = previous->stateful_compute;
  if (op.is_dynamic_shape()) {
    op.SetComputeDynamic(
        dev_type,
        WrapComputeDynamic(def.compute, def.user_data, who, fallback));
  } else {
    op.SetCompute(dev_type,
                  WrapCompute(def.compute, def.user_data, who,
                              op.GetAttr<bool>(kCOpAttr) != nullptr, fallback));
  }
  undo->push_back([op_name, dev_type, previous] {
    if (OpRegistry::Get()->Find(op_name) == nullptr) return;
    OpRegistry::Get()->Mutable(op_name).RestoreKernels(dev_type,
                                                       std::move(*previous));
  });
}

}  // namespace plugin
}  // namespace mx
