// The C++ array front end: one function per operator, plus arithmetic and
// comparison operators on NDArray. Each call runs the op asynchronously
// through imperative::Invoke; read results with ToVector / WaitToRead.
//
//   using namespace mx;
//   NDArray x = nd::random_uniform(-1, 1, {64, 784});
//   NDArray w = nd::random_normal(0, 0.01, {256, 784});
//   NDArray h = nd::relu(nd::FullyConnected(x, w, NDArray(), 256,
//                                           /*no_bias=*/true));
//   NDArray y = (h * 2.0 + 1.0) > 0.5;       // bool array
//
// Op names and attributes follow MXNet's (broadcast_add, Convolution,
// kernel=(3,3), ...); nd::Call reaches any registered op by name.
#ifndef MXCORE_IMPERATIVE_ND_H_
#define MXCORE_IMPERATIVE_ND_H_

#include <optional>
#include <string>
#include <vector>

#include "graph/params.h"
#include "imperative/imperative.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace nd {

// Any op by name; returns all outputs / the first output.
std::vector<NDArray> CallMulti(const std::string& op,
                               const std::vector<NDArray>& inputs,
                               const AttrDict& attrs = {},
                               Context ctx = Context::CPU());
NDArray Call(const std::string& op, const std::vector<NDArray>& inputs,
             const AttrDict& attrs = {}, Context ctx = Context::CPU());
// Writes op's (single) output into `out`.
void CallInto(const std::string& op, const std::vector<NDArray>& inputs,
              const AttrDict& attrs, const NDArray& out);

// Attribute text for a value, as ops parse it.
std::string Attr(double v);
std::string Attr(int64_t v);
std::string Attr(int v);
std::string Attr(bool v);
std::string Attr(const TShape& v);
std::string Attr(DType v);
std::string Attr(const OptionalIntTuple& v);

// ---- Creation. ----
NDArray zeros(const TShape& shape, Context ctx = Context::CPU(),
              DType dtype = DType::kFloat32);  // _zeros
NDArray ones(const TShape& shape, Context ctx = Context::CPU(),
             DType dtype = DType::kFloat32);  // _ones
NDArray full(const TShape& shape, double value, Context ctx = Context::CPU(),
             DType dtype = DType::kFloat32);  // _full
// [start, stop) by step; stop unset means [0, start).
NDArray arange(double start, std::optional<double> stop = std::nullopt,
               double step = 1, Context ctx = Context::CPU(),
               DType dtype = DType::kFloat32);  // _arange
NDArray zeros_like(const NDArray& a);
NDArray ones_like(const NDArray& a);
NDArray random_uniform(double low, double high, const TShape& shape,
                       Context ctx = Context::CPU(),
                       DType dtype = DType::kFloat32);  // _random_uniform
NDArray random_normal(double loc, double scale, const TShape& shape,
                      Context ctx = Context::CPU(),
                      DType dtype = DType::kFloat32);  // _random_normal

// ---- Elementwise unary. ----
NDArray negative(const NDArray& a);
NDArray abs(const NDArray& a);
NDArray sign(const NDArray& a);
NDArray exp(const NDArray& a);
NDArray log(const NDArray& a);
NDArray sqrt(const NDArray& a);
NDArray square(const NDArray& a);
NDArray reciprocal(const NDArray& a);
NDArray sin(const NDArray& a);
NDArray cos(const NDArray& a);
NDArray tanh(const NDArray& a);
NDArray sigmoid(const NDArray& a);
NDArray relu(const NDArray& a);
NDArray erf(const NDArray& a);
NDArray clip(const NDArray& a, double a_min, double a_max);
NDArray tan(const NDArray& a);
NDArray sinh(const NDArray& a);
NDArray cosh(const NDArray& a);
NDArray arcsin(const NDArray& a);
NDArray arccos(const NDArray& a);
NDArray arctan(const NDArray& a);
NDArray arcsinh(const NDArray& a);
NDArray arccosh(const NDArray& a);
NDArray arctanh(const NDArray& a);
NDArray log2(const NDArray& a);
NDArray log10(const NDArray& a);
NDArray expm1(const NDArray& a);
NDArray log1p(const NDArray& a);
NDArray cbrt(const NDArray& a);
NDArray rsqrt(const NDArray& a);  // 1 / sqrt(x)
NDArray rcbrt(const NDArray& a);  // 1 / cbrt(x)
NDArray radians(const NDArray& a);
NDArray degrees(const NDArray& a);
// Rounding (integers unchanged): round halves away from zero, rint halves
// toward -inf (MXNet's rint), fix and trunc toward zero.
NDArray round(const NDArray& a);
NDArray rint(const NDArray& a);
NDArray fix(const NDArray& a);
NDArray trunc(const NDArray& a);
NDArray floor(const NDArray& a);
NDArray ceil(const NDArray& a);
NDArray logical_not(const NDArray& a);  // 1/0 in a's dtype
NDArray gamma(const NDArray& a);
NDArray gammaln(const NDArray& a);  // log |gamma(x)|
NDArray digamma(const NDArray& a);  // d/dx gammaln(x)
NDArray erfinv(const NDArray& a);   // NaN outside [-1, 1]
// smooth_l1(x, sigma): 0.5 (sigma x)^2 where |x| < 1/sigma^2, else
// |x| - 0.5/sigma^2.
NDArray smooth_l1(const NDArray& a, double sigma);

