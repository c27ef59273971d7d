#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

using Vec = std::vector<double>;

struct Hyper {
  double lr = 0.1, wd = 0, rescale = 1, clip = -1;
  double momentum = 0.9;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

// `x` stored as `dtype` (the kernels keep weights and states in it).
double Stored(double x, DType dtype) {
  if (dtype == DType::kFloat16) {
    return static_cast<float>(float16(static_cast<float>(x)));
  }
  return dtype == DType::kFloat32 ? static_cast<float>(x) : x;
}

// Plain-loop references, one step each, in double; new values are rounded
// to `dtype` when stored, the weight being computed from unrounded states.
// MXNet clips when clip_gradient >= 0.
double ClipRef(double x, const Hyper& h) {
  return h.clip >= 0 ? std::max(-h.clip, std::min(h.clip, x)) : x;
}

double PrepRef(double g, const Hyper& h) { return ClipRef(g * h.rescale, h); }

void SgdRef(Vec* w, const Vec& g, const Hyper& h, DType dtype) {
  for (size_t i = 0; i < w->size(); ++i) {
    const double wi = (*w)[i];
    (*w)[i] = Stored(wi - h.lr * (PrepRef(g[i], h) + h.wd * wi), dtype);
  }
}

void SgdMomRef(Vec* w, const Vec& g, Vec* mom, const Hyper& h, DType dtype) {
  for (size_t i = 0; i < w->size(); ++i) {
    const double wi = (*w)[i];
    const double m =
        h.momentum * (*mom)[i] - h.lr * (PrepRef(g[i], h) + h.wd * wi);
    (*mom)[i] = Stored(m, dtype);
    (*w)[i] = Stored(wi + m, dtype);
  }
}

void AdamRef(Vec* w, const Vec& grad, Vec* mean, Vec* var, const Hyper& h,
             DType dtype) {
  for (size_t i = 0; i < w->size(); ++i) {
    const double wi = (*w)[i];
    // MXNet's AdamUpdateKernel clips after adding the weight decay.
    const double g = ClipRef(grad[i] * h.rescale + h.wd * wi, h);
    const double m = h.beta1 * (*mean)[i] + (1 - h.beta1) * g;
    const double v = h.beta2 * (*var)[i] + (1 - h.beta2) * g * g;
    (*mean)[i] = Stored(m, dtype);
    (*var)[i] = Stored(v, dtype);
    (*w)[i] = Stored(wi - h.lr * m / (std::sqrt(v) + h.eps), dtype);
  }
}

std::vector<Hyper> HyperCases() {
  std::vector<Hyper> cases(4);
  cases[1].wd = 0.05;
  cases[2].rescale = 0.5;
  cases[2].clip = 0.3;  // Clips most rescaled gradients in [-2, 2).
  cases[3].lr = 0.02;
  cases[3].wd = 0.01;
  cases[3].rescale = 2;
  cases[3].clip = 1;
  cases[3].momentum = 0.5;
  cases[3].beta1 = 0.8;
  cases[3].beta2 = 0.99;
  cases[3].eps = 1e-3;
  return cases;
}

double Tol(DType dtype) {
  return dtype == DType::kFloat16   ? 2e-3
         : dtype == DType::kFloat32 ? 1e-5
                                    : 1e-12;
}

const TShape kShape{3, 5};
constexpr int kSteps = 4;

TEST(SgdUpdate, MatchesReferenceOverSteps) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    for (const Hyper& h : HyperCases()) {
      SCOPED_TRACE(::testing::Message()
                   << DTypeName(dtype) << " lr=" << h.lr << " wd=" << h.wd
                   << " clip=" << h.clip);
      NDArray w = RandomArray(kShape, dtype, -1, 1, 1);
      NDArray view = w.Reshape({15});  // Shares w's memory.
      Vec wr = ToDouble(w);
      for (int step = 0; step < kSteps; ++step) {
        NDArray g = RandomArray(kShape, dtype, -2, 2, 100 + step);
        const uint64_t version = w.version();
        nd::sgd_update(w, g, h.lr, h.wd, h.rescale, h.clip);
        SgdRef(&wr, ToDouble(g), h, dtype);
        EXPECT_EQ(w.version(), version + 1);
      }
      EXPECT_TRUE(AllClose(ToDouble(w), wr, Tol(dtype), Tol(dtype)));
      EXPECT_TRUE(AllClose(ToDouble(view), wr, Tol(dtype), Tol(dtype)));
    }
  }
}

