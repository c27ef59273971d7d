// The front end maps each function to a registered op name and attributes.
#include "imperative/nd.h"

#include <functional>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/thread_scratch.h"
#include "graph/params.h"

namespace mx {
namespace nd {

std::vector<NDArray> CallMulti(const std::string& op,
                               const std::vector<NDArray>& inputs,
                               const AttrDict& attrs, Context ctx) {
  imperative::InvokeOptions options;
  options.ctx = ctx;
  return imperative::Invoke(op, inputs, attrs, options);
}

NDArray Call(const std::string& op, const std::vector<NDArray>& inputs,
             const AttrDict& attrs, Context ctx) {
  return CallMulti(op, inputs, attrs, ctx)[0];
}

void CallInto(const std::string& op, const std::vector<NDArray>& inputs,
              const AttrDict& attrs, const NDArray& out) {
  const Op& def = OpRegistry::Get()->Lookup(op);
  NodeAttrs parsed = MakeAttrs(def, attrs);
  std::vector<NDArray> outputs(def.NumOutputs(parsed));
  outputs[0] = out;
  imperative::Invoke(parsed, inputs, &outputs);
}

std::string Attr(double v) { return AttrText(v); }
std::string Attr(int64_t v) { return std::to_string(v); }
std::string Attr(int v) { return std::to_string(v); }
std::string Attr(bool v) { return v ? "True" : "False"; }
std::string Attr(const TShape& v) { return v.ToString(); }
std::string Attr(DType v) { return DTypeName(v); }
std::string Attr(const OptionalIntTuple& v) {
  return param_internal::PrintValue(v);
}

namespace {

// An op without attributes, parsed once: unary and binary calls skip the
// name lookup and the attribute parse on the per-op dispatch path. (Ops
// are never unregistered and plugins replace kernels in place, so the
// parsed attributes stay valid.) Never destroyed: kernels read them in
// place (attrs_outlive_ops), also when ops still pending at exit run.
const NodeAttrs* ParsedNoAttrs(const char* op) {
  return new NodeAttrs(MakeAttrs(OpRegistry::Get()->Lookup(op), {}));
}

// Argument vectors of CallParsed, reused: no allocation per call.
struct CallArgs {
  std::vector<NDArray> in, out;
  void Release() {
    in.clear();
    out.clear();
  }
};

NDArray CallParsed(
    const NodeAttrs& attrs,
    std::initializer_list<std::reference_wrapper<const NDArray>> inputs) {
  const ScratchLease<CallArgs> args;
  args->in.assign(inputs.begin(), inputs.end());
  imperative::InvokeOptions options;
  options.attrs_outlive_ops = true;  // Static attributes (callers below).
  imperative::Invoke(attrs, args->in, &args->out, options);
  return std::move(args->out[0]);
}

AttrDict ShapeAttrs(const TShape& shape, DType dtype) {
  return {{"shape", Attr(shape)}, {"dtype", Attr(dtype)}};
}

NDArray Scalar(const char* op, const NDArray& a, double s) {
  return Call(op, {a}, {{"scalar", Attr(s)}});
}

}  // namespace

NDArray zeros(const TShape& shape, Context ctx, DType dtype) {
  return Call("_zeros", {}, ShapeAttrs(shape, dtype), ctx);
}
NDArray ones(const TShape& shape, Context ctx, DType dtype) {
  return Call("_ones", {}, ShapeAttrs(shape, dtype), ctx);
}
NDArray full(const TShape& shape, double value, Context ctx, DType dtype) {
  AttrDict attrs = ShapeAttrs(shape, dtype);
  attrs["value"] = Attr(value);
  return Call("_full", {}, attrs, ctx);
}
NDArray arange(double start, std::optional<double> stop, double step,
               Context ctx, DType dtype) {
  AttrDict attrs{
      {"start", Attr(start)}, {"step", Attr(step)}, {"dtype", Attr(dtype)}};
  if (stop) attrs["stop"] = Attr(*stop);
  return Call("_arange", {}, attrs, ctx);
}
NDArray zeros_like(const NDArray& a) { return Call("zeros_like", {a}); }
NDArray ones_like(const NDArray& a) { return Call("ones_like", {a}); }
NDArray random_uniform(double low, double high, const TShape& shape,
                       Context ctx, DType dtype) {
  AttrDict attrs = ShapeAttrs(shape, dtype);
  attrs["low"] = Attr(low);
  attrs["high"] = Attr(high);
  return Call("_random_uniform", {}, attrs, ctx);
}
NDArray random_normal(double loc, double scale, const TShape& shape,
                      Context ctx, DType dtype) {
  AttrDict attrs = ShapeAttrs(shape, dtype);
  attrs["loc"] = Attr(loc);
  attrs["scale"] = Attr(scale);
  return Call("_random_normal", {}, attrs, ctx);
}

#define MX_ND_UNARY_(name)                                 \
  NDArray name(const NDArray& a) {                         \
    static const NodeAttrs& attrs = *ParsedNoAttrs(#name); \
    return CallParsed(attrs, {a});                         \
  }
MX_ND_UNARY_(negative)
MX_ND_UNARY_(abs)
MX_ND_UNARY_(sign)
MX_ND_UNARY_(exp)
MX_ND_UNARY_(log)
MX_ND_UNARY_(sqrt)
MX_ND_UNARY_(square)
MX_ND_UNARY_(reciprocal)
MX_ND_UNARY_(sin)
MX_ND_UNARY_(cos)
MX_ND_UNARY_(tanh)
MX_ND_UNARY_(sigmoid)
MX_ND_UNARY_(relu)
MX_ND_UNARY_(erf)
MX_ND_UNARY_(tan)
MX_ND_UNARY_(sinh)
MX_ND_UNARY_(cosh)
MX_ND_UNARY_(arcsin)
MX_ND_UNARY_(arccos)
MX_ND_UNARY_(arctan)
MX_ND_UNARY_(arcsinh)
MX_ND_UNARY_(arccosh)
MX_ND_UNARY_(arctanh)
MX_ND_UNARY_(log2)
MX_ND_UNARY_(log10)
MX_ND_UNARY_(expm1)
MX_ND_UNARY_(log1p)
MX_ND_UNARY_(cbrt)
MX_ND_UNARY_(rsqrt)
MX_ND_UNARY_(rcbrt)
MX_ND_UNARY_(radians)
MX_ND_UNARY_(degrees)
MX_ND_UNARY_(round)
MX_ND_UNARY_(rint)
MX_ND_UNARY_(fix)
MX_ND_UNARY_(trunc)
MX_ND_UNARY_(floor)
MX_ND_UNARY_(ceil)
MX_ND_UNARY_(logical_not)
MX_ND_UNARY_(gamma)
MX_ND_UNARY_(gammaln)
MX_ND_UNARY_(digamma)
MX_ND_UNARY_(erfinv)
#undef MX_ND_UNARY_
NDArray clip(const NDArray& a, double a_min, double a_max) {
  return Call("clip", {a}, {{"a_min", Attr(a_min)}, {"a_max", Attr(a_max)}});
}

#define MX_ND_BINARY_(name, op)                         \
  NDArray name(const NDArray& a, const NDArray& b) {    \
    static const NodeAttrs& attrs = *ParsedNoAttrs(op); \
    return CallParsed(attrs, {a, b});                   \
  }
MX_ND_BINARY_(add, "broadcast_add")
MX_ND_BINARY_(subtract, "broadcast_sub")
MX_ND_BINARY_(multiply, "broadcast_mul")
MX_ND_BINARY_(divide, "broadcast_div")
MX_ND_BINARY_(power, "broadcast_power")
MX_ND_BINARY_(maximum, "broadcast_maximum")
MX_ND_BINARY_(minimum, "broadcast_minimum")
MX_ND_BINARY_(equal, "_npi_equal")
MX_ND_BINARY_(not_equal, "_npi_not_equal")
MX_ND_BINARY_(greater, "_npi_greater")
MX_ND_BINARY_(greater_equal, "_npi_greater_equal")
MX_ND_BINARY_(less, "_npi_less")
MX_ND_BINARY_(less_equal, "_npi_less_equal")
MX_ND_BINARY_(mod, "broadcast_mod")
MX_ND_BINARY_(hypot, "broadcast_hypot")
MX_ND_BINARY_(logical_and, "broadcast_logical_and")
MX_ND_BINARY_(logical_or, "broadcast_logical_or")
MX_ND_BINARY_(logical_xor, "broadcast_logical_xor")
#undef MX_ND_BINARY_

#define MX_ND_SCALAR_(name, op) \
  NDArray name(const NDArray& a, double s) { return Scalar(op, a, s); }
#define MX_ND_RSCALAR_(name, op) \
  NDArray name(double s, const NDArray& a) { return Scalar(op, a, s); }
MX_ND_SCALAR_(add, "_plus_scalar")
MX_ND_SCALAR_(subtract, "_minus_scalar")
MX_ND_RSCALAR_(subtract, "_rminus_scalar")
MX_ND_SCALAR_(multiply, "_mul_scalar")
MX_ND_SCALAR_(divide, "_div_scalar")
MX_ND_RSCALAR_(divide, "_rdiv_scalar")
MX_ND_SCALAR_(power, "_power_scalar")
MX_ND_RSCALAR_(power, "_rpower_scalar")
MX_ND_SCALAR_(maximum, "_maximum_scalar")
MX_ND_SCALAR_(minimum, "_minimum_scalar")
MX_ND_SCALAR_(equal, "_npi_equal_scalar")
MX_ND_SCALAR_(not_equal, "_npi_not_equal_scalar")
MX_ND_SCALAR_(greater, "_npi_greater_scalar")
MX_ND_SCALAR_(greater_equal, "_npi_greater_equal_scalar")
MX_ND_SCALAR_(less, "_npi_less_scalar")
MX_ND_SCALAR_(less_equal, "_npi_less_equal_scalar")
MX_ND_SCALAR_(mod, "_mod_scalar")
MX_ND_RSCALAR_(mod, "_rmod_scalar")
MX_ND_SCALAR_(hypot, "_hypot_scalar")
MX_ND_SCALAR_(logical_and, "_logical_and_scalar")
MX_ND_SCALAR_(logical_or, "_logical_or_scalar")
MX_ND_SCALAR_(logical_xor, "_logical_xor_scalar")
MX_ND_SCALAR_(smooth_l1, "smooth_l1")
#undef MX_ND_SCALAR_
#undef MX_ND_RSCALAR_

NDArray dot(const NDArray& a, const NDArray& b, bool transpose_a,
            bool transpose_b) {
  return Call(
      "dot", {a, b},
      {{"transpose_a", Attr(transpose_a)}, {"transpose_b", Attr(transpose_b)}});
}
NDArray batch_dot(const NDArray& a, const NDArray& b, bool transpose_a,
                  bool transpose_b) {
  return Call(
      "batch_dot", {a, b},
      {{"transpose_a", Attr(transpose_a)}, {"transpose_b", Attr(transpose_b)}});
}
NDArray FullyConnected(const NDArray& data, const NDArray& weight,
                       const NDArray& bias, int64_t num_hidden, bool no_bias,
                       bool flatten) {
  std::vector<NDArray> inputs{data, weight};
  if (!no_bias) inputs.push_back(bias);
  return Call("FullyConnected", inputs,
              {{"num_hidden", Attr(num_hidden)},
               {"no_bias", Attr(no_bias)},
               {"flatten", Attr(flatten)}});
}
NDArray Convolution(const NDArray& data, const NDArray& weight,
                    const NDArray& bias, const TShape& kernel,
                    int64_t num_filter, const TShape& stride, const TShape& pad,
                    const TShape& dilate, int64_t num_group, bool no_bias) {
  std::vector<NDArray> inputs{data, weight};
  if (!no_bias) inputs.push_back(bias);
  AttrDict attrs{{"kernel", Attr(kernel)},
                 {"num_filter", Attr(num_filter)},
                 {"num_group", Attr(num_group)},
                 {"no_bias", Attr(no_bias)}};
  if (stride.ndim() > 0) attrs["stride"] = Attr(stride);
  if (pad.ndim() > 0) attrs["pad"] = Attr(pad);
  if (dilate.ndim() > 0) attrs["dilate"] = Attr(dilate);
  return Call("Convolution", inputs, attrs);
}
NDArray UpSampling(const std::vector<NDArray>& data, int scale,
                   const std::string& multi_input_mode) {
  return Call("UpSampling", data,
              {{"scale", Attr(scale)},
               {"sample_type", "nearest"},
               {"num_args", Attr(static_cast<int>(data.size()))},
               {"multi_input_mode", multi_input_mode}});
}
NDArray depth_to_space(const NDArray& data, int block_size) {
  return Call("depth_to_space", {data}, {{"block_size", Attr(block_size)}});
}
NDArray space_to_depth(const NDArray& data, int block_size) {
  return Call("space_to_depth", {data}, {{"block_size", Attr(block_size)}});
}
NDArray diag(const NDArray& data, int k, int axis1, int axis2) {
  return Call("diag", {data},
              {{"k", Attr(k)}, {"axis1", Attr(axis1)}, {"axis2", Attr(axis2)}});
}

NDArray Pooling(const NDArray& data, const TShape& kernel,
                const std::string& pool_type, const TShape& stride,
                const TShape& pad, bool global_pool,
                const std::string& pooling_convention, bool count_include_pad) {
  AttrDict attrs{{"kernel", Attr(kernel)},
                 {"pool_type", pool_type},
                 {"global_pool", Attr(global_pool)},
                 {"pooling_convention", pooling_convention},
                 {"count_include_pad", Attr(count_include_pad)}};
  if (stride.ndim() > 0) attrs["stride"] = Attr(stride);
  if (pad.ndim() > 0) attrs["pad"] = Attr(pad);
  return Call("Pooling", {data}, attrs);
}
NDArray Activation(const NDArray& data, const std::string& act_type) {
  return Call("Activation", {data}, {{"act_type", act_type}});
}
NDArray LeakyReLU(const NDArray& data, const std::string& act_type,
                  double slope) {
  return Call("LeakyReLU", {data},
              {{"act_type", act_type}, {"slope", Attr(slope)}});
}
NDArray BatchNorm(const NDArray& data, const NDArray& gamma,
                  const NDArray& beta, const NDArray& moving_mean,
                  const NDArray& moving_var, double eps, double momentum,
                  bool fix_gamma, bool use_global_stats, int axis) {
  return Call("BatchNorm", {data, gamma, beta, moving_mean, moving_var},
              {{"eps", Attr(eps)},
               {"momentum", Attr(momentum)},
               {"fix_gamma", Attr(fix_gamma)},
               {"use_global_stats", Attr(use_global_stats)},
               {"axis", Attr(axis)}});
}
NDArray Dropout(const NDArray& data, double p, const std::string& mode) {
  return Call("Dropout", {data}, {{"p", Attr(p)}, {"mode", mode}});
}
NDArray softmax(const NDArray& data, int axis, double temperature) {
  return Call("softmax", {data},
              {{"axis", Attr(axis)}, {"temperature", Attr(temperature)}});
}
NDArray log_softmax(const NDArray& data, int axis) {
  return Call("log_softmax", {data}, {{"axis", Attr(axis)}});
}
NDArray softmax_cross_entropy(const NDArray& data, const NDArray& label) {
  return Call("softmax_cross_entropy", {data, label});
}

#define MX_ND_REDUCE_(name)                                           \
  NDArray name(const NDArray& a, const TShape& axis, bool keepdims) { \
    AttrDict attrs{{"keepdims", Attr(keepdims)}};                     \
    if (axis.ndim() > 0) attrs["axis"] = Attr(axis);                  \
    return Call(#name, {a}, attrs);                                   \
  }
MX_ND_REDUCE_(sum)
MX_ND_REDUCE_(mean)
MX_ND_REDUCE_(max)
MX_ND_REDUCE_(min)
MX_ND_REDUCE_(prod)
MX_ND_REDUCE_(nansum)
MX_ND_REDUCE_(nanprod)
#undef MX_ND_REDUCE_
NDArray norm(const NDArray& a, int ord, const TShape& axis, bool keepdims) {
  AttrDict attrs{{"ord", Attr(ord)}, {"keepdims", Attr(keepdims)}};
  if (axis.ndim() > 0) attrs["axis"] = Attr(axis);
  return Call("norm", {a}, attrs);
}
#define MX_ND_ARG_REDUCE_(name)                                            \
  NDArray name(const NDArray& a, std::optional<int> axis, bool keepdims) { \
    AttrDict attrs{{"keepdims", Attr(keepdims)}};                          \
    if (axis) attrs["axis"] = Attr(*axis);                                 \
    return Call("_npi_" #name, {a}, attrs);                                \
  }
MX_ND_ARG_REDUCE_(argmax)
MX_ND_ARG_REDUCE_(argmin)
#undef MX_ND_ARG_REDUCE_
NDArray cumsum(const NDArray& a, std::optional<int> axis) {
  AttrDict attrs;
  if (axis) attrs["axis"] = Attr(*axis);
  return Call("cumsum", {a}, attrs);
}

NDArray reshape(const NDArray& a, const TShape& shape, bool reverse) {
  return Call("Reshape", {a},
              {{"shape", Attr(shape)}, {"reverse", Attr(reverse)}});
}
NDArray transpose(const NDArray& a, const TShape& axes) {
  AttrDict attrs;
  if (axes.ndim() > 0) attrs["axes"] = Attr(axes);
  return Call("transpose", {a}, attrs);
}
NDArray expand_dims(const NDArray& a, int axis) {
  return Call("expand_dims", {a}, {{"axis", Attr(axis)}});
}
NDArray squeeze(const NDArray& a, const TShape& axis) {
  AttrDict attrs;
  if (axis.ndim() > 0) attrs["axis"] = Attr(axis);
  return Call("squeeze", {a}, attrs);
}
NDArray flatten(const NDArray& a) { return Call("Flatten", {a}); }
NDArray slice(const NDArray& a, const OptionalIntTuple& begin,
              const OptionalIntTuple& end, const OptionalIntTuple& step) {
  AttrDict attrs{{"begin", Attr(begin)}, {"end", Attr(end)}};
  if (!step.empty()) attrs["step"] = Attr(step);
  return Call("slice", {a}, attrs);
}
NDArray slice_axis(const NDArray& a, int axis, int64_t begin,
                   std::optional<int64_t> end) {
  return Call("slice_axis", {a},
              {{"axis", Attr(axis)},
               {"begin", Attr(begin)},
               {"end", end ? Attr(*end) : std::string("None")}});
}
NDArray concat(const std::vector<NDArray>& arrays, int dim) {
  return Call("Concat", arrays,
              {{"num_args", Attr(static_cast<int>(arrays.size()))},
               {"dim", Attr(dim)}});
}
std::vector<NDArray> split(const NDArray& a, int num_outputs, int axis,
                           bool squeeze_axis) {
  return CallMulti("SliceChannel", {a},
                   {{"num_outputs", Attr(num_outputs)},
                    {"axis", Attr(axis)},
                    {"squeeze_axis", Attr(squeeze_axis)}});
}
NDArray stack(const std::vector<NDArray>& arrays, int axis) {
  return Call("stack", arrays,
              {{"num_args", Attr(static_cast<int>(arrays.size()))},
               {"axis", Attr(axis)}});
}
NDArray take(const NDArray& a, const NDArray& indices, int axis,
             const std::string& mode) {
  return Call("take", {a, indices}, {{"axis", Attr(axis)}, {"mode", mode}});
}
NDArray one_hot(const NDArray& indices, int64_t depth, double on_value,
                double off_value, DType dtype) {
  return Call("one_hot", {indices},
              {{"depth", Attr(depth)},
               {"on_value", Attr(on_value)},
               {"off_value", Attr(off_value)},
               {"dtype", Attr(dtype)}});
}
NDArray pick(const NDArray& data, const NDArray& index, int axis, bool keepdims,
             const std::string& mode) {
  return Call(
      "pick", {data, index},
      {{"axis", Attr(axis)}, {"keepdims", Attr(keepdims)}, {"mode", mode}});
}
NDArray where(const NDArray& condition, const NDArray& x, const NDArray& y) {
  return Call("where", {condition, x, y});
}
NDArray tril(const NDArray& a, int64_t k) {
  return Call("tril", {a}, {{"k", Attr(k)}});
}
NDArray triu(const NDArray& a, int64_t k) {
  return Call("triu", {a}, {{"k", Attr(k)}});
}
NDArray pad(const NDArray& a, const TShape& pad_width, const std::string& mode,
            double constant_value) {
  return Call("Pad", {a},
              {{"pad_width", Attr(pad_width)},
               {"mode", mode},
               {"constant_value", Attr(constant_value)}});
}
NDArray Embedding(const NDArray& data, const NDArray& weight, int64_t input_dim,
                  int64_t output_dim, DType dtype) {
  return Call("Embedding", {data, weight},
              {{"input_dim", Attr(input_dim)},
               {"output_dim", Attr(output_dim)},
               {"dtype", Attr(dtype)}});
}
NDArray cast(const NDArray& a, DType dtype) {
  return Call("Cast", {a}, {{"dtype", Attr(dtype)}});
}
NDArray add_n(const std::vector<NDArray>& arrays) {
  return Call("add_n", arrays,
              {{"num_args", Attr(static_cast<int>(arrays.size()))}});
}

NDArray flatnonzero(const NDArray& a) { return Call("flatnonzero", {a}); }
NDArray boolean_mask(const NDArray& data, const NDArray& index) {
  return Call("boolean_mask", {data, index});
}

namespace {
AttrDict UpdateAttrs(double lr, double wd, double rescale_grad,
                     double clip_gradient) {
  return {{"lr", Attr(lr)},
          {"wd", Attr(wd)},
          {"rescale_grad", Attr(rescale_grad)},
          {"clip_gradient", Attr(clip_gradient)}};
}
}  // namespace

void sgd_update(const NDArray& weight, const NDArray& grad, double lr,
                double wd, double rescale_grad, double clip_gradient) {
  CallInto("sgd_update", {weight, grad},
           UpdateAttrs(lr, wd, rescale_grad, clip_gradient), weight);
}
void sgd_mom_update(const NDArray& weight, const NDArray& grad,
                    const NDArray& mom, double lr, double momentum, double wd,
                    double rescale_grad, double clip_gradient) {
  AttrDict attrs = UpdateAttrs(lr, wd, rescale_grad, clip_gradient);
  attrs["momentum"] = Attr(momentum);
  CallInto("sgd_mom_update", {weight, grad, mom}, attrs, weight);
}
void adam_update(const NDArray& weight, const NDArray& grad,
                 const NDArray& mean, const NDArray& var, double lr,
                 double beta1, double beta2, double epsilon, double wd,
                 double rescale_grad, double clip_gradient) {
  AttrDict attrs = UpdateAttrs(lr, wd, rescale_grad, clip_gradient);
  attrs["beta1"] = Attr(beta1);
  attrs["beta2"] = Attr(beta2);
  attrs["epsilon"] = Attr(epsilon);
  CallInto("adam_update", {weight, grad, mean, var}, attrs, weight);
}

}  // namespace nd

NDArray operator+(const NDArray& a, const NDArray& b) { return nd::add(a, b); }
NDArray operator-(const NDArray& a, const NDArray& b) {
  return nd::subtract(a, b);
}
NDArray operator*(const NDArray& a, const NDArray& b) {
  return nd::multiply(a, b);
}
NDArray operator/(const NDArray& a, const NDArray& b) {
  return nd::divide(a, b);
}
NDArray operator+(const NDArray& a, double s) { return nd::add(a, s); }
NDArray operator-(const NDArray& a, double s) { return nd::subtract(a, s); }
NDArray operator*(const NDArray& a, double s) { return nd::multiply(a, s); }
NDArray operator/(const NDArray& a, double s) { return nd::divide(a, s); }
NDArray operator+(double s, const NDArray& a) { return nd::add(a, s); }
NDArray operator-(double s, const NDArray& a) { return nd::subtract(s, a); }
NDArray operator*(double s, const NDArray& a) { return nd::multiply(a, s); }
NDArray operator/(double s, const NDArray& a) { return nd::divide(s, a); }
NDArray operator-(const NDArray& a) { return nd::negative(a); }
NDArray operator==(const NDArray& a, const NDArray& b) {
  return nd::equal(a, b);
}
NDArray operator!=(const NDArray& a, const NDArray& b) {
  return nd::not_equal(a, b);
}
NDArray operator>(const NDArray& a, const NDArray& b) {
  return nd::greater(a, b);
}
NDArray operator>=(const NDArray& a, const NDArray& b) {
  return nd::greater_equal(a, b);
}
NDArray operator<(const NDArray& a, const NDArray& b) { return nd::less(a, b); }
NDArray operator<=(const NDArray& a, const NDArray& b) {
  return nd::less_equal(a, b);
}
NDArray operator==(const NDArray& a, double s) { return nd::equal(a, s); }
NDArray operator!=(const NDArray& a, double s) { return nd::not_equal(a, s); }
NDArray operator>(const NDArray& a, double s) { return nd::greater(a, s); }
NDArray operator>=(const NDArray& a, double s) {
  return nd::greater_equal(a, s);
}
NDArray operator<(const NDArray& a, double s) { return nd::less(a, s); }
NDArray operator<=(const NDArray& a, double s) { return nd::less_equal(a, s); }

}  // namespace mx
