// Each layer's forward pass against the nd:: computation it stands for.
#include "nn/layers.h"

#include "gtest/gtest.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

TEST(Dense, InfersInUnitsAndMatchesFullyConnected) {
  Dense dense(5, "tanh");
  dense.Initialize(init::Normal(0.5));
  const NDArray x = RandomArray({2, 3, 4});
  const NDArray y = dense(x);
  EXPECT_EQ(dense.weight()->shape(), (TShape{5, 12}));
  const NDArray expected = nd::tanh(
      nd::FullyConnected(x, dense.weight()->data(), dense.bias()->data(), 5));
  EXPECT_TRUE(AllClose(ToDouble(y), ToDouble(expected)));
}

TEST(Dense, WithoutFlattenAppliesToTheLastAxis) {
  Dense::Options o;
  o.flatten = false;
  o.use_bias = false;
  Dense dense(2, o);
  dense.Initialize();
  const NDArray x = RandomArray({3, 4, 6});
  const NDArray y = dense(x);
  EXPECT_EQ(y.shape(), (TShape{3, 4, 2}));
  EXPECT_EQ(dense.bias(), nullptr);
  EXPECT_EQ(dense.CollectParams().size(), 1u);
  const NDArray expected =
      nd::dot(x, dense.weight()->data(), false, /*transpose_b=*/true);
  EXPECT_TRUE(AllClose(ToDouble(y), ToDouble(expected)));
}

TEST(Conv2D, MatchesConvolutionWithGroups) {
  Conv2D::Options o;
  o.strides = {2, 1};
  o.padding = {1, 1};
  o.groups = 2;
  o.activation = "relu";
  Conv2D conv(4, {3, 3}, o);
  conv.Initialize(init::Xavier());
  conv.bias()->SetData(NDArray::FromVector<float>({4}, {0.1f, -0.2f, 0, 1}));
  const NDArray x = RandomArray({2, 6, 7, 5});
  const NDArray y = conv(x);
  EXPECT_EQ(conv.weight()->shape(), (TShape{4, 3, 3, 3}));
  const NDArray expected =
      nd::relu(nd::Convolution(x, conv.weight()->data(), conv.bias()->data(),
                               {3, 3}, 4, {2, 1}, {1, 1}, {1, 1}, 2));
  EXPECT_EQ(y.shape(), expected.shape());
  EXPECT_TRUE(AllClose(ToDouble(y), ToDouble(expected)));
}

TEST(Conv2D, InputChannelsMustFitGroups) {
  Conv2D::Options o;
  o.groups = 2;
  Conv2D conv(4, {1, 1}, o);
  conv.Initialize();
  const std::string msg = ErrorOf<ShapeError>([&] {
    conv(RandomArray({1, 3, 4, 4}));
  });
  EXPECT_TRUE(Contains(msg, "Conv2D") && Contains(msg, "3 channels")) << msg;
}

TEST(Pooling, MaxAvgAndGlobalMatchPooling) {
  const NDArray x = RandomArray({2, 3, 6, 5});
  MaxPool2D max_pool({2, 2});
  EXPECT_TRUE(AllClose(ToDouble(max_pool(x)),
                       ToDouble(nd::Pooling(x, {2, 2}, "max", {2, 2}))));
  Pool2DOptions o;
  o.strides = {1, 1};
  o.padding = {1, 1};
  o.count_include_pad = false;
  AvgPool2D avg_pool({3, 3}, o);
  EXPECT_TRUE(AllClose(ToDouble(avg_pool(x)),
                       ToDouble(nd::Pooling(x, {3, 3}, "avg", {1, 1}, {1, 1},
                                            false, "valid", false))));
  GlobalAvgPool2D global;
  const NDArray g = global(x);
  EXPECT_EQ(g.shape(), (TShape{2, 3, 1, 1}));
  EXPECT_TRUE(
      AllClose(ToDouble(g), ToDouble(nd::mean(x, {2, 3}, /*keepdims=*/true))));
}

