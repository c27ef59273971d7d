#!/bin/bash
# Runs on the GPU machine, from the folder `bundle.sh train` made: the
# trainer on gpu(0) (MLP, CNN, CNN with BatchNorm), with the CUDA plugin.
cd "$(dirname "$0")"
log=${OUT:-/tmp}/gpu_train.log
exec > >(tee "$log") 2>&1
source ./gpu_env.sh
export MX_PLUGINS=$PWD/libmx_cuda.so
for args in "--model=mlp --epochs=2" "--model=cnn --epochs=2" \
            "--model=cnn_bn --epochs=8 --lr_schedule=cosine"; do
  echo "=== train --ctx=gpu $args"
  timeout 150 ./train --ctx=gpu --data_dir="$PWD" $args
done
