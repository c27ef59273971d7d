#include "nn/initializer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "imperative/nd.h"

namespace mx {
namespace nn {
namespace {

class ConstantInit : public Initializer {
 public:
  ConstantInit(double value, std::string label)
      : value_(value), label_(std::move(label)) {}
  NDArray Create(const std::string&, const TShape& shape, DType dtype,
                 Context ctx) const override {
    return nd::full(shape, value_, ctx, dtype);
  }
  std::string ToString() const override { return label_; }

 private:
  double value_;
  std::string label_;
};

class UniformInit : public Initializer {
 public:
  explicit UniformInit(double scale) : scale_(scale) {}
  NDArray Create(const std::string&, const TShape& shape, DType dtype,
                 Context ctx) const override {
    return nd::random_uniform(-scale_, scale_, shape, ctx, dtype);
  }
  std::string ToString() const override {
    return absl::StrCat("Uniform(", scale_, ")");
  }

 private:
  double scale_;
};

class NormalInit : public Initializer {
 public:
  explicit NormalInit(double sigma) : sigma_(sigma) {}
  NDArray Create(const std::string&, const TShape& shape, DType dtype,
                 Context ctx) const override {
    return nd::random_normal(0, sigma_, shape, ctx, dtype);
  }
  std::string ToString() const override {
    return absl::StrCat("Normal(", sigma_, ")");
  }

 private:
  double sigma_;
};

class XavierInit : public Initializer {
 public:
  XavierInit(init::XavierRandom rnd, init::XavierFactor factor,
             double magnitude)
      : rnd_(rnd), factor_(factor), magnitude_(magnitude) {}

  NDArray Create(const std::string& name, const TShape& shape, DType dtype,
                 Context ctx) const override {
    if (shape.ndim() < 2) {
      throw ShapeError(absl::StrCat(
          "Xavier initializer for parameter \"", name, "\": shape ",
          shape.ToString(), " has fewer than 2 dimensions (no fan-in/out)"));
    }
    const double receptive =
        static_cast<double>(shape.ProdDims(2, shape.ndim()));
    const double fan_in = shape[1] * receptive;
    const double fan_out = shape[0] * receptive;
    double factor = (fan_in + fan_out) / 2;
    if (factor_ == init::XavierFactor::kIn) factor = fan_in;
    if (factor_ == init::XavierFactor::kOut) factor = fan_out;
    const double scale = std::sqrt(magnitude_ / factor);
    return rnd_ == init::XavierRandom::kUniform
               ? nd::random_uniform(-scale, scale, shape, ctx, dtype)
               : nd::random_normal(0, scale, shape, ctx, dtype);
  }
  std::string ToString() const override {
    return absl::StrCat(
        "Xavier(",
        rnd_ == init::XavierRandom::kUniform ? "uniform" : "gaussian", ", ",
        factor_ == init::XavierFactor::kAvg
            ? "avg"
            : (factor_ == init::XavierFactor::kIn ? "in" : "out"),
        ", ", magnitude_, ")");
  }

 private:
  init::XavierRandom rnd_;
  init::XavierFactor factor_;
  double magnitude_;
};

}  // namespace

namespace init {

InitializerPtr Zeros() { return std::make_shared<ConstantInit>(0, "Zeros"); }
InitializerPtr Ones() { return std::make_shared<ConstantInit>(1, "Ones"); }
InitializerPtr Constant(double value) {
  return std::make_shared<ConstantInit>(value,
                                        absl::StrCat("Constant(", value, ")"));
}
InitializerPtr Uniform(double scale) {
  return std::make_shared<UniformInit>(scale);
}
InitializerPtr Normal(double sigma) {
  return std::make_shared<NormalInit>(sigma);
}
InitializerPtr Xavier(XavierRandom rnd, XavierFactor factor, double magnitude) {
  return std::make_shared<XavierInit>(rnd, factor, magnitude);
}

}  // namespace init
}  // namespace nn
}  // namespace mx
