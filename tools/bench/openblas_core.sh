# Sourced by the comparisons with LibTorch (onednn_compare.sh,
# lstm_compare.sh). LibTorch at its best: OpenBLAS picks its kernels by the
# CPU model, and where a VM hides the model it falls back to SSE3 kernels
# ("Prescott": a 1024^3 GEMM at 15 GFLOP/s instead of 100 on an AVX-512
# Xeon VM, 2026-11-28). Then the kernels the CPU's flags allow are named
# (unless OPENBLAS_CORETYPE is set).
#   openblas_core PEER_BINARY   (run as "PEER_BINARY 1" to see the core)
openblas_core() {
  if [[ -n "${OPENBLAS_CORETYPE:-}" ]]; then return; fi
  local core flags
  core=$(OPENBLAS_VERBOSE=2 OPENBLAS_NUM_THREADS=1 timeout 60 \
    "$1" 1 2>&1 >/dev/null | sed -n 's/^Core: //p' | head -n 1 || true)
  flags=$(grep -m 1 '^flags' /proc/cpuinfo)
  if [[ "$core" == Prescott ]]; then
    if [[ " $flags " == *" avx512bw "* && " $flags " == *" avx512vl "* ]]; then
      export OPENBLAS_CORETYPE=SKYLAKEX
    elif [[ " $flags " == *" avx2 "* && " $flags " == *" fma "* ]]; then
      export OPENBLAS_CORETYPE=HASWELL
    fi
  fi
  echo "OpenBLAS detected core: ${core:-?}; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-}"
}
