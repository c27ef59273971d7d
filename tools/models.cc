#include "tools/models.h"

#include "base/error.h"
#include "nn/layers.h"

namespace mx {
namespace models {

std::shared_ptr<nn::HybridSequential> Make(const std::string& name) {
  auto net = std::make_shared<nn::HybridSequential>();
  if (name == "mlp") {
    net->Add(std::make_shared<nn::Dense>(256, "relu"))
        .Add(std::make_shared<nn::Dense>(128, "relu"))
        .Add(std::make_shared<nn::Dense>(10));
  } else if (name == "cnn") {
    nn::Conv2D::Options conv;
    conv.activation = "relu";
    net->Add(std::make_shared<nn::Conv2D>(32, TShape{3, 3}, conv))
        .Add(std::make_shared<nn::MaxPool2D>())
        .Add(std::make_shared<nn::Conv2D>(64, TShape{3, 3}, conv))
        .Add(std::make_shared<nn::MaxPool2D>())
        .Add(std::make_shared<nn::Flatten>())
        .Add(std::make_shared<nn::Dense>(128, "relu"))
        .Add(std::make_shared<nn::Dense>(10));
  } else if (name == "cnn_bn") {
    // The CNN with padded convolutions, BatchNorm before each ReLU and
    // dropout before the classifier.
    nn::Conv2D::Options conv;
    conv.padding = TShape{1, 1};
    conv.use_bias = false;  // BatchNorm's beta is the bias.
    net->Add(std::make_shared<nn::Conv2D>(32, TShape{3, 3}, conv))
        .Add(std::make_shared<nn::BatchNorm>())
        .Add(std::make_shared<nn::Activation>("relu"))
        .Add(std::make_shared<nn::MaxPool2D>())
        .Add(std::make_shared<nn::Conv2D>(64, TShape{3, 3}, conv))
        .Add(std::make_shared<nn::BatchNorm>())
        .Add(std::make_shared<nn::Activation>("relu"))
        .Add(std::make_shared<nn::MaxPool2D>())
        .Add(std::make_shared<nn::Flatten>())
        .Add(std::make_shared<nn::Dense>(128))
        .Add(std::make_shared<nn::BatchNorm>())
        .Add(std::make_shared<nn::Activation>("relu"))
        .Add(std::make_shared<nn::Dropout>(0.3))
        .Add(std::make_shared<nn::Dense>(10));
  } else {
    throw InvalidArgument("model must be mlp, cnn or cnn_bn, not \"" + name +
                          "\"");
  }
  return net;
}

}  // namespace models
}  // namespace mx
