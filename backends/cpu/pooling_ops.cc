// 1-, 2- and 3-D max / average / sum pooling on NCW / NCHW / NCDHW data
// and its gradients. The kernel's rank picks the op's rank (the data's,
// for global pooling), as in MXNet. Max pooling also writes, as a hidden
// output, the position of each window's maximum, so its gradient
// (_backward_Pooling_max) scatters instead of searching every window again
// (as MXNet's oneDNN backend keeps a workspace); _backward_Pooling
// recomputes from the data and serves every pool type.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/conv_util.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/max_pool_2x2.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

// ---- Pooling. ----

struct PoolingParam {
  TShape kernel;
  std::string pool_type = "max";
  bool global_pool = false;
  TShape stride;
  TShape pad;
  std::string pooling_convention = "valid";
  std::optional<bool> count_include_pad;
  std::optional<std::string> layout;
  bool cudnn_off = false;
  static void Declare(ParamSchema<PoolingParam>* s) {
    s->Field("kernel", &PoolingParam::kernel)
        .Describe("(w), (h, w) or (d, h, w); required unless global_pool");
    s->Field("pool_type", &PoolingParam::pool_type)
        .Choices({"max", "avg", "sum", "lp"})
        .Describe("lp is not implemented");
    s->Field("global_pool", &PoolingParam::global_pool)
        .Describe(
            "Pool all spatial axes (kernel, stride and pad are ignored).");
    s->Field("stride", &PoolingParam::stride).Describe("default all 1");
    s->Field("pad", &PoolingParam::pad).Describe("default all 0");
    s->Field("pooling_convention", &PoolingParam::pooling_convention)
        .Choices({"valid", "full", "same"})
        .Describe("Output size rounding down (valid) or up (full).");
    s->Field("count_include_pad", &PoolingParam::count_include_pad)
        .Describe("avg: divide by the window size including padding.");
    s->Field("layout", &PoolingParam::layout)
        .Describe("Only NCW / NCHW / NCDHW (or None) is supported.");
    s->Field("cudnn_off", &PoolingParam::cudnn_off).Describe("Ignored.");
  }
};

// Spatial rank: the kernel's, or for global pooling the data's (-1 while
// the data's rank is unknown).
int PoolRank(const NodeAttrs& attrs, const TShape& data) {
  const PoolingParam& p = attrs.get<PoolingParam>();
  if (!p.global_pool) {
    if (!p.kernel.ndim_known() || p.kernel.ndim() == 0) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": kernel is required unless global_pool is set"));
    }
    return CheckKernel(attrs, p.kernel);
  }
  if (!data.ndim_known()) return -1;
  if (data.ndim() < 3 || data.ndim() > 2 + kMaxSpatial) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 0 (data) has shape ", data.ToString(),
        " but a 3-D, 4-D or 5-D shape (NCW, NCHW or NCDHW) is required"));
  }
  return data.ndim() - 2;
}

// The window for data of the given spatial rank and extents (global
// pooling covers them all).
Window PoolWindow(const NodeAttrs& attrs, int rank, const Spatial3& in) {
  const PoolingParam& p = attrs.get<PoolingParam>();
  if (p.pool_type == "lp" || p.pooling_convention == "same") {
    throw NotImplemented(absl::StrCat(
        OpLabel(attrs), ": pool_type=", p.pool_type,
        " with pooling_convention=", p.pooling_convention,
        " is not implemented (lp pooling and the same convention are not)"));
  }
  CheckLayout(attrs, p.layout, rank);
  Window w;
  w.rank = rank;
  if (p.global_pool) {
    w.k = in;
    return w;
  }
  w.k = PerAxis(attrs, "kernel", p.kernel, rank, 1, 1, 1);
  w.s = PerAxis(attrs, "stride", p.stride, rank, 1, 1, 1);
  w.p = PerAxis(attrs, "pad", p.pad, rank, 0, 0, 0);
  return w;
}

