// The CUDA plugin's kernels that call cuDNN (dnn_calls.h) against the CPU
// kernels: softmax and log_softmax and their gradients, Activation,
// Pooling without argmax positions (as graphs run it in inference) and
// BatchNorm in training, in float32, float16 and float64, with write and
// add requests, NaN data, and the cases cuDNN cannot take (the plugin's own
// kernel then runs: results must be the same). Also _full in integer
// dtypes (the harness fills int32 argmax outputs with it). Skipped without
// a GPU.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

// Which kernel the GPU call is to run, checked through the plugin's count
// of cuDNN calls (so that a guard turned too strict cannot pass unseen:
// the own kernels give the CPU's results too).
enum class Path { kCudnn, kOwn };

struct OpRun {
  std::string op;
  std::vector<NDArray> inputs;  // On the CPU.
  AttrDict attrs;
  std::vector<OpReqType> req;  // Empty: write every output.
  bool train = false;
  // Indices of inputs the op updates in place, compared too.
  std::vector<size_t> mutated;
  // Output 0 given as input 0's array (written in place where the op
  // allows it).
  bool in_place = false;
  // Absolute and relative tolerance for float32 results.
  double float32_tolerance = 1e-4;
};

// Every output (and mutated input) of `r` on ctx, as doubles. Outputs with
// an add request start from 0.5 everywhere. `dnn_calls` gets the cuDNN
// calls the checked call made (on the GPU).
std::vector<std::vector<double>> Results(const OpRun& r, Context ctx,
                                         int64_t* dnn_calls) {
  std::vector<NDArray> in;
  for (const NDArray& x : r.inputs) in.push_back(x.Copy(ctx));
  imperative::TrainingScope mode(r.train);
  // Shapes and dtypes from a plain call, then the call under test.
  std::vector<NDArray> outs;
  for (const NDArray& o : imperative::Invoke(r.op, in, r.attrs)) {
    outs.push_back(nd::full(o.shape(), 0.5, o.ctx(), o.dtype()));
    // Done before the count starts (its cuDNN call counted twice on an
    // H200 without this wait).
    o.WaitToRead();
  }
  in.clear();  // Fresh copies: the plain call may have updated some.
  for (const NDArray& x : r.inputs) in.push_back(x.Copy(ctx));
  if (r.in_place) outs[0] = in[0];
  for (const NDArray& a : outs) a.WaitToRead();
  for (const NDArray& a : in) a.WaitToRead();
  const int64_t before = testing::CudnnCallsSoFar();
  imperative::InvokeOptions options;
  options.req = r.req;
  imperative::Invoke(MakeAttrs(*OpRegistry::Get()->Find(r.op), r.attrs), in,
                     &outs, options);
  std::vector<std::vector<double>> v;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!r.req.empty() && r.req[i] == OpReqType::kNullOp) continue;
    v.push_back(ToDouble(outs[i].Copy(Context::CPU())));
  }
  for (size_t i : r.mutated) v.push_back(ToDouble(in[i].Copy(Context::CPU())));
  *dnn_calls = testing::CudnnCallsSoFar() - before;
  return v;
}

void ExpectSameOnGpu(const std::string& name, const OpRun& r, Path path) {
  SCOPED_TRACE(name);
  try {
    int64_t cpu_calls, gpu_calls;
    const auto want = Results(r, Context::CPU(), &cpu_calls);
    const auto got = Results(r, Context::GPU(0), &gpu_calls);
    ASSERT_EQ(got.size(), want.size());
    const DType dt = r.inputs[0].dtype();
    const double tol = dt == DType::kFloat16 ? 2e-2 : r.float32_tolerance;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(AllClose(got[i], want[i], tol, tol)) << "result " << i;
    }
    if (path == Path::kCudnn) {
      EXPECT_EQ(gpu_calls, 1) << "cuDNN did not run";
    } else {
      EXPECT_EQ(gpu_calls, 0) << "cuDNN ran";
    }
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

NDArray Data(const TShape& shape, DType dt, uint32_t seed, double lo = -2,
             double hi = 2) {
  return RandomArray(shape, dt, lo, hi, seed);
}

// Data with a NaN at element `at`.
NDArray WithNan(const TShape& shape, size_t at) {
  std::vector<double> v = ToDouble(Data(shape, DType::kFloat32, 9));
  v[at] = std::numeric_limits<double>::quiet_NaN();
  return testing::ArrayOf(shape, v);
}

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat16,
                                    DType::kFloat64};
