// cuDNN convolution plans shared by Convolution and Deconvolution (a
// transposed convolution runs the same three cuDNN calls with the roles of
// data and output swapped): descriptors for one geometry, the fastest
// algorithms found once with cudnnFind*Algorithm, and a per-device cache.
#ifndef MXCORE_BACKENDS_CUDA_CONV_PLAN_H_
#define MXCORE_BACKENDS_CUDA_CONV_PLAN_H_

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_cuda {

// The cuDNN descriptors and algorithms of one convolution.
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  bool has_fwd = false, has_bwd = false;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  size_t fwd_ws = 0, bwd_data_ws = 0, bwd_filter_ws = 0;
  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  ~ConvPlan();
};

// A convolution from x to y with weight w (cuDNN's roles), shapes padded
// to at least 4 dims (1-D convolutions get height 1). The bias has the
// channels of y, or of x with bias_on_x (Deconvolution's output is x).
struct ConvGeometry {
  std::vector<int> x, w, y, stride, dilate, pad;
  int groups = 1;
  bool has_bias = false, bias_on_x = false;
  int dtype = 0;
  std::string Key() const;
};

// cuDNN's data type for an MxDType; DTypeError naming op otherwise.
cudnnDataType_t DnnType(const std::string& op, int dtype);

std::vector<int> Ints(const std::vector<int64_t>& v);

// An attribute of one value per spatial axis: `rank` values, or
// `fallback` on every axis when absent; InvalidArgument naming op else.
std::vector<int64_t> PerAxis(const std::string& op,
                             const mxplugin::Attrs& attrs, const char* key,
                             size_t rank, int64_t fallback);

// The attributes Convolution and Deconvolution share: kernel (1 to 3
// spatial axes), num_group, no_bias (default `no_bias_default`: MXNet's
// Deconvolution has no bias unless asked for) and a channels-first
// layout; InvalidArgument or NotImplemented naming op otherwise.
struct ConvAttrs {
  std::vector<int64_t> kernel;
  int64_t groups = 1;
  bool no_bias = false;
};
ConvAttrs ParseConvAttrs(const std::string& op, const mxplugin::Attrs& attrs,
                         const char* no_bias_default);

// The cached plan of geometry g on dev_id (descriptors made on first use).
std::shared_ptr<ConvPlan> GetConvPlan(const std::string& op, int dev_id,
                                      const ConvGeometry& g);
// Fill in the forward algorithm, or the data- and weight-gradient ones
// (once per plan; searches are serialized).
void FindForward(const std::string& op, cudnnHandle_t h, ConvPlan* p);
void FindBackward(const std::string& op, cudnnHandle_t h, ConvPlan* p);

// alpha = 1 and beta for a write request, in the compute type's host
// representation.
const void* DnnOne(int dtype);
const void* BetaFor(int req, int dtype);

// Reads (and checks) MX_CUDA_VERBOSE and MX_CUDA_ALLOW_TF32 now, so that
// a bad value fails the plugin's load.
void ReadConvEnv();

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_CONV_PLAN_H_
