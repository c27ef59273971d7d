// CTCLoss (ctc_loss, _contrib_CTCLoss; MXNet's): the connectionist temporal
// classification loss of activations data (T, N, C) against label (N, L)
// for each of the N sequences: -log p(label | softmax(data)), summed over
// every frame alignment that collapses to the label (repeats merged, then
// blanks removed). The blank is class 0 (blank_label=first; labels padded
// with 0) or C - 1 (last; padded with -1); use_label_lengths and
// use_data_lengths take the lengths from inputs instead. A hidden second
// output holds the gradient with respect to data, computed with the loss
// by the forward-backward recursions in double (backends/common/ctc_math.h)
// as MXNet's warp-ctc kernel does; _backward_CTCLoss scales it by the head
// gradient. An alignment that cannot exist (more labels and repeats than
// frames) has loss +inf and gradient 0 (MXNet returns 0, its code marks
// that as wrong; PyTorch returns inf).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/ctc_labels.h"
#include "backends/common/ctc_math.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct CTCLossParam {
  bool use_data_lengths = false;
  bool use_label_lengths = false;
  std::string blank_label = "first";
  static void Declare(ParamSchema<CTCLossParam>* s) {
    s->Field("use_data_lengths", &CTCLossParam::use_data_lengths)
        .Describe("Take each sequence's frame count from data_lengths.");
    s->Field("use_label_lengths", &CTCLossParam::use_label_lengths)
        .Describe("Take each label's length from label_lengths, not padding.");
    s->Field("blank_label", &CTCLossParam::blank_label)
        .Choices({"first", "last"})
        .Describe("Blank class 0 (padding 0) or C - 1 (padding -1).");
  }
};

int NumInputs(const NodeAttrs& attrs) {
  const CTCLossParam& p = attrs.get<CTCLossParam>();
  return 2 + (p.use_data_lengths ? 1 : 0) + (p.use_label_lengths ? 1 : 0);
}

std::vector<std::string> InputNames(const NodeAttrs& attrs) {
  const CTCLossParam& p = attrs.get<CTCLossParam>();
  std::vector<std::string> names = {"data", "label"};
  if (p.use_data_lengths) names.push_back("data_lengths");
  if (p.use_label_lengths) names.push_back("label_lengths");
  return names;
}

void CTCLossShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const CTCLossParam& p = attrs.get<CTCLossParam>();
  const TShape &d = (*in)[0], &l = (*in)[1];
  if (d.ndim_known() && d.ndim() != 3) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(), "; (T, N, C) needed"));
  }
  if (l.ndim_known() && l.ndim() != 2) {
    throw ShapeError(absl::StrCat(OpLabel(attrs),
                                  ": input 1 (label) has shape ", l.ToString(),
                                  "; (N, L) needed"));
  }
  if (!d.is_known() || !l.is_known()) return;
  if (d[1] != l[0] || d[0] < l[1] || d[2] < 1) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": data ", d.ToString(), " and label ", l.ToString(),
        " must be (T, N, C) and (N, L) with L <= T and C >= 1"));
  }
  int next = 2;
  if (p.use_data_lengths) AssignShape(attrs, in, next++, TShape{d[1]}, false);
  if (p.use_label_lengths) AssignShape(attrs, in, next, TShape{d[1]}, false);
  AssignShape(attrs, out, 0, TShape{d[1]}, true);
  AssignShape(attrs, out, 1, d, true);
}

void CTCLossType(const NodeAttrs& attrs, std::vector<DType>* in,
                 std::vector<DType>* out) {
  const DType d = (*in)[0];
  if (d != DType::kUnknown) RequireFloat(attrs, d);
  AssignType(attrs, out, 0, d, true);
  AssignType(attrs, out, 1, d, true);
  const std::vector<std::string> names = InputNames(attrs);
  for (size_t i = 1; i < in->size(); ++i) {
    if ((*in)[i] != DType::kUnknown) {
      RequireIndexType(attrs, (*in)[i], static_cast<int>(i), names[i].c_str());
    }
  }
}

// The sequences' frames and packed labels, checked (mx_ctc's rules).
mx_ctc::CtcSequences SequencesOf(const NodeAttrs& attrs,
                                 const std::vector<TBlob>& in) {
  const CTCLossParam& p = attrs.get<CTCLossParam>();
  mx_ctc::CtcInput c;
  c.t_max = in[0].shape[0];
  c.n = in[0].shape[1];
  c.classes = in[0].shape[2];
  c.l_max = in[1].shape[1];
  c.blank_first = p.blank_label == "first";
  const std::vector<double> labels = DoublesOf(in[1]);
  c.labels = labels.data();
  std::vector<double> data_lengths, label_lengths;
  int next = 2;
  if (p.use_data_lengths) {
    data_lengths = DoublesOf(in[next++]);
    c.data_lengths = data_lengths.data();
  }
  if (p.use_label_lengths) {
    label_lengths = DoublesOf(in[next]);
    c.label_lengths = label_lengths.data();
  }
  mx_ctc::CtcSequences seqs;
  const std::string error = mx_ctc::PackCtcLabels(c, &seqs);
  if (!error.empty()) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", error));
  }
  return seqs;
}

