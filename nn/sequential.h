// Sequential containers: children run one after another, each on the
// previous one's outputs. Children are named by position ("0", "1", ...),
// so parameters are "0.weight", "1.bias", ...
//
//   auto net = std::make_shared<nn::HybridSequential>();
//   net->Add(std::make_shared<nn::Dense>(64, "relu"))
//       .Add(std::make_shared<nn::Dense>(10));
//   net->Initialize();
//   net->Hybridize();                  // the whole chain becomes one graph
#ifndef MXCORE_NN_SEQUENTIAL_H_
#define MXCORE_NN_SEQUENTIAL_H_

#include <memory>
#include <string>
#include <vector>

#include "nn/hybrid_block.h"

namespace mx {
namespace nn {

// Any blocks, run imperatively (hybridized children still use their own
// CachedOps).
class Sequential : public Block {
 public:
  Sequential& Add(std::shared_ptr<Block> block);
  size_t size() const { return children().size(); }
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "Sequential"; }
};

// HybridBlocks only; hybridizing traces the whole chain into one graph.
class HybridSequential : public HybridBlock {
 public:
  HybridSequential& Add(std::shared_ptr<HybridBlock> block);
  size_t size() const { return children().size(); }
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "HybridSequential"; }
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_SEQUENTIAL_H_
