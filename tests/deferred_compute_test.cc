// Deferred compute: the seed's scenarios. Each computation runs three
// ways and must agree exactly: imperatively; traced and then read (lazily
// computed, directly or as the input of an untraced op); and as the traced
// symbol run through an executor.
#include "imperative/deferred_compute.h"

#include <functional>

#include "autograd/autograd.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::ExpectError;
using testing::ToDouble;
using Arrays = std::vector<NDArray>;
using MakeInputs = std::function<Arrays()>;
using Compute = std::function<Arrays(const Arrays&)>;

enum class Mode { kRead, kReadThroughOp, kSymbolic };

std::vector<std::vector<double>> Values(const Arrays& ys) {
  std::vector<std::vector<double>> v;
  for (const NDArray& y : ys) v.push_back(ToDouble(y));
  return v;
}

std::vector<std::string> Names(size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(std::to_string(i));
  return names;
}

// Traces `compute` on setup()'s arrays, associated with variables "0",
// "1", ...
Arrays Trace(const MakeInputs& setup, const Compute& compute, Arrays* xs) {
  *xs = setup();
  std::vector<NDArray*> ptrs;
  std::vector<Symbol> vars;
  const std::vector<std::string> names = Names(xs->size());
  for (size_t i = 0; i < xs->size(); ++i) {
    ptrs.push_back(&(*xs)[i]);
    vars.push_back(Symbol::Variable(names[i]));
  }
  dc::SetVariable(ptrs, vars);
  dc::DeferredComputeScope trace(true);
  return compute(*xs);
}

void AssertDC(const MakeInputs& setup, const Compute& compute,
              std::vector<Mode> modes = {Mode::kRead, Mode::kReadThroughOp,
                                         Mode::kSymbolic}) {
  const auto expected = Values(compute(setup()));
  for (Mode mode : modes) {
    Arrays xs;
    Arrays ys = Trace(setup, compute, &xs);
    if (mode == Mode::kRead) {
      EXPECT_EQ(Values(ys), expected) << "read";
    } else if (mode == Mode::kReadThroughOp) {
      Arrays plus_zero;
      for (const NDArray& y : ys) plus_zero.push_back(y + 0);
      EXPECT_EQ(Values(plus_zero), expected) << "read through an op";
    } else {
      const Symbol sym = dc::GetSymbol(ys);
      const Arrays fresh = setup();
      Arrays args;
      for (const std::string& name : sym.ListArguments()) {
        args.push_back(fresh[std::stoul(name)]);
      }
      auto exec = Executor::Bind(sym, Context::CPU(), args, {}, {}, {});
      exec->Forward();
      EXPECT_EQ(Values(exec->outputs()), expected) << "symbolic";
    }
  }
}

Arrays NoInputs() { return {}; }
Arrays Arange10() { return {nd::arange(10)}; }

// ---- Without inputs ----
Arrays SingleOutput(const NDArray& a) {
  NDArray b = a + nd::arange(static_cast<double>(a.shape()[0]));
  return {b - 1};
}
Arrays Reshapes(const NDArray& a) {
  NDArray b = a + nd::arange(static_cast<double>(a.shape()[0]));
  NDArray c = b.Reshape({5, 2}), d = b.Reshape({2, 5});
  NDArray e = (c.Reshape({-1}) + d.Reshape({-1})) / 2;
  return {c + 1, d + 1, e};
}
Arrays Slices(const NDArray& a) {
  NDArray b = a.Slice(0, 5);
  return {nd::concat({b, b}, 0) + a};
}
Arrays SubsetOfOutputs(const NDArray& a) { return {nd::split(a, 2, 0)[0]}; }

TEST(DeferredCompute, NoInputs) {
  for (auto f : {SingleOutput, Reshapes, Slices, SubsetOfOutputs}) {
    AssertDC(NoInputs, [f](const Arrays&) { return f(nd::arange(10)); });
  }
}

TEST(DeferredCompute, WithInputs) {
  for (auto f : {SingleOutput, Reshapes, Slices, SubsetOfOutputs}) {
    AssertDC(Arange10, [f](const Arrays& x) { return f(x[0]); });
  }
}

// Traced NDArray::Reshape passes MXNet's codes (and reverse) to the
// Reshape op, which gives the shape and values the eager view gives.
TEST(DeferredCompute, ReshapeViewCodesAreTracedWithReverse) {
  auto f = [](const NDArray& x) {
    return x.Reshape({1, 2, 5}).Reshape({-1, 0}, true);
  };
  const NDArray eager = f(nd::arange(10));
  EXPECT_EQ(eager.shape(), TShape({2, 5}));
  Arrays xs;
  Arrays ys = Trace(
      Arange10, [&](const Arrays& x) { return Arrays{f(x[0])}; }, &xs);
  EXPECT_FALSE(ys[0].is_written());
  EXPECT_EQ(ys[0].shape(), eager.shape());
  EXPECT_EQ(ToDouble(ys[0]), ToDouble(eager));
}

TEST(DeferredCompute, OpsAreRecordedNotRun) {
  Arrays xs;
  Arrays ys = Trace(
      Arange10, [](const Arrays& x) { return Reshapes(x[0]); }, &xs);
  EXPECT_FALSE(ys[0].is_written());
  EXPECT_EQ(ys[0].shape(), TShape({5, 2}));  // Static shapes are known.
  const Symbol sym = dc::GetSymbol(ys);
  EXPECT_EQ(sym.ListInputNames(), std::vector<std::string>{"0"});
  EXPECT_EQ(sym.outputs.size(), 3u);
  // Reading an output computes what it depends on, and only that.
  ToDouble(ys[1]);
  EXPECT_TRUE(ys[1].is_written());
  EXPECT_FALSE(ys[0].is_written());
}

