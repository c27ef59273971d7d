#!/usr/bin/env bash
# No plugin links against mxcore: no undefined symbol of any plugin is an
# mxcore (_ZN2mx, _ZNK2mx) or Abseil one; each exports mx_plugin_init.
set -euo pipefail
status=0
for plugin in "$@"; do
  bad=$(nm -D --undefined-only "$plugin" | grep -E '_ZN2mx|_ZNK2mx|absl' || true)
  if [[ -n "$bad" ]]; then
    echo "FAIL: $plugin needs mxcore/abseil symbols:" >&2
    echo "$bad" >&2
    status=1
  fi
done
echo "checked $# plugins"
exit $status
