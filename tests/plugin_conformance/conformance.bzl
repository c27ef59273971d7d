"""plugin_conformance_test: runs the plugin conformance suite on one plugin."""

def plugin_conformance_test(name, plugin, expect_fail = [], device_gradients = False, required_dtypes = ["float32"], size = "medium", env = {}, **kwargs):
    """A cc_test running //tests/plugin_conformance on `plugin`.

    Args:
      name: test name.
      plugin: label of the plugin shared library.
      expect_fail: new ops of the plugin that are broken on purpose (a test
        plugin's error-reporting ops); the suite checks they fail with typed
        errors naming the plugin instead of checking them as ops.
      device_gradients: the plugin's device has the kernels of every
        gradient (backward ops and autograd helpers), so a gradient on the
        device that cannot run fails the suite; without it such a gradient
        is skipped (and counted), a wrong one still fails.
      required_dtypes: dtypes (names, or "all") the plugin's kernels may not
        decline with DTypeError where the built-in kernel computes the case.
      size: test size.
      env: more environment variables for the test (the plugin's own).
      **kwargs: passed to cc_test (tags, timeout, ...).
    """
    native.cc_test(
        name = name,
        size = size,
        data = [plugin],
        env = dict({
            "MX_CONFORMANCE_PLUGIN": "$(rootpath %s)" % plugin,
            "MX_CONFORMANCE_EXPECT_FAIL": ",".join(expect_fail),
            "MX_CONFORMANCE_DEVICE_GRADIENTS": "1" if device_gradients else "0",
            "MX_CONFORMANCE_REQUIRED_DTYPES": ",".join(required_dtypes),
            # Several engine workers run the plugin's kernels concurrently.
            "MX_CPU_WORKER_NTHREADS": "4",
        }, **env),
        deps = ["//tests/plugin_conformance:conformance_suite"],
        **kwargs
    )

# Every plugin shared library in the repo, for the symbol checks. Add
# "//backends/fuse:libfuse.so" here once fuse is ported to the C ABI.
REPO_PLUGINS = [
    "//plugin:libtest_plugin.so",
    "//plugin:libtestdev_plugin.so",
    "//plugin:libold_minor_plugin.so",
    "//tests/plugin_conformance:libcxx_test_plugin.so",
    "//tests/plugin_conformance:libcxx_testdev_plugin.so",
    "//backends/fuse:libfuse.so",
    "//plugin/bench:libbench_add_plugin.so",
    "//plugin/examples:libtwice.so",
    "//backends/onednn:libmx_onednn.so",
] + ["//plugin:lib%s_plugin.so" % n for n in [
    "throw_int",
    "throw_std",
    "escape",
    "clash",
    "clash_device",
    "null_name",
    "bad_code",
    "newer_major",
    "small_struct",
    "data_symbol",
    "not_a",
]]

def clang_libcxx_plugin(name, src, hdrs):
    """A plugin compiled by clang++ against libc++ (linked in statically,
    its symbols hidden), outside Bazel's gcc toolchain: proof that a plugin
    built with another compiler and C++ library loads into the host."""
    native.genrule(
        name = name + "_gen",
        testonly = 1,
        srcs = [src] + hdrs,
        outs = [name],
        cmd = " ".join([
            "clang++ -std=c++17 -O2 -fPIC -shared -stdlib=libc++",
            "-fvisibility=hidden -fvisibility-inlines-hidden",
            "-static-libstdc++ -Wl,--exclude-libs,ALL -Wl,-z,defs",
            "-I. -I$(GENDIR) $(location %s)" % src,
            "/usr/lib/llvm-14/lib/libc++abi.a -pthread -o $@",
        ]),
        message = "Building %s with clang++ and libc++" % name,
    )
