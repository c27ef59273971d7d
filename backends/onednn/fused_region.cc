#include "backends/onednn/fused_region.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/fused_conv_primitive.h"
#include "backends/onednn/weight_cache.h"

namespace mx_onednn {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensors;

namespace {

constexpr char kOp[] = "_sg_onednn_region";

// Where a step's input comes from.
struct Ref {
  bool step = false;  // A step's result, else a region input.
  int index = 0;
};

struct Step {
  std::string label;  // "_sg_onednn_region step 2 (name)", for errors.
  std::vector<Ref> inputs;
  std::optional<PoolStep> pool;  // A pooling, else a fused convolution:
  ConvFusion f;
  int data = 0, sum = -1;  // Which inputs are the data and the residual.
};

struct Region {
  int num_inputs = 0, num_outputs = 0;
  std::vector<Step> steps;
  std::vector<int> outputs;
};

[[noreturn]] void Invalid(const std::string& why) {
  throw Error(MX_STATUS_INVALID_ARGUMENT, std::string(kOp) + ": " + why);
}

// Parses a string-valued JSON object as a node's attributes into `step`.
void ParseStepAttrs(const nlohmann::json& attrs, bool pool, Step* step) {
  const std::string& label = step->label;
  if (!attrs.is_object()) Invalid(label + ": \"attrs\" is not an object");
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& [k, v] : attrs.items()) {
    if (!v.is_string()) Invalid(label + ": attribute " + k + " not a string");
    items.emplace_back(k, v.get<std::string>());
  }
  const mxplugin::OwnedAttrs owned(std::move(items), label);
  if (pool) {
    step->pool = ParsePoolStep(owned.view());
    if (!step->pool) Invalid(label + ": a pooling a region cannot run");
    return;
  }
  step->f = ParseConvFusion(owned.view(), label.c_str());
  step->data = step->f.data;
  step->sum = step->f.sum;
}

Ref ParseRef(const nlohmann::json& j, int num_inputs, int step,
             const std::string& label) {
  const std::string text = j.is_string() ? j.get<std::string>() : "";
  Ref r;
  r.step = !text.empty() && text[0] == 's';
  const int limit = r.step ? step : num_inputs;
  if (text.size() < 2 || (text[0] != 'i' && text[0] != 's') ||
      text.size() > 10 ||
      text.find_first_not_of("0123456789", 1) != std::string::npos ||
      (r.index = std::stoi(text.substr(1))) >= limit) {
    // Only a short string is quoted back: the value is untrusted.
    Invalid(label + ": input " +
            (j.is_string() && text.size() <= 12 ? "\"" + text + "\""
                                                : std::string("(not a ref)")) +
            " is neither a region input \"iK\" below " +
            std::to_string(num_inputs) + " nor an earlier step \"sK\"");
  }
  return r;
}

std::shared_ptr<void> ParseRegion(const Attrs& a);

// nlohmann's type errors (a field of another type) as typed errors.
std::shared_ptr<void> Parse(const Attrs& a) {
  try {
    return ParseRegion(a);
  } catch (const nlohmann::json::exception& e) {
    Invalid(std::string("attribute steps: ") + e.what());
  }
}

std::shared_ptr<void> ParseRegion(const Attrs& a) {
  auto region = std::make_shared<Region>();
  region->num_inputs = static_cast<int>(a.GetInt("num_inputs", 0));
  region->num_outputs = static_cast<int>(a.GetInt("num_outputs", 0));
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(a.Get("steps", ""));
  } catch (const nlohmann::json::exception& e) {
    Invalid(std::string("attribute steps is not JSON: ") + e.what());
  }
  if (!spec.is_object() || !spec.contains("steps") ||
      !spec["steps"].is_array() || spec["steps"].empty() ||
      !spec.contains("outputs") || !spec["outputs"].is_array()) {
    Invalid("attribute steps needs {\"steps\": [...], \"outputs\": [...]}");
  }
  const nlohmann::json& steps = spec["steps"];
  for (size_t s = 0; s < steps.size(); ++s) {
    const nlohmann::json& js = steps[s];
    Step step;
    step.label = std::string(kOp) + " step " + std::to_string(s);
    if (!js.is_object() || !js.contains("inputs") || !js["inputs"].is_array() ||
        !js.contains("attrs")) {
      Invalid(step.label + ": needs \"inputs\" and \"attrs\"");
    }
    if (js.contains("name") && js["name"].is_string()) {
      step.label += " (" + js["name"].get<std::string>() + ")";
    }
    if (js.contains("op") && !js["op"].is_string()) {
      Invalid(step.label + ": \"op\" is not a string");
    }
    const std::string op = js.value("op", "_sg_onednn_conv");
    if (op != "_sg_onednn_conv" && op != "Pooling") {
      Invalid(step.label + ": op \"" + op + "\" is not a region step");
    }
    ParseStepAttrs(js["attrs"], op == "Pooling", &step);
    if ((step.pool ? 1 : static_cast<size_t>(step.f.num_inputs)) !=
        js["inputs"].size()) {
      Invalid(step.label + ": num_inputs differs from its inputs");
    }
    for (const nlohmann::json& j : js["inputs"]) {
      step.inputs.push_back(
          ParseRef(j, region->num_inputs, static_cast<int>(s), step.label));
    }
    // Weights are prepared from region inputs (their versions say when to
    // prepare again), so a step's result may only be data or a residual;
    // a role listed twice must not make one of them a weight either.
    std::vector<int> weights;
    if (!step.pool) weights = ConvWeightInputs(step.f);
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int role = static_cast<int>(i);
      const bool weight =
          std::find(weights.begin(), weights.end(), role) != weights.end();
      if (step.inputs[i].step &&
          (weight || (role != step.data && role != step.sum))) {
        Invalid(step.label + ": input " + std::to_string(i) +
                " comes from a step but is not the data or the residual "
                "only");
      }
    }
    region->steps.push_back(std::move(step));
  }
  for (const nlohmann::json& o : spec["outputs"]) {
    if (!o.is_number_integer() || o.get<int64_t>() < 0 ||
        o.get<int64_t>() >= static_cast<int64_t>(region->steps.size())) {
      Invalid("an output is not the index of a step");
    }
    region->outputs.push_back(o.get<int>());
  }
  if (region->num_outputs < 1 ||
      region->outputs.size() != static_cast<size_t>(region->num_outputs)) {
    Invalid("num_outputs differs from the outputs listed in steps");
  }
  return region;
}

