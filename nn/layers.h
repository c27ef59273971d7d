// Layers: the built-in HybridBlocks (Dense, Conv2D, pooling, BatchNorm,
// Dropout, Activation, Flatten, Embedding).
//
// Layers whose input size is not given infer it from their first input
// (InferShape), so only output sizes need to be written. Image layers use
// the NCHW layout. Weights use the initializer passed to
// Block::Initialize unless their Options name one; biases start at zero.
//
//   nn::Conv2D::Options opt;
//   opt.padding = {1, 1};
//   opt.activation = "relu";
//   auto conv = std::make_shared<nn::Conv2D>(16, TShape{3, 3}, opt);
//   auto fc = std::make_shared<nn::Dense>(10);       // in_units inferred
//   conv->Initialize(nn::init::Xavier());
//   NDArray y = (*conv)(images);                     // (N,16,H,W)
#ifndef MXCORE_NN_LAYERS_H_
#define MXCORE_NN_LAYERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nn/hybrid_block.h"

namespace mx {
namespace nn {

// y = activation(x W^T + b); x is flattened to (N, -1) first when
// `flatten`, else W applies to the last axis. weight: (units, in_units),
// bias: (units).
class Dense : public HybridBlock {
 public:
  struct Options {
    std::string activation;  // "" or an Activation act_type
    bool use_bias = true;
    bool flatten = true;
    int64_t in_units = 0;  // 0: inferred from the first input
    DType dtype = DType::kFloat32;
    InitializerPtr weight_init;  // null: Initialize()'s initializer
    InitializerPtr bias_init;    // null: zeros
  };
  Dense(int64_t units, Options options);
  explicit Dense(int64_t units, std::string activation = "");

  void InferShape(const std::vector<NDArray>& inputs) override;
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "Dense"; }
  const ParameterPtr& weight() const { return weight_; }
  const ParameterPtr& bias() const { return bias_; }  // null without bias

 private:
  int64_t units_;
  Options options_;
  ParameterPtr weight_, bias_;
};

// 2-D convolution over NCHW input. weight: (channels, in_channels / groups,
// kh, kw), bias: (channels).
class Conv2D : public HybridBlock {
 public:
  struct Options {
    TShape strides{1, 1};
    TShape padding{0, 0};
    TShape dilation{1, 1};
    int64_t groups = 1;
    std::string activation;
    bool use_bias = true;
    int64_t in_channels = 0;  // 0: inferred from the first input
    DType dtype = DType::kFloat32;
    InitializerPtr weight_init;
    InitializerPtr bias_init;
  };
  Conv2D(int64_t channels, TShape kernel, Options options);
  Conv2D(int64_t channels, TShape kernel)
      : Conv2D(channels, std::move(kernel), Options()) {}

  void InferShape(const std::vector<NDArray>& inputs) override;
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "Conv2D"; }
  const ParameterPtr& weight() const { return weight_; }
  const ParameterPtr& bias() const { return bias_; }

 private:
  int64_t channels_;
  TShape kernel_;
  Options options_;
  ParameterPtr weight_, bias_;
};

// Max or average pooling over NCHW input.
struct Pool2DOptions {
  TShape strides;  // empty: the pool size
  TShape padding{0, 0};
  bool ceil_mode = false;         // "full" pooling convention
  bool count_include_pad = true;  // average pooling only
};

class MaxPool2D : public HybridBlock {
 public:
  MaxPool2D(TShape pool_size, Pool2DOptions options);
  explicit MaxPool2D(TShape pool_size = {2, 2})
      : MaxPool2D(std::move(pool_size), Pool2DOptions()) {}
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "MaxPool2D"; }

 private:
  TShape pool_size_;
  Pool2DOptions options_;
};

class AvgPool2D : public HybridBlock {
 public:
  AvgPool2D(TShape pool_size, Pool2DOptions options);
  explicit AvgPool2D(TShape pool_size = {2, 2})
      : AvgPool2D(std::move(pool_size), Pool2DOptions()) {}
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "AvgPool2D"; }

 private:
  TShape pool_size_;
  Pool2DOptions options_;
};

// Average over H and W: (N,C,H,W) -> (N,C,1,1).
class GlobalAvgPool2D : public HybridBlock {
 public:
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "GlobalAvgPool2D"; }
};

// Batch normalization over every axis but `axis`. gamma and beta are
// trained; running_mean and running_var are auxiliary states (no gradient)
// updated in training mode and used otherwise.
class BatchNorm : public HybridBlock {
 public:
  struct Options {
    int axis = 1;
    double momentum = 0.9;
    double epsilon = 1e-5;
    bool center = true;  // learn beta (else it stays 0)
    bool scale = true;   // learn gamma (else it stays 1)
    bool use_global_stats = false;
    int64_t in_channels = 0;  // 0: inferred from the first input
  };
  explicit BatchNorm(Options options);
  BatchNorm() : BatchNorm(Options()) {}

  void InferShape(const std::vector<NDArray>& inputs) override;
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "BatchNorm"; }
  const ParameterPtr& gamma() const { return gamma_; }
  const ParameterPtr& beta() const { return beta_; }
  const ParameterPtr& running_mean() const { return running_mean_; }
  const ParameterPtr& running_var() const { return running_var_; }

 private:
  Options options_;
  ParameterPtr gamma_, beta_, running_mean_, running_var_;
};

// Zeroes a fraction `rate` of the inputs in training mode (scaling the rest
// by 1 / (1 - rate)); the identity otherwise.
class Dropout : public HybridBlock {
 public:
  explicit Dropout(double rate);
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "Dropout"; }

 private:
  double rate_;
};

// "relu", "sigmoid", "tanh" or "softrelu".
class Activation : public HybridBlock {
 public:
  explicit Activation(std::string act_type);
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "Activation"; }

 private:
  std::string act_type_;
};

// (N, d1, d2, ...) -> (N, d1 * d2 * ...).
class Flatten : public HybridBlock {
 public:
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "Flatten"; }
};

// Looks up rows of weight (input_dim, output_dim) at the indices in its
// input (any numeric dtype; clipped to [0, input_dim)):
// (d1, ..., dk) -> (d1, ..., dk, output_dim). Only the weight gets a
// gradient, the sum of the output gradients of the rows that read it.
//
//   nn::Embedding embed(/*input_dim=*/1000, /*output_dim=*/64);
//   embed.Initialize(nn::init::Uniform(0.1));
//   NDArray vectors = embed(token_ids);  // (batch, len) -> (batch, len, 64)
class Embedding : public HybridBlock {
 public:
  struct Options {
    DType dtype = DType::kFloat32;  // of the weight and the output
    InitializerPtr weight_init;     // null: Initialize()'s initializer
  };
  Embedding(int64_t input_dim, int64_t output_dim, Options options);
  Embedding(int64_t input_dim, int64_t output_dim)
      : Embedding(input_dim, output_dim, Options()) {}

  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "Embedding"; }
  const ParameterPtr& weight() const { return weight_; }

 private:
  int64_t input_dim_, output_dim_;
  Options options_;
  ParameterPtr weight_;
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_LAYERS_H_
