#!/usr/bin/env bash
# Runs a test binary (the first argument) with the rest of the arguments:
# lets an sh_test run an existing cc_test again under another environment
# (its `env`), without compiling it twice.
set -euo pipefail
exec "$@"
