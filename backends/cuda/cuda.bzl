"""Building CUDA code without CUDA rules (TOOLCHAIN.md): nvcc in a genrule."""

load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE", "CUDA_PATH")

# target_compatible_with for every CUDA target: incompatible (skipped by
# `bazel test //...`) where nvcc is absent or with --define=cuda=0.
CUDA_COMPATIBLE = select({
    "//backends/cuda:cuda_disabled": ["@platforms//:incompatible"],
    "//conditions:default": [] if CUDA_AVAILABLE else ["@platforms//:incompatible"],
})

# Ampere (sm_80) and Hopper (sm_90) machine code, plus PTX for newer GPUs.
_NVCC_FLAGS = " ".join([
    "-c",
    "-std=c++17",
    "-O3",
    "-Xcompiler -fPIC",
    "-Xcompiler -fvisibility=hidden",
    # Host code through GCC: --config=opt's guard against GCC PR 113907
    # (.bazelrc), which no configuration can pass to nvcc.
    "-Xcompiler -fno-ipa-icf",
    "-gencode arch=compute_80,code=sm_80",
    "-gencode arch=compute_90,code=[sm_90,compute_90]",
    "-I.",
])

def cuda_object(name, src, hdrs = []):
    """Compiles `src` (.cu) with nvcc into `<name>.o`, a cc_library src."""
    native.genrule(
        name = name,
        srcs = [src] + hdrs,
        outs = [name + ".o"],
        cmd = "%s/bin/nvcc %s -o $@ $(location %s)" % (CUDA_PATH, _NVCC_FLAGS, src),
        # nvcc finds its own headers and host compiler outside the sandbox.
        tags = ["no-sandbox"],
        target_compatible_with = CUDA_COMPATIBLE,
    )
