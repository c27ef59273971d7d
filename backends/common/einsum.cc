#include "backends/common/einsum.h"

#include <algorithm>
#include <map>

namespace mx_math {
namespace {

// One operand's (or the output's) subscripts: its letters and where the
// ellipsis sits (-1 when it has none).
struct Term {
  std::string letters;
  int ellipsis = -1;  // index in `letters` the ellipsis axes precede
};

bool IsLabel(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

std::string ParseTerm(const std::string& text, const std::string& what,
                      Term* t) {
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "...") == 0) {
      if (t->ellipsis >= 0) return what + " has two ellipses";
      t->ellipsis = static_cast<int>(t->letters.size());
      i += 3;
    } else if (IsLabel(text[i])) {
      t->letters.push_back(text[i++]);
    } else {
      return what + " holds '" + std::string(1, text[i]) +
             "', which is neither a letter nor part of '...'";
    }
  }
  return "";
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char ch : s) {
    if (ch == sep) {
      parts.emplace_back();
    } else {
      parts.back().push_back(ch);
    }
  }
  return parts;
}

// Row-major strides of `shape`.
std::vector<int64_t> StridesOf(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// Adds factor f (axes `labels` of `shape`) to c.
void AddFactor(const std::vector<int>& labels,
               const std::vector<int64_t>& shape, EinsumContraction* c) {
  const int f = c->num_factors++;
  for (int l = 0; l < c->num_labels; ++l) c->stride[f][l] = 0;
  const std::vector<int64_t> s = StridesOf(shape);
  for (size_t a = 0; a < labels.size(); ++a) {
    if (shape[a] != 1) c->stride[f][labels[a]] += s[a];
  }
}

EinsumContraction Base(const EinsumPlan& plan, const std::vector<int>& labels,
                       const std::vector<int64_t>& dims) {
  EinsumContraction c;
  c.num_labels = static_cast<int>(plan.label_size.size());
  for (int l = 0; l < c.num_labels; ++l) c.label_size[l] = plan.label_size[l];
  c.target_ndim = static_cast<int>(labels.size());
  for (int a = 0; a < c.target_ndim; ++a) {
    c.target_label[a] = labels[a];
    c.target_dim[a] = dims[a];
  }
  return c;
}

}  // namespace

