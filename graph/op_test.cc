#include "graph/op.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

struct TestPoolParam {
  TShape kernel;
  std::string pool_type = "max";
  bool global_pool = false;
  int64_t count = 3;
  float scale = 1.0f;
  std::optional<int> axis;
  DType dtype = DType::kFloat32;
  static void Declare(ParamSchema<TestPoolParam>* s) {
    s->Field("kernel", &TestPoolParam::kernel).Required();
    s->Field("pool_type", &TestPoolParam::pool_type).Choices({"max", "avg"});
    s->Field("global_pool", &TestPoolParam::global_pool);
    s->Field("count", &TestPoolParam::count);
    s->Field("scale", &TestPoolParam::scale);
    s->Field("axis", &TestPoolParam::axis);
    s->Field("dtype", &TestPoolParam::dtype);
  }
};

std::string Message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Params, ParsesEveryFieldTypeAndKeepsDefaults) {
  TestPoolParam p =
      ParseParams<TestPoolParam>("Pool", {{"kernel", "(2,2)"},
                                          {"global_pool", "True"},
                                          {"scale", "0.5"},
                                          {"axis", "-1"},
                                          {"dtype", "float16"},
                                          {"__shape__", "(1,2)"}});
  EXPECT_EQ(p.kernel, TShape({2, 2}));
  EXPECT_EQ(p.pool_type, "max");
  EXPECT_TRUE(p.global_pool);
  EXPECT_EQ(p.count, 3);
  EXPECT_FLOAT_EQ(p.scale, 0.5f);
  ASSERT_TRUE(p.axis.has_value());
  EXPECT_EQ(*p.axis, -1);
  EXPECT_EQ(p.dtype, DType::kFloat16);
  AttrDict printed = PrintParams(p);
  EXPECT_EQ(printed["kernel"], "(2,2)");
  EXPECT_EQ(printed["global_pool"], "True");
  EXPECT_EQ(printed["axis"], "-1");
  EXPECT_EQ(ParseParams<TestPoolParam>("Pool", printed).kernel, p.kernel);
}

// Numbers printed as attributes parse back exactly (StrCat kept 6 digits).
TEST(Params, AttrTextRoundTrips) {
  for (double v : {1.0 / 3, 0.1, -2.302585092994046, 1e-300, 57.29577951308232,
                   0.0, -0.0, 1e300}) {
    EXPECT_EQ(std::strtod(AttrText(v).c_str(), nullptr), v) << AttrText(v);
  }
  EXPECT_EQ(AttrText(0.5), "0.5");
  EXPECT_EQ(AttrText(3), "3");
}

struct TestTupleParam {
  FloatTuple sizes = {1};
  OptionalIntTuple begin;
  static void Declare(ParamSchema<TestTupleParam>* s) {
    s->Field("sizes", &TestTupleParam::sizes);
    s->Field("begin", &TestTupleParam::begin);
  }
};

TEST(Params, TuplesOfRealsAndOptionalIntegers) {
  TestTupleParam p = ParseParams<TestTupleParam>(
      "Prior", {{"sizes", "(0.2, 0.272,)"}, {"begin", "[None, -1]"}});
  EXPECT_EQ(p.sizes, (FloatTuple{0.2, 0.272}));
  ASSERT_EQ(p.begin.size(), 2u);
  EXPECT_FALSE(p.begin[0].has_value());
  EXPECT_EQ(*p.begin[1], -1);
  AttrDict printed = PrintParams(p);
  EXPECT_EQ(printed["sizes"], "(0.2,0.272)");
  EXPECT_EQ(printed["begin"], "(None,-1)");
  EXPECT_EQ(ParseParams<TestTupleParam>("Prior", printed).sizes, p.sizes);
  // A bare number is a tuple of one, printed as one.
  p = ParseParams<TestTupleParam>("Prior", {{"sizes", "0.5"}});
  EXPECT_EQ(p.sizes, (FloatTuple{0.5}));
  EXPECT_EQ(PrintParams(p)["sizes"], "(0.5,)");
  EXPECT_NE(Message([] {
              ParseParams<TestTupleParam>("Prior", {{"sizes", "(0.1, x)"}});
            }).find("not a number"),
            std::string::npos);
  EXPECT_NE(Message([] {
              ParseParams<TestTupleParam>("Prior", {{"sizes", "(0.1"}});
            }).find("unbalanced"),
            std::string::npos);
}

