// Imperative invoke across packages: arity, attributes, shapes, dtypes,
// contexts, modes and concurrency, through real CPU ops.
#include "imperative/imperative.h"

#include <thread>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using imperative::Invoke;
using testing::AllClose;
using testing::ArrayOf;
using testing::ErrorOf;
using testing::ToDouble;

TEST(Invoke, WrongArityNamesOpAndInputs) {
  NDArray a = ArrayOf({2}, {1, 2});
  EXPECT_EQ(ErrorOf<InvalidArgument>([&] { Invoke("broadcast_add", {a}); }),
            "op \"broadcast_add\": expects 2 input(s) (lhs, rhs) but got 1");
}

TEST(Invoke, UnknownOpIsNotFound) {
  EXPECT_EQ(ErrorOf<NotFound>([] { Invoke("no_such_op", {}); }),
            "unknown op \"no_such_op\"");
}

TEST(Invoke, BadAttributesNameKeyAndValue) {
  NDArray a = ArrayOf({2}, {1, 2});
  EXPECT_EQ(
      ErrorOf<InvalidArgument>([&] {
        Invoke("relu", {a}, {{"alpha", "1"}});
      }),
      "op \"relu\": unknown attribute \"alpha\"; known attributes: (none)");
  EXPECT_EQ(ErrorOf<InvalidArgument>([&] {
              Invoke("_plus_scalar", {a}, {{"scalar", "x"}});
            }),
            "op \"_plus_scalar\": attribute scalar=\"x\" is invalid: not a "
            "number");
}

