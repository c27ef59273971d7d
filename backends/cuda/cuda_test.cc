// The CUDA plugin on a real GPU: device copies, allocator reuse and
// out-of-memory, every kernel family against the CPU kernels (forward and
// autograd gradients) and errors at the wait (fusion, executor and
// training: cuda_graph_test.cc). Without a usable GPU every test but the first
// skips with one line saying why; the first checks that gpu(0) is then a typed
// error.
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd.h"
#include "backends/cuda/cuda_test_util.h"
#include "engine/engine.h"
#include "graph/op.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "ndarray/storage.h"
#include "plugin/plugin.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::Host;
using testing::NoGpuReason;
using testing::RandomArray;
using testing::ToDouble;

#define SKIP_WITHOUT_GPU() MX_SKIP_WITHOUT_GPU()

TEST(CudaPlugin, LoadsWithOrWithoutAGpu) {
  const std::string& reason = NoGpuReason();
  bool has_gpu_device = false;
  for (const PluginInfo& p : ListPlugins()) {
    for (const std::string& d : p.devices) has_gpu_device |= d == "gpu";
  }
  EXPECT_TRUE(has_gpu_device);
  if (!reason.empty()) {
    std::printf("no usable GPU (%s): gpu(0) must be a typed error\n",
                reason.c_str());
    try {
      NDArray a({4}, Context::GPU(0), DType::kFloat32, /*delay_alloc=*/false);
      a.WaitToRead();
      ADD_FAILURE() << "an array on gpu(0) without a GPU";
    } catch (const Error& e) {
      EXPECT_TRUE(testing::Contains(e.what(), "gpu(0)")) << e.what();
    }
  }
}

TEST(CudaDevice, CopiesAreExactAndFreedBlocksAreReused) {
  SKIP_WITHOUT_GPU();
  const Context gpu = Context::GPU(0);
  const NDArray x = RandomArray({1000, 37}, DType::kFloat32, -5, 5, 1);
  EXPECT_EQ(Host(x.Copy(gpu)), ToDouble(x));
  const NDArray h = RandomArray({3, 5}, DType::kFloat16, -5, 5, 2);
  EXPECT_EQ(Host(h.Copy(gpu).Copy(gpu)), ToDouble(h));
  engine::Engine::Get()->WaitForAll();
  Storage* s = Storage::Get();
  {
    NDArray warm({1 << 20}, gpu, DType::kFloat32, false);
    warm.WaitToRead();
  }
  engine::Engine::Get()->WaitForAll();
  const Storage::Stats before = s->GetStats(gpu);
  for (int i = 0; i < 10; ++i) {
    {
      NDArray a({1 << 20}, gpu, DType::kFloat32, false);
      a.WaitToRead();
    }
    // Arrays are freed by an engine operation after their last use.
    engine::Engine::Get()->WaitForAll();
  }
  engine::Engine::Get()->WaitForAll();
  const Storage::Stats after = s->GetStats(gpu);
  EXPECT_EQ(after.num_device_allocs, before.num_device_allocs)
      << "cudaMalloc on the hot path";
  EXPECT_GE(after.num_reuses, before.num_reuses + 10);
  EXPECT_GE(after.peak_bytes_in_use, size_t{4} << 20);
  std::printf(
      "gpu(0) storage: in use %zu, pooled %zu, peak %zu bytes, %lld "
      "device allocations, %lld reuses\n",
      after.bytes_in_use, after.bytes_pooled, after.peak_bytes_in_use,
      static_cast<long long>(after.num_device_allocs),
      static_cast<long long>(after.num_reuses));
}

TEST(CudaDevice, OutOfMemoryIsATypedErrorAndTheDeviceStaysUsable) {
  SKIP_WITHOUT_GPU();
  const Context gpu = Context::GPU(0);
  try {
    NDArray huge({int64_t{1} << 42}, gpu, DType::kFloat32, false);  // 16 TiB
    huge.WaitToRead();
    ADD_FAILURE() << "allocating 16 TiB succeeded";
  } catch (const Error& e) {
    std::printf("out of memory: %s\n", e.what());
    EXPECT_TRUE(testing::Contains(e.what(), "gpu(0)")) << e.what();
    EXPECT_TRUE(testing::Contains(e.what(), "17592186044416")) << e.what();
  }
  const NDArray x = testing::ArrayOf({3}, {1, 2, 3});
  EXPECT_EQ(Host(nd::relu(x.Copy(gpu))), (std::vector<double>{1, 2, 3}));
}