std::string EinsumPlanOf(const std::string& subscripts,
                         const std::vector<std::vector<int64_t>>& shapes,
                         EinsumPlan* plan) {
  std::string text;
  for (char ch : subscripts) {
    if (ch != ' ') text.push_back(ch);
  }
  const size_t arrow = text.find("->");
  const bool explicit_output = arrow != std::string::npos;
  const std::string inputs = explicit_output ? text.substr(0, arrow) : text;
  const std::vector<std::string> parts = Split(inputs, ',');
  if (parts.size() != shapes.size()) {
    return "the subscripts name " + std::to_string(parts.size()) +
           " operands but there are " + std::to_string(shapes.size());
  }
  if (shapes.size() > static_cast<size_t>(kMaxEinsumFactors)) {
    return "at most " + std::to_string(kMaxEinsumFactors) +
           " operands are supported";
  }
  std::vector<Term> terms(parts.size());
  int ellipsis_ndim = 0;  // the broadcast ellipsis axes
  for (size_t k = 0; k < parts.size(); ++k) {
    const std::string what = "operand " + std::to_string(k) + "'s subscripts";
    std::string why = ParseTerm(parts[k], what, &terms[k]);
    if (!why.empty()) return why;
    const int ndim = static_cast<int>(shapes[k].size());
    if (ndim > kMaxEinsumRank) {
      return "operand " + std::to_string(k) + " has " + std::to_string(ndim) +
             " axes but at most " + std::to_string(kMaxEinsumRank) +
             " are supported";
    }
    const int named = static_cast<int>(terms[k].letters.size());
    const int covered = ndim - named;
    if (covered < 0 || (terms[k].ellipsis < 0 && covered != 0)) {
      return what + " '" + parts[k] + "' name " + std::to_string(named) +
             " axes but operand " + std::to_string(k) + " has " +
             std::to_string(ndim);
    }
    ellipsis_ndim = std::max(ellipsis_ndim, covered);
  }
  // Label ids: the ellipsis axes first, then the letters as they appear.
  std::map<char, int> id;
  std::vector<int> uses;  // per letter label, occurrences in the inputs
  std::string order;      // letters by id
  for (const Term& t : terms) {
    for (char ch : t.letters) {
      if (id.emplace(ch, ellipsis_ndim + static_cast<int>(order.size()))
              .second) {
        order.push_back(ch);
        uses.push_back(0);
      }
      ++uses[id[ch] - ellipsis_ndim];
    }
  }
  const int num_labels = ellipsis_ndim + static_cast<int>(order.size());
  if (num_labels > kMaxEinsumLabels) {
    return "the subscripts use " + std::to_string(num_labels) +
           " labels (ellipsis axes included) but at most " +
           std::to_string(kMaxEinsumLabels) + " are supported";
  }
  plan->label_size.assign(num_labels, 1);
  plan->operand_labels.assign(shapes.size(), {});
  std::vector<bool> sized(num_labels, false);
  for (size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    const int ndim = static_cast<int>(shapes[k].size());
    const int covered = ndim - static_cast<int>(t.letters.size());
    std::vector<int>& labels = plan->operand_labels[k];
    for (int i = 0; i < static_cast<int>(t.letters.size()); ++i) {
      if (i == t.ellipsis) {
        for (int e = 0; e < covered; ++e) {
          labels.push_back(ellipsis_ndim - covered + e);
        }
      }
      labels.push_back(id[t.letters[i]]);
    }
    if (t.ellipsis == static_cast<int>(t.letters.size())) {
      for (int e = 0; e < covered; ++e) {
        labels.push_back(ellipsis_ndim - covered + e);
      }
    }
    for (int a = 0; a < ndim; ++a) {
      const int l = labels[a];
      const int64_t d = shapes[k][a];
      // A letter repeated in one operand takes a diagonal: equal lengths.
      for (int b = 0; b < a; ++b) {
        if (labels[b] == l && shapes[k][b] != d) {
          return "operand " + std::to_string(k) + " repeats '" +
                 std::string(1, order[l - ellipsis_ndim]) +
                 "' on axes of lengths " + std::to_string(shapes[k][b]) +
                 " and " + std::to_string(d);
        }
      }
      if (d == 1) continue;  // Broadcasts against any length.
      if (sized[l] && plan->label_size[l] != d) {
        const std::string name =
            l < ellipsis_ndim
                ? "ellipsis axis " + std::to_string(l)
                : "'" + std::string(1, order[l - ellipsis_ndim]) + "'";
        return name + " has length " + std::to_string(plan->label_size[l]) +
               " and, in operand " + std::to_string(k) + ", " +
               std::to_string(d) + ", which do not broadcast";
      }
      plan->label_size[l] = d;
      sized[l] = true;
    }
  }
  plan->output_labels.clear();
  if (explicit_output) {
    Term out;
    std::string why = ParseTerm(text.substr(arrow + 2), "the output", &out);
    if (!why.empty()) return why;
    if (out.ellipsis < 0 && ellipsis_ndim > 0) {
      return "the operands have ellipsis axes but the output has no '...'";
    }
    for (int i = 0; i <= static_cast<int>(out.letters.size()); ++i) {
      if (i == out.ellipsis) {
        for (int e = 0; e < ellipsis_ndim; ++e) {
          plan->output_labels.push_back(e);
        }
      }
      if (i == static_cast<int>(out.letters.size())) break;
      const char ch = out.letters[i];
      if (id.count(ch) == 0) {
        return "the output's '" + std::string(1, ch) +
               "' is in no operand's subscripts";
      }
      if (out.letters.find(ch) != static_cast<size_t>(i)) {
        return "the output names '" + std::string(1, ch) + "' twice";
      }
      plan->output_labels.push_back(id[ch]);
    }
  } else {
    for (int e = 0; e < ellipsis_ndim; ++e) plan->output_labels.push_back(e);
    std::string once;
    for (size_t j = 0; j < order.size(); ++j) {
      if (uses[j] == 1) once.push_back(order[j]);
    }
    std::sort(once.begin(), once.end());
    for (char ch : once) plan->output_labels.push_back(id[ch]);
  }
  if (plan->output_labels.size() > static_cast<size_t>(kMaxEinsumRank)) {
    return "the output would have " +
           std::to_string(plan->output_labels.size()) + " axes but at most " +
           std::to_string(kMaxEinsumRank) + " are supported";
  }
  plan->output_shape.clear();
  for (int l : plan->output_labels) {
    plan->output_shape.push_back(plan->label_size[l]);
  }
  return "";
}

EinsumContraction ForwardContraction(
    const EinsumPlan& plan, const std::vector<std::vector<int64_t>>& shapes) {
  EinsumContraction c = Base(plan, plan.output_labels, plan.output_shape);
  for (size_t k = 0; k < shapes.size(); ++k) {
    AddFactor(plan.operand_labels[k], shapes[k], &c);
  }
  return c;
}

EinsumContraction GradientContraction(
    const EinsumPlan& plan, const std::vector<std::vector<int64_t>>& shapes,
    int k) {
  EinsumContraction c = Base(plan, plan.operand_labels[k], shapes[k]);
  AddFactor(plan.output_labels, plan.output_shape, &c);
  for (size_t j = 0; j < shapes.size(); ++j) {
    if (static_cast<int>(j) != k) {
      AddFactor(plan.operand_labels[j], shapes[j], &c);
    }
  }
  return c;
}

}  // namespace mx_math
