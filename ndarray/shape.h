// TShape: the shape of an array, possibly partly unknown.
//
// The rank may be unknown (ndim() == -1), and each dimension may be unknown
// (-1). Shape inference fills unknowns in; a shape with neither is "known".
// A rank-0 shape is a scalar with one element.
//
//   mx::TShape s{2, 3};          // (2,3): known, Size() == 6
//   mx::TShape p{-1, 3};         // (-1,3): rank known, first dim unknown
//   mx::TShape u;                // unknown rank
//   mx::TShape::Scalar();        // ()
#ifndef MXCORE_NDARRAY_SHAPE_H_
#define MXCORE_NDARRAY_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace mx {

class TShape {
 public:
  using Dims = absl::InlinedVector<int64_t, 6>;

  // Unknown rank.
  TShape() = default;
  TShape(const TShape&) = default;
  // Copy-constructs and moves: both copy the inline dims with one memcpy,
  // where InlinedVector's copy assignment goes element by element. The
  // rank is set last, so a failed copy leaves the shape as it was.
  TShape& operator=(const TShape& other) {
    Dims dims(other.dims_);
    dims_ = std::move(dims);
    ndim_ = other.ndim_;
    return *this;
  }
  // A moved-from shape has unknown rank (its dims are gone).
  TShape(TShape&& other) noexcept
      : ndim_(other.ndim_), dims_(std::move(other.dims_)) {
    other.ndim_ = -1;
  }
  TShape& operator=(TShape&& other) noexcept {
    if (this != &other) {
      dims_ = std::move(other.dims_);
      ndim_ = other.ndim_;
      other.ndim_ = -1;
    }
    return *this;
  }
  TShape(std::initializer_list<int64_t> dims)
      : ndim_(dims.size()), dims_(dims) {}
  explicit TShape(const std::vector<int64_t>& dims)
      : ndim_(static_cast<int>(dims.size())), dims_(dims.begin(), dims.end()) {}
  template <typename It>
  TShape(It begin, It end) : dims_(begin, end) {
    ndim_ = static_cast<int>(dims_.size());
  }
  // Known rank, every dimension set to `value` (-1: unknown).
  static TShape Filled(int ndim, int64_t value) {
    TShape s;
    s.ndim_ = ndim;
    s.dims_.assign(ndim, value);
    return s;
  }
  static TShape Scalar() { return Filled(0, 0); }

  // -1 when the rank is unknown.
  int ndim() const { return ndim_; }
  bool ndim_known() const { return ndim_ >= 0; }
  // Rank and all dimensions known.
  bool is_known() const {
    if (ndim_ < 0) return false;
    for (int64_t d : dims_) {
      if (d < 0) return false;
    }
    return true;
  }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + dims_.size(); }
  const Dims& dims() const { return dims_; }

  // Number of elements; -1 unless known. Throws ShapeError when the count
  // does not fit in int64_t.
  int64_t Size() const;
  // Product of dims [begin, end); REQUIRES known dims in that range. Throws
  // ShapeError on overflow.
  int64_t ProdDims(int begin, int end) const;
  // Index of `axis` after wrapping negatives; throws ShapeError naming `what`
  // when it is out of range.
  int CheckAxis(int axis, const char* what) const;

  // "(2,3)", "(-1,3)", "()" for a scalar, "<unknown>" for unknown rank.
  std::string ToString() const;
  // Parses "(2,3)", "[2, 3]", "(2,)", "()" or "2". Throws InvalidArgument,
  // also for a dimension outside int64_t.
  static TShape Parse(const std::string& text);

  // A plain loop: ranks are small, and InlinedVector's == calls memcmp
  // (a measurable share of dispatching a small op).
  friend bool operator==(const TShape& a, const TShape& b) {
    if (a.ndim_ != b.ndim_ || a.dims_.size() != b.dims_.size()) return false;
    for (size_t i = 0; i < a.dims_.size(); ++i) {
      if (a.dims_[i] != b.dims_[i]) return false;
    }
    return true;
  }
  friend bool operator!=(const TShape& a, const TShape& b) { return !(a == b); }

 private:
  int ndim_ = -1;
  Dims dims_;
};

std::ostream& operator<<(std::ostream& os, const TShape& shape);

// init * dims[0] * dims[1] * ..., or nullopt when a step overflows int64_t.
// The one overflow-checked dimension product: TShape::Size, Reshape's
// codes and the file loaders (params, IDX) use it.
std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> dims,
                                      int64_t init = 1);

// Fills unknowns of `*dst` from `src` (and the rank); returns false when the
// two contradict (a known dim differs, or ranks differ).
bool MergeShape(TShape* dst, const TShape& src);

}  // namespace mx

#endif  // MXCORE_NDARRAY_SHAPE_H_
