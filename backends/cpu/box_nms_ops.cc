// _contrib_box_nms: per batch item, boxes scoring above valid_thresh are
// sorted by score (descending, the topk best kept), and greedy
// non-maximum suppression drops a box overlapping (IoU > overlap_thresh) a
// better kept box of the same class (any class with force_suppress). The
// kept rows come first in score order; the other rows are -1, as in
// MXNet. A hidden second output records each row's source row, so the
// gradient scatters the output gradient back to the rows it came from.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct BoxNMSParam {
  double overlap_thresh = 0.5;
  double valid_thresh = 0;
  int64_t topk = -1;
  int64_t coord_start = 2;
  int64_t score_index = 1;
  int64_t id_index = -1;
  int64_t background_id = -1;
  bool force_suppress = false;
  std::string in_format = "corner";
  std::string out_format = "corner";
  static void Declare(ParamSchema<BoxNMSParam>* s) {
    s->Field("overlap_thresh", &BoxNMSParam::overlap_thresh);
    s->Field("valid_thresh", &BoxNMSParam::valid_thresh)
        .Describe("Boxes scoring at most this are dropped.");
    s->Field("topk", &BoxNMSParam::topk)
        .Describe(
            "Keep only the topk best before suppression; -1: all; 0: the "
            "boxes as they are (MXNet's rule).");
    s->Field("coord_start", &BoxNMSParam::coord_start)
        .Describe("Index of the first of the four coordinates.");
    s->Field("score_index", &BoxNMSParam::score_index);
    s->Field("id_index", &BoxNMSParam::id_index)
        .Describe("Index of the class id; -1: no classes.");
    s->Field("background_id", &BoxNMSParam::background_id)
        .Describe("Class id dropped like invalid boxes; -1: none.");
    s->Field("force_suppress", &BoxNMSParam::force_suppress)
        .Describe("Suppress across classes.");
    s->Field("in_format", &BoxNMSParam::in_format)
        .Choices({"corner", "center"})
        .Describe("corner: (xmin, ymin, xmax, ymax); center: (x, y, w, h).");
    s->Field("out_format", &BoxNMSParam::out_format)
        .Choices({"corner", "center"});
  }
};

// Validates the indices against K, the values per box.
void CheckIndices(const NodeAttrs& attrs, int64_t k) {
  const BoxNMSParam& p = attrs.get<BoxNMSParam>();
  const auto bad = [&](const char* key, int64_t v, const char* need) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", key, "=", v, " ",
                                       need, " (boxes have ", k, " values)"));
  };
  if (p.coord_start < 0 || p.coord_start > k - 4) {
    bad("coord_start", p.coord_start, "must leave room for 4 coordinates");
  }
  if (p.score_index < 0 || p.score_index >= k) {
    bad("score_index", p.score_index, "must index a box value");
  }
  if (p.id_index < -1 || p.id_index >= k) {
    bad("id_index", p.id_index, "must be -1 or index a box value");
  }
}

// The shape (..., boxes) of data (..., boxes, values), the op's input `i`
// (known rank); a ShapeError for fewer than two axes.
TShape BoxRows(const NodeAttrs& attrs, int i, const TShape& d) {
  if (d.ndim() < 2) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input ", i,
                                  " (data) has shape ", d.ToString(),
                                  " but (..., boxes, values) is required"));
  }
  return TShape(std::vector<int64_t>(d.begin(), d.end() - 1));
}

void BoxNMSShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                 std::vector<TShape>* out) {
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const TShape rows = BoxRows(attrs, 0, d);
  if (d[d.ndim() - 1] >= 0) CheckIndices(attrs, d[d.ndim() - 1]);
  AssignShape(attrs, out, 1, rows, true);
}

struct Box {
  double x0, y0, x1, y1;
};

Box CornerBox(const double* v, bool center) {
  if (!center) return {v[0], v[1], v[2], v[3]};
  return {v[0] - v[2] / 2, v[1] - v[3] / 2, v[0] + v[2] / 2, v[1] + v[3] / 2};
}

