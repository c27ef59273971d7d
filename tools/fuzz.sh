#!/usr/bin/env bash
# Builds one libFuzzer target with --config=fuzz (clang, ASan + UBSan) and
# runs it for SECONDS on a copy of its seed corpus.
#
#   tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   tools/fuzz.sh --list
#
# TARGET is a //fuzz target (symbol_json_fuzzer, ...; "symbol_json" works
# too). New inputs go to a scratch directory ($MX_FUZZ_WORK, default
# /tmp/mxcore-fuzz/TARGET), never to fuzz/corpus/. Exit status: 0 when the
# run ends without a finding; 1 on a finding (crash, sanitizer report, leak,
# timeout, out-of-memory), with the path of the saved input printed last;
# 2 on a usage or build error.
#
# The fuzz build uses its own Bazel output base ($MX_FUZZ_OUTPUT_BASE,
# default ~/.cache/mxcore-fuzz-outbase/<hash of the checkout path>) because switching the compiler to
# clang re-analyses everything; the gcc builds keep their cache. Extra Bazel
# flags can be given in $MX_FUZZ_BAZEL_FLAGS (e.g. --jobs=2).
set -uo pipefail
cd "$(dirname "$0")/.."

TARGETS=(symbol_json_fuzzer symbol_mut_fuzzer op_attrs_fuzzer
         params_file_fuzzer idx_fuzzer shape_parse_fuzzer)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${TARGETS[@]}"
  exit 0
fi
if [ $# -lt 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]" >&2
  echo "targets: ${TARGETS[*]}" >&2
  exit 2
fi
target=${1%_fuzzer}_fuzzer
seconds=$2
shift 2
if ! printf '%s\n' "${TARGETS[@]}" | grep -qx "$target"; then
  echo "fuzz: unknown target $1 (targets: ${TARGETS[*]})" >&2
  exit 2
fi

# One output base per checkout (an output base belongs to one workspace).
outbase=${MX_FUZZ_OUTPUT_BASE:-$HOME/.cache/mxcore-fuzz-outbase/$(pwd | md5sum | cut -c1-12)}
work=${MX_FUZZ_WORK:-/tmp/mxcore-fuzz/$target}
mkdir -p "$work/corpus" "$work/artifacts"
# The build log goes to a file: gold prints hundreds of harmless "Cannot
# export local symbol '__asan_*'" warnings for every fuzz binary.
echo "fuzz: building //fuzz:$target (--config=fuzz)" >&2
# shellcheck disable=SC2086
if ! bazel --output_base="$outbase" build --config=fuzz \
    ${MX_FUZZ_BAZEL_FLAGS:-} "//fuzz:$target" >"$work/build.log" 2>&1; then
  grep -v "Cannot export local symbol" "$work/build.log" | tail -n 40 >&2
  echo "fuzz: building //fuzz:$target with --config=fuzz failed" >&2
  exit 2
fi
bin=$(bazel --output_base="$outbase" info --config=fuzz bazel-bin 2>/dev/null)/fuzz/$target
if [ ! -x "$bin" ]; then
  echo "fuzz: $bin was not built" >&2
  exit 2
fi

cp -n fuzz/corpus/"$target"/* "$work/corpus/" 2>/dev/null || true
# Limits: the targets bound every size by construction (op_attrs: inputs of
# at most 64 elements, attribute numbers in [-4, 5]) or check sizes before
# allocating (the loaders), so more than 64 MiB in one malloc, 2 GiB of
# RSS or 10 s on one input is a finding.
flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
       -malloc_limit_mb=64 -max_len=8192 -print_final_stats=1
       -artifact_prefix="$work/artifacts/")
[ -f fuzz/dict/"$target".dict ] && flags+=(-dict=fuzz/dict/"$target".dict)
log=$work/fuzz.log
before=$(ls "$work/artifacts" | wc -l)
echo "fuzz: $target for ${seconds}s; corpus $work/corpus, log $log" >&2
MX_ENGINE_TYPE=NaiveEngine \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  "$bin" "${flags[@]}" "$@" "$work/corpus" >"$log" 2>&1
rc=$?
grep -E '^stat::|^#[0-9]+ +DONE' "$log" | tail -n 8 >&2
# With -fork=N -ignore_crashes=1 (to collect several findings in one run)
# libFuzzer exits 0; new files in the artifact directory still count.
after=$(ls "$work/artifacts" | wc -l)
if [ $rc -eq 0 ] && [ "$after" -gt "$before" ]; then
  grep -E '^#[0-9]+: cov' "$log" | tail -n 1 >&2
  echo "fuzz: FINDINGS in $target: $((after - before)) new inputs in $work/artifacts; log $log" >&2
  ls -t "$work/artifacts" | head -n $((after - before)) | sed "s|^|fuzz: crashing input: $work/artifacts/|" >&2
  exit 1
fi
if [ $rc -ne 0 ]; then
  grep -E 'ERROR: |SUMMARY: |runtime error|mxcore fuzz finding|Test unit written' "$log" | head -n 20 >&2
  found=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -n 1)
  # Fork mode logs no "Test unit written" line: take the newest artifact.
  if [ -z "$found" ] && [ "$after" -gt "$before" ]; then
    found=$work/artifacts/$(ls -t "$work/artifacts" | head -n 1)
  fi
  # A timeout is a finding only if the input is slow again on replay, as
  # OSS-Fuzz checks reproducibility: a stall of a shared machine (the CI's
  # two cores) also trips libFuzzer's wall-clock watchdog.
  if [ -n "$found" ] && [[ "$(basename "$found")" == timeout-* ]]; then
    start=$(date +%s)
    if MX_ENGINE_TYPE=NaiveEngine "$bin" -timeout=10 -rss_limit_mb=2048 \
         -malloc_limit_mb=64 "$found" >"$work/replay.log" 2>&1; then
      echo "fuzz: the timeout in $target did not reproduce: replaying the input took $(( $(date +%s) - start ))s; input kept: $found" >&2
      echo "fuzz: $target: no reproducible findings in ${seconds}s" >&2
      exit 0
    fi
  fi
  echo "fuzz: FINDING in $target (exit $rc); full log: $log" >&2
  echo "fuzz: crashing input: ${found:-see $log}" >&2
  echo "fuzz: reproduce: $bin ${found:-INPUT}" >&2
  exit 1
fi
echo "fuzz: $target: no findings in ${seconds}s" >&2
exit 0
