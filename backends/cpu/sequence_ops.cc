// MXNet's sequence ops on (T, B, ...) data (axis 0) or (B, T, ...) (axis
// 1), each sequence b of length sequence_length[b] (truncated, as MXNet)
// with use_sequence_length, else T:
// - SequenceMask sets the steps at or past the length to `value`; its
//   gradient masks the head gradient the same way (with 0).
// - SequenceLast takes each sequence's last step, (B, ...); its gradient
//   (_backward_SequenceLast) goes back to that step.
// - SequenceReverse (axis 0 only, as MXNet) reverses each sequence's first
//   length steps, leaving the padding after them in place; its gradient is
//   the same reversal.
// sequence_length gets no gradient. Lengths SequenceLast and
// SequenceReverse cannot honour (past T, below 1 or 0) are InvalidArgument
// (MXNet reads out of bounds).
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct SequenceMaskParam {
  bool use_sequence_length = false;
  double value = 0;
  int axis = 0;
  static void Declare(ParamSchema<SequenceMaskParam>* s) {
    s->Field("use_sequence_length", &SequenceMaskParam::use_sequence_length)
        .Describe("Take sequence_length as input 1; else the identity.");
    s->Field("value", &SequenceMaskParam::value)
        .Describe("Written past each sequence's end.");
    s->Field("axis", &SequenceMaskParam::axis)
        .Describe("The time axis: 0 (T, B, ...) or 1 (B, T, ...).");
  }
};

// Throws unless axis is 0 or 1 (`max_axis` for SequenceReverse's 0) and d,
// when its rank is known, has the time and batch axes.
void CheckSequenceData(const NodeAttrs& attrs, int axis, int max_axis,
                       const TShape& d) {
  if (axis < 0 || axis > max_axis) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": axis=", axis,
                     max_axis == 0 ? " must be 0" : " must be 0 or 1"));
  }
  if (d.ndim_known() && d.ndim() < 2) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(),
                                  " but at least 2 axes (time, batch) are "
                                  "required"));
  }
}

void SequenceMaskShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                       std::vector<TShape>* out) {
  const SequenceMaskParam& p = attrs.get<SequenceMaskParam>();
  CheckSequenceData(attrs, p.axis, 1, (*in)[0]);
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  CheckSequenceData(attrs, p.axis, 1, d);
  if (!d.ndim_known()) return;
  if (p.use_sequence_length) {
    AssignShape(attrs, in, 1, TShape{d[1 - p.axis]}, false);
  }
}

void SequenceMaskCompute(const OpContext&, const NodeAttrs& attrs,
                         const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const SequenceMaskParam& p = attrs.get<SequenceMaskParam>();
  const TShape& s = in[0].shape;
  const int64_t inner = s.ProdDims(2, s.ndim());
  const int64_t d0 = s[0], d1 = s[1];
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    std::vector<double> len(static_cast<size_t>(p.axis == 0 ? d1 : d0),
                            HUGE_VAL);
    if (p.use_sequence_length) {
      MX_DTYPE_SWITCH(in[1].dtype, L, {
        const L* l = in[1].data<L>();
        // MXNet truncates lengths to integers (2.5 keeps 2 steps).
        for (size_t b = 0; b < len.size(); ++b) {
          len[b] = std::trunc(static_cast<double>(l[b]));
        }
      });
    }
    const T fill = SaturatingCast<T>(p.value);
    for (int64_t i0 = 0; i0 < d0; ++i0) {
      for (int64_t i1 = 0; i1 < d1; ++i1) {
        const int64_t t = p.axis == 0 ? i0 : i1, b = p.axis == 0 ? i1 : i0;
        const bool masked = static_cast<double>(t) >= len[b];
        const int64_t base = (i0 * d1 + i1) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          Assign(y + base + j, req[0], masked ? fill : x[base + j]);
        }
      }
    }
  });
}

