// Invoke: from an op and arrays to a kernel pushed on the engine.
#include <memory>
#include <mutex>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/env.h"
#include "base/error.h"
#include "base/object_pool.h"
#include "base/thread_scratch.h"
#include "imperative/imperative.h"
#include "imperative/random.h"

namespace mx {
namespace imperative {
namespace {

std::string Label(const NodeAttrs& attrs) {
  std::string label = absl::StrCat("op \"", attrs.op->name(), "\"");
  if (!attrs.name.empty())
    absl::StrAppend(&label, " (node \"", attrs.name, "\")");
  return label;
}

// Names of arguments, for error messages only.
std::string InputName(const NodeAttrs& attrs, size_t i) {
  const std::vector<std::string> names = attrs.op->InputNames(attrs);
  return i < names.size() ? names[i] : std::to_string(i);
}
std::string OutputName(const NodeAttrs& attrs, size_t i) {
  const std::vector<std::string> names = attrs.op->OutputNames(attrs);
  return i < names.size() ? names[i] : std::to_string(i);
}

// Everything the pushed kernel needs. Records are recycled (their vectors
// keep their capacity), so a steady stream of ops allocates none.
struct Launch : RecyclingPool<Launch>::Node {
  const NodeAttrs* attrs = nullptr;  // `attrs_copy` or the caller's.
  NodeAttrs attrs_copy;
  std::vector<TBlob> in, out;
  std::vector<OpReqType> req;
  std::vector<NDArray> dynamic_out;
  const FCompute* compute = nullptr;
  const FComputeDynamic* compute_dynamic = nullptr;
  const FStatefulCompute* stateful = nullptr;
  OpStatePtr state;
  bool is_train = false;
  bool temp_space = false;
  RandomEngine* rng = nullptr;

  // Drops what the op held (arrays, state, attributes) and keeps capacity.
  void Clear() {
    if (attrs == &attrs_copy) attrs_copy = NodeAttrs();
    attrs = nullptr;
    // The views stay (they own nothing): the next op of the same arity
    // overwrites them instead of constructing new ones.
    req.clear();
    dynamic_out.clear();
    compute = nullptr;
    compute_dynamic = nullptr;
    stateful = nullptr;
    state.reset();
    is_train = temp_space = false;
    rng = nullptr;
    // An op with a huge arity (add_n of thousands) does not pin its
    // vectors' memory in the pool.
    constexpr size_t kKeep = 64;
    DropCapacityAbove(kKeep, &in);
    DropCapacityAbove(kKeep, &out);
    DropCapacityAbove(kKeep, &req);
    DropCapacityAbove(kKeep, &dynamic_out);
  }
};

// Owns a launch record while its operation is pending: the engine drops
// the pushed function (and this with it) once the op ran or was skipped.
// Fits the engine function's inline storage (no allocation per push).
class LaunchRef {
 public:
  LaunchRef() : launch_(RecyclingPool<Launch>::Take()) {}
  LaunchRef(LaunchRef&& other) noexcept
      : launch_(std::exchange(other.launch_, nullptr)) {}
  LaunchRef& operator=(LaunchRef&&) = delete;
  ~LaunchRef() {
    if (launch_ == nullptr) return;
    launch_->Clear();
    RecyclingPool<Launch>::Return(launch_);
  }
  Launch* operator->() const { return launch_; }
  Launch& operator*() const { return *launch_; }

