// Trains a 2-layer MLP on a fixed random batch for 30 SGD steps and checks
// that the loss fell: the smallest program that exercises mxcore's
// arrays, autograd, Blocks and optimizer from another Bazel workspace.
#include <cstdio>
#include <memory>

#include "autograd/autograd.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "nn/nn.h"

int main() {
  using namespace mx;  // NOLINT: an example
  random::Seed(7);
  auto net = std::make_shared<nn::HybridSequential>();
  net->Add(std::make_shared<nn::Dense>(32, "relu"))
      .Add(std::make_shared<nn::Dense>(4));
  net->Initialize(nn::init::Xavier());
  net->Hybridize();
  nn::SoftmaxCrossEntropyLoss loss_fn;
  nn::SGDOptions sgd;
  sgd.learning_rate = 0.5;
  nn::Trainer trainer(net->CollectParams(), nn::MakeSGD(sgd));

  const NDArray x = nd::random_uniform(-1, 1, {16, 8});
  // Class labels 0..3 (truncated by the int32 cast), as float32.
  const NDArray y = nd::cast(
      nd::cast(nd::random_uniform(0, 3.99, {16}), DType::kInt32),
      DType::kFloat32);
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({(*net)(x), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(16);
    last = nd::mean(loss).ToVector<float>()[0];
    if (step == 0) first = last;
  }
  std::printf("loss %.4f -> %.4f after 30 steps\n", first, last);
  if (!(last < 0.5f * first)) {
    std::printf("FAILED: the loss did not halve\n");
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
