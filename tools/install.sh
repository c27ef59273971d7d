#!/usr/bin/env bash
# Installs the mxcore SDK under PREFIX, for CMake and pkg-config users and
# for plugin vendors:
#
#   bash tools/install.sh PREFIX [bazel flags...]
#
#   PREFIX/include/mxcore/...              the public headers (sdk/public_headers.txt
#                                          and the mxcore headers they include),
#                                          the plugin ABI header among them
#   PREFIX/lib/libmxcore.so                the API and the built-in CPU kernels
#   PREFIX/lib/cmake/mxcore/mxcoreConfig.cmake (+ ConfigVersion): mxcore::mxcore,
#                                          mxcore::plugin_api
#   PREFIX/lib/pkgconfig/mxcore.pc
#
# The library is built with --config=opt unless bazel flags are given (CI
# passes the flags of its test build to reuse its objects).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
  echo "usage: tools/install.sh PREFIX [bazel flags...]" >&2
  exit 2
fi
prefix=$(realpath -m "$1")
shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--config=opt)

bash tools/setup.sh >/dev/null
bazel build "${flags[@]}" //sdk:libmxcore.so
bin=$(bazel info "${flags[@]}" bazel-bin 2>/dev/null)
version=$(cat sdk/VERSION)

# Headers: the listed ones and every mxcore header they reach (g++ -MM
# lists the includes; those inside this tree are mxcore's).
mapfile -t listed < <(grep -v '^#' sdk/public_headers.txt | grep .)
headers=$(for h in "${listed[@]}"; do
  g++ -std=c++17 -I. -MM -MG -x c++ "$h" | tr ' \\' '\n\n'
done | grep -E '^[a-z_]+/.*\.h$' | sort -u)

inc="$prefix/include/mxcore"
rm -rf "$inc"
for h in $headers; do
  install -D -m 644 "$h" "$inc/$h"
done
install -D -m 755 "$bin/sdk/libmxcore.so" "$prefix/lib/libmxcore.so"

# Abseil is on the API (spans, hash maps in headers): consumers link the
# same Debian libraries mxcore does, found through Abseil's own config.
absl_components=(strings str_format hash raw_hash_set span inlined_vector
                 flat_hash_map flat_hash_set status statusor synchronization
                 time)
cmake_dir="$prefix/lib/cmake/mxcore"
mkdir -p "$cmake_dir"
sed -e "s|@ABSL_TARGETS@|$(printf 'absl::%s;' "${absl_components[@]}" | sed 's/;$//')|" \
  sdk/mxcoreConfig.cmake.in >"$cmake_dir/mxcoreConfig.cmake"
sed -e "s|@VERSION@|$version|" sdk/mxcoreConfigVersion.cmake.in \
  >"$cmake_dir/mxcoreConfigVersion.cmake"
mkdir -p "$prefix/lib/pkgconfig"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" \
    -e "s|@ABSL_PC@|$(printf 'absl_%s ' "${absl_components[@]}")|" \
  sdk/mxcore.pc.in >"$prefix/lib/pkgconfig/mxcore.pc"

echo "install: mxcore $version in $prefix ($(echo "$headers" | wc -l) headers)"
