// Ops defined through the C plugin ABI (MxOpDef): schema, shape and type
// inference, kernels and state (kernels for existing ops: c_kernel.cc).
#include <any>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "graph/node.h"
#include "graph/op.h"
#include "plugin/c_kernel.h"
#include "plugin/c_util.h"
#include "plugin/registrar.h"

namespace mx {
namespace plugin {
namespace {

// A node's attributes as the plugin sees them: its parse_attrs result,
// or (without parse_attrs) the validated strings with defaults filled.
struct CParsedAttrs {
  AttrDict dict;
  CAttrStrings strings;  // Points into `dict`, declared before it.
  void* parsed = nullptr;
  bool has_parser = false;
  MxFreeAttrsFn free_fn = nullptr;
  void* user_data = nullptr;

  explicit CParsedAttrs(AttrDict d) : dict(std::move(d)), strings(dict, "") {}
  ~CParsedAttrs() {
    if (free_fn != nullptr && parsed != nullptr) free_fn(user_data, parsed);
  }
  const void* ForPlugin() const {
    return has_parser ? parsed : static_cast<const void*>(strings.get());
  }
};
using CParsedPtr = std::shared_ptr<const CParsedAttrs>;

// One attribute of an op's schema, copied.
struct AttrSpec {
  std::string key;
  int type = MX_ATTR_STRING;
  bool required = true;
  std::string default_value;
};

bool ValueHasType(const std::string& v, int type) {
  switch (type) {
    case MX_ATTR_INT: {
      int64_t i;
      return absl::SimpleAtoi(v, &i);
    }
    case MX_ATTR_FLOAT: {
      double d;
      return absl::SimpleAtod(v, &d);
    }
    case MX_ATTR_BOOL:
      return v == "0" || v == "1" || v == "true" || v == "false" ||
             v == "True" || v == "False";
    case MX_ATTR_SHAPE:
      try {
        TShape::Parse(v);
        return true;
      } catch (const Error&) {
        return false;
      }
    default:
      return true;
  }
}

const char* TypeName(int type) {
  switch (type) {
    case MX_ATTR_INT:
      return "an integer";
    case MX_ATTR_FLOAT:
      return "a number";
    case MX_ATTR_BOOL:
      return "a boolean";
    case MX_ATTR_SHAPE:
      return "a shape";
    default:
      return "a string";
  }
}

// The C op's definition, copied out of the plugin's structs.
struct COpDef {
  std::string who;  // Plugin label.
  std::string name;
  std::vector<AttrSpec> schema;
  MxParseAttrsFn parse = nullptr;
  MxFreeAttrsFn free_attrs = nullptr;
  MxArityFn num_inputs_fn = nullptr, num_outputs_fn = nullptr;
  MxInferShapeFn infer_shape = nullptr;
  MxInferTypeFn infer_type = nullptr;
  void* user_data = nullptr;

  std::string Label(const NodeAttrs& attrs) const {
    return absl::StrCat(who, ": op ", name,
                        attrs.name.empty() ? "" : " \"" + attrs.name + "\"");
  }

  std::any Parse(const AttrDict& dict_in) const {
    AttrDict dict = dict_in;
    const std::string label = absl::StrCat(who, ": op ", name);
    std::set<std::string> known;
    for (const AttrSpec& s : schema) known.insert(s.key);
    for (const auto& [k, v] : dict) {
      if (k.rfind("__", 0) == 0) continue;
      if (!known.count(k)) {
        throw InvalidArgument(absl::StrCat(
            label, ": unknown attribute \"", k, "\" (known: ",
            known.empty() ? "none" : absl::StrJoin(known, ", "), ")"));
      }
    }
    for (const AttrSpec& s : schema) {
      auto it = dict.find(s.key);
      if (it == dict.end()) {
        if (s.required) {
          throw InvalidArgument(
              absl::StrCat(label, ": attribute \"", s.key, "\" is required"));
        }
        dict[s.key] = s.default_value;
      } else if (!ValueHasType(it->second, s.type)) {
        throw InvalidArgument(absl::StrCat(label, ": attribute \"", s.key,
                                           "\" = \"", it->second, "\" is not ",
                                           TypeName(s.type)));
      }
    }
    auto parsed = std::make_shared<CParsedAttrs>(std::move(dict));
    if (parse != nullptr) {
      MxStatus status = EmptyStatus();
      void* out = nullptr;
      ThrowIfFailed(parse(user_data, parsed->strings.get(), &out, &status),
                    status, label);
      parsed->parsed = out;
      parsed->has_parser = true;
      parsed->free_fn = free_attrs;
      parsed->user_data = user_data;
    }
    return std::any(CParsedPtr(std::move(parsed)));
  }