MX_REGISTER_OP(SequenceMask)
    .Describe(
        "Sets steps at or past each sequence's length to `value` (axis 0: "
        "(T, B, ...), axis 1: (B, T, ...)).")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return attrs.get<SequenceMaskParam>().use_sequence_length ? 2 : 1;
    })
    .SetInputNames([](const NodeAttrs& attrs) {
      if (attrs.get<SequenceMaskParam>().use_sequence_length) {
        return std::vector<std::string>{"data", "sequence_length"};
      }
      return std::vector<std::string>{"data"};
    })
    .SetParams<SequenceMaskParam>()
    .SetInferShape(SequenceMaskShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 0, (*out)[0], false);
      AssignType(attrs, out, 0, (*in)[0], true);
    })
    .SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    })
    .SetCompute(Context::kCPU, SequenceMaskCompute);

// ---- SequenceLast, _backward_SequenceLast, SequenceReverse. ----

struct SequenceParam {
  bool use_sequence_length = false;
  int axis = 0;
  static void Declare(ParamSchema<SequenceParam>* s) {
    s->Field("use_sequence_length", &SequenceParam::use_sequence_length)
        .Describe(
            "Take sequence_length as the last input; else every "
            "sequence has all T steps.");
    s->Field("axis", &SequenceParam::axis)
        .Describe(
            "The time axis: 0 (T, B, ...) or 1 (B, T, ...; not "
            "SequenceReverse).");
  }
};

// (T, B, ...) or (B, T, ...) data.
struct SeqLayout {
  int64_t d0, d1, inner;
  int axis;
  int64_t steps() const { return axis == 0 ? d0 : d1; }
  int64_t batch() const { return axis == 0 ? d1 : d0; }
  // Where step t of sequence b starts.
  int64_t At(int64_t t, int64_t b) const {
    return (axis == 0 ? t * d1 + b : b * d1 + t) * inner;
  }
};

SeqLayout LayoutOf(const TShape& s, int axis) {
  return {s[0], s[1], s.ProdDims(2, s.ndim()), axis};
}

// Each sequence's length: T without lengths, else sequence_length[b]
// truncated, which must lie in [lowest, T].
std::vector<int64_t> LengthsOf(const NodeAttrs& attrs, const SeqLayout& l,
                               const TBlob* lengths, int64_t lowest) {
  std::vector<int64_t> n(static_cast<size_t>(l.batch()), l.steps());
  if (lengths == nullptr) {
    // SequenceLast of data without steps has no last step to take.
    if (l.steps() < lowest && l.batch() > 0) {
      throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": the data has ",
                                         l.steps(), " steps; at least ", lowest,
                                         " needed"));
    }
    return n;
  }
  MX_DTYPE_SWITCH(lengths->dtype, L, {
    const L* v = lengths->data<L>();
    for (size_t b = 0; b < n.size(); ++b) {
      const double given = static_cast<double>(v[b]);
      const double t = std::trunc(given);
      if (!(t >= static_cast<double>(lowest) &&
            t <= static_cast<double>(l.steps()))) {
        throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": sequence_length[",
                                           b, "]=", given, " is outside [",
                                           lowest, ", ", l.steps(), "]"));
      }
      n[b] = static_cast<int64_t>(t);
    }
  });
  return n;
}

// Inputs: `first` names, then sequence_length with use_sequence_length.
std::function<std::vector<std::string>(const NodeAttrs&)> SequenceInputs(
    std::vector<std::string> first) {
  return [first](const NodeAttrs& attrs) {
    std::vector<std::string> names = first;
    if (attrs.get<SequenceParam>().use_sequence_length) {
      names.push_back("sequence_length");
    }
    return names;
  };
}

// The sequence_length input of the `data`-th-input op, or null.
const TBlob* LengthInput(const NodeAttrs& attrs, const std::vector<TBlob>& in,
                         size_t data) {
  return attrs.get<SequenceParam>().use_sequence_length ? &in[data + 1]
                                                        : nullptr;
}