// Outputs and the gradients of every input of f on ctx (inputs made on
// the CPU and copied, so both devices see the same numbers).
using Values = std::vector<std::vector<double>>;
using Fn = std::function<NDArray(const std::vector<NDArray>&)>;

Values Compute(Context ctx, const std::vector<TShape>& shapes, DType dtype,
               const Fn& f) {
  std::vector<NDArray> in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    in.push_back(RandomArray(shapes[i], dtype, -1, 1, 11 + i).Copy(ctx));
    autograd::AttachGrad(&in.back());
  }
  NDArray y;
  {
    autograd::RecordScope record;
    y = f(in);
  }
  autograd::Backward({y}, {RandomArray(y.shape(), dtype, -1, 1, 5).Copy(ctx)});
  Values v{Host(y)};
  for (const NDArray& x : in) v.push_back(Host(x.grad()));
  return v;
}

struct Case {
  std::vector<TShape> shapes;
  Fn f;
  DType dtype = DType::kFloat32;
};

NDArray Op(const std::string& name, const std::vector<NDArray>& in,
           const std::map<std::string, std::string>& attrs) {
  return nd::Call(name, in, attrs);
}

std::map<std::string, Case> Cases() {
  std::map<std::string, Case> c;
  c["fc_bias"] = {
      {{8, 20}, {7, 20}, {7}}, [](auto& x) {
        return Op("FullyConnected", {x[0], x[1], x[2]}, {{"num_hidden", "7"}});
      }};
  c["fc_flatten_no_bias"] = {{{4, 3, 5, 2}, {9, 30}}, [](auto& x) {
                               return Op(
                                   "FullyConnected", {x[0], x[1]},
                                   {{"num_hidden", "9"}, {"no_bias", "True"}});
                             }};
  c["fc_float16"] = {
      {{16, 64}, {32, 64}, {32}},
      [](auto& x) {
        return Op("FullyConnected", {x[0], x[1], x[2]}, {{"num_hidden", "32"}});
      },
      DType::kFloat16};
  c["dot_ta_tb"] = {{{6, 4}, {5, 6}}, [](auto& x) {
                      return Op(
                          "dot", {x[0], x[1]},
                          {{"transpose_a", "True"}, {"transpose_b", "True"}});
                    }};
  c["dot_3d"] = {{{2, 3, 4}, {4, 5}}, [](auto& x) {
                   return Op("dot", {x[0], x[1]}, {});
                 }};
  c["batch_dot_tb"] = {
      {{3, 4, 5}, {3, 6, 5}}, [](auto& x) {
        return Op("batch_dot", {x[0], x[1]}, {{"transpose_b", "True"}});
      }};
  for (const char* act : {"relu", "sigmoid", "tanh", "softrelu"}) {
    c[std::string("act_") + act] = {
        {{5, 33}}, [act](auto& x) {
          return Op("Activation", {x[0]}, {{"act_type", act}});
        }};
  }
  c["softmax_axis1"] = {{{3, 7, 4}}, [](auto& x) {
                          return Op("softmax", {x[0]}, {{"axis", "1"}});
                        }};
  c["log_softmax_rows"] = {
      {{6, 300}}, [](auto& x) { return Op("log_softmax", {x[0]}, {}); }};
  c["broadcast_add_mul"] = {
      {{3, 4}, {1, 4}, {3, 1}}, [](auto& x) {
        return Op("broadcast_mul",
                  {Op("broadcast_add", {x[0], x[1]}, {}), x[2]}, {});
      }};
  c["sum_mean"] = {
      {{4, 5, 6}}, [](auto& x) {
        return Op(
            "elemwise_add",
            {Op("sum", {x[0]}, {{"axis", "(1, 2)"}, {"keepdims", "True"}}),
             Op("mean", {x[0]}, {{"axis", "(1, 2)"}, {"keepdims", "True"}})},
            {});
      }};
  c["scalar_chain"] = {
      {{7, 9}}, [](auto& x) {
        NDArray y = Op("_mul_scalar", {x[0]}, {{"scalar", "3"}});
        y = Op("_rminus_scalar", {y}, {{"scalar", "1"}});
        return Op("exp", {Op("tanh", {y}, {})}, {});
      }};
  c["conv2d_pad_stride_bias"] = {{{2, 3, 9, 8}, {4, 3, 3, 3}, {4}},
                                 [](auto& x) {
                                   return Op("Convolution", {x[0], x[1], x[2]},
                                             {{"kernel", "(3,3)"},
                                              {"num_filter", "4"},
                                              {"stride", "(2,1)"},
                                              {"pad", "(1,1)"}});
                                 }};
  c["conv2d_groups_dilate"] = {{{1, 4, 10, 10}, {6, 2, 3, 3}}, [](auto& x) {
                                 return Op("Convolution", {x[0], x[1]},
                                           {{"kernel", "(3,3)"},
                                            {"num_filter", "6"},
                                            {"num_group", "2"},
                                            {"dilate", "(2,2)"},
                                            {"no_bias", "True"}});
                               }};
  c["conv1d"] = {
      {{2, 3, 11}, {5, 3, 3}, {5}}, [](auto& x) {
        return Op("Convolution", {x[0], x[1], x[2]},
                  {{"kernel", "(3,)"}, {"num_filter", "5"}, {"pad", "(1,)"}});
      }};
  c["pool_max_pad"] = {
      {{2, 3, 7, 9}}, [](auto& x) {
        return nd::Pooling(x[0], {3, 3}, "max", {2, 2}, {1, 1});
      }};
  c["pool_max_full_1d"] = {{{2, 3, 10}}, [](auto& x) {
                             return nd::Pooling(x[0], {3}, "max", {2}, {},
                                                false, "full");
                           }};
  c["pool_avg_exclude_pad"] = {{{2, 2, 6, 6}}, [](auto& x) {
                                 return nd::Pooling(x[0], {3, 3}, "avg", {1, 1},
                                                    {1, 1}, false, "valid",
                                                    false);
                               }};
  c["pool_sum_3d"] = {{{1, 2, 4, 4, 4}}, [](auto& x) {
                        return nd::Pooling(x[0], {2, 2, 2}, "sum", {2, 2, 2});
                      }};
  c["pool_global_avg"] = {
      {{3, 4, 5, 5}}, [](auto& x) {
        return nd::Pooling(x[0], {1, 1}, "avg", {}, {}, true);
      }};
  c["batchnorm_train"] = {
      {{4, 3, 5, 6}, {3}, {3}}, [](auto& x) {
        // The moving statistics are updated in place:
        // made outside the recorded graph.
        const NDArray mm = nd::zeros({3}, x[0].ctx());
        const NDArray mv = nd::ones({3}, x[0].ctx());
        const NDArray y = nd::BatchNorm(x[0], x[1], x[2], mm, mv, 1e-3, 0.9,
                                        /*fix_gamma=*/false);
        return nd::concat({nd::reshape(y, {-1}), mm, mv}, 0);
      }};
  // Indexing ops (index_ops.cc); index inputs are scaled floats, which
  // truncate toward zero as on the CPU. Repeated indices exercise the
  // scatter-add gradients.
  c["take_wrap_float_indices"] = {
      {{6, 5}, {4, 3}}, [](auto& x) {
        return Op("take", {x[0], Op("_mul_scalar", {x[1]}, {{"scalar", "8"}})},
                  {{"mode", "wrap"}});
      }};
  c["take_axis1_clip_float16"] = {
      {{4, 7, 3}, {5}},
      [](auto& x) {
        return Op("take", {x[0], Op("_mul_scalar", {x[1]}, {{"scalar", "10"}})},
                  {{"axis", "1"}});
      },
      DType::kFloat16};
  c["embedding"] = {{{2, 5}, {10, 4}}, [](auto& x) {
                      return Op(
                          "Embedding",
                          {Op("_mul_scalar", {x[0]}, {{"scalar", "12"}}), x[1]},
                          {{"input_dim", "10"}, {"output_dim", "4"}});
                    }};
  c["gather_nd"] = {
      {{4, 3, 2}, {2, 7}}, [](auto& x) {
        return Op("gather_nd",
                  {x[0], Op("_mul_scalar", {x[1]}, {{"scalar", "3"}})}, {});
      }};
  c["where_broadcast"] = {
      {{3, 1}, {3, 4}, {1, 4}}, [](auto& x) {
        return Op("where", {nd::relu(x[0]), x[1], x[2]}, {});
      }};
  c["sequence_mask_axis1"] = {
      {{3, 6, 2}, {3}}, [](auto& x) {
        NDArray len = Op("_mul_scalar", {x[1]}, {{"scalar", "3"}});
        len = Op("_plus_scalar", {len}, {{"scalar", "3"}});
        return Op(
            "SequenceMask", {x[0], len},
            {{"use_sequence_length", "True"}, {"axis", "1"}, {"value", "-1"}});
      }};
  c["triu_from_vector"] = {{{5}}, [](auto& x) {
                             return Op("triu", {x[0]}, {{"k", "1"}});
                           }};
  c["add_n_reuse"] = {{{4, 5}}, [](auto& x) {
                        // x used three times: gradients add up (add_n).
                        return Op("elemwise_mul",
                                  {Op("elemwise_add", {x[0], x[0]}, {}), x[0]},
                                  {});
                      }};
  return c;
}

