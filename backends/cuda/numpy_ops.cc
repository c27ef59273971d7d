// GPU kernels of MXNet 2's NumPy-interface elementwise ops (_npi_add,
// _npi_add_scalar, _npi_equal, _npi_exp, ...): the operands converted to
// the dtype they meet in (backends/common/numpy_types.h, as the host's
// type inference decided), then the legacy ops' kernels (elementwise.cu).
#include <string>
#include <utility>
#include <vector>

#include "backends/common/numpy_types.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// The data of `in` in `dtype`: the operands of another dtype converted
// into one workspace block (Workspace gives one per call).
std::vector<const void*> InDType(const std::string& op,
                                 const KernelContext& ctx, Tensors in,
                                 int dtype) {
  std::vector<const void*> data(in.size());
  auto carve = [&](ScratchCarver& c) {
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].dtype() != dtype) {
        data[i] =
            c.Take<char>(static_cast<int64_t>(in[i].size() * DTypeSize(dtype)));
      }
    }
  };
  CarveWorkspace(ctx, carve);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].dtype() == dtype) {
      data[i] = in[i].data<void>();
    } else {
      CheckCuda(
          LaunchCast(in[i].dtype(), dtype, in[i].size(), in[i].data<void>(),
                     const_cast<void*>(data[i]), StreamOf(ctx)),
          op);
    }
  }
  return data;
}

enum class Rule { kArithmetic, kCompare };

void RegisterBinary(mxplugin::Plugin& plugin, const std::string& op, Binary f,
                    Rule rule) {
  RegisterGpuKernel(
      plugin, op,
      [op, f, rule](const KernelContext& ctx, const Attrs&, Tensors in,
                    const int32_t* req, Tensors out) {
        const int meet =
            rule == Rule::kCompare
                ? mx_numpy::PromoteTypes(in[0].dtype(), in[1].dtype())
                : out[0].dtype();
        if (meet == mx_numpy::kBool) RequireNumeric(op, in[0]);
        BroadcastIndex bc;
        const BroadcastIndex* index = nullptr;
        if (in[0].shape() != out[0].shape() ||
            in[1].shape() != out[0].shape()) {
          bc = MakeBroadcast(op, in[0], in[1], out[0]);
          index = &bc;
        }
        const std::vector<const void*> x = InDType(op, ctx, in, meet);
        const cudaStream_t stream = StreamOf(ctx);
        CheckCuda(
            rule == Rule::kCompare
                ? LaunchCompare(f, meet, out[0].size(), x[0], x[1], 0, false,
                                index, out[0].data<void>(), req[0], stream)
                : LaunchBinary(f, meet, out[0].size(), x[0], x[1],
                               out[0].data<void>(), req[0], index, stream),
            op);
      });
}

void RegisterScalar(mxplugin::Plugin& plugin, const std::string& op, Binary f,
                    bool reverse, Rule rule) {
  RegisterGpuKernel(
      plugin, op,
      [op, f, reverse, rule](const KernelContext& ctx, const Attrs& attrs,
                             Tensors in, const int32_t* req, Tensors out) {
        const int meet =
            rule == Rule::kCompare
                ? mx_numpy::ScalarOpType(in[0].dtype(),
                                         FlagAttr(op, attrs, "is_int", "true"))
                : out[0].dtype();
        if (meet == mx_numpy::kBool) RequireNumeric(op, in[0]);
        const double s = NumberAttr(op, attrs, "scalar", 1.0);
        const void* x = InDType(op, ctx, in, meet)[0];
        const cudaStream_t stream = StreamOf(ctx);
        CheckCuda(
            rule == Rule::kCompare
                ? LaunchCompare(f, meet, out[0].size(), x, nullptr, s, reverse,
                                nullptr, out[0].data<void>(), req[0], stream)
                : LaunchScalar(f, reverse, meet, out[0].size(), x, s,
                               out[0].data<void>(), req[0], stream),
            op);
      });
}

// The float functions: integer or bool data converted to the output's
// float dtype first.
void RegisterUnary(mxplugin::Plugin& plugin, const std::string& op, Unary u) {
  RegisterGpuKernel(
      plugin, op,
      [op, u](const KernelContext& ctx, const Attrs&, Tensors in,
              const int32_t* req, Tensors out) {
        RequireFloat(op, out[0]);
        const int dtype = out[0].dtype();
        CheckCuda(
            LaunchUnary(u, dtype, out[0].size(), InDType(op, ctx, in, dtype)[0],
                        out[0].data<void>(), req[0], StreamOf(ctx)),
            op);
      });
}

}  // namespace

void RegisterNumpyOps(mxplugin::Plugin& plugin) {
  const std::pair<const char*, Binary> arithmetic[] = {
      {"add", Binary::kAdd},      {"subtract", Binary::kSub},
      {"multiply", Binary::kMul}, {"true_divide", Binary::kDiv},
      {"mod", Binary::kMod},      {"power", Binary::kPower},
      {"maximum", Binary::kMax},  {"minimum", Binary::kMin}};
  for (const auto& [name, f] : arithmetic) {
    const std::string n = name;
    RegisterBinary(plugin, "_npi_" + n, f, Rule::kArithmetic);
    RegisterScalar(plugin, "_npi_" + n + "_scalar", f, false,
                   Rule::kArithmetic);
  }
  for (const auto& [name, f] :
       {std::pair<const char*, Binary>{"rsubtract", Binary::kSub},
        {"rtrue_divide", Binary::kDiv},
        {"rmod", Binary::kMod},
        {"rpower", Binary::kPower}}) {
    RegisterScalar(plugin, std::string("_npi_") + name + "_scalar", f, true,
                   Rule::kArithmetic);
  }
  const std::pair<const char*, Binary> compare[] = {
      {"equal", Binary::kEq},   {"not_equal", Binary::kNe},
      {"greater", Binary::kGt}, {"greater_equal", Binary::kGe},
      {"less", Binary::kLt},    {"less_equal", Binary::kLe}};
  for (const auto& [name, f] : compare) {
    const std::string n = name;
    RegisterBinary(plugin, "_npi_" + n, f, Rule::kCompare);
    RegisterScalar(plugin, "_npi_" + n + "_scalar", f, false, Rule::kCompare);
  }
  const std::pair<const char*, Unary> float_functions[] = {
      {"exp", Unary::kExp},         {"log", Unary::kLog},
      {"log2", Unary::kLog2},       {"log10", Unary::kLog10},
      {"log1p", Unary::kLog1p},     {"expm1", Unary::kExpm1},
      {"sqrt", Unary::kSqrt},       {"cbrt", Unary::kCbrt},
      {"sin", Unary::kSin},         {"cos", Unary::kCos},
      {"tan", Unary::kTan},         {"arcsin", Unary::kArcsin},
      {"arccos", Unary::kArccos},   {"arctan", Unary::kArctan},
      {"sinh", Unary::kSinh},       {"cosh", Unary::kCosh},
      {"tanh", Unary::kTanh},       {"arcsinh", Unary::kArcsinh},
      {"arccosh", Unary::kArccosh}, {"arctanh", Unary::kArctanh},
      {"degrees", Unary::kDegrees}, {"radians", Unary::kRadians}};
  for (const auto& [name, u] : float_functions) {
    RegisterUnary(plugin, std::string("_npi_") + name, u);
  }
}

}  // namespace mx_cuda