const std::vector<OpReqType> kWrite = {OpReqType::kWriteTo};
const std::vector<OpReqType> kAdd = {OpReqType::kAddTo};

TEST(CudnnPaths, SoftmaxAndItsGradientMatchTheCpu) {
  MX_SKIP_WITHOUT_GPU();
  for (DType dt : kFloats) {
    for (const char* op : {"softmax", "log_softmax"}) {
      for (const char* axis : {"0", "1", "-1"}) {
        const std::string name =
            std::string(op) + " axis " + axis + " " + DTypeName(dt);
        const NDArray x = Data({4, 33, 5}, dt, 1);
        ExpectSameOnGpu(name, {op, {x}, {{"axis", axis}}}, Path::kCudnn);
        const NDArray y = nd::Call(op, {x}, {{"axis", axis}});
        const NDArray g = Data({4, 33, 5}, dt, 2);
        for (const auto& req : {kWrite, kAdd}) {
          ExpectSameOnGpu(
              name + " gradient",
              {std::string("_backward_") + op, {g, y}, {{"axis", axis}}, req},
              Path::kCudnn);
        }
      }
    }
  }
  // Added to an output; a temperature (the plugin's own kernel); a NaN;
  // in place (the output is the input; the gradient written over the
  // output gradient).
  ExpectSameOnGpu("softmax add",
                  {"softmax", {Data({6, 300}, DType::kFloat32, 3)}, {}, kAdd},
                  Path::kCudnn);
  ExpectSameOnGpu("softmax temperature",
                  {"softmax",
                   {Data({6, 30}, DType::kFloat32, 4)},
                   {{"temperature", "2.5"}}},
                  Path::kOwn);
  ExpectSameOnGpu("log_softmax NaN", {"log_softmax", {WithNan({3, 8}, 10)}, {}},
                  Path::kCudnn);
  OpRun in_place{"softmax", {Data({5, 40}, DType::kFloat32, 12)}};
  in_place.in_place = true;
  ExpectSameOnGpu("softmax in place", in_place, Path::kCudnn);
  const NDArray logits = Data({7, 30}, DType::kFloat32, 13);
  OpRun grad_in_place{
      "_backward_log_softmax",
      {Data({7, 30}, DType::kFloat32, 14), nd::Call("log_softmax", {logits})}};
  grad_in_place.in_place = true;
  ExpectSameOnGpu("log_softmax gradient in place", grad_in_place, Path::kCudnn);
}

TEST(CudnnPaths, ActivationsMatchTheCpu) {
  MX_SKIP_WITHOUT_GPU();
  for (DType dt : kFloats) {
    for (const char* act : {"relu", "sigmoid", "tanh", "softrelu"}) {
      for (const auto& req : {kWrite, kAdd}) {
        ExpectSameOnGpu(
            std::string(act) + " " + DTypeName(dt),
            {"Activation",
             {Data({3, 5, 7, 9}, dt, 5)},
             {{"act_type", act}},
             req},
            std::string(act) == "softrelu" ? Path::kOwn : Path::kCudnn);
      }
    }
  }
  // relu keeps a NaN (as the CPU's and NumPy's maximum do), with cuDNN and
  // with the plugin's own kernel (the relu op).
  ExpectSameOnGpu("relu NaN",
                  {"Activation", {WithNan({4, 6}, 7)}, {{"act_type", "relu"}}},
                  Path::kCudnn);
  ExpectSameOnGpu("relu op NaN", {"relu", {WithNan({4, 6}, 7)}, {}},
                  Path::kOwn);
  OpRun in_place{"Activation",
                 {Data({6, 50}, DType::kFloat32, 15)},
                 {{"act_type", "tanh"}}};
  in_place.in_place = true;
  ExpectSameOnGpu("tanh in place", in_place, Path::kCudnn);
}

