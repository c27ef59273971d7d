/* A plugin in plain C99 built as if against ABI 1.0: it declares minor 0
 * and passes structs sized as 1.0 had them (without the fields added in
 * 1.1), which the host must accept. Op "_old_minor_add1": y = x + 1. */
#include <string.h>

#include "backends/plugin_api/mx_plugin.h"

static MxStatusCode InferShape(void* user_data, const void* attrs,
                               int32_t num_inputs, int32_t* in_ndims,
                               int64_t* const* in_shapes, int32_t num_outputs,
                               int32_t* out_ndims, int64_t* const* out_shapes,
                               MxStatus* status) {
  (void)user_data;
  (void)attrs;
  (void)num_inputs;
  (void)num_outputs;
  (void)status;
  if (in_ndims[0] >= 0) {
    out_ndims[0] = in_ndims[0];
    memcpy(out_shapes[0], in_shapes[0], sizeof(int64_t) * in_ndims[0]);
  }
  return MX_STATUS_OK;
}

static MxStatusCode Add1(void* user_data, const void* attrs,
                         const MxKernelContext* ctx, const MxTensor* inputs,
                         int32_t num_inputs, const int32_t* requests,
                         const MxTensor* outputs, int32_t num_outputs,
                         MxStatus* status) {
  int64_t n = 1, i;
  const float* x = (const float*)inputs[0].data;
  float* y = (float*)outputs[0].data;
  (void)user_data;
  (void)attrs;
  (void)ctx;
  (void)num_inputs;
  (void)requests;
  (void)num_outputs;
  if (inputs[0].dtype != MX_DTYPE_FLOAT32) {
    strcpy(status->message, "_old_minor_add1 takes float32");
    return MX_STATUS_DTYPE_ERROR;
  }
  for (i = 0; i < inputs[0].ndim; ++i) n *= inputs[0].shape[i];
  for (i = 0; i < n; ++i) y[i] = x[i] + 1;
  return MX_STATUS_OK;
}

__attribute__((visibility("default"))) MxStatusCode mx_plugin_init(
    const MxHostApi* host, MxPluginDesc* desc, MxStatus* status) {
  MxKernelDef kernel;
  MxOpDef op;
  desc->name = "old_minor";
  desc->abi_major = MX_PLUGIN_ABI_MAJOR;
  desc->abi_minor = 0;
  if (host->abi_major != MX_PLUGIN_ABI_MAJOR) return MX_STATUS_ABI_MISMATCH;
  memset(&kernel, 0, sizeof(kernel));
  kernel.struct_size = sizeof(kernel);
  kernel.op_name = "_old_minor_add1";
  kernel.dev_type = MX_DEVICE_CPU;
  kernel.compute = Add1;
  /* Garbage where 1.1's field would be: the host must not read it. */
  memset(&op, 0xAB, sizeof(op));
  op.struct_size = MX_STRUCT_SIZE_UPTO(MxOpDef, user_data);
  op.name = "_old_minor_add1";
  op.num_inputs = 1;
  op.num_outputs = 1;
  op.num_inputs_fn = NULL;
  op.num_outputs_fn = NULL;
  op.input_names = NULL;
  op.output_names = NULL;
  op.attrs = NULL;
  op.num_attrs = 0;
  op.parse_attrs = NULL;
  op.free_attrs = NULL;
  op.infer_shape = InferShape;
  op.infer_type = NULL;
  op.kernels = &kernel;
  op.num_kernels = 1;
  op.stateful_dev_type = 0;
  op.create_state = NULL;
  op.destroy_state = NULL;
  op.stateful_compute = NULL;
  op.inplace_pairs = NULL;
  op.num_inplace_pairs = 0;
  op.resources = 0;
  op.gradient_op = NULL;
  op.gradient_inputs = 0;
  op.user_data = NULL;
  return host->register_op(host->registrar, &op, status);
}