TEST(SgdMomUpdate, MatchesReferenceOverSteps) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    for (const Hyper& h : HyperCases()) {
      SCOPED_TRACE(::testing::Message()
                   << DTypeName(dtype) << " lr=" << h.lr << " wd=" << h.wd
                   << " clip=" << h.clip);
      NDArray w = RandomArray(kShape, dtype, -1, 1, 2);
      NDArray mom = nd::zeros(kShape, Context::CPU(), dtype);
      Vec wr = ToDouble(w), mr = ToDouble(mom);
      for (int step = 0; step < kSteps; ++step) {
        NDArray g = RandomArray(kShape, dtype, -2, 2, 200 + step);
        nd::sgd_mom_update(w, g, mom, h.lr, h.momentum, h.wd, h.rescale,
                           h.clip);
        SgdMomRef(&wr, ToDouble(g), &mr, h, dtype);
      }
      EXPECT_TRUE(AllClose(ToDouble(w), wr, Tol(dtype), Tol(dtype)));
      EXPECT_TRUE(AllClose(ToDouble(mom), mr, Tol(dtype), Tol(dtype)));
    }
  }
}

// Many parameters in one op: exactly what sgd_mom_update does on each,
// including parameters of different shapes and a mixed write request.
TEST(MultiSgdMomUpdate, EqualsOneUpdatePerParameter) {
  const std::vector<TShape> shapes = {{3, 4}, {7}, {2, 3, 5}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    std::vector<NDArray> w, g, mom, w_ref, mom_ref;
    for (size_t k = 0; k < shapes.size(); ++k) {
      w.push_back(RandomArray(shapes[k], dtype, -1, 1, 10 + k));
      g.push_back(RandomArray(shapes[k], dtype, -2, 2, 20 + k));
      mom.push_back(RandomArray(shapes[k], dtype, -0.1, 0.1, 30 + k));
      w_ref.push_back(w.back().Copy(Context::CPU()));
      mom_ref.push_back(mom.back().Copy(Context::CPU()));
    }
    for (size_t k = 0; k < shapes.size(); ++k) {
      nd::sgd_mom_update(w_ref[k], g[k], mom_ref[k], 0.1, 0.9, 0.01, 0.5, 0.3);
    }
    std::vector<NDArray> in;
    for (size_t k = 0; k < shapes.size(); ++k) {
      in.insert(in.end(), {w[k], g[k], mom[k]});
    }
    std::vector<NDArray> out = w;
    imperative::Invoke(
        MakeAttrs(OpRegistry::Get()->Lookup("_multi_sgd_mom_update"),
                  {{"lr", "0.1"},
                   {"momentum", "0.9"},
                   {"wd", "0.01"},
                   {"rescale_grad", "0.5"},
                   {"clip_gradient", "0.3"},
                   {"num_weights", "3"}}),
        in, &out);
    for (size_t k = 0; k < shapes.size(); ++k) {
      EXPECT_EQ(ToDouble(w[k]), ToDouble(w_ref[k])) << "weight " << k;
      EXPECT_EQ(ToDouble(mom[k]), ToDouble(mom_ref[k])) << "mom " << k;
    }
  }
  // A group whose shapes disagree is a ShapeError; num_weights 0 is an
  // InvalidArgument.
  EXPECT_THROW(
      nd::CallMulti("_multi_sgd_mom_update",
                    {RandomArray({3}), RandomArray({4}), RandomArray({3})},
                    {{"lr", "0.1"}, {"num_weights", "1"}}),
      ShapeError);
  EXPECT_THROW(nd::CallMulti("_multi_sgd_mom_update", {},
                             {{"lr", "0.1"}, {"num_weights", "0"}}),
               InvalidArgument);
}

