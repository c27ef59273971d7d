// Block structure, parameter naming, save/load and the parameter file.
#include "nn/block.h"

#include <fstream>

#include "gtest/gtest.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

// A block with a parameter of its own and two children.
class Encoder : public HybridBlock {
 public:
  Encoder() {
    scale_ = RegisterParameter("scale", TShape{1});
    fc1_ = RegisterChild("fc1", std::make_shared<Dense>(4, "relu"));
    fc2_ = RegisterChild("fc2", std::make_shared<Dense>(2));
  }
  std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
    return {(*fc2_)((*fc1_)(x[0])) * scale_->data()};
  }
  std::string TypeName() const override { return "Encoder"; }

 private:
  ParameterPtr scale_;
  std::shared_ptr<Dense> fc1_, fc2_;
};

std::vector<std::string> Names(const ParameterList& params) {
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.first);
  return names;
}

TEST(Block, CollectParamsUsesDottedPaths) {
  Sequential net;
  net.Add(std::make_shared<Encoder>()).Add(std::make_shared<Dense>(3));
  EXPECT_EQ(Names(net.CollectParams()),
            (std::vector<std::string>{"0.scale", "0.fc1.weight", "0.fc1.bias",
                                      "0.fc2.weight", "0.fc2.bias", "1.weight",
                                      "1.bias"}));
}

TEST(Block, SharedParameterIsListedOnce) {
  class Tied : public Block {
   public:
    Tied() {
      auto w = RegisterParameter("w", TShape{2});
      RegisterParameter("w_again", w);
    }
    std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
      return x;
    }
  };
  EXPECT_EQ(Names(Tied().CollectParams()), (std::vector<std::string>{"w"}));
}

TEST(Block, ChildParameterClashesOrDottedNamesAreRejected) {
  class Bad : public Block {
   public:
    explicit Bad(int which) {
      RegisterParameter("w", TShape{2});
      RegisterChild("c", std::make_shared<Dense>(2));
      if (which == 0) RegisterParameter("c", TShape{2});
      if (which == 1) RegisterChild("w", std::make_shared<Dense>(2));
      if (which == 2) RegisterParameter("a.b", TShape{2});
    }
    std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
      return x;
    }
  };
  EXPECT_THROW(Bad(0), AlreadyExists);
  EXPECT_THROW(Bad(1), AlreadyExists);
  EXPECT_THROW(Bad(2), InvalidArgument);
}

TEST(Block, RegisteringATakenNameReplacesInPlace) {
  // MXNet 2: `self.fc = Dense(...)` / `self.w = Parameter(...)` replace.
  class Net : public Block {
   public:
    Net() {
      RegisterParameter("w", TShape{2});
      RegisterChild("fc", std::make_shared<Dense>(2));
      RegisterChild("out", std::make_shared<Dense>(1));
      RegisterChild("fc", std::make_shared<Dense>(7));
      RegisterParameter("w", TShape{5});
    }
    std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
      return x;
    }
  };
  Net net;
  EXPECT_EQ(Names(net.CollectParams()),
            (std::vector<std::string>{"w", "fc.weight", "fc.bias", "out.weight",
                                      "out.bias"}));
  EXPECT_EQ(net.CollectParams()[0].second->shape(), TShape({5}));
  EXPECT_EQ(net.CollectParams()[1].second->shape(), TShape({7, 0}));
}

TEST(Block, MissingInferShapeNamesEachUnknownParameter) {
  class NoInfer : public Block {
   public:
    NoInfer() {
      RegisterParameter("weight", TShape{3, 0});
      RegisterParameter("bias", TShape{3});
      RegisterParameter("gain", TShape{0});
    }
    std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
      return x;
    }
    std::string TypeName() const override { return "NoInfer"; }
  };
  NoInfer block;
  block.Initialize();
  const std::string msg = ErrorOf<StateError>([&] {
    block(NDArray::FromVector<float>({1, 2}, {1, 2}));
  });
  EXPECT_TRUE(Contains(msg, "NoInfer") && Contains(msg, "weight (3,0)") &&
              Contains(msg, "gain (0,)") && Contains(msg, "InferShape") &&
              !Contains(msg, "bias"))
      << msg;
}

TEST(Block, SaveLoadRoundTripIsExact) {
  const std::string file = TempPath("roundtrip.params");
  Encoder a;
  a.Initialize(init::Normal(1));
  a(RandomArray({2, 5}));  // completes the deferred shapes
  a.SaveParameters(file);

  Encoder b;
  b.LoadParameters(file);
  const ParameterList pa = a.CollectParams(), pb = b.CollectParams();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].second->data().shape(), pb[i].second->data().shape());
    EXPECT_EQ(pa[i].second->data().ToVector<float>(),
              pb[i].second->data().ToVector<float>())
        << pa[i].first;
  }
  const NDArray x = RandomArray({3, 5});
  EXPECT_EQ(a(x).ToVector<float>(), b(x).ToVector<float>());
}