// Pooling with its argmax not asked for (kNullOp), as a graph's inference
// runs it: cuDNN's pooling where it takes the case.
TEST(CudnnPaths, PoolingWithoutArgmaxMatchesTheCpu) {
  MX_SKIP_WITHOUT_GPU();
  struct PoolCase {
    std::string name;
    TShape shape;
    AttrDict attrs;
    Path path = Path::kCudnn;
  };
  const std::vector<PoolCase> cases = {
      {"max 3x3 s2 p1",
       {2, 3, 11, 9},
       {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}}},
      {"max 1-D", {2, 3, 12}, {{"kernel", "(3,)"}, {"stride", "(2,)"}}},
      {"max 3-D",
       {1, 2, 5, 6, 7},
       {{"kernel", "(2,3,2)"}, {"stride", "(2,1,2)"}, {"pad", "(1,1,0)"}}},
      {"avg include pad",
       {2, 2, 8, 8},
       {{"kernel", "(3,3)"}, {"pool_type", "avg"}, {"pad", "(1,1)"}}},
      {"avg exclude pad",
       {2, 2, 8, 8},
       {{"kernel", "(3,3)"},
        {"pool_type", "avg"},
        {"pad", "(1,1)"},
        {"count_include_pad", "False"}}},
      {"avg 3-D exclude pad",
       {1, 2, 4, 5, 6},
       {{"kernel", "(2,2,2)"},
        {"pool_type", "avg"},
        {"pad", "(1,1,1)"},
        {"count_include_pad", "False"}}},
      {"global avg",
       {3, 4, 5, 5},
       {{"kernel", "(1,1)"}, {"pool_type", "avg"}, {"global_pool", "True"}}},
      {"global max",
       {3, 4, 5, 5},
       {{"kernel", "(1,1)"}, {"global_pool", "True"}}},
      // "full" windows past the padded input: the plugin's own kernel.
      {"max full",
       {2, 3, 10},
       {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pooling_convention", "full"}},
       Path::kOwn},
      {"avg full, same as valid",
       {2, 3, 9},
       {{"kernel", "(3,)"},
        {"stride", "(2,)"},
        {"pool_type", "avg"},
        {"pooling_convention", "full"}}},
      {"sum",
       {2, 3, 6, 6},
       {{"kernel", "(2,2)"}, {"pool_type", "sum"}},
       Path::kOwn},
  };
  for (const PoolCase& c : cases) {
    const bool is_max = c.attrs.count("pool_type") == 0;
    for (DType dt : kFloats) {
      for (OpReqType r : {OpReqType::kWriteTo, OpReqType::kAddTo}) {
        std::vector<OpReqType> req = {r};
        if (is_max) req.push_back(OpReqType::kNullOp);
        ExpectSameOnGpu(c.name + " " + DTypeName(dt) +
                            (r == OpReqType::kAddTo ? " add" : ""),
                        {"Pooling", {Data(c.shape, dt, 6)}, c.attrs, req},
                        c.path);
      }
    }
  }
  ExpectSameOnGpu("max NaN",
                  {"Pooling",
                   {WithNan({1, 1, 6, 6}, 14)},
                   {{"kernel", "(3,3)"}, {"stride", "(2,2)"}},
                   {OpReqType::kWriteTo, OpReqType::kNullOp}},
                  Path::kCudnn);
  // With the argmax asked for (training): the plugin's own kernel.
  ExpectSameOnGpu("max with argmax",
                  {"Pooling",
                   {Data({2, 3, 8, 8}, DType::kFloat32, 16)},
                   {{"kernel", "(2,2)"}, {"stride", "(2,2)"}}},
                  Path::kOwn);
}

