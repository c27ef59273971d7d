#include "ndarray/shape.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace mx {

std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> dims,
                                      int64_t init) {
  int64_t product = init;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(product, d, &product)) return std::nullopt;
  }
  return product;
}

int64_t TShape::Size() const {
  if (!is_known()) return -1;
  return ProdDims(0, ndim_);
}

int64_t TShape::ProdDims(int begin, int end) const {
  const std::optional<int64_t> size =
      CheckedProduct(absl::MakeConstSpan(dims_).subspan(begin, end - begin));
  if (!size) {
    throw ShapeError(absl::StrCat("shape ", ToString(),
                                  " has more elements than fit in int64"));
  }
  return *size;
}

int TShape::CheckAxis(int axis, const char* what) const {
  const int wrapped = axis < 0 ? axis + ndim_ : axis;
  if (wrapped < 0 || wrapped >= ndim_) {
    throw ShapeError(absl::StrCat(what, ": axis ", axis,
                                  " is out of range for shape ", ToString()));
  }
  return wrapped;
}

std::string TShape::ToString() const {
  if (ndim_ < 0) return "<unknown>";
  std::string out = "(";
  for (int i = 0; i < ndim_; ++i) {
    if (i > 0) out += ",";
    absl::StrAppend(&out, dims_[i]);
  }
  if (ndim_ == 1) out += ",";
  out += ")";
  return out;
}

TShape TShape::Parse(const std::string& text) {
  std::vector<int64_t> dims;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
  };
  auto fail = [&]() -> TShape {
    throw InvalidArgument(absl::StrCat("cannot parse shape \"", text,
                                       "\"; expected e.g. (2,3), [2,3] or 2"));
  };
  skip_space();
  const bool bracketed = i < text.size() && (text[i] == '(' || text[i] == '[');
  const char close = bracketed && text[i] == '[' ? ']' : ')';
  if (bracketed) ++i;
  while (true) {
    skip_space();
    if (i >= text.size()) break;
    if (text[i] == close) break;
    const char* start = text.c_str() + i;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(start, &end, 10);
    // strtoll saturates out-of-range values; refuse them instead.
    if (end == start || errno == ERANGE) return fail();
    dims.push_back(v);
    i += end - start;
    skip_space();
    if (i < text.size() && text[i] == ',') ++i;
  }
  if (bracketed) {
    if (i >= text.size() || text[i] != close) return fail();
    ++i;
  }
  skip_space();
  if (i != text.size() || (!bracketed && dims.empty())) return fail();
  return TShape(dims);
}

std::ostream& operator<<(std::ostream& os, const TShape& shape) {
  return os << shape.ToString();
}

bool MergeShape(TShape* dst, const TShape& src) {
  if (!src.ndim_known()) return true;
  if (!dst->ndim_known()) {
    *dst = src;
    return true;
  }
  if (dst->ndim() != src.ndim()) return false;
  for (int i = 0; i < src.ndim(); ++i) {
    if (src[i] < 0) continue;
    if ((*dst)[i] < 0) {
      (*dst)[i] = src[i];
    } else if ((*dst)[i] != src[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace mx