// ---- Binary with NumPy broadcasting (broadcast_add, ...). Comparisons
// return bool arrays. ----
NDArray add(const NDArray& a, const NDArray& b);
NDArray subtract(const NDArray& a, const NDArray& b);
NDArray multiply(const NDArray& a, const NDArray& b);
NDArray divide(const NDArray& a, const NDArray& b);
NDArray power(const NDArray& a, const NDArray& b);
NDArray maximum(const NDArray& a, const NDArray& b);
NDArray minimum(const NDArray& a, const NDArray& b);
NDArray equal(const NDArray& a, const NDArray& b);
NDArray not_equal(const NDArray& a, const NDArray& b);
NDArray greater(const NDArray& a, const NDArray& b);
NDArray greater_equal(const NDArray& a, const NDArray& b);
NDArray less(const NDArray& a, const NDArray& b);
NDArray less_equal(const NDArray& a, const NDArray& b);
// mod: the sign of b, x mod 0 = 0 (MXNet's and Python's %). Logical ops give
// 1/0 in the inputs' dtype.
NDArray mod(const NDArray& a, const NDArray& b);
NDArray hypot(const NDArray& a, const NDArray& b);
NDArray logical_and(const NDArray& a, const NDArray& b);
NDArray logical_or(const NDArray& a, const NDArray& b);
NDArray logical_xor(const NDArray& a, const NDArray& b);
// Scalar forms (_plus_scalar, _rminus_scalar, ...): array op scalar, and
// for the non-commutative ones scalar op array.
NDArray add(const NDArray& a, double s);
NDArray subtract(const NDArray& a, double s);
NDArray subtract(double s, const NDArray& a);
NDArray multiply(const NDArray& a, double s);
NDArray divide(const NDArray& a, double s);
NDArray divide(double s, const NDArray& a);
NDArray power(const NDArray& a, double s);
NDArray power(double s, const NDArray& a);
NDArray maximum(const NDArray& a, double s);
NDArray minimum(const NDArray& a, double s);
NDArray equal(const NDArray& a, double s);
NDArray not_equal(const NDArray& a, double s);
NDArray greater(const NDArray& a, double s);
NDArray greater_equal(const NDArray& a, double s);
NDArray less(const NDArray& a, double s);
NDArray less_equal(const NDArray& a, double s);
NDArray mod(const NDArray& a, double s);
NDArray mod(double s, const NDArray& a);
NDArray hypot(const NDArray& a, double s);
NDArray logical_and(const NDArray& a, double s);
NDArray logical_or(const NDArray& a, double s);
NDArray logical_xor(const NDArray& a, double s);

// ---- Linear algebra and neural-network layers. ----
NDArray dot(const NDArray& a, const NDArray& b, bool transpose_a = false,
            bool transpose_b = false);
NDArray batch_dot(const NDArray& a, const NDArray& b, bool transpose_a = false,
                  bool transpose_b = false);
// `bias` may be none when no_bias.
NDArray FullyConnected(const NDArray& data, const NDArray& weight,
                       const NDArray& bias, int64_t num_hidden,
                       bool no_bias = false, bool flatten = true);
NDArray Convolution(const NDArray& data, const NDArray& weight,
                    const NDArray& bias, const TShape& kernel,
                    int64_t num_filter, const TShape& stride = {},
                    const TShape& pad = {}, const TShape& dilate = {},
                    int64_t num_group = 1, bool no_bias = false);
// pool_type: "max" or "avg"; pooling_convention: "valid" or "full".
NDArray Pooling(const NDArray& data, const TShape& kernel,
                const std::string& pool_type = "max", const TShape& stride = {},
                const TShape& pad = {}, bool global_pool = false,
                const std::string& pooling_convention = "valid",
                bool count_include_pad = true);
