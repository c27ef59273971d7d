#!/usr/bin/env bash
# Installs every Debian package mxcore needs to build, test and run its tools.
# Idempotent: packages already present are skipped, and apt is not touched at
# all when nothing is missing. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  # Build system (Bazel 4.2.3 and the rule sets it needs offline).
  bazel-bootstrap bazel-rules-java bazel-platforms
  g++ clang-format
  # Third-party libraries, consumed through new_local_repository in WORKSPACE.
  libabsl-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev nlohmann-json3-dev zlib1g-dev
  # --config=asan and --config=fuzz (tools/fuzz.sh): clang 14 with its sanitizer
  # runtimes, libFuzzer, and llvm-symbolizer for readable stack traces.
  clang libclang-rt-14-dev libfuzzer-14-dev llvm-14
  # <omp.h> for clang (--config=asan, fuzz): the OpenMP API the oneDNN
  # plugin calls; it links GCC's libgomp, as libdnnl does.
  libomp-14-dev
  # A second C++ library: the libc++ plugin proof (tests/plugin_conformance).
  libc++-14-dev libc++abi-14-dev
  # Building the examples that use an installed mxcore (tools/examples.sh).
  cmake pkg-config
  # The dist_sync KVStore and its mpirun tests (Open MPI 4).
  openmpi-bin libopenmpi-dev
  # Data for the trainer (the README's main job).
  dataset-fashion-mnist
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: missing packages (${missing[*]}) and not root; rerun as root" >&2
    exit 1
  fi
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get update -q >/tmp/mxcore-apt-update.log 2>&1; then
  echo "setup: 'apt-get update' failed; see /tmp/mxcore-apt-update.log" >&2
  exit 1
fi
if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" \
    >/tmp/mxcore-apt-install.log 2>&1; then
  echo "setup: 'apt-get install ${missing[*]}' failed; see /tmp/mxcore-apt-install.log" >&2
  tail -n 20 /tmp/mxcore-apt-install.log >&2
  exit 1
fi
echo "setup: done"