  int Arity(MxArityFn fn, const NodeAttrs& attrs, const char* what) const {
    int32_t n = -1;
    MxStatus status = EmptyStatus();
    ThrowIfFailed(fn(user_data, ParsedOf(attrs), &n, &status), status,
                  Label(attrs));
    if (n < 0 || n > kMaxOpArity) {
      throw InvalidArgument(absl::StrCat(Label(attrs), ": ", what, " is ", n,
                                         " (allowed: 0 to ", kMaxOpArity, ")"));
    }
    return n;
  }

  // The inputs `fn` says the node writes, checked against its arity.
  std::vector<int> MutateInputs(decltype(MxOpDef::mutate_inputs) fn,
                                const NodeAttrs& attrs) const {
    std::vector<int32_t> indices(4);
    for (int attempt = 0; attempt < 2; ++attempt) {
      int32_t count = -1;
      MxStatus status = EmptyStatus();
      ThrowIfFailed(fn(user_data, ParsedOf(attrs), indices.data(),
                       static_cast<int32_t>(indices.size()), &count, &status),
                    status, Label(attrs) + ": mutate_inputs");
      if (count < 0 || count > kMaxOpArity) {
        throw InvalidArgument(
            absl::StrCat(Label(attrs), ": mutate_inputs: ", count, " inputs"));
      }
      if (static_cast<size_t>(count) > indices.size()) {
        indices.resize(count);  // Ask again with room for all.
        continue;
      }
      const int n_in = attrs.op->NumInputs(attrs);
      std::vector<int> out;
      for (int i = 0; i < count; ++i) {
        if (indices[i] < 0 || indices[i] >= n_in) {
          throw InvalidArgument(
              absl::StrCat(Label(attrs), ": mutate_inputs: input ", indices[i],
                           " of an op with ", n_in, " inputs"));
        }
        out.push_back(indices[i]);
      }
      return out;
    }
    throw InvalidArgument(Label(attrs) +
                          ": mutate_inputs changed its answer between calls");
  }

  void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) const {
    // Fixed-size slots: the plugin writes at most MX_MAX_NDIM dims each.
    auto pack = [](const std::vector<TShape>& shapes,
                   std::vector<int32_t>* ndims,
                   std::vector<std::vector<int64_t>>* dims,
                   std::vector<int64_t*>* ptrs) {
      for (const TShape& s : shapes) {
        ndims->push_back(s.ndim() > MX_MAX_NDIM ? -1 : s.ndim());
        std::vector<int64_t> d(MX_MAX_NDIM, -1);
        if (s.ndim() > 0 && s.ndim() <= MX_MAX_NDIM) {
          std::copy(s.begin(), s.end(), d.begin());
        }
        dims->push_back(std::move(d));
      }
      for (auto& d : *dims) ptrs->push_back(d.data());
    };
    std::vector<int32_t> in_nd, out_nd;
    std::vector<std::vector<int64_t>> in_d, out_d;
    std::vector<int64_t*> in_p, out_p;
    pack(*in, &in_nd, &in_d, &in_p);
    pack(*out, &out_nd, &out_d, &out_p);
    MxStatus status = EmptyStatus();
    ThrowIfFailed(infer_shape(user_data, ParsedOf(attrs),
                              static_cast<int32_t>(in->size()), in_nd.data(),
                              in_p.data(), static_cast<int32_t>(out->size()),
                              out_nd.data(), out_p.data(), &status),
                  status, Label(attrs));
    auto unpack = [&](const std::vector<int32_t>& nd,
                      const std::vector<std::vector<int64_t>>& d,
                      std::vector<TShape>* shapes, bool is_output) {
      for (size_t i = 0; i < shapes->size(); ++i) {
        if (nd[i] == -1) continue;
        if (nd[i] < -1 || nd[i] > MX_MAX_NDIM) {
          throw InvalidArgument(absl::StrCat(Label(attrs),
                                             ": shape inference "
                                             "returned rank ",
                                             nd[i]));
        }
        AssignShape(attrs, shapes, static_cast<int>(i),
                    TShape(d[i].begin(), d[i].begin() + nd[i]), is_output);
      }
    };
    unpack(in_nd, in_d, in, false);
    unpack(out_nd, out_d, out, true);
  }

