#!/bin/bash
# Gathers what the GPU machine needs to run the CUDA plugin's tests and
# benchmarks into gpu_bundle/ (ignored by git; name it in the device
# tool's carry): the test and benchmark binaries (built --config=opt), the
# plugin, and the Debian shared libraries they load that such a machine
# lacks (Abseil, GoogleTest, Benchmark, ...). The CUDA libraries, glibc
# and libstdc++ come from that machine.
#
#   bash tools/gpu/bundle.sh --disk_cache=...   then run tools/gpu/run_checks.sh there
set -euo pipefail
cd "$(dirname "$0")/../.."
targets=(//backends/cuda:cuda_test //backends/cuda:cuda_benchmark
         //backends/cuda:cuda_train_benchmark //backends/cuda:libmx_cuda.so)
# Internal libraries linked in (tests link them dynamically by default).
bazel build --config=opt --dynamic_mode=off "$@" "${targets[@]}"
out=gpu_bundle
rm -rf "$out" && mkdir -p "$out/lib"
for f in cuda_test cuda_benchmark cuda_train_benchmark libmx_cuda.so; do
  cp -L "$(bazel info --config=opt --dynamic_mode=off "$@" bazel-bin)/backends/cuda/$f" "$out/"
  chmod u+w "$out/$f"
  strip --strip-debug "$out/$f"
done
cp tools/gpu/run_checks.sh tools/gpu/torch_peer.py "$out/"
# The model file (../shared does not travel to the GPU machine).
cp ../shared/mxnet-models/resnet18_v1-symbol.json "$out/"
skip='^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcudart|libcublas|libcublasLt|libcudnn.*|libnvrtc.*)\.so'
for bin in "$out"/cuda_test "$out"/cuda_benchmark "$out"/cuda_train_benchmark "$out"/libmx_cuda.so; do
  ldd "$bin" | awk '/=> \//{print $1, $3}' | while read -r name path; do
    if ! [[ "$name" =~ $skip ]]; then cp -Ln "$path" "$out/lib/$name"; fi
  done
done
du -sh "$out"
ls "$out/lib"
