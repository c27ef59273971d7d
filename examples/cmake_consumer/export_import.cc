// Builds a small hybridized network with an installed mxcore, exports it
// as MXNet files, imports them again and checks that both give the same
// output; then checks that a typed error thrown inside libmxcore.so is
// caught here by its type.
#include <cstdio>
#include <memory>
#include <vector>

#include "base/error.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "nn/nn.h"

int main() {
  using namespace mx;  // NOLINT: an example
  random::Seed(3);
  auto net = std::make_shared<nn::HybridSequential>();
  net->Add(std::make_shared<nn::Dense>(16, "tanh"))
      .Add(std::make_shared<nn::Dense>(3));
  net->Initialize(nn::init::Xavier());
  net->Hybridize();
  const NDArray x = nd::random_uniform(-1, 1, {4, 5});
  const std::vector<float> want = (*net)(x).ToVector<float>();
  net->Export("consumer_model");
  auto again = nn::SymbolBlock::Import("consumer_model-symbol.json", {"data"},
                                       "consumer_model-0000.params");
  const std::vector<float> got = (*again)(x).ToVector<float>();
  if (got != want) {
    std::printf("FAILED: the imported model gives other outputs\n");
    return 1;
  }
  try {
    nd::add(nd::ones({2, 3}), nd::ones({4}));
    std::printf("FAILED: no error for shapes (2,3) + (4)\n");
    return 1;
  } catch (const ShapeError& e) {
    std::printf("typed error caught: %s\n", e.what());
  }
  std::printf("OK: %zu outputs equal after export and import\n", got.size());
  return 0;
}