 private:
  Launch* launch_;
};

void RunKernel(const Launch& l, engine::RunContext rctx) {
  OpContext ctx;
  ctx.is_train = l.is_train;
  ctx.run_ctx = rctx;
  ctx.rng = l.rng;
  ctx.temp_space_requested = l.temp_space;
  if (l.compute_dynamic != nullptr) {
    (*l.compute_dynamic)(ctx, *l.attrs, l.in, l.dynamic_out);
  } else if (l.stateful != nullptr) {
    (*l.stateful)(l.state, ctx, l.in, l.req, l.out);
  } else {
    (*l.compute)(ctx, *l.attrs, l.in, l.req, l.out);
  }
}

// What Invoke looks up per op and device type: the lookups by name and
// by device type were a measurable share of dispatching a small op, so
// each thread keeps them in a small direct-mapped cache keyed by the op's
// address, its revision (which changes when a kernel or attribute does)
// and the device type.
struct Dispatch {
  const Op* op = nullptr;
  uint64_t revision = 0;
  int dev_type = -1;
  const FInvoke* finvoke = nullptr;
  const FCompute* compute = nullptr;
  const FComputeDynamic* compute_dynamic = nullptr;
  const FStatefulCompute* stateful = nullptr;
};

const Dispatch& LookUpDispatch(const Op& op, int dev_type) {
  constexpr size_t kSlots = 64;
  thread_local Dispatch cache[kSlots];
  const size_t slot = ((reinterpret_cast<uintptr_t>(&op) >> 6) ^
                       static_cast<size_t>(dev_type)) %
                      kSlots;
  Dispatch& d = cache[slot];
  const uint64_t revision = op.revision();
  if (d.op != &op || d.revision != revision || d.dev_type != dev_type) {
    // Filled aside and stored whole: a lookup that threw leaves no slot
    // with a new key and old pointers.
    Dispatch fresh;
    fresh.finvoke = op.GetAttr<FInvoke>("FInvoke");
    fresh.compute = op.compute(dev_type);
    fresh.compute_dynamic = op.compute_dynamic(dev_type);
    fresh.stateful = op.stateful_compute(dev_type);
    fresh.op = &op;
    fresh.revision = revision;
    fresh.dev_type = dev_type;
    d = fresh;
  }
  return d;
}

// While tracing, shapes are read without computing anything; an input of
// unknown shape (after a dynamic-shape op) leaves outputs unknown too.
void InferShapes(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                 const std::vector<NDArray>& outputs, bool tracing,
                 std::vector<TShape>* in_shapes,
                 std::vector<TShape>* out_shapes) {
  const Op& op = *attrs.op;
  auto shape_of = [tracing](const NDArray& a) -> const TShape& {
    return tracing ? a.static_shape() : a.shape();
  };
  // The vectors hold the last call's shapes: every entry is overwritten.
  bool inputs_known = true;
  in_shapes->resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    (*in_shapes)[i] = shape_of(inputs[i]);
    inputs_known &= (*in_shapes)[i].is_known();
  }
  out_shapes->resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    (*out_shapes)[i] = outputs[i].is_none() ? TShape() : shape_of(outputs[i]);
  }
  if (!op.infer_shape()) {
    throw NotImplemented(Label(attrs) + " has no shape inference");
  }
  op.infer_shape()(attrs, in_shapes, out_shapes);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if ((*in_shapes)[i] != shape_of(inputs[i])) {
      throw ShapeError(
          absl::StrCat(Label(attrs), ": input ", i, " (", InputName(attrs, i),
                       ") has shape ", shape_of(inputs[i]).ToString(), " but ",
                       (*in_shapes)[i].ToString(), " is required"));
    }
  }
  if (op.is_dynamic_shape() || (tracing && !inputs_known)) return;
  for (size_t i = 0; i < out_shapes->size(); ++i) {
    if (!(*out_shapes)[i].is_known()) {
      throw ShapeError(absl::StrCat(Label(attrs),
                                    ": cannot infer the shape of "
                                    "output ",
                                    i, " (", OutputName(attrs, i), "); got ",
                                    (*out_shapes)[i].ToString()));
    }
  }
}