TEST(DeferredCompute, InPlaceWriteIsNotImplemented) {
  Arrays xs;
  ExpectError<NotImplemented>(
      [&] {
        Trace(
            Arange10,
            [](const Arrays& x) {
              NDArray head = x[0].Slice(0, 5);
              nd::CallInto("zeros_like", {head}, {}, head);  // a[:5] = 0
              return Arrays{x[0] + 1};
            },
            &xs);
      },
      {"zeros_like", "already has a history", "in-place"});
}

TEST(DeferredCompute, InputsMustBeVariablesOrTraced) {
  NDArray a = nd::arange(10);
  dc::DeferredComputeScope trace(true);
  ExpectError<InvalidArgument>([&] { nd::exp(a); },
                               {"op \"exp\"", "input 0", "SetVariable"});
}

TEST(DeferredCompute, AutogradRecordingWhileTracingIsAnError) {
  NDArray a = nd::arange(10);
  dc::SetVariable({&a}, {Symbol::Variable("a")});
  dc::DeferredComputeScope trace(true);
  autograd::RecordScope record;
  ExpectError<StateError>([&] { nd::exp(a); },
                          {"autograd recording", "deferred-compute"});
}

TEST(DeferredCompute, InputPartOfOutput) {
  NDArray a = nd::arange(10);
  dc::SetVariable({&a}, {Symbol::Variable("a")});
  NDArray b;
  {
    dc::DeferredComputeScope trace(true);
    b = a + 1;
  }
  const Symbol sym = dc::GetSymbol({a, b});
  EXPECT_EQ(sym.ListOutputNames().size(), 2u);
  EXPECT_EQ(sym.ListOutputNames()[0], "a");
}

TEST(DeferredCompute, GetSymbolTwice) {
  NDArray a = nd::arange(10);
  dc::SetVariable({&a}, {Symbol::Variable("a")});
  NDArray b;
  {
    dc::DeferredComputeScope trace(true);
    b = a + 1;
  }
  EXPECT_EQ(dc::GetSymbol({b}).ListInputNames(), std::vector<std::string>{"a"});
  EXPECT_EQ(dc::GetSymbol({b}).ListInputNames(), std::vector<std::string>{"a"});
  ExpectError<InvalidArgument>([&] { dc::GetSymbol({nd::arange(3)}); },
                               {"GetSymbol", "output 0"});
}

TEST(DeferredCompute, SetVariableTwice) {
  NDArray a = nd::arange(10);
  const Symbol va = Symbol::Variable("a");
  dc::SetVariable({&a}, {va});
  dc::SetVariable({&a}, {va});  // Same variable: fine.
  ExpectError<InvalidArgument>(
      [&] { dc::SetVariable({&a}, {Symbol::Variable("b")}); },
      {"already associated", "\"a\"", "\"b\""});
  ExpectError<InvalidArgument>(
      [&] { dc::SetVariable({&a}, {Symbol::Create("exp", {va})}); },
      {"not a single variable"});
}

TEST(DeferredCompute, ContextSwitch) {
  auto f = [](const NDArray& a) {
    NDArray b = a.Copy(Context::CPU(1));
    return Arrays{(b - 1).Copy(Context::CPU(0))};
  };
  AssertDC(NoInputs, [&](const Arrays&) { return f(nd::arange(10)); });
  AssertDC(Arange10, [&](const Arrays& x) { return f(x[0]); });
}

TEST(DeferredCompute, AsType) {
  AssertDC(Arange10, [](const Arrays& x) {
    NDArray a = nd::cast(x[0], DType::kInt32);
    return Arrays{a + nd::zeros_like(a)};
  });
}

TEST(DeferredCompute, DynamicShape) {
  const Compute f = [](const Arrays& x) {
    return Arrays{nd::flatnonzero(x[0])};
  };
  AssertDC(Arange10, f, {Mode::kRead, Mode::kReadThroughOp});
  Arrays xs;
  Arrays ys = Trace(Arange10, f, &xs);
  EXPECT_FALSE(ys[0].static_shape().is_known());
  EXPECT_EQ(ys[0].shape(), TShape({9}));  // Asking computes it.
}

TEST(DeferredCompute, Indexing) {
  AssertDC(Arange10, [](const Arrays& x) { return Arrays{x[0].At(1) + 1}; });
  AssertDC(Arange10, [](const Arrays& x) {  // b[:2, 1]
    NDArray b = x[0].Reshape({5, 2});
    return Arrays{nd::slice_axis(b.Slice(0, 2), 1, 1, 2).Reshape({2}) + 1};
  });
  AssertDC(Arange10, [](const Arrays& x) {  // b[1, 1]
    return Arrays{x[0].Reshape({5, 2}).At(1).At(1) + 1};
  });
}

TEST(DeferredCompute, BooleanIndexingThenReshape) {
  const MakeInputs setup = [] {
    NDArray x = NDArray::FromVector<float>({6}, {0, 1, 1, 1, 2, 2});
    return Arrays{x, x < 2};
  };
  const Compute f = [](const Arrays& x) {
    return Arrays{nd::boolean_mask(x[0], x[1]).Reshape({2, 2})};
  };
  AssertDC(setup, f, {Mode::kRead, Mode::kReadThroughOp});
}

}  // namespace
}  // namespace mx
