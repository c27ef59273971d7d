// The geometry of npx.index_add and npx.index_update (MXNet 2's
// _npx_index_add, _npx_index_update: out = a with a[ind] += val or
// a[ind] = val), shared by the CPU kernels and the CUDA plugin. `ind` of
// shape (K, N) names N positions in a's first K axes (shape (N,) means
// K = 1, a 0-d ind one position); position i is a "row" of a's trailing
// axes a.shape[K:] (`tail` elements), and val broadcasts NumPy-style to
// (N,) + a.shape[K:]: row i takes val's slice i.
//
//   IndexModifyGeometry g;
//   std::string why = IndexModifyGeometryOf({4, 5, 3}, {2, 6}, {6, 1}, &g);
//   // why empty; g.k 2, g.count 6, g.tail 3, g.rows 20
//   int64_t v = g.val_offset(i, t);  // val's element for row i, element t
#ifndef MXCORE_BACKENDS_COMMON_INDEX_MODIFY_GEOMETRY_H_
#define MXCORE_BACKENDS_COMMON_INDEX_MODIFY_GEOMETRY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace mx_math {

struct IndexModifyGeometry {
  int64_t k = 0;                   // index axes (ind's rows)
  int64_t count = 0;               // positions named (ind's columns)
  int64_t tail = 1;                // elements per position: prod(a.shape[k:])
  int64_t rows = 1;                // positions a has: prod(a.shape[:k])
  std::vector<int64_t> lead;       // a.shape[:k], the bounds of the indices
  std::vector<int64_t> tail_dims;  // a.shape[k:]
  // val's element steps (0 where val broadcasts): per position i, and per
  // axis of the tail.
  int64_t val_index_step = 0;
  std::vector<int64_t> val_tail_step;

  int64_t val_offset(int64_t i, int64_t t) const {
    int64_t at = i * val_index_step;
    for (size_t d = tail_dims.size(); d-- > 0;) {
      at += (t % tail_dims[d]) * val_tail_step[d];
      t /= tail_dims[d];
    }
    return at;
  }
};

// Fills *g for a, ind and val of these shapes; returns why they do not fit
// (empty when they do). The rules are MXNet 2's.
inline std::string IndexModifyGeometryOf(const std::vector<int64_t>& a,
                                         const std::vector<int64_t>& ind,
                                         std::vector<int64_t> val,
                                         IndexModifyGeometry* g) {
  if (a.empty()) return "a is 0-d (use add or assignment)";
  if (ind.size() > 2) {
    return "ind has " + std::to_string(ind.size()) +
           " axes but at most 2 ((K, N) or (N,)) are allowed";
  }
  g->k = ind.size() == 2 ? ind[0] : 1;
  g->count = ind.empty() ? 1 : ind.back();
  if (g->k < 1 || g->k > static_cast<int64_t>(a.size())) {
    return "ind names " + std::to_string(g->k) + " index axes but a has " +
           std::to_string(a.size());
  }
  const size_t k = static_cast<size_t>(g->k);
  g->lead.assign(a.begin(), a.begin() + k);
  g->tail_dims.assign(a.begin() + k, a.end());
  g->rows = 1;
  for (int64_t d : g->lead) g->rows *= d;
  g->tail = 1;
  for (int64_t d : g->tail_dims) g->tail *= d;
  if (val.empty()) val.push_back(1);
  // The shape val broadcasts to: (count,) + a.shape[k:].
  std::vector<int64_t> target{g->count};
  target.insert(target.end(), g->tail_dims.begin(), g->tail_dims.end());
  if (val.size() > target.size()) {
    return "val has " + std::to_string(val.size()) + " axes but at most " +
           std::to_string(target.size()) +
           " (positions, then a's axes after the indexed ones) are allowed";
  }
  std::vector<int64_t> step(target.size(), 0);
  int64_t run = 1;
  for (size_t j = val.size(), d = target.size(); j-- > 0;) {
    --d;
    if (val[j] != target[d] && val[j] != 1) {
      return "val's axis " + std::to_string(j) + " has length " +
             std::to_string(val[j]) + ", which does not broadcast to " +
             std::to_string(target[d]);
    }
    step[d] = val[j] == 1 ? 0 : run;
    run *= val[j];
  }
  g->val_index_step = step[0];
  g->val_tail_step.assign(step.begin() + 1, step.end());
  return "";
}

}  // namespace mx_math

#endif  // MXCORE_BACKENDS_COMMON_INDEX_MODIFY_GEOMETRY_H_
