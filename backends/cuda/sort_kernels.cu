// The rank of every element in its line (argsort, sort, topk; declared in
// index_kernels.h) through CUB's device-wide radix sort: the CPU's stable
// order (NaN last, ties by position) from two stable sorts, so any number
// and length of lines use the whole GPU.
//
// Each element gets an unsigned key whose ascending order is the wanted
// order (floats' bits turned monotonic, -0 as +0, NaN the largest key,
// descending as the key's complement), and its line-major position as the
// value. Sort 1 orders all elements by key; sort 2, by line alone, gathers
// each line's elements again, in sort 1's order because radix sort is
// stable. Ties keep their positions through both.
#include <cub/device/device_radix_sort.cuh>

#include "backends/cuda/index_kernels.h"
#include "backends/cuda/index_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// Positions are uint32 (the caller refuses more elements).
using Position = uint32_t;

// The key type of T: 64 bits for 8-byte types, else 32 (float16 through
// float; bytes use the low 8 bits).
template <typename T>
using KeyType = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

// The key of v, `bits` wide (KeyBits of T's dtype).
template <typename T, typename K = KeyType<T>>
__device__ __forceinline__ K KeyOf(T v, bool ascend, int bits) {
  const K all = bits == sizeof(K) * 8 ? ~K(0) : (K(1) << bits) - 1;
  K k;
  if constexpr (std::is_same_v<T, double>) {
    if (v != v) return all;
    const uint64_t b = __double_as_longlong(v == 0 ? 0.0 : v);
    k = (b >> 63) ? ~b : b | (uint64_t{1} << 63);
  } else if constexpr (std::is_floating_point_v<typename Acc<T>::type>) {
    const float f = Load(&v, 0);
    if (f != f) return all;
    const uint32_t b = __float_as_uint(f == 0 ? 0.f : f);
    k = (b >> 31) ? ~b : b | 0x80000000u;
  } else if constexpr (std::is_signed_v<T>) {
    // Two's complement with the sign bit flipped orders as unsigned.
    k = static_cast<K>(static_cast<std::make_unsigned_t<T>>(v)) ^
        (K(1) << (bits - 1));
  } else {
    k = static_cast<K>(v);
  }
  return ascend ? k : k ^ all;
}

// keys/positions of the (outer, len, inner) elements, in line-major order.
template <typename T, typename K = KeyType<T>>
__global__ void MakeKeysKernel(int64_t n, int64_t len, int64_t inner,
                               bool ascend, int bits, const T* x, K* keys,
                               Position* positions) {
  MX_GRID_LOOP(j, n) {
    const int64_t line = j / len, i = j % len;
    const int64_t at = (line / inner) * len * inner + line % inner + i * inner;
    keys[j] = KeyOf(x[at], ascend, bits);
    positions[j] = static_cast<Position>(j);
  }
}

__global__ void LineOfKernel(int64_t n, int64_t len, const Position* positions,
                             uint32_t* lines) {
  MX_GRID_LOOP(j, n) { lines[j] = static_cast<uint32_t>(positions[j] / len); }
}

// The r-th of the final order is at rank r % len of its line.
__global__ void ScatterRankKernel(int64_t n, int64_t len, int64_t inner,
                                  const Position* positions, int64_t* rank) {
  MX_GRID_LOOP(r, n) {
    const int64_t j = positions[r];
    const int64_t line = j / len, i = j % len;
    rank[(line / inner) * len * inner + line % inner + i * inner] = r % len;
  }
}

// Key width for dtype: 8 bits for bytes, 64 for 8-byte types (KeyType's
// choice: 8-byte keys), else 32 (4-byte keys).
int KeyBits(int dtype) {
  switch (dtype) {
    case MX_DTYPE_UINT8:
    case MX_DTYPE_INT8:
      return 8;
    case MX_DTYPE_FLOAT64:
    case MX_DTYPE_INT64:
      return 64;
    default:
      return 32;
  }
}

int BitsFor(int64_t count) {  // Bits that hold 0 .. count - 1.
  int bits = 1;
  while (bits < 32 && (int64_t{1} << bits) < count) ++bits;
  return bits;
}

