// Fuzz target: operator attributes, through Symbol::Create + InferShape /
// InferType (+ the ToJSON round trip) and through imperative::Invoke on
// small arrays.
//
// Input encoding (ByteReader, fuzz/fuzz_util.h):
//   flags    u8   bit 0: wild mode, bit 1: training mode, bit 2: autograd
//                 (record + Backward, bounded mode only)
//   op       a string (length byte + bytes): a registered op's name, or
//                 else hashed to pick one (FNV-1a mod the sorted registry)
//   ninputs  u8   % 6
//   each input: dtype u8 % 8, rank u8 % 6, rank x dim (u8 < 192: % 6,
//                 else % 64)
//   nattrs   u8   % 7
//   each attr: key (u8 >= 240: a raw string, else a known key), value (below)
//   the rest: bytes the input arrays are filled with (cyclically)
//
// Sizes are bounded by construction, so nothing here can legitimately ask
// for more than a few MiB: input arrays have rank <= 5, dims <= 63 and at most
// 64 elements; in bounded mode (the default) every number an attribute gets
// is in [-4, 5] (or a float from a short list without huge values), and a
// tuple's positive entries multiply to at most 4096, so any output
// (tile/Pad/Deconvolution/_zeros/one_hot/_arange...) stays small. Wild mode
// also feeds huge or malformed values (2^31-1, 2^62, 1e300, nan, raw bytes)
// and then only creates the symbol and infers shapes and types, which
// allocate nothing per element; it does not Invoke. tools/fuzz.sh runs this
// target with -malloc_limit_mb=64 so an allocation beyond the bound is a
// finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/symbol_checks.h"
#include "fuzz/vocab.h"
#include "graph/pass.h"
#include "graph/symbol.h"
#include "imperative/imperative.h"
#include "ndarray/ndarray.h"

