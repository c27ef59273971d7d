// MXNet's UpSampling with sample_type=nearest: each NCHW input is enlarged
// by an integer factor per input (input 0 by `scale`, every other one to
// input 0's enlarged size), and the results are joined along the channels
// (multi_input_mode=concat) or added (sum). Its gradient, one internal op
// _backward_UpSampling(ograd, arg0, ...), sums each output gradient block
// back into the input element it copied; that op's own gradient is
// UpSampling of the head gradients, so second derivatives work.
//
// sample_type=bilinear is MXNet's: a grouped Deconvolution of (data,
// weight) with kernel 2*scale - scale%2, stride scale, pad
// ceil((scale-1)/2), num_group = num_filter = the channels and no bias
// (the weight, usually a bilinear filter, is an input as in MXNet); it
// runs the Deconvolution kernels, and its gradient is Deconvolution's.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct UpSamplingParam {
  int scale = 0;
  int num_filter = 0;
  std::string sample_type;
  std::string multi_input_mode = "concat";
  int num_args = 1;
  int64_t workspace = 512;
  static void Declare(ParamSchema<UpSamplingParam>* s) {
    s->Field("scale", &UpSamplingParam::scale).Required();
    s->Field("num_filter", &UpSamplingParam::num_filter)
        .Describe("bilinear only.");
    s->Field("sample_type", &UpSamplingParam::sample_type)
        .Required()
        .Choices({"nearest", "bilinear"})
        .Describe("bilinear: a Deconvolution with the weight input");
    s->Field("multi_input_mode", &UpSamplingParam::multi_input_mode)
        .Choices({"concat", "sum"});
    s->Field("num_args", &UpSamplingParam::num_args).AtMost(kMaxOpArity);
    s->Field("workspace", &UpSamplingParam::workspace).Describe("Ignored.");
  }
};

int NumArgs(const NodeAttrs& attrs) {
  const UpSamplingParam& p = attrs.get<UpSamplingParam>();
  return p.sample_type == "bilinear" ? 2 : std::max(0, p.num_args);
}

std::vector<std::string> InputNames(const NodeAttrs& attrs) {
  if (attrs.get<UpSamplingParam>().sample_type == "bilinear") {
    return {"data", "weight"};
  }
  std::vector<std::string> names;
  for (int i = 0; i < NumArgs(attrs); ++i) {
    names.push_back(absl::StrCat("arg", i));
  }
  return names;
}

// Where each input goes: its factor and first output channel.
struct Layout {
  TShape out;
  std::vector<int64_t> factor, channel;
};

bool IsBilinear(const NodeAttrs& attrs) {
  return attrs.get<UpSamplingParam>().sample_type == "bilinear";
}

// The Deconvolution a bilinear UpSampling is, as MXNet's.
AttrDict BilinearDeconvAttrs(const NodeAttrs& attrs) {
  const UpSamplingParam& p = attrs.get<UpSamplingParam>();
  if (p.scale < 1 || p.num_filter < 1) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs),
                     ": sample_type=bilinear needs scale >= 1 and "
                     "num_filter >= 1 (the channels); got scale=",
                     p.scale, ", num_filter=", p.num_filter));
  }
  const int64_t k = 2 * int64_t{p.scale} - p.scale % 2;
  const int64_t pad = p.scale / 2;  // ceil((scale - 1) / 2)
  const auto pair = [](int64_t v) { return absl::StrCat("(", v, ",", v, ")"); };
  return {{"kernel", pair(k)},
          {"stride", pair(p.scale)},
          {"pad", pair(pad)},
          {"num_filter", AttrText(p.num_filter)},
          {"num_group", AttrText(p.num_filter)},
          {"no_bias", "True"}};
}

NodeAttrs BilinearDeconv(const NodeAttrs& attrs) {
  return MakeAttrs(OpRegistry::Get()->Lookup("Deconvolution"),
                   BilinearDeconvAttrs(attrs), attrs.name);
}

// (data, weight) -> output, by Deconvolution's shape function once the
// data's channels are checked against num_filter.
void BilinearShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                   std::vector<TShape>* out) {
  const NodeAttrs deconv = BilinearDeconv(attrs);
  const TShape& d = (*in)[0];
  const int nf = attrs.get<UpSamplingParam>().num_filter;
  if (d.ndim_known() && (d.ndim() != 4 || (d[1] >= 0 && d[1] != nf))) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(),
                                  " but sample_type=bilinear "
                                  "needs NCHW data with num_filter=",
                                  nf, " channels"));
  }
  deconv.op->infer_shape()(deconv, in, out);
}

