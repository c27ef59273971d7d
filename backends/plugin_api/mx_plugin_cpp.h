// A header-only C++ layer over the plugin ABI (mx_plugin.h) for plugin
// authors: lambdas and classes in, C structs out. Exceptions thrown by
// plugin code are caught at the boundary and returned as statuses
// (mxplugin::Error carries a status code; anything else is a runtime
// error). Objects handed to the host live until the process ends, since
// plugins are never unloaded.
//
//   #include "backends/plugin_api/mx_plugin_cpp.h"
//   MX_PLUGIN("twice", [](mxplugin::Plugin& p) {
//     p.RegisterOp(mxplugin::OpDef("twice")
//                      .Inputs({"data"})
//                      .InferShape(mxplugin::SameShape)
//                      .Kernel(MX_DEVICE_CPU, [](const
//                      mxplugin::KernelContext&,
//                                                const mxplugin::Attrs&,
//                                                mxplugin::Tensors in,
//                                                const int32_t* req,
//                                                mxplugin::Tensors out) {
//                        ...
//                      }));
//   })
#ifndef MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_H_
#define MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_H_

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/plugin_api/mx_plugin.h"

namespace mxplugin {

// An error with a status code; what the host raises as the mx::Error of
// the same name.
class Error : public std::runtime_error {
 public:
  Error(MxStatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  MxStatusCode code() const { return code_; }

 private:
  MxStatusCode code_;
};

namespace detail {

inline void SetMessage(MxStatus* status, const char* message) {
  if (status != nullptr) {
    std::snprintf(status->message, sizeof(status->message), "%s", message);
  }
}

// Runs fn; turns whatever it throws into a status.
template <typename Fn>
MxStatusCode Guard(MxStatus* status, Fn&& fn) noexcept {
  try {
    fn();
    return MX_STATUS_OK;
  } catch (const Error& e) {
    SetMessage(status, e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    SetMessage(status, "out of memory");
    return MX_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    SetMessage(status, e.what());
    return MX_STATUS_RUNTIME_ERROR;
  } catch (...) {
    SetMessage(status, "threw an object that is not a std::exception");
    return MX_STATUS_RUNTIME_ERROR;
  }
}

// Keeps `p` alive for the process: the host holds raw pointers to it.
// Reachable from a global, so leak checkers do not report it.
template <typename T>
T* Keep(std::shared_ptr<T> p) {
  static auto* mu = new std::mutex();
  static auto* kept = new std::vector<std::shared_ptr<void>>();
  std::lock_guard<std::mutex> lock(*mu);
  kept->push_back(p);
  return p.get();
}

inline void Check(MxStatusCode code, const MxStatus& status) {
  if (code != MX_STATUS_OK) throw Error(code, status.message);
}

inline MxStatus NewStatus() {
  MxStatus s;
  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  return s;
}

}  // namespace detail

// ---- Kernel-side views ----

class Tensor {
 public:
  explicit Tensor(const MxTensor* t) : t_(t) {}
  template <typename T>
  T* data() const {
    return static_cast<T*>(t_->data);
  }
  int ndim() const { return t_->ndim; }
  int64_t dim(int i) const { return t_->shape[i]; }
  std::vector<int64_t> shape() const {
    return std::vector<int64_t>(t_->shape, t_->shape + t_->ndim);
  }
  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < t_->ndim; ++i) n *= t_->shape[i];
    return n;
  }
  MxDType dtype() const { return static_cast<MxDType>(t_->dtype); }
  int dev_type() const { return t_->dev_type; }
  int dev_id() const { return t_->dev_id; }
  const MxTensor* c() const { return t_; }

 private:
  const MxTensor* t_;
};

class Tensors {
 public:
  Tensors(const MxTensor* t, int32_t n) : t_(t), n_(n) {}
  int size() const { return n_; }
  Tensor operator[](int i) const { return Tensor(t_ + i); }