namespace {

using mx::fuzz::ByteReader;

constexpr int64_t kMaxInputElements = 64;
constexpr int64_t kMaxTupleProduct = 4096;
// A dim byte from here on is a dim up to 63 (still within
// kMaxInputElements): RNN's packed parameter vector needs 16-48.
constexpr uint8_t kLongDim = 192;

std::string SmallInt(ByteReader* in) {
  return std::to_string(in->Range(-4, 5));
}

std::string SmallFloat(ByteReader* in) {
  static const char* const kFloats[] = {"0",   "1",    "-1",   "0.5", "2",
                                        "3.5", "-2.5", "5",    "-5",  "nan",
                                        "inf", "-inf", "1e-3", "-0",  "0.25"};
  return kFloats[in->U8() % (sizeof(kFloats) / sizeof(kFloats[0]))];
}

// "(a,b,...)" with up to 8 entries in [-4, 5] (or None), positive entries
// multiplying to at most kMaxTupleProduct.
std::string SmallTuple(ByteReader* in, bool allow_none) {
  int n = in->U8() % 9;
  int64_t product = 1;
  std::string t = in->Bool() ? "(" : "[";
  for (int i = 0; i < n; ++i) {
    if (i) t += ",";
    if (allow_none && in->U8() % 4 == 0) {
      t += "None";
      continue;
    }
    int v = in->Range(-4, 5);
    if (v > 1 && product * v > kMaxTupleProduct) v = 1;
    if (v > 1) product *= v;
    t += std::to_string(v);
  }
  if (n == 1 && in->Bool()) t += ",";
  return t + (t[0] == '(' ? ")" : "]");
}

std::string BoundedValue(ByteReader* in) {
  switch (in->U8() % 6) {
    case 0:
    case 1:
      return mx::fuzz::AttrWords()[in->U8() % mx::fuzz::AttrWords().size()];
    case 2:
      return SmallInt(in);
    case 3:
      return SmallTuple(in, /*allow_none=*/false);
    case 4:
      return SmallFloat(in);
    default:
      return SmallTuple(in, /*allow_none=*/true);
  }
}

std::string WildValue(ByteReader* in) {
  switch (in->U8() % 4) {
    case 0:
      return mx::fuzz::WildValues()[in->U8() % mx::fuzz::WildValues().size()];
    case 1:
      return in->String(24);
    default:
      return BoundedValue(in);
  }
}

struct Input {
  mx::TShape shape;
  mx::DType dtype;
};

void FillArray(mx::NDArray* a, const std::string& bytes) {
  const size_t nbytes =
      static_cast<size_t>(a->shape().Size()) * mx::DTypeSize(a->dtype());
  std::vector<uint8_t> buf(nbytes);
  for (size_t i = 0; i < nbytes; ++i) {
    buf[i] = bytes.empty() ? static_cast<uint8_t>(i * 37 + 11)
                           : static_cast<uint8_t>(bytes[i % bytes.size()]);
  }
  if (a->dtype() == mx::DType::kBool) {
    for (auto& b : buf) b &= 1;
  }
  a->SyncCopyFromCPU(buf.data(), static_cast<size_t>(a->shape().Size()));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mx::fuzz::InitEnvironment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  const uint8_t flags = in.U8();
  const bool wild = flags & 1;
  const bool training = flags & 2;
  const bool record = (flags & 4) && !wild;
  const auto& ops = mx::fuzz::OpNames();
  std::string op = in.String(40);
  if (mx::OpRegistry::Get()->Find(op) == nullptr) {
    uint32_t h = 2166136261u;
    for (char c : op) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
    op = ops[h % ops.size()];
  }

  std::vector<Input> inputs(in.U8() % 6);
  for (Input& x : inputs) {
    x.dtype = static_cast<mx::DType>(in.U8() % 8);
    int rank = in.U8() % 6;
    std::vector<int64_t> dims;
    int64_t product = 1;
    for (int d = 0; d < rank; ++d) {
      const uint8_t b = in.U8();
      int64_t v = b < kLongDim ? b % 6 : b % 64;
      if (v > 1 && product * v > kMaxInputElements) v = 1;
      if (v > 0) product *= v;
      dims.push_back(v);
    }
    x.shape = mx::TShape(dims);
  }
  mx::AttrDict attrs;
  int nattrs = in.U8() % 7;
  for (int i = 0; i < nattrs; ++i) {
    uint8_t k = in.U8();
    std::string key =
        k >= 240 ? in.String(16)
                 : mx::fuzz::AttrKeys()[k % mx::fuzz::AttrKeys().size()];
    attrs[key] = wild ? WildValue(&in) : BoundedValue(&in);
  }
  const std::string fill = in.Rest();

  // Symbol::Create + shape/type inference + JSON round trip.
  mx::fuzz::Guard([&] {
    std::vector<mx::Symbol> vars;
    for (size_t i = 0; i < inputs.size(); ++i) {
      vars.push_back(mx::Symbol::Variable("in" + std::to_string(i),
                                          inputs[i].shape, inputs[i].dtype));
    }
    mx::Symbol s = mx::Symbol::Create(op, vars, attrs, "node");
    mx::fuzz::Guard([&] {
      mx::ApplyPasses(mx::Graph(s), {"InferShape", "InferType"});
    });
    mx::fuzz::Guard([&] { s.ListOutputNames(); });
    std::string json;
    mx::fuzz::Guard([&] { json = s.ToJSON(); });
    if (!json.empty()) mx::fuzz::CheckSymbolJSON(json);
  });
  if (wild) return 0;

  // Invoke on small arrays (errors from kernels surface at the wait).
  mx::fuzz::Guard([&] {
    mx::imperative::TrainingScope train(training);
    std::vector<mx::NDArray> arrays;
    for (const Input& x : inputs) {
      arrays.emplace_back(x.shape, mx::Context::CPU(), x.dtype,
                          /*delay_alloc=*/false);
      FillArray(&arrays.back(), fill);
    }
    std::vector<mx::NDArray> outputs;
    if (record) {
      for (mx::NDArray& a : arrays) {
        mx::fuzz::Guard([&] { mx::autograd::AttachGrad(&a); });
      }
      mx::autograd::RecordScope rec(training);
      outputs = mx::imperative::Invoke(op, arrays, attrs);
    } else {
      outputs = mx::imperative::Invoke(op, arrays, attrs);
    }
    for (const mx::NDArray& o : outputs) o.WaitToRead();
    if (record && !outputs.empty()) {
      mx::fuzz::Guard([&] {
        mx::autograd::Backward({outputs[0]});
        for (const mx::NDArray& a : arrays) {
          if (!a.grad().is_none()) a.grad().WaitToRead();
        }
      });
    }
  });
  return 0;
}
