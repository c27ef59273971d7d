#include "backends/cpu/max_pool_2x2.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#define MX_MAX_POOL_2X2_AVX2 1
#endif

namespace mx {
namespace cpu {

#ifdef MX_MAX_POOL_2X2_AVX2
namespace {

// The builds compile for any x86-64 (the opt configuration adds -mavx2
// for Eigen, the others do not); these functions are compiled for AVX2
// and only called where the CPU has it.
#define MX_AVX2 __attribute__((target("avx2")))

// Lanes [0, n) of an 8-lane mask, 0 <= n <= 8.
MX_AVX2 inline __m256i LaneMask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The first n (<= 8) elements at p; only those are read or written.
MX_AVX2 inline __m256 LoadFloats(const float* p, int64_t n) {
  return n == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, LaneMask(n));
}

MX_AVX2 inline __m256i LoadInts(const int32_t* p, int64_t n) {
  return n == 8 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                : _mm256_maskload_epi32(p, LaneMask(n));
}

MX_AVX2 inline void StoreFloats(float* p, int64_t n, __m256 v) {
  if (n == 8) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, LaneMask(n), v);
  }
}

MX_AVX2 inline void StoreInts(int32_t* p, int64_t n, __m256i v) {
  if (n == 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  } else {
    _mm256_maskstore_epi32(p, LaneMask(n), v);
  }
}