mxplugin::Shape PoolShape(const PoolStep& p, const mxplugin::Shape& data,
                          const std::string& label) {
  const size_t rank = p.global ? data.size() - 2 : p.kernel.size();
  if (data.size() < 3 || data.size() > 5 || data.size() != rank + 2) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                label + ": data of rank " + std::to_string(data.size()) +
                    " for a " + std::to_string(rank) + "-D pooling");
  }
  mxplugin::Shape out = {data[0], data[1]};
  for (size_t i = 0; i < rank; ++i) {
    if (p.global) {
      out.push_back(1);
      continue;
    }
    if (data[2 + i] < 0) {  // Unknown yet.
      out.push_back(-1);
      continue;
    }
    const int64_t padded = data[2 + i] + 2 * p.pad[i];
    if (padded < p.kernel[i]) {
      throw Error(MX_STATUS_SHAPE_ERROR,
                  label + ": the window does not fit the data");
    }
    out.push_back((padded - p.kernel[i]) / p.stride[i] + 1);
  }
  return out;
}

// Each step's result shape (nullopt where unknown), filling the region
// inputs' shapes the steps infer (weights, statistics).
std::vector<std::optional<mxplugin::Shape>> StepShapes(
    const Region& r, mxplugin::ShapeSlots& in) {
  std::vector<std::optional<mxplugin::Shape>> results(r.steps.size());
  for (size_t s = 0; s < r.steps.size(); ++s) {
    const Step& step = r.steps[s];
    mxplugin::ShapeSlots step_in(step.inputs.size()), step_out(1);
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const Ref& ref = step.inputs[i];
      step_in[i] = ref.step ? results[ref.index] : in[ref.index];
    }
    if (step.pool) {
      if (step_in[0])
        step_out[0] = PoolShape(*step.pool, *step_in[0], step.label);
    } else {
      InferConvFusionShapes(step.f, step.label.c_str(), step_in, step_out);
    }
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const Ref& ref = step.inputs[i];
      if (!ref.step) in[ref.index] = step_in[i];
    }
    results[s] = step_out[0];
  }
  return results;
}

void InferShape(const Attrs& a, mxplugin::ShapeSlots& in,
                mxplugin::ShapeSlots& out) {
  const auto& r = a.parsed<Region>();
  const auto results = StepShapes(r, in);
  for (size_t o = 0; o < r.outputs.size(); ++o) out[o] = results[r.outputs[o]];
}

// What a step runs with, for the shapes of the first call.
struct StepPlan {
  std::optional<FusedConvPrimitive> conv;  // Else `pool`:
  dnnl::pooling_forward pool;
  dnnl::memory::desc src, dst, pool_scratchpad;
  std::vector<int> weight_inputs;  // Region input indices.
  std::vector<bool> own_writes;
  WeightCache cache;
  Relayout data, residual;  // From where each comes to the step's layout.
  int buffer = -1;          // Where the result goes between steps.
  int last_reader = -1;     // The last step reading the result.
  std::vector<std::pair<int, Relayout>> outputs;  // To plain region outputs.
};