TEST(BatchNorm, TrainingUpdatesRunningStatsInferenceUsesThem) {
  BatchNorm::Options o;
  o.momentum = 0.5;
  BatchNorm bn(o);
  bn.Initialize();
  const NDArray x = RandomArray({8, 3, 2, 2}, DType::kFloat32, 1, 3);
  EXPECT_EQ(bn.running_mean()->grad_req(), GradReq::kNull);
  EXPECT_EQ(bn.running_var()->grad_req(), GradReq::kNull);
  NDArray y;
  {
    autograd::TrainModeScope train;
    y = bn(x);
  }
  // Batch statistics: mean over N, H, W.
  const std::vector<double> mean = ToDouble(nd::mean(x, {0, 2, 3}));
  const std::vector<double> running = ToDouble(bn.running_mean()->data());
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(running[c], 0.5 * mean[c], 1e-5);  // 0.5 * 0 + 0.5 * mean
  }
  const std::vector<double> out = ToDouble(nd::mean(y, {0, 2, 3}));
  for (double m : out) EXPECT_NEAR(m, 0, 1e-5);

  const NDArray y_infer = bn(x);  // predict mode: running statistics
  const NDArray expected = nd::BatchNorm(
      x, bn.gamma()->data(), bn.beta()->data(), bn.running_mean()->data(),
      bn.running_var()->data(), 1e-5, 0.5, false, /*use_global_stats=*/true);
  EXPECT_TRUE(AllClose(ToDouble(y_infer), ToDouble(expected)));
}

TEST(Dropout, IdentityInPredictionDropsInTraining) {
  Dropout drop(0.5);
  const NDArray x = nd::ones({1000});
  EXPECT_EQ(ToDouble(drop(x)), ToDouble(x));
  autograd::TrainModeScope train;
  int zeros = 0;
  for (double v : ToDouble(drop(x))) {
    if (v == 0) {
      ++zeros;
    } else {
      EXPECT_EQ(v, 2);
    }
  }
  EXPECT_GT(zeros, 400);
  EXPECT_LT(zeros, 600);
}

TEST(Activation, AndFlattenMatchTheOps) {
  const NDArray x = RandomArray({2, 3, 4});
  Activation act("sigmoid");
  EXPECT_TRUE(AllClose(ToDouble(act(x)), ToDouble(nd::sigmoid(x))));
  Flatten flatten;
  const NDArray f = flatten(x);
  EXPECT_EQ(f.shape(), (TShape{2, 12}));
  EXPECT_EQ(ToDouble(f), ToDouble(x));
}

TEST(SoftmaxCrossEntropyLoss, SparseAndDenseLabels) {
  const NDArray pred = RandomArray({4, 5}, DType::kFloat32, -2, 2);
  const NDArray label = NDArray::FromVector<float>({4}, {0, 3, 4, 1});
  SoftmaxCrossEntropyLoss loss;
  const NDArray l = loss({pred, label})[0];
  EXPECT_EQ(l.shape(), (TShape{4}));
  const std::vector<double> logp = ToDouble(nd::log_softmax(pred));
  const std::vector<double> got = ToDouble(l);
  const int classes[] = {0, 3, 4, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(got[i], -logp[i * 5 + classes[i]], 1e-5);
  }
  // The sum equals the fused op's.
  EXPECT_NEAR(ToDouble(nd::sum(l))[0],
              ToDouble(nd::softmax_cross_entropy(pred, label))[0], 1e-4);
  SoftmaxCrossEntropyLoss::Options dense;
  dense.sparse_label = false;
  SoftmaxCrossEntropyLoss dense_loss(dense);
  const NDArray one_hot = nd::one_hot(label, 5);
  EXPECT_TRUE(AllClose(ToDouble(dense_loss({pred, one_hot})[0]), got));
}