// The plane positions of the top-left elements of the windows of output
// row i from output column j (8 lanes).
MX_AVX2 inline __m256i TopLeft(int64_t i, int64_t j, int64_t w) {
  return _mm256_add_epi32(
      _mm256_set1_epi32(static_cast<int32_t>(2 * i * w + 2 * j)),
      _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
}

// The other elements of a window, as offsets from its top-left one in a
// plane w wide.
struct WindowOffsets {
  __m256i right, below, below_right;
};

MX_AVX2 inline WindowOffsets OffsetsIn(int64_t w) {
  const int32_t w32 = static_cast<int32_t>(w);
  return {_mm256_set1_epi32(1), _mm256_set1_epi32(w32),
          _mm256_set1_epi32(w32 + 1)};
}

// The even and odd elements of the first n (<= 16, even) floats at p: the
// left and right columns of up to 8 windows. Only those n are read.
struct Columns {
  __m256 left, right;
};

// (v0 v1 v4 v5 v2 v3 v6 v7) -> (v0 ... v7), as 64-bit quarters.
MX_AVX2 inline __m256 InOrder(__m256 v) {
  return _mm256_castpd_ps(
      _mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

MX_AVX2 inline Columns LoadColumns(const float* p, int64_t n) {
  __m256 lo, hi;
  if (n == 16) {
    lo = _mm256_loadu_ps(p);
    hi = _mm256_loadu_ps(p + 8);
  } else {
    lo = _mm256_maskload_ps(p, LaneMask(std::min<int64_t>(n, 8)));
    hi = _mm256_maskload_ps(p + 8, LaneMask(std::max<int64_t>(n - 8, 0)));
  }
  // Per 128-bit half: (lo0 lo2 hi0 hi2); the 64-bit swap of the middle
  // quarters puts the 8 even elements in order.
  const __m256 even = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  const __m256 odd = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
  return {InOrder(even), InOrder(odd)};
}

// Candidates come in row-major order, so only a larger value or a first
// NaN replaces the current choice (ties keep the earlier position).
// `offset` holds int32 offsets in float registers; blends move bits.
MX_AVX2 inline void Consider(__m256 value, __m256 value_offset, __m256* best,
                             __m256* offset) {
  const __m256 larger = _mm256_cmp_ps(value, *best, _CMP_GT_OQ);
  const __m256 first_nan =
      _mm256_andnot_ps(_mm256_cmp_ps(*best, *best, _CMP_UNORD_Q),
                       _mm256_cmp_ps(value, value, _CMP_UNORD_Q));
  const __m256 takes = _mm256_or_ps(larger, first_nan);
  *best = _mm256_blendv_ps(*best, value, takes);
  *offset = _mm256_blendv_ps(*offset, value_offset, takes);
}

MX_AVX2 void PoolPlanes(const float* x, int64_t planes, int64_t h, int64_t w,
                        float* y, int32_t* argmax) {
  const int64_t oh = h / 2, ow = w / 2;
  const WindowOffsets offsets = OffsetsIn(w);
  const __m256 right = _mm256_castsi256_ps(offsets.right);
  const __m256 below = _mm256_castsi256_ps(offsets.below);
  const __m256 below_right = _mm256_castsi256_ps(offsets.below_right);
  for (int64_t p = 0; p < planes; ++p) {
    const float* src = x + p * h * w;
    for (int64_t i = 0; i < oh; ++i) {
      const float* top = src + 2 * i * w;
      const float* bottom = top + w;
      const int64_t o = (p * oh + i) * ow;
      for (int64_t j = 0; j < ow; j += 8) {
        const int64_t n = std::min<int64_t>(8, ow - j);
        const Columns t = LoadColumns(top + 2 * j, 2 * n);
        const Columns b = LoadColumns(bottom + 2 * j, 2 * n);
        __m256 best = t.left;
        __m256 offset = _mm256_setzero_ps();
        Consider(t.right, right, &best, &offset);
        Consider(b.left, below, &best, &offset);
        Consider(b.right, below_right, &best, &offset);
        StoreFloats(y + o + j, n, best);
        if (argmax != nullptr) {
          StoreInts(
              argmax + o + j, n,
              _mm256_add_epi32(TopLeft(i, j, w), _mm256_castps_si256(offset)));
        }
      }
    }
  }
}

// (a0 .. a7), (b0 .. b7) -> (a0 b0 .. a3 b3), (a4 b4 .. a7 b7): LoadColumns'
// inverse.
struct Interleaved {
  __m256 first, second;
};

MX_AVX2 inline Interleaved Interleave(__m256 a, __m256 b) {
  const __m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
  return {_mm256_permute2f128_ps(lo, hi, 0x20),
          _mm256_permute2f128_ps(lo, hi, 0x31)};
}

// The gradient of 2n input columns from n windows: `grad` (each window's
// gradient, in pairs) where `chosen` (in pairs) is set, 0 elsewhere,
// written or added to the n_floats <= 16 floats at p. As the general
// kernel, the gradient is 0 + g when written and x + g only where chosen
// when added (so -0 and untouched elements come out alike).
MX_AVX2 inline void PutColumns(float* p, int64_t n_floats,
                               const Interleaved& grad,
                               const Interleaved& chosen, bool add_to) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256 g[2] = {grad.first, grad.second};
  const __m256 c[2] = {chosen.first, chosen.second};
  for (int half = 0; half < 2; ++half) {
    const int64_t n = std::min<int64_t>(8, n_floats - 8 * half);
    if (n <= 0) return;
    float* dst = p + 8 * half;
    __m256 v;
    if (add_to) {
      const __m256 x = LoadFloats(dst, n);
      v = _mm256_blendv_ps(x, _mm256_add_ps(x, g[half]), c[half]);
    } else {
      v = _mm256_and_ps(_mm256_add_ps(zero, g[half]), c[half]);
    }
    StoreFloats(dst, n, v);
  }
}

// Each window's argmax relative to its top-left element, for the n
// windows of output row i from column j.
MX_AVX2 inline __m256i RelativeArgmax(const int32_t* at, int64_t n, int64_t i,
                                      int64_t j, int64_t w) {
  return _mm256_sub_epi32(LoadInts(at, n), TopLeft(i, j, w));
}

// Lanes where a == b, as a float mask.
MX_AVX2 inline __m256 Equal(__m256i a, __m256i b) {
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b));
}

