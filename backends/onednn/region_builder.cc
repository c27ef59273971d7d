// The region property's side of _sg_onednn_region (fused_region.h): which
// nodes it claims and how a claimed subgraph becomes the op's `steps`.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/onednn/fused_region.h"

namespace mx_onednn {

using mxplugin::Attrs;
using mxplugin::NodeView;

std::optional<PoolStep> ParsePoolStep(const Attrs& a) {
  std::string why;
  std::optional<PoolStep> read = ReadPoolAttrs(a, &why);
  if (!read || read->full) return std::nullopt;
  PoolStep& p = *read;
  if (p.global) return p;
  if (p.stride.empty()) p.stride.assign(p.kernel.size(), 1);
  if (p.pad.empty()) p.pad.assign(p.kernel.size(), 0);
  if (p.kernel.empty() || p.kernel.size() > 3 ||
      p.stride.size() != p.kernel.size() || p.pad.size() != p.kernel.size()) {
    return std::nullopt;
  }
  for (size_t i = 0; i < p.kernel.size(); ++i) {
    // Windows of up to 2^20 (no overflow in the output size).
    if (p.kernel[i] < 1 || p.kernel[i] > (1 << 20) || p.stride[i] < 1 ||
        p.pad[i] < 0 || p.pad[i] >= p.kernel[i]) {
      return std::nullopt;
    }
  }
  return p;
}

bool RegionClaims(const NodeView& n) {
  if (n.op() == "_sg_onednn_conv") return true;
  if (n.op() != "Pooling" || !ParsePoolStep(n.attrs())) return false;
  for (int i = 0; i < n.num_outputs(); ++i) {
    const int32_t t = n.c()->output_dtypes[i];
    if (t != MX_DTYPE_UNKNOWN && t != MX_DTYPE_FLOAT32) return false;
  }
  return true;
}

mxplugin::SubgraphNode BuildRegionNode(const MxGraphView& g) {
  // Position of each non-variable node among the steps; -1 for variables.
  std::vector<int> step_of(g.num_nodes, -1);
  int num_steps = 0;
  bool convolves = false;
  for (int i = 0; i < g.num_nodes; ++i) {
    const NodeView n(&g.nodes[i]);
    if (n.is_variable()) continue;
    if (!RegionClaims(n)) return {};
    convolves |= n.op() == "_sg_onednn_conv";
    step_of[i] = num_steps++;
  }
  if (num_steps < 2 || !convolves) return {};
  nlohmann::json steps = nlohmann::json::array();
  for (int i = 0; i < g.num_nodes; ++i) {
    const NodeView n(&g.nodes[i]);
    if (n.is_variable()) continue;
    const Attrs attrs = n.attrs();
    const bool pool = n.op() == "Pooling";
    const int64_t data = pool ? 0 : attrs.GetInt("data_input", -1),
                  sum = pool ? -1 : attrs.GetInt("sum_input", -1);
    nlohmann::json inputs = nlohmann::json::array();
    for (int j = 0; j < n.num_inputs(); ++j) {
      const int from = n.input_node(j);
      if (step_of[from] >= 0) {
        // Only activations pass between steps in the steps' layouts.
        if ((j != data && j != sum) || n.input_output(j) != 0) return {};
        inputs.push_back("s" + std::to_string(step_of[from]));
        continue;
      }
      const int* end = g.input_nodes + g.num_inputs;
      const int* k = std::find(g.input_nodes, end, from);
      if (k == end) return {};
      inputs.push_back("i" + std::to_string(k - g.input_nodes));
    }
    nlohmann::json step_attrs = nlohmann::json::object();
    const MxAttrs& raw = n.c()->attrs;
    for (int a = 0; a < raw.num; ++a) {
      if (std::string_view(raw.keys[a]).rfind("__", 0) == 0) continue;
      step_attrs[raw.keys[a]] = raw.values[a];
    }
    steps.push_back({{"op", std::string(n.op())},
                     {"name", std::string(n.name())},
                     {"inputs", std::move(inputs)},
                     {"attrs", std::move(step_attrs)}});
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (int k = 0; k < g.num_outputs; ++k) {
    const int step = step_of[g.output_nodes[k]];
    if (step < 0 || g.output_indices[k] != 0) return {};
    outputs.push_back(step);
  }
  mxplugin::SubgraphNode node;
  node.op = "_sg_onednn_region";
  node.attrs = {{"num_inputs", std::to_string(g.num_inputs)},
                {"num_outputs", std::to_string(g.num_outputs)},
                {"steps", nlohmann::json{{"steps", std::move(steps)},
                                         {"outputs", outputs}}
                              .dump()}};
  return node;
}

}  // namespace mx_onednn
