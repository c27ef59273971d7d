"""External repositories mxcore needs, offline, for mxcore and its consumers.

A consumer's WORKSPACE:

    local_repository(name = "mxcore", path = "/path/to/mxcore")
    load("@mxcore//:deps.bzl", "mxcore_dependencies")
    mxcore_dependencies()

mxcore's own WORKSPACE calls the same macro. Every library comes from a
Debian package (tools/setup.sh installs them); nothing is downloaded.
Repositories the consumer already defines are left alone.
"""

# Bazel's default WORKSPACE suffix refers to these rule sets and would
# download them; offline stand-ins bind them to Bazel's native rules.
_RULES_CC_DEFS = """\"\"\"Binds the rules_cc names to Bazel's native C++ rules.\"\"\"

cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_proto_library = native.cc_proto_library
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
objc_library = native.objc_library
"""

_COVERAGE_TOOLS_BUILD = """# Offline stand-in; coverage is not collected.
filegroup(
    name = "coverage_report_generator",
    srcs = [],
    visibility = ["//visibility:public"],
)

filegroup(
    name = "lcov_merger",
    srcs = [],
    visibility = ["//visibility:public"],
)
"""

def _generated_repository_impl(ctx):
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    for path, content in ctx.attr.files.items():
        ctx.file(path, content)

# A repository made of the given files (path -> content).
_generated_repository = repository_rule(
    implementation = _generated_repository_impl,
    attrs = {"files": attr.string_dict()},
)

def _maybe(rule, name, **kwargs):
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def mxcore_dependencies():
    """Defines every repository mxcore's targets need."""
    _maybe(
        _generated_repository,
        name = "rules_cc",
        files = {
            "BUILD": "",
            "cc/BUILD": "",
            "cc/defs.bzl": _RULES_CC_DEFS,
        },
    )
    _maybe(
        _generated_repository,
        name = "remote_coverage_tools",
        files = {"BUILD": _COVERAGE_TOOLS_BUILD},
    )

    # Shipped with Debian's bazel-bootstrap and bazel-rules-java.
    _maybe(
        native.local_repository,
        name = "platforms",
        path = "/usr/share/bazel/tools/platforms",
    )
    _maybe(
        native.local_repository,
        name = "rules_java",
        path = "/usr/share/bazel/rules/java",
    )

    # Debian -dev packages under /usr (Abseil, Eigen, oneDNN, GoogleTest,
    # Google Benchmark, nlohmann-json, zlib).
    _maybe(
        native.new_local_repository,
        name = "system_libs",
        build_file = str(Label("//third_party:system_libs.BUILD")),
        path = "/usr",
    )
