// DOT of a partitioned graph: the outer graph, plus each subgraph node's
// nested graph drawn as a cluster labelled with the node's name.
#include <sstream>

#include "absl/strings/str_cat.h"
#include "subgraph/partition_graph.h"

namespace mx {
namespace {

// Symbol::ToDOT's body with node ids "nK" renamed "<prefix>K"; ids start
// each line and follow "-> ".
std::string RenamedBody(const std::string& dot, const std::string& prefix) {
  std::istringstream in(dot);
  std::string line, out;
  auto rename = [&](const std::string& s, size_t pos) {
    return s.substr(0, pos) + prefix + s.substr(pos + 1);
  };
  while (std::getline(in, line)) {
    // Only node and edge lines; not the header, defaults or "}".
    if (line.rfind("  n", 0) != 0 || line.rfind("  node ", 0) == 0) continue;
    line = rename(line, 2);
    const size_t arrow = line.find(" -> n");
    if (arrow != std::string::npos && arrow < line.find('[')) {
      line = rename(line, arrow + 4);
    }
    absl::StrAppend(&out, "  ", line, "\n");
  }
  return out;
}

}  // namespace

std::string PartitionedToDOT(const Symbol& symbol) {
  std::string dot = symbol.ToDOT();
  dot.resize(dot.rfind('}'));
  int k = 0;
  DFSVisit(symbol.outputs, [&](const NodePtr& n) {
    if (n->is_variable() || n->attrs.subgraphs.empty()) return;
    const std::string prefix = absl::StrCat("s", k, "_n");
    absl::StrAppend(
        &dot, "  subgraph cluster_", k++, " {\n    label=\"", n->name(), " (",
        n->op()->name(), ")\";\n    style=dashed;\n",
        RenamedBody(n->attrs.subgraphs[0]->ToDOT(), prefix), "  }\n");
  });
  return dot + "}\n";
}

}  // namespace mx
