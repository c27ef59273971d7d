#include "graph/op.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace mx {
namespace {

// Guards the registry maps: plugins may register ops while other threads
// look ops up.
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}

std::string OpLabel(const NodeAttrs& attrs) {
  std::string label =
      absl::StrCat("op \"", attrs.op ? attrs.op->name() : "?", "\"");
  if (!attrs.name.empty())
    absl::StrAppend(&label, " (node \"", attrs.name, "\")");
  return label;
}

}  // namespace

void* OpContext::TempSpace(size_t bytes) const {
  if (!temp_space_requested) {
    throw StateError(
        "OpContext::TempSpace: the op did not request "
        "ResourceRequest::kTempSpace");
  }
  temp_.push_back(Storage::Get()->Alloc(bytes, run_ctx.ctx));
  return temp_.back().dptr;
}

RandomEngine& OpContext::random() const {
  if (rng == nullptr) {
    throw StateError(
        "OpContext::random: the op did not request "
        "ResourceRequest::kRandom");
  }
  return *rng;
}

OpContext::~OpContext() {
  if (temp_.empty()) return;
  // Device work queued by the kernel may still use its temp space, and the
  // engine may complete the op before that work (fences): wait for it
  // before the memory goes back to the pool.
  if (!run_ctx.ctx.is_host()) {
    try {
      engine::SynchronizeStream(run_ctx.ctx, run_ctx.stream);
    } catch (...) {
      // The device failed: the error is the op's, reported at its wait.
    }
  }
  for (const StorageHandle& h : temp_) Storage::Get()->Free(h);
}

Op& Op::Describe(std::string text) {
  description_ = std::move(text);
  return *this;
}
Op& Op::SetNumInputs(int n) {
  num_inputs_ = n;
  num_inputs_fn_ = nullptr;
  return *this;
}
Op& Op::SetNumInputs(std::function<int(const NodeAttrs&)> fn) {
  num_inputs_fn_ = std::move(fn);
  return *this;
}
Op& Op::SetNumOutputs(int n) {
  num_outputs_ = n;
  num_outputs_fn_ = nullptr;
  return *this;
}
Op& Op::SetNumOutputs(std::function<int(const NodeAttrs&)> fn) {
  num_outputs_fn_ = std::move(fn);
  return *this;
}
Op& Op::SetInputNames(std::vector<std::string> names) {
  input_names_ = std::move(names);
  return *this;
}
Op& Op::SetInputNames(
    std::function<std::vector<std::string>(const NodeAttrs&)> fn) {
  input_names_fn_ = std::move(fn);
  return *this;
}
Op& Op::SetKeyVarNumArgs(std::string key) {
  key_var_num_args_ = std::move(key);
  return *this;
}
Op& Op::SetOutputNames(std::vector<std::string> names) {
  output_names_ = std::move(names);
  return *this;
}
Op& Op::SetNumVisibleOutputs(std::function<int(const NodeAttrs&)> fn) {
  num_visible_outputs_fn_ = std::move(fn);
  return *this;
}
Op& Op::SetInferShape(FInferShape fn) {
  infer_shape_ = std::move(fn);
  return *this;
}
Op& Op::SetParamParser(
    std::function<std::any(const std::string&, const AttrDict&)> fn) {
  param_parser_ = std::move(fn);
  params_.clear();
  return *this;
}
Op::DeviceKernels Op::TakeKernels(int dev_type) {
  Revise();
  DeviceKernels k;
  if (auto it = compute_.find(dev_type); it != compute_.end()) {
    k.compute = std::move(it->second);
    compute_.erase(it);
  }
  if (auto it = compute_dynamic_.find(dev_type); it != compute_dynamic_.end()) {
    k.compute_dynamic = std::move(it->second);
    compute_dynamic_.erase(it);
  }
  if (auto it = stateful_compute_.find(dev_type);
      it != stateful_compute_.end()) {
    k.stateful_compute = std::move(it->second);
    stateful_compute_.erase(it);
  }
  return k;
}
void Op::RestoreKernels(int dev_type, DeviceKernels k) {
  Revise();
  compute_.erase(dev_type);
  compute_dynamic_.erase(dev_type);
  stateful_compute_.erase(dev_type);
  if (k.compute) compute_[dev_type] = std::move(*k.compute);
  if (k.compute_dynamic)
    compute_dynamic_[dev_type] = std::move(*k.compute_dynamic);
  if (k.stateful_compute) {
    stateful_compute_[dev_type] = std::move(*k.stateful_compute);
  }
}
uint64_t Op::NextRevision() {
  static std::atomic<uint64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed) + 1;
}
Op& Op::SetInferType(FInferType fn) {
  infer_type_ = std::move(fn);
  return *this;
}
Op& Op::SetCompute(int dev_type, FCompute fn) {
  Revise();
  compute_[dev_type] = std::move(fn);
  return *this;
}
Op& Op::SetComputeOnEveryDevice(FCompute fn) {
  Revise();
  compute_on_every_device_ = std::move(fn);
  return *this;
}
Op& Op::SetComputeDynamic(int dev_type, FComputeDynamic fn) {
  Revise();
  compute_dynamic_[dev_type] = std::move(fn);
  dynamic_shape_ = true;
  return *this;
}
Op& Op::SetStateful(FCreateOpState create) {
  create_state_ = std::move(create);
  return *this;
}
Op& Op::SetStatefulCompute(int dev_type, FStatefulCompute fn) {
  Revise();
  stateful_compute_[dev_type] = std::move(fn);
  return *this;
}
Op& Op::SetMutateInputs(std::function<std::vector<int>(const NodeAttrs&)> fn) {
  mutate_inputs_ = std::move(fn);
  return *this;
}
Op& Op::SetResourceRequest(
    std::function<std::vector<ResourceRequest>(const NodeAttrs&)> fn) {
  resources_ = std::move(fn);
  return *this;
}
Op& Op::SetInplaceOption(
    std::function<std::vector<std::pair<int, int>>(const NodeAttrs&)> fn) {
  inplace_ = std::move(fn);
  return *this;
}
Op& Op::AddAlias(const std::string& alias) {
  aliases_.push_back(alias);
  OpRegistry::Get()->AddAlias(alias, this);
  return *this;
}