TEST(AdamUpdate, MatchesReferenceOverSteps) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    for (const Hyper& h : HyperCases()) {
      SCOPED_TRACE(::testing::Message()
                   << DTypeName(dtype) << " lr=" << h.lr << " wd=" << h.wd
                   << " clip=" << h.clip);
      NDArray w = RandomArray(kShape, dtype, -1, 1, 3);
      NDArray mean = nd::zeros(kShape, Context::CPU(), dtype);
      NDArray var = nd::zeros(kShape, Context::CPU(), dtype);
      Vec wr = ToDouble(w), mr = ToDouble(mean), vr = ToDouble(var);
      for (int step = 0; step < kSteps; ++step) {
        NDArray g = RandomArray(kShape, dtype, -2, 2, 300 + step);
        nd::adam_update(w, g, mean, var, h.lr, h.beta1, h.beta2, h.eps, h.wd,
                        h.rescale, h.clip);
        AdamRef(&wr, ToDouble(g), &mr, &vr, h, dtype);
      }
      const double tol = Tol(dtype);
      EXPECT_TRUE(AllClose(ToDouble(w), wr, tol, tol));
      EXPECT_TRUE(AllClose(ToDouble(mean), mr, tol, tol));
      EXPECT_TRUE(AllClose(ToDouble(var), vr, tol, tol));
    }
  }
}

TEST(OptimizerUpdates, ClippingBoundsTheStep) {
  NDArray w = ArrayOf({4}, {0, 0, 0, 0});
  NDArray g = ArrayOf({4}, {-100, -0.1, 0.1, 100});
  nd::sgd_update(w, g, /*lr=*/1, /*wd=*/0, /*rescale_grad=*/1,
                 /*clip_gradient=*/0.5);
  EXPECT_TRUE(AllClose(ToDouble(w), {0.5, 0.1, -0.1, -0.5}));
  // As MXNet's kernels: clip_gradient 0 clips every gradient to 0, a
  // negative one turns clipping off.
  nd::sgd_update(w, g, 1, 0, 1, 0);
  EXPECT_TRUE(AllClose(ToDouble(w), {0.5, 0.1, -0.1, -0.5}));
  nd::sgd_update(w, g, 1, 0, 1, -1);
  EXPECT_TRUE(AllClose(ToDouble(w), {100.5, 0.2, -0.2, -100.5}));
}

// MXNet's adam_update adds wd * weight before clipping: with w = 1,
// grad = -1.5, wd = 1 and clip 1, g = clip(-0.5) = -0.5 (not clip(-1.5) + 1
// = 0, which would leave the weight at 1).
TEST(AdamUpdate, WeightDecayIsClippedWithTheGradient) {
  NDArray w = ArrayOf({1}, {1}, DType::kFloat64);
  NDArray mean = ArrayOf({1}, {0}, DType::kFloat64);
  NDArray var = ArrayOf({1}, {0}, DType::kFloat64);
  nd::adam_update(w, ArrayOf({1}, {-1.5}, DType::kFloat64), mean, var,
                  /*lr=*/0.1, 0.9, 0.999, 1e-8, /*wd=*/1, /*rescale_grad=*/1,
                  /*clip_gradient=*/1);
  const double m = 0.1 * -0.5, v = 0.001 * 0.25;
  EXPECT_TRUE(AllClose(ToDouble(mean), {m}, 1e-12, 1e-12));
  EXPECT_TRUE(AllClose(ToDouble(var), {v}, 1e-12, 1e-12));
  EXPECT_TRUE(AllClose(ToDouble(w), {1 - 0.1 * m / (std::sqrt(v) + 1e-8)},
                       1e-12, 1e-12));
}

