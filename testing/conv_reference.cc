#include "testing/conv_reference.h"

#include <algorithm>
#include <limits>

namespace mx {
namespace testing {

Dims ConvOut(const ConvND& p) {
  Dims out;
  for (size_t a = 0; a < p.kernel.size(); ++a) {
    const int64_t span = p.dilate[a] * (p.kernel[a] - 1) + 1;
    out.push_back((p.data[2 + a] + 2 * p.pad[a] - span) / p.stride[a] + 1);
  }
  return out;
}

std::vector<double> RefConv(const ConvND& p, const std::vector<double>& x,
                            const std::vector<double>& w,
                            const std::vector<double>& b) {
  const size_t r = p.kernel.size();
  const int64_t c = p.data[1], cg = c / p.groups, fg = p.filters / p.groups;
  Dims out_shape{p.data[0], p.filters};
  for (int64_t o : ConvOut(p)) out_shape.push_back(o);
  Dims wshape{p.filters, cg};
  wshape.insert(wshape.end(), p.kernel.begin(), p.kernel.end());
  Dims window{cg};
  window.insert(window.end(), p.kernel.begin(), p.kernel.end());
  std::vector<double> y;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& o) {
    double s = b.empty() ? 0.0 : b[o[1]];
    ForEachIndex(window, [&](const std::vector<int64_t>& k) {
      std::vector<int64_t> xi{o[0], (o[1] / fg) * cg + k[0]};
      for (size_t a = 0; a < r; ++a) {
        const int64_t i =
            o[2 + a] * p.stride[a] - p.pad[a] + k[1 + a] * p.dilate[a];
        if (i < 0 || i >= p.data[2 + a]) return;
        xi.push_back(i);
      }
      std::vector<int64_t> wi{o[1]};
      wi.insert(wi.end(), k.begin(), k.end());
      s += x[Ravel(xi, TShape(p.data))] * w[Ravel(wi, TShape(wshape))];
    });
    y.push_back(s);
  });
  return y;
}

Dims PoolOut(const PoolND& p) {
  Dims out;
  for (size_t a = 0; a < p.kernel.size(); ++a) {
    const int64_t ext = p.data[2 + a] + 2 * p.pad[a] - p.kernel[a];
    out.push_back((p.full ? ext + p.stride[a] - 1 : ext) / p.stride[a] + 1);
  }
  return out;
}

std::vector<double> RefPool(const PoolND& p, const std::string& type,
                            bool include_pad, const std::vector<double>& x) {
  const size_t r = p.kernel.size();
  Dims out_shape{p.data[0], p.data[1]};
  for (int64_t o : PoolOut(p)) out_shape.push_back(o);
  std::vector<double> y;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& o) {
    double sum = 0, best = -std::numeric_limits<double>::infinity();
    int64_t inside = 0, padded = 0;
    ForEachIndex(p.kernel, [&](const std::vector<int64_t>& k) {
      std::vector<int64_t> xi{o[0], o[1]};
      bool in_pad = true, in_data = true;
      for (size_t a = 0; a < r; ++a) {
        const int64_t i = o[2 + a] * p.stride[a] - p.pad[a] + k[a];
        in_pad = in_pad && i < p.data[2 + a] + p.pad[a];
        in_data = in_data && i >= 0 && i < p.data[2 + a];
        xi.push_back(i);
      }
      padded += in_pad;
      if (!in_data) return;
      const double v = x[Ravel(xi, TShape(p.data))];
      sum += v;
      best = std::max(best, v);
      ++inside;
    });
    if (type == "max") {
      y.push_back(inside > 0 ? best : 0.0);
    } else if (type == "sum") {
      y.push_back(sum);
    } else {
      const int64_t count = include_pad ? padded : inside;
      y.push_back(count > 0 ? sum / count : 0.0);
    }
  });
  return y;
}

}  // namespace testing
}  // namespace mx
