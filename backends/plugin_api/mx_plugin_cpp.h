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
//
// The parts, each included here: mx_plugin_cpp_kernel.h (what kernels and
// callbacks see), mx_plugin_cpp_op_def.h (new ops), mx_plugin_cpp_subgraph.h
// (subgraph properties), mx_plugin_cpp_device.h (devices).
#ifndef MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_H_
#define MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/plugin_api/mx_plugin.h"
#include "backends/plugin_api/mx_plugin_cpp_device.h"
#include "backends/plugin_api/mx_plugin_cpp_kernel.h"
#include "backends/plugin_api/mx_plugin_cpp_op_def.h"
#include "backends/plugin_api/mx_plugin_cpp_subgraph.h"

namespace mxplugin {

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