TEST(OptimizerUpdates, WriteInPlaceOnWeightAndStates) {
  NDArray w = ArrayOf({3}, {1, 2, 3}), g = ArrayOf({3}, {1, 1, 1});
  NDArray mom = nd::zeros({3}), mean = nd::zeros({3}), var = nd::zeros({3});
  const NDArray alias = w;  // Same chunk: sees the update only if in place.
  nd::sgd_mom_update(w, g, mom, 0.5, 0.9);
  EXPECT_TRUE(alias.SharesChunkWith(w));
  EXPECT_TRUE(AllClose(ToDouble(alias), {0.5, 1.5, 2.5}));
  EXPECT_TRUE(AllClose(ToDouble(mom), {-0.5, -0.5, -0.5}));
  nd::adam_update(w, g, mean, var, 0.1);
  EXPECT_TRUE(AllClose(ToDouble(mean), {0.1, 0.1, 0.1}));
  EXPECT_TRUE(AllClose(ToDouble(var), {0.001, 0.001, 0.001}));
  // mean / sqrt(var) = 0.1 / sqrt(0.001) ~= 3.1623.
  EXPECT_TRUE(AllClose(ToDouble(alias), {0.18377, 1.18377, 2.18377}, 1e-4));

  // The ops declare the in-place pairing and the mutated states.
  for (const char* name : {"sgd_update", "sgd_mom_update", "adam_update"}) {
    const Op& op = OpRegistry::Get()->Lookup(name);
    const NodeAttrs attrs = MakeAttrs(op, {{"lr", "0.1"}});
    const auto inplace = op.InplaceOptions(attrs);
    ASSERT_EQ(inplace.size(), 1u) << name;
    EXPECT_EQ(inplace[0], (std::pair<int, int>{0, 0})) << name;
  }
  auto mutated = [](const char* name) {
    const Op& op = OpRegistry::Get()->Lookup(name);
    return op.MutateInputs(MakeAttrs(op, {{"lr", "0.1"}}));
  };
  EXPECT_EQ(mutated("sgd_update"), std::vector<int>{});
  EXPECT_EQ(mutated("sgd_mom_update"), std::vector<int>{2});
  EXPECT_EQ(mutated("adam_update"), (std::vector<int>{2, 3}));
}

TEST(OptimizerUpdates, WithoutAnOutputWeightIsKept) {
  NDArray w = ArrayOf({2}, {1, 2}), g = ArrayOf({2}, {10, 20});
  NDArray out = nd::Call("sgd_update", {w, g}, {{"lr", "0.1"}});
  EXPECT_FALSE(out.SharesChunkWith(w));
  EXPECT_TRUE(AllClose(ToDouble(out), {0, 0}));
  EXPECT_TRUE(AllClose(ToDouble(w), {1, 2}));
  // MXNet-style attributes from symbol files are accepted.
  NDArray out2 =
      nd::Call("sgd_update", {w, g}, {{"lr", "0.1"}, {"lazy_update", "True"}});
  EXPECT_TRUE(AllClose(ToDouble(out2), {0, 0}));
}

TEST(OptimizerUpdates, BadInputsAreTypedErrors) {
  NDArray w = nd::zeros({2, 3});
  std::string msg = ErrorOf<ShapeError>([&] {
    nd::sgd_update(w, nd::zeros({3, 2}), 0.1);
  });
  for (const char* part : {"sgd_update", "grad", "(3,2)", "(2,3)"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in " << msg;
  }
  msg = ErrorOf<ShapeError>([&] {
    nd::sgd_mom_update(w, nd::zeros({2, 3}), nd::zeros({6}), 0.1);
  });
  EXPECT_NE(msg.find("mom"), std::string::npos) << msg;
  msg = ErrorOf<ShapeError>([&] {
    nd::adam_update(w, nd::zeros({2, 3}), nd::zeros({2, 3}), nd::zeros({2}),
                    0.1);
  });
  EXPECT_NE(msg.find("var"), std::string::npos) << msg;
  msg = ErrorOf<DTypeError>([&] {
    nd::sgd_update(w, nd::zeros({2, 3}, Context::CPU(), DType::kFloat64), 0.1);
  });
  EXPECT_NE(msg.find("grad"), std::string::npos) << msg;
  NDArray wi = nd::zeros({2}, Context::CPU(), DType::kInt32);
  msg = ErrorOf<DTypeError>([&] {
    nd::sgd_update(wi, nd::zeros({2}, Context::CPU(), DType::kInt32), 0.1);
  });
  EXPECT_NE(msg.find("sgd_update"), std::string::npos) << msg;
  // lr is required.
  msg = ErrorOf<InvalidArgument>([&] {
    nd::Call("adam_update", {w, w, w, w}, {{"beta1", "0.9"}});
  });
  EXPECT_NE(msg.find("lr"), std::string::npos) << msg;
  EXPECT_THROW(nd::Call("sgd_update", {w}, {{"lr", "1"}}), InvalidArgument);
}

}  // namespace
}  // namespace testing
}  // namespace mx
