#!/usr/bin/env bash
# mxcore with its built-in kernels, mxcore with the oneDNN plugin, LibTorch
# 1.13 at its best and the bare-oneDNN program, side by side in one run:
# the MLP and CNN train steps (batch 64, SGD momentum) and a 1024^3 GEMM at
# 1 and 2 threads, ROUNDS rounds (default 3) alternating the programs;
# prints medians and the ratios mxcore/LibTorch and mxcore/oneDNN.
#   bash tools/bench/onednn_compare.sh [ROUNDS] [PEERS_DIR]
# PEERS_DIR (default /work/shared/peers) holds libtorch/ and onednn/ with
# their build.sh; the peers are built into $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"
peers="${2:-/work/shared/peers}"
tmp="${TMPDIR:-/tmp}"
bazel build --config=opt ${MX_BAZEL_FLAGS:-} //backends/onednn:onednn_benchmark \
  //backends/onednn:libmx_onednn.so
bash "$peers/libtorch/build.sh" "$tmp/mx_torch_peer" >/dev/null
bash "$peers/onednn/build.sh" "$tmp/mx_onednn_peer" >/dev/null
source tools/bench/openblas_core.sh
openblas_core "$tmp/mx_torch_peer"
bench=bazel-bin/backends/onednn/onednn_benchmark
plugin=bazel-bin/backends/onednn/libmx_onednn.so
out="$tmp/onednn_compare.txt"
: >"$out"
# One mxcore run: "<config> <metric> <value>" lines.
mxcore() {  # name threads [MX_PLUGINS]
  MX_PLUGINS="${3:-}" MX_CPU_KERNEL_NTHREADS="$2" OMP_NUM_THREADS="$2" \
    "$bench" --benchmark_format=json 2>/dev/null | python3 -c '
import json, sys
name, t = sys.argv[1], sys.argv[2]
for b in json.load(sys.stdin)["benchmarks"]:
    n = b["name"].split("/")[0]
    if n == "BM_MLPStep": print(name, t, "mlp_ms", b["real_time"])
    if n == "BM_CNNStep": print(name, t, "cnn_ms", b["real_time"])
    if n == "BM_Gemm1024": print(name, t, "gemm_gflops", b["GFLOPs"])
' "$1" "$2"
}
for ((r = 0; r < rounds; ++r)); do
  for t in 1 2; do
    mxcore builtin "$t" >>"$out"
    mxcore onednn "$t" "$plugin" >>"$out"
    MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 \
      OPENBLAS_NUM_THREADS="$t" "$tmp/mx_torch_peer" "$t" 2>/dev/null |
      awk -v t="$t" '
        $2 == "mlp_784_256_256_10_b64_train_step_ms" {print "libtorch", t, "mlp_ms", $3}
        $2 == "cnn_2conv_b64_train_step_ms" {print "libtorch", t, "cnn_ms", $3}
        $2 == "gemm_1024_gflops" {print "libtorch", t, "gemm_gflops", $3}' >>"$out"
    OMP_NUM_THREADS="$t" "$tmp/mx_onednn_peer" "$t" 2>/dev/null |
      awk -v t="$t" '
        $2 == "mlp_784_256_256_10_b64_train_step_ms" {print "bare_onednn", t, "mlp_ms", $3}
        $2 == "cnn_2conv_b64_train_step_ms" {print "bare_onednn", t, "cnn_ms", $3}
        $2 == "gemm_1024_sgemm_gflops" {print "bare_onednn", t, "gemm_gflops", $3}' >>"$out"
  done
done
python3 tools/bench/medians.py "$out" builtin,onednn libtorch,bare_onednn
