# Sourced by the run_*.sh scripts on a GPU machine: puts the bundle's
# libraries and the machine's CUDA libraries (in /usr/local/cuda or the
# Python environment's nvidia packages; NCCL too) on LD_LIBRARY_PATH.
cuda_dirs=$(find / -xdev \( -name 'libcudnn.so.9*' -o -name 'libcublas.so.13*' \
  -o -name 'libcudart.so.13*' -o -name 'libnvrtc.so.13*' \
  -o -name 'libnccl.so.2*' \) 2>/dev/null |
  xargs -r -n1 dirname | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH="$PWD/lib:${cuda_dirs}${LD_LIBRARY_PATH:-}"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
