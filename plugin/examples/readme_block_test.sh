#!/usr/bin/env bash
# The README's minimal plugin is exactly plugin/examples/twice.cc (which
# //plugin/examples:twice_test builds, loads and runs).
set -euo pipefail
readme="$1"
example="$2"
block=$(awk '/^\/\/ twice.cc. BUILD/{on=1} on&&/^```/{exit} on{print}' "$readme")
if ! diff <(echo "$block") "$example"; then
  echo "FAIL: README's plugin example differs from $example" >&2
  exit 1
fi
echo "OK: README example == $example"
