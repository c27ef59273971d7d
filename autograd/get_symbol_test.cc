// GetSymbol: the recorded graph as a Symbol (MXNet's autograd.get_symbol).
#include <cmath>
#include <memory>

#include "autograd/autograd.h"
#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace autograd {
namespace {

using testing::AllClose;
using testing::ArrayOf;
using testing::ExpectError;
using testing::ToDouble;

TEST(GetSymbol, ExportsTheRecordedGraph) {
  NDArray x = ArrayOf({3}, {1, 2, 3}, DType::kFloat64);
  const NDArray c = ArrayOf({3}, {0.5, 0.25, 2}, DType::kFloat64);
  AttachGrad(&x);
  NDArray y;
  {
    RecordScope record;
    y = nd::sum(nd::exp(x) * c);
  }
  const Symbol symbol = GetSymbol(y);
  const std::vector<std::string> inputs = symbol.ListInputNames();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].rfind("var", 0), 0u) << inputs[0];
  EXPECT_EQ(inputs[1], "constant0");
  EXPECT_NE(symbol.Print().find("exp"), std::string::npos) << symbol.Print();

  // The exported graph computes y again, and survives JSON.
  auto exec = Executor::Bind(Symbol::FromJSON(symbol.ToJSON()), Context::CPU(),
                             {x, c}, {}, {}, {});
  exec->Forward();
  EXPECT_TRUE(AllClose(ToDouble(exec->outputs()[0]), ToDouble(y)));
  // The recorded graph itself is untouched: backward still works.
  Backward({y});
  EXPECT_TRUE(
      AllClose(ToDouble(x.grad()),
               {0.5 * std::exp(1.0), 0.25 * std::exp(2.0), 2 * std::exp(3.0)}));
}

TEST(GetSymbol, VariablesAreNamedApart) {
  NDArray a = ArrayOf({2}, {1, 2}), b = ArrayOf({2}, {3, 4});
  AttachGrad(&a);
  AttachGrad(&b);
  NDArray y;
  {
    RecordScope record;
    y = a * b;
  }
  const std::vector<std::string> inputs = GetSymbol(y).ListInputNames();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_NE(inputs[0], inputs[1]);
}

TEST(GetSymbol, ErrorsNameTheProblem) {
  const NDArray plain = ArrayOf({2}, {1, 2});
  ExpectError<StateError>([&] { GetSymbol(plain); },
                          {"GetSymbol", "not part of a recorded graph"});

  class Twice : public Function {
    std::vector<NDArray> Forward(const std::vector<NDArray>& in) override {
      return {in[0] * 2.0};
    }
    std::vector<NDArray> Backward(const std::vector<NDArray>& g) override {
      return {g[0] * 2.0};
    }
  };
  NDArray x = ArrayOf({2}, {1, 2});
  AttachGrad(&x);
  NDArray y;
  {
    RecordScope record;
    y = (*std::make_shared<Twice>())({x})[0];
  }
  ExpectError<NotImplemented>([&] { GetSymbol(y); },
                              {"GetSymbol", "_autograd_function"});
}

}  // namespace
}  // namespace autograd
}  // namespace mx
