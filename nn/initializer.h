// Initializers: how a Parameter's values are drawn when it is initialized.
//
// An Initializer fills a freshly created array of the parameter's shape and
// dtype. They are immutable and shared (std::shared_ptr<const Initializer>),
// so one object can serve every parameter of a network.
//
//   auto w = nn::init::Xavier();             // uniform, avg fan, magnitude 3
//   auto b = nn::init::Zeros();
//   NDArray a = w->Create("dense0.weight", {64, 784}, DType::kFloat32,
//                         Context::CPU());
#ifndef MXCORE_NN_INITIALIZER_H_
#define MXCORE_NN_INITIALIZER_H_

#include <memory>
#include <string>

#include "ndarray/ndarray.h"

namespace mx {
namespace nn {

class Initializer {
 public:
  virtual ~Initializer() = default;
  // A new array of `shape` (known) holding the initial values. Runs outside
  // autograd recording and deferred compute. `name` is for error messages.
  virtual NDArray Create(const std::string& name, const TShape& shape,
                         DType dtype, Context ctx) const = 0;
  // "Zeros", "Uniform(0.07)", ... for messages.
  virtual std::string ToString() const = 0;
};

using InitializerPtr = std::shared_ptr<const Initializer>;

namespace init {

InitializerPtr Zeros();
InitializerPtr Ones();
InitializerPtr Constant(double value);
// Uniform in [-scale, scale].
InitializerPtr Uniform(double scale = 0.07);
// Normal with mean 0 and standard deviation `sigma`.
InitializerPtr Normal(double sigma = 0.01);

// Xavier/Glorot: scale = sqrt(magnitude / factor), where factor is fan_in,
// fan_out or their mean. For a shape (out, in, k...) fan_in = in * prod(k)
// and fan_out = out * prod(k). Uniform draws from [-scale, scale]; gaussian
// uses scale as the standard deviation. Requires at least 2 dimensions.
enum class XavierRandom { kUniform, kGaussian };
enum class XavierFactor { kAvg, kIn, kOut };
InitializerPtr Xavier(XavierRandom rnd = XavierRandom::kUniform,
                      XavierFactor factor = XavierFactor::kAvg,
                      double magnitude = 3);

}  // namespace init
}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_INITIALIZER_H_