 private:
  const MxTensor* t_;
  int32_t n_;
};

class KernelContext {
 public:
  explicit KernelContext(const MxKernelContext* c) : c_(c) {}
  bool is_train() const { return c_->is_train != 0; }
  void* stream() const { return c_->stream; }
  int dev_type() const { return c_->dev_type; }
  int dev_id() const { return c_->dev_id; }
  // Needs MX_RESOURCE_TEMP_SPACE; throws when the host gave none.
  void* TempSpace(size_t bytes) const {
    void* p = c_->temp_space(c_->host, bytes);
    if (p == nullptr && bytes > 0) {
      throw Error(MX_STATUS_OUT_OF_MEMORY,
                  "no temp space (was MX_RESOURCE_TEMP_SPACE requested?)");
    }
    return p;
  }
  uint64_t RandomU64() const { return c_->random_u64(c_->host); }
  // Dynamic-shape ops (since ABI 1.2): allocates output `index` with
  // `shape` once the kernel knows it. Throws the host's error, or when the
  // host or the op does not allow it.
  Tensor AllocOutput(int index, const std::vector<int64_t>& shape) const {
    if (!MX_HAS_FIELD(c_, MxKernelContext, alloc_output) ||
        c_->alloc_output == nullptr) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  "AllocOutput: only kernels of dynamic-shape ops allocate "
                  "their outputs (and the host needs ABI 1.2)");
    }
    MxStatus status;
    status.struct_size = sizeof(status);
    status.message[0] = '\0';
    const MxTensor* t = nullptr;
    const MxStatusCode code =
        c_->alloc_output(c_->host, index, static_cast<int32_t>(shape.size()),
                         shape.data(), &t, &status);
    if (code != MX_STATUS_OK) throw Error(code, status.message);
    return Tensor(t);
  }
  // What input `index` holds (since ABI 1.3): equal pairs mean equal
  // contents. {0, 0} when the host cannot tell: do not cache then.
  struct InputVersion {
    uint64_t array_id = 0, version = 0;
    bool known() const { return array_id != 0; }
    friend bool operator==(const InputVersion& a, const InputVersion& b) {
      return a.array_id == b.array_id && a.version == b.version;
    }
    friend bool operator!=(const InputVersion& a, const InputVersion& b) {
      return !(a == b);
    }
  };
  InputVersion InputVersionOf(int index) const {
    InputVersion v;
    if (MX_HAS_FIELD(c_, MxKernelContext, input_version) &&
        c_->input_version != nullptr) {
      c_->input_version(c_->host, index, &v.array_id, &v.version);
    }
    return v;
  }
  // The CPU threads this call may use (since ABI 1.4; see
  // MxKernelContext.num_threads); 0 when the host does not say.
  int num_threads() const {
    return MX_HAS_FIELD(c_, MxKernelContext, num_threads) ? c_->num_threads : 0;
  }
  // fn(begin, end) on the host's CPU kernel threads. fn must not throw.
  template <typename Fn>
  void ParallelFor(int64_t n, int64_t grain, const Fn& fn) const {
    c_->parallel_for(
        c_->host, n, grain,
        [](void* arg, int64_t b, int64_t e) {
          (*static_cast<const Fn*>(arg))(b, e);
        },
        const_cast<Fn*>(&fn));
  }

 private:
  const MxKernelContext* c_;
};

// A node's attribute strings (a view; valid during the call), and what
// the op's Parse function made of them.
class Attrs {
 public:
  explicit Attrs(const void* c, const void* parsed = nullptr)
      : a_(static_cast<const MxAttrs*>(c)), parsed_(parsed) {}
  // The object OpDef::Parse returned for this node.
  template <typename T>
  const T& parsed() const {
    if (parsed_ == nullptr) {
      throw Error(MX_STATUS_RUNTIME_ERROR, "the op has no Parse function");
    }
    return *static_cast<const T*>(parsed_);
  }
  std::optional<std::string_view> Find(std::string_view key) const {
    if (a_ == nullptr) return std::nullopt;
    for (int i = 0; i < a_->num; ++i) {
      if (key == a_->keys[i]) return std::string_view(a_->values[i]);
    }
    return std::nullopt;
  }
  std::string Get(std::string_view key, std::string fallback = "") const {
    auto v = Find(key);
    return v ? std::string(*v) : fallback;
  }
  double GetFloat(std::string_view key, double fallback) const {
    auto v = Find(key);
    return v ? std::strtod(std::string(*v).c_str(), nullptr) : fallback;
  }
  int64_t GetInt(std::string_view key, int64_t fallback) const {
    auto v = Find(key);
    return v ? std::strtoll(std::string(*v).c_str(), nullptr, 10) : fallback;
  }
  const MxAttrs* c() const { return a_; }

 private:
  const MxAttrs* a_;
  const void* parsed_;
};

