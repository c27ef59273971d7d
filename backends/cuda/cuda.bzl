"""Building CUDA code without CUDA rules (TOOLCHAIN.md): nvcc in a genrule."""

load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE", "CUDA_PATH")

# target_compatible_with for every CUDA target: incompatible (skipped by
# `bazel test //...`) where nvcc is absent or with --define=cuda=0.
CUDA_COMPATIBLE = select({
    "//backends/cuda:cuda_disabled": ["@platforms//:incompatible"],
    "//conditions:default": [] if CUDA_AVAILABLE else ["@platforms//:incompatible"],
})

# Host code through GCC: --config=opt's guard against GCC PR 113907
# (.bazelrc), which no configuration can pass to nvcc.
_NVCC_HOST_FLAGS = [
    "-Xcompiler -fPIC",
    "-Xcompiler -fvisibility=hidden",
    "-Xcompiler -fno-ipa-icf",
]

# nvcc's flags follow the compilation mode, as every other compile's do
# (README "Optimization levels come from the configurations only"). nvcc's
# -O is the host code's level; device code is optimized by cicc and ptxas
# in every mode (nvcc -G would turn that off).
#
# -c opt (--config=opt, the GPU bundle, releases): host -O3, and machine
# code for Ampere (sm_80) and Hopper (sm_90) plus compute_90 PTX that newer
# GPUs compile at load time.
#
# fastbuild and dbg (`bazel test //...`, CI): host -O0, and one device
# compilation instead of two: compute_80 PTX, which any GPU from sm_80 on
# can load (the driver compiles it once and caches it), plus sm_90 machine
# code compiled from it. Half the nvcc time (index_kernels.cu: 171 s ->
# 92 s; its ptxas runs had taken 44 s for sm_80 and 60 s for sm_90). No
# kernel depends on __CUDA_ARCH__, so both builds compile the same code.
def _nvcc_flags(host_level, gencodes):
    return " ".join(["-c", "-std=c++17", host_level] + _NVCC_HOST_FLAGS +
                    gencodes + ["-I."])

_NVCC_OPT_FLAGS = _nvcc_flags("-O3", [
    "-gencode arch=compute_80,code=sm_80",
    "-gencode arch=compute_90,code=[sm_90,compute_90]",
])

_NVCC_DEV_FLAGS = _nvcc_flags("-O0", [
    "-gencode arch=compute_80,code=[sm_90,compute_80]",
])

def _nvcc_command(flags, src):
    return "%s/bin/nvcc %s -o $@ $(location %s)" % (CUDA_PATH, flags, src)

def cuda_object(name, src, hdrs = []):
    """Compiles `src` (.cu) with nvcc into `<name>.o`, a cc_library src."""
    native.genrule(
        name = name,
        srcs = [src] + hdrs,
        outs = [name + ".o"],
        cmd = select({
            "//backends/cuda:opt_build": _nvcc_command(_NVCC_OPT_FLAGS, src),
            "//conditions:default": _nvcc_command(_NVCC_DEV_FLAGS, src),
        }),
        # nvcc finds its own headers and host compiler outside the sandbox.
        tags = ["no-sandbox"],
        target_compatible_with = CUDA_COMPATIBLE,
    )