  void InferType(const NodeAttrs& attrs, std::vector<DType>* in,
                 std::vector<DType>* out) const {
    if (infer_type == nullptr) return SameType(attrs, in, out);
    std::vector<int32_t> ci, co;
    for (DType t : *in) ci.push_back(static_cast<int32_t>(t));
    for (DType t : *out) co.push_back(static_cast<int32_t>(t));
    MxStatus status = EmptyStatus();
    ThrowIfFailed(
        infer_type(user_data, ParsedOf(attrs), static_cast<int32_t>(ci.size()),
                   ci.data(), static_cast<int32_t>(co.size()), co.data(),
                   &status),
        status, Label(attrs));
    auto unpack = [&](const std::vector<int32_t>& c, std::vector<DType>* t,
                      bool is_output) {
      for (size_t i = 0; i < t->size(); ++i) {
        if (c[i] == MX_DTYPE_UNKNOWN) continue;
        if (c[i] < MX_DTYPE_FLOAT32 || c[i] > MX_DTYPE_BOOL) {
          throw DTypeError(absl::StrCat(Label(attrs),
                                        ": type inference "
                                        "returned dtype code ",
                                        c[i]));
        }
        AssignType(attrs, t, static_cast<int>(i), static_cast<DType>(c[i]),
                   is_output);
      }
    };
    unpack(ci, in, false);
    unpack(co, out, true);
  }
};

// Per-node state of a stateful C kernel.
class CState : public OpState {
 public:
  CState(void* state, MxDestroyStateFn destroy, void* user_data)
      : state_(state), destroy_(destroy), user_data_(user_data) {}
  ~CState() override {
    if (destroy_ != nullptr) destroy_(user_data_, state_);
  }
  void* get() const { return state_; }