// Attribute strings held by value and seen as Attrs: a parsed node's own
// copy, or attributes read back from elsewhere (a region's JSON steps).
// Neither copied nor moved: the view points into it.
//
//   OwnedAttrs a({{"kernel", "(3,3)"}, {"pool_type", "avg"}});
//   ParsePool(a.view());
class OwnedAttrs {
 public:
  explicit OwnedAttrs(std::vector<std::pair<std::string, std::string>> items,
                      std::string node_name = "")
      : items_(std::move(items)), node_name_(std::move(node_name)) {
    for (const auto& [key, value] : items_) {
      keys_.push_back(key.c_str());
      values_.push_back(value.c_str());
    }
    c_.struct_size = sizeof(c_);
    c_.num = static_cast<int32_t>(items_.size());
    c_.keys = keys_.data();
    c_.values = values_.data();
    c_.node_name = node_name_.c_str();
  }
  OwnedAttrs(const OwnedAttrs&) = delete;
  OwnedAttrs& operator=(const OwnedAttrs&) = delete;

  // With `parsed` as what OpDef::Parse made of them.
  Attrs view(const void* parsed = nullptr) const { return Attrs(&c_, parsed); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
  std::string node_name_;
  std::vector<const char*> keys_, values_;
  MxAttrs c_{};
};

using Kernel = std::function<void(const KernelContext&, const Attrs&,
                                  Tensors in, const int32_t* req, Tensors out)>;

// Shapes during inference: nullopt for an unknown rank, -1 for an unknown
// dimension.
using Shape = std::vector<int64_t>;
using ShapeSlots = std::vector<std::optional<Shape>>;
using InferShapeFn =
    std::function<void(const Attrs&, ShapeSlots& in, ShapeSlots& out)>;
using InferTypeFn = std::function<void(const Attrs&, std::vector<int>& in,
                                       std::vector<int>& out)>;

// Every input and output has one shape (the first known one).
inline void SameShape(const Attrs&, ShapeSlots& in, ShapeSlots& out) {
  std::optional<Shape> known;
  for (auto* slots : {&in, &out}) {
    for (auto& s : *slots) {
      if (s && !known) known = s;
    }
  }
  if (!known) return;
  for (auto* slots : {&in, &out}) {
    for (auto& s : *slots) {
      if (s && *s != *known) {
        throw Error(MX_STATUS_SHAPE_ERROR, "operands have different shapes");
      }
      s = known;
    }
  }
}

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

// ---- Subgraph properties ----

// A read-only node (valid during the callback).
class NodeView {
 public:
  explicit NodeView(const MxNodeView* n) : n_(n) {}
  std::string_view op() const { return n_->op_name; }
  std::string_view name() const { return n_->node_name; }
  bool is_variable() const { return n_->op_name[0] == '\0'; }
  Attrs attrs() const { return Attrs(&n_->attrs); }
  int num_inputs() const { return n_->num_inputs; }
  // Graph views only: the node index and output feeding input i.
  int input_node(int i) const { return n_->input_nodes[i]; }
  int input_output(int i) const { return n_->input_outputs[i]; }
  int num_outputs() const { return n_->num_outputs; }
  bool has_control_deps() const { return n_->has_control_deps != 0; }
  const MxNodeView* c() const { return n_; }

 private:
  const MxNodeView* n_;
};

class Selector {
 public:
  virtual ~Selector() = default;
  virtual bool Select(const NodeView& seed) = 0;
  virtual bool SelectInput(const NodeView& cur, const NodeView& input) = 0;
  virtual bool SelectOutput(const NodeView& cur, const NodeView& output) = 0;
  // Which candidates to keep (default: all).
  virtual std::vector<bool> Filter(const std::vector<NodeView>& candidates) {
    return std::vector<bool>(candidates.size(), true);
  }
};

// Claims every node `claims` accepts, as seed, input or output: all an
// elementwise fuser needs. Subclass it to add a Filter.
class PredicateSelector : public Selector {
 public:
  explicit PredicateSelector(std::function<bool(const NodeView&)> claims)
      : claims_(std::move(claims)) {}
  bool Select(const NodeView& seed) override { return claims_(seed); }
  bool SelectInput(const NodeView&, const NodeView& input) override {
    return claims_(input);
  }
  bool SelectOutput(const NodeView&, const NodeView& output) override {
    return claims_(output);
  }