TEST(CudaOps, MatchTheCpuForwardAndBackward) {
  SKIP_WITHOUT_GPU();
  for (const auto& [name, c] : Cases()) {
    SCOPED_TRACE(name);
    try {
      const Values want = Compute(Context::CPU(), c.shapes, c.dtype, c.f);
      const Values got = Compute(Context::GPU(0), c.shapes, c.dtype, c.f);
      ASSERT_EQ(got.size(), want.size());
      // Sums of up to a few hundred products in another order; float16
      // rounds each stored value to 11 bits.
      const double rtol = c.dtype == DType::kFloat16 ? 2e-2 : 1e-4;
      const double atol = c.dtype == DType::kFloat16 ? 2e-2 : 1e-5;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_TRUE(AllClose(got[i], want[i], rtol, atol)) << "value " << i;
      }
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// Integer data on the GPU computes exactly what the CPU computes, in every
// integer dtype, with values that overflow the narrow types (wrapping),
// divide by zero, raise to negative powers and saturate scalars; the ops
// the README lists as integer-capable must not decline (the conformance
// suite accepts a DTypeError).
TEST(CudaOps, IntegerDataMatchesTheCpuExactly) {
  SKIP_WITHOUT_GPU();
  using Attrs = std::map<std::string, std::string>;
  struct IntCase {
    std::string op;
    int arity;
    Attrs attrs;
  };
  const std::vector<IntCase> cases = {
      {"negative", 1, {}},
      {"abs", 1, {}},
      {"sign", 1, {}},
      {"square", 1, {}},
      {"relu", 1, {}},
      {"elemwise_add", 2, {}},
      {"elemwise_sub", 2, {}},
      {"elemwise_mul", 2, {}},
      {"elemwise_div", 2, {}},
      {"broadcast_maximum", 2, {}},
      {"broadcast_minimum", 2, {}},
      {"broadcast_power", 2, {}},
      {"broadcast_greater", 2, {}},
      {"_npi_less_equal", 2, {}},
      {"_plus_scalar", 1, {{"scalar", "100"}}},
      {"_rminus_scalar", 1, {{"scalar", "3.7"}}},
      {"_mul_scalar", 1, {{"scalar", "1e30"}}},
      {"_rdiv_scalar", 1, {{"scalar", "-7"}}},
      {"_div_scalar", 1, {{"scalar", "0"}}},
      {"_power_scalar", 1, {{"scalar", "3"}}},
      {"_rpower_scalar", 1, {{"scalar", "-2"}}},
      {"_maximum_scalar", 1, {{"scalar", "-1"}}},
      {"_equal_scalar", 1, {{"scalar", "0"}}},
      {"clip", 1, {{"a_min", "-5"}, {"a_max", "1000"}}},
      {"sum", 1, {{"axis", "1"}}},
      {"sum", 1, {{"axis", "(0, 2)"}}},
      {"mean", 1, {{"axis", "(0, 2)"}}},
      {"max", 1, {{"axis", "0"}}},
      {"min", 1, {{"axis", "(0, 2)"}}},
      {"add_n", 3, {}},
      // Copies, gathers and scatters (integer-capable since 2026-11-30).
      {"transpose", 1, {{"axes", "(2, 0, 1)"}}},
      {"slice", 1, {{"begin", "(1, 0, 2)"}, {"end", "(3, 5, 6)"}}},
      {"reverse", 1, {{"axis", "1"}}},
      {"tile", 1, {{"reps", "(2, 1, 1)"}}},
      {"repeat", 1, {{"repeats", "2"}, {"axis", "0"}}},
      {"tril", 1, {{"k", "1"}}},
      {"where", 3, {}},
      {"take", 2, {{"axis", "1"}, {"mode", "clip"}}},
      {"argmax", 1, {{"axis", "1"}}},
      {"argmin", 1, {{"axis", "2"}}},
      {"one_hot", 1, {{"depth", "4"}, {"dtype", "int8"}, {"on_value", "300"}}},
      {"SequenceReverse", 1, {}},
      {"_backward_relu", 2, {}},
  };
  // Values spread over each dtype's range (and beyond int8's 127 in sums).
  auto values = [](DType dt, int seed) {
    const double span = dt == DType::kUInt8  ? 256
                        : dt == DType::kInt8 ? 256
                                             : 2e5;
    const double low = dt == DType::kUInt8 ? 0 : -span / 2;
    std::vector<double> v(4 * 5 * 6);
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = std::floor(low + std::fmod(i * 7919.0 + seed * 104729.0, span));
      if (i % 11 == 0) v[i] = 0;  // Divisions by zero, zero bases.
      if (i % 13 == 0) v[i] = dt == DType::kUInt8 ? 1 : -1;
    }
    return v;
  };
  for (DType dt : {DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64}) {
    for (const IntCase& c : cases) {
      SCOPED_TRACE(c.op + " " + DTypeName(dt));
      std::vector<NDArray> cpu_in, gpu_in;
      for (int i = 0; i < c.arity; ++i) {
        cpu_in.push_back(
            nd::cast(testing::ArrayOf({4, 5, 6}, values(dt, i + 1)), dt));
        gpu_in.push_back(cpu_in.back().Copy(Context::GPU(0)));
      }
      try {
        const std::vector<double> want = Host(Op(c.op, cpu_in, c.attrs));
        const std::vector<double> got = Host(Op(c.op, gpu_in, c.attrs));
        EXPECT_EQ(got, want);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
      }
    }
    // Sums into a smaller shape, saturated as the CPU's (int8 and uint8
    // sums of 24 values pass their range), and a gradient broadcast back
    // divided by the count (mean's), truncated as the CPU's.
    SCOPED_TRACE(DTypeName(dt));
    const NDArray g = nd::cast(testing::ArrayOf({4, 5, 6}, values(dt, 4)), dt);
    std::vector<double> five = values(dt, 5);
    five.resize(5);
    const NDArray small = nd::cast(testing::ArrayOf({1, 5, 1}, five), dt);
    const Attrs reduced = {
        {"axis", "(0, 2)"}, {"keepdims", "True"}, {"normalize", "True"}};
    try {
      EXPECT_EQ(
          Host(Op("_reduce_sum_like",
                  {g.Copy(Context::GPU(0)), small.Copy(Context::GPU(0))}, {})),
          ToDouble(Op("_reduce_sum_like", {g, small}, {})));
      EXPECT_EQ(Host(Op("_broadcast_reduced_like",
                        {small.Copy(Context::GPU(0)), g.Copy(Context::GPU(0))},
                        reduced)),
                ToDouble(Op("_broadcast_reduced_like", {small, g}, reduced)));
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(CudaOps, DropoutMasksAreSeededAndScaled) {
  SKIP_WITHOUT_GPU();
  const NDArray x = nd::ones_like(
      RandomArray({64, 1000}, DType::kFloat32, -1, 1, 4).Copy(Context::GPU(0)));
  auto run = [&] {
    random::Seed(7);
    autograd::RecordScope record;  // training mode
    return Host(nd::Dropout(x, 0.3));
  };
  const std::vector<double> a = run(), b = run();
  EXPECT_EQ(a, b);
  int64_t zeros = 0;
  for (double v : a) {
    if (v == 0) {
      ++zeros;
    } else {
      EXPECT_NEAR(v, 1 / 0.7, 1e-6);
    }
  }
  EXPECT_NEAR(static_cast<double>(zeros) / a.size(), 0.3, 0.01);
  // Outside training: the identity.
  EXPECT_EQ(Host(nd::Dropout(x, 0.3)), Host(x));
}

TEST(CudaOps, ErrorsReachTheCallerNamingTheOp) {
  SKIP_WITHOUT_GPU();
  // Broadcasting over more than 8 dimensions: not on the GPU (the CPU
  // has no such limit); the kernel's error reaches the wait.
  const NDArray x =
      RandomArray({2, 1, 2, 1, 2, 1, 2, 1, 2}, DType::kFloat32, -1, 1, 3)
          .Copy(Context::GPU(0));
  const NDArray b =
      RandomArray({1, 2, 1, 2, 1, 2, 1, 2, 1}, DType::kFloat32, -1, 1, 4)
          .Copy(Context::GPU(0));
  try {
    NDArray y = Op("broadcast_add", {x, b}, {});
    y.WaitToRead();
    ADD_FAILURE() << "a 9-dimensional broadcast_add ran";
  } catch (const Error& e) {
    EXPECT_TRUE(testing::Contains(e.what(), "broadcast_add")) << e.what();
    EXPECT_TRUE(testing::Contains(e.what(), "8 dimensions")) << e.what();
  }
  // An op without a GPU kernel (every op of the CPU library has one: a
  // CPU-only op of this test).
  static const bool registered = [] {
    OpRegistry::Get()
        ->Register("_cuda_test_cpu_only")
        .SetNumInputs(1)
        .SetInferShape([](const NodeAttrs&, std::vector<TShape>* in,
                          std::vector<TShape>* out) { (*out)[0] = (*in)[0]; })
        .SetInferType([](const NodeAttrs&, std::vector<DType>* in,
                         std::vector<DType>* out) { (*out)[0] = (*in)[0]; })
        .SetCompute(
            Context::kCPU,
            [](const OpContext&, const NodeAttrs&, const std::vector<TBlob>&,
               const std::vector<OpReqType>&, const std::vector<TBlob>&) {});
    return true;
  }();
  ASSERT_TRUE(registered);
  try {
    NDArray y = Op("_cuda_test_cpu_only", {x}, {});
    y.WaitToRead();
    ADD_FAILURE() << "_cuda_test_cpu_only ran on gpu(0)";
  } catch (const Error& e) {
    EXPECT_TRUE(testing::Contains(e.what(), "_cuda_test_cpu_only")) << e.what();
    EXPECT_TRUE(testing::Contains(e.what(), "gpu(0)")) << e.what();
  }
  // Indices the CPU raises on: flagged by the kernel, raised at the wait.
  const NDArray bad = nd::cast(testing::ArrayOf({1, 2}, {1, 9}), DType::kInt32)
                          .Copy(Context::GPU(0));
  for (const char* op : {"take", "gather_nd"}) {
    try {
      std::map<std::string, std::string> attrs;
      if (std::string(op) == "take") attrs["mode"] = "raise";
      NDArray y = Op(op, {x, bad}, attrs);
      y.WaitToRead();
      ADD_FAILURE() << op << " with index 9 for an axis of 3 ran";
    } catch (const Error& e) {
      EXPECT_TRUE(testing::Contains(e.what(), op)) << e.what();
    }
  }
  // The device still works.
  EXPECT_TRUE(AllClose(Host(nd::relu(x)),
                       ToDouble(nd::relu(x.Copy(Context::CPU()))), 0, 0));
}

}  // namespace
}  // namespace mx