// CUB's temporary bytes for sort 1 (keys of K) and, with several lines,
// sort 2 (uint32 line numbers) of n elements: the larger.
template <typename K>
cudaError_t TempBytes(int64_t n, int64_t lines, size_t* bytes) {
  size_t sort_bytes = 0, line_bytes = 0;
  cudaError_t err = cub::DeviceRadixSort::SortPairs(
      nullptr, sort_bytes, static_cast<const K*>(nullptr),
      static_cast<K*>(nullptr), static_cast<const Position*>(nullptr),
      static_cast<Position*>(nullptr), static_cast<uint32_t>(n), 0,
      int{sizeof(K) * 8});
  if (err == cudaSuccess && lines > 1) {
    err = cub::DeviceRadixSort::SortPairs(
        nullptr, line_bytes, static_cast<const uint32_t*>(nullptr),
        static_cast<uint32_t*>(nullptr), static_cast<const Position*>(nullptr),
        static_cast<Position*>(nullptr), static_cast<uint32_t>(n), 0, 32);
  }
  *bytes = sort_bytes > line_bytes ? sort_bytes : line_bytes;
  return err;
}

template <typename T>
cudaError_t SortRank(int64_t lines, int64_t len, int64_t inner, bool ascend,
                     int bits, const T* x, const RankBuffers& b, int64_t* rank,
                     cudaStream_t st) {
  using K = KeyType<T>;
  const int64_t n = lines * len;
  const auto items = static_cast<uint32_t>(n);  // As TempBytes' queries.
  K* keys_in = static_cast<K*>(b.keys_in);
  K* keys_out = static_cast<K*>(b.keys_out);
  MakeKeysKernel<T><<<Blocks(n), kThreads, 0, st>>>(n, len, inner, ascend, bits,
                                                    x, keys_in, b.positions_in);
  size_t temp_bytes = b.temp_bytes;
  cudaError_t err = cub::DeviceRadixSort::SortPairs(
      b.temp, temp_bytes, keys_in, keys_out, b.positions_in, b.positions_out,
      items, 0, bits, st);
  if (err != cudaSuccess) return err;
  const Position* order = b.positions_out;
  if (lines > 1) {
    auto* line_in = static_cast<uint32_t*>(b.keys_in);
    auto* line_out = static_cast<uint32_t*>(b.keys_out);
    LineOfKernel<<<Blocks(n), kThreads, 0, st>>>(n, len, b.positions_out,
                                                 line_in);
    temp_bytes = b.temp_bytes;
    err = cub::DeviceRadixSort::SortPairs(b.temp, temp_bytes, line_in, line_out,
                                          b.positions_out, b.positions_in,
                                          items, 0, BitsFor(lines), st);
    if (err != cudaSuccess) return err;
    order = b.positions_in;
  }
  ScatterRankKernel<<<Blocks(n), kThreads, 0, st>>>(n, len, inner, order, rank);
  return cudaGetLastError();
}

}  // namespace

size_t RankKeyBytes(int dtype) { return KeyBits(dtype) == 64 ? 8 : 4; }

cudaError_t RankSortTempBytes(int dtype, int64_t outer, int64_t len,
                              int64_t inner, size_t* bytes) {
  const int64_t n = outer * len * inner, lines = outer * inner;
  *bytes = 0;
  if (n == 0) return cudaSuccess;
  if (n > int64_t{UINT32_MAX}) return cudaErrorInvalidValue;
  return KeyBits(dtype) == 64 ? TempBytes<uint64_t>(n, lines, bytes)
                              : TempBytes<uint32_t>(n, lines, bytes);
}

cudaError_t LaunchRank(int dtype, int64_t outer, int64_t len, int64_t inner,
                       bool ascend, const void* x, const RankBuffers& buffers,
                       int64_t* rank, cudaStream_t stream) {
  const int64_t n = outer * len * inner, lines = outer * inner;
  if (n == 0) return cudaSuccess;
  if (n > int64_t{UINT32_MAX} || dtype == MX_DTYPE_BOOL) {
    return cudaErrorInvalidValue;
  }
  const int bits = KeyBits(dtype);
  cudaError_t result = cudaErrorInvalidValue;
  WithIndexType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      result = SortRank(lines, len, inner, ascend, bits,
                        static_cast<const T*>(x), buffers, rank, stream);
    }
  });
  return result;
}

}  // namespace mx_cuda