int64_t PoolOutDim(const NodeAttrs& attrs, const TShape& data, int64_t in,
                   int64_t k, int64_t s, int64_t p) {
  if (in < 0) return -1;
  if (attrs.get<PoolingParam>().global_pool) return 1;
  if (in + 2 * p < k) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 0 (data) has shape ", data.ToString(),
        "; the kernel spans ", k, " but a padded spatial size is only ",
        in + 2 * p, ", so the output would be empty"));
  }
  const bool full = attrs.get<PoolingParam>().pooling_convention == "full";
  return (in + 2 * p - k + (full ? s - 1 : 0)) / s + 1;
}

void PoolingShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  const int r = PoolRank(attrs, d);
  if (r < 0) return;
  CheckDataRank(attrs, d, r);
  const Spatial3 extents =
      d.ndim_known() ? SpatialOf(d, r) : Spatial3{-1, -1, -1};
  const Window w = PoolWindow(attrs, r, extents);
  if ((*out)[0].ndim_known()) {
    AssignShape(attrs, out, 0, TShape::Filled(r + 2, -1), true);
    TShape dd = TShape::Filled(r + 2, -1);
    dd[0] = (*out)[0][0];
    dd[1] = (*out)[0][1];
    AssignShape(attrs, in, 0, dd, false);
  }
  if (!d.ndim_known()) return;
  std::vector<int64_t> odims{d[0], d[1]};
  for (int a = 0; a < r; ++a) {
    const int i = kMaxSpatial - r + a;
    odims.push_back(PoolOutDim(attrs, d, d[2 + a], w.k[i], w.s[i], w.p[i]));
  }
  AssignShape(attrs, out, 0, TShape(odims), true);
  // Max pooling's argmax has the output's shape.
  if (out->size() > 1) AssignShape(attrs, out, 1, (*out)[0], true);
}

bool IsMax(const NodeAttrs& attrs) {
  return attrs.get<PoolingParam>().pool_type == "max";
}

// Output 0 and the data share a float dtype; max pooling's argmax is int32.
void PoolingType(const NodeAttrs& attrs, std::vector<DType>* in,
                 std::vector<DType>* out) {
  std::vector<DType> value{(*out)[0]};
  SameFloatType(attrs, in, &value);
  AssignType(attrs, out, 0, value[0], true);
  if (out->size() > 1) AssignType(attrs, out, 1, DType::kInt32, true);
}

// One pooling window along one axis: [start, end) in padded coordinates
// (clipped to the padded extent) and [lo, hi) clipped to the data.
struct Span {
  int64_t start, end, lo, hi;
  int64_t Padded() const { return std::max<int64_t>(0, end - start); }
  int64_t Inside() const { return std::max<int64_t>(0, hi - lo); }
};

Span SpanOf(const Window& w, int i, int64_t o, int64_t n) {
  Span s;
  s.start = o * w.s[i] - w.p[i];
  s.end = std::min(s.start + w.k[i], n + w.p[i]);
  s.lo = std::max<int64_t>(s.start, 0);
  s.hi = std::min(s.end, n);
  return s;
}

// Geometry of one Pooling call: data and output extents and the window.
struct PoolGeometry {
  Window w;
  Spatial3 in, out;
  int64_t planes;  // N * C
};

PoolGeometry GeometryOf(const NodeAttrs& attrs, const TShape& data,
                        const TShape& output) {
  PoolGeometry g;
  const int r = PoolRank(attrs, data);
  g.in = SpatialOf(data, r);
  g.out = SpatialOf(output, r);
  g.w = PoolWindow(attrs, r, g.in);
  g.planes = data[0] * data[1];
  return g;
}

// The windows' spans along axis a (0: d, 1: h, 2: w).
std::vector<Span> AxisSpans(const PoolGeometry& g, int a) {
  std::vector<Span> spans;
  for (int64_t o = 0; o < g.out[a]; ++o)
    spans.push_back(SpanOf(g.w, a, o, g.in[a]));
  return spans;
}