// Nearest-neighbour UpSampling: data[0] enlarged by `scale`, the others to
// its size, joined along the channels ("concat") or added ("sum").
NDArray UpSampling(const std::vector<NDArray>& data, int scale,
                   const std::string& multi_input_mode = "concat");
// NCHW: channel blocks to b x b spatial blocks (C/b^2, H*b, W*b), and back.
NDArray depth_to_space(const NDArray& data, int block_size);
NDArray space_to_depth(const NDArray& data, int block_size);
// 1-D: a square matrix with data on diagonal k; N-D: the k-th diagonals of
// the (axis1, axis2) planes, as a last axis.
NDArray diag(const NDArray& data, int k = 0, int axis1 = 0, int axis2 = 1);
// act_type: "relu", "sigmoid", "tanh", "softrelu".
NDArray Activation(const NDArray& data, const std::string& act_type);
// act_type: "leaky", "elu", "selu", "gelu".
NDArray LeakyReLU(const NDArray& data, const std::string& act_type = "leaky",
                  double slope = 0.25);
// Updates moving_mean / moving_var in training mode; returns the output.
NDArray BatchNorm(const NDArray& data, const NDArray& gamma,
                  const NDArray& beta, const NDArray& moving_mean,
                  const NDArray& moving_var, double eps = 1e-3,
                  double momentum = 0.9, bool fix_gamma = true,
                  bool use_global_stats = false, int axis = 1);
// Identity unless training (imperative::TrainingScope) or mode="always".
NDArray Dropout(const NDArray& data, double p = 0.5,
                const std::string& mode = "training");
NDArray softmax(const NDArray& data, int axis = -1, double temperature = 1);
NDArray log_softmax(const NDArray& data, int axis = -1);
// Sum over the batch of -log(softmax(data)[label]); shape (1,).
NDArray softmax_cross_entropy(const NDArray& data, const NDArray& label);

// ---- Reductions. An empty axis reduces over all axes. ----
NDArray sum(const NDArray& a, const TShape& axis = {}, bool keepdims = false);
NDArray mean(const NDArray& a, const TShape& axis = {}, bool keepdims = false);
NDArray max(const NDArray& a, const TShape& axis = {}, bool keepdims = false);
NDArray min(const NDArray& a, const TShape& axis = {}, bool keepdims = false);
NDArray prod(const NDArray& a, const TShape& axis = {}, bool keepdims = false);
// NaN counts as 0 (nansum) or 1 (nanprod).
NDArray nansum(const NDArray& a, const TShape& axis = {},
               bool keepdims = false);
NDArray nanprod(const NDArray& a, const TShape& axis = {},
                bool keepdims = false);
// L1 (ord 1) or L2 (ord 2) norm over the axes, entrywise; float inputs.
NDArray norm(const NDArray& a, int ord = 2, const TShape& axis = {},
             bool keepdims = false);
// Indices as int64 (NumPy's _npi_argmax/_npi_argmin; MXNet graphs' legacy
// argmax/argmin ops give them in the data's dtype); no axis means over the
// flattened array.
NDArray argmax(const NDArray& a, std::optional<int> axis = std::nullopt,
               bool keepdims = false);
NDArray argmin(const NDArray& a, std::optional<int> axis = std::nullopt,
               bool keepdims = false);
// Running sums along axis; no axis: over the flattened array (1-D).
NDArray cumsum(const NDArray& a, std::optional<int> axis = std::nullopt);

// ---- Shape manipulation. ----
// MXNet's Reshape codes: 0 copy, -1 infer, -2 copy rest, -3 merge two,
// -4 split one into the next two.
NDArray reshape(const NDArray& a, const TShape& shape, bool reverse = false);
NDArray transpose(const NDArray& a, const TShape& axes = {});
NDArray expand_dims(const NDArray& a, int axis);
NDArray squeeze(const NDArray& a, const TShape& axis = {});
NDArray flatten(const NDArray& a);
NDArray slice(const NDArray& a, const OptionalIntTuple& begin,
              const OptionalIntTuple& end, const OptionalIntTuple& step = {});
NDArray slice_axis(const NDArray& a, int axis, int64_t begin,
                   std::optional<int64_t> end);
NDArray concat(const std::vector<NDArray>& arrays, int dim = 1);
std::vector<NDArray> split(const NDArray& a, int num_outputs, int axis = 1,
                           bool squeeze_axis = false);
