#!/usr/bin/env bash
# run_model with a plugin: MX_PLUGINS loads before partitioning, so the
# plugin's backend can be named, and --check compares the partitioned graph
# with the unpartitioned one on the same weights (a real MXNet model).
set -uo pipefail
run_model="$1"
plugin="$(readlink -f "$2")"
root="$(dirname "$(readlink -f "$TEST_SRCDIR/mxcore/WORKSPACE")")"
models="${MX_MXNET_MODELS_DIR:-$root/../shared/mxnet-models}"
symbol="$models/mtcnn_det1-symbol.json"
[ -f "$symbol" ] || { echo "missing $symbol (set MX_MXNET_MODELS_DIR)"; exit 1; }
failed=0
expect() {  # description, expected exit status, output pattern, command...
  local what="$1" want="$2" pattern="$3" out rc
  shift 3
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ] || ! grep -qE "$pattern" <<<"$out"; then
    echo "FAIL: $what (exit $rc, wanted $want and /$pattern/):"
    echo "$out"
    failed=1
  else
    echo "ok: $what"
  fi
}
args=(--symbol="$symbol" --inputs=data:1,3,12,12 --batches=1)
expect "the plugin's backend is unknown without MX_PLUGINS" 1 \
  'unknown subgraph backend "onednn"' \
  env -u MX_PLUGINS "$run_model" "${args[@]}" --backend=onednn
expect "MX_PLUGINS loads before partitioning" 0 \
  'plugin: onednn.*' env MX_PLUGINS="$plugin" "$run_model" "${args[@]}" \
  --backend=onednn
out=$(MX_PLUGINS="$plugin" "$run_model" "${args[@]}" --backend=onednn \
  --check=1e-4 2>&1)
rc=$?
if [ "$rc" = 0 ] && grep -q "check: output 1 differs" <<<"$out" &&
   grep -q "_sg_onednn_conv" <<<"$out"; then
  echo "ok: --check passes within 1e-4 on both outputs of fused convolutions"
else
  echo "FAIL: --check (exit $rc):"
  echo "$out"
  failed=1
fi
expect "--check without --backend is a usage error" 2 "needs --backend" \
  "$run_model" "${args[@]}" --check=1e-4
exit "$failed"