// Calls fn(plane, output offset in the plane, spans along d, h, w) for
// every output element, planes split over the kernel's threads. The spans
// of each axis are computed once per call, not per window.
template <typename F>
void ForEachWindow(const PoolGeometry& g, F fn) {
  const std::vector<Span> spans[3] = {AxisSpans(g, 0), AxisSpans(g, 1),
                                      AxisSpans(g, 2)};
  ParallelFor(g.planes, 16, [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      int64_t o = 0;
      for (const Span& sz : spans[0]) {
        for (const Span& sy : spans[1]) {
          for (const Span& sx : spans[2]) fn(plane, o++, sz, sy, sx);
        }
      }
    }
  });
}

// Elements a window averages over.
int64_t WindowCount(bool include_pad, const Span& z, const Span& y,
                    const Span& x) {
  return include_pad ? z.Padded() * y.Padded() * x.Padded()
                     : z.Inside() * y.Inside() * x.Inside();
}

// Max pooling picks each window's first maximum in row-major order (the
// smallest position among the maxima); a NaN wins and propagates, as in
// PyTorch (the first NaN). A window entirely in the padding gives 0 and
// argmax -1. `argmax` (may be null) gets positions in the plane.

// Whether candidate (v, at) replaces the current choice (best, best_at)
// when candidates may come in any order.
// Bitwise, not short-circuit: which one wins is unpredictable on real
// data, so this compiles to selects rather than branches.
template <typename A, typename Position>
inline bool Replaces(A v, Position at, A best, Position best_at) {
  const bool earlier = at < best_at;
  return (v > best) | ((v == best) & earlier) |
         ((v != v) & ((best == best) | earlier));
}

// The maxima of each column of plane `src` over the rows of sy (at least
// one) and their positions in the plane. Contiguous rows, so the loop
// vectorizes; rows come in order, so only a larger value or a first NaN
// replaces the current one.
template <typename T>
void ColumnMaxima(const T* src, const Span& sy, int64_t width, AccType<T>* cmax,
                  int32_t* cat) {
  using A = AccType<T>;
  const T* first = src + sy.lo * width;
  for (int64_t i = 0; i < width; ++i) {
    cmax[i] = static_cast<A>(first[i]);
    cat[i] = static_cast<int32_t>(sy.lo * width + i);
  }
  for (int64_t iy = sy.lo + 1; iy < sy.hi; ++iy) {
    const T* row = src + iy * width;
    const int32_t base = static_cast<int32_t>(iy * width);
    for (int64_t i = 0; i < width; ++i) {
      const A v = static_cast<A>(row[i]), c = cmax[i];
      const bool takes = (v > c) | ((v != v) & (c == c));
      cmax[i] = takes ? v : c;
      cat[i] = takes ? base + static_cast<int32_t>(i) : cat[i];
    }
  }
}

// The maxima of windows that are the column pairs (2j, 2j+1), from the
// column maxima cmax/cat, into best/at: a loop of its own over the pairs,
// so that it vectorizes as the column loop does.
template <typename A>
void PairMaxima(const A* cmax, const int32_t* cat, int64_t ncols, A* best,
                int32_t* at) {
  for (int64_t j = 0; j < ncols; ++j) {
    const A a = cmax[2 * j], b = cmax[2 * j + 1];
    const int32_t ia = cat[2 * j], ib = cat[2 * j + 1];
    // 32-bit positions: int64 ones would split the vectors.
    const bool takes = Replaces(b, ib, a, ia);
    best[j] = takes ? b : a;
    at[j] = takes ? ib : ia;
  }
}