void InferTypes(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                const std::vector<NDArray>& outputs,
                std::vector<DType>* in_types, std::vector<DType>* out_types) {
  const Op& op = *attrs.op;
  for (size_t i = 0; i < inputs.size(); ++i) (*in_types)[i] = inputs[i].dtype();
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].is_none()) (*out_types)[i] = outputs[i].dtype();
  }
  if (!op.infer_type()) {
    throw NotImplemented(Label(attrs) + " has no dtype inference");
  }
  op.infer_type()(attrs, in_types, out_types);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if ((*in_types)[i] != inputs[i].dtype()) {
      throw DTypeError(absl::StrCat(Label(attrs), ": input ", i, " (",
                                    InputName(attrs, i), ") has dtype ",
                                    DTypeName(inputs[i].dtype()), " but ",
                                    DTypeName((*in_types)[i]), " is required"));
    }
  }
  for (size_t i = 0; i < out_types->size(); ++i) {
    if ((*out_types)[i] == DType::kUnknown) {
      throw DTypeError(absl::StrCat(Label(attrs),
                                    ": cannot infer the dtype of "
                                    "output ",
                                    i, " (", OutputName(attrs, i), ")"));
    }
  }
}

// Shape and dtype vectors for inference, reused across calls (Invoke is
// the per-op dispatch path).
struct InferScratch {
  std::vector<TShape> in_shapes, out_shapes;
  std::vector<DType> in_types, out_types;
  void Release() {
    // An op with a huge arity (add_n of thousands) does not pin its
    // vectors' memory for the life of the thread.
    constexpr size_t kKeep = 1024;
    DropCapacityAbove(kKeep, &in_shapes);
    DropCapacityAbove(kKeep, &out_shapes);
    DropCapacityAbove(kKeep, &in_types);
    DropCapacityAbove(kKeep, &out_types);
  }
};

InvokeHooks& Hooks() {
  static InvokeHooks hooks;
  return hooks;
}

// Host ops whose arrays hold at most this many bytes in all run on the
// pushing thread when their inputs are ready (engine::FnProperty::
// kInlineIfReady): a hand-off to a worker costs microseconds, more than
// such a kernel. 0 turns it off.
int64_t InlineOpBytes() {
  static const int64_t kBytes =
      env::GetInt("MX_ENGINE_INLINE_BYTES", 16384, 0, int64_t{1} << 40);
  return kBytes;
}

engine::FnProperty Scheduling(Context ctx, const std::vector<TBlob>& in,
                              const std::vector<TBlob>& out,
                              const std::vector<NDArray>& dynamic_out) {
  const int64_t limit = InlineOpBytes();
  if (limit == 0 || !ctx.is_host()) return engine::FnProperty::kNormal;
  int64_t bytes = 0;
  for (const TBlob& b : in) bytes += b.Size() * DTypeSize(b.dtype);
  for (const TBlob& b : out) bytes += b.Size() * DTypeSize(b.dtype);
  // A dynamic-shape op's output size is known only once it ran.
  if (!dynamic_out.empty() || bytes > limit) return engine::FnProperty::kNormal;
  return engine::FnProperty::kInlineIfReady;
}

bool SameView(const NDArray& a, const NDArray& b) {
  return a.SharesChunkWith(b) && a.byte_offset() == b.byte_offset() &&
         a.shape() == b.shape() && a.dtype() == b.dtype();
}

}  // namespace

void InstallInvokeHooks(const InvokeHooks& hooks) {
  InvokeHooks& h = Hooks();
  if (hooks.check_record != nullptr) h.check_record = hooks.check_record;
  if (hooks.record != nullptr) h.record = hooks.record;
  if (hooks.defer != nullptr) h.defer = hooks.defer;
}

