// Max pooling of float32 planes over 2x2 windows with stride 2 and no
// padding, the pooling layer of most CNNs, and its gradient, as one pass
// of AVX2 vectors each (selected at run time, so every build runs them on
// a CPU that has AVX2).
//
// Each of `planes` consecutive (h, w) planes of `x` gives an (h / 2, w / 2)
// plane of `y`; a last odd row or column is in no window, as MXNet's
// "valid" rounding leaves it. `argmax` (may be null) gets each window's
// position in its input plane. The choice is the general kernel's: the
// first maximum in row-major order, and the first NaN wins.
//
//   if (!cpu::MaxPool2x2Stride2(x, planes, h, w, y, argmax)) {
//     ... the general kernel ...
//   }
#ifndef MXCORE_BACKENDS_CPU_MAX_POOL_2X2_H_
#define MXCORE_BACKENDS_CPU_MAX_POOL_2X2_H_

#include <cstdint>

namespace mx {
namespace cpu {

// Whether this CPU runs MaxPool2x2Stride2 (has AVX2).
bool HasMaxPool2x2Kernel();

// Writes y (and argmax) and returns true; returns false, writing nothing,
// where HasMaxPool2x2Kernel() is false. Planes must have h, w >= 2 and,
// with argmax, fewer than 2^31 elements.
bool MaxPool2x2Stride2(const float* x, int64_t planes, int64_t h, int64_t w,
                       float* y, int32_t* argmax);

// The gradient through MaxPool2x2Stride2's argmax: each window's
// out_grad goes to its argmax position of in_grad, 0 to the other
// positions (added to in_grad instead with add_to). Returns how many
// leading planes it did: all of them, or fewer where a plane's argmax
// holds a position outside its own window (not from MaxPool2x2Stride2;
// the general kernel takes that plane and reports it), 0 where
// HasMaxPool2x2Kernel() is false.
int64_t MaxPool2x2Stride2Backward(const float* out_grad, const int32_t* argmax,
                                  int64_t planes, int64_t h, int64_t w,
                                  float* in_grad, bool add_to);

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_MAX_POOL_2X2_H_
