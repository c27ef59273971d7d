#include "backends/common/interleaved_matmul.h"

#include <cmath>

namespace mx_attention {
namespace {

std::string Dims(const Shape3& s) {
  return "(" + std::to_string(s[0]) + "," + std::to_string(s[1]) + "," +
         std::to_string(s[2]) + ")";
}

// Part `part` of `parts` of every head of (seq, batch, heads*parts*hd).
HeadMatrix Part(const Shape3& s, int64_t parts, int64_t hd, int64_t part) {
  return {s[0], hd, s[1] * s[2], parts * hd, part * hd};
}

// (batch*heads, rows, cols), one matrix after another.
HeadMatrix Plain(int64_t rows, int64_t cols) {
  return {rows, cols, cols, rows * cols, 0};
}

Operand In(int index, HeadMatrix m) { return {false, index, m}; }
Operand Out(int index, HeadMatrix m) { return {true, index, m}; }

// head_dim of an interleaved array of `parts` parts per head; 0 (and *why)
// when its last axis does not split.
int64_t HeadDim(const Shape3& s, int64_t heads, int64_t parts, const char* name,
                std::string* why) {
  if (s[2] % (heads * parts) != 0 || s[2] == 0) {
    *why = std::string(name) + " " + Dims(s) + ": the last axis is not " +
           std::to_string(parts) + " x heads (" + std::to_string(heads) +
           ") x head_dim";
    return 0;
  }
  return s[2] / (heads * parts);
}

std::string Mismatch(const char* name, const Shape3& got, const Shape3& want) {
  return std::string(name) + " has shape " + Dims(got) + " but " + Dims(want) +
         " is required";
}

}  // namespace

std::string OpName(Kind kind, bool backward) {
  const char* base = kind == Kind::kSelfAttQK       ? "selfatt_qk"
                     : kind == Kind::kSelfAttValAtt ? "selfatt_valatt"
                     : kind == Kind::kEncDecQK      ? "encdec_qk"
                                                    : "encdec_valatt";
  return std::string(backward ? "_backward_" : "_contrib_") +
         "interleaved_matmul_" + base;
}

std::string PlanOf(Kind kind, bool backward, int64_t heads,
                   const std::vector<Shape3>& inputs, Plan* plan,
                   std::vector<Shape3>* outputs) {
  if (heads < 1) return "heads=" + std::to_string(heads) + " must be >= 1";
  const size_t want_inputs =
      (kind == Kind::kSelfAttQK ? 1 : 2) + (backward ? 1 : 0);
  if (inputs.size() != want_inputs) return "wrong number of inputs";
  // The forward's inputs follow out_grad in the backward.
  const size_t f = backward ? 1 : 0;
  std::string why;
  plan->products.clear();
  outputs->clear();
  switch (kind) {
    case Kind::kSelfAttQK: {
      const Shape3& x = inputs[f];
      const int64_t hd = HeadDim(x, heads, 3, "queries_keys_values", &why);
      if (hd == 0) return why;
      const int64_t bh = x[1] * heads, len = x[0];
      const double s = 1 / std::sqrt(static_cast<double>(hd));
      plan->matrices = bh;
      const HeadMatrix q = Part(x, 3, hd, 0), k = Part(x, 3, hd, 1);
      const Shape3 scores{bh, len, len};
      if (!backward) {
        plan->products.push_back(
            {In(0, q), In(0, k), Out(0, Plain(len, len)), false, true, s});
        outputs->push_back(scores);
        return "";
      }
      if (inputs[0] != scores) return Mismatch("out_grad", inputs[0], scores);
      // The gradient's q and k parts lie where x's do (its v part is 0).
      const HeadMatrix g = Plain(len, len);
      plan->products.push_back(
          {In(0, g), In(1, k), Out(0, q), false, false, s});
      plan->products.push_back({In(0, g), In(1, q), Out(0, k), true, false, s});
      outputs->push_back(x);
      return "";
    }
    case Kind::kSelfAttValAtt: {
      const Shape3& x = inputs[f];
      const Shape3& att = inputs[f + 1];
      const int64_t hd = HeadDim(x, heads, 3, "queries_keys_values", &why);
      if (hd == 0) return why;
      const int64_t bh = x[1] * heads, len = x[0];
      const Shape3 want_att{bh, len, len};
      if (att != want_att) return Mismatch("attention", att, want_att);
      plan->matrices = bh;
      const Shape3 out{len, x[1], heads * hd};
      const HeadMatrix v = Part(x, 3, hd, 2), o = Part(out, 1, hd, 0);
      if (!backward) {
        plan->products.push_back(
            {In(1, Plain(len, len)), In(0, v), Out(0, o), false, false, 1});
        outputs->push_back(out);
        return "";
      }
      if (inputs[0] != out) return Mismatch("out_grad", inputs[0], out);
      // d attention = g v^T; d v = attention^T g.
      plan->products.push_back(
          {In(0, o), In(1, v), Out(1, Plain(len, len)), false, true, 1});
      plan->products.push_back(
          {In(2, Plain(len, len)), In(0, o), Out(0, v), true, false, 1});
      outputs->push_back(x);
      outputs->push_back(att);
      return "";
    }
    case Kind::kEncDecQK: {
      const Shape3& q = inputs[f];
      const Shape3& kv = inputs[f + 1];
      const int64_t hd = HeadDim(q, heads, 1, "queries", &why);
      if (hd == 0) return why;
      const Shape3 want_kv{kv[0], q[1], 2 * q[2]};
      if (kv != want_kv) return Mismatch("keys_values", kv, want_kv);
      const int64_t bh = q[1] * heads;
      const double s = 1 / std::sqrt(static_cast<double>(hd));
      plan->matrices = bh;
      const HeadMatrix qm = Part(q, 1, hd, 0), k = Part(kv, 2, hd, 0);
      const Shape3 scores{bh, q[0], kv[0]};
      const HeadMatrix g = Plain(q[0], kv[0]);
      if (!backward) {
        plan->products.push_back(
            {In(0, qm), In(1, k), Out(0, g), false, true, s});
        outputs->push_back(scores);
        return "";
      }
      if (inputs[0] != scores) return Mismatch("out_grad", inputs[0], scores);
      plan->products.push_back(
          {In(0, g), In(2, k), Out(0, qm), false, false, s});
      plan->products.push_back(
          {In(0, g), In(1, qm), Out(1, k), true, false, s});
      outputs->push_back(q);
      outputs->push_back(kv);
      return "";
    }
    case Kind::kEncDecValAtt: {
      const Shape3& kv = inputs[f];
      const Shape3& att = inputs[f + 1];
      const int64_t hd = HeadDim(kv, heads, 2, "keys_values", &why);
      if (hd == 0) return why;
      const int64_t bh = kv[1] * heads;
      if (att[0] != bh || att[2] != kv[0]) {
        return Mismatch("attention", att, {bh, att[1], kv[0]});
      }
      plan->matrices = bh;
      const Shape3 out{att[1], kv[1], heads * hd};
      const HeadMatrix v = Part(kv, 2, hd, 1), o = Part(out, 1, hd, 0);
      const HeadMatrix a = Plain(att[1], att[2]);
      if (!backward) {
        plan->products.push_back(
            {In(1, a), In(0, v), Out(0, o), false, false, 1});
        outputs->push_back(out);
        return "";
      }
      if (inputs[0] != out) return Mismatch("out_grad", inputs[0], out);
      plan->products.push_back({In(0, o), In(1, v), Out(1, a), false, true, 1});
      plan->products.push_back({In(2, a), In(0, o), Out(0, v), true, false, 1});
      outputs->push_back(kv);
      outputs->push_back(att);
      return "";
    }
  }
  return "unknown kind";
}

}  // namespace mx_attention