// data (at input `data`) of at least 2 axes; sequence_length (B,).
void SequenceInputShapes(const NodeAttrs& attrs, std::vector<TShape>* in,
                         size_t data, int max_axis) {
  const SequenceParam& p = attrs.get<SequenceParam>();
  const TShape& d = (*in)[data];
  CheckSequenceData(attrs, p.axis, max_axis, d);
  if (d.ndim_known() && p.use_sequence_length) {
    AssignShape(attrs, in, static_cast<int>(data) + 1, TShape{d[1 - p.axis]},
                false);
  }
}

void SequenceLastShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                       std::vector<TShape>* out) {
  SequenceInputShapes(attrs, in, 0, 1);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  std::vector<int64_t> dims;
  for (int i = 0; i < d.ndim(); ++i) {
    if (i != attrs.get<SequenceParam>().axis) dims.push_back(d[i]);
  }
  AssignShape(attrs, out, 0, TShape(dims), true);
}

void SequenceLastCompute(const OpContext&, const NodeAttrs& attrs,
                         const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const SeqLayout l = LayoutOf(in[0].shape, attrs.get<SequenceParam>().axis);
  const std::vector<int64_t> n =
      LengthsOf(attrs, l, LengthInput(attrs, in, 0), 1);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    for (int64_t b = 0; b < l.batch(); ++b) {
      const T* last = x + l.At(n[b] - 1, b);
      for (int64_t j = 0; j < l.inner; ++j) {
        Assign(y + b * l.inner + j, req[0], last[j]);
      }
    }
  });
}

// (out_grad, data[, sequence_length]) -> data_grad.
void SequenceLastBackwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                               std::vector<TShape>* out) {
  SequenceInputShapes(attrs, in, 1, 1);
  AssignShape(attrs, out, 0, (*in)[1], true);
  std::vector<TShape> last_in{(*in)[1]}, last_out{(*in)[0]};
  if (attrs.get<SequenceParam>().use_sequence_length)
    last_in.push_back((*in)[2]);
  SequenceLastShape(attrs, &last_in, &last_out);
  AssignShape(attrs, in, 0, last_out[0], false);
}

void SequenceLastBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                 const std::vector<TBlob>& in,
                                 const std::vector<OpReqType>& req,
                                 const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const SeqLayout l = LayoutOf(in[1].shape, attrs.get<SequenceParam>().axis);
  const std::vector<int64_t> n =
      LengthsOf(attrs, l, LengthInput(attrs, in, 1), 1);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* g = in[0].data<T>();
    T* dx = out[0].data<T>();
    if (req[0] != OpReqType::kAddTo) {
      std::fill(dx, dx + out[0].shape.Size(), T(0));
    }
    for (int64_t b = 0; b < l.batch(); ++b) {
      T* last = dx + l.At(n[b] - 1, b);
      for (int64_t j = 0; j < l.inner; ++j) {
        Assign(last + j, OpReqType::kAddTo, g[b * l.inner + j]);
      }
    }
  });
}

void SequenceReverseShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                          std::vector<TShape>* out) {
  SequenceInputShapes(attrs, in, 0, 0);
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  SequenceInputShapes(attrs, in, 0, 0);
}

void SequenceReverseCompute(const OpContext&, const NodeAttrs& attrs,
                            const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const SeqLayout l = LayoutOf(in[0].shape, 0);
  const std::vector<int64_t> n =
      LengthsOf(attrs, l, LengthInput(attrs, in, 0), 0);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    for (int64_t t = 0; t < l.steps(); ++t) {
      for (int64_t b = 0; b < l.batch(); ++b) {
        const int64_t from = t < n[b] ? n[b] - 1 - t : t;
        for (int64_t j = 0; j < l.inner; ++j) {
          Assign(y + l.At(t, b) + j, req[0], x[l.At(from, b) + j]);
        }
      }
    }
  });
}

