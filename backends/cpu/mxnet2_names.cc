// MXNet 2's names for ops registered here under their MXNet 1.x names.
//
// MXNet 2's NumPy extension calls the legacy layers by `_npx_` names
// (npx.fully_connected is `_npx_fully_connected`, npx.batch_flatten is
// `_npx_batch_flatten`, ...), and some NumPy-interface ops are the legacy
// ones (np.swapaxes is `_npi_swapaxes`, an alias of SwapAxis). MXNet 2
// registers each as an alias of the legacy operator, or (`_npx_relu`,
// `_npx_sigmoid`, `_npi_copy`, `_npi_transpose`) as an op with the same
// attributes and results, so graphs and C-API callers (DJL, for one) that
// use the MXNet 2 names get the same op here. Exported graphs keep the
// legacy names, as MXNet's do for aliases.
//
// These registrations run after the ops' own (//backends/cpu links the
// *_ops.cc files first, as for elemwise_grad.cc's gradients).
#include "graph/op.h"

namespace mx {
namespace cpu {
namespace {

struct Mxnet2Name {
  const char* legacy;
  const char* mxnet2;
};

// From MXNet 2's registrations (src/operator/nn/*.cc, tensor/*.cc,
// numpy/np_elemwise_unary_op_basic.cc, swapaxis.cc; add_alias or own op).
constexpr Mxnet2Name kMxnet2Names[] = {
    {"Activation", "_npx_activation"},
    {"BatchNorm", "_npx_batch_norm"},
    {"Convolution", "_npx_convolution"},
    {"Deconvolution", "_npx_deconvolution"},
    {"Dropout", "_npx_dropout"},
    {"FullyConnected", "_npx_fully_connected"},
    {"LayerNorm", "_npx_layer_norm"},
    {"GroupNorm", "_npx_group_norm"},
    {"InstanceNorm", "_npx_instance_norm"},
    {"Pooling", "_npx_pooling"},
    {"softmax", "_npx_softmax"},
    {"log_softmax", "_npx_log_softmax"},
    {"LeakyReLU", "_npx_leaky_relu"},
    {"ROIPooling", "_npx_roi_pooling"},
    {"SequenceMask", "_npx_sequence_mask"},
    {"SequenceLast", "_npx_sequence_last"},
    {"SequenceReverse", "_npx_sequence_reverse"},
    {"SliceChannel", "_npx_slice_channel"},
    {"_contrib_MultiBoxPrior", "_npx_multibox_prior"},
    {"Embedding", "_npx_embedding"},
    {"one_hot", "_npx_one_hot"},
    {"topk", "_npx_topk"},
    {"pick", "_npx_pick"},
    {"batch_dot", "_npx_batch_dot"},
    {"Flatten", "_npx_batch_flatten"},
    {"broadcast_like", "_npx_broadcast_like"},
    {"reshape_like", "_npx_reshape_like"},
    {"Cast", "_npx_cast"},
    {"gamma", "_npx_gamma"},
    {"gammaln", "_npx_gammaln"},
    {"erf", "_npx_erf"},
    {"BlockGrad", "_npx_stop_gradient"},
    {"shape_array", "_npx_shape_array"},
    {"add_n", "_npx_add_n"},
    {"relu", "_npx_relu"},
    {"sigmoid", "_npx_sigmoid"},
    {"_copy", "_npi_copy"},
    {"transpose", "_npi_transpose"},
    {"SwapAxis", "_npi_swapaxes"},
    // np's indexing and array functions (tensor/matrix_op.cc,
    // indexing_op.cc, contrib/boolean_mask.cc; sort, argsort and amp_cast
    // from the ops MXNet 2's Python API calls by these names).
    {"slice", "_npi_slice"},
    {"slice", "_npx_slice"},
    {"clip", "_npi_clip"},
    {"repeat", "_npi_repeat"},
    {"tile", "_npi_tile"},
    {"take", "_npi_take"},
    {"gather_nd", "_npi_gather_nd"},
    // x[idx0, idx1, ...] with integer arrays in a Symbol graph: MXNet 2
    // stacks them into (M, ...) indices, gather_nd's (negative indices
    // count from the end, others out of range are errors, as there).
    {"gather_nd", "_npi_advanced_indexing_multiple"},
    {"gather_nd", "_npx_gather_nd"},
    {"_contrib_boolean_mask", "_npi_boolean_mask"},
    {"_split_v2", "_npi_array_split"},
    {"sort", "_npi_sort"},
    {"argsort", "_npi_argsort"},
    {"amp_cast", "_npi_amp_cast"},
    {"slice_like", "_npx_slice_like"},
};

[[maybe_unused]] const bool kMxnet2NamesRegistered = [] {
  for (const Mxnet2Name& n : kMxnet2Names) {
    OpRegistry::Get()->Mutable(n.legacy).AddAlias(n.mxnet2);
  }
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