NDArray stack(const std::vector<NDArray>& arrays, int axis = 0);
// mode: "clip", "wrap" or "raise".
NDArray take(const NDArray& a, const NDArray& indices, int axis = 0,
             const std::string& mode = "clip");
NDArray one_hot(const NDArray& indices, int64_t depth, double on_value = 1,
                double off_value = 0, DType dtype = DType::kFloat32);
// data's elements along `axis` at `index` (shaped like the result: data
// without the axis, or with length 1 under keepdims), as MXNet's pick;
// mode "clip" or "wrap" for indices out of range.
NDArray pick(const NDArray& data, const NDArray& index, int axis = -1,
             bool keepdims = false, const std::string& mode = "clip");
NDArray where(const NDArray& condition, const NDArray& x, const NDArray& y);
// The lower (tril) or upper (triu) triangle of the last two axes: element
// (i, j) is kept where j - i <= k (tril) or j - i >= k (triu), else 0. A
// 1-D array of length n is treated as n copies of itself: (n, n).
NDArray tril(const NDArray& a, int64_t k = 0);
NDArray triu(const NDArray& a, int64_t k = 0);
// MXNet's Pad. pad_width holds (before, after) for every axis in order;
// mode: "constant" (constant_value), "edge" (repeat the border) or
// "reflect" (mirror without repeating the border; pads < the axis size).
NDArray pad(const NDArray& a, const TShape& pad_width,
            const std::string& mode = "constant", double constant_value = 0);
// Rows of weight (input_dim, output_dim) at the indices in `data`:
// data.shape + (output_dim,). Indices are clipped to [0, input_dim);
// weight has `dtype`.
NDArray Embedding(const NDArray& data, const NDArray& weight, int64_t input_dim,
                  int64_t output_dim, DType dtype = DType::kFloat32);
NDArray cast(const NDArray& a, DType dtype);
NDArray add_n(const std::vector<NDArray>& arrays);

// ---- Dynamic shape: output shapes depend on values. ----
// Indices (int64) of the non-zero elements of the flattened array.
NDArray flatnonzero(const NDArray& a);
// The rows of `data` along axis 0 where `index` (bool or 0/1) is true.
NDArray boolean_mask(const NDArray& data, const NDArray& index);

// ---- Optimizer updates, in place on `weight` (and the states). ----
void sgd_update(const NDArray& weight, const NDArray& grad, double lr,
                double wd = 0, double rescale_grad = 1,
                double clip_gradient = -1);
void sgd_mom_update(const NDArray& weight, const NDArray& grad,
                    const NDArray& mom, double lr, double momentum = 0.9,
                    double wd = 0, double rescale_grad = 1,
                    double clip_gradient = -1);
void adam_update(const NDArray& weight, const NDArray& grad,
                 const NDArray& mean, const NDArray& var, double lr,
                 double beta1 = 0.9, double beta2 = 0.999,
                 double epsilon = 1e-8, double wd = 0, double rescale_grad = 1,
                 double clip_gradient = -1);

}  // namespace nd

// Arithmetic and comparisons (found by argument-dependent lookup).
NDArray operator+(const NDArray& a, const NDArray& b);
NDArray operator-(const NDArray& a, const NDArray& b);
NDArray operator*(const NDArray& a, const NDArray& b);
NDArray operator/(const NDArray& a, const NDArray& b);
NDArray operator+(const NDArray& a, double s);
NDArray operator-(const NDArray& a, double s);
NDArray operator*(const NDArray& a, double s);
NDArray operator/(const NDArray& a, double s);
NDArray operator+(double s, const NDArray& a);
NDArray operator-(double s, const NDArray& a);
NDArray operator*(double s, const NDArray& a);
NDArray operator/(double s, const NDArray& a);
NDArray operator-(const NDArray& a);
NDArray operator==(const NDArray& a, const NDArray& b);
NDArray operator!=(const NDArray& a, const NDArray& b);
NDArray operator>(const NDArray& a, const NDArray& b);
NDArray operator>=(const NDArray& a, const NDArray& b);
NDArray operator<(const NDArray& a, const NDArray& b);
NDArray operator<=(const NDArray& a, const NDArray& b);
NDArray operator==(const NDArray& a, double s);
NDArray operator!=(const NDArray& a, double s);
NDArray operator>(const NDArray& a, double s);
NDArray operator>=(const NDArray& a, double s);
NDArray operator<(const NDArray& a, double s);
NDArray operator<=(const NDArray& a, double s);

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_ND_H_
