// The operator registry: every operator, declared once by name.
//
// An Op carries its arity, argument names, a parameter schema, shape and
// dtype inference, and kernels keyed by device type. Capabilities beyond the
// core ones (gradients, fusion hints, ...) are typed attributes looked up by
// name, so a new capability adds an attribute, not a field on every op.
// Device plugins add kernels to existing ops through OpRegistry::Mutable.
//
//   MX_REGISTER_OP(relu)
//       .Describe("max(x, 0), elementwise")
//       .SetNumInputs(1).SetInputNames({"data"})
//       .SetInferShape(SameShape).SetInferType(SameType)
//       .SetCompute(Context::kCPU, ReluCompute);
//
//   const mx::Op& op = mx::OpRegistry::Get()->Lookup("relu");
#ifndef MXCORE_GRAPH_OP_H_
#define MXCORE_GRAPH_OP_H_

#include <any>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/context.h"
#include "engine/engine.h"
#include "graph/params.h"
#include "ndarray/ndarray.h"

namespace mx {

class Op;
class Symbol;

// An op instance's attributes: the op (null for a variable), a node name,
// the attribute strings as given, the parameters parsed from them, and
// nested graphs (subgraph ops).
struct NodeAttrs {
  const Op* op = nullptr;
  std::string name;
  AttrDict dict;
  std::any parsed;
  std::vector<std::shared_ptr<Symbol>> subgraphs;

  template <typename P>
  const P& get() const {
    return std::any_cast<const P&>(parsed);
  }
};

// How a kernel writes an output.
enum class OpReqType {
  kNullOp,        // Do not write.
  kWriteTo,       // Overwrite.
  kWriteInplace,  // Overwrite; the output shares memory with an input.
  kAddTo,         // Add to what is there.
};

struct ResourceRequest {
  enum Type { kTempSpace, kRandom };
  Type type;
};

class RandomEngine;  // graph/random_engine.h

// What a kernel sees at run time.
class OpContext {
 public:
  bool is_train = false;
  engine::RunContext run_ctx;
  // Set when the op requested ResourceRequest::kRandom.
  RandomEngine* rng = nullptr;

  // Scratch memory living until the kernel returns; requires a kTempSpace
  // request. Throws otherwise.
  void* TempSpace(size_t bytes) const;
  template <typename T>
  T* TempSpace(size_t count) const {
    return static_cast<T*>(TempSpace(count * sizeof(T)));
  }
  RandomEngine& random() const;

  bool temp_space_requested = false;
  ~OpContext();

 private:
  mutable std::vector<StorageHandle> temp_;
};

// State kept by stateful ops between calls (e.g. a oneDNN primitive).
class OpState {
 public:
  virtual ~OpState() = default;
};
using OpStatePtr = std::shared_ptr<OpState>;

// Shape inference fills unknown entries of `in` and `out` (either may be
// partly known) and throws ShapeError on a contradiction, naming the op and
// argument. Type inference does the same for dtypes.
using FInferShape = std::function<void(
    const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out)>;
using FInferType = std::function<void(const NodeAttrs&, std::vector<DType>* in,
                                      std::vector<DType>* out)>;
using FCompute = std::function<void(
    const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
    const std::vector<OpReqType>& req, const std::vector<TBlob>& out)>;
// Dynamic-shape ops: the kernel computes each output's shape and allocates
// it with NDArray::AllocDynamic.
using FComputeDynamic = std::function<void(const OpContext&, const NodeAttrs&,
                                           const std::vector<TBlob>& in,
                                           const std::vector<NDArray>& out)>;
using FCreateOpState = std::function<OpStatePtr(
    const NodeAttrs&, Context, const std::vector<TShape>& in_shapes,
    const std::vector<DType>& in_types)>;
using FStatefulCompute = std::function<void(
    const OpStatePtr&, const OpContext&, const std::vector<TBlob>& in,
    const std::vector<OpReqType>& req, const std::vector<TBlob>& out)>;
// Op attribute "FAttachSubgraphs": called once a node's attrs.subgraphs are
// set by a loader (Symbol::FromJSON), before its arity is read, so that a
// subgraph op can cache what it derives from them in attrs.parsed.
using FAttachSubgraphs = std::function<void(NodeAttrs*)>;

// The most inputs or outputs an op's arity attribute (num_args,
// num_outputs) may ask for; checked when the attribute is parsed, so a
// hostile value cannot size graphs, shape lists or output vectors.
constexpr int kMaxOpArity = 1 << 16;

class Op {
 public:
  explicit Op(std::string name)
      : name_(std::move(name)), revision_(NextRevision()) {}

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }

