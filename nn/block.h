// Block: the unit networks are built from (Gluon style).
//
// A Block owns parameters and child blocks, registered by name in its
// constructor, and computes outputs from inputs in Forward, written as
// ordinary imperative C++ on NDArrays. Parameters are addressed by
// structured names: the path of child names down to the block that owns the
// parameter, then the parameter's name, joined with '.' ("0.weight",
// "encoder.fc1.bias").
//
//   class Mlp : public nn::Block {
//    public:
//     Mlp() : fc1_(RegisterChild("fc1", std::make_shared<nn::Dense>(64))),
//             fc2_(RegisterChild("fc2", std::make_shared<nn::Dense>(10))) {}
//     std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
//       return {(*fc2_)(nd::relu((*fc1_)(x[0])))};
//     }
//    private:
//     std::shared_ptr<nn::Dense> fc1_, fc2_;
//   };
//   Mlp net;  net.Initialize(nn::init::Xavier());
//   NDArray y = net(x);                 // CollectParams(): fc1.weight, ...
#ifndef MXCORE_NN_BLOCK_H_
#define MXCORE_NN_BLOCK_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ndarray/ndarray.h"
#include "nn/initializer.h"
#include "nn/parameter.h"
#include "nn/params_file.h"

namespace mx {
namespace nn {

// Parameters by structured name, in registration order (depth first).
using ParameterList = std::vector<std::pair<std::string, ParameterPtr>>;

class Block {
 public:
  virtual ~Block() = default;
  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  // The computation, on the block's inputs. Called through Call/operator().
  virtual std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) = 0;

  // Sets the shapes of this block's own parameters whose shape is unknown,
  // from the first inputs. Called before Forward while such a parameter
  // exists; blocks with deferred-shape parameters must override it.
  virtual void InferShape(const std::vector<NDArray>& inputs);

  // Completes deferred shapes (InferShape), then runs Forward. Throws
  // StateError naming the block and each parameter whose shape stays
  // unknown.
  virtual std::vector<NDArray> Call(const std::vector<NDArray>& inputs);
  std::vector<NDArray> operator()(const std::vector<NDArray>& inputs) {
    return Call(inputs);
  }
  // One input, one output (InvalidArgument when Forward returns more).
  NDArray operator()(const NDArray& input);

  // Every parameter of the tree, by structured name. A parameter shared by
  // several blocks is listed once, under its first name.
  ParameterList CollectParams() const;
  // This block's own parameters and children, by local name.
  const ParameterList& own_params() const { return params_; }
  const std::vector<std::pair<std::string, std::shared_ptr<Block>>>& children()
      const {
    return children_;
  }

  // Initializes every parameter of the tree (see Parameter::Initialize).
  void Initialize(const InitializerPtr& init = init::Uniform(),
                  Context ctx = Context::CPU(), bool force_reinit = false);
  // Clears the gradient buffers of every parameter.
  void ZeroGrad();

  // Turns hybridization on or off for every HybridBlock of the tree (plain
  // blocks just pass it to their children).
  virtual void Hybridize(bool active = true);

  // Saves every initialized parameter under its structured name, in
  // mxcore's format (params_file.h) or MXNet's (Gluon's save_parameters
  // layout, for mx.gluon's load_parameters). Throws StateError naming
  // uninitialized parameters.
  void SaveParameters(const std::string& file,
                      ParamsFormat format = ParamsFormat::kMxcore) const;
  struct LoadOptions {
    // Parameters absent from the file keep their values.
    bool allow_missing = false;
    // Names in the file that the block does not have are skipped.
    bool ignore_extra = false;
  };
  // Loads values by structured name from either format (detected by
  // magic); shapes must match (unknown dimensions are taken from the file).
  // MXNet's "arg:" / "aux:" name prefixes are dropped, as Gluon does.
  // Throws InvalidArgument naming the file and the missing / extra /
  // mismatched / unnamed parameters.
  void LoadParameters(const std::string& file, LoadOptions options,
                      Context ctx = Context::CPU());
  void LoadParameters(const std::string& file) {
    LoadParameters(file, LoadOptions());
  }

  // The block's kind in messages ("Dense", "Block").
  virtual std::string TypeName() const { return "Block"; }

 protected:
  // Registers a child under `name` (no '.'); returns it for storing in a
  // typed member. A child of that name is replaced in place (MXNet's
  // `self.dense = ...`), and a hybridized block of the tree then traces
  // again. Throws AlreadyExists when `name` is a parameter.
  template <typename B>
  std::shared_ptr<B> RegisterChild(const std::string& name,
                                   std::shared_ptr<B> child) {
    AddChild(name, child);
    return child;
  }
  // Creates and registers a parameter.
  ParameterPtr RegisterParameter(const std::string& name, const TShape& shape,
                                 Parameter::Options options = {});
  // Registers an existing (possibly shared) parameter. Both forms replace
  // a parameter of that name (MXNet 2); AlreadyExists when it is a child.
  ParameterPtr RegisterParameter(const std::string& name, ParameterPtr param);

  // For graph-backed blocks without children (SymbolBlock): the name may
  // contain '.', as graph input names do.
  ParameterPtr RegisterGraphParameter(const std::string& name,
                                      ParameterPtr param);

  // Parameters of this block whose shape is unknown, as "weight (0,784)".
  std::vector<std::string> UnknownShapeParams() const;

 private:
  void AddChild(const std::string& name, std::shared_ptr<Block> child);
  void CheckName(const std::string& name, bool for_child,
                 bool allow_dots = false) const;
  ParameterPtr* FindParam(const std::string& name);
  const ParameterPtr* FindParam(const std::string& name) const;

  ParameterList params_;
  std::vector<std::pair<std::string, std::shared_ptr<Block>>> children_;
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_BLOCK_H_