// 1-D and 2-D windows (no depth axis), row by row: the maxima of each
// column over the window's rows first (contiguous, so the loop vectorizes),
// then of each window's columns.
template <typename T>
void MaxPoolRows(const PoolGeometry& g, const T* x, T* y, OpReqType req,
                 int32_t* argmax) {
  using A = AccType<T>;
  const std::vector<Span> rows = AxisSpans(g, 1), cols = AxisSpans(g, 2);
  const int64_t width = g.in[2], vin = Volume(g.in), vout = Volume(g.out);
  // The common 2-wide, stride-2, unpadded columns (kernel 2x2, stride 2)
  // get a loop over output columns that vectorizes.
  bool column_pairs = true;
  for (size_t j = 0; j < cols.size(); ++j) {
    const int64_t lo = 2 * static_cast<int64_t>(j);
    column_pairs &= cols[j].lo == lo && cols[j].hi == lo + 2;
  }
  const int64_t ncols = static_cast<int64_t>(cols.size());
  ParallelFor(g.planes, 16, [&](int64_t b, int64_t e) {
    std::vector<A> col_max(static_cast<size_t>(width));
    std::vector<int32_t> col_at(static_cast<size_t>(width));
    std::vector<A> row_best(column_pairs ? ncols : 0);
    std::vector<int32_t> row_at(column_pairs ? ncols : 0);
    A* cmax = col_max.data();
    int32_t* cat = col_at.data();
    for (int64_t plane = b; plane < e; ++plane) {
      const T* src = x + plane * vin;
      int64_t o = plane * vout;
      for (const Span& sy : rows) {
        if (sy.Inside() > 0) ColumnMaxima(src, sy, width, cmax, cat);
        if (column_pairs && sy.Inside() > 0) {
          PairMaxima(cmax, cat, ncols, row_best.data(), row_at.data());
          AssignRange(y + o, req, 0, ncols,
                      [best = row_best.data()](int64_t j) { return best[j]; });
          if (argmax != nullptr) {
            std::copy(row_at.begin(), row_at.end(), argmax + o);
          }
          o += ncols;
          continue;
        }
        for (const Span& sx : cols) {
          A best = 0;
          int64_t at = -1;
          if (sy.Inside() > 0 && sx.Inside() > 0) {
            int64_t at_col = sx.lo;
            best = cmax[sx.lo];
            at = cat[sx.lo];
            for (int64_t i = sx.lo + 1; i < sx.hi; ++i) {
              // Index arithmetic, not a branch: which column wins is
              // unpredictable on real data.
              const int64_t takes =
                  Replaces(cmax[i], int64_t{cat[i]}, best, at);
              const int64_t pick = takes * i + (1 - takes) * at_col;
              best = cmax[pick];
              at_col = pick;
              at = cat[pick];
            }
          }
          Assign(y + o, req, best);
          if (argmax != nullptr) argmax[o] = static_cast<int32_t>(at);
          ++o;
        }
      }
    }
  });
}

// Whether the pooling is over (h, w) planes: 2-D, or a depth of 1 with an
// unpadded depth window of 1 (one output depth).
bool IsPlanar(const PoolGeometry& g) {
  return g.in[0] == 1 && g.w.k[0] == 1 && g.w.p[0] == 0;
}

// Whether planar windows are 2x2 with stride 2, unpadded and all inside
// the data ("valid" rounding), in planes whose positions fit the kernels'
// int32 arithmetic.
bool IsPlain2x2Stride2(const PoolGeometry& g) {
  return IsPlanar(g) && g.w.k[1] == 2 && g.w.k[2] == 2 && g.w.s[1] == 2 &&
         g.w.s[2] == 2 && g.w.p[1] == 0 && g.w.p[2] == 0 &&
         g.out[1] == g.in[1] / 2 && g.out[2] == g.in[2] / 2 && g.in[1] >= 2 &&
         g.in[2] >= 2 && Volume(g.in) <= std::numeric_limits<int32_t>::max();
}

