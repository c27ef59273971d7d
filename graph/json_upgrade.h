// The legacy upgrade pass of the symbol JSON loader: rewrites a document
// written by an older MXNet into today's layout before the graph is built,
// as MXNet's LoadLegacyJSON pass does. Every upgrade is one function here,
// applied by the file's `mxnet_version` (absent before MXNet 0.9: version
// 0), and tested alone in json_upgrade_test.cc. Internal to //graph:symbol.
//
//   json doc = json::parse(text);
//   UpgradeLegacyJSON(&doc);   // then LoadGraph(doc)
#ifndef MXCORE_GRAPH_JSON_UPGRADE_H_
#define MXCORE_GRAPH_JSON_UPGRADE_H_

#include <nlohmann/json.hpp>

namespace mx {
namespace json_upgrade {

// The version a document declares ({"attrs": {"mxnet_version": ["int",
// N]}}); 0 when it declares none (MXNet 0.8 wrote none).
int DocumentVersion(const nlohmann::json& doc);

// Merges the per-node attribute dictionaries of old writers ("param" for
// op parameters in 0.8, "attr" in 0.9-1.1) into "attrs" (later keys win:
// attrs, then attr, then param). All versions.
void MergeAttributeKeys(nlohmann::json* doc);

// MXNet before 0.9 wrote hidden keys without underscores: ctx_group,
// lr_mult, wd_mult, force_mirroring, mirror_stage, and keys ending in
// "_" plus one of them (weight_lr_mult, on the op of the weight), become
// __ctx_group__, __weight_lr_mult__ ...
void RenameHiddenKeys(nlohmann::json* doc);

// MXNet before 0.9.4 listed BatchNorm with 3 inputs (data, gamma, beta):
// adds the variables NAME_moving_mean and NAME_moving_var as its 4th and
// 5th inputs (auxiliary states), renumbering the nodes.
void AddBatchNormAuxInputs(nlohmann::json* doc);

// MXNet 1.x (without NumPy shape semantics) writes 0 for an unknown
// dimension in a variable's __shape__ hint ("(64, 0, 7, 7)" from Gluon
// export) and () for an unknown shape, and 0 for the dimensions shape
// inference completes in the `shape` of _zeros, _ones and _full (Gluon's
// recurrent begin states: "(1, 0, 256)"): rewrites them as -1 dimensions
// and drops an empty hint. Documents marked "is_np_shape" (MXNet 2, mxcore's
// own) mean a zero-size dimension by 0 and are left alone.
void MarkUnknownShapeDims(nlohmann::json* doc);

// Applies the upgrades above that the document's version needs. Throws
// InvalidArgument on structure the upgrades cannot follow.
void UpgradeLegacyJSON(nlohmann::json* doc);

}  // namespace json_upgrade
}  // namespace mx

#endif  // MXCORE_GRAPH_JSON_UPGRADE_H_
