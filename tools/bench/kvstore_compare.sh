#!/usr/bin/env bash
# Data-parallel training on this machine, side by side in one run: the CNN
# trainer with 1 rank and with 2 ranks under mpirun (1 kernel thread per
# rank, the same per-rank batch), global images/s and the ratio; then the
# dist_sync allreduce bandwidth from 1 KB to 64 MB with 2 ranks.
#   bash tools/bench/kvstore_compare.sh [EPOCHS] [LIMIT]
# EPOCHS (default 1) over the first LIMIT training images (default 30000).
set -euo pipefail
cd "$(dirname "$0")/../.."
epochs="${1:-1}"
limit="${2:-30000}"
bazel build --config=opt ${MX_BAZEL_FLAGS:-} //tools:train \
  //kvstore:kvstore_benchmark
source kvstore/mpirun_test.sh
mpirun_setup
export MX_CPU_KERNEL_NTHREADS=1 OMP_NUM_THREADS=1 MX_CPU_WORKER_NTHREADS=1
train=(bazel-bin/tools/train --model=cnn --optimizer=sgd --batch_size=64
       --epochs="$epochs" --limit="$limit")
rate() { sed -nE 's/.*images_per_s=([0-9]+).*/\1/p'; }
echo "== CNN, 1 rank (mpirun -np 1) =="
one=$(mpirun -np 1 "${train[@]}" --kvstore=dist_sync 2>/dev/null | tee /dev/stderr | rate)
echo "== CNN, 2 ranks (mpirun -np 2) =="
two=$(mpirun -np 2 "${train[@]}" --kvstore=dist_sync 2>/dev/null |
      tee /dev/stderr | rate)
python3 -c "print('global images/s: 1 rank %s, 2 ranks %s: %.2fx' % ($one, $two, $two / $one))"
echo "== allreduce bandwidth, 2 ranks =="
mpirun -np 2 bazel-bin/kvstore/kvstore_benchmark 2>/dev/null
rm -rf "$MPI_TMP"
