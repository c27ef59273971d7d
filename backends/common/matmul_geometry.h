// np.matmul's geometry (MXNet 2's _npi_matmul), shared by the CPU kernel
// and the CUDA plugin: the last two axes are matrices, the axes before
// them batch dimensions that broadcast NumPy-style; a 1-D first operand
// is a row (1, k) and a 1-D second one a column (k, 1), whose added axis
// the result drops. 0-d operands are refused, as NumPy does.
//
//   MatmulGeometry g;
//   std::string why = MatmulGeometryOf({2, 1, 3, 4}, {5, 4, 6}, &g);
//   // why empty; g.out_shape (2, 5, 3, 6), g.m 3, g.k 4, g.n 6
//   for (int64_t i = 0; i < g.batch_count(); ++i) use(g.a_index(i), ...);
#ifndef MXCORE_BACKENDS_COMMON_MATMUL_GEOMETRY_H_
#define MXCORE_BACKENDS_COMMON_MATMUL_GEOMETRY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace mx_math {

struct MatmulGeometry {
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> batch;              // the broadcast batch dims
  std::vector<int64_t> a_step, b_step;     // per batch dim, in matrices
  std::vector<int64_t> out_shape;          // NumPy's result shape
  int64_t a_matrices = 1, b_matrices = 1;  // matrices stored in a and b

  int64_t batch_count() const {
    int64_t c = 1;
    for (int64_t d : batch) c *= d;
    return c;
  }
  // The matrix of a (and of b) that output matrix i reads.
  int64_t a_index(int64_t i) const { return Index(i, a_step); }
  int64_t b_index(int64_t i) const { return Index(i, b_step); }

 private:
  int64_t Index(int64_t i, const std::vector<int64_t>& step) const {
    int64_t at = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      at += (i % batch[d]) * step[d];
      i /= batch[d];
    }
    return at;
  }
};

// Fills *g for operands of shapes a and b; returns why they do not fit
// (empty when they do).
inline std::string MatmulGeometryOf(std::vector<int64_t> a,
                                    std::vector<int64_t> b, MatmulGeometry* g) {
  if (a.empty() || b.empty()) {
    return "matmul does not take 0-d operands (use multiply)";
  }
  const bool a_row = a.size() == 1, b_col = b.size() == 1;
  if (a_row) a.insert(a.begin(), 1);
  if (b_col) b.push_back(1);
  g->m = a[a.size() - 2];
  g->k = a[a.size() - 1];
  g->n = b[b.size() - 1];
  if (b[b.size() - 2] != g->k) {
    return "the contracted axes differ: " + std::to_string(g->k) + " and " +
           std::to_string(b[b.size() - 2]);
  }
  const size_t na = a.size() - 2, nb = b.size() - 2;
  const size_t nd = na > nb ? na : nb;
  g->batch.assign(nd, 1);
  g->a_step.assign(nd, 0);
  g->b_step.assign(nd, 0);
  int64_t a_run = 1, b_run = 1;
  for (size_t d = nd; d-- > 0;) {
    const int64_t da = d + na >= nd ? a[d + na - nd] : 1;
    const int64_t db = d + nb >= nd ? b[d + nb - nd] : 1;
    if (da != db && da != 1 && db != 1) {
      return "the batch dimensions " + std::to_string(da) + " and " +
             std::to_string(db) + " do not broadcast";
    }
    g->batch[d] = da == 1 ? db : da;
    g->a_step[d] = da == 1 ? 0 : a_run;
    g->b_step[d] = db == 1 ? 0 : b_run;
    a_run *= da;
    b_run *= db;
  }
  g->a_matrices = a_run;
  g->b_matrices = b_run;
  g->out_shape = g->batch;
  if (!a_row) g->out_shape.push_back(g->m);
  if (!b_col) g->out_shape.push_back(g->n);
  return "";
}

}  // namespace mx_math

#endif  // MXCORE_BACKENDS_COMMON_MATMUL_GEOMETRY_H_