 private:
  std::function<bool(const NodeView&)> claims_;
};

// What replaces a subgraph; an empty op rejects it.
struct SubgraphNode {
  std::string op;
  std::vector<std::pair<std::string, std::string>> attrs;
  bool attach_subgraph = false;
};

class Property {
 public:
  virtual ~Property() = default;
  virtual std::string name() const = 0;
  virtual bool inference_only() const { return false; }
  virtual std::unique_ptr<Selector> CreateSelector() = 0;
  virtual SubgraphNode CreateNode(const MxGraphView& graph, int id) = 0;
};

// ---- Devices ----

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  virtual int Count() = 0;
  virtual void* Alloc(int dev_id, size_t bytes) = 0;
  virtual void Free(int dev_id, void* ptr, size_t bytes) = 0;
  virtual void* CreateStream(int dev_id) = 0;
  virtual void DestroyStream(int dev_id, void* stream) = 0;
  virtual void Synchronize(int dev_id, void* stream) = 0;
  virtual void* CreateEvent(int dev_id) = 0;
  virtual void DestroyEvent(int dev_id, void* event) = 0;
  virtual void RecordEvent(int dev_id, void* event, void* stream) = 0;
  virtual void WaitEvent(int dev_id, void* event, void* stream) = 0;
  virtual bool QueryEvent(int dev_id, void* event) = 0;
  // direction: 0 host->device, 1 device->host, 2 device->device.
  virtual void Copy(int dev_id, void* dst, const void* src, size_t bytes,
                    int direction, void* stream) = 0;
  virtual void Memset(int dev_id, void* dst, int value, size_t bytes,
                      void* stream) = 0;
  // Blocks until the event is reached; by default polls QueryEvent.
  virtual void SynchronizeEvent(int dev_id, void* event) {
    while (!QueryEvent(dev_id, event)) {
    }
  }
  // Whether kernels may run on any thread, one at a time per stream, on
  // streams lent to threads in turn (MxDeviceDef.launch_on_any_thread).
  virtual bool LaunchesOnAnyThread() const { return false; }
};

// ---- Registration ----

class Plugin {
 public:
  explicit Plugin(const MxHostApi* host) : host_(host) {}

  int host_abi_minor() const { return host_->abi_minor; }

  // A kernel for an existing op (the host's or another plugin's); the
  // kernel sees the node's attribute strings.
  void RegisterKernel(const std::string& op, int dev_type, Kernel fn) {
    auto* k = detail::Keep(std::make_shared<OpDef::KernelHolder>(
        OpDef::KernelHolder{std::move(fn), nullptr}));
    auto* name = detail::Keep(std::make_shared<std::string>(op));
    MxKernelDef def;
    std::memset(&def, 0, sizeof(def));
    def.struct_size = sizeof(def);
    def.op_name = name->c_str();
    def.dev_type = dev_type;
    def.compute = &CallKernel;
    def.user_data = k;
    MxStatus status = detail::NewStatus();
    detail::Check(host_->register_kernel(host_->registrar, &def, &status),
                  status);
  }