// The layout for these input shapes (all known). Throws InvalidArgument or
// ShapeError naming the op and the input.
Layout LayoutOf(const NodeAttrs& attrs, const std::vector<TShape>& in) {
  const UpSamplingParam& p = attrs.get<UpSamplingParam>();
  const std::string label = OpLabel(attrs);
  if (IsBilinear(attrs)) {  // Its gradient is Deconvolution's.
    throw InvalidArgument(
        absl::StrCat(label, ": serves sample_type=nearest only"));
  }
  if (p.scale < 1) {
    throw InvalidArgument(
        absl::StrCat(label, ": scale=", p.scale, " must be >= 1"));
  }
  if (p.num_args < 1) {
    throw InvalidArgument(absl::StrCat(label, ": num_args=", p.num_args,
                                       " but at least 1 input is required"));
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].ndim() != 4 || in[i][2] < 1 || in[i][3] < 1) {
      throw ShapeError(absl::StrCat(
          label, ": input ", i, " (arg", i, ") has shape ", in[i].ToString(),
          " but a 4-D (NCHW) shape with non-empty H and W is required"));
    }
  }
  const std::optional<int64_t> oh = CheckedProduct({in[0][2], p.scale});
  const std::optional<int64_t> ow = CheckedProduct({in[0][3], p.scale});
  const std::optional<int64_t> size =
      oh && ow ? CheckedProduct({in[0][0], in[0][1], *oh, *ow}) : std::nullopt;
  if (!size) {
    throw ShapeError(absl::StrCat(label, ": input 0 of shape ",
                                  in[0].ToString(), " times scale=", p.scale,
                                  " does not fit in 64 bits"));
  }
  const bool concat = p.multi_input_mode == "concat";
  Layout layout;
  int64_t channels = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const TShape& s = in[i];
    const int64_t f = *oh / s[2];
    if (s[0] != in[0][0] || *oh % s[2] != 0 || *ow % s[3] != 0 ||
        *ow / s[3] != f || (!concat && s[1] != in[0][1])) {
      throw ShapeError(absl::StrCat(
          label, ": input ", i, " (arg", i, ") has shape ", s.ToString(),
          " but must enlarge by one integer factor to ", *oh, "x", *ow,
          " with input 0's batch size", concat ? "" : " and channels"));
    }
    layout.factor.push_back(f);
    layout.channel.push_back(concat ? channels : 0);
    channels += s[1];
  }
  const std::optional<int64_t> total =
      CheckedProduct({in[0][0], channels, *oh, *ow});
  if (!total) {
    throw ShapeError(
        absl::StrCat(label, ": the output does not fit in 64 bits"));
  }
  layout.out = TShape{in[0][0], concat ? channels : in[0][1], *oh, *ow};
  return layout;
}

bool AllKnown(const std::vector<TShape>& shapes, size_t begin) {
  for (size_t i = begin; i < shapes.size(); ++i) {
    if (!shapes[i].is_known()) return false;
  }
  return true;
}

std::vector<TShape> ShapesOf(const std::vector<TBlob>& blobs, size_t begin) {
  std::vector<TShape> shapes;
  for (size_t i = begin; i < blobs.size(); ++i)
    shapes.push_back(blobs[i].shape);
  return shapes;
}

void ForwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  if (IsBilinear(attrs)) return BilinearShape(attrs, in, out);
  if (!AllKnown(*in, 0)) return;
  AssignShape(attrs, out, 0, LayoutOf(attrs, *in).out, true);
}

void ForwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  if (IsBilinear(attrs)) {
    const NodeAttrs deconv = BilinearDeconv(attrs);
    (*deconv.op->compute(Context::kCPU))(ctx, deconv, in, req, out);
    return;
  }
  if (req[0] == OpReqType::kNullOp || out[0].Size() == 0) return;
  const Layout l = LayoutOf(attrs, ShapesOf(in, 0));
  const int64_t out_c = l.out[1], oh = l.out[2], ow = l.out[3];
  const bool sum = attrs.get<UpSamplingParam>().multi_input_mode == "sum";
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    T* y = out[0].data<T>();
    for (size_t i = 0; i < in.size(); ++i) {
      const T* x = in[i].data<T>();
      const int64_t c = in[i].shape[1], h = in[i].shape[2], w = in[i].shape[3],
                    f = l.factor[i], c0 = l.channel[i];
      // sum: the inputs after the first add to what the first wrote.
      const OpReqType r = sum && i > 0 ? OpReqType::kAddTo : req[0];
      const int64_t rows = in[i].shape[0] * c * oh;
      ParallelFor(rows, std::max<int64_t>(1, (1 << 14) / ow),
                  [&](int64_t b, int64_t e) {
                    for (int64_t row = b; row < e; ++row) {
                      const int64_t oy = row % oh, nc = row / oh;
                      const int64_t n = nc / c, ch = nc % c;
                      const T* src = x + (nc * h + oy / f) * w;
                      T* dst = y + ((n * out_c + c0 + ch) * oh + oy) * ow;
                      for (int64_t ox = 0; ox < ow; ++ox) {
                        Assign(dst + ox, r, src[ox / f]);
                      }
                    }
                  });
    }
  });
}