double IoU(const Box& a, const Box& b) {
  const double iw = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const double ih = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  if (iw <= 0 || ih <= 0) return 0;
  const double inter = iw * ih;
  const double area_a = std::max(0.0, a.x1 - a.x0) * std::max(0.0, a.y1 - a.y0);
  const double area_b = std::max(0.0, b.x1 - b.x0) * std::max(0.0, b.y1 - b.y0);
  const double uni = area_a + area_b - inter;
  return uni <= 0 ? 0 : inter / uni;
}

// The kept rows of one batch item (n boxes of k values), best first.
std::vector<int64_t> KeptRows(const BoxNMSParam& p, const double* v, int64_t n,
                              int64_t k) {
  std::vector<int64_t> order;
  if (p.topk == 0) {  // MXNet: the boxes as they are, each its own source.
    for (int64_t i = 0; i < n; ++i) order.push_back(i);
    return order;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double* row = v + i * k;
    if (!(row[p.score_index] > p.valid_thresh)) continue;
    if (p.id_index >= 0 && p.background_id >= 0 &&
        row[p.id_index] == static_cast<double>(p.background_id)) {
      continue;
    }
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return v[a * k + p.score_index] > v[b * k + p.score_index];
  });
  if (p.topk > 0 && static_cast<int64_t>(order.size()) > p.topk) {
    order.resize(static_cast<size_t>(p.topk));
  }
  const bool center = p.in_format == "center";
  std::vector<bool> dropped(order.size(), false);
  std::vector<int64_t> kept;
  for (size_t i = 0; i < order.size(); ++i) {
    if (dropped[i]) continue;
    kept.push_back(order[i]);
    const double* a = v + order[i] * k;
    const Box ba = CornerBox(a + p.coord_start, center);
    for (size_t j = i + 1; j < order.size(); ++j) {
      if (dropped[j]) continue;
      const double* b = v + order[j] * k;
      // Class ids compare as integers (truncated), as in MXNet.
      if (!p.force_suppress && p.id_index >= 0 &&
          std::trunc(a[p.id_index]) != std::trunc(b[p.id_index])) {
        continue;
      }
      if (IoU(ba, CornerBox(b + p.coord_start, center)) > p.overlap_thresh) {
        dropped[j] = true;
      }
    }
  }
  return kept;
}

void BoxNMSCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  const BoxNMSParam& p = attrs.get<BoxNMSParam>();
  const TShape& d = in[0].shape;
  const int64_t k = d[d.ndim() - 1], n = d[d.ndim() - 2];
  CheckIndices(attrs, k);
  const int64_t batches = n * k == 0 ? 0 : in[0].Size() / (n * k);
  const bool convert = p.in_format != p.out_format && p.topk != 0;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    int32_t* src = out[1].data<int32_t>();
    std::vector<double> v(static_cast<size_t>(n * k));
    for (int64_t bi = 0; bi < batches; ++bi) {
      const T* xb = x + bi * n * k;
      for (int64_t i = 0; i < n * k; ++i) v[i] = static_cast<double>(xb[i]);
      const std::vector<int64_t> kept = KeptRows(p, v.data(), n, k);
      for (int64_t r = 0; r < n; ++r) {
        const bool has = r < static_cast<int64_t>(kept.size());
        Assign(src + bi * n + r, req[1],
               static_cast<int32_t>(has ? kept[r] : -1));
        std::vector<double> row(static_cast<size_t>(k), -1.0);
        if (has) {
          std::copy(v.begin() + kept[r] * k, v.begin() + (kept[r] + 1) * k,
                    row.begin());
          if (convert) {
            double* c = row.data() + p.coord_start;
            const Box b = CornerBox(c, p.in_format == "center");
            if (p.out_format == "center") {
              c[0] = (b.x0 + b.x1) / 2;
              c[1] = (b.y0 + b.y1) / 2;
              c[2] = b.x1 - b.x0;
              c[3] = b.y1 - b.y0;
            } else {
              c[0] = b.x0;
              c[1] = b.y0;
              c[2] = b.x1;
              c[3] = b.y1;
            }
          }
        }
        for (int64_t j = 0; j < k; ++j) {
          Assign(y + (bi * n + r) * k + j, req[0], static_cast<A>(row[j]));
        }
      }
    }
  });
}