  // Offers the plugin's CPU thread runtime for the host's parallel loops
  // (see MxThreadRuntimeDef): run(user_data, chunks, body, arg) calls
  // body(arg, begin, end) over ranges covering every chunk once. Returns
  // false (and does nothing) when the host predates ABI 1.4.
  bool OfferThreadRuntime(void (*run)(void* user_data, int64_t chunks,
                                      MxParallelBody body, void* arg),
                          void* user_data = nullptr) {
    if (!MX_HAS_FIELD(host_, MxHostApi, register_thread_runtime) ||
        host_->register_thread_runtime == nullptr) {
      return false;
    }
    MxThreadRuntimeDef def;
    def.struct_size = sizeof(def);
    def.user_data = user_data;
    def.run = run;
    MxStatus status = detail::NewStatus();
    detail::Check(
        host_->register_thread_runtime(host_->registrar, &def, &status),
        status);
    return true;
  }
  void RegisterOp(OpDef op) {
    OpDef* d = detail::Keep(std::make_shared<OpDef>(std::move(op)));
    for (const std::string& s : d->inputs_) d->c_inputs_.push_back(s.c_str());
    for (const std::string& s : d->outputs_) d->c_outputs_.push_back(s.c_str());
    for (const auto& a : d->attrs_) {
      MxAttrSpec spec;
      spec.struct_size = sizeof(spec);
      spec.key = a.key.c_str();
      spec.type = a.type;
      spec.default_value = a.default_value ? a.default_value->c_str() : nullptr;
      spec.description = a.description.c_str();
      d->c_attrs_.push_back(spec);
    }
    for (auto& [dev, fn] : d->kernels_) {
      d->kernel_fns_.push_back(
          std::make_shared<OpDef::KernelHolder>(OpDef::KernelHolder{fn, d}));
      MxKernelDef k;
      std::memset(&k, 0, sizeof(k));
      k.struct_size = sizeof(k);
      k.op_name = d->name_.c_str();
      k.dev_type = dev;
      k.compute = &CallKernel;
      k.user_data = d->kernel_fns_.back().get();
      d->c_kernels_.push_back(k);
    }
    MxOpDef def;
    std::memset(&def, 0, sizeof(def));
    def.struct_size = sizeof(def);
    def.name = d->name_.c_str();
    def.num_inputs = d->num_inputs_;
    def.num_outputs = d->num_outputs_;
    def.num_inputs_fn = &OpNumInputs;
    def.num_outputs_fn = &OpNumOutputs;
    def.input_names = d->c_inputs_.empty() ? nullptr : d->c_inputs_.data();
    def.output_names = d->c_outputs_.empty() ? nullptr : d->c_outputs_.data();
    def.attrs = d->c_attrs_.data();
    def.num_attrs = static_cast<int32_t>(d->c_attrs_.size());
    if (d->parse_) {
      def.parse_attrs = &OpParse;
      def.free_attrs = &OpFreeParsed;
    }
    def.infer_shape = &OpInferShape;
    def.infer_type = d->infer_type_ ? &OpInferType : nullptr;
    def.kernels = d->c_kernels_.data();
    def.num_kernels = static_cast<int32_t>(d->c_kernels_.size());
    if (d->stateful_) {
      def.stateful_dev_type = d->stateful_dev_type_;
      def.create_state = &OpCreateState;
      def.destroy_state = &OpDestroyState;
      def.stateful_compute = &OpStatefulCompute;
    }
    def.inplace_pairs = d->inplace_.empty() ? nullptr : d->inplace_.data();
    def.num_inplace_pairs = static_cast<int32_t>(d->inplace_.size() / 2);
    def.resources = d->resources_;
    def.gradient_op =
        d->gradient_op_.empty() ? nullptr : d->gradient_op_.c_str();
    def.gradient_inputs = d->gradient_uses_;
    def.user_data = d;
    def.description =
        d->description_.empty() ? nullptr : d->description_.c_str();
    if (d->mutate_inputs_) def.mutate_inputs = &OpMutateInputs;
    MxStatus status = detail::NewStatus();
    detail::Check(host_->register_op(host_->registrar, &def, &status), status);
  }