int Op::NumInputs(const NodeAttrs& attrs) const {
  return num_inputs_fn_ ? num_inputs_fn_(attrs) : num_inputs_;
}
int Op::NumOutputs(const NodeAttrs& attrs) const {
  return num_outputs_fn_ ? num_outputs_fn_(attrs) : num_outputs_;
}

int Op::NumVisibleOutputs(const NodeAttrs& attrs) const {
  return num_visible_outputs_fn_ ? num_visible_outputs_fn_(attrs)
                                 : NumOutputs(attrs);
}

std::vector<std::string> Op::InputNames(const NodeAttrs& attrs) const {
  if (input_names_fn_) return input_names_fn_(attrs);
  const int n = NumInputs(attrs);
  if (static_cast<int>(input_names_.size()) == n) return input_names_;
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.push_back(n == 1 ? "data" : absl::StrCat("arg", i));
  }
  return names;
}

std::vector<std::string> Op::OutputNames(const NodeAttrs& attrs) const {
  const int n = NumOutputs(attrs);
  if (static_cast<int>(output_names_.size()) == n) return output_names_;
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.push_back(n == 1 ? "output" : absl::StrCat("output", i));
  }
  return names;
}

void Op::ParseAttrs(NodeAttrs* attrs) const {
  attrs->op = this;
  if (param_parser_) {
    attrs->parsed = param_parser_(name_, attrs->dict);
  } else {
    attrs->parsed = std::any(ParseParams<NoParams>(name_, attrs->dict));
  }
}

// Op's and the registry's maps are std::unordered_maps rather than absl's
// flat_hash_map: op.h is in nearly every object, and absl's map more than
// doubled the time to parse it (2.8 s against 1.25 s per file under TSan).
// Dispatch does not feel the difference: Invoke caches these lookups per
// thread under Op::revision().
const FCompute* Op::compute(int dev_type) const {
  auto it = compute_.find(dev_type);
  if (it != compute_.end()) return &it->second;
  const bool has_own = compute_dynamic_.count(dev_type) != 0 ||
                       stateful_compute_.count(dev_type) != 0;
  return compute_on_every_device_ && !has_own ? &*compute_on_every_device_
                                              : nullptr;
}
const FComputeDynamic* Op::compute_dynamic(int dev_type) const {
  auto it = compute_dynamic_.find(dev_type);
  return it == compute_dynamic_.end() ? nullptr : &it->second;
}
const FStatefulCompute* Op::stateful_compute(int dev_type) const {
  auto it = stateful_compute_.find(dev_type);
  return it == stateful_compute_.end() ? nullptr : &it->second;
}
std::vector<int> Op::MutateInputs(const NodeAttrs& attrs) const {
  return mutate_inputs_ ? mutate_inputs_(attrs) : std::vector<int>{};
}
std::vector<ResourceRequest> Op::Resources(const NodeAttrs& attrs) const {
  return resources_ ? resources_(attrs) : std::vector<ResourceRequest>{};
}
std::vector<std::pair<int, int>> Op::InplaceOptions(
    const NodeAttrs& attrs) const {
  return inplace_ ? inplace_(attrs) : std::vector<std::pair<int, int>>{};
}

OpRegistry* OpRegistry::Get() {
  static OpRegistry* registry = new OpRegistry();
  return registry;
}

Op& OpRegistry::Register(const std::string& name) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  if (by_name_.count(name) != 0) {
    throw AlreadyExists(
        absl::StrCat("op \"", name, "\" is already registered"));
  }
  auto op = std::make_unique<Op>(name);
  Op* raw = op.get();
  ops_[name] = std::move(op);
  by_name_[name] = raw;
  return *raw;
}

void OpRegistry::AddAlias(const std::string& alias, Op* op) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  if (by_name_.count(alias) != 0) {
    throw AlreadyExists(
        absl::StrCat("op alias \"", alias, "\" is already registered"));
  }
  by_name_[alias] = op;
}