template <typename T>
void MaxPool(const PoolGeometry& g, const T* x, T* y, OpReqType req,
             int32_t* argmax) {
  using A = AccType<T>;
  if constexpr (std::is_same_v<T, float>) {
    // The CNNs' pooling layer, as vectors (3-6x the row-wise kernel).
    if ((req == OpReqType::kWriteTo || req == OpReqType::kWriteInplace) &&
        IsPlain2x2Stride2(g) && HasMaxPool2x2Kernel()) {
      const int64_t vin = Volume(g.in), vout = Volume(g.out);
      ParallelFor(g.planes, 16, [&](int64_t b, int64_t e) {
        MaxPool2x2Stride2(x + b * vin, e - b, g.in[1], g.in[2], y + b * vout,
                          argmax == nullptr ? nullptr : argmax + b * vout);
      });
      return;
    }
  }
  if (IsPlanar(g)) {
    MaxPoolRows(g, x, y, req, argmax);
    return;
  }
  const int64_t vin = Volume(g.in), vout = Volume(g.out);
  ForEachWindow(g, [&](int64_t plane, int64_t o, const Span& sz, const Span& sy,
                       const Span& sx) {
    const T* src = x + plane * vin;
    A best = 0;
    int64_t at = -1;
    for (int64_t iz = sz.lo; iz < sz.hi; ++iz) {
      for (int64_t iy = sy.lo; iy < sy.hi; ++iy) {
        const int64_t row = (iz * g.in[1] + iy) * g.in[2];
        for (int64_t ix = sx.lo; ix < sx.hi; ++ix) {
          const A v = static_cast<A>(src[row + ix]);
          if (at < 0 || Replaces(v, row + ix, best, at)) {
            best = v;
            at = row + ix;
          }
        }
      }
    }
    Assign(y + plane * vout + o, req, best);
    if (argmax != nullptr) argmax[plane * vout + o] = static_cast<int32_t>(at);
  });
}

void PoolingCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  const PoolingParam& p = attrs.get<PoolingParam>();
  const bool is_max = p.pool_type == "max", is_avg = p.pool_type == "avg";
  const bool want_argmax = out.size() > 1 && req[1] != OpReqType::kNullOp;
  if (req[0] == OpReqType::kNullOp && !want_argmax) return;
  const PoolGeometry g = GeometryOf(attrs, in[0].shape, out[0].shape);
  const int64_t vin = Volume(g.in), vout = Volume(g.out);
  if (want_argmax && vin > std::numeric_limits<int32_t>::max()) {
    throw NotImplemented(absl::StrCat(
        OpLabel(attrs), ": input 0 (data) has shape ", in[0].shape.ToString(),
        "; max pooling records argmax positions as int32, and a plane of ", vin,
        " elements does not fit"));
  }
  const bool include_pad = p.count_include_pad.value_or(true);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    if (is_max) {
      MaxPool(g, x, y, req[0], want_argmax ? out[1].data<int32_t>() : nullptr);
      return;
    }
    ForEachWindow(g, [&](int64_t plane, int64_t o, const Span& sz,
                         const Span& sy, const Span& sx) {
      const T* src = x + plane * vin;
      A sum = 0;
      for (int64_t iz = sz.lo; iz < sz.hi; ++iz) {
        for (int64_t iy = sy.lo; iy < sy.hi; ++iy) {
          const T* row = src + (iz * g.in[1] + iy) * g.in[2];
          for (int64_t ix = sx.lo; ix < sx.hi; ++ix) {
            sum += static_cast<A>(row[ix]);
          }
        }
      }
      const int64_t count = WindowCount(include_pad, sz, sy, sx);
      const A value = !is_avg ? sum : count > 0 ? sum / count : A(0);
      Assign(y + plane * vout + o, req[0], value);
    });
  });
}