void Invoke(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
            std::vector<NDArray>* outputs, const InvokeOptions& options) {
  OpRegistry::RunPluginHook();  // Plugin kernels take over before any op runs.
  if (attrs.op == nullptr) {
    throw InvalidArgument("Invoke: attributes carry no op (use MakeAttrs)");
  }
  const Op& op = *attrs.op;
  const size_t n_in = op.NumInputs(attrs), n_out = op.NumOutputs(attrs);
  // Argument names and labels are built only on the error paths: this is
  // the per-op dispatch path.
  auto input_label = [&](size_t i) {
    return absl::StrCat(Label(attrs), " input ", i, " (", InputName(attrs, i),
                        ")");
  };
  if (inputs.size() != n_in) {
    throw InvalidArgument(
        absl::StrCat(Label(attrs), ": expects ", n_in, " input(s) (",
                     absl::StrJoin(op.InputNames(attrs), ", "), ") but got ",
                     inputs.size()));
  }
  if (outputs->empty()) outputs->resize(n_out);
  if (outputs->size() != n_out) {
    throw InvalidArgument(absl::StrCat(Label(attrs), ": has ", n_out,
                                       " output(s) but ", outputs->size(),
                                       " were given"));
  }
  const bool deferred = IsDeferredCompute();
  const bool recording = IsRecording();
  if (deferred && recording) {
    throw StateError(Label(attrs) +
                     ": autograd recording is not supported in deferred-"
                     "compute mode");
  }
  if (deferred && Hooks().defer == nullptr) {
    throw StateError(Label(attrs) +
                     ": deferred-compute mode is on but "
                     "//imperative:deferred_compute is not linked");
  }
  if (recording) {
    if (Hooks().check_record == nullptr) {
      throw StateError(Label(attrs) +
                       ": recording is on but //autograd is not linked");
    }
    Hooks().check_record(attrs, inputs, *outputs);
  }
  const Context ctx = n_in > 0 ? inputs[0].ctx() : options.ctx;
  const int dev_type =
      ctx.dev_type == Context::kCPUPinned ? Context::kCPU : ctx.dev_type;
  // A copy: an FInvoke op invokes others, which may reuse the slot.
  const Dispatch dispatch = LookUpDispatch(op, dev_type);
  // Ops that run by invoking others (FInvoke) handle contexts themselves.
  const FInvoke* finvoke = dispatch.finvoke;
  for (size_t i = 0; i < n_in; ++i) {
    if (!deferred && !inputs[i].is_written()) {
      inputs[i].CheckReadable(input_label(i).c_str());
    }
    if (inputs[i].ctx() != ctx) {
      throw InvalidArgument(
          absl::StrCat(input_label(i), " is on ", inputs[i].ctx().ToString(),
                       " but input 0 is on ", ctx.ToString()));
    }
  }
  for (size_t i = 0; i < n_out; ++i) {
    if (finvoke == nullptr && !(*outputs)[i].is_none() &&
        (*outputs)[i].ctx() != ctx) {
      throw InvalidArgument(
          absl::StrCat(Label(attrs), ": output ", i, " is on ",
                       (*outputs)[i].ctx().ToString(), " but the op runs on ",
                       ctx.ToString()));
    }
  }

  // Traced like other ops in deferred-compute mode (when they infer
  // shapes), below.
  if (finvoke != nullptr && !deferred) {
    (*finvoke)(attrs, inputs, outputs, options.req);
    if (recording) Hooks().record(attrs, inputs, outputs);
    return;
  }

  LaunchRef launch;
  if (options.attrs_outlive_ops) {
    launch->attrs = &attrs;
  } else {
    launch->attrs_copy = attrs;
    launch->attrs = &launch->attrs_copy;
  }
  launch->compute = dispatch.compute;
  launch->compute_dynamic = dispatch.compute_dynamic;
  launch->stateful = dispatch.stateful;
  if (launch->compute == nullptr && launch->compute_dynamic == nullptr &&
      launch->stateful == nullptr && finvoke == nullptr) {
    throw NotFound(
        absl::StrCat(Label(attrs), " has no kernel for ", ctx.ToString()));
  }

  const ScratchLease<InferScratch> scratch;
  std::vector<TShape>& in_shapes = (*scratch).in_shapes;
  std::vector<TShape>& out_shapes = (*scratch).out_shapes;
  InferShapes(attrs, inputs, *outputs, deferred, &in_shapes, &out_shapes);
  std::vector<DType>& in_types = (*scratch).in_types;
  std::vector<DType>& out_types = (*scratch).out_types;
  in_types.assign(n_in, DType::kUnknown);
  out_types.assign(n_out, DType::kUnknown);
  InferTypes(attrs, inputs, *outputs, &in_types, &out_types);

  if (deferred) {
    Hooks().defer(attrs, inputs, outputs, out_shapes, out_types, ctx);
    return;
  }

  std::vector<OpReqType>& req = launch->req;
  if (options.req.empty()) {
    req.assign(n_out, OpReqType::kWriteTo);
  } else {
    req.assign(options.req.begin(), options.req.end());
  }
  if (req.size() != n_out) {
    throw InvalidArgument(absl::StrCat(Label(attrs), ": ", req.size(),
                                       " write requests for ", n_out,
                                       " outputs"));
  }

  // Outputs that alias an input: in place when the op allows that exact
  // pairing, otherwise computed into a temporary and copied back.
  std::vector<std::pair<int, int>> inplace;  // Asked for on first alias.
  bool inplace_known = false;
  std::vector<std::pair<NDArray, NDArray>> copy_back;  // (temp, user output)
  for (size_t i = 0; i < n_out; ++i) {
    NDArray& out = (*outputs)[i];
    if (out.is_none()) {
      // Allocated now, while no other thread can see it (no lock).
      out = op.is_dynamic_shape() ? NDArray(TShape(), ctx, out_types[i])
                                  : NDArray(out_shapes[i], ctx, out_types[i],
                                            /*delay_alloc=*/false);
      continue;
    }
    bool aliased = false, allowed = false;
    for (size_t j = 0; j < n_in; ++j) {
      if (!out.SharesChunkWith(inputs[j])) continue;
      aliased = true;
      if (!inplace_known) {
        inplace = op.InplaceOptions(attrs);
        inplace_known = true;
      }
      for (const auto& [in_idx, out_idx] : inplace) {
        allowed |= in_idx == static_cast<int>(j) &&
                   out_idx == static_cast<int>(i) && SameView(out, inputs[j]);
      }
    }
    if (!aliased) continue;
    if (allowed && req[i] == OpReqType::kWriteTo) {
      req[i] = OpReqType::kWriteInplace;
    } else if (req[i] != OpReqType::kNullOp) {
      if (req[i] == OpReqType::kAddTo) {
        throw NotImplemented(absl::StrCat(Label(attrs), ": output ", i,
                                          " aliases an input and asks kAddTo"));
      }
      NDArray temp(out_shapes[i], ctx, out_types[i]);
      copy_back.emplace_back(temp, out);
      out = temp;
    }
  }

  // Memory first (mutated inputs, outputs), then the kernel's views of
  // the arrays, filled in place in the recycled record; their vars are
  // what the op reads and writes.
  const std::vector<int> mutated = op.MutateInputs(attrs);
  auto is_mutated = [&mutated](size_t j) {
    for (int m : mutated) {
      if (m == static_cast<int>(j)) return true;
    }
    return false;
  };
  for (size_t j = 0; j < n_in; ++j) {
    if (!is_mutated(j)) continue;
    inputs[j].CheckAndAlloc();
    inputs[j].MarkWritten();
  }
  for (const NDArray& out : *outputs) {
    out.CheckAndAlloc();
    out.MarkWritten();
  }
  launch->in.resize(n_in);
  for (size_t j = 0; j < n_in; ++j) inputs[j].FillBlob(&launch->in[j]);
  const bool dynamic_shape = op.is_dynamic_shape();
  if (dynamic_shape) {
    launch->out.clear();
    launch->dynamic_out = *outputs;
  } else {
    launch->out.resize(n_out);
    for (size_t i = 0; i < n_out; ++i) {
      (*outputs)[i].FillBlob(&launch->out[i]);
    }
  }

  // Vars: inputs are read, outputs and mutated inputs written.
  absl::InlinedVector<engine::VarHandle, 8> reads, writes;
  for (size_t j = 0; j < n_in; ++j) {
    (is_mutated(j) ? writes : reads).push_back(launch->in[j].var);
  }
  for (size_t i = 0; i < n_out; ++i) {
    const engine::VarHandle var =
        dynamic_shape ? (*outputs)[i].var() : launch->out[i].var;
    // A var listed twice as written (two outputs viewing one chunk) would
    // be an engine error; one write covers both.
    bool listed = false;
    for (const engine::VarHandle& w : writes) listed |= w == var;
    if (!listed) writes.push_back(var);
  }
  for (const ResourceRequest& r : op.Resources(attrs)) {
    if (r.type == ResourceRequest::kTempSpace) {
      launch->temp_space = true;
    } else {
      random_internal::Generator* gen = random_internal::GetGenerator(ctx);
      launch->rng = &gen->engine;
      writes.push_back(gen->var);
    }
  }

  launch->is_train = IsTraining();
  if (launch->stateful != nullptr && launch->compute == nullptr) {
    if (!op.create_state()) {
      throw NotImplemented(Label(attrs) +
                           " is stateful but cannot create state");
    }
    if (options.state_slot == nullptr) {
      launch->state = op.create_state()(attrs, ctx, in_shapes, in_types);
    } else {
      // One lock for all slots: creating a state is rare, and a runner
      // may be used from several threads.
      static std::mutex* slots_mu = new std::mutex();
      std::lock_guard<std::mutex> lock(*slots_mu);
      if (*options.state_slot == nullptr) {
        *options.state_slot =
            op.create_state()(attrs, ctx, in_shapes, in_types);
      }
      launch->state = *options.state_slot;
    }
  } else {
    launch->stateful = nullptr;
  }
  const engine::FnProperty scheduling =
      Scheduling(ctx, launch->in, launch->out, launch->dynamic_out);
  engine::Engine::Get()->PushSync(
      [launch = std::move(launch)](engine::RunContext rctx) {
        RunKernel(*launch, rctx);
      },
      ctx, reads, writes, scheduling, options.priority, op.name());

  for (auto& [temp, user_out] : copy_back) {
    CopyFromTo(temp, user_out, options.priority);
    for (NDArray& out : *outputs) {
      if (out.SharesChunkWith(temp)) out = user_out;
    }
  }
  if (recording) Hooks().record(attrs, inputs, outputs);
}