TEST(Invoke, ReadingNeverWrittenInputIsStateError) {
  NDArray never({2});
  const std::string msg = ErrorOf<StateError>([&] { Invoke("relu", {never}); });
  EXPECT_NE(msg.find("op \"relu\" input 0 (data)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("read before anything wrote it"), std::string::npos);
}

TEST(Invoke, GivenOutputWithWrongShapeOrDTypeIsAnError) {
  NDArray a = ArrayOf({2, 3}, std::vector<double>(6, 1));
  std::vector<NDArray> out{NDArray({3, 2})};
  const Op& relu = OpRegistry::Get()->Lookup("relu");
  EXPECT_EQ(
      ErrorOf<ShapeError>([&] { Invoke(MakeAttrs(relu, {}), {a}, &out); }),
      "op \"relu\": output 0 (output) has shape (3,2) but (2,3) is "
      "required");
  std::vector<NDArray> out_i{NDArray({2, 3}, Context::CPU(), DType::kInt32)};
  EXPECT_THROW(Invoke(MakeAttrs(relu, {}), {a}, &out_i), DTypeError);
}

TEST(Invoke, InputsOnDifferentContextsAreRejected) {
  NDArray a = ArrayOf({2}, {1, 2});
  NDArray b = a.Copy(Context::CPU(1));
  EXPECT_EQ(ErrorOf<InvalidArgument>([&] { nd::add(a, b); }),
            "op \"broadcast_add\" input 1 (rhs) is on cpu(1) but input 0 is "
            "on cpu(0)");
  // Both on cpu(1) is fine and stays there.
  NDArray c = nd::add(b, b);
  EXPECT_EQ(c.ctx(), Context::CPU(1));
  EXPECT_TRUE(AllClose(ToDouble(c), {2, 4}));
}

TEST(Invoke, KernelErrorsReachTheNextWait) {
  NDArray x = ArrayOf({2}, {1, 2});
  NDArray y = nd::clip(x, 3, 1);  // Checked in the kernel.
  NDArray z = y + 1.0;            // Depends on the failed op: skipped.
  EXPECT_THROW(z.WaitToRead(), InvalidArgument);
  // The engine is usable afterwards.
  EXPECT_TRUE(AllClose(ToDouble(x + 1.0), {2, 3}));
}

// Test ops exercising the registry features the CPU library uses little.
struct CountState : OpState {
  int calls = 0;
};

const bool kTestOpsRegistered = [] {
  // Stateful: writes how many times its state has run.
  OpRegistry::Get()
      ->Register("_test_stateful_counter")
      .SetNumInputs(1)
      .SetInferShape(SameShape)
      .SetInferType(SameType)
      .SetStateful([](const NodeAttrs&, Context, const std::vector<TShape>&,
                      const std::vector<DType>&) {
        return std::make_shared<CountState>();
      })
      .SetStatefulCompute(
          Context::kCPU,
          [](const OpStatePtr& state, const OpContext&,
             const std::vector<TBlob>& in, const std::vector<OpReqType>&,
             const std::vector<TBlob>& out) {
            auto* s = static_cast<CountState*>(state.get());
            ++s->calls;
            for (int64_t i = 0; i < out[0].Size(); ++i) {
              out[0].data<float>()[i] = in[0].data<float>()[i] + s->calls;
            }
          });
  // Uses temp space: out = 2 * in through a scratch buffer.
  OpRegistry::Get()
      ->Register("_test_temp_space")
      .SetNumInputs(1)
      .SetInferShape(SameShape)
      .SetInferType(SameType)
      .SetResourceRequest([](const NodeAttrs&) {
        return std::vector<ResourceRequest>{{ResourceRequest::kTempSpace}};
      })
      .SetCompute(Context::kCPU, [](const OpContext& ctx, const NodeAttrs&,
                                    const std::vector<TBlob>& in,
                                    const std::vector<OpReqType>&,
                                    const std::vector<TBlob>& out) {
        const int64_t n = in[0].Size();
        float* scratch = ctx.TempSpace<float>(n);
        for (int64_t i = 0; i < n; ++i) {
          scratch[i] = in[0].data<float>()[i] * 2;
        }
        for (int64_t i = 0; i < n; ++i) {
          out[0].data<float>()[i] = scratch[i];
        }
      });
  // Forgets to request temp space.
  OpRegistry::Get()
      ->Register("_test_temp_space_unrequested")
      .SetNumInputs(1)
      .SetInferShape(SameShape)
      .SetInferType(SameType)
      .SetCompute(Context::kCPU,
                  [](const OpContext& ctx, const NodeAttrs&,
                     const std::vector<TBlob>&, const std::vector<OpReqType>&,
                     const std::vector<TBlob>&) { ctx.TempSpace(16); });
  return true;
}();

TEST(Invoke, StatefulOpsCreateStatePerInvoke) {
  NDArray x = ArrayOf({2}, {10, 20});
  EXPECT_TRUE(
      AllClose(ToDouble(Invoke("_test_stateful_counter", {x})[0]), {11, 21}));
  // A new Invoke creates a new state (graph executors keep theirs).
  EXPECT_TRUE(
      AllClose(ToDouble(Invoke("_test_stateful_counter", {x})[0]), {11, 21}));
}

TEST(Invoke, AddToRequestAccumulates) {
  NDArray x = ArrayOf({3}, {1, 2, 3});
  NDArray acc = ArrayOf({3}, {100, 100, 100});
  imperative::InvokeOptions options;
  options.req = {OpReqType::kAddTo};
  std::vector<NDArray> out{acc};
  const Op& relu = OpRegistry::Get()->Lookup("relu");
  Invoke(MakeAttrs(relu, {}), {x}, &out, options);
  Invoke(MakeAttrs(relu, {}), {x}, &out, options);
  EXPECT_TRUE(AllClose(ToDouble(acc), {102, 104, 106}));
  options.req = {OpReqType::kNullOp};
  Invoke(MakeAttrs(relu, {}), {x}, &out, options);
  EXPECT_TRUE(AllClose(ToDouble(acc), {102, 104, 106}));
}

TEST(Invoke, TempSpaceOnlyWhenRequested) {
  NDArray x = ArrayOf({4}, {1, 2, 3, 4});
  EXPECT_TRUE(
      AllClose(ToDouble(Invoke("_test_temp_space", {x})[0]), {2, 4, 6, 8}));
  NDArray bad = Invoke("_test_temp_space_unrequested", {x})[0];
  EXPECT_THROW(bad.WaitToRead(), StateError);
}

TEST(Modes, ScopesNestAndRestore) {
  EXPECT_FALSE(imperative::IsTraining());
  {
    imperative::TrainingScope train(true);
    EXPECT_TRUE(imperative::IsTraining());
    {
      imperative::TrainingScope predict(false);
      EXPECT_FALSE(imperative::IsTraining());
    }
    EXPECT_TRUE(imperative::IsTraining());
  }
  EXPECT_FALSE(imperative::IsTraining());
  imperative::RecordingScope rec(true);
  EXPECT_TRUE(imperative::IsRecording());
  imperative::DeferredComputeScope dc(true);
  EXPECT_TRUE(imperative::IsDeferredCompute());
}

TEST(Modes, AreThreadLocal) {
  imperative::TrainingScope train(true);
  bool other_thread_training = true;
  std::thread t([&] { other_thread_training = imperative::IsTraining(); });
  t.join();
  EXPECT_FALSE(other_thread_training);
  EXPECT_TRUE(imperative::IsTraining());
}

TEST(Invoke, ArraysUsedFromSeveralThreads) {
  NDArray shared = ArrayOf({256}, std::vector<double>(256, 1));
  std::vector<std::thread> threads;
  std::vector<std::vector<double>> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      NDArray acc = shared * static_cast<double>(t);
      for (int i = 0; i < 50; ++i) acc = acc + shared;
      results[t] = ToDouble(acc);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_TRUE(AllClose(results[t], std::vector<double>(256, t + 50)));
  }
}

}  // namespace
}  // namespace mx
