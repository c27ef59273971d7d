"""mx_fuzz_target: a libFuzzer target plus a regression test of its corpus."""

def mx_fuzz_target(name, srcs, deps, replay_args = []):
    """Defines `name` (the fuzzer) and `name`_corpus_test.

    `name`: a cc_binary tagged manual. Under --config=fuzz (clang, see
    .bazelrc) it links libFuzzer (-fsanitize=fuzzer); in other
    configurations it links replay_main.cc, which runs files given on the
    command line through the same LLVMFuzzerTestOneInput.

    `name`_corpus_test: replays fuzz/corpus/`name`/ (checked-in seeds plus
    regression inputs) in every configuration of `bazel test //...`.
    """
    native.cc_library(
        name = name + "_lib",
        srcs = srcs,
        deps = deps + [":fuzz_util"],
        alwayslink = 1,
    )
    native.cc_binary(
        name = name,
        deps = [":" + name + "_lib"] + select({
            ":fuzzing": [],
            "//conditions:default": [":replay_main"],
        }),
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"],  # build-flags-ok: libFuzzer main, fuzz binaries only
            "//conditions:default": [],
        }),
        tags = ["manual"],
    )
    native.cc_test(
        name = name + "_corpus_test",
        size = "small",
        deps = [":" + name + "_lib", ":replay_main"],
        data = native.glob(["corpus/" + name + "/**"]),
        args = ["fuzz/corpus/" + name] + replay_args,
    )
