// One fused convolution (_sg_onednn_conv, fused_conv.h): its parsed
// attributes, its shapes, and a oneDNN inference primitive for fixed
// shapes with the BatchNorm-folded weights it runs with. Shared by the
// single fused op and by the region that chains several of them
// (fused_region.h).
//
//   ConvFusion f = ParseConvFusion(attrs);        // throws on bad attributes
//   FusedConvPrimitive p(f, src_dims, dst_dims);  // layouts oneDNN prefers
//   p.PrepareWeights([&](int i) { return in[i].data<float>(); });
//   p.Run(src, dst);  // memories in p.src_desc() / p.dst_desc(); dst holds
//                     // the residual first when f.sum >= 0
#ifndef MXCORE_BACKENDS_ONEDNN_FUSED_CONV_PRIMITIVE_H_
#define MXCORE_BACKENDS_ONEDNN_FUSED_CONV_PRIMITIVE_H_

#include <dnnl.hpp>
#include <functional>
#include <optional>
#include <vector>

#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/fused_conv.h"

namespace mx_onednn {

// Convolution [+ BatchNorm] [+ act] [+ sum] [+ act]; the ints are the
// fused node's input indices playing each role (-1: absent).
struct ConvFusion {
  int num_inputs = 0;
  int data = -1, weight = -1, bias = -1;
  bool with_bn = false;
  int gamma = -1, beta = -1, mean = -1, var = -1;
  double eps = 1e-3;
  bool fix_gamma = true;
  std::optional<PostOp> act, postsum_act;
  int sum = -1;  // The residual added to the convolution ("sum" post-op).
  int64_t num_filter = 0, num_group = 1;
  std::vector<int64_t> kernel, stride, dilate, pad;
};

// `_sg_onednn_conv`'s attributes; InvalidArgument naming `op` when they
// are inconsistent.
ConvFusion ParseConvFusion(const mxplugin::Attrs& a, const char* op);

// Weight shapes from the data shape and the output shape (filled where
// unknown); ShapeError naming `op` when the window does not fit.
void InferConvFusionShapes(const ConvFusion& f, const char* op,
                           mxplugin::ShapeSlots& in, mxplugin::ShapeSlots& out);

// The inputs the prepared weights come from (weight, bias, BatchNorm's),
// and which of them the op writes itself (the moving statistics, which
// stay auxiliary states).
std::vector<int> ConvWeightInputs(const ConvFusion& f);
std::vector<bool> ConvOwnWrites(const ConvFusion& f);

class FusedConvPrimitive {
 public:
  // For data `src` and result `dst` (NC + spatial dims); activations in
  // the layouts oneDNN chooses (format_tag::any).
  FusedConvPrimitive(const ConvFusion& f, const Dims& src, const Dims& dst);

  const dnnl::memory::desc& src_desc() const { return src_; }
  const dnnl::memory::desc& dst_desc() const { return dst_; }

  // Folds BatchNorm into the weights and bias (w * scale, (b - mean) *
  // scale + beta with scale = gamma / sqrt(var + eps)) and reorders them
  // to the primitive's layout. `input(i)` is the fused node's input i.
  void PrepareWeights(const std::function<const float*(int)>& input);

  // Runs on the calling thread's stream; not concurrently with itself.
  void Run(const dnnl::memory& src, const dnnl::memory& dst) const;

 private:
  ConvFusion f_;
  Dims weights_dims_;
  int64_t filters_ = 0;
  bool has_bias_ = false;
  dnnl::memory::desc src_, dst_, scratchpad_;
  dnnl::convolution_forward prim_;
  dnnl::memory weights_, bias_;
};

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_FUSED_CONV_PRIMITIVE_H_
