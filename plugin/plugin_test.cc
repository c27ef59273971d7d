// Loading plugins through the C ABI: what a plugin registers works in the
// host, and every bad plugin is a typed error that leaves nothing behind.
#include "plugin/plugin.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "autograd/autograd.h"
#include "backends/plugin_api/mx_plugin.h"
#include "backends/plugin_api/mx_plugin_cpp.h"
#include "base/error.h"
#include "base/parallel.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "imperative/imperative.h"
#include "subgraph/partition_graph.h"
#include "testing/op_test_util.h"
#include "testing/subgraph_test_util.h"

namespace mx {
namespace {

using testing::ArrayOf;
using testing::ExpectError;
using testing::ToDouble;

std::string Path(const char* var) {
  const char* p = std::getenv(var);
  EXPECT_NE(p, nullptr) << var;
  return p == nullptr ? "" : p;
}

std::string TmpPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// Loaded once per process; later tests see it.
const PluginInfo& TestPlugin() {
  static const PluginInfo info = LoadPlugin(Path("TEST_PLUGIN"));
  return info;
}

template <typename T>
T PluginSymbol(const char* name) {
  void* handle = dlopen(TestPlugin().path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr);
  void* sym = dlsym(handle, name);
  dlclose(handle);
  return reinterpret_cast<T>(sym);
}

bool Registered(const std::string& op) {
  return OpRegistry::Get()->Find(op) != nullptr;
}

TEST(Plugin, DescribesWhatItRegistered) {
  const PluginInfo& info = TestPlugin();
  EXPECT_EQ(info.name, "test_plugin");
  EXPECT_EQ(info.abi_major, MX_PLUGIN_ABI_MAJOR);
  EXPECT_EQ(info.abi_minor, MX_PLUGIN_ABI_MINOR);
  EXPECT_EQ(info.ops, (std::vector<std::string>{
                          "_test_plugin_scale", "_test_plugin_scale_backward",
                          "_test_plugin_offset", "_test_plugin_bad_shape",
                          "_test_plugin_bad_kernel"}));
  EXPECT_EQ(info.kernels,
            (std::vector<std::string>{"negative", "flatnonzero"}));
  EXPECT_EQ(info.backends, std::vector<std::string>{"test_plugin"});
  EXPECT_TRUE(info.thread_runtime);
  bool listed = false;
  for (const PluginInfo& p : ListPlugins()) listed |= p.name == "test_plugin";
  EXPECT_TRUE(listed);
}

TEST(Plugin, OpWithAttributeSchemaRuns) {
  TestPlugin();
  NDArray x = ArrayOf({3}, {1, 2, -3});
  EXPECT_EQ(ToDouble(imperative::Invoke("_test_plugin_scale", {x})[0]),
            (std::vector<double>{2, 4, -6}));
  EXPECT_EQ(ToDouble(imperative::Invoke("_test_plugin_scale", {x},
                                        {{"scale", "0.5"}})[0]),
            (std::vector<double>{0.5, 1, -1.5}));
  EXPECT_EQ(OpRegistry::Get()->Lookup("_test_plugin_scale").description(),
            "scale * x (test plugin)");
}

TEST(Plugin, AttributeSchemaIsChecked) {
  TestPlugin();
  NDArray x = ArrayOf({2}, {1, 2});
  ExpectError<InvalidArgument>(
      [&] {
        imperative::Invoke("_test_plugin_scale", {x}, {{"scael", "1"}});
      },
      {"test_plugin", "_test_plugin_scale", "unknown attribute \"scael\"",
       "scale"});
  ExpectError<InvalidArgument>(
      [&] {
        imperative::Invoke("_test_plugin_scale", {x}, {{"scale", "x"}});
      },
      {"attribute \"scale\" = \"x\" is not a number"});
  ExpectError<InvalidArgument>(
      [&] { imperative::Invoke("_test_plugin_offset", {x}); },
      {"_test_plugin_offset", "attribute \"offset\" is required"});
}

TEST(Plugin, GradientThroughThePluginsBackwardOp) {
  TestPlugin();
  NDArray x = ArrayOf({3}, {1, 2, 3});
  autograd::AttachGrad(&x);
  {
    autograd::RecordScope record;
    NDArray y =
        imperative::Invoke("_test_plugin_scale", {x}, {{"scale", "3"}})[0];
    autograd::Backward({y});
  }
  EXPECT_EQ(ToDouble(x.grad()), (std::vector<double>{3, 3, 3}));
}

TEST(Plugin, StatefulOpCreatesStateAndUsesTempSpace) {
  TestPlugin();
  const int before = PluginSymbol<int (*)()>("mx_test_plugin_states_created")();
  NDArray x = ArrayOf({4}, {1, 2, 3, 4});
  NDArray y =
      imperative::Invoke("_test_plugin_offset", {x}, {{"offset", "10"}})[0];
  EXPECT_EQ(ToDouble(y), (std::vector<double>{11, 12, 13, 14}));
  EXPECT_GT(PluginSymbol<int (*)()>("mx_test_plugin_states_created")(), before);
}

TEST(Plugin, KernelForAnExistingOpTakesPrecedence) {
  TestPlugin();
  auto calls = PluginSymbol<int (*)()>("mx_test_plugin_negative_calls");
  ASSERT_NE(calls, nullptr);
  const int before = calls();
  NDArray y = imperative::Invoke("negative", {ArrayOf({2}, {1, -2})})[0];
  EXPECT_EQ(ToDouble(y), (std::vector<double>{-1, 2}));
  EXPECT_EQ(calls(), before + 1);
}

// MxKernelContext.num_threads (BUILD sets MX_CPU_KERNEL_NTHREADS=2): 1 for
// a small op the engine runs on the pushing thread, 2 on its workers.
TEST(Plugin, KernelsAreToldTheirThreads) {
  TestPlugin();
  auto threads = PluginSymbol<int (*)()>("mx_test_plugin_negative_threads");
  ASSERT_NE(threads, nullptr);
  NDArray x = ArrayOf({2}, {1, -2});
  x.WaitToRead();  // Ready at push: the engine runs it on this thread.
  NDArray small = imperative::Invoke("negative", {x})[0];
  small.WaitToRead();
  EXPECT_EQ(threads(), 1);
  NDArray big = imperative::Invoke(
      "negative", {ArrayOf({1 << 20}, std::vector<double>(1 << 20, 1.0))})[0];
  big.WaitToRead();
  EXPECT_EQ(threads(), 2);
}

// The test plugin offered the process's first thread runtime: built-in
// kernels' parallel loops run on it (two kernel threads, see BUILD).
TEST(Plugin, ParallelLoopsRunOnThePluginsThreadRuntime) {
  TestPlugin();
  auto loops = PluginSymbol<int (*)()>("mx_test_plugin_runtime_loops");
  ASSERT_NE(loops, nullptr);
  const int before = loops();
  const int n = 1 << 20;
  NDArray x = ArrayOf({n}, std::vector<double>(n, 2.0));
  NDArray y = imperative::Invoke("_mul_scalar", {x}, {{"scalar", "3"}})[0];
  EXPECT_EQ(ToDouble(y), std::vector<double>(n, 6.0));
  EXPECT_GT(loops(), before);
}

// A runtime offered by a plugin whose init then fails is never used (the
// registrar commits it only after success). Checked in a fresh process
// (threadsafe death-test style re-runs this test alone), because the first
// runtime committed in a process stays: the test plugin's would win here.
TEST(PluginDeathTest, AFailedPluginsThreadRuntimeIsNeverUsed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        try {
          LoadPlugin(Path("RUNTIME_THEN_FAIL_PLUGIN"));
          std::fprintf(stderr, "the failing plugin loaded\n");
          std::exit(1);
        } catch (const RuntimeError& e) {
          if (std::string(e.what()).find("failed after offering") ==
                  std::string::npos ||
              Registered("_hostile_first")) {
            std::fprintf(stderr, "not refused and rolled back: %s\n", e.what());
            std::exit(1);
          }
        }
        // Two kernel threads (BUILD): the loop would go to a runtime.
        std::atomic<int64_t> covered{0};
        ParallelFor(1 << 16, 1,
                    [&](int64_t b, int64_t e) { covered += e - b; });
        if (covered != (1 << 16)) {
          std::fprintf(stderr, "the loop covered %lld of 65536\n",
                       static_cast<long long>(covered.load()));
          std::exit(1);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// A plugin built against 1.4 on a 1.3 host: the C++ layer reads no field
// past the host's struct sizes.
TEST(Plugin, NewerPluginOnAnOlderHostUsesNoNewerField) {
  MxKernelContext ctx{};
  ctx.struct_size = MX_STRUCT_SIZE_UPTO(MxKernelContext, input_version);
  ctx.num_threads = 7;  // Beyond the host's struct: must not be read.
  EXPECT_EQ(mxplugin::KernelContext(&ctx).num_threads(), 0);
  ctx.struct_size = sizeof(ctx);
  EXPECT_EQ(mxplugin::KernelContext(&ctx).num_threads(), 7);

  MxHostApi host{};
  host.struct_size = MX_STRUCT_SIZE_UPTO(MxHostApi, register_device);
  host.abi_major = 1;
  host.abi_minor = 3;
  host.register_thread_runtime = [](void*, const MxThreadRuntimeDef*,
                                    MxStatus*) {
    ADD_FAILURE() << "a field beyond the host's struct was called";
    return MX_STATUS_OK;
  };
  mxplugin::Plugin plugin(&host);
  EXPECT_FALSE(
      plugin.OfferThreadRuntime([](void*, int64_t, MxParallelBody, void*) {}));
}

// A kernel for a dynamic-shape op allocates its output through the ABI
// once it knows the length; a dtype it declines runs the built-in kernel.
TEST(Plugin, DynamicShapeKernelAllocatesItsOutput) {
  TestPlugin();
  auto calls = PluginSymbol<int (*)()>("mx_test_plugin_flatnonzero_calls");
  ASSERT_NE(calls, nullptr);
  const int before = calls();
  NDArray y = imperative::Invoke("flatnonzero",
                                 {ArrayOf({2, 3}, {0, 3, 0, 5, 0, 1})})[0];
  EXPECT_EQ(y.shape(), TShape({3}));
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 3, 5}));
  NDArray none =
      imperative::Invoke("flatnonzero", {ArrayOf({3}, {0, 0, 0})})[0];
  EXPECT_EQ(none.shape(), TShape({0}));
  EXPECT_EQ(calls(), before + 2);
  // float64: declined, the built-in kernel answers.
  NDArray f64 = imperative::Invoke("Cast", {ArrayOf({4}, {1, 0, 0, 2})},
                                   {{"dtype", "float64"}})[0];
  NDArray d = imperative::Invoke("flatnonzero", {f64})[0];
  EXPECT_EQ(ToDouble(d), (std::vector<double>{0, 3}));
  EXPECT_EQ(calls(), before + 3);
}

TEST(Plugin, BackendPartitionsAndComputesTheSame) {
  TestPlugin();
  Symbol s = Symbol::Create(
      "_test_plugin_scale",
      {Symbol::Create("_test_plugin_scale", {Symbol::Variable("x")},
                      {{"scale", "3"}})});
  PartitionReport report;
  Symbol p = PartitionGraph(s, "test_plugin", {}, &report);
  ASSERT_EQ(report.subgraphs.size(), 1u);
  EXPECT_EQ(report.subgraphs[0].claimed.size(), 2u);
  EXPECT_EQ(testing::CountOps(p, "_default_subgraph_op"), 1);
  auto a = Executor::SimpleBind(s, Context::CPU(), {{"x", TShape{5}}});
  auto b = Executor::SimpleBind(p, Context::CPU(), {{"x", TShape{5}}});
  testing::FillRandom(a.get());
  testing::CopyInputs(*a, b.get());
  a->Forward();
  b->Forward();
  EXPECT_TRUE(testing::SameOutputs(*a, *b));
}

TEST(Plugin, ShapeInferenceErrorNamesPluginAndOp) {
  TestPlugin();
  ExpectError<ShapeError>(
      [] {
        imperative::Invoke("_test_plugin_bad_shape", {ArrayOf({2}, {1, 2})});
      },
      {"plugin \"test_plugin\"", "_test_plugin_bad_shape",
       "refuses every shape"});
}

TEST(Plugin, KernelErrorReachesTheCallerAtTheNextWait) {
  TestPlugin();
  NDArray y =
      imperative::Invoke("_test_plugin_bad_kernel", {ArrayOf({2}, {1, 2})})[0];
  ExpectError<RuntimeError>([&] { y.WaitToRead(); },
                            {"plugin \"test_plugin\"",
                             "_test_plugin_bad_kernel", "failed on purpose"});
}

TEST(Plugin, OlderMinorVersionWithSmallerStructsLoads) {
  const PluginInfo info = LoadPlugin(Path("OLD_MINOR_PLUGIN"));
  EXPECT_EQ(info.abi_minor, 0);
  EXPECT_EQ(ToDouble(imperative::Invoke("_old_minor_add1",
                                        {ArrayOf({2}, {1, 2})})[0]),
            (std::vector<double>{2, 3}));
  // The 1.1 field (description) was garbage in the plugin's struct.
  EXPECT_NE(OpRegistry::Get()->Lookup("_old_minor_add1").description(), "");
}

// ---- Bad plugins: a typed error, nothing registered. ----

TEST(Plugin, LoadingTwiceIsAnError) {
  TestPlugin();
  ExpectError<AlreadyExists>([] { LoadPlugin(Path("TEST_PLUGIN")); },
                             {"already loaded"});
}

TEST(Plugin, MissingFileDirectoryFifoEmptyAndNonElfFiles) {
  ExpectError<NotFound>([] { LoadPlugin("/nonexistent/libx.so"); },
                        {"/nonexistent/libx.so", "no such file"});
  const char* tmp = std::getenv("TEST_TMPDIR");
  ExpectError<InvalidArgument>([&] { LoadPlugin(tmp ? tmp : "/tmp"); },
                               {"not a regular file"});
  const std::string fifo = TmpPath("plugin.fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Without the check dlopen blocks forever waiting for a writer.
  ExpectError<InvalidArgument>([&] { LoadPlugin(fifo); },
                               {fifo, "not a regular file"});
  const std::string empty = TmpPath("empty.so");
  std::ofstream(empty).close();
  ExpectError<InvalidArgument>([&] { LoadPlugin(empty); },
                               {"not a loadable shared library"});
  const std::string text = TmpPath("text.so");
  std::ofstream(text) << "not an ELF file\n";
  ExpectError<InvalidArgument>([&] { LoadPlugin(text); },
                               {"not a loadable shared library"});
}

TEST(Plugin, SharedLibraryThatIsNotAPlugin) {
  ExpectError<InvalidArgument>([] { LoadPlugin(Path("NOT_A_PLUGIN")); },
                               {"not an mxcore plugin", "mx_plugin_init"});
}

TEST(Plugin, DataSymbolNamedLikeTheEntryPointIsNotCalled) {
  ExpectError<InvalidArgument>([] { LoadPlugin(Path("DATA_SYMBOL_PLUGIN")); },
                               {"mx_plugin_init is not a function"});
}

TEST(Plugin, NewerMajorVersionIsRefusedNamingBothVersions) {
  ExpectError<InvalidArgument>(
      [] { LoadPlugin(Path("NEWER_MAJOR_PLUGIN")); },
      {"plugin ABI version 2.3", "host has " +
                                     std::to_string(MX_PLUGIN_ABI_MAJOR) + "." +
                                     std::to_string(MX_PLUGIN_ABI_MINOR)});
}

struct HostileCase {
  const char* var;
  std::vector<std::string> parts;
};

template <typename E>
void ExpectRolledBack(const HostileCase& c) {
  SCOPED_TRACE(c.var);
  ExpectError<E>([&] { LoadPlugin(Path(c.var)); }, c.parts);
  EXPECT_FALSE(Registered("_hostile_first"));
}

TEST(Plugin, StructTooSmallIsRefused) {
  ExpectRolledBack<InvalidArgument>(
      {"SMALL_STRUCT_PLUGIN", {"MxOpDef.struct_size is 16", "ABI 1.0"}});
}

TEST(Plugin, DuplicateNamesRegisterNothing) {
  ExpectRolledBack<AlreadyExists>(
      {"CLASH_PLUGIN", {"nothing was registered", "sin"}});
  ASSERT_TRUE(Registered("sin"));
}

TEST(Plugin, NullNameAndUnknownStatusCode) {
  ExpectRolledBack<InvalidArgument>({"NULL_NAME_PLUGIN", {"no plugin name"}});
  ExpectRolledBack<InvalidArgument>(
      {"BAD_CODE_PLUGIN",
       {"unknown status code 77", "nothing was registered"}});
}

TEST(Plugin, ExceptionsInsideTheCppLayerBecomeErrors) {
  ExpectRolledBack<RuntimeError>(
      {"THROW_INT_PLUGIN", {"nothing was registered", "not a std::exception"}});
  ExpectRolledBack<RuntimeError>(
      {"THROW_STD_PLUGIN", {"registration blew up on purpose"}});
  ExpectRolledBack<RuntimeError>(
      {"ESCAPE_PLUGIN", {"let an exception escape", "nothing was registered"}});
}

TEST(Plugin, FailedLoadsAreNotListed) {
  for (const PluginInfo& p : ListPlugins()) {
    EXPECT_TRUE(p.name == "test_plugin" || p.name == "old_minor" ||
                p.name == "testdev")
        << p.name;
  }
}

TEST(Plugin, BadListEntryNamesTheVariableAndEntry) {
  ExpectError<ConfigError>(
      [] { LoadPluginList("::/nonexistent/liby.so", "MX_PLUGINS"); },
      {"MX_PLUGINS entry 3", "/nonexistent/liby.so", "no such file"});
}

}  // namespace
}  // namespace mx
