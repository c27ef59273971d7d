#!/usr/bin/env bash
# Holds --config=opt to its guard against GCC PR 113907 (.bazelrc): compiles
# a reduced form of the code GCC 12.2 miscompiled (CTCLoss's lattice ends,
# backends/common/ctc_math.h) with g++ and the configuration's --copt flags,
# and fails unless it computes the right value. Also says whether this
# g++ miscompiles it without the guard (then the flag is still needed).
#
#   tools/gcc_icf_test.sh [BAZELRC]   (also //tools:gcc_icf_test)
set -euo pipefail
rc=${1:-}
if [ -z "$rc" ]; then
  if [ -n "${TEST_SRCDIR:-}" ]; then
    rc=$TEST_SRCDIR/mxcore/.bazelrc
  else
    rc=$(cd "$(dirname "$0")/.." && pwd)/.bazelrc
  fi
fi
work=${TEST_TMPDIR:-$(mktemp -d)}

# The flags --config=opt gives the compiler (build:opt --copt=...).
mapfile -t opt_flags < <(sed -n 's/#.*//; s/^build:opt //p' "$rc" |
  grep -oE -- "--copt[= ][^ ]+" | sed -E 's/^--copt[= ]//')
if [ ${#opt_flags[@]} -eq 0 ]; then
  echo "no build:opt --copt flags found in $rc"
  exit 1
fi

# Two inline functions whose tails (after a guard on s) are identical:
# partial inlining splits the tails off, value-range propagation learns that
# the first one's s is 0 or 1 (so s / 2 is 0), and identical code folding
# then lets that specialized body stand in for the second one's, whose s
# is 3 or 4.
cat > "$work/icf.cc" <<'CC'
#include <cstdint>
#include <cstdio>
inline int64_t Symbol(const int64_t* labels, int64_t s, int64_t blank) {
  return s % 2 == 0 ? blank : labels[s / 2];
}
inline double First(const double* lp, const int64_t* labels, int64_t s,
                    int64_t blank) {
  return s > 1 ? -1 : lp[Symbol(labels, s, blank)];
}
inline double Last(const double* lp, const int64_t* labels, int64_t s,
                   int64_t states, int64_t blank) {
  return s < states - 2 ? -1 : lp[Symbol(labels, s, blank)];
}
void Ends(const int64_t* labels, int64_t states, const double* lp,
          int64_t blank, double* first, double* last) {
  for (int64_t s = 0; s < states; ++s) first[s] = First(lp, labels, s, blank);
  for (int64_t s = 0; s < states; ++s) last[s] = Last(lp, labels, s, states, blank);
}
int main() {
  const int64_t labels[] = {1, 2};
  const double lp[] = {10, 11, 12};
  double first[5], last[5];
  Ends(labels, 5, lp, 0, first, last);
  std::printf("%g\n", last[3]);  // lp[labels[1]]
  return last[3] == 12 ? 0 : 1;
}
CC

status=0
g++ -std=c++17 "${opt_flags[@]}" "$work/icf.cc" -o "$work/icf_opt"
if "$work/icf_opt" > "$work/out"; then
  echo "--config=opt's flags (${opt_flags[*]}): right ($(cat "$work/out"))"
else
  echo "FAIL: --config=opt's flags (${opt_flags[*]}) compute $(cat "$work/out"), not 12"
  status=1
fi
g++ -std=c++17 -O3 "$work/icf.cc" -o "$work/icf_plain"
if "$work/icf_plain" > "$work/out"; then
  echo "plain -O3 is right here: $(g++ -dumpfullversion) does not show PR 113907 on this case"
else
  echo "plain -O3 computes $(cat "$work/out"): $(g++ -dumpfullversion) still needs the guard"
fi
exit "$status"