TEST(CTCLoss, GluonLayoutsBlankLastAndWeight) {
  // (N, T, C) = (2, 4, 3): the blank is class 2, labels pad with -1.
  const NDArray ntc = RandomArray({2, 4, 3}, DType::kFloat32, -2, 2);
  const NDArray label = NDArray::FromVector<float>({2, 2}, {0, 1, 1, -1});
  const std::vector<double> want =
      ToDouble(nd::Call("CTCLoss", {nd::transpose(ntc, TShape{1, 0, 2}), label},
                        {{"blank_label", "last"}}));
  CTCLoss ctc;
  EXPECT_TRUE(AllClose(ToDouble(ctc({ntc, label})[0]), want));
  CTCLoss hybrid;
  hybrid.Hybridize();
  for (int call = 0; call < 2; ++call) {  // Trace, then the cached graph.
    EXPECT_TRUE(AllClose(ToDouble(hybrid({ntc, label})[0]), want)) << call;
  }
  CTCLoss::Options time_major;
  time_major.layout = "TNC";
  time_major.label_layout = "TN";
  time_major.weight = 0.5;
  CTCLoss ctc_tn(time_major);
  const NDArray l = ctc_tn({nd::transpose(ntc, TShape{1, 0, 2}),
                            nd::transpose(label, TShape{1, 0})})[0];
  EXPECT_TRUE(AllClose(ToDouble(l), {want[0] / 2, want[1] / 2}));
  // Lengths: sequence 1 uses 2 frames and 1 label.
  const NDArray lengths =
      ctc({ntc, label, NDArray::FromVector<float>({2}, {4, 2}),
           NDArray::FromVector<float>({2}, {2, 1})})[0];
  const std::vector<double> with_lengths =
      ToDouble(nd::Call("CTCLoss",
                        {nd::transpose(ntc, TShape{1, 0, 2}), label,
                         NDArray::FromVector<float>({2}, {4, 2}),
                         NDArray::FromVector<float>({2}, {2, 1})},
                        {{"blank_label", "last"},
                         {"use_data_lengths", "True"},
                         {"use_label_lengths", "True"}}));
  EXPECT_TRUE(AllClose(ToDouble(lengths), with_lengths));
  EXPECT_NE(with_lengths[1], want[1]);
  EXPECT_THROW(CTCLoss(CTCLoss::Options{"NCT", "NT", 1.0}), InvalidArgument);
}

TEST(SoftmaxCrossEntropyLoss, SparseLabelsAlongAnyClassAxis) {
  // Classes on axis 1 of (2, 3, 4): one label per (n, position).
  const NDArray pred = RandomArray({2, 3, 4}, DType::kFloat32, -2, 2);
  const std::vector<float> labels = {0, 2, 1, 1, 2, 0, 0, 1};
  SoftmaxCrossEntropyLoss::Options options;
  options.axis = 1;
  SoftmaxCrossEntropyLoss loss(options);
  const NDArray l = loss({pred, NDArray::FromVector<float>({2, 4}, labels)})[0];
  EXPECT_EQ(l.shape(), (TShape{2, 4}));
  const std::vector<double> logp = ToDouble(nd::log_softmax(pred, 1));
  const std::vector<double> got = ToDouble(l);
  for (int n = 0; n < 2; ++n) {
    for (int t = 0; t < 4; ++t) {
      const int c = static_cast<int>(labels[n * 4 + t]);
      EXPECT_NEAR(got[n * 4 + t], -logp[(n * 3 + c) * 4 + t], 1e-5);
    }
  }
  // Out-of-range labels are clipped to the first or last class, as Gluon's
  // pick (mode "clip") does.
  SoftmaxCrossEntropyLoss last_axis;
  const NDArray logits = RandomArray({2, 5}, DType::kFloat32, -2, 2);
  const std::vector<double> clipped = ToDouble(
      last_axis({logits, NDArray::FromVector<float>({2}, {7, -1})})[0]);
  const std::vector<double> lp = ToDouble(nd::log_softmax(logits));
  EXPECT_NEAR(clipped[0], -lp[4], 1e-5);
  EXPECT_NEAR(clipped[1], -lp[5], 1e-5);
  // A label count that does not match is a ShapeError.
  EXPECT_THROW(loss({pred, NDArray::FromVector<float>({2}, {0, 1})}),
               ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
