// Plugin loading from a cc_test (shared-library linking of mxcore).
#include "subgraph/plugin.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>

#include "backends/cpu/op_test_util.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "subgraph/partition_graph.h"

namespace mx {
namespace {

using testing::ExpectError;

std::string Path(const char* var) {
  const char* p = std::getenv(var);
  EXPECT_NE(p, nullptr) << var;
  return p == nullptr ? "" : p;
}

// Loaded once per process; later tests see it.
const PluginInfo& TestPlugin() {
  static const PluginInfo info = LoadPlugin(Path("TEST_PLUGIN"));
  return info;
}

TEST(Plugin, RegistersOpsAndBackendsInTheHostRegistries) {
  const PluginInfo& info = TestPlugin();
  EXPECT_EQ(info.name, "test_plugin");
  EXPECT_EQ(info.abi_version, MX_PLUGIN_ABI_VERSION);
  EXPECT_EQ(info.ops, std::vector<std::string>{"_test_plugin_double"});
  EXPECT_EQ(info.backends, std::vector<std::string>{"test_plugin"});
  ASSERT_NE(OpRegistry::Get()->Find("_test_plugin_double"), nullptr);
  const auto backends = ListSubgraphBackends();
  EXPECT_NE(std::find(backends.begin(), backends.end(), "test_plugin"),
            backends.end());
  bool listed = false;
  for (const PluginInfo& p : ListPlugins()) listed |= p.name == "test_plugin";
  EXPECT_TRUE(listed);
}

TEST(Plugin, SharesOneRegistryInstanceWithTheHost) {
  const PluginInfo& info = TestPlugin();
  void* handle = dlopen(info.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto fn = reinterpret_cast<void (*)(const void**, const void**)>(
      dlsym(handle, "mx_test_plugin_registries"));
  ASSERT_NE(fn, nullptr);
  const void *ops = nullptr, *backends = nullptr;
  fn(&ops, &backends);
  EXPECT_EQ(ops, OpRegistry::Get());
  EXPECT_EQ(backends, SubgraphBackendRegistry::Get());
  dlclose(handle);
}

TEST(Plugin, PluginOpRunsThroughInvokeAndItsBackendPartitions) {
  TestPlugin();
  NDArray x = testing::ArrayOf({3}, {1, 2, 3});
  NDArray y = imperative::Invoke("_test_plugin_double", {x})[0];
  EXPECT_EQ(testing::ToDouble(y), (std::vector<double>{2, 4, 6}));
  Symbol s = Symbol::Create(
      "_test_plugin_double",
      {Symbol::Create("_test_plugin_double", {Symbol::Variable("x")})});
  PartitionReport report;
  PartitionGraph(s, "test_plugin", {}, &report);
  ASSERT_EQ(report.subgraphs.size(), 1u);
  EXPECT_EQ(report.subgraphs[0].claimed.size(), 2u);
}

TEST(Plugin, LoadingTwiceIsAnError) {
  TestPlugin();
  ExpectError<AlreadyExists>([] { LoadPlugin(Path("TEST_PLUGIN")); },
                             {"already loaded"});
}

TEST(Plugin, MissingFileIsNotFound) {
  ExpectError<NotFound>([] { LoadPlugin("/nonexistent/libx.so"); },
                        {"/nonexistent/libx.so", "no such file"});
}

TEST(Plugin, LibraryWithoutEntryPointIsNotAPlugin) {
  ExpectError<InvalidArgument>([] { LoadPlugin(Path("NOT_A_PLUGIN")); },
                               {"not an mxcore plugin", "mx_plugin_init"});
}

TEST(Plugin, NonLibraryFileFailsInDlopen) {
  ExpectError<RuntimeError>([] { LoadPlugin(Path("NOT_A_LIBRARY")); },
                            {"dlopen failed"});
}

TEST(Plugin, AbiMismatchIsRefusedWithBothVersions) {
  ExpectError<InvalidArgument>(
      [] { LoadPlugin(Path("BAD_ABI_PLUGIN")); },
      {"ABI version 999", "host has " + std::to_string(MX_PLUGIN_ABI_VERSION)});
  EXPECT_EQ(OpRegistry::Get()->Find("_bad_abi_plugin_op"), nullptr);
}

TEST(Plugin, NameClashRegistersNothing) {
  ExpectError<AlreadyExists>([] { LoadPlugin(Path("CLASH_PLUGIN")); },
                             {"nothing was registered", "sin"});
  EXPECT_EQ(OpRegistry::Get()->Find("_clash_plugin_first"), nullptr);
  ASSERT_NE(OpRegistry::Get()->Find("sin"), nullptr);
  for (const PluginInfo& p : ListPlugins()) EXPECT_NE(p.name, "clash_plugin");
}

TEST(Plugin, BadListEntryNamesTheVariableAndEntry) {
  ExpectError<ConfigError>(
      [] { LoadPluginList("::/nonexistent/liby.so", "MX_PLUGINS"); },
      {"MX_PLUGINS entry 3", "/nonexistent/liby.so", "no such file"});
}

// ---- Hostile plugins (issue 16 P1-P6). ----

bool Registered(const std::string& op) {
  return OpRegistry::Get()->Find(op) != nullptr;
}

TEST(Plugin, FifoIsRefusedWithoutOpeningIt) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string fifo = std::string(dir ? dir : "/tmp") + "/plugin.fifo";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Without the check dlopen blocks forever waiting for a writer.
  ExpectError<InvalidArgument>([&] { LoadPlugin(fifo); },
                               {fifo, "not a regular file"});
  ExpectError<ConfigError>([&] { LoadPluginList(fifo, "MX_PLUGINS"); },
                           {"MX_PLUGINS entry 1", "not a regular file"});
}

TEST(Plugin, NonStdExceptionFromTheEntryPointIsRolledBack) {
  ExpectError<RuntimeError>([] { LoadPlugin(Path("THROW_INT_PLUGIN")); },
                            {"nothing was registered", "not a std::exception"});
  EXPECT_FALSE(Registered("_throw_int_op"));
}

TEST(Plugin, NonStdExceptionThroughTheMacroIsRolledBack) {
  ExpectError<RuntimeError>([] { LoadPlugin(Path("THROW_INT_MACRO_PLUGIN")); },
                            {"nothing was registered", "not a std::exception"});
  EXPECT_FALSE(Registered("_throw_int_macro_op"));
}

TEST(Plugin, NullPluginNameIsRefusedAndRolledBack) {
  ExpectError<InvalidArgument>([] { LoadPlugin(Path("NULL_NAME_PLUGIN")); },
                               {"no plugin name"});
  EXPECT_FALSE(Registered("_null_name_op"));
}

TEST(Plugin, UnknownReturnCodeIsNamedAndRolledBack) {
  ExpectError<InvalidArgument>([] { LoadPlugin(Path("BAD_CODE_PLUGIN")); },
                               {"returned 7", "nothing was registered"});
  EXPECT_FALSE(Registered("_bad_code_op"));
}

TEST(Plugin, DataSymbolNamedLikeTheEntryPointIsNotCalled) {
  ExpectError<InvalidArgument>([] { LoadPlugin(Path("DATA_SYMBOL_PLUGIN")); },
                               {"mx_plugin_init is not a function"});
}

TEST(Plugin, StaticInitializerRegistrationsAreUndoneOnFailure) {
  ExpectError<InvalidArgument>([] { LoadPlugin(Path("STATIC_INIT_PLUGIN")); },
                               {"ABI version 999"});
  EXPECT_FALSE(Registered("_static_init_op"));
}

TEST(Plugin, FailedLoadsAreNotListed) {
  for (const char* var : {"THROW_INT_PLUGIN", "NULL_NAME_PLUGIN",
                          "BAD_CODE_PLUGIN", "STATIC_INIT_PLUGIN"}) {
    try {
      LoadPlugin(Path(var));
    } catch (const Error&) {
    }
  }
  for (const PluginInfo& p : ListPlugins()) {
    EXPECT_TRUE(p.name == "test_plugin") << p.name;
  }
}

}  // namespace
}  // namespace mx
