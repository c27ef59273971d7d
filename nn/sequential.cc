#include "nn/sequential.h"

#include <string>

namespace mx {
namespace nn {
namespace {

std::vector<NDArray> Chain(const Block& block,
                           const std::vector<NDArray>& inputs) {
  std::vector<NDArray> x = inputs;
  for (const auto& [name, child] : block.children()) x = child->Call(x);
  return x;
}

}  // namespace

Sequential& Sequential::Add(std::shared_ptr<Block> block) {
  RegisterChild(std::to_string(size()), std::move(block));
  return *this;
}

std::vector<NDArray> Sequential::Forward(const std::vector<NDArray>& inputs) {
  return Chain(*this, inputs);
}

HybridSequential& HybridSequential::Add(std::shared_ptr<HybridBlock> block) {
  RegisterChild(std::to_string(size()), std::move(block));
  return *this;
}

std::vector<NDArray> HybridSequential::Forward(
    const std::vector<NDArray>& inputs) {
  return Chain(*this, inputs);
}

}  // namespace nn
}  // namespace mx
