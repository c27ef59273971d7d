// The fuse plugin: backend "fuse" claims connected chains and trees of
// elementwise ops and replaces each with one _fused_elemwise op. Written
// against the C plugin ABI's C++ layer only.
#include "backends/common/elemwise_program.h"
#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mxfuse {
namespace {

void Register(mxplugin::Plugin& p) {
  p.RegisterOp(mx_elemwise::ProgramOpDef(
      "_fused_elemwise",
      "A chain or tree of elementwise ops, compiled to a register program, "
      "computed in one pass over memory (fuse plugin); float32 and "
      "float64."));
  p.RegisterSubgraphProperty(
      "fuse", mx_elemwise::FusionProperty("fuse", "_fused_elemwise"));
}

}  // namespace
}  // namespace mxfuse

MX_PLUGIN("fuse", mxfuse::Register)