// BatchNorm in training: output, batch mean and (biased) variance, and the
// moving statistics updated in place. (Inference uses the moving
// statistics: the own kernel.)
TEST(CudnnPaths, BatchNormTrainingMatchesTheCpu) {
  MX_SKIP_WITHOUT_GPU();
  struct BnCase {
    std::string name;
    TShape shape;
    int64_t channels;
    AttrDict attrs;
    Path path = Path::kCudnn;
    double lo = -3, hi = 5;  // The data's range.
    double float32_tolerance = 1e-4;
  };
  const std::vector<BnCase> cases = {
      {"nchw", {4, 3, 5, 6}, 3, {{"fix_gamma", "False"}}},
      {"fix_gamma", {4, 3, 5, 6}, 3, {}},
      {"channels last", {4, 5, 6}, 6, {{"axis", "-1"}, {"fix_gamma", "False"}}},
      {"2-D", {16, 7}, 7, {{"fix_gamma", "False"}, {"eps", "1e-5"}}},
      {"momentum", {3, 4, 9}, 4, {{"momentum", "0.5"}, {"fix_gamma", "False"}}},
      // cuDNN 9's minimum eps is 0.
      {"eps 1e-7", {4, 3, 5}, 3, {{"eps", "1e-7"}, {"fix_gamma", "False"}}},
      // A variance far below the mean's square (and below eps). cuDNN
      // accumulates in float32: on an H200 its normalized outputs were off
      // by up to 1.4e-4, what one rounding of a value near 100 (7.6e-6)
      // is against the spread (0.058); the CPU sums in double.
      {"large mean, small spread",
       {4, 3, 5, 5},
       3,
       {{"fix_gamma", "False"}},
       Path::kCudnn,
       99.9,
       100.1,
       1e-3},
      // One value per channel: no variance for cuDNN; the own kernel.
      {"one value per channel",
       {1, 5},
       5,
       {{"fix_gamma", "False"}},
       Path::kOwn},
  };
  for (const BnCase& c : cases) {
    for (DType dt : kFloats) {
      // Per-channel arrays are float32 for float16 data, as on the CPU.
      const DType pdt = dt == DType::kFloat16 ? DType::kFloat32 : dt;
      const TShape ch{c.channels};
      OpRun r{"BatchNorm",
              {Data(c.shape, dt, 7, c.lo, c.hi), Data(ch, pdt, 8, 0.5, 1.5),
               Data(ch, pdt, 9), Data(ch, pdt, 10), Data(ch, pdt, 11, 0.5, 2)},
              c.attrs};
      r.train = true;
      r.mutated = {3, 4};
      r.float32_tolerance = c.float32_tolerance;
      ExpectSameOnGpu(c.name + " " + DTypeName(dt), r, c.path);
      r.req = {OpReqType::kAddTo, OpReqType::kWriteTo, OpReqType::kAddTo};
      ExpectSameOnGpu(c.name + " add " + DTypeName(dt), r, c.path);
      // The data output not asked for: the own kernel (statistics only).
      r.req = {OpReqType::kNullOp, OpReqType::kWriteTo, OpReqType::kWriteTo};
      ExpectSameOnGpu(c.name + " statistics only " + DTypeName(dt), r,
                      Path::kOwn);
    }
  }
}

// Out-of-range and fractional values convert as the CPU's fills do.
TEST(CudnnPaths, IntegerFillsMatchTheCpu) {
  MX_SKIP_WITHOUT_GPU();
  for (const char* dtype : {"int8", "uint8", "int32", "int64"}) {
    for (const char* value : {"300", "-1.7", "1e20", "-3e19", "nan", "7"}) {
      SCOPED_TRACE(std::string(dtype) + " " + value);
      const AttrDict attrs = {
          {"shape", "(5,)"}, {"value", value}, {"dtype", dtype}};
      try {
        EXPECT_EQ(ToDouble(nd::Call("_full", {}, attrs, Context::GPU(0))
                               .Copy(Context::CPU())),
                  ToDouble(nd::Call("_full", {}, attrs, Context::CPU())));
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace mx