std::vector<NDArray> Invoke(const std::string& op_name,
                            const std::vector<NDArray>& inputs,
                            const AttrDict& attrs,
                            const InvokeOptions& options) {
  const Op& op = OpRegistry::Get()->Lookup(op_name);
  AttrDict dict = attrs;
  FillVarNumArgs(op, inputs.size(), &dict);
  std::vector<NDArray> outputs;
  Invoke(MakeAttrs(op, std::move(dict)), inputs, &outputs, options);
  return outputs;
}

void DeliverOutputs(const std::vector<NDArray>& results,
                    const std::vector<OpReqType>& req,
                    std::vector<NDArray>* outputs) {
  outputs->resize(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    NDArray& out = (*outputs)[i];
    if (out.is_none()) {
      out = results[i];
      continue;
    }
    const OpReqType r = i < req.size() ? req[i] : OpReqType::kWriteTo;
    const bool same = out.SharesChunkWith(results[i]) &&
                      out.byte_offset() == results[i].byte_offset() &&
                      out.shape() == results[i].shape() &&
                      out.dtype() == results[i].dtype();
    if (r == OpReqType::kNullOp || (same && r != OpReqType::kAddTo)) continue;
    static const Op& copy = OpRegistry::Get()->Lookup("_copy");
    // Adding an array to itself goes through a copy of it.
    const NDArray source = same ? Invoke("_copy", {results[i]})[0] : results[i];
    InvokeOptions write;
    write.req = {r};
    std::vector<NDArray> target = {out};
    Invoke(MakeAttrs(copy, {}), {source}, &target, write);
  }
}

}  // namespace imperative
}  // namespace mx