// Whether every argmax of one plane is in its own window.
MX_AVX2 bool InOwnWindows(const int32_t* at, int64_t oh, int64_t ow,
                          int64_t w) {
  const WindowOffsets offsets = OffsetsIn(w);
  __m256i bad = _mm256_setzero_si256();
  for (int64_t i = 0; i < oh; ++i) {
    for (int64_t j = 0; j < ow; j += 8) {
      const int64_t n = std::min<int64_t>(8, ow - j);
      const __m256i rel = RelativeArgmax(at + i * ow + j, n, i, j, w);
      const __m256i ok = _mm256_or_si256(
          _mm256_or_si256(_mm256_cmpeq_epi32(rel, _mm256_setzero_si256()),
                          _mm256_cmpeq_epi32(rel, offsets.right)),
          _mm256_or_si256(_mm256_cmpeq_epi32(rel, offsets.below),
                          _mm256_cmpeq_epi32(rel, offsets.below_right)));
      bad = _mm256_or_si256(bad, _mm256_andnot_si256(ok, LaneMask(n)));
    }
  }
  return _mm256_testz_si256(bad, bad) != 0;
}

MX_AVX2 int64_t UnpoolPlanes(const float* og, const int32_t* argmax,
                             int64_t planes, int64_t h, int64_t w, float* dx,
                             bool add_to) {
  const int64_t oh = h / 2, ow = w / 2;
  const WindowOffsets offsets = OffsetsIn(w);
  for (int64_t p = 0; p < planes; ++p) {
    const int32_t* at = argmax + p * oh * ow;
    // Checked before writing, so a plane left to the general kernel is
    // untouched (it may be added to).
    if (!InOwnWindows(at, oh, ow, w)) return p;
    const float* g = og + p * oh * ow;
    float* d = dx + p * h * w;
    for (int64_t i = 0; i < oh; ++i) {
      float* top = d + 2 * i * w;
      float* bottom = top + w;
      for (int64_t j = 0; j < ow; j += 8) {
        const int64_t n = std::min<int64_t>(8, ow - j);
        const int64_t o = i * ow + j;
        const __m256 grad = LoadFloats(g + o, n);
        const __m256i rel = RelativeArgmax(at + o, n, i, j, w);
        const Interleaved pairs = Interleave(grad, grad);
        PutColumns(top + 2 * j, 2 * n, pairs,
                   Interleave(Equal(rel, _mm256_setzero_si256()),
                              Equal(rel, offsets.right)),
                   add_to);
        PutColumns(bottom + 2 * j, 2 * n, pairs,
                   Interleave(Equal(rel, offsets.below),
                              Equal(rel, offsets.below_right)),
                   add_to);
      }
      // A last odd column is in no window.
      if (w % 2 == 1 && !add_to) top[w - 1] = bottom[w - 1] = 0;
    }
    // So is a last odd row.
    if (h % 2 == 1 && !add_to) std::fill(d + (h - 1) * w, d + h * w, 0.f);
  }
  return planes;
}

}  // namespace

bool HasMaxPool2x2Kernel() {
  static const bool has = [] {
    __builtin_cpu_init();  // In case this runs before libgcc's constructor.
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}

bool MaxPool2x2Stride2(const float* x, int64_t planes, int64_t h, int64_t w,
                       float* y, int32_t* argmax) {
  if (!HasMaxPool2x2Kernel()) return false;
  PoolPlanes(x, planes, h, w, y, argmax);
  return true;
}

int64_t MaxPool2x2Stride2Backward(const float* out_grad, const int32_t* argmax,
                                  int64_t planes, int64_t h, int64_t w,
                                  float* in_grad, bool add_to) {
  if (!HasMaxPool2x2Kernel()) return 0;
  return UnpoolPlanes(out_grad, argmax, planes, h, w, in_grad, add_to);
}

#else  // No x86-64: the general kernel runs.

bool HasMaxPool2x2Kernel() { return false; }

bool MaxPool2x2Stride2(const float*, int64_t, int64_t, int64_t, float*,
                       int32_t*) {
  return false;
}

int64_t MaxPool2x2Stride2Backward(const float*, const int32_t*, int64_t,
                                  int64_t, int64_t, float*, bool) {
  return 0;
}

#endif

}  // namespace cpu
}  // namespace mx
