#!/usr/bin/env bash
# Builds and runs the three ways of using mxcore from another project
# (examples/, README "Use mxcore in your project"), each as one test:
#
#   bazel_consumer  a separate Bazel workspace: local_repository + deps.bzl
#   cmake_consumer  find_package(mxcore) against tools/install.sh's prefix,
#                   and the same program built with pkg-config
#   plugin_vendor   a plugin built with CMake against the installed ABI
#                   header, loaded with MX_PLUGINS
#
#   tools/examples.sh [bazel flags...]
#
# The bazel flags (e.g. --disk_cache=...) go to every Bazel build; the SDK
# is installed with them too (default: the fastbuild objects of the test
# run). Ends with "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
flags=("$@")

bash tools/setup.sh >/dev/null || exit 1
work=$(mktemp -d /tmp/mxcore-examples.XXXXXX)
prefix="$work/prefix"
passed=0
failed=0
report() {  # NAME STATUS
  if [ "$2" -eq 0 ]; then
    echo "example $1 PASSED"
    passed=$((passed + 1))
  else
    echo "example $1 FAILED"
    failed=$((failed + 1))
  fi
}

echo "=== examples/bazel_consumer (its own workspace) ==="
(cd examples/bazel_consumer &&
  bazel run "${flags[@]}" //:train_mlp &&
  bazel shutdown)
report bazel_consumer $?

echo "=== tools/install.sh $prefix ==="
if bash tools/install.sh "$prefix" "${flags[@]}"; then
  echo "=== examples/cmake_consumer (find_package) ==="
  (cd "$work" &&
    cmake -S "$root/examples/cmake_consumer" -B cmake_consumer \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
    cmake --build cmake_consumer -j 2 &&
    cd cmake_consumer && ./export_import)
  report cmake_consumer $?

  echo "=== examples/cmake_consumer built with pkg-config ==="
  # shellcheck disable=SC2046
  (cd "$work" &&
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig" &&
    export PKG_CONFIG_PATH &&
    g++ -o export_import_pc "$root/examples/cmake_consumer/export_import.cc" \
      $(pkg-config --cflags --libs mxcore) &&
    ./export_import_pc)
  report pkg_config_consumer $?

  echo "=== examples/plugin_vendor (CMake, MX_PLUGINS) ==="
  (cd "$work" &&
    cmake -S "$root/examples/plugin_vendor" -B plugin_vendor \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
    cmake --build plugin_vendor -j 2 &&
    MX_PLUGINS="$work/plugin_vendor/libvendor_axpby.so" \
      ./plugin_vendor/run_axpby)
  report plugin_vendor $?
else
  report install 1
fi

rm -rf "$work"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