// The output (input 0's gradient) has input `data`'s dtype.
std::function<void(const NodeAttrs&, std::vector<DType>*, std::vector<DType>*)>
TypeOfInput(int data) {
  return [data](const NodeAttrs& attrs, std::vector<DType>* in,
                std::vector<DType>* out) {
    AssignType(attrs, out, 0, (*in)[data], true);
    AssignType(attrs, in, data, (*out)[0], false);
    if (data > 0) AssignType(attrs, in, 0, (*out)[0], false);
  };
}

int NumSequenceInputs(const NodeAttrs& attrs, int first) {
  return first + (attrs.get<SequenceParam>().use_sequence_length ? 1 : 0);
}

[[maybe_unused]] const bool kSequenceOpsRegistered = [] {
  OpRegistry::Get()
      ->Register("SequenceLast")
      .Describe(
          "Each sequence's last step: data[len[b] - 1, b, ...] (axis 0) or "
          "data[b, len[b] - 1, ...] (axis 1); (B, ...).")
      .SetNumInputs([](const NodeAttrs& a) { return NumSequenceInputs(a, 1); })
      .SetInputNames(SequenceInputs({"data"}))
      .SetParams<SequenceParam>()
      .SetInferShape(SequenceLastShape)
      .SetInferType(TypeOfInput(0))
      .SetCompute(Context::kCPU, SequenceLastCompute);
  OpRegistry::Get()
      ->Register("_backward_SequenceLast")
      .Describe(
          "Gradient of SequenceLast: (out_grad, data[, sequence_length]) -> "
          "data_grad, out_grad at each sequence's last step, 0 elsewhere.")
      .SetNumInputs([](const NodeAttrs& a) { return NumSequenceInputs(a, 2); })
      .SetInputNames(SequenceInputs({"out_grad", "data"}))
      .SetParams<SequenceParam>()
      .SetInferShape(SequenceLastBackwardShape)
      .SetInferType(TypeOfInput(1))
      .SetCompute(Context::kCPU, SequenceLastBackwardCompute);
  OpRegistry::Get()
      ->Register("SequenceReverse")
      .Describe(
          "Reverses each sequence's first len[b] steps of (T, B, ...) data; "
          "the steps after them stay in place.")
      .SetNumInputs([](const NodeAttrs& a) { return NumSequenceInputs(a, 1); })
      .SetInputNames(SequenceInputs({"data"}))
      .SetParams<SequenceParam>()
      .SetInferShape(SequenceReverseShape)
      .SetInferType(TypeOfInput(0))
      .SetCompute(Context::kCPU, SequenceReverseCompute);

  // sequence_length (when given) gets no gradient.
  const auto with_lengths = [](GradBuilder& b, std::vector<NodeEntry> in) {
    if (b.n->inputs.size() > 1) in.push_back(b.x(1));
    return in;
  };
  const auto grads = [](GradBuilder& b, NodeEntry data_grad) {
    std::vector<NodeEntry> out{data_grad};
    if (b.n->inputs.size() > 1) out.push_back(NodeEntry{});
    return out;
  };
  SetGradient(
      "SequenceMask", [=](GradBuilder& b, const std::vector<NodeEntry>& g) {
        AttrDict attrs = b.n->attrs.dict;
        attrs["value"] = "0";
        return grads(b, b.Op("SequenceMask", with_lengths(b, {g[0]}), attrs));
      });
  SetGradient(
      "SequenceLast", [=](GradBuilder& b, const std::vector<NodeEntry>& g) {
        return grads(b, b.Op("_backward_SequenceLast",
                             with_lengths(b, {g[0], b.x(0)}), b.n->attrs.dict));
      });
  SetGradient("SequenceReverse",
              [=](GradBuilder& b, const std::vector<NodeEntry>& g) {
                return grads(b, b.Op("SequenceReverse", with_lengths(b, {g[0]}),
                                     b.n->attrs.dict));
              });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