  // ---- Declaration (builder style, used at registration). ----
  Op& Describe(std::string text);
  Op& SetNumInputs(int n);
  Op& SetNumInputs(std::function<int(const NodeAttrs&)> fn);
  Op& SetNumOutputs(int n);
  Op& SetNumOutputs(std::function<int(const NodeAttrs&)> fn);
  Op& SetInputNames(std::vector<std::string> names);
  Op& SetInputNames(
      std::function<std::vector<std::string>(const NodeAttrs&)> fn);
  Op& SetOutputNames(std::vector<std::string> names);
  // Variadic ops (MXNet's key_var_num_args): the attribute holding the
  // number of inputs, which Symbol::Create and imperative::Invoke fill in
  // from the inputs given when it is absent (FillVarNumArgs).
  Op& SetKeyVarNumArgs(std::string key);
  // Outputs a composed symbol exposes (the first n); the rest are internal
  // (BatchNorm's saved statistics, Dropout's mask). Default: all.
  Op& SetNumVisibleOutputs(std::function<int(const NodeAttrs&)> fn);
  template <typename P>
  Op& SetParams() {
    param_parser_ = [](const std::string& op, const AttrDict& dict) {
      return std::any(ParseParams<P>(op, dict));
    };
    params_.clear();
    for (const auto& field : ParamSchema<P>::Get().fields()) {
      params_.push_back({field.name, field.choices});
    }
    return *this;
  }
  // Attributes parsed by a function (plugin ops); it throws
  // InvalidArgument naming the op and the attribute.
  Op& SetParamParser(
      std::function<std::any(const std::string& op, const AttrDict&)> fn);
  Op& SetInferShape(FInferShape fn);
  Op& SetInferType(FInferType fn);
  Op& SetCompute(int dev_type, FCompute fn);
  // A kernel for every device type, also those plugins register later,
  // where the op has no kernel of any kind of its own for the type: for
  // ops whose kernel only calls other ops' kernels on the same device
  // (subgraph ops).
  Op& SetComputeOnEveryDevice(FCompute fn);
  // Marks the op dynamic-shape.
  Op& SetComputeDynamic(int dev_type, FComputeDynamic fn);
  Op& SetStateful(FCreateOpState create);
  Op& SetStatefulCompute(int dev_type, FStatefulCompute fn);
  // Inputs the op writes (auxiliary states such as moving statistics).
  Op& SetMutateInputs(std::function<std::vector<int>(const NodeAttrs&)> fn);
  Op& SetResourceRequest(
      std::function<std::vector<ResourceRequest>(const NodeAttrs&)> fn);
  // (input, output) pairs that may share memory.
  Op& SetInplaceOption(
      std::function<std::vector<std::pair<int, int>>(const NodeAttrs&)> fn);
  Op& AddAlias(const std::string& alias);

  // All kernels of one device type. Plugins swap them: a plugin's kernel
  // replaces the built-in one, and a failed load puts it back.
  struct DeviceKernels {
    std::optional<FCompute> compute;
    std::optional<FComputeDynamic> compute_dynamic;
    std::optional<FStatefulCompute> stateful_compute;
  };
  // Removes and returns the kernels of `dev_type`.
  DeviceKernels TakeKernels(int dev_type);
  // Replaces the kernels of `dev_type` with `kernels`.
  void RestoreKernels(int dev_type, DeviceKernels kernels);

  // Any other typed attribute.
  template <typename T>
  Op& SetAttr(const std::string& key, T value) {
    Revise();
    attrs_[key] = std::any(std::move(value));
    return *this;
  }
  // Null when the op lacks the attribute.
  template <typename T>
  const T* GetAttr(const std::string& key) const {
    auto it = attrs_.find(key);
    return it == attrs_.end() ? nullptr : std::any_cast<T>(&it->second);
  }

  // ---- Queries. ----
  // Empty unless the op is variadic.
  const std::string& key_var_num_args() const { return key_var_num_args_; }
  int NumInputs(const NodeAttrs& attrs) const;
  int NumOutputs(const NodeAttrs& attrs) const;
  int NumVisibleOutputs(const NodeAttrs& attrs) const;
  std::vector<std::string> InputNames(const NodeAttrs& attrs) const;
  std::vector<std::string> OutputNames(const NodeAttrs& attrs) const;
  // Parses attrs->dict into attrs->parsed; throws InvalidArgument.
  void ParseAttrs(NodeAttrs* attrs) const;
  // The attributes SetParams declared, in declaration order, with the
  // allowed values of enumerated ones (documentation, fuzzing); empty for
  // ops without a schema or with a parser function.
  struct ParamInfo {
    std::string name;
    std::vector<std::string> choices;
  };
  const std::vector<ParamInfo>& params() const { return params_; }
  const FInferShape& infer_shape() const { return infer_shape_; }
  const FInferType& infer_type() const { return infer_type_; }
  // Null when the op has no such kernel for the device type (compute():
  // nor one for every device).
  const FCompute* compute(int dev_type) const;
  const FComputeDynamic* compute_dynamic(int dev_type) const;
  const FStatefulCompute* stateful_compute(int dev_type) const;
  const FCreateOpState& create_state() const { return create_state_; }
  bool is_dynamic_shape() const { return dynamic_shape_; }
  std::vector<int> MutateInputs(const NodeAttrs& attrs) const;
  std::vector<ResourceRequest> Resources(const NodeAttrs& attrs) const;
  std::vector<std::pair<int, int>> InplaceOptions(const NodeAttrs& attrs) const;
  // Changes whenever a kernel or a typed attribute (SetAttr) is set, taken
  // or restored, to a value no op had before (also after an op is removed
  // and another takes its address): callers may cache what they looked up
  // (compute(), GetAttr()) under (op, revision). It changes before the
  // mutation, so a mutation that throws half-way still invalidates. Like
  // the lookups themselves, it does not make changing an op safe while
  // another thread dispatches it (plugins change ops before ops run).
  uint64_t revision() const {
    return revision_.load(std::memory_order_acquire);
  }

