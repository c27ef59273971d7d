#!/usr/bin/env bash
# Keeps Bazel's disk cache (--disk_cache) under a size: deletes its least
# recently used files, by access time, until it fits. This Bazel has no
# garbage collection of its own, and the cache grows with every change
# (it reached 75 GB here and a CI run failed with "No space left on
# device"). Access times are as fresh as the file system keeps them
# (relatime: the first read after a write, then at most once a day), so
# "least recently used" is to within a day.
#
#   tools/prune_disk_cache.sh [DIR] [MAX_GB]   # default: the CI's, 30
set -euo pipefail

dir=${1:-$HOME/.cache/mxcore-bazel-disk}
max_gb=${2:-30}
[ -d "$dir" ] || exit 0
limit=$((max_gb * 1024 * 1024 * 1024))
total=$(du -sb "$dir" | cut -f1)
if [ "$total" -le "$limit" ]; then
  echo "disk cache $dir: $((total / 1024 / 1024)) MiB, under ${max_gb} GiB"
  exit 0
fi
# Oldest access first; delete until what is left fits. Cache file names
# are hex digests (no spaces).
find "$dir" -type f -printf '%A@ %s %p\n' | sort -n |
  awk -v over=$((total - limit)) \
    'freed < over { print $3; freed += $2 }' |
  xargs -r rm -f
echo "disk cache $dir: $((total / 1024 / 1024)) MiB pruned to" \
  "$(($(du -sb "$dir" | cut -f1) / 1024 / 1024)) MiB (limit ${max_gb} GiB)"