void OpRegistry::Unregister(const std::string& name) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = ops_.find(name);
  if (it == ops_.end()) return;
  for (const std::string& alias : it->second->aliases_) by_name_.erase(alias);
  by_name_.erase(name);
  ops_.erase(it);
}

const Op* OpRegistry::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

namespace {

std::atomic<bool> plugin_hook_done{false};

std::function<bool()>& PluginHook() {
  static auto* hook = new std::function<bool()>();
  return *hook;
}

}  // namespace

void OpRegistry::SetPluginHook(std::function<bool()> hook) {
  PluginHook() = std::move(hook);
}

void OpRegistry::RunPluginHook() {
  if (plugin_hook_done.load(std::memory_order_acquire)) return;
  // Throws until MX_PLUGINS loads; false while a plugin is being loaded.
  if (PluginHook() && !PluginHook()()) return;
  plugin_hook_done.store(true, std::memory_order_release);
}

const Op& OpRegistry::Lookup(const std::string& name) const {
  const Op* op = Find(name);
  if (op == nullptr && !plugin_hook_done.load(std::memory_order_acquire) &&
      PluginHook()) {
    RunPluginHook();
    op = Find(name);
  }
  if (op == nullptr) {
    throw NotFound(absl::StrCat("unknown op \"", name, "\""));
  }
  return *op;
}

Op& OpRegistry::Mutable(const std::string& name) {
  return const_cast<Op&>(Lookup(name));
}

std::vector<std::string> OpRegistry::ListNames() const {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<std::string> names;
  for (const auto& [name, op] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void FillVarNumArgs(const Op& op, size_t num_inputs, AttrDict* attrs) {
  const std::string& key = op.key_var_num_args();
  if (key.empty() || num_inputs == 0) return;
  attrs->emplace(key, std::to_string(num_inputs));
}

NodeAttrs MakeAttrs(const Op& op, AttrDict dict, std::string name) {
  NodeAttrs attrs;
  attrs.name = std::move(name);
  attrs.dict = std::move(dict);
  op.ParseAttrs(&attrs);
  return attrs;
}

void AssignShape(const NodeAttrs& attrs, std::vector<TShape>* shapes, int i,
                 const TShape& src, bool is_output) {
  // The common cases without a merge copy: nothing known yet, or agreement.
  TShape& dst = (*shapes)[i];
  if (!src.ndim_known() || dst == src) return;
  if (!dst.ndim_known()) {
    dst = src;
    return;
  }
  TShape merged = dst;
  if (!MergeShape(&merged, src)) {
    std::vector<std::string> names =
        is_output ? attrs.op->OutputNames(attrs) : attrs.op->InputNames(attrs);
    const std::string which =
        i < static_cast<int>(names.size()) ? names[i] : std::to_string(i);
    throw ShapeError(
        absl::StrCat(OpLabel(attrs), ": ", is_output ? "output " : "input ", i,
                     " (", which, ") has shape ", (*shapes)[i].ToString(),
                     " but ", src.ToString(), " is required"));
  }
  (*shapes)[i] = merged;
}

void AssignType(const NodeAttrs& attrs, std::vector<DType>* types, int i,
                DType src, bool is_output) {
  if (src == DType::kUnknown) return;
  DType& dst = (*types)[i];
  if (dst == DType::kUnknown) {
    dst = src;
  } else if (dst != src) {
    std::vector<std::string> names =
        is_output ? attrs.op->OutputNames(attrs) : attrs.op->InputNames(attrs);
    const std::string which =
        i < static_cast<int>(names.size()) ? names[i] : std::to_string(i);
    throw DTypeError(absl::StrCat(OpLabel(attrs), ": ",
                                  is_output ? "output " : "input ", i, " (",
                                  which, ") has dtype ", DTypeName(dst),
                                  " but ", DTypeName(src), " is required"));
  }
}

void SameShape(const NodeAttrs& attrs, std::vector<TShape>* in,
               std::vector<TShape>* out) {
  TShape common;
  for (const TShape& s : *in) MergeShape(&common, s);
  for (const TShape& s : *out) MergeShape(&common, s);
  for (size_t i = 0; i < in->size(); ++i) {
    AssignShape(attrs, in, static_cast<int>(i), common, false);
  }
  for (size_t i = 0; i < out->size(); ++i) {
    AssignShape(attrs, out, static_cast<int>(i), common, true);
  }
}

void SameType(const NodeAttrs& attrs, std::vector<DType>* in,
              std::vector<DType>* out) {
  DType common = DType::kUnknown;
  for (DType t : *in) {
    if (common == DType::kUnknown) common = t;
  }
  for (DType t : *out) {
    if (common == DType::kUnknown) common = t;
  }
  for (size_t i = 0; i < in->size(); ++i) {
    AssignType(attrs, in, static_cast<int>(i), common, false);
  }
  for (size_t i = 0; i < out->size(); ++i) {
    AssignType(attrs, out, static_cast<int>(i), common, true);
  }
}

}  // namespace mx