 private:
  static uint64_t NextRevision();
  void Revise() { revision_.store(NextRevision(), std::memory_order_release); }

  friend class OpRegistry;
  std::string name_;
  std::string description_;
  std::vector<std::string> aliases_;
  int num_inputs_ = 1;
  int num_outputs_ = 1;
  std::function<int(const NodeAttrs&)> num_inputs_fn_;
  std::function<int(const NodeAttrs&)> num_outputs_fn_;
  std::function<int(const NodeAttrs&)> num_visible_outputs_fn_;
  std::vector<std::string> input_names_;
  std::function<std::vector<std::string>(const NodeAttrs&)> input_names_fn_;
  std::vector<std::string> output_names_;
  std::string key_var_num_args_;
  std::function<std::any(const std::string&, const AttrDict&)> param_parser_;
  std::vector<ParamInfo> params_;
  FInferShape infer_shape_;
  FInferType infer_type_;
  std::unordered_map<int, FCompute> compute_;
  std::optional<FCompute> compute_on_every_device_;
  std::unordered_map<int, FComputeDynamic> compute_dynamic_;
  std::unordered_map<int, FStatefulCompute> stateful_compute_;
  FCreateOpState create_state_;
  bool dynamic_shape_ = false;
  std::function<std::vector<int>(const NodeAttrs&)> mutate_inputs_;
  std::function<std::vector<ResourceRequest>(const NodeAttrs&)> resources_;
  std::function<std::vector<std::pair<int, int>>(const NodeAttrs&)> inplace_;
  std::unordered_map<std::string, std::any> attrs_;
  std::atomic<uint64_t> revision_;
};

class OpRegistry {
 public:
  static OpRegistry* Get();

  // Throws AlreadyExists when the name (or an alias) is taken.
  Op& Register(const std::string& name);
  // Removes an op (used to undo a failed plugin load).
  void Unregister(const std::string& name);
  // Null when unknown.
  const Op* Find(const std::string& name) const;
  // Throws NotFound naming the op.
  const Op& Lookup(const std::string& name) const;
  // For adding kernels (device plugins); throws NotFound.
  Op& Mutable(const std::string& name);
  std::vector<std::string> ListNames() const;
  // Called by Op::AddAlias.
  void AddAlias(const std::string& alias, Op* op);

  // The plugin loader installs a hook loading MX_PLUGINS; it runs before
  // the first op is invoked (imperative::Invoke calls RunPluginHook) and on
  // the first Lookup of an unknown name. Until it succeeds, every call runs
  // it again (so a bad MX_PLUGINS keeps raising its ConfigError). The hook
  // returns false when it could not run yet (called while loading).
  static void SetPluginHook(std::function<bool()> hook);
  static void RunPluginHook();

 private:
  OpRegistry() = default;
  std::unordered_map<std::string, std::unique_ptr<Op>> ops_;
  std::unordered_map<std::string, Op*> by_name_;  // Names and aliases.
};

// Parsed attributes for `op` from a string dictionary.
NodeAttrs MakeAttrs(const Op& op, AttrDict dict, std::string name = "");

// Sets a variadic op's count attribute (Op::SetKeyVarNumArgs) to
// `num_inputs` when `attrs` lacks it and inputs are given, as MXNet's
// frontends do; other ops' attributes are left alone.
void FillVarNumArgs(const Op& op, size_t num_inputs, AttrDict* attrs);

// Shared inference helpers for op definitions.
// All inputs and outputs have one shape / one dtype.
void SameShape(const NodeAttrs& attrs, std::vector<TShape>* in,
               std::vector<TShape>* out);
void SameType(const NodeAttrs& attrs, std::vector<DType>* in,
              std::vector<DType>* out);
// Merges `src` into (*shapes)[i]; on contradiction throws ShapeError
// "<op>: <which> <name> has shape X but Y is required".
void AssignShape(const NodeAttrs& attrs, std::vector<TShape>* shapes, int i,
                 const TShape& src, bool is_output);
void AssignType(const NodeAttrs& attrs, std::vector<DType>* types, int i,
                DType src, bool is_output);

}  // namespace mx

#define MX_REGISTER_OP_CONCAT_(a, b) a##b
#define MX_REGISTER_OP_VAR_(line) \
  MX_REGISTER_OP_CONCAT_(mx_op_registration_, line)
// Registers an op at static-initialization time. Libraries defining ops
// must be linked with alwayslink = 1.
#define MX_REGISTER_OP(Name)                                        \
  static ::mx::Op& MX_REGISTER_OP_VAR_(__LINE__) [[maybe_unused]] = \
      ::mx::OpRegistry::Get()->Register(#Name)

#endif  // MXCORE_GRAPH_OP_H_
