// Optimizer update ops: sgd_update, sgd_mom_update, adam_update, and
// _multi_sgd_mom_update (many parameters in one op).
//
// Each returns the new weight as its output; the front end passes `weight`
// itself as the output, which the in-place option (input 0, output 0)
// allows without a temporary. Optimizer states (momentum, Adam's mean and
// var) are inputs the op mutates. The gradient is first rescaled and, when
// clip_gradient >= 0, clipped to [-clip_gradient, clip_gradient] (MXNet's
// kernels test >= 0, so 0 clips every gradient to 0; its docs say <= 0 is
// off, but Gluon passes clip_gradient only when set). float32,
// float64 and float16 (arithmetic in float) are supported; every input must
// have the weight's shape and dtype.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// Fields shared by all update ops. `lazy_update` only matters for sparse
// gradients, which mxcore does not have; it is accepted for symbol files
// and MXNet-style callers and has no effect on dense arrays.
template <typename P>
void DeclareCommon(ParamSchema<P>* s) {
  s->Field("lr", &P::lr).Required().Describe("learning rate");
  s->Field("wd", &P::wd).Describe("weight decay");
  s->Field("rescale_grad", &P::rescale_grad).Describe("gradient scale");
  s->Field("clip_gradient", &P::clip_gradient)
      .Describe(
          "clip the rescaled gradient to [-c, c] when c >= 0 (MXNet's "
          "kernels); negative: no clipping");
  s->Field("lazy_update", &P::lazy_update)
      .Describe("sparse-only; no effect on dense arrays");
}

struct SGDParam {
  double lr = 0;
  double wd = 0;
  double rescale_grad = 1;
  double clip_gradient = -1;
  bool lazy_update = true;
  static void Declare(ParamSchema<SGDParam>* s) { DeclareCommon(s); }
};

struct SGDMomParam {
  double lr = 0;
  double momentum = 0;
  double wd = 0;
  double rescale_grad = 1;
  double clip_gradient = -1;
  bool lazy_update = true;
  static void Declare(ParamSchema<SGDMomParam>* s) {
    DeclareCommon(s);
    s->Field("momentum", &SGDMomParam::momentum).Describe("momentum factor");
  }
};

struct AdamParam {
  double lr = 0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double wd = 0;
  double rescale_grad = 1;
  double clip_gradient = -1;
  bool lazy_update = true;
  static void Declare(ParamSchema<AdamParam>* s) {
    DeclareCommon(s);
    s->Field("beta1", &AdamParam::beta1).Describe("decay of the mean");
    s->Field("beta2", &AdamParam::beta2).Describe("decay of the variance");
    s->Field("epsilon", &AdamParam::epsilon).Describe("added to sqrt(var)");
  }
};

// Rescaled, optionally clipped gradient.
template <typename A>
struct GradPrep {
  A rescale, clip;
  bool clipping;
  template <typename P>
  explicit GradPrep(const P& p)
      : rescale(static_cast<A>(p.rescale_grad)),
        clip(static_cast<A>(p.clip_gradient)),
        clipping(p.clip_gradient >= 0) {}
};

// Runs the update loop body(bound, b, e) over [0, n) on the kernel
// threads, with bound(x) x clipped when asked (else x itself); the body
// rescales the gradient and passes what MXNet clips. The clipping choice
// and the write request are decided outside the element loop so it
// vectorizes.
template <typename A, typename Body>
void UpdateLoop(int64_t n, const GradPrep<A>& prep, Body body) {
  const A clip = prep.clip;
  if (prep.clipping) {
    ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
      body([=](A x) { return std::min(std::max(x, -clip), clip); }, b, e);
    });
  } else {
    ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
      body([=](A x) { return x; }, b, e);
    });
  }
}

void UpdateType(const NodeAttrs& attrs, std::vector<DType>* in,
                std::vector<DType>* out) {
  SameType(attrs, in, out);
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
}

// Registers an update op with `n_in` inputs, the last `mutated` of which
// are states it writes.
template <typename P>
Op& RegisterUpdate(const std::string& name, std::vector<std::string> inputs,
                   std::vector<int> mutated, FCompute compute,
                   const std::string& doc) {
  const int n = static_cast<int>(inputs.size());
  return OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(n)
      .SetInputNames(std::move(inputs))
      .SetParams<P>()
      .SetInferShape(SameShape)
      .SetInferType(UpdateType)
      .SetMutateInputs([mutated](const NodeAttrs&) { return mutated; })
      .SetInplaceOption([](const NodeAttrs&) {
        return std::vector<std::pair<int, int>>{{0, 0}};
      })
      .SetCompute(Context::kCPU, std::move(compute));
}