// Loss and (when `grad` is set) frame gradients of one sequence whose
// frames are rows of `lp` (log-softmax, frames x classes).
double SequenceLoss(int64_t frames, const int64_t* labels, int64_t num_labels,
                    const std::vector<double>& lp, int64_t classes,
                    int64_t blank, std::vector<double>* grad) {
  const int64_t states = 2 * num_labels + 1;
  if (frames == 0) return num_labels == 0 ? 0 : HUGE_VAL;
  std::vector<double> alpha(frames * states);
  for (int64_t st = 0; st < states; ++st) {
    alpha[st] = mx_math::CtcAlphaStart(lp.data(), labels, st, blank);
  }
  for (int64_t t = 1; t < frames; ++t) {
    for (int64_t st = 0; st < states; ++st) {
      alpha[t * states + st] = mx_math::CtcAlphaAt(
          &alpha[(t - 1) * states], &lp[t * classes], labels, st, blank);
    }
  }
  const double log_p =
      mx_math::CtcLogLikelihood(&alpha[(frames - 1) * states], states);
  if (grad == nullptr) return -log_p;
  grad->assign(frames * classes, 0.0);
  if (log_p == -HUGE_VAL) return HUGE_VAL;  // No alignment: gradient 0.
  std::vector<double> beta(frames * states);
  for (int64_t t = frames - 1; t >= 0; --t) {
    const double* row_lp = &lp[t * classes];
    for (int64_t st = 0; st < states; ++st) {
      beta[t * states + st] =
          t == frames - 1
              ? mx_math::CtcBetaEnd(row_lp, labels, st, states, blank)
              : mx_math::CtcBetaAt(&beta[(t + 1) * states], row_lp, labels, st,
                                   states, blank);
    }
    for (int64_t k = 0; k < classes; ++k) {
      (*grad)[t * classes + k] =
          mx_math::CtcGradAt(&alpha[t * states], &beta[t * states],
                             &lp[t * classes], labels, states, blank, log_p, k);
    }
  }
  return -log_p;
}

void CTCLossCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  const int64_t t_max = in[0].shape[0], n = in[0].shape[1];
  const int64_t classes = in[0].shape[2];
  const mx_ctc::CtcSequences seqs = SequencesOf(attrs, in);
  const bool want_grad = req[1] != OpReqType::kNullOp;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* loss = out[0].data<T>();
    T* dx = out[1].data<T>();
    ParallelFor(n, 1, [&](int64_t b, int64_t e) {
      std::vector<double> lp, grad;
      for (int64_t i = b; i < e; ++i) {
        const int64_t frames = seqs.frames[i];
        lp.resize(frames * classes);
        for (int64_t t = 0; t < frames; ++t) {  // Log-softmax per frame.
          const T* row = x + (t * n + i) * classes;
          const auto value = [row](int64_t k) {
            return static_cast<double>(static_cast<A>(row[k]));
          };
          const double lse = mx_math::LogSumExp(classes, value);
          for (int64_t k = 0; k < classes; ++k) {
            lp[t * classes + k] = value(k) - lse;
          }
        }
        const double l =
            SequenceLoss(frames, seqs.labels.data() + seqs.label_offset[i],
                         seqs.num_labels[i], lp, classes, seqs.blank,
                         want_grad ? &grad : nullptr);
        Assign(loss + i, req[0], static_cast<A>(l));
        if (!want_grad) continue;
        for (int64_t t = 0; t < t_max; ++t) {
          T* dst = dx + (t * n + i) * classes;
          for (int64_t k = 0; k < classes; ++k) {
            const double g = t < frames ? grad[t * classes + k] : 0.0;
            Assign(dst + k, req[1], static_cast<A>(g));
          }
        }
      }
    });
  });
}

MX_REGISTER_OP(CTCLoss)
    .Describe(
        "CTC loss of activations (T, N, C) against labels (N, L): (N,) "
        "-log p(label); hidden output: its gradient w.r.t. data.")
    .SetNumInputs(NumInputs)
    .SetInputNames(InputNames)
    .SetNumOutputs(2)
    .SetNumVisibleOutputs([](const NodeAttrs&) { return 1; })
    .SetParams<CTCLossParam>()
    .SetInferShape(CTCLossShape)
    .SetInferType(CTCLossType)
    .SetCompute(Context::kCPU, CTCLossCompute)
    .AddAlias("ctc_loss")
    .AddAlias("_npx_ctc_loss")
    .AddAlias("_contrib_CTCLoss")
    .AddAlias("_contrib_ctc_loss");

// (out_grad (N,), grad (T, N, C)) -> data_grad = out_grad[n] * grad.
void CTCLossBackwardCompute(const OpContext&, const NodeAttrs&,
                            const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const int64_t n = in[1].shape[1], classes = in[1].shape[2];
  const int64_t total = in[1].Size();
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* og = in[0].data<T>();
    const T* g = in[1].data<T>();
    T* dx = out[0].data<T>();
    ParallelFor(total, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const A scale = static_cast<A>(og[(i / classes) % n]);
        Assign(dx + i, req[0], static_cast<A>(scale * static_cast<A>(g[i])));
      }
    });
  });
}

MX_REGISTER_OP(_backward_CTCLoss)
    .Describe("Gradient of CTCLoss: out_grad (N,) times its hidden output.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "grad"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& g = (*in)[1];
      if (g.ndim_known() && g.ndim() != 3) {
        throw ShapeError(absl::StrCat(OpLabel(attrs),
                                      ": input 1 (grad) has shape ",
                                      g.ToString(), "; (T, N, C) needed"));
      }
      if (!g.is_known()) return;
      AssignShape(attrs, in, 0, TShape{g[1]}, false);
      AssignShape(attrs, out, 0, g, true);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameFloatType(attrs, in, out);
    })
    .SetCompute(Context::kCPU, CTCLossBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  // Labels and lengths get zeros; data the head gradient times the
  // gradient the forward pass computed.
  SetGradient("CTCLoss", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return WithZeroGradsFrom(b, {b.Op("_backward_CTCLoss", {g[0], b.y(1)})}, 1);
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
