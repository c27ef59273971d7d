#include "backends/onednn/join_add_kernels.h"

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/primitive_cache.h"

namespace mx_onednn {
namespace {

using mxplugin::Attrs;
using mxplugin::KernelContext;
using mxplugin::Tensors;

struct ConcatPrim {
  dnnl::concat prim;
  std::vector<dnnl::memory::desc> srcs;
  dnnl::memory::desc dst, scratchpad;
};

// (arrays...) -> their concatenation along `dim`.
void Concat(const KernelContext&, const Attrs& attrs, Tensors in,
            const int32_t* req, Tensors out) {
  const std::string op = "Concat";
  RequireFloat32(op, in, out);
  if (in.size() < 1 || out.size() != 1) Decline(op, "unexpected arity");
  const std::vector<int64_t> shape = out[0].shape();
  const int ndim = static_cast<int>(shape.size());
  const std::optional<int64_t> dim = mxplugin::ParseInt(attrs.Get("dim", "1"));
  if (!dim || *dim < -ndim || *dim >= ndim) Decline(op, "dim");
  const int axis = static_cast<int>(*dim < 0 ? *dim + ndim : *dim);
  std::vector<const void*> inputs;
  std::string key = "concat:" + std::to_string(axis);
  std::vector<Dims> src_dims;
  for (int i = 0; i < in.size(); ++i) {
    const std::vector<int64_t> s = in[i].shape();
    src_dims.emplace_back(s.begin(), s.end());
    key += ":" + DimsKey(src_dims.back());
    inputs.push_back(in[i].data<float>());
  }
  // The primitive reads the inputs while writing the output.
  OutputBuffer y(out[0], req[0], inputs);
  if (y.skip()) return;
  auto p = CachedPrimitive<ConcatPrim>(key, [&] {
    auto prim = std::make_shared<ConcatPrim>();
    for (const Dims& d : src_dims) prim->srcs.push_back(PlainDesc(d));
    prim->dst = PlainDesc(Dims(shape.begin(), shape.end()));
    dnnl::concat::primitive_desc pd(prim->dst, axis, prim->srcs, Engine(),
                                    UserScratchpadAttr());
    prim->scratchpad = pd.scratchpad_desc();
    prim->prim = dnnl::concat(pd);
    return prim;
  });
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_DST, Wrap(p->dst, y.data())}};
  for (int i = 0; i < in.size(); ++i) {
    args.emplace(DNNL_ARG_MULTIPLE_SRC + i, Wrap(p->srcs[i], inputs[i]));
  }
  Execute(p->prim, p->scratchpad, std::move(args));
  y.Finish();
}

// MX_ONEDNN_MIN_ADD_ELEMENTS; a bad value is an InvalidArgument from the
// first add kernel call (the plugin has no earlier place to report it).
int64_t MinAddElements() {
  static const std::optional<int64_t> kMin = []() -> std::optional<int64_t> {
    const char* v = std::getenv("MX_ONEDNN_MIN_ADD_ELEMENTS");
    if (v == nullptr) return int64_t{1} << 16;
    const std::optional<int64_t> n = mxplugin::ParseInt(v);
    if (!n || *n < 0) return std::nullopt;
    return n;
  }();
  if (!kMin) {
    throw mxplugin::Error(MX_STATUS_INVALID_ARGUMENT,
                          std::string("MX_ONEDNN_MIN_ADD_ELEMENTS=\"") +
                              std::getenv("MX_ONEDNN_MIN_ADD_ELEMENTS") +
                              "\": expected an integer >= 0");
  }
  return *kMin;
}

struct BinaryPrim {
  dnnl::binary prim;
  dnnl::memory::desc a, b, dst, scratchpad;
};

// a + b; b's dimensions may be 1 where the output's are not (after
// right-aligning the ranks, as NumPy broadcasting does).
void Add(const std::string& op, Tensors in, const int32_t* req, Tensors out) {
  RequireFloat32(op, in, out);
  if (in.size() != 2 || out.size() != 1) Decline(op, "unexpected arity");
  if (out[0].size() < MinAddElements()) Decline(op, "a small array");
  const std::vector<int64_t> shape = out[0].shape();
  const Dims dst(shape.begin(), shape.end());
  if (in[0].shape() != shape) Decline(op, "the first operand broadcasts");
  const std::vector<int64_t> bs = in[1].shape();
  if (bs.size() > dst.size()) Decline(op, "operand rank");
  Dims b(dst.size(), 1);
  for (size_t i = 0; i < bs.size(); ++i) {
    const size_t d = dst.size() - bs.size() + i;
    if (bs[i] != dst[d] && bs[i] != 1) Decline(op, "operand shapes");
    b[d] = bs[i];
  }
  // oneDNN's binary runs in place on its first operand only.
  OutputBuffer y(out[0], req[0], {in[1].data<float>()});
  if (y.skip()) return;
  const std::string key = "add:" + DimsKey(dst) + ":" + DimsKey(b);
  auto p = CachedPrimitive<BinaryPrim>(key, [&] {
    auto prim = std::make_shared<BinaryPrim>();
    prim->a = PlainDesc(dst);
    prim->b = PlainDesc(b);
    prim->dst = PlainDesc(dst);
    dnnl::binary::primitive_desc pd(
        dnnl::binary::desc(dnnl::algorithm::binary_add, prim->a, prim->b,
                           prim->dst),
        UserScratchpadAttr(), Engine());
    prim->scratchpad = pd.scratchpad_desc();
    prim->prim = dnnl::binary(pd);
    return prim;
  });
  Execute(p->prim, p->scratchpad,
          {{DNNL_ARG_SRC_0, Wrap(p->a, in[0].data<float>())},
           {DNNL_ARG_SRC_1, Wrap(p->b, in[1].data<float>())},
           {DNNL_ARG_DST, Wrap(p->dst, y.data())}});
  y.Finish();
}

void ElemwiseAdd(const KernelContext&, const Attrs&, Tensors in,
                 const int32_t* req, Tensors out) {
  Add("elemwise_add", in, req, out);
}

void BroadcastAdd(const KernelContext&, const Attrs&, Tensors in,
                  const int32_t* req, Tensors out) {
  Add("broadcast_add", in, req, out);
}

}  // namespace

void RegisterJoinAddKernels(mxplugin::Plugin& plugin) {
  RegisterCpuKernel(plugin, "Concat", Concat);
  RegisterCpuKernel(plugin, "elemwise_add", ElemwiseAdd);
  RegisterCpuKernel(plugin, "broadcast_add", BroadcastAdd);
}

}  // namespace mx_onednn