void SGDCompute(const OpContext&, const NodeAttrs& attrs,
                const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& out) {
  const SGDParam& p = attrs.get<SGDParam>();
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* w = in[0].data<T>();
    const T* g = in[1].data<T>();
    T* y = out[0].data<T>();
    const GradPrep<A> prep(p);
    const A lr = static_cast<A>(p.lr), wd = static_cast<A>(p.wd);
    const OpReqType r = req[0];
    const A rescale = prep.rescale;
    UpdateLoop(in[0].Size(), prep, [&](auto bound, int64_t b, int64_t e) {
      AssignRange(y, r, b, e, [=](int64_t i) {
        const A wi = static_cast<A>(w[i]);
        return wi - lr * (bound(static_cast<A>(g[i]) * rescale) + wd * wi);
      });
    });
  });
}

// One momentum step of (weight, grad, mom) into `y`.
void SGDMomOne(const SGDMomParam& p, const TBlob& weight, const TBlob& grad,
               const TBlob& momentum_state, OpReqType r, const TBlob& out) {
  MX_FLOAT_DTYPE_SWITCH(weight.dtype, T, {
    using A = AccType<T>;
    const T* w = weight.data<T>();
    const T* g = grad.data<T>();
    T* mom = momentum_state.data<T>();
    T* y = out.data<T>();
    const GradPrep<A> prep(p);
    const A lr = static_cast<A>(p.lr), wd = static_cast<A>(p.wd),
            momentum = static_cast<A>(p.momentum);
    const A rescale = prep.rescale;
    UpdateLoop(weight.Size(), prep, [&](auto bound, int64_t b, int64_t e) {
      AssignRange(y, r, b, e, [=](int64_t i) {
        const A wi = static_cast<A>(w[i]);
        const A m = momentum * static_cast<A>(mom[i]) -
                    lr * (bound(static_cast<A>(g[i]) * rescale) + wd * wi);
        mom[i] = static_cast<T>(m);
        return wi + m;
      });
    });
  });
}

void SGDMomCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  SGDMomOne(attrs.get<SGDMomParam>(), in[0], in[1], in[2], req[0], out[0]);
}

// ---- _multi_sgd_mom_update: one op for many parameters. ----

struct MultiSGDMomParam {
  double lr = 0;
  double momentum = 0;
  double wd = 0;
  double rescale_grad = 1;
  double clip_gradient = -1;
  bool lazy_update = true;
  int num_weights = 0;
  SGDMomParam One() const {
    SGDMomParam p;
    p.lr = lr;
    p.momentum = momentum;
    p.wd = wd;
    p.rescale_grad = rescale_grad;
    p.clip_gradient = clip_gradient;
    return p;
  }
  static void Declare(ParamSchema<MultiSGDMomParam>* s) {
    DeclareCommon(s);
    s->Field("momentum", &MultiSGDMomParam::momentum)
        .Describe("momentum factor");
    s->Field("num_weights", &MultiSGDMomParam::num_weights)
        .Required()
        .AtMost(kMaxOpArity / 3)
        .Describe("parameters updated; inputs are (weight, grad, mom) each");
  }
};

int NumWeights(const NodeAttrs& attrs) {
  return std::max(0, attrs.get<MultiSGDMomParam>().num_weights);
}

// Each (weight, grad, mom, output) group shares one shape.
void MultiSGDMomShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
  if (NumWeights(attrs) < 1) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": num_weights must be at least 1"));
  }
  for (int k = 0; k < NumWeights(attrs); ++k) {
    std::vector<TShape> group_in((*in).begin() + 3 * k,
                                 (*in).begin() + 3 * k + 3);
    std::vector<TShape> group_out{(*out)[k]};
    SameShape(attrs, &group_in, &group_out);
    std::copy(group_in.begin(), group_in.end(), (*in).begin() + 3 * k);
    (*out)[k] = group_out[0];
  }
}

void MultiSGDMomType(const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
  for (int k = 0; k < NumWeights(attrs); ++k) {
    std::vector<DType> group_in((*in).begin() + 3 * k,
                                (*in).begin() + 3 * k + 3);
    std::vector<DType> group_out{(*out)[k]};
    UpdateType(attrs, &group_in, &group_out);
    std::copy(group_in.begin(), group_in.end(), (*in).begin() + 3 * k);
    (*out)[k] = group_out[0];
  }
}