TEST(Params, ErrorsNameOpKeyAndValue) {
  EXPECT_EQ(Message([] { ParseParams<TestPoolParam>("Pool", {}); }),
            "op \"Pool\": required attribute \"kernel\" is missing");
  EXPECT_EQ(
      Message([] {
        ParseParams<TestPoolParam>("Pool", {{"kernel", "2"}, {"kernal", "3"}});
      }),
      "op \"Pool\": unknown attribute \"kernal\"; known attributes: kernel, "
      "pool_type, global_pool, count, scale, axis, dtype");
  EXPECT_EQ(
      Message([] {
        ParseParams<TestPoolParam>("Pool", {{"kernel", "2"}, {"count", "3.5"}});
      }),
      "op \"Pool\": attribute count=\"3.5\" is invalid: not an integer");
  EXPECT_EQ(Message([] {
              ParseParams<TestPoolParam>(
                  "Pool", {{"kernel", "2"}, {"pool_type", "median"}});
            }),
            "op \"Pool\": attribute pool_type=\"median\" is invalid: expected "
            "one of: max, avg");
  EXPECT_NE(Message([] {
              ParseParams<TestPoolParam>("Pool", {{"kernel", "(2,a)"}});
            }).find("not a shape"),
            std::string::npos);
  EXPECT_EQ(Message([] {
              ParseParams<NoParams>("relu", {{"alpha", "1"}});
            }),
            "op \"relu\": unknown attribute \"alpha\"; known attributes: "
            "(none)");
}

TEST(OpRegistry, RegisterLookupAliasAndUnregister) {
  OpRegistry* reg = OpRegistry::Get();
  Op& op =
      reg->Register("_test_op_a").SetNumInputs(2).SetInputNames({"lhs", "rhs"});
  op.AddAlias("_test_op_a_alias");
  EXPECT_EQ(reg->Find("_test_op_a"), &op);
  EXPECT_EQ(reg->Find("_test_op_a_alias"), &op);
  EXPECT_THROW(reg->Register("_test_op_a"), AlreadyExists);
  EXPECT_THROW(reg->Register("_test_op_a_alias"), AlreadyExists);
  NodeAttrs attrs = MakeAttrs(op, {});
  EXPECT_EQ(op.NumInputs(attrs), 2);
  EXPECT_EQ(op.InputNames(attrs), (std::vector<std::string>{"lhs", "rhs"}));
  EXPECT_EQ(op.OutputNames(attrs), (std::vector<std::string>{"output"}));
  reg->Unregister("_test_op_a");
  EXPECT_EQ(reg->Find("_test_op_a"), nullptr);
  EXPECT_EQ(reg->Find("_test_op_a_alias"), nullptr);
  try {
    reg->Lookup("_test_op_a");
    FAIL();
  } catch (const NotFound& e) {
    EXPECT_STREQ(e.what(), "unknown op \"_test_op_a\"");
  }
}

TEST(OpRegistry, TypedAttributes) {
  Op& op = OpRegistry::Get()->Register("_test_op_b");
  op.SetAttr<int>("FVersion", 7);
  ASSERT_NE(op.GetAttr<int>("FVersion"), nullptr);
  EXPECT_EQ(*op.GetAttr<int>("FVersion"), 7);
  EXPECT_EQ(op.GetAttr<int>("FMissing"), nullptr);
  OpRegistry::Get()->Unregister("_test_op_b");
}

TEST(OpRegistry, RevisionChangesWithEveryKernelOrAttributeChange) {
  OpRegistry* reg = OpRegistry::Get();
  Op& op = reg->Register("_test_op_revision");
  uint64_t last = op.revision();
  auto changed = [&op, &last] {
    const uint64_t now = op.revision();
    const bool differs = now != last;
    last = now;
    return differs;
  };
  const FCompute noop =
      [](const OpContext&, const NodeAttrs&, const std::vector<TBlob>&,
         const std::vector<OpReqType>&, const std::vector<TBlob>&) {};
  op.SetCompute(Context::kCPU, noop);
  EXPECT_TRUE(changed());
  op.SetAttr<int>("FVersion", 1);
  EXPECT_TRUE(changed());
  op.SetStatefulCompute(
      Context::kCPU,
      [](const OpStatePtr&, const OpContext&, const std::vector<TBlob>&,
         const std::vector<OpReqType>&, const std::vector<TBlob>&) {});
  EXPECT_TRUE(changed());
  Op::DeviceKernels kernels = op.TakeKernels(Context::kCPU);
  EXPECT_TRUE(changed());
  EXPECT_EQ(op.compute(Context::kCPU), nullptr);
  op.RestoreKernels(Context::kCPU, std::move(kernels));
  EXPECT_TRUE(changed());
  EXPECT_NE(op.compute(Context::kCPU), nullptr);
  op.SetComputeDynamic(Context::kCPU, [](const OpContext&, const NodeAttrs&,
                                         const std::vector<TBlob>&,
                                         const std::vector<NDArray>&) {});
  EXPECT_TRUE(changed());
  // Declarations a dispatcher does not cache leave it alone.
  op.SetNumInputs(2);
  EXPECT_FALSE(changed());

  // An op registered after another was removed, even at the same address,
  // never shares a revision with anything seen before.
  reg->Unregister("_test_op_revision");
  Op& again = reg->Register("_test_op_revision");
  EXPECT_GT(again.revision(), last);
  reg->Unregister("_test_op_revision");
}