TEST(ParamsFile, EveryDTypeRoundTrips) {
  const std::string file = TempPath("dtypes.params");
  NamedArrays arrays = {
      {"f32", NDArray::FromVector<float>({2, 2}, {1.5f, -2, 3e-8f, 4})},
      {"f64", NDArray::FromVector<double>({3}, {1e-300, 2, -3})},
      {"i64", NDArray::FromVector<int64_t>({2}, {int64_t{1} << 40, -7})},
      {"u8", NDArray::FromVector<uint8_t>({1}, {255})},
      {"b", NDArray::FromVector<bool>({2}, {true, false})},
      {"scalar", NDArray::FromVector<float>(TShape::Scalar(), {9})}};
  SaveArrays(file, arrays);
  const NamedArrays loaded = LoadArrays(file);
  ASSERT_EQ(loaded.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(loaded[i].first, arrays[i].first);
    EXPECT_EQ(loaded[i].second.shape(), arrays[i].second.shape());
    EXPECT_EQ(loaded[i].second.dtype(), arrays[i].second.dtype());
    EXPECT_EQ(ToDouble(loaded[i].second), ToDouble(arrays[i].second));
  }
}

void WriteBytes(const std::string& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string ReadBytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ParamsFile, BadFilesAreReportedWithTheFileAndTheProblem) {
  const std::string missing = TempPath("does_not_exist.params");
  std::string msg = ErrorOf<NotFound>([&] { LoadArrays(missing); });
  EXPECT_TRUE(Contains(msg, missing)) << msg;

  const std::string bad = TempPath("bad.params");
  WriteBytes(bad, "NOTMAGIC and more");
  msg = ErrorOf<InvalidArgument>([&] { LoadArrays(bad); });
  EXPECT_TRUE(Contains(msg, bad) && Contains(msg, "magic")) << msg;

  const std::string good = TempPath("good.params");
  SaveArrays(good, {{"layer.weight", RandomArray({4, 4})}});
  const std::string bytes = ReadBytes(good);
  WriteBytes(bad, bytes.substr(0, bytes.size() - 5));
  msg = ErrorOf<InvalidArgument>([&] { LoadArrays(bad); });
  EXPECT_TRUE(Contains(msg, bad) && Contains(msg, "truncated") &&
              Contains(msg, "layer.weight"))
      << msg;

  WriteBytes(bad, bytes + "x");
  msg = ErrorOf<InvalidArgument>([&] { LoadArrays(bad); });
  EXPECT_TRUE(Contains(msg, "trailing")) << msg;

  std::string wrong_dtype = bytes;
  // magic (8) + count (8) + name length (4) + name (12): the dtype code.
  wrong_dtype[8 + 8 + 4 + 12] = 42;
  WriteBytes(bad, wrong_dtype);
  msg = ErrorOf<InvalidArgument>([&] { LoadArrays(bad); });
  EXPECT_TRUE(Contains(msg, "dtype code 42")) << msg;
}

TEST(Block, LoadReportsMissingExtraAndMismatchedParameters) {
  const std::string file = TempPath("partial.params");
  Dense small(3);
  small.Initialize();
  small(RandomArray({1, 4}));
  small.SaveParameters(file);

  Dense no_bias_file(3);  // weight and bias, file has both: fine
  no_bias_file.LoadParameters(file);

  SaveArrays(file, {{"weight", RandomArray({3, 4})}});
  Dense d(3);
  std::string msg = ErrorOf<InvalidArgument>([&] { d.LoadParameters(file); });
  EXPECT_TRUE(Contains(msg, file) && Contains(msg, "lacks") &&
              Contains(msg, "bias"))
      << msg;
  Block::LoadOptions allow;
  allow.allow_missing = true;
  d.LoadParameters(file, allow);

  SaveArrays(file, {{"weight", RandomArray({3, 4})},
                    {"bias", RandomArray({3})},
                    {"gamma", RandomArray({3})}});
  msg = ErrorOf<InvalidArgument>([&] { d.LoadParameters(file); });
  EXPECT_TRUE(Contains(msg, "gamma")) << msg;

  SaveArrays(file,
             {{"weight", RandomArray({3, 5})}, {"bias", RandomArray({3})}});
  msg = ErrorOf<ShapeError>([&] { d.LoadParameters(file); });
  EXPECT_TRUE(Contains(msg, "\"weight\"") && Contains(msg, "(3,5)")) << msg;
}

TEST(Block, SavingUninitializedParametersFails) {
  Dense d(3);
  d.Initialize();  // deferred: in_units unknown
  const std::string msg =
      ErrorOf<StateError>([&] { d.SaveParameters(TempPath("x.params")); });
  EXPECT_TRUE(Contains(msg, "weight")) << msg;
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