void MultiSGDMomCompute(const OpContext&, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  const SGDMomParam p = attrs.get<MultiSGDMomParam>().One();
  for (int k = 0; k < NumWeights(attrs); ++k) {
    SGDMomOne(p, in[3 * k], in[3 * k + 1], in[3 * k + 2], req[k], out[k]);
  }
}

void AdamCompute(const OpContext&, const NodeAttrs& attrs,
                 const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  const AdamParam& p = attrs.get<AdamParam>();
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* w = in[0].data<T>();
    const T* g = in[1].data<T>();
    T* mean = in[2].data<T>();
    T* var = in[3].data<T>();
    T* y = out[0].data<T>();
    const GradPrep<A> prep(p);
    const A lr = static_cast<A>(p.lr), wd = static_cast<A>(p.wd),
            b1 = static_cast<A>(p.beta1), b2 = static_cast<A>(p.beta2),
            eps = static_cast<A>(p.epsilon);
    const OpReqType r = req[0];
    // As MXNet's AdamUpdateKernel: weight decay joins the rescaled gradient
    // before clipping (SGD adds it after).
    const A rescale = prep.rescale;
    UpdateLoop(in[0].Size(), prep, [&](auto bound, int64_t b, int64_t e) {
      AssignRange(y, r, b, e, [=](int64_t i) {
        const A wi = static_cast<A>(w[i]);
        const A gi = bound(static_cast<A>(g[i]) * rescale + wd * wi);
        const A m = b1 * static_cast<A>(mean[i]) + (A(1) - b1) * gi;
        const A v = b2 * static_cast<A>(var[i]) + (A(1) - b2) * gi * gi;
        mean[i] = static_cast<T>(m);
        var[i] = static_cast<T>(v);
        return wi - lr * m / (std::sqrt(v) + eps);
      });
    });
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterUpdate<SGDParam>(
      "sgd_update", {"weight", "grad"}, {}, SGDCompute,
      "SGD step: weight - lr * (clip(rescale_grad * grad) + wd * weight).");
  RegisterUpdate<SGDMomParam>(
      "sgd_mom_update", {"weight", "grad", "mom"}, {2}, SGDMomCompute,
      "SGD with momentum: mom = momentum * mom - lr * (g + wd * weight); "
      "weight + mom. Updates mom in place.");
  OpRegistry::Get()
      ->Register("_multi_sgd_mom_update")
      .Describe(
          "sgd_mom_update of num_weights parameters in one op (as MXNet's "
          "multi_sgd_mom_update, with one lr and wd): inputs (weight, grad, "
          "mom) per parameter, outputs the new weights; moms are updated in "
          "place. Lets a device backend update every parameter in one "
          "launch.")
      .SetNumInputs([](const NodeAttrs& a) { return 3 * NumWeights(a); })
      .SetInputNames([](const NodeAttrs& a) {
        std::vector<std::string> names;
        for (int k = 0; k < NumWeights(a); ++k) {
          for (const char* what : {"weight", "grad", "mom"}) {
            names.push_back(absl::StrCat(what, k));
          }
        }
        return names;
      })
      .SetNumOutputs(NumWeights)
      .SetParams<MultiSGDMomParam>()
      .SetInferShape(MultiSGDMomShape)
      .SetInferType(MultiSGDMomType)
      .SetMutateInputs([](const NodeAttrs& a) {
        std::vector<int> moms;
        for (int k = 0; k < NumWeights(a); ++k) moms.push_back(3 * k + 2);
        return moms;
      })
      .SetInplaceOption([](const NodeAttrs& a) {
        std::vector<std::pair<int, int>> pairs;
        for (int k = 0; k < NumWeights(a); ++k) pairs.push_back({3 * k, k});
        return pairs;
      })
      .SetCompute(Context::kCPU, MultiSGDMomCompute);
  RegisterUpdate<AdamParam>(
      "adam_update", {"weight", "grad", "mean", "var"}, {2, 3}, AdamCompute,
      "Adam step without bias correction: g = clip(rescale_grad * grad + "
      "wd * weight) (MXNet's order); mean and var are updated in place; "
      "weight - lr * mean / (sqrt(var) + epsilon).");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
