#!/bin/bash
# Gathers what a GPU machine without Bazel needs into a folder ignored by
# git, to name in the device tool's carry (64 MiB at most):
#   checks (default): gpu_bundle/ with the CUDA plugin's tests and
#     benchmarks, the PyTorch peer and the ResNet-18 symbol file; run
#     gpu_bundle/run_checks.sh there.
#   train: gpu_train_bundle/ with the trainer and Fashion-MNIST; run
#     gpu_train_bundle/run_train.sh there.
# Binaries are built --config=opt with internal libraries linked in, plus
# the Debian shared libraries they load that such a machine lacks (Abseil,
# Benchmark, ...); the CUDA libraries (NCCL too), glibc and libstdc++ come
# from it.
#
#   bash tools/gpu/bundle.sh [checks|train] --disk_cache=...
#
# The device tool carries at most 64 MiB, so the folder is also packed into
# gpu_carry/<folder>.tgz: carry gpu_carry and run tar xzf there first.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=checks
if [[ $# -gt 0 && ( "$1" == checks || "$1" == train ) ]]; then
  mode=$1
  shift
fi
if [[ $mode == checks ]]; then
  out=gpu_bundle
  targets=(//backends/cuda:cuda_test //backends/cuda:cuda_order_test
           //backends/cuda:cuda_graph_test
           //backends/cuda:cuda_conformance
           //backends/cuda:cuda_benchmark //backends/cuda:cuda_train_benchmark
           //backends/cuda:cudnn_op_benchmark //backends/cuda:cudnn_paths_test
           //kvstore:nccl_test //backends/cuda:libmx_cuda.so)
  extra=(tools/gpu/gpu_env.sh tools/gpu/run_checks.sh tools/gpu/torch_peer.py
         ../shared/mxnet-models/resnet18_v1-symbol.json)
else
  out=gpu_train_bundle
  targets=(//tools:train //backends/cuda:libmx_cuda.so)
  extra=(tools/gpu/gpu_env.sh tools/gpu/run_train.sh /usr/share/datasets/fashion-mnist/*.gz)
fi
bazel build --config=opt --dynamic_mode=off "$@" "${targets[@]}"
bin=$(bazel info --config=opt --dynamic_mode=off "$@" bazel-bin)
rm -rf "$out" && mkdir -p "$out/lib"
for t in "${targets[@]}"; do
  f="${t#//}"
  f="${f/://}"
  cp -L "$bin/$f" "$out/"
  chmod u+w "$out/$(basename "$f")"
  strip --strip-debug "$out/$(basename "$f")"
done
cp "${extra[@]}" "$out/"
skip='^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcudart|libcublas|libcublasLt|libcudnn.*|libnvrtc.*|libnccl)\.so'
for t in "${targets[@]}"; do
  ldd "$out/$(basename "${t/://}")" | awk '/=> \//{print $1, $3}' |
    while read -r name path; do
      if ! [[ "$name" =~ $skip ]]; then cp -Ln "$path" "$out/lib/$name"; fi
    done
done
du -sh "$out"
mkdir -p gpu_carry
tar -czf "gpu_carry/$out.tgz" "$out"
du -sh "gpu_carry/$out.tgz"
