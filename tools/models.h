// The trainer's models, shared with the train-step benchmark.
#ifndef MXCORE_TOOLS_MODELS_H_
#define MXCORE_TOOLS_MODELS_H_

#include <memory>
#include <string>

#include "nn/sequential.h"

namespace mx {
namespace models {

// "mlp": Dense 256-relu, 128-relu, 10. "cnn": Conv 32 3x3-relu, max-pool,
// Conv 64 3x3-relu, max-pool, Dense 128-relu, 10. "cnn_bn": the CNN with
// padding 1, BatchNorm before each ReLU (Dense 128 too) and dropout 0.3
// before the last Dense. Throws InvalidArgument for another name.
std::shared_ptr<nn::HybridSequential> Make(const std::string& name);

}  // namespace models
}  // namespace mx

#endif  // MXCORE_TOOLS_MODELS_H_