MX_REGISTER_OP(Pooling)
    .Describe(
        "1-, 2- or 3-D max / average / sum pooling on NCW / NCHW / NCDHW "
        "data.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetNumOutputs([](const NodeAttrs& attrs) { return IsMax(attrs) ? 2 : 1; })
    // The argmax is internal: composed symbols expose the output only.
    .SetNumVisibleOutputs([](const NodeAttrs&) { return 1; })
    .SetOutputNames({"output", "argmax"})
    .SetParams<PoolingParam>()
    .SetInferShape(PoolingShape)
    .SetInferType(PoolingType)
    .SetCompute(Context::kCPU, PoolingCompute);

// ---- _backward_Pooling. ----

// Shapes of a pooling gradient: the data is the last input and data_grad
// has its shape; every other input (out_grad, argmax) is shaped as
// Pooling's output for that data.
void PoolingGradShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
  const int data = static_cast<int>(in->size()) - 1;
  AssignShape(attrs, out, 0, (*in)[data], true);
  AssignShape(attrs, in, data, (*out)[0], false);
  std::vector<TShape> d{(*in)[data]}, pooled{TShape()};
  PoolingShape(attrs, &d, &pooled);
  for (int i = 0; i < data; ++i) AssignShape(attrs, in, i, pooled[0], false);
}

// Inputs (out_grad, data); output data_grad. Each window sends its
// gradient to the first maximum (max; none from a window entirely in the
// padding), spreads it over its count (avg, counted as the forward does),
// or copies it to every element (sum). Overlapping windows add up.
void PoolingBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                            const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const PoolingParam& p = attrs.get<PoolingParam>();
  const PoolGeometry g = GeometryOf(attrs, in[1].shape, in[0].shape);
  const int64_t vin = Volume(g.in), vout = Volume(g.out);
  const bool is_max = p.pool_type == "max", is_avg = p.pool_type == "avg";
  const bool include_pad = p.count_include_pad.value_or(true);
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* og = in[0].data<T>();
    const T* x = in[1].data<T>();
    // Planes are disjoint, so threads accumulate without sharing.
    std::vector<A> acc(static_cast<size_t>(g.planes * vin), A(0));
    ForEachWindow(g, [&](int64_t plane, int64_t o, const Span& sz,
                         const Span& sy, const Span& sx) {
      if (sz.Inside() * sy.Inside() * sx.Inside() == 0) return;
      const T* src = x + plane * vin;
      A* dst = acc.data() + plane * vin;
      A gv = static_cast<A>(og[plane * vout + o]);
      if (is_max) {
        int64_t at = (sz.lo * g.in[1] + sy.lo) * g.in[2] + sx.lo;
        A best = static_cast<A>(src[at]);
        for (int64_t iz = sz.lo; iz < sz.hi; ++iz) {
          for (int64_t iy = sy.lo; iy < sy.hi; ++iy) {
            for (int64_t ix = sx.lo; ix < sx.hi; ++ix) {
              const int64_t i = (iz * g.in[1] + iy) * g.in[2] + ix;
              const A v = static_cast<A>(src[i]);
              // The forward's choice (elements come in row-major order).
              if (Replaces(v, i, best, at)) {
                best = v;
                at = i;
              }
            }
          }
        }
        dst[at] += gv;
        return;
      }
      if (is_avg) gv /= static_cast<A>(WindowCount(include_pad, sz, sy, sx));
      for (int64_t iz = sz.lo; iz < sz.hi; ++iz) {
        for (int64_t iy = sy.lo; iy < sy.hi; ++iy) {
          A* row = dst + (iz * g.in[1] + iy) * g.in[2];
          for (int64_t ix = sx.lo; ix < sx.hi; ++ix) row[ix] += gv;
        }
      }
    });
    T* dx = out[0].data<T>();
    for (size_t i = 0; i < acc.size(); ++i) Assign(dx + i, req[0], acc[i]);
  });
}

MX_REGISTER_OP(_backward_Pooling)
    .Describe("Gradient of Pooling: (out_grad, data) -> data_grad.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "data"})
    .SetParams<PoolingParam>()
    .SetInferShape(PoolingGradShape)
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, PoolingBackwardCompute);

