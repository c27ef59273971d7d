#!/usr/bin/env bash
# Runs the statically linked plugin host (a default cc_binary) on a plugin.
set -euo pipefail
"$1" "$2"