  void RegisterSubgraphProperty(const std::string& backend,
                                std::shared_ptr<Property> property) {
    struct Holder {
      std::string backend, name;
      std::shared_ptr<Property> property;
      // Strings of the last created node, alive until the next call.
      SubgraphNode last;
      std::vector<const char*> keys, values;
    };
    auto* h = detail::Keep(std::make_shared<Holder>());
    h->backend = backend;
    h->name = property->name();
    h->property = std::move(property);
    MxSubgraphPropertyDef def;
    std::memset(&def, 0, sizeof(def));
    def.struct_size = sizeof(def);
    def.backend = h->backend.c_str();
    def.name = h->name.c_str();
    def.inference_only = h->property->inference_only() ? 1 : 0;
    def.user_data = h;
    def.create_selector = [](void* ud, void** sel, MxStatus* st) {
      return detail::Guard(st, [&] {
        *sel = static_cast<Holder*>(ud)->property->CreateSelector().release();
      });
    };
    def.destroy_selector = [](void*, void* sel) {
      delete static_cast<Selector*>(sel);
    };
    def.selector.struct_size = sizeof(MxSelectorDef);
    // Selector callbacks cannot fail: an exception counts as "no".
    def.selector.select = [](void* s, const MxNodeView* n) -> int32_t {
      try {
        return static_cast<Selector*>(s)->Select(NodeView(n)) ? 1 : 0;
      } catch (...) {
        return 0;
      }
    };
    def.selector.select_input = [](void* s, const MxNodeView* cur,
                                   const MxNodeView* in) -> int32_t {
      try {
        return static_cast<Selector*>(s)->SelectInput(NodeView(cur),
                                                      NodeView(in))
                   ? 1
                   : 0;
      } catch (...) {
        return 0;
      }
    };
    def.selector.select_output = [](void* s, const MxNodeView* cur,
                                    const MxNodeView* out) -> int32_t {
      try {
        return static_cast<Selector*>(s)->SelectOutput(NodeView(cur),
                                                       NodeView(out))
                   ? 1
                   : 0;
      } catch (...) {
        return 0;
      }
    };
    def.selector.filter = [](void* s, int32_t n, const MxNodeView* const* nodes,
                             int32_t* keep) {
      try {
        std::vector<NodeView> views;
        for (int i = 0; i < n; ++i) views.emplace_back(nodes[i]);
        std::vector<bool> k = static_cast<Selector*>(s)->Filter(views);
        for (int i = 0; i < n; ++i) {
          keep[i] = i < static_cast<int>(k.size()) && k[i] ? 1 : 0;
        }
      } catch (...) {
        for (int i = 0; i < n; ++i) keep[i] = 0;
      }
    };
    def.create_node = [](void* ud, const MxGraphView* g, int32_t id,
                         MxSubgraphNode* node, MxStatus* st) {
      return detail::Guard(st, [&] {
        auto* h = static_cast<Holder*>(ud);
        h->last = h->property->CreateNode(*g, id);
        h->keys.clear();
        h->values.clear();
        for (const auto& [k, v] : h->last.attrs) {
          h->keys.push_back(k.c_str());
          h->values.push_back(v.c_str());
        }
        node->op_name = h->last.op.empty() ? nullptr : h->last.op.c_str();
        node->num_attrs = static_cast<int32_t>(h->keys.size());
        node->keys = h->keys.data();
        node->values = h->values.data();
        node->attach_subgraph = h->last.attach_subgraph ? 1 : 0;
      });
    };
    MxStatus status = detail::NewStatus();
    detail::Check(
        host_->register_subgraph_property(host_->registrar, &def, &status),
        status);
  }

  // Returns the device type code the host gave the device.
  int RegisterDevice(std::shared_ptr<Device> device) {
    Device* d = detail::Keep(std::move(device));
    auto* name = detail::Keep(std::make_shared<std::string>(d->name()));
    MxDeviceDef def;
    std::memset(&def, 0, sizeof(def));
    def.struct_size = sizeof(def);
    def.name = name->c_str();
    def.user_data = d;
    def.count = [](void* ud) -> int32_t {
      try {
        return static_cast<Device*>(ud)->Count();
      } catch (...) {
        return 0;
      }
    };
    def.alloc = [](void* ud, int32_t id, size_t bytes, void** p, MxStatus* st) {
      return detail::Guard(
          st, [&] { *p = static_cast<Device*>(ud)->Alloc(id, bytes); });
    };
    def.free = [](void* ud, int32_t id, void* p, size_t bytes, MxStatus* st) {
      return detail::Guard(
          st, [&] { static_cast<Device*>(ud)->Free(id, p, bytes); });
    };
    def.create_stream = [](void* ud, int32_t id, void** s, MxStatus* st) {
      return detail::Guard(
          st, [&] { *s = static_cast<Device*>(ud)->CreateStream(id); });
    };
    def.destroy_stream = [](void* ud, int32_t id, void* s, MxStatus* st) {
      return detail::Guard(
          st, [&] { static_cast<Device*>(ud)->DestroyStream(id, s); });
    };
    def.synchronize = [](void* ud, int32_t id, void* s, MxStatus* st) {
      return detail::Guard(
          st, [&] { static_cast<Device*>(ud)->Synchronize(id, s); });
    };
    def.create_event = [](void* ud, int32_t id, void** e, MxStatus* st) {
      return detail::Guard(
          st, [&] { *e = static_cast<Device*>(ud)->CreateEvent(id); });
    };
    def.destroy_event = [](void* ud, int32_t id, void* e, MxStatus* st) {
      return detail::Guard(
          st, [&] { static_cast<Device*>(ud)->DestroyEvent(id, e); });
    };
    def.record_event = [](void* ud, int32_t id, void* e, void* s,
                          MxStatus* st) {
      return detail::Guard(
          st, [&] { static_cast<Device*>(ud)->RecordEvent(id, e, s); });
    };
    def.wait_event = [](void* ud, int32_t id, void* e, void* s, MxStatus* st) {
      return detail::Guard(
          st, [&] { static_cast<Device*>(ud)->WaitEvent(id, e, s); });
    };
    def.query_event = [](void* ud, int32_t id, void* e, int32_t* done,
                         MxStatus* st) {
      return detail::Guard(st, [&] {
        *done = static_cast<Device*>(ud)->QueryEvent(id, e) ? 1 : 0;
      });
    };
    def.copy = [](void* ud, int32_t id, void* dst, const void* src,
                  size_t bytes, int32_t dir, void* s, MxStatus* st) {
      return detail::Guard(st, [&] {
        static_cast<Device*>(ud)->Copy(id, dst, src, bytes, dir, s);
      });
    };
    def.memset = [](void* ud, int32_t id, void* dst, int32_t value,
                    size_t bytes, void* s, MxStatus* st) {
      return detail::Guard(st, [&] {
        static_cast<Device*>(ud)->Memset(id, dst, value, bytes, s);
      });
    };
    def.synchronize_event = [](void* ud, int32_t id, void* e, MxStatus* st) {
      return detail::Guard(
          st, [&] { static_cast<Device*>(ud)->SynchronizeEvent(id, e); });
    };
    def.launch_on_any_thread = d->LaunchesOnAnyThread() ? 1 : 0;
    int32_t type = 0;
    MxStatus status = detail::NewStatus();
    detail::Check(
        host_->register_device(host_->registrar, &def, &type, &status), status);
    return type;
  }

