#!/usr/bin/env bash
# The clang/libc++ plugins really use libc++ and not libstdc++: no
# libstdc++ in DT_NEEDED, no GLIBCXX/CXXABI symbol versions, libc++'s
# std::__1 code inside (linked statically) and none of it exported.
set -euo pipefail
for plugin in "$@"; do
  needed=$(readelf -d "$plugin" | grep NEEDED || true)
  if grep -F 'libstdc++' <<<"$needed"; then
    echo "FAIL: $plugin depends on libstdc++" >&2
    exit 1
  fi
  if nm -D "$plugin" | grep -E 'GLIBCXX|CXXABI'; then
    echo "FAIL: $plugin uses libstdc++ symbol versions (above)" >&2
    exit 1
  fi
  inside=$(nm "$plugin" | grep -c '_ZNSt3__1' || true)
  if [[ "$inside" -eq 0 ]]; then
    echo "FAIL: $plugin holds no libc++ (std::__1) code" >&2
    exit 1
  fi
  if nm -D --defined-only "$plugin" | grep '_ZNSt3__1'; then
    echo "FAIL: $plugin exports libc++ symbols (above)" >&2
    exit 1
  fi
  echo "OK: $plugin holds $inside libc++ symbols, exports none, and needs:"
  echo "$needed"
  echo "exported: $(nm -D --defined-only "$plugin" | awk '{print $3}' | tr '\n' ' ')"
done