struct State {
  Region r;
  std::mutex mu;
  std::vector<std::vector<int64_t>> built_for;  // Input shapes planned for.
  std::vector<StepPlan> plans;
  std::vector<AlignedBuffer> buffers;  // Step results between steps.
  int team = 1;  // The OpenMP team size the plans' primitives were made for.
};

Dims ToDims(const std::optional<mxplugin::Shape>& s) {
  return Dims(s->begin(), s->end());
}

// oneDNN's pooling reading `src` (a layout the producer chose) and writing
// the layout it prefers.
void PlanPool(const PoolStep& pool, const dnnl::memory::desc& src,
              const Dims& dst, StepPlan* p) {
  const Dims in = src.dims();
  Dims kernel, strides, pad;
  for (size_t i = 2; i < in.size(); ++i) {
    kernel.push_back(pool.global ? in[i] : pool.kernel[i - 2]);
    strides.push_back(pool.global ? 1 : pool.stride[i - 2]);
    pad.push_back(pool.global ? 0 : pool.pad[i - 2]);
  }
  dnnl::pooling_forward::primitive_desc pd(
      dnnl::pooling_forward::desc(
          dnnl::prop_kind::forward_inference, pool.algorithm, src,
          dnnl::memory::desc(dst, dnnl::memory::data_type::f32,
                             dnnl::memory::format_tag::any),
          strides, kernel, pad, pad),
      UserScratchpadAttr(), Engine());
  p->src = src;
  p->dst = pd.dst_desc();
  p->pool_scratchpad = pd.scratchpad_desc();
  p->pool = dnnl::pooling_forward(pd);
}

// Primitives, relayouts and buffers for the inputs' shapes. A buffer is
// reused by a later step once every reader of its result has run.
void Plan(State* s, Tensors in) {
  const Region& r = s->r;
  mxplugin::ShapeSlots shapes(in.size());
  std::vector<std::vector<int64_t>> built_for;
  for (int i = 0; i < in.size(); ++i) {
    shapes[i] = in[i].shape();
    built_for.push_back(in[i].shape());
  }
  s->built_for.clear();
  const auto results = StepShapes(r, shapes);
  s->plans = std::vector<StepPlan>(r.steps.size());
  s->buffers.clear();
  std::vector<int> free_after;  // Per buffer: the step that last reads it.
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const Step& step = r.steps[k];
    StepPlan& p = s->plans[k];
    for (const Ref& ref : step.inputs) {
      if (ref.step) s->plans[ref.index].last_reader = static_cast<int>(k);
    }
    auto layout_of = [&](const Ref& ref) {
      return ref.step ? s->plans[ref.index].dst
                      : PlainDesc(ToDims(shapes[ref.index]));
    };
    const Ref& data = step.inputs[step.data];
    if (step.pool) {
      PlanPool(*step.pool, layout_of(data), ToDims(results[k]), &p);
    } else {
      p.conv.emplace(step.f, layout_of(data).dims(), ToDims(results[k]));
      p.src = p.conv->src_desc();
      p.dst = p.conv->dst_desc();
      for (int role : ConvWeightInputs(step.f)) {
        p.weight_inputs.push_back(step.inputs[role].index);
      }
      p.own_writes = ConvOwnWrites(step.f);
    }
    p.data = Relayout(layout_of(data), p.src);
    if (step.sum >= 0)
      p.residual = Relayout(layout_of(step.inputs[step.sum]), p.dst);
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      if (r.outputs[o] != static_cast<int>(k)) continue;
      p.outputs.emplace_back(static_cast<int>(o),
                             Relayout(p.dst, PlainDesc(ToDims(results[k]))));
    }
  }
  // Buffers by liveness, smallest free one that fits first.
  for (size_t k = 0; k < r.steps.size(); ++k) {
    StepPlan& p = s->plans[k];
    const size_t bytes = p.dst.get_size();
    int best = -1;
    auto capacity = [&](int b) { return s->buffers[b].capacity(); };
    for (int b = 0; b < static_cast<int>(s->buffers.size()); ++b) {
      if (free_after[b] >= static_cast<int>(k)) continue;
      if (best < 0) {
        best = b;
        continue;
      }
      // The smallest that fits, else the largest (grows the least).
      const bool fits = capacity(b) >= bytes,
                 best_fits = capacity(best) >= bytes;
      if (fits != best_fits ? fits
                            : (fits ? capacity(b) < capacity(best)
                                    : capacity(b) > capacity(best))) {
        best = b;
      }
    }
    if (best < 0) {
      best = static_cast<int>(s->buffers.size());
      s->buffers.emplace_back();
      free_after.push_back(-1);
    }
    s->buffers[best].Reserve(bytes);
    free_after[best] = std::max(p.last_reader, static_cast<int>(k));
    p.buffer = best;
  }
  s->built_for = std::move(built_for);
}

