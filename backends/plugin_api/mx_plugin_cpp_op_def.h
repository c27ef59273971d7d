// Part of mx_plugin_cpp.h (include that): OpDef, the description of a new
// op (inputs, attributes, shape and type inference, kernels, gradient)
// that Plugin::RegisterOp turns into the ABI's MxOpDef.
#ifndef MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_OP_DEF_H_
#define MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_OP_DEF_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/plugin_api/mx_plugin.h"
#include "backends/plugin_api/mx_plugin_cpp_kernel.h"

namespace mxplugin {

// ---- New ops ----

class OpDef {
 public:
  explicit OpDef(std::string name) : name_(std::move(name)) {}
  OpDef& Describe(std::string text) {
    description_ = std::move(text);
    return *this;
  }
  OpDef& Inputs(std::vector<std::string> names) {
    inputs_ = std::move(names);
    num_inputs_ = static_cast<int>(inputs_.size());
    return *this;
  }
  OpDef& NumInputs(std::function<int(const Attrs&)> fn) {
    num_inputs_fn_ = std::move(fn);
    num_inputs_ = -1;
    return *this;
  }
  OpDef& Outputs(std::vector<std::string> names) {
    outputs_ = std::move(names);
    num_outputs_ = static_cast<int>(outputs_.size());
    return *this;
  }
  OpDef& NumOutputs(std::function<int(const Attrs&)> fn) {
    num_outputs_fn_ = std::move(fn);
    num_outputs_ = -1;
    return *this;
  }
  // An attribute; no default: required.
  OpDef& Attr(std::string key, MxAttrType type,
              std::optional<std::string> default_value = std::nullopt,
              std::string description = "") {
    attrs_.push_back({std::move(key), type, std::move(default_value),
                      std::move(description)});
    return *this;
  }
  // Parses a node's attributes once (when the node is created); every
  // callback then gets the result through Attrs::parsed<T>().
  OpDef& Parse(std::function<std::shared_ptr<void>(const Attrs&)> fn) {
    parse_ = std::move(fn);
    return *this;
  }
  OpDef& InferShape(InferShapeFn fn) {
    infer_shape_ = std::move(fn);
    return *this;
  }
  OpDef& InferType(InferTypeFn fn) {
    infer_type_ = std::move(fn);
    return *this;
  }
  OpDef& Kernel(int dev_type, mxplugin::Kernel fn) {
    kernels_.emplace_back(dev_type, std::move(fn));
    return *this;
  }
  // A stateful kernel: `create` makes the per-node state from the input
  // shapes and dtypes; `compute` gets it.
  using CreateState = std::function<std::shared_ptr<void>(
      const Attrs&, int dev_type, int dev_id, const std::vector<Shape>&,
      const std::vector<int>&)>;
  using StatefulKernel =
      std::function<void(void* state, const KernelContext&, Tensors in,
                         const int32_t* req, Tensors out)>;
  OpDef& Stateful(int dev_type, CreateState create, StatefulKernel compute) {
    stateful_dev_type_ = dev_type;
    create_ = std::move(create);
    stateful_ = std::move(compute);
    return *this;
  }
  OpDef& Inplace(int input, int output) {
    inplace_.push_back(input);
    inplace_.push_back(output);
    return *this;
  }
  OpDef& Resources(int flags) {
    resources_ = flags;
    return *this;
  }
  // The inputs the op writes (kept as auxiliary states; ABI 1.3).
  OpDef& MutateInputs(std::function<std::vector<int>(const Attrs&)> fn) {
    mutate_inputs_ = std::move(fn);
    return *this;
  }
  // The backward op and what it takes (MX_GRAD_* flags).
  OpDef& Gradient(std::string backward_op, int uses) {
    gradient_op_ = std::move(backward_op);
    gradient_uses_ = uses;
    return *this;
  }

 private:
  friend class Plugin;
  struct AttrEntry {
    std::string key;
    MxAttrType type;
    std::optional<std::string> default_value;
    std::string description;
  };
  struct StateBox {
    std::shared_ptr<void> state;
  };
  // What the host holds per node when the op has a Parse function.
  struct ParsedBox {
    explicit ParsedBox(const MxAttrs& given) : attrs(Items(given)) {}
    static std::vector<std::pair<std::string, std::string>> Items(
        const MxAttrs& a) {
      std::vector<std::pair<std::string, std::string>> items;
      for (int i = 0; i < a.num; ++i)
        items.emplace_back(a.keys[i], a.values[i]);
      return items;
    }
    OwnedAttrs attrs;
    std::shared_ptr<void> user;
  };
  // The Attrs a callback sees for the host's `attrs` pointer.
  Attrs AttrsOf(const void* attrs) const {
    if (!parse_) return Attrs(attrs);
    const auto* box = static_cast<const ParsedBox*>(attrs);
    return box->attrs.view(box->user.get());
  }
  std::function<std::shared_ptr<void>(const Attrs&)> parse_;
  std::string name_, description_;
  std::vector<std::string> inputs_, outputs_;
  int num_inputs_ = 1, num_outputs_ = 1;
  std::function<int(const Attrs&)> num_inputs_fn_, num_outputs_fn_;
  std::vector<AttrEntry> attrs_;
  InferShapeFn infer_shape_;
  InferTypeFn infer_type_;
  std::vector<std::pair<int, mxplugin::Kernel>> kernels_;
  int stateful_dev_type_ = 0;
  CreateState create_;
  StatefulKernel stateful_;
  std::vector<int32_t> inplace_;
  int resources_ = 0;
  std::string gradient_op_;
  int gradient_uses_ = 0;
  std::function<std::vector<int>(const Attrs&)> mutate_inputs_;
  // C views, filled by Plugin::RegisterOp.
  std::vector<const char*> c_inputs_, c_outputs_;
  std::vector<MxAttrSpec> c_attrs_;
  std::vector<MxKernelDef> c_kernels_;
  struct KernelHolder {
    mxplugin::Kernel fn;
    const OpDef* op;  // Null for kernels of existing ops.
  };
  std::vector<std::shared_ptr<KernelHolder>> kernel_fns_;
};

}  // namespace mxplugin

#endif  // MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_OP_DEF_H_