 private:
  void* state_;
  MxDestroyStateFn destroy_;
  void* user_data_;
};

}  // namespace

// What a plugin callback gets as `attrs` for a node of a C op.
const void* ParsedOf(const NodeAttrs& attrs) {
  const CParsedPtr* p = std::any_cast<CParsedPtr>(&attrs.parsed);
  return p != nullptr && *p != nullptr ? (*p)->ForPlugin() : nullptr;
}

void AddCOp(const MxOpDef& def, const std::string& who, UndoList* undo) {
  CheckStructSize(def.struct_size, MX_STRUCT_SIZE_UPTO(MxOpDef, user_data),
                  "MxOpDef", who);
  auto c = std::make_shared<COpDef>();
  c->who = who;
  c->name = CopyString(def.name);
  const std::string label = absl::StrCat(who, ": op \"", c->name, "\"");
  if (c->name.empty()) throw InvalidArgument(who + ": an op without a name");
  if (def.infer_shape == nullptr) {
    throw InvalidArgument(label + ": infer_shape is required");
  }
  if ((def.num_inputs < 0 && def.num_inputs_fn == nullptr) ||
      (def.num_outputs < 0 && def.num_outputs_fn == nullptr) ||
      def.num_inputs > kMaxOpArity || def.num_outputs > kMaxOpArity) {
    throw InvalidArgument(label +
                          ": bad arity (a count from 0 to 65536, or "
                          "-1 with a count function)");
  }
  if (def.num_attrs < 0 || (def.num_attrs > 0 && def.attrs == nullptr)) {
    throw InvalidArgument(label + ": bad attribute schema");
  }
  for (int i = 0; i < def.num_attrs; ++i) {
    const MxAttrSpec& s = def.attrs[i];
    CheckStructSize(s.struct_size, MX_STRUCT_SIZE_UPTO(MxAttrSpec, description),
                    "MxAttrSpec", label);
    AttrSpec spec;
    spec.key = CopyString(s.key);
    spec.type = s.type;
    spec.required = s.default_value == nullptr;
    spec.default_value = CopyString(s.default_value);
    c->schema.push_back(std::move(spec));
  }
  c->parse = def.parse_attrs;
  c->free_attrs = def.free_attrs;
  c->num_inputs_fn = def.num_inputs_fn;
  c->num_outputs_fn = def.num_outputs_fn;
  c->infer_shape = def.infer_shape;
  c->infer_type = def.infer_type;
  c->user_data = def.user_data;

  Op& op = OpRegistry::Get()->Register(c->name);  // AlreadyExists.
  const std::string name = c->name;
  undo->push_back([name] { OpRegistry::Get()->Unregister(name); });

  op.SetAttr<bool>(kCOpAttr, true);
  if (MX_HAS_FIELD(&def, MxOpDef, description) && def.description != nullptr) {
    op.Describe(def.description);
  } else {
    op.Describe(absl::StrCat("op from ", who));
  }
  if (def.num_inputs >= 0) {
    op.SetNumInputs(def.num_inputs);
  } else {
    op.SetNumInputs([c](const NodeAttrs& a) {
      return c->Arity(c->num_inputs_fn, a, "the number of inputs");
    });
  }
  if (def.num_outputs >= 0) {
    op.SetNumOutputs(def.num_outputs);
  } else {
    op.SetNumOutputs([c](const NodeAttrs& a) {
      return c->Arity(c->num_outputs_fn, a, "the number of outputs");
    });
  }
  if (def.input_names != nullptr && def.num_inputs >= 0) {
    std::vector<std::string> names;
    for (int i = 0; i < def.num_inputs; ++i) {
      names.push_back(CopyString(def.input_names[i]));
    }
    op.SetInputNames(std::move(names));
  }
  if (def.output_names != nullptr && def.num_outputs >= 0) {
    std::vector<std::string> names;
    for (int i = 0; i < def.num_outputs; ++i) {
      names.push_back(CopyString(def.output_names[i]));
    }
    op.SetOutputNames(std::move(names));
  }
  op.SetParamParser(
      [c](const std::string&, const AttrDict& dict) { return c->Parse(dict); });
  if (MX_HAS_FIELD(&def, MxOpDef, mutate_inputs) &&
      def.mutate_inputs != nullptr) {
    op.SetMutateInputs([c, fn = def.mutate_inputs](const NodeAttrs& a) {
      return c->MutateInputs(fn, a);
    });
  }
  op.SetInferShape(
      [c](const NodeAttrs& a, std::vector<TShape>* in,
          std::vector<TShape>* out) { c->InferShape(a, in, out); });
  op.SetInferType([c](const NodeAttrs& a, std::vector<DType>* in,
                      std::vector<DType>* out) { c->InferType(a, in, out); });
  if (def.num_kernels < 0 || (def.num_kernels > 0 && def.kernels == nullptr)) {
    throw InvalidArgument(label + ": bad kernel list");
  }
  for (int i = 0; i < def.num_kernels; ++i) {
    const MxKernelDef& k = def.kernels[i];
    CheckStructSize(k.struct_size, MX_STRUCT_SIZE_UPTO(MxKernelDef, user_data),
                    "MxKernelDef", label);
    if (k.compute == nullptr) throw InvalidArgument(label + ": null compute");
    CheckDevType(k.dev_type, label);
    op.SetCompute(k.dev_type, WrapCompute(k.compute, k.user_data, who, true));
  }
  if (def.stateful_compute != nullptr || def.create_state != nullptr) {
    if (def.stateful_compute == nullptr || def.create_state == nullptr) {
      throw InvalidArgument(label +
                            ": a stateful kernel needs create_state "
                            "and stateful_compute");
    }
    CheckDevType(def.stateful_dev_type, label);
    const MxCreateStateFn create = def.create_state;
    const MxDestroyStateFn destroy = def.destroy_state;
    const MxStatefulComputeFn compute = def.stateful_compute;
    void* user_data = def.user_data;
    op.SetStateful([c, create, destroy, user_data](
                       const NodeAttrs& attrs, Context ctx,
                       const std::vector<TShape>& shapes,
                       const std::vector<DType>& types) -> OpStatePtr {
      std::vector<int32_t> nd, ty;
      std::vector<const int64_t*> dims;
      for (const TShape& s : shapes) {
        nd.push_back(s.ndim());
        dims.push_back(s.begin());
      }
      for (DType t : types) ty.push_back(static_cast<int32_t>(t));
      void* state = nullptr;
      MxStatus status = EmptyStatus();
      ThrowIfFailed(create(user_data, ParsedOf(attrs), ctx.dev_type, ctx.dev_id,
                           static_cast<int32_t>(shapes.size()), nd.data(),
                           dims.data(), ty.data(), &state, &status),
                    status, c->Label(attrs) + ": create_state");
      return std::make_shared<CState>(state, destroy, user_data);
    });
    op.SetStatefulCompute(
        def.stateful_dev_type,
        [c, compute, user_data](const OpStatePtr& state, const OpContext& ctx,
                                const std::vector<TBlob>& in,
                                const std::vector<OpReqType>& req,
                                const std::vector<TBlob>& out) {
          const CTensors cin(in), cout(out);
          const auto creq = CRequests(req);
          const CKernelContext cctx(ctx, in);
          MxStatus status = EmptyStatus();
          const MxStatusCode code =
              compute(user_data, static_cast<const CState*>(state.get())->get(),
                      cctx.get(), cin.data(), cin.size(), creq.data(),
                      cout.data(), cout.size(), &status);
          if (code != MX_STATUS_OK) {  // No label on the hot path.
            ThrowIfFailed(code, status, absl::StrCat(c->who, ": op ", c->name));
          }
        });
  }
  if (def.num_inplace_pairs < 0 ||
      (def.num_inplace_pairs > 0 && def.inplace_pairs == nullptr)) {
    throw InvalidArgument(label + ": bad in-place pairs");
  }
  if (def.num_inplace_pairs > 0) {
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < def.num_inplace_pairs; ++i) {
      pairs.emplace_back(def.inplace_pairs[2 * i],
                         def.inplace_pairs[2 * i + 1]);
    }
    op.SetInplaceOption([pairs](const NodeAttrs&) { return pairs; });
  }
  if (def.resources != 0) {
    std::vector<ResourceRequest> res;
    if (def.resources & MX_RESOURCE_TEMP_SPACE) {
      res.push_back({ResourceRequest::kTempSpace});
    }
    if (def.resources & MX_RESOURCE_RANDOM) {
      res.push_back({ResourceRequest::kRandom});
    }
    op.SetResourceRequest([res](const NodeAttrs&) { return res; });
  }
  if (def.gradient_op != nullptr) {
    const std::string backward = def.gradient_op;
    const int uses = def.gradient_inputs;
    op.SetAttr<FGradient>("FGradient", [backward, uses](
                                           const NodePtr& n,
                                           const std::vector<NodeEntry>& og) {
      const Op* bop = OpRegistry::Get()->Find(backward);
      if (bop == nullptr) {
        throw NotFound(absl::StrCat("gradient of op ", n->op()->name(),
                                    ": its backward op \"", backward,
                                    "\" is not registered"));
      }
      NodePtr b = Node::Create(*bop, n->attrs.dict, n->name() + "_backward");
      b->inputs = og;
      if (uses & MX_GRAD_USES_INPUTS) {
        b->inputs.insert(b->inputs.end(), n->inputs.begin(), n->inputs.end());
      }
      if (uses & MX_GRAD_USES_OUTPUTS) {
        for (size_t i = 0; i < og.size(); ++i) {
          b->inputs.push_back(NodeEntry{n, static_cast<uint32_t>(i), 0});
        }
      }
      std::vector<NodeEntry> grads;
      for (size_t i = 0; i < n->inputs.size(); ++i) {
        grads.push_back(NodeEntry{b, static_cast<uint32_t>(i), 0});
      }
      return grads;
    });
  }
}

}  // namespace plugin
}  // namespace mx
