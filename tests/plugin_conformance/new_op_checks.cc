// New ops: shape and dtype inference agree with what the kernel writes,
// bad attributes are typed errors, gradients match central differences;
// deliberately broken ops (MX_CONFORMANCE_EXPECT_FAIL) fail with typed
// errors naming the plugin.
#include <cmath>
#include <iostream>
#include <limits>

#include "autograd/autograd.h"
#include "base/error.h"
#include "graph/node.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"
#include "tests/plugin_conformance/conformance.h"

namespace mx {
namespace conformance {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

const std::vector<TShape> kShapes = {{4}, {2, 3}, {2, 3, 5}};

std::vector<NDArray> Inputs(int n, const TShape& shape, DType dt) {
  std::vector<NDArray> in;
  for (int i = 0; i < n; ++i) {
    in.push_back(RandomArray(shape, dt, -1, 1, static_cast<uint32_t>(5 + i)));
  }
  return in;
}

// Runs op on inputs into outputs pre-filled with NaN of the inferred shapes
// and dtypes: every element must be written, and the result must equal
// that of a plain Invoke. Returns false when the kernel declined the dtype.
bool CheckInferenceAgainstKernel(const Op& op, const NodeAttrs& attrs,
                                 const std::vector<NDArray>& in) {
  std::vector<TShape> in_shapes, out_shapes(op.NumOutputs(attrs));
  std::vector<DType> in_types, out_types(out_shapes.size(), DType::kUnknown);
  for (const NDArray& x : in) {
    in_shapes.push_back(x.shape());
    in_types.push_back(x.dtype());
  }
  op.infer_shape()(attrs, &in_shapes, &out_shapes);
  if (op.infer_type()) {
    op.infer_type()(attrs, &in_types, &out_types);
  } else {
    for (DType& t : out_types) t = in[0].dtype();
  }
  std::vector<NDArray> plain;
  try {
    plain = imperative::Invoke(op.name(), in, attrs.dict);
    for (const NDArray& y : plain) y.WaitToRead();
  } catch (const DTypeError&) {
    return false;
  }
  std::vector<NDArray> out;
  for (size_t k = 0; k < out_shapes.size(); ++k) {
    out.push_back(testing::ArrayOf(
        out_shapes[k],
        std::vector<double>(out_shapes[k].Size(),
                            std::numeric_limits<double>::quiet_NaN()),
        out_types[k]));
  }
  imperative::Invoke(attrs, in, &out);
  for (size_t k = 0; k < out.size(); ++k) {
    EXPECT_EQ(plain[k].shape(), out_shapes[k]) << "output " << k;
    EXPECT_EQ(plain[k].dtype(), out_types[k]) << "output " << k;
    const std::vector<double> v = ToDouble(out[k]);
    for (size_t e = 0; e < v.size(); ++e) {
      if (std::isnan(v[e])) {
        ADD_FAILURE() << "output " << k << " element " << e
                      << " not written by the kernel";
        break;
      }
    }
    EXPECT_TRUE(AllClose(v, ToDouble(plain[k]), 0, 0)) << "output " << k;
  }
  return true;
}

// Central differences in float32 (for ops that decline float64):
// L = sum(head * op(x)).
void CheckGradientFloat32(const std::string& op, const AttrDict& attrs,
                          std::vector<NDArray> in) {
  const NDArray head = RandomArray(imperative::Invoke(op, in, attrs)[0].shape(),
                                   DType::kFloat32, -1, 1, 3);
  const std::vector<double> h = ToDouble(head);
  auto loss = [&](const std::vector<NDArray>& x) {
    const std::vector<double> y = ToDouble(imperative::Invoke(op, x, attrs)[0]);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += h[i] * y[i];
    return s;
  };
  std::vector<NDArray> vars = in;
  for (NDArray& x : vars) autograd::AttachGrad(&x);
  {
    autograd::RecordScope record;
    autograd::Backward({imperative::Invoke(op, vars, attrs)[0]}, {head});
  }
  const double eps = 1e-2;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::vector<double> analytic = ToDouble(vars[i].grad());
    std::vector<double> base = ToDouble(in[i]), numeric(base.size());
    for (size_t e = 0; e < base.size(); ++e) {
      std::vector<NDArray> x = in;
      std::vector<double> p = base;
      p[e] += eps;
      x[i] = testing::ArrayOf(in[i].shape(), p);
      const double up = loss(x);
      p[e] -= 2 * eps;
      x[i] = testing::ArrayOf(in[i].shape(), p);
      numeric[e] = (up - loss(x)) / (2 * eps);
    }
    EXPECT_TRUE(AllClose(analytic, numeric, 1e-2, 1e-3)) << "input " << i;
  }
}

void CheckNewOp(const std::string& name) {
  const Op& op = OpRegistry::Get()->Lookup(name);
  for (const AttrDict& dict : NewOpAttrs(name)) {
    NodeAttrs attrs;
    try {
      attrs = MakeAttrs(op, dict);
    } catch (const InvalidArgument& e) {
      ADD_FAILURE() << name << ": " << e.what()
                    << "; add an attribute set for this op to NewOpAttrs in "
                       "tests/plugin_conformance/op_table.cc";
      return;
    }
    const int n = op.NumInputs(attrs);
    bool float32_ran = false, float64_ran = false;
    for (const TShape& shape : kShapes) {
      for (DType dt : {DType::kFloat32, DType::kFloat64}) {
        SCOPED_TRACE(name + " on " + ::testing::PrintToString(shape) + " " +
                     DTypeName(dt));
        const bool ran =
            CheckInferenceAgainstKernel(op, attrs, Inputs(n, shape, dt));
        if (!ran) ++Counts().dtypes_declined;
        float32_ran |= ran && dt == DType::kFloat32;
        float64_ran |= ran && dt == DType::kFloat64;
      }
    }
    EXPECT_TRUE(float32_ran) << name << ": float32 must work";
    // Bad attributes are typed errors (InvalidArgument) at invocation.
    const std::vector<NDArray> in = Inputs(n, {2, 3}, DType::kFloat32);
    AttrDict unknown = dict;
    unknown["conformance_no_such_attribute"] = "1";
    EXPECT_THROW(imperative::Invoke(name, in, unknown), InvalidArgument)
        << name << ": an unknown attribute";
    for (const auto& [key, value] : dict) {
      AttrDict bad = dict;
      bad[key] = "(not a value";
      try {
        for (const NDArray& y : imperative::Invoke(name, in, bad)) {
          y.WaitToRead();
        }
      } catch (const InvalidArgument&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << ": attribute " << key
                      << " = \"(not a value\" raised a non-InvalidArgument "
                         "error: "
                      << e.what();
      }
    }
    if (op.GetAttr<FGradient>("FGradient") != nullptr) {
      SCOPED_TRACE(name + " gradient");
      ++Counts().new_op_grads;
      if (float64_ran) {
        EXPECT_TRUE(testing::CheckGradient(name, dict,
                                           Inputs(n, {2, 3}, DType::kFloat64)));
      } else {
        CheckGradientFloat32(name, dict, Inputs(n, {2, 3}, DType::kFloat32));
      }
    }
  }
  ++Counts().new_ops;
}

// New ops whose inputs differ in shape by role (a convolution's data and
// weight), which the same-shape checks here cannot feed; each names the
// test that checks it.
const char* CheckedElsewhere(const std::string& name) {
  if (name == "_sg_onednn_conv" || name == "_sg_onednn_fc" ||
      name == "_sg_onednn_region") {
    return "//backends/onednn:fusion_test";
  }
  return nullptr;
}

TEST(NewOps, InferenceErrorsAndGradients) {
  for (const std::string& name : Plugin().ops) {
    SCOPED_TRACE(name);
    if (ExpectedToFail(name)) continue;
    if (const char* test = CheckedElsewhere(name)) {
      std::cout << name << ": inputs shaped by role, checked by " << test
                << "\n";
      continue;
    }
    CheckNewOp(name);
  }
}

TEST(NewOps, ExpectedFailuresAreTypedErrorsNamingThePlugin) {
  for (const std::string& name : Plugin().ops) {
    if (!ExpectedToFail(name)) continue;
    const Op& op = OpRegistry::Get()->Lookup(name);
    const int n = op.NumInputs(MakeAttrs(op, NewOpAttrs(name)[0]));
    try {
      for (const NDArray& y : imperative::Invoke(
               name, Inputs(n, {2, 3}, DType::kFloat32), NewOpAttrs(name)[0])) {
        y.WaitToRead();
      }
      ADD_FAILURE() << name << " was expected to fail";
    } catch (const Error& e) {
      EXPECT_TRUE(testing::Contains(e.what(), Plugin().name)) << e.what();
      ++Counts().failing_ops;
    }
  }
}

}  // namespace
}  // namespace conformance
}  // namespace mx