 private:
  static MxStatusCode CallKernel(void* ud, const void* attrs,
                                 const MxKernelContext* ctx, const MxTensor* in,
                                 int32_t n_in, const int32_t* req,
                                 const MxTensor* out, int32_t n_out,
                                 MxStatus* st) {
    const auto* k = static_cast<const OpDef::KernelHolder*>(ud);
    return detail::Guard(st, [&] {
      k->fn(KernelContext(ctx),
            k->op != nullptr ? k->op->AttrsOf(attrs) : Attrs(attrs),
            Tensors(in, n_in), req, Tensors(out, n_out));
    });
  }
  static MxStatusCode OpParse(void* ud, const MxAttrs* attrs, void** parsed,
                              MxStatus* st) {
    return detail::Guard(st, [&] {
      auto box = std::make_unique<OpDef::ParsedBox>(*attrs);
      box->user = static_cast<OpDef*>(ud)->parse_(box->attrs.view());
      *parsed = box.release();
    });
  }
  static void OpFreeParsed(void*, void* parsed) {
    delete static_cast<OpDef::ParsedBox*>(parsed);
  }
  static MxStatusCode OpNumInputs(void* ud, const void* attrs, int32_t* n,
                                  MxStatus* st) {
    return detail::Guard(st, [&] {
      *n = static_cast<OpDef*>(ud)->num_inputs_fn_(
          static_cast<OpDef*>(ud)->AttrsOf(attrs));
    });
  }
  static MxStatusCode OpMutateInputs(void* ud, const void* attrs,
                                     int32_t* indices, int32_t capacity,
                                     int32_t* count, MxStatus* st) {
    return detail::Guard(st, [&] {
      auto* d = static_cast<OpDef*>(ud);
      const std::vector<int> m = d->mutate_inputs_(d->AttrsOf(attrs));
      *count = static_cast<int32_t>(m.size());
      for (int i = 0; i < *count && i < capacity; ++i) indices[i] = m[i];
    });
  }
  static MxStatusCode OpNumOutputs(void* ud, const void* attrs, int32_t* n,
                                   MxStatus* st) {
    return detail::Guard(st, [&] {
      *n = static_cast<OpDef*>(ud)->num_outputs_fn_(
          static_cast<OpDef*>(ud)->AttrsOf(attrs));
    });
  }
  static MxStatusCode OpInferShape(void* ud, const void* attrs, int32_t n_in,
                                   int32_t* in_nd, int64_t* const* in_s,
                                   int32_t n_out, int32_t* out_nd,
                                   int64_t* const* out_s, MxStatus* st) {
    return detail::Guard(st, [&] {
      auto read = [](int32_t n, const int32_t* nd, int64_t* const* s) {
        ShapeSlots slots(n);
        for (int i = 0; i < n; ++i) {
          if (nd[i] >= 0) slots[i] = Shape(s[i], s[i] + nd[i]);
        }
        return slots;
      };
      ShapeSlots in = read(n_in, in_nd, in_s), out = read(n_out, out_nd, out_s);
      auto* d = static_cast<OpDef*>(ud);
      d->infer_shape_(d->AttrsOf(attrs), in, out);
      auto write = [](const ShapeSlots& slots, int32_t* nd, int64_t* const* s) {
        for (size_t i = 0; i < slots.size(); ++i) {
          if (!slots[i]) continue;
          if (slots[i]->size() > MX_MAX_NDIM) {
            throw Error(MX_STATUS_SHAPE_ERROR, "rank above MX_MAX_NDIM");
          }
          nd[i] = static_cast<int32_t>(slots[i]->size());
          std::copy(slots[i]->begin(), slots[i]->end(), s[i]);
        }
      };
      if (in.size() != static_cast<size_t>(n_in) ||
          out.size() != static_cast<size_t>(n_out)) {
        throw Error(MX_STATUS_RUNTIME_ERROR,
                    "shape inference changed the number of slots");
      }
      write(in, in_nd, in_s);
      write(out, out_nd, out_s);
    });
  }
  static MxStatusCode OpInferType(void* ud, const void* attrs, int32_t n_in,
                                  int32_t* in_t, int32_t n_out, int32_t* out_t,
                                  MxStatus* st) {
    return detail::Guard(st, [&] {
      std::vector<int> in(in_t, in_t + n_in), out(out_t, out_t + n_out);
      auto* d = static_cast<OpDef*>(ud);
      d->infer_type_(d->AttrsOf(attrs), in, out);
      if (in.size() != static_cast<size_t>(n_in) ||
          out.size() != static_cast<size_t>(n_out)) {
        throw Error(MX_STATUS_RUNTIME_ERROR,
                    "type inference changed the number of slots");
      }
      std::copy(in.begin(), in.end(), in_t);
      std::copy(out.begin(), out.end(), out_t);
    });
  }
  static MxStatusCode OpCreateState(void* ud, const void* attrs, int32_t dev,
                                    int32_t id, int32_t n, const int32_t* nd,
                                    const int64_t* const* shapes,
                                    const int32_t* types, void** state,
                                    MxStatus* st) {
    return detail::Guard(st, [&] {
      std::vector<Shape> s;
      for (int i = 0; i < n; ++i) s.emplace_back(shapes[i], shapes[i] + nd[i]);
      auto box = std::make_unique<OpDef::StateBox>();
      auto* d = static_cast<OpDef*>(ud);
      box->state = d->create_(d->AttrsOf(attrs), dev, id, s,
                              std::vector<int>(types, types + n));
      *state = box.release();
    });
  }
  static void OpDestroyState(void*, void* state) {
    delete static_cast<OpDef::StateBox*>(state);
  }
  static MxStatusCode OpStatefulCompute(void* ud, void* state,
                                        const MxKernelContext* ctx,
                                        const MxTensor* in, int32_t n_in,
                                        const int32_t* req, const MxTensor* out,
                                        int32_t n_out, MxStatus* st) {
    return detail::Guard(st, [&] {
      static_cast<OpDef*>(ud)->stateful_(
          static_cast<OpDef::StateBox*>(state)->state.get(), KernelContext(ctx),
          Tensors(in, n_in), req, Tensors(out, n_out));
    });
  }

  const MxHostApi* host_;
};

}  // namespace mxplugin

// Defines mx_plugin_init for a plugin called `plugin_name` (a literal)
// whose registration is `fn(mxplugin::Plugin&)`.
#define MX_PLUGIN(plugin_name, fn)                                             \
  extern "C" __attribute__((visibility("default"))) MxStatusCode               \
  mx_plugin_init(const MxHostApi* host, MxPluginDesc* desc,                    \
                 MxStatus* status) {                                           \
    desc->name = plugin_name;                                                  \
    desc->abi_major = MX_PLUGIN_ABI_MAJOR;                                     \
    desc->abi_minor = MX_PLUGIN_ABI_MINOR;                                     \
    if (host->abi_major != MX_PLUGIN_ABI_MAJOR) return MX_STATUS_ABI_MISMATCH; \
    return ::mxplugin::detail::Guard(status, [&] {                             \
      ::mxplugin::Plugin plugin(host);                                         \
      fn(plugin);                                                              \
    });                                                                        \
  }

#endif  // MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_H_