// ---- _backward_Pooling_max. ----

// Planes [b, e) of the 2x2 / stride-2 float32 gradient as vectors (a
// plane whose argmax leaves its windows and the ones after it are left);
// returns how many it did.
template <typename T>
int64_t VectorUnpoolPlanes(const PoolGeometry& g, const T* og,
                           const int32_t* argmax, T* dx, int64_t b, int64_t e,
                           bool add_to) {
  if constexpr (std::is_same_v<T, float>) {
    if (IsPlain2x2Stride2(g)) {
      const int64_t vin = Volume(g.in), vout = Volume(g.out);
      return MaxPool2x2Stride2Backward(og + b * vout, argmax + b * vout, e - b,
                                       g.in[1], g.in[2], dx + b * vin, add_to);
    }
  }
  return 0;
}

// Inputs (out_grad, argmax, data); output data_grad. Each window's gradient
// goes to the position its forward recorded (none for -1); overlapping
// windows add up. The data is read for its shape only.
void PoolingMaxBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                               const std::vector<TBlob>& in,
                               const std::vector<OpReqType>& req,
                               const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const PoolGeometry g = GeometryOf(attrs, in[2].shape, in[0].shape);
  const int64_t vin = Volume(g.in), vout = Volume(g.out);
  const int32_t* argmax = in[1].data<int32_t>();
  const bool overwrite = req[0] != OpReqType::kAddTo;
  MX_FLOAT_DTYPE_SWITCH(in[2].dtype, T, {
    using A = AccType<T>;
    const T* og = in[0].data<T>();
    T* dx = out[0].data<T>();
    // Planes are disjoint, so threads scatter without sharing.
    ParallelFor(g.planes, 16, [&](int64_t b, int64_t e) {
      int64_t plane =
          b + VectorUnpoolPlanes(g, og, argmax, dx, b, e, !overwrite);
      for (; plane < e; ++plane) {
        T* dst = dx + plane * vin;
        if (overwrite) std::fill(dst, dst + vin, T(0));
        for (int64_t o = plane * vout; o < (plane + 1) * vout; ++o) {
          const int64_t at = argmax[o];
          if (at < 0 || at >= vin) {
            if (at == -1) continue;  // A window entirely in the padding.
            throw InvalidArgument(
                absl::StrCat(OpLabel(attrs), ": input 1 (argmax) holds ", at,
                             " at ", o, " but positions in a plane of ", vin,
                             " elements are -1 ... ", vin - 1));
          }
          dst[at] =
              static_cast<T>(static_cast<A>(dst[at]) + static_cast<A>(og[o]));
        }
      }
    });
  });
}

MX_REGISTER_OP(_backward_Pooling_max)
    .Describe(
        "Gradient of max Pooling from the argmax its forward recorded: "
        "(out_grad, argmax, data) -> data_grad.")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "argmax", "data"})
    .SetParams<PoolingParam>()
    .SetInferShape(PoolingGradShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      std::vector<DType> values{(*in)[0], (*in)[2]};
      SameFloatType(attrs, &values, out);
      AssignType(attrs, in, 0, values[0], false);
      AssignType(attrs, in, 2, values[1], false);
      AssignType(attrs, in, 1, DType::kInt32, false);
    })
    .SetCompute(Context::kCPU, PoolingMaxBackwardCompute);

// Max pooling scatters through its recorded argmax; the others need the
// data even for avg and sum: the output shape alone does not give the
// data's (valid rounding drops rows).
[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("Pooling", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    if (IsMax(b.n->attrs)) {
      return std::vector<NodeEntry>{b.Op(
          "_backward_Pooling_max", {g[0], b.y(1), b.x()}, b.n->attrs.dict)};
    }
    return std::vector<NodeEntry>{
        b.Op("_backward_Pooling", {g[0], b.x()}, b.n->attrs.dict)};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
