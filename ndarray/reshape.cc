#include "ndarray/reshape.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/error.h"

namespace mx {
namespace {

// Codes of NumPy's dialects with no legacy spelling (out of the range the
// legacy codes are checked against): a literal 0-length dim, and
// "drop the next input dim, which must be 1".
constexpr int64_t kLiteralZero = std::numeric_limits<int64_t>::min();
constexpr int64_t kDropOne = kLiteralZero + 1;

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
    if (c > 0 || c == kLiteralZero) {
      out.push_back(c > 0 ? c : 0);
      ++src;
    } else if (c == kDropOne) {
      const int64_t dim = take("-3");
      if (dim != 1) fail(absl::StrCat("-3 drops input dim ", dim, ", not 1"));
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

// The legacy codes `c` applied to `in`, from the right when `reverse`.
template <typename Fail>
TShape Apply(std::vector<int64_t> c, const TShape& in, bool reverse,
             Fail fail) {
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

// Throws ShapeError "<who>: cannot reshape <in> to <attr>=<codes>: <why>".
auto Failer(const std::string& who, const TShape& in, const char* attr,
            const TShape& codes, bool reverse) {
  return [&who, &in, attr, &codes, reverse](const std::string& why) {
    throw ShapeError(absl::StrCat(
        who, ": cannot reshape ", in.ToString(), " to ", attr, "=",
        codes.ToString(), reverse ? " with reverse=True" : "", ": ", why));
  };
}

}  // namespace

TShape InferReshape(const TShape& in, const TShape& codes, bool reverse,
                    const std::string& who) {
  auto fail = Failer(who, in, "shape", codes, reverse);
  if (!in.is_known()) fail("the input shape is not known");
  if (!codes.ndim_known()) fail("the target is unknown");
  std::vector<int64_t> c(codes.begin(), codes.end());
  for (int64_t v : c) {
    if (v < -4) fail(absl::StrCat("unknown code ", v));
  }
  return Apply(c, in, reverse, fail);
}

TShape InferNumpyXReshape(const TShape& in, const TShape& codes, bool reverse,
                          const std::string& who) {
  auto fail = Failer(who, in, "newshape", codes, reverse);
  if (!in.is_known()) fail("the input shape is not known");
  if (!codes.ndim_known()) fail("the target is unknown");
  // npx's codes in the legacy spelling: -2 copy (0), -4 copy the rest
  // (-2), -5 merge (-3), -6 split (-4, its two values kept as given).
  std::vector<int64_t> c;
  for (int i = 0; i < codes.ndim(); ++i) {
    const int64_t v = codes[i];
    switch (v) {
      case -1:
        c.push_back(-1);
        break;
      case -2:
        c.push_back(0);
        break;
      case -3:
        c.push_back(kDropOne);
        break;
      case -4:
        c.push_back(-2);
        break;
      case -5:
        c.push_back(-3);
        break;
      case -6:
        if (i + 2 >= codes.ndim()) fail("-6 must be followed by two values");
        c.insert(c.end(), {-4, codes[i + 1], codes[i + 2]});
        i += 2;
        break;
      default:
        if (v < 0) fail(absl::StrCat("unknown code ", v));
        c.push_back(v == 0 ? kLiteralZero : v);
    }
  }
  return Apply(c, in, reverse, fail);
}

TShape InferNumpyReshape(const TShape& in, const TShape& newshape,
                         const std::string& who) {
  auto fail = Failer(who, in, "newshape", newshape, false);
  if (!in.is_known()) fail("the input shape is not known");
  if (!newshape.ndim_known()) fail("the target is unknown");
  std::vector<int64_t> c;
  for (int64_t v : newshape) {
    if (v < -1) fail(absl::StrCat(v, " is not a size (only -1 is inferred)"));
    c.push_back(v == 0 ? kLiteralZero : v);
  }
  return Apply(c, in, false, fail);
}

}  // namespace mx
