#include "ndarray/reshape.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/error.h"

namespace mx {
namespace {

// Applies the codes left to right to `in`. `fail` throws with a reason.
template <typename Fail>
std::vector<int64_t> ApplyCodes(const std::vector<int64_t>& codes,
                                const std::vector<int64_t>& in, Fail fail) {
  std::vector<int64_t> out;
  const size_t nd = in.size();
  size_t src = 0;
  int infer_at = -1;
  // Codes are user input: every product is checked for int64 overflow.
  auto product = [&](absl::Span<const int64_t> dims) {
    const std::optional<int64_t> p = CheckedProduct(dims);
    if (!p) fail("the number of elements does not fit in int64");
    return *p;
  };
  auto take = [&](const char* code) {
    if (src >= nd) {
      fail(absl::StrCat("code ", code, " has no input dim left to use"));
    }
    return in[src++];
  };
  for (size_t i = 0; i < codes.size(); ++i) {
    const int64_t c = codes[i];
    if (c > 0) {
      out.push_back(c);
      ++src;
    } else if (c == 0) {
      out.push_back(take("0"));
    } else if (c == -1) {
      if (infer_at >= 0) fail("more than one -1");
      infer_at = static_cast<int>(out.size());
      out.push_back(1);
      ++src;
    } else if (c == -2) {
      while (src < nd) out.push_back(in[src++]);
    } else if (c == -3) {
      const int64_t a = take("-3");
      out.push_back(product({a, take("-3")}));
    } else if (c == -4) {
      if (i + 2 >= codes.size()) fail("-4 must be followed by two values");
      int64_t d0 = codes[i + 1], d1 = codes[i + 2];
      i += 2;
      const int64_t dim = take("-4");
      if (d0 == -1 && d1 == -1) fail("-4 is followed by two -1");
      if (d0 < -1 || d0 == 0 || d1 < -1 || d1 == 0) {
        fail("-4 must be followed by positive values or one -1");
      }
      if (d0 == -1) d0 = dim % d1 == 0 ? dim / d1 : -1;
      if (d1 == -1) d1 = dim % d0 == 0 ? dim / d0 : -1;
      if (d0 < 0 || d1 < 0 || product({d0, d1}) != dim) {
        fail(absl::StrCat("-4 cannot split dim ", dim, " into (", codes[i - 1],
                          ",", codes[i], ")"));
      }
      out.push_back(d0);
      out.push_back(d1);
    } else {
      fail(absl::StrCat("unknown code ", c));
    }
  }
  const int64_t total = product(in);
  if (infer_at >= 0) {
    // out[infer_at] is 1 until inferred.
    const int64_t known = product(out);
    if (known == 0 || total % known != 0) {
      fail(absl::StrCat("cannot infer -1 from ", total, " elements"));
    }
    out[infer_at] = total / known;
  }
  const int64_t size = product(out);
  if (size != total) {
    fail(absl::StrCat("the sizes differ (", total, " vs ", size, ")"));
  }
  return out;
}

}  // namespace

TShape InferReshape(const TShape& in, const TShape& codes, bool reverse,
                    const std::string& who) {
  auto fail = [&](const std::string& why) {
    throw ShapeError(absl::StrCat(
        who, ": cannot reshape ", in.ToString(), " to shape=", codes.ToString(),
        reverse ? " with reverse=True" : "", ": ", why));
  };
  if (!in.is_known()) fail("the input shape is not known");
  if (!codes.ndim_known()) fail("the target is unknown");
  std::vector<int64_t> c(codes.begin(), codes.end());
  std::vector<int64_t> dims(in.begin(), in.end());
  if (!reverse) return TShape(ApplyCodes(c, dims, fail));
  // Right to left: reverse the dims and the codes, keeping each "-4 a b"
  // group together (its values swapped, since the result is reversed back).
  std::vector<std::vector<int64_t>> groups;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] == -4 && i + 2 < c.size()) {
      groups.push_back({-4, c[i + 2], c[i + 1]});
      i += 2;
    } else {
      groups.push_back({c[i]});
    }
  }
  std::vector<int64_t> rcodes;
  for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
    rcodes.insert(rcodes.end(), g->begin(), g->end());
  }
  std::reverse(dims.begin(), dims.end());
  std::vector<int64_t> out = ApplyCodes(rcodes, dims, fail);
  std::reverse(out.begin(), out.end());
  return TShape(out);
}

}  // namespace mx