void Compute(void* state, const KernelContext& ctx, Tensors in,
             const int32_t* req, Tensors out) {
  auto* s = static_cast<State*>(state);
  const Region& r = s->r;
  CheckFusedFloat32(kOp, in, out);
  if (ctx.is_train()) {
    throw Error(MX_STATUS_NOT_IMPLEMENTED,
                std::string(kOp) +
                    ": inference only (BatchNorm is folded into the weights); "
                    "training runs the unfused graph");
  }
  std::vector<OutputBuffer> results;
  results.reserve(out.size());
  std::vector<const void*> inputs;
  for (int i = 0; i < in.size(); ++i) inputs.push_back(in[i].data<float>());
  for (int o = 0; o < out.size(); ++o)
    results.emplace_back(out[o], req[o], inputs);
  std::lock_guard<std::mutex> lock(s->mu);
  bool same_shapes = static_cast<int>(s->built_for.size()) == in.size();
  for (int i = 0; same_shapes && i < in.size(); ++i) {
    same_shapes = s->built_for[i] == in[i].shape();
  }
  if (!same_shapes) {
    s->team = UseCallThreads(ctx);
    Plan(s, in);
  }
  UseTeamSize(s->team);
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const Step& step = r.steps[k];
    StepPlan& p = s->plans[k];
    auto source = [&](const Ref& ref) -> const void* {
      return ref.step ? s->buffers[s->plans[ref.index].buffer].data()
                      : in[ref.index].data<float>();
    };
    const dnnl::memory src = p.data.Input(source(step.inputs[step.data]), 0);
    const dnnl::memory result = Wrap(p.dst, s->buffers[p.buffer].data());
    if (step.pool) {
      Execute(p.pool, p.pool_scratchpad,
              {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, result}});
    } else {
      if (!p.cache.Fresh(ctx, p.weight_inputs, p.own_writes)) {
        p.conv->PrepareWeights(
            [&](int i) { return in[step.inputs[i].index].data<float>(); });
      }
      // The "sum" post-op adds to what the destination holds.
      if (step.sum >= 0) {
        p.residual.InputTo(source(step.inputs[step.sum]), result);
      }
      p.conv->Run(src, result);
    }
    for (auto& [o, relayout] : p.outputs) {
      if (results[o].skip()) continue;
      relayout.InputTo(result.get_data_handle(),
                       Wrap(PlainDesc(p.dst.dims()), results[o].data()));
    }
  }
  for (OutputBuffer& result : results) result.Finish();
}

}  // namespace

void RegisterFusedRegion(mxplugin::Plugin& plugin) {
  mxplugin::OpDef op(kOp);
  op.Describe(
        "Fused convolutions (_sg_onednn_conv) feeding one another, run as "
        "one op whose intermediate results stay in the layouts oneDNN "
        "chose; made by the onednn backend's second property. Inference "
        "only; float32.")
      .NumInputs([](const Attrs& a) {
        return static_cast<int>(a.GetInt("num_inputs", 0));
      })
      .NumOutputs([](const Attrs& a) {
        return static_cast<int>(a.GetInt("num_outputs", 1));
      })
      .Attr("num_inputs", MX_ATTR_INT)
      .Attr("num_outputs", MX_ATTR_INT, "1")
      .Attr("steps", MX_ATTR_STRING)
      .Parse(Parse)
      .InferShape(InferShape)
      .MutateInputs([](const Attrs& a) {
        // BatchNorm's moving statistics stay auxiliary states (read only).
        const auto& r = a.parsed<Region>();
        std::vector<int> v;
        for (const Step& step : r.steps) {
          for (int role : {step.f.mean, step.f.var}) {
            if (role < 0) continue;
            const int i = step.inputs[role].index;
            if (std::find(v.begin(), v.end(), i) == v.end()) v.push_back(i);
          }
        }
        return v;
      })
      .Stateful(
          MX_DEVICE_CPU,
          [](const Attrs& a, int, int, const std::vector<mxplugin::Shape>&,
             const std::vector<int>&) {
            auto s = std::make_shared<State>();
            s->r = a.parsed<Region>();
            return std::shared_ptr<void>(s);
          },
          Compute);
  plugin.RegisterOp(std::move(op));
}

}  // namespace mx_onednn
