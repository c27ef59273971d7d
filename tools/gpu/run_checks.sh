#!/bin/bash
# Runs on the GPU machine, from the folder bundle.sh made: finds cuDNN and
# cuBLAS (in /usr/local/cuda or the Python environment's nvidia packages),
# then runs the CUDA plugin's tests, its benchmark, and the PyTorch peer.
# Output goes to stdout and to $OUT (when set).
#   bash run_checks.sh [all|tests|bench|ops|lease]   (default all; ops:
#   only the per-op cuDNN comparison and the single-convolution latency;
#   bench: ops and the benchmarks; lease: for a short device lease, the
#   test binaries at once, each into its own log, then the benchmarks the
#   CUDA issue's targets name, one at a time)
cd "$(dirname "$0")"
what=${1:-all}
log=${OUT:-/tmp}/gpu_checks.log
exec > >(tee "$log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
source ./gpu_env.sh
export MX_CUDA_PLUGIN=$PWD/libmx_cuda.so
ldd ./cuda_test | grep -i "not found"
# The conformance suite within $1 seconds, RUN/OK lines left out; the
# environment of //backends/cuda:cuda_conformance's rule (device gradients,
# every dtype the CPU computes required).
conformance() {
  MX_CONFORMANCE_PLUGIN=$MX_CUDA_PLUGIN MX_CONFORMANCE_DEVICE_GRADIENTS=1 \
    MX_CONFORMANCE_REQUIRED_DTYPES=all \
    MX_CPU_WORKER_NTHREADS=4 timeout "$1" ./cuda_conformance --gtest_color=no \
    2>&1 | grep -v "^\[ *\(RUN\|OK\) "
  return "${PIPESTATUS[0]}"
}
# One convolution and its wait (and a waited add), with raw cuDNN alongside,
# under the environment setting $1, within $2 seconds (default 60).
conv_latency() {
  env "$1" timeout "${2:-60}" ./cuda_benchmark --benchmark_min_time=0.3 \
    --benchmark_filter='Conv3x3Batch64/real|Conv3x3Batch64/1|Add1ElementWaited' |
    grep "^BM_"
}
resnet_json=$PWD/resnet18_v1-symbol.json
if [[ $what == lease ]]; then
  # The tests only compare results, so they share the GPU; each log goes to
  # its own file (the device tool brings back at most 8).
  logs=${OUT:-/tmp}
  start=$SECONDS
  # Waits on these jobs alone: a bare `wait` (bash 5.1+) also waits for the
  # tee of the log above, which never ends (it did on 2026-11-30).
  pids=()
  tests=(cuda_test cuda_order_test cuda_graph_test cudnn_paths_test nccl_test)
  for t in "${tests[@]}"; do
    timeout 200 "./$t" --gtest_color=no > "$logs/$t.log" 2>&1 &
    pids+=($!)
  done
  conformance 280 > "$logs/cuda_conformance.log" &
  pids+=($!)
  wait "${pids[@]}"
  echo "=== tests done after $((SECONDS - start)) s"
  for f in "${tests[@]}" cuda_conformance; do
    echo "--- $f: $(grep -a "PASSED\|FAILED" "$logs/$f.log" | head -3 | tr '\n' ' ')"
  done
  echo "=== cuda_benchmark"
  timeout 90 ./cuda_benchmark --benchmark_min_time=0.5
  echo "=== one convolution and its wait, the workers launching"
  conv_latency MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER=0 40
  echo "=== cuda_train_benchmark"
  MX_RESNET18_JSON=$resnet_json timeout 90 ./cuda_train_benchmark --benchmark_min_time=2
  echo "=== torch peer"
  timeout 60 python3 torch_peer.py
  echo "=== all done after $((SECONDS - start)) s"
  exit 0
fi
if [[ $what == all || $what == tests ]]; then
echo "=== cuda_test"
timeout 120 ./cuda_test --gtest_color=no
echo "cuda_test exit: $?"
echo "=== cuda_order_test (argsort, sort, topk, cumsum, _arange)"
timeout 120 ./cuda_order_test --gtest_color=no
echo "cuda_order_test exit: $?"
echo "=== cuda_graph_test (fusion, executor, training)"
timeout 120 ./cuda_graph_test --gtest_color=no
echo "cuda_graph_test exit: $?"
echo "=== cudnn_paths_test (kernels calling cuDNN vs the CPU)"
timeout 120 ./cudnn_paths_test --gtest_color=no
echo "cudnn_paths_test exit: $?"
echo "=== nccl_test (the \"nccl\" KVStore)"
timeout 120 ./nccl_test --gtest_color=no
echo "nccl_test exit: $?"
echo "=== cuda_conformance"
conformance 300
echo "cuda_conformance exit: $?"
fi
[[ $what == tests ]] && exit 0
echo "=== cudnn_op_benchmark (plugin kernels vs raw cuDNN)"
timeout 120 ./cudnn_op_benchmark --benchmark_min_time=0.3
echo "cudnn_op_benchmark exit: $?"
echo "=== one convolution and its wait, by engine setting"
for setting in MX_ENGINE_TYPE=ThreadedEnginePerDevice \
    MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER=0 MX_ENGINE_SYNC_DEVICE_OPS=1 \
    MX_ENGINE_TYPE=NaiveEngine; do
  echo "--- $setting"
  conv_latency "$setting"
done
[[ $what == ops ]] && exit 0
echo "=== cuda_benchmark"
MX_CUDA_VERBOSE=1 timeout 90 ./cuda_benchmark --benchmark_min_time=0.5
echo "cuda_benchmark exit: $?"
echo "=== cuda_train_benchmark"
MX_RESNET18_JSON=$resnet_json timeout 120 ./cuda_train_benchmark --benchmark_min_time=2
echo "cuda_train_benchmark exit: $?"
echo "=== cuda_train_benchmark, the workers launching every op"
MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER=0 MX_RESNET18_JSON=$resnet_json \
  timeout 120 ./cuda_train_benchmark --benchmark_min_time=2 | grep "^BM_"
echo "=== per-op GPU time of ResNet-18 steps (MX_CUDA_PROFILE=1)"
MX_CUDA_PROFILE=1 MX_RESNET18_JSON=$resnet_json timeout 60 \
  ./cuda_train_benchmark --benchmark_filter=ResNet --benchmark_min_time=1 2>&1 |
  grep "mx_cuda" | head -40
echo "=== torch peer"
timeout 60 python3 torch_peer.py