TEST(OpRegistry, KernelForEveryDeviceGivesWayToTheDevicesOwn) {
  Op& op = OpRegistry::Get()->Register("_test_op_every_device");
  auto tagged = [](int* tag, int value) -> FCompute {
    return
        [tag, value](const OpContext&, const NodeAttrs&,
                     const std::vector<TBlob>&, const std::vector<OpReqType>&,
                     const std::vector<TBlob>&) { *tag = value; };
  };
  int ran = 0;
  auto run = [&](int dev_type) {
    ran = 0;
    const FCompute* f = op.compute(dev_type);
    if (f != nullptr) (*f)(OpContext(), NodeAttrs(), {}, {}, {});
    return ran;
  };
  EXPECT_EQ(op.compute(Context::kFirstPluginDevice + 3), nullptr);
  const uint64_t before = op.revision();
  op.SetComputeOnEveryDevice(tagged(&ran, 1));
  EXPECT_NE(op.revision(), before);
  // Device types known or not yet registered by any plugin.
  EXPECT_EQ(run(Context::kCPU), 1);
  EXPECT_EQ(run(Context::kFirstPluginDevice + 3), 1);
  // A device's own kernel wins; taking it away brings the shared one back.
  op.SetCompute(Context::kCPU, tagged(&ran, 2));
  EXPECT_EQ(run(Context::kCPU), 2);
  Op::DeviceKernels own = op.TakeKernels(Context::kCPU);
  EXPECT_EQ(run(Context::kCPU), 1);
  op.RestoreKernels(Context::kCPU, std::move(own));
  EXPECT_EQ(run(Context::kCPU), 2);
  // So does a stateful kernel of the device (dispatch tries compute first).
  op.SetStatefulCompute(
      Context::kFirstPluginDevice,
      [](const OpStatePtr&, const OpContext&, const std::vector<TBlob>&,
         const std::vector<OpReqType>&, const std::vector<TBlob>&) {});
  EXPECT_EQ(op.compute(Context::kFirstPluginDevice), nullptr);
  OpRegistry::Get()->Unregister("_test_op_every_device");
}

TEST(Inference, SameShapeFillsBothWaysAndReportsContradictions) {
  Op& op = OpRegistry::Get()
               ->Register("_test_op_c")
               .SetNumInputs(2)
               .SetInputNames({"lhs", "rhs"});
  NodeAttrs attrs = MakeAttrs(op, {}, "node7");
  std::vector<TShape> in{TShape({2, -1}), TShape()}, out{TShape({-1, 3})};
  SameShape(attrs, &in, &out);
  EXPECT_EQ(in[0], TShape({2, 3}));
  EXPECT_EQ(in[1], TShape({2, 3}));
  EXPECT_EQ(out[0], TShape({2, 3}));
  std::vector<TShape> bad_in{TShape({2, 3}), TShape({2, 4})}, bad_out(1);
  try {
    SameShape(attrs, &bad_in, &bad_out);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(),
                 "op \"_test_op_c\" (node \"node7\"): input 1 (rhs) has shape "
                 "(2,4) but (2,3) is required");
  }
  std::vector<DType> tin{DType::kFloat32, DType::kInt32},
      tout(1, DType::kUnknown);
  EXPECT_THROW(SameType(attrs, &tin, &tout), DTypeError);
  OpRegistry::Get()->Unregister("_test_op_c");
}

}  // namespace
}  // namespace mx
