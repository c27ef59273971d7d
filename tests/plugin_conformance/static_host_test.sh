#!/usr/bin/env bash
# The statically linked host (no -rdynamic) exports no mxcore symbols and
# runs the plugins given after it.
#
# GNU-unique symbols (nm type "u": inline variables and static members of
# templates, which the toolchain always exports) are listed but allowed:
# no plugin can link against them (no_mxcore_symbols_test checks that).
set -euo pipefail
host="$1"
shift
unique=$(nm -D --defined-only "$host" | awk '$2 == "u"' | grep -E '_ZN?K?2mx' || true)
if [[ -n "$unique" ]]; then
  echo "note: GNU-unique mxcore symbols in the dynamic table:"
  echo "$unique"
fi
if nm -D --defined-only "$host" | awk '$2 != "u"' | grep -E '_ZN2mx|_ZNK2mx'; then
  echo "FAIL: $host exports mxcore symbols (above)" >&2
  exit 1
fi
for plugin in "$@"; do
  "$host" "$plugin"
done