// Inputs (ograd, arg0, ...); outputs the gradients of arg0, ...
void BackwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                   std::vector<TShape>* out) {
  for (size_t i = 0; i < out->size(); ++i) {
    AssignShape(attrs, out, static_cast<int>(i), (*in)[i + 1], true);
    AssignShape(attrs, in, static_cast<int>(i + 1), (*out)[i], false);
  }
  if (!AllKnown(*in, 1)) return;
  const std::vector<TShape> args(in->begin() + 1, in->end());
  AssignShape(attrs, in, 0, LayoutOf(attrs, args).out, false);
}

void BackwardCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  const Layout l = LayoutOf(attrs, ShapesOf(in, 1));
  const int64_t out_c = l.out[1], oh = l.out[2], ow = l.out[3];
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if (req[i] == OpReqType::kNullOp || out[i].Size() == 0) continue;
      T* gx = out[i].data<T>();
      const int64_t c = out[i].shape[1], h = out[i].shape[2],
                    w = out[i].shape[3], f = l.factor[i], c0 = l.channel[i];
      const OpReqType r = req[i];
      ParallelFor(out[i].shape[0] * c * h, std::max<int64_t>(1, 4096 / w),
                  [&](int64_t b, int64_t e) {
                    for (int64_t row = b; row < e; ++row) {
                      const int64_t y = row % h, nc = row / h;
                      const int64_t n = nc / c, ch = nc % c;
                      const T* block =
                          g + ((n * out_c + c0 + ch) * oh + y * f) * ow;
                      for (int64_t x = 0; x < w; ++x) {
                        A sum = 0;
                        for (int64_t dy = 0; dy < f; ++dy) {
                          for (int64_t dx = 0; dx < f; ++dx) {
                            sum += static_cast<A>(block[dy * ow + x * f + dx]);
                          }
                        }
                        Assign(gx + row * w + x, r, sum);
                      }
                    }
                  });
    }
  });
}

}  // namespace

MX_REGISTER_OP(UpSampling)
    .Describe(
        "Nearest-neighbour upsampling of NCHW inputs by integer factors, "
        "joined along the channels (concat) or added (sum), as MXNet's.")
    .SetParams<UpSamplingParam>()
    .SetNumInputs(NumArgs)
    .SetKeyVarNumArgs("num_args")
    .SetInputNames(InputNames)
    .SetInferShape(ForwardShape)
    .SetInferType(SameType)
    .SetResourceRequest([](const NodeAttrs& attrs) {
      if (!IsBilinear(attrs)) return std::vector<ResourceRequest>{};
      const NodeAttrs deconv = BilinearDeconv(attrs);
      return deconv.op->Resources(deconv);  // Deconvolution's.
    })
    .SetCompute(Context::kCPU, ForwardCompute);

MX_REGISTER_OP(_backward_UpSampling)
    .Describe(
        "UpSampling's gradient: (ograd, arg0, ...) to the gradients of arg0, "
        "... (the args give only their shapes).")
    .SetParams<UpSamplingParam>()
    .SetNumInputs([](const NodeAttrs& a) { return NumArgs(a) + 1; })
    .SetNumOutputs(NumArgs)
    .SetInputNames([](const NodeAttrs& a) {
      std::vector<std::string> names{"ograd"};
      for (const std::string& n : InputNames(a)) names.push_back(n);
      return names;
    })
    .SetInferShape(BackwardShape)
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, BackwardCompute);

namespace {

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = NodeEntry;
  SetGradient("UpSampling", [](B& b, const std::vector<E>& g) {
    if (IsBilinear(b.n->attrs)) {  // Deconvolution's.
      return OutputsOf(b.Op("_backward_Deconvolution", {g[0], b.x(0), b.x(1)},
                            BilinearDeconvAttrs(b.n->attrs)),
                       2);
    }
    std::vector<E> in{g[0]};
    for (const E& x : b.n->inputs) in.push_back(x);
    const E grads = b.Op("_backward_UpSampling", in, b.n->attrs.dict);
    return OutputsOf(grads, b.n->inputs.size());
  });
  // Linear in ograd: its adjoint upsamples the head gradients; the args
  // only gave shapes.
  SetGradient("_backward_UpSampling", [](B& b, const std::vector<E>& g) {
    return WithZeroGradsFrom(b, {b.Op("UpSampling", g, b.n->attrs.dict)}, 1);
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
