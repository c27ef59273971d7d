// Parameter: a named, trainable (or auxiliary) array of a Block.
//
// A parameter is declared with a shape that may be partly unknown (a
// dimension <= 0, e.g. a Dense layer's input size before it has seen data).
// Initialize() then either creates the array right away, or, while the
// shape is unknown, remembers the initializer and creates the array as soon
// as SetShape() makes the shape known ("deferred initialization"). Unless
// the gradient request is kNull, the array gets an autograd gradient buffer
// when it is created.
//
//   auto w = std::make_shared<nn::Parameter>("weight", TShape{10, 0});
//   w->Initialize(nn::init::Xavier());      // deferred: in_units unknown
//   w->SetShape({10, 784});                 // now created and initialized
//   NDArray y = nd::dot(x, w->data(), false, true);
//   ... autograd::Backward(...); w->grad();
#ifndef MXCORE_NN_PARAMETER_H_
#define MXCORE_NN_PARAMETER_H_

#include <memory>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"
#include "nn/initializer.h"

namespace mx {
namespace nn {

// What backward does with the parameter's gradient buffer.
enum class GradReq {
  kWrite,  // overwrite on each backward
  kAdd,    // accumulate (clear with ZeroGrad)
  kNull,   // no gradient (auxiliary states such as running statistics)
};

class Parameter {
 public:
  struct Options {
    DType dtype = DType::kFloat32;
    // Used instead of the initializer passed to Initialize() when set.
    InitializerPtr init;
    GradReq grad_req = GradReq::kWrite;
  };

  // `name` is the local name inside its block ("weight"); blocks build the
  // structured names ("0.weight"). Dimensions <= 0 are unknown.
  Parameter(std::string name, TShape shape, Options options);
  Parameter(std::string name, TShape shape)
      : Parameter(std::move(name), std::move(shape), Options()) {}

  const std::string& name() const { return name_; }
  // Unknown dimensions are reported as 0.
  const TShape& shape() const { return shape_; }
  bool shape_known() const;
  DType dtype() const { return options_.dtype; }
  GradReq grad_req() const { return options_.grad_req; }
  const InitializerPtr& initializer() const { return options_.init; }
  void set_initializer(InitializerPtr init) { options_.init = std::move(init); }

  // Fills in unknown dimensions. Throws ShapeError naming the parameter when
  // `shape` contradicts a known dimension or the rank. When the shape
  // becomes known and Initialize() was already called, creates the array.
  void SetShape(const TShape& shape);

  // Creates and initializes the array with the parameter's own initializer,
  // else `default_init`, on `ctx`; with an unknown shape the creation waits
  // for SetShape. An initialized parameter is left alone unless
  // `force_reinit`.
  void Initialize(const InitializerPtr& default_init = nullptr,
                  Context ctx = Context::CPU(), bool force_reinit = false);
  bool is_initialized() const { return !data_.is_none(); }
  // Initialize() was called but the shape is still unknown.
  bool is_deferred() const { return deferred_; }

  // The array. While a HybridBlock traces its Forward, the variable the
  // trace uses for this parameter instead. Throws StateError naming the
  // parameter when it is not initialized (saying whether its shape is
  // still unknown).
  NDArray data() const;
  // The gradient buffer. Throws StateError when not initialized or when
  // the gradient request is kNull.
  NDArray grad() const;
  // Sets the gradient buffer to zeros.
  void ZeroGrad();

  // Copies `value` into the parameter (whose shape must match it, unknown
  // dimensions are taken from it; dtype is converted). Creates the array
  // when the parameter is not initialized yet. Used by loading.
  void SetData(const NDArray& value, Context ctx = Context::CPU());

 private:
  void Create(const InitializerPtr& init, Context ctx);
  NDArray RealData() const;

  std::string name_;
  TShape shape_;
  Options options_;
  NDArray data_;
  bool deferred_ = false;
  InitializerPtr deferred_init_;
  Context deferred_ctx_;
};

using ParameterPtr = std::shared_ptr<Parameter>;

// Renders a shape with unknown dimensions as "(0,784)".
std::string ShapeString(const TShape& shape);

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_PARAMETER_H_