MX_REGISTER_OP(_contrib_box_nms)
    .Describe(
        "Non-maximum suppression of (..., boxes, values) data; kept boxes "
        "first by descending score, other rows -1. Output 1 (hidden, int32) "
        "holds each row's source row (-1 for filled rows).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetNumOutputs(2)
    .SetNumVisibleOutputs([](const NodeAttrs&) { return 1; })
    .SetOutputNames({"output", "source_row"})
    .SetParams<BoxNMSParam>()
    .SetInferShape(BoxNMSShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 0, (*out)[0], false);
      if ((*in)[0] == DType::kUnknown) return;
      RequireFloat(attrs, (*in)[0]);
      AssignType(attrs, out, 0, (*in)[0], true);
      AssignType(attrs, out, 1, DType::kInt32, true);
    })
    .SetCompute(Context::kCPU, BoxNMSCompute)
    .AddAlias("_contrib_box_non_maximum_suppression");

// Inputs (out_grad, source_row, data): data_grad row s gets out_grad row r
// where source_row[r] = s (coordinates passed through unconverted, as
// MXNet's backward does).
void BoxNMSBackwardCompute(const OpContext&, const NodeAttrs&,
                           const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const TShape& d = in[2].shape;
  const int64_t k = d[d.ndim() - 1], n = d[d.ndim() - 2];
  const int64_t batches = n * k == 0 ? 0 : in[2].Size() / (n * k);
  MX_FLOAT_DTYPE_SWITCH(in[2].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    const int32_t* src = in[1].data<int32_t>();
    std::vector<A> dx(static_cast<size_t>(in[2].Size()), A(0));
    for (int64_t bi = 0; bi < batches; ++bi) {
      for (int64_t r = 0; r < n; ++r) {
        const int64_t row = src[bi * n + r];
        if (row < 0 || row >= n) continue;
        for (int64_t j = 0; j < k; ++j) {
          dx[(bi * n + row) * k + j] += static_cast<A>(g[(bi * n + r) * k + j]);
        }
      }
    }
    T* dst = out[0].data<T>();
    for (size_t i = 0; i < dx.size(); ++i) Assign(dst + i, req[0], dx[i]);
  });
}

MX_REGISTER_OP(_backward_contrib_box_nms)
    .Describe(
        "Gradient of _contrib_box_nms: (out_grad, source_row, data) -> "
        "data_grad.")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "source_row", "data"})
    .SetParams<BoxNMSParam>()
    // The kernel indexes data as (..., boxes, values) and reads source_row
    // as int32 of shape (..., boxes): both are checked here, not assumed.
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& d = (*in)[2];
      if (d.ndim_known())
        AssignShape(attrs, in, 1, BoxRows(attrs, 2, d), false);
      AssignShape(attrs, in, 0, d, false);
      AssignShape(attrs, out, 0, d, true);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 1, DType::kInt32, false);
      if ((*in)[2] == DType::kUnknown) return;
      RequireFloat(attrs, (*in)[2]);
      AssignType(attrs, in, 0, (*in)[2], false);
      AssignType(attrs, out, 0, (*in)[2], true);
    })
    .SetCompute(Context::kCPU, BoxNMSBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("_contrib_box_nms", [](GradBuilder& b,
                                     const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{b.Op("_backward_contrib_box_nms",
                                       {g[0], b.y(1), b.x()}, b.n->attrs.dict)};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
