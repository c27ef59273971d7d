/* The mxcore plugin ABI: the only header a backend plugin compiles against.
 *
 * A plugin is a shared library exporting one C function, mx_plugin_init.
 * The host calls it with a table of host functions; the plugin describes
 * itself and registers, through that table, any of:
 *   - kernels for existing ops on a device type (MxKernelDef),
 *   - new ops with their kernels (MxOpDef),
 *   - subgraph properties that claim parts of a graph (MxSubgraphPropertyDef),
 *   - device types with memory, streams, events and copies (MxDeviceDef).
 * Everything crossing this boundary is plain C: no C++ types, no exceptions
 * (a callback that fails returns a status code and writes a message).
 *
 * Versioning: MX_PLUGIN_ABI_MAJOR must match exactly (the host refuses a
 * plugin built for another major version). Minor versions only append
 * fields at the end of structs; every struct starts with `struct_size`, so
 * the host reads from an older plugin only the fields its size covers, and
 * a plugin checks `struct_size` of a host struct before reading a field
 * marked "since 1.N". Pointers handed to the plugin during a call are valid
 * for that call only; the host copies whatever a plugin passes in.
 *
 *   MxStatusCode mx_plugin_init(const MxHostApi* host, MxPluginDesc* desc,
 *                               MxStatus* status) {
 *     desc->name = "my_plugin";
 *     if (host->abi_major != MX_PLUGIN_ABI_MAJOR) return
 * MX_STATUS_ABI_MISMATCH; MxKernelDef k = {sizeof(MxKernelDef), "relu",
 * MX_DEVICE_CPU, my_relu}; return host->register_kernel(host->registrar, &k,
 * status);
 *   }
 *
 * C++ authors use mx_plugin_cpp.h, which builds these structs from lambdas.
 */
#ifndef MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_H_
#define MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MX_PLUGIN_ABI_MAJOR 1
#define MX_PLUGIN_ABI_MINOR 5

/* Size of a struct up to and including `field`: what a plugin built
 * against an older minor version passes as struct_size. */
#define MX_STRUCT_SIZE_UPTO(type, field) \
  (offsetof(type, field) + sizeof(((type*)0)->field))
/* Whether a struct of declared size `size` carries `field`. */
#define MX_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= MX_STRUCT_SIZE_UPTO(type, field))

/* ---- Status ------------------------------------------------------------ */

/* What a callback returns; the host turns anything but MX_STATUS_OK into
 * the mx::Error subclass of the same name, naming the plugin and the op,
 * property or device involved. */
typedef enum MxStatusCode {
  MX_STATUS_OK = 0,
  MX_STATUS_INVALID_ARGUMENT = 1,
  MX_STATUS_SHAPE_ERROR = 2,
  MX_STATUS_DTYPE_ERROR = 3,
  MX_STATUS_NOT_FOUND = 4,
  MX_STATUS_ALREADY_EXISTS = 5,
  MX_STATUS_NOT_IMPLEMENTED = 6,
  MX_STATUS_OUT_OF_MEMORY = 7,
  MX_STATUS_RUNTIME_ERROR = 8,
  MX_STATUS_ABI_MISMATCH = 9, /* Only from mx_plugin_init. */
  /* Not codes: they make every int a value of the type, so that a host
   * (C++, where an enum holds only the values its enumerators span) reads
   * a code a plugin made up without undefined behaviour; an unknown code
   * is a RuntimeError. */
  MX_STATUS_RANGE_MIN_ = -2147483647 - 1,
  MX_STATUS_RANGE_MAX_ = 2147483647
} MxStatusCode;

/* Filled by a failing callback: a NUL-terminated message (truncated to
 * fit). The host provides it zeroed. */
typedef struct MxStatus {
  size_t struct_size;
  char message[1024];
} MxStatus;

/* ---- Tensors and kernels ----------------------------------------------- */

/* Element types; the codes are MXNet's. */
typedef enum MxDType {
  MX_DTYPE_UNKNOWN = -1,
  MX_DTYPE_FLOAT32 = 0,
  MX_DTYPE_FLOAT64 = 1,
  MX_DTYPE_FLOAT16 = 2,
  MX_DTYPE_UINT8 = 3,
  MX_DTYPE_INT32 = 4,
  MX_DTYPE_INT8 = 5,
  MX_DTYPE_INT64 = 6,
  MX_DTYPE_BOOL = 7
} MxDType;

/* Device types. A plugin's own device gets its code from register_device. */
enum { MX_DEVICE_CPU = 1, MX_DEVICE_GPU = 2 };

/* A dense row-major array. */
typedef struct MxTensor {
  size_t struct_size;
  void* data; /* Null when the tensor has no elements. */
  int32_t dtype;
  int32_t ndim;
  const int64_t* shape;
  int32_t dev_type;
  int32_t dev_id;
} MxTensor;

/* How a kernel writes an output. */
typedef enum MxWriteRequest {
  MX_REQ_NULL = 0,    /* Do not write. */
  MX_REQ_WRITE = 1,   /* Overwrite. */
  MX_REQ_INPLACE = 2, /* Overwrite; shares memory with an input. */
  MX_REQ_ADD = 3      /* Add to what is there. */
} MxWriteRequest;

/* Body of a parallel loop: computes iterations [begin, end). */
typedef void (*MxParallelBody)(void* arg, int64_t begin, int64_t end);

/* What a kernel gets from the host, besides its tensors. */
typedef struct MxKernelContext {
  size_t struct_size;
  int32_t is_train;
  int32_t dev_type;
  int32_t dev_id;
  /* The stream the kernel runs on (device plugins: from create_stream):
   * the running engine worker's own, or, for devices that set
   * MxDeviceDef.launch_on_any_thread, possibly one lent to the thread that
   * pushed the operation; null on the CPU. */
  void* stream;
  void* host; /* Pass to the functions below. */
  /* Scratch memory on the kernel's device, freed when the kernel returns.
   * Requires MX_RESOURCE_TEMP_SPACE; null when that was not requested or
   * the memory is not there. */
  void* (*temp_space)(void* host, size_t bytes);
  /* 64 random bits from the op's generator (seeded by mx::random::Seed).
   * Requires MX_RESOURCE_RANDOM. */
  uint64_t (*random_u64)(void* host);
  /* Runs body over [0, n) in chunks of at least `grain` iterations on the
   * host's CPU kernel threads (MX_CPU_KERNEL_NTHREADS); returns when done. */
  void (*parallel_for)(void* host, int64_t n, int64_t grain,
                       MxParallelBody body, void* arg);
  /* Since 1.2. Kernels of dynamic-shape ops (boolean_mask, ...) get their
   * outputs unallocated (data null, ndim -1, dtype set) and allocate each
   * one here once its shape is known: output `index` gets `shape` (ndim
   * dims, matching what shape inference knew) on the kernel's device, and
   * *tensor points to its description (valid during the call). Null for
   * other kernels. Returns a status (a shape that does not fit: shape
   * error; an output allocated twice: runtime error). */
  MxStatusCode (*alloc_output)(void* host, int32_t index, int32_t ndim,
                               const int64_t* shape, const MxTensor** tensor,
                               MxStatus* status);
  /* Since 1.3. What input `index` holds, for caches of things derived from
   * inputs (weights reordered or folded once for inference): *array_id
   * identifies the array (no two arrays of the process share one) and
   * *version counts the completed writes to it, so the pair changes
   * whenever the contents may have. Both 0 when the host cannot tell (a
   * temporary): do not cache then. An op's own write to an input it
   * mutates (MxOpDef.mutate_inputs) counts once it completes. */
  void (*input_version)(void* host, int32_t index, uint64_t* array_id,
                        uint64_t* version);
  /* Since 1.4. The CPU threads this call may use, for parallel_for and for
   * a library's own thread runtime alike (set OpenMP's team size from it):
   * MX_CPU_KERNEL_NTHREADS on the engine's workers, 1 for a small op the
   * engine runs on the thread that pushed it (a team started there would
   * compete with the workers for the cores). A CPU kernel is called in the
   * host's float mode (x86: MXCSR's FTZ and DAZ set, denormals flushed,
   * unless MX_CPU_FLUSH_DENORMALS=0), and so are parallel_for's chunks; a
   * library's own threads should take the calling thread's mode (the
   * oneDNN plugin hands it to its OpenMP team). */
  int32_t num_threads;
} MxKernelContext;

/* A stateless kernel. `attrs`, here and in every op callback, is what the
 * op's parse_attrs returned; for ops without parse_attrs (the host's
 * built-in ops among them) it is a `const MxAttrs*` of the node's
 * attribute strings (for the plugin's own ops, with defaults filled). */
typedef MxStatusCode (*MxComputeFn)(void* user_data, const void* attrs,
                                    const MxKernelContext* ctx,
                                    const MxTensor* inputs, int32_t num_inputs,
                                    const int32_t* requests,
                                    const MxTensor* outputs,
                                    int32_t num_outputs, MxStatus* status);

/* ---- Attributes -------------------------------------------------------- */

/* A node's attributes as strings (MXNet's "key": "value"). */
typedef struct MxAttrs {
  size_t struct_size;
  int32_t num;
  const char* const* keys;
  const char* const* values;
  const char* node_name;
} MxAttrs;

/* Attribute value types, for the schema and error messages. */
typedef enum MxAttrType {
  MX_ATTR_STRING = 0,
  MX_ATTR_INT = 1,
  MX_ATTR_FLOAT = 2,
  MX_ATTR_BOOL = 3,
  MX_ATTR_SHAPE = 4 /* "(2, 3)" */
} MxAttrType;

/* One attribute of an op's schema. The host checks keys (unknown keys are
 * an error unless they start with "__"), presence and the value's type
 * before calling parse_attrs, and fills defaults. */
typedef struct MxAttrSpec {
  size_t struct_size;
  const char* key;
  int32_t type;              /* MxAttrType. */
  const char* default_value; /* Null: required. */
  const char* description;
} MxAttrSpec;

/* ---- Registering kernels for existing ops ------------------------------ */

/* A kernel for op `op_name` on `dev_type`. It takes precedence over the
 * host's built-in kernel for that device; between plugins, the one loaded
 * last wins (MX_PLUGINS order); plugins are never unloaded. A call the
 * kernel declines by returning MX_STATUS_NOT_IMPLEMENTED (a dtype it does
 * not handle) runs on the kernel it replaced, if there was one. A kernel for
 * a device whose MxDeviceDef sets launch_on_any_thread may be called on any
 * thread, one at a time per stream: it must work on the stream it is given
 * and keep no state tied to its thread (a handle bound to one stream). */
typedef struct MxKernelDef {
  size_t struct_size;
  const char* op_name;
  int32_t dev_type;
  MxComputeFn compute;
  void* user_data;
} MxKernelDef;

/* ---- New ops ----------------------------------------------------------- */

/* Parses validated attributes into the plugin's own form (*parsed), once
 * per node; freed with free_attrs. */
typedef MxStatusCode (*MxParseAttrsFn)(void* user_data, const MxAttrs* attrs,
                                       void** parsed, MxStatus* status);
typedef void (*MxFreeAttrsFn)(void* user_data, void* parsed);
/* Number of inputs or outputs for a node (for variable arity). */
typedef MxStatusCode (*MxArityFn)(void* user_data, const void* attrs,
                                  int32_t* count, MxStatus* status);

/* Shape inference. ndims[i] == -1: unknown shape; a dimension of -1:
 * unknown dimension. Fill what you can (outputs at least) and report
 * contradictions. Shapes have room for MX_MAX_NDIM dimensions each. */
#define MX_MAX_NDIM 32
typedef MxStatusCode (*MxInferShapeFn)(void* user_data, const void* attrs,
                                       int32_t num_inputs, int32_t* in_ndims,
                                       int64_t* const* in_shapes,
                                       int32_t num_outputs, int32_t* out_ndims,
                                       int64_t* const* out_shapes,
                                       MxStatus* status);
/* Dtype inference; MX_DTYPE_UNKNOWN where unknown. */
typedef MxStatusCode (*MxInferTypeFn)(void* user_data, const void* attrs,
                                      int32_t num_inputs, int32_t* in_types,
                                      int32_t num_outputs, int32_t* out_types,
                                      MxStatus* status);

/* Stateful kernels: per-node state created once per (node, shapes,
 * dtypes, device) before the first call, destroyed when the node goes. */
typedef MxStatusCode (*MxCreateStateFn)(void* user_data, const void* attrs,
                                        int32_t dev_type, int32_t dev_id,
                                        int32_t num_inputs,
                                        const int32_t* in_ndims,
                                        const int64_t* const* in_shapes,
                                        const int32_t* in_types, void** state,
                                        MxStatus* status);
typedef void (*MxDestroyStateFn)(void* user_data, void* state);
typedef MxStatusCode (*MxStatefulComputeFn)(
    void* user_data, void* state, const MxKernelContext* ctx,
    const MxTensor* inputs, int32_t num_inputs, const int32_t* requests,
    const MxTensor* outputs, int32_t num_outputs, MxStatus* status);

/* Resources a kernel may request (bit flags). */
enum { MX_RESOURCE_TEMP_SPACE = 1, MX_RESOURCE_RANDOM = 2 };

/* Gradient recipes (bit flags for MxOpDef.gradient_inputs): the backward
 * op receives the output gradients, then (if set) the forward inputs, then
 * (if set) the forward outputs, gets the forward node's attributes, and
 * produces one gradient per forward input. */
enum { MX_GRAD_USES_INPUTS = 1, MX_GRAD_USES_OUTPUTS = 2 };

typedef struct MxOpDef {
  size_t struct_size;
  const char* name;
  int32_t num_inputs;  /* -1: ask num_inputs_fn. */
  int32_t num_outputs; /* -1: ask num_outputs_fn. */
  MxArityFn num_inputs_fn;
  MxArityFn num_outputs_fn;
  const char* const* input_names; /* num_inputs entries, or null. */
  const char* const* output_names;
  const MxAttrSpec* attrs;
  int32_t num_attrs;
  MxParseAttrsFn parse_attrs; /* Null: the op sees null attrs. */
  MxFreeAttrsFn free_attrs;
  MxInferShapeFn infer_shape; /* Required. */
  MxInferTypeFn infer_type;   /* Null: all inputs and outputs one dtype. */
  /* Kernels: a stateless one per device type in `kernels` (or register
   * more with register_kernel), or a stateful one for device type
   * `stateful_dev_type`. */
  const MxKernelDef* kernels;
  int32_t num_kernels;
  int32_t stateful_dev_type;
  MxCreateStateFn create_state;
  MxDestroyStateFn destroy_state;
  MxStatefulComputeFn stateful_compute;
  /* (input, output) index pairs that may share memory. */
  const int32_t* inplace_pairs;
  int32_t num_inplace_pairs;
  int32_t resources; /* MX_RESOURCE_* flags. */
  /* Op computing the gradient (see MX_GRAD_*); null: not differentiable
   * (backward through the op is an error naming it). */
  const char* gradient_op;
  int32_t gradient_inputs;
  void* user_data;
  /* Since 1.1. */
  const char* description;
  /* Since 1.3, optional: the inputs the op writes (as BatchNorm writes its
   * moving statistics); the graph lists their variables as auxiliary
   * states and the engine orders the op as a writer of them. Fill up to
   * `capacity` indices into `indices` and set *count (which may exceed
   * capacity: the host asks again with room for *count). */
  MxStatusCode (*mutate_inputs)(void* user_data, const void* attrs,
                                int32_t* indices, int32_t capacity,
                                int32_t* count, MxStatus* status);
} MxOpDef;

/* ---- Graphs, for subgraph properties ----------------------------------- */

/* A read-only view of one node. Shapes and dtypes are those recorded on
 * the graph (ndim -1 / MX_DTYPE_UNKNOWN when not known). */
typedef struct MxNodeView {
  size_t struct_size;
  const char* op_name; /* "" for a variable. */
  const char* node_name;
  MxAttrs attrs;
  int32_t num_inputs;
  const int32_t* input_nodes;   /* Index in the graph view, per input. */
  const int32_t* input_outputs; /* Which output of that node. */
  int32_t num_outputs;
  const int32_t* output_ndims;
  const int64_t* const* output_shapes;
  const int32_t* output_dtypes;
  int32_t has_control_deps;
} MxNodeView;

/* A subgraph handed to create_node: nodes in topological order. */
typedef struct MxGraphView {
  size_t struct_size;
  int32_t num_nodes;
  const MxNodeView* nodes;
  /* The subgraph's inputs (variables, by node index) in the order the
   * replacing node takes them. */
  int32_t num_inputs;
  const int32_t* input_nodes;
  int32_t num_outputs;
  const int32_t* output_nodes;
  const int32_t* output_indices;
  const char* json; /* The same graph as MXNet JSON. */
} MxGraphView;

/* ---- Subgraph properties ----------------------------------------------- */

/* Selector callbacks (see subgraph_property.h for their meaning). `selector`
 * is what create_selector returned; return 1 to claim, 0 not to. */
typedef struct MxSelectorDef {
  size_t struct_size;
  int32_t (*select)(void* selector, const MxNodeView* seed);
  int32_t (*select_input)(void* selector, const MxNodeView* cur,
                          const MxNodeView* input);
  int32_t (*select_output)(void* selector, const MxNodeView* cur,
                           const MxNodeView* output);
  /* Optional: keep[i] = 0 drops candidate i (all 1 on entry). */
  void (*filter)(void* selector, int32_t num, const MxNodeView* const* nodes,
                 int32_t* keep);
} MxSelectorDef;

/* The node replacing a subgraph: op name plus string attributes. With
 * attach_subgraph set, the host hands the subgraph to the op as its
 * attrs.subgraphs[0] (ops like _default_subgraph_op run it). Strings are
 * copied by the host when create_node returns. */
typedef struct MxSubgraphNode {
  size_t struct_size;
  const char* op_name; /* Null: reject the subgraph (left unpartitioned). */
  int32_t num_attrs;
  const char* const* keys;
  const char* const* values;
  int32_t attach_subgraph;
} MxSubgraphNode;

typedef struct MxSubgraphPropertyDef {
  size_t struct_size;
  const char* backend; /* Properties with one backend name are applied in
                          registration order. */
  const char* name;
  int32_t inference_only;
  /* A new selector per seed; destroyed with destroy_selector. */
  MxStatusCode (*create_selector)(void* user_data, void** selector,
                                  MxStatus* status);
  void (*destroy_selector)(void* user_data, void* selector);
  MxSelectorDef selector;
  /* Fills *node; strings it points to must live until the next call on
   * this property (the host copies them first). */
  MxStatusCode (*create_node)(void* user_data, const MxGraphView* graph,
                              int32_t id, MxSubgraphNode* node,
                              MxStatus* status);
  void* user_data;
} MxSubgraphPropertyDef;

/* ---- Devices ----------------------------------------------------------- */

/* A device type. The engine gives each compute and copy worker of a device
 * its own stream; an operation completes once its work is queued, and
 * events order work across streams and with the host. Every function but
 * count returns a status. */
typedef struct MxDeviceDef {
  size_t struct_size;
  const char* name; /* "mydev": Context type name, e.g. "mydev(0)". */
  int32_t (*count)(void* user_data);
  MxStatusCode (*alloc)(void* user_data, int32_t dev_id, size_t bytes,
                        void** ptr, MxStatus* status);
  MxStatusCode (*free)(void* user_data, int32_t dev_id, void* ptr, size_t bytes,
                       MxStatus* status);
  MxStatusCode (*create_stream)(void* user_data, int32_t dev_id, void** stream,
                                MxStatus* status);
  MxStatusCode (*destroy_stream)(void* user_data, int32_t dev_id, void* stream,
                                 MxStatus* status);
  MxStatusCode (*synchronize)(void* user_data, int32_t dev_id, void* stream,
                              MxStatus* status);
  MxStatusCode (*create_event)(void* user_data, int32_t dev_id, void** event,
                               MxStatus* status);
  /* May be called while work recording or waiting for the event is still
   * queued (the host drops fences it no longer needs); the plugin releases
   * the event once that work is done, as cudaEventDestroy does. */
  MxStatusCode (*destroy_event)(void* user_data, int32_t dev_id, void* event,
                                MxStatus* status);
  /* Marks the point `stream` has reached. */
  MxStatusCode (*record_event)(void* user_data, int32_t dev_id, void* event,
                               void* stream, MxStatus* status);
  /* Makes later work on `stream` wait for the event's point. */
  MxStatusCode (*wait_event)(void* user_data, int32_t dev_id, void* event,
                             void* stream, MxStatus* status);
  /* *done = 1 once the event's point has been reached. */
  MxStatusCode (*query_event)(void* user_data, int32_t dev_id, void* event,
                              int32_t* done, MxStatus* status);
  /* Copies on `stream`; direction: 0 host->device, 1 device->host,
   * 2 device->device (same device id). */
  MxStatusCode (*copy)(void* user_data, int32_t dev_id, void* dst,
                       const void* src, size_t bytes, int32_t direction,
                       void* stream, MxStatus* status);
  void* user_data;
  /* Since 1.1: sets `bytes` bytes at `dst` to `value` on `stream`. */
  MxStatusCode (*memset)(void* user_data, int32_t dev_id, void* dst,
                         int32_t value, size_t bytes, void* stream,
                         MxStatus* status);
  /* Since 1.2, optional: blocks until the event's point has been reached
   * (the host polls query_event without it). */
  MxStatusCode (*synchronize_event)(void* user_data, int32_t dev_id,
                                    void* event, MxStatus* status);
  /* Since 1.5: nonzero when the device's kernels may run on any thread, one
   * thread at a time per stream, on streams the host creates and lends to
   * threads in turn (a kernel keeps no per-thread state, as handles or
   * scratch memory tied to its thread). The host may then launch a ready
   * operation on the thread that pushed it, on a lent stream, instead of
   * waking a worker (MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER). Zero: kernels run
   * on the workers' own streams only. */
  int32_t launch_on_any_thread;
} MxDeviceDef;

/* ---- A CPU thread runtime ---------------------------------------------- */

/* Since 1.4. The CPU thread runtime a plugin's kernels run on (OpenMP for
 * oneDNN), offered for the host's parallel loops: the built-in kernels'
 * loops and every plugin's parallel_for then run on the same threads,
 * instead of on a second pool whose threads compete with the runtime's for
 * the cores. */
typedef struct MxThreadRuntimeDef {
  size_t struct_size;
  void* user_data;
  /* Calls body(arg, begin, end) over ranges that together cover [0,
   * chunks) exactly once (one chunk per call spreads them best), on at
   * most `chunks` threads (the calling thread among them), and returns
   * when all calls have returned. body never throws. Called from any
   * thread, also from inside body (a nested loop may run on the calling
   * thread alone, as one call over all chunks). */
  void (*run)(void* user_data, int64_t chunks, MxParallelBody body,
              void* arg);
} MxThreadRuntimeDef;

/* ---- The host and the entry point -------------------------------------- */

/* What the host offers a plugin during mx_plugin_init. Each register_*
 * returns a status (a name already taken is MX_STATUS_ALREADY_EXISTS; a
 * struct smaller than version 1.0's is MX_STATUS_INVALID_ARGUMENT). A
 * failed mx_plugin_init leaves nothing registered. */
typedef struct MxHostApi {
  size_t struct_size;
  int32_t abi_major;
  int32_t abi_minor;
  void* registrar; /* First argument of every register_* call. */
  MxStatusCode (*register_kernel)(void* registrar, const MxKernelDef* def,
                                  MxStatus* status);
  MxStatusCode (*register_op)(void* registrar, const MxOpDef* def,
                              MxStatus* status);
  MxStatusCode (*register_subgraph_property)(void* registrar,
                                             const MxSubgraphPropertyDef* def,
                                             MxStatus* status);
  /* *dev_type receives the device type code of the new device. */
  MxStatusCode (*register_device)(void* registrar, const MxDeviceDef* def,
                                  int32_t* dev_type, MxStatus* status);
  /* Since 1.4. Offers a thread runtime. The first one offered in the
   * process is used, from the moment its plugin's mx_plugin_init has
   * returned successfully; later offers (also a plugin's second) are
   * accepted and left unused. */
  MxStatusCode (*register_thread_runtime)(void* registrar,
                                          const MxThreadRuntimeDef* def,
                                          MxStatus* status);
} MxHostApi;

/* What a plugin says about itself; filled before anything is registered. */
typedef struct MxPluginDesc {
  size_t struct_size;
  const char* name;  /* Required; static storage. */
  int32_t abi_major; /* MX_PLUGIN_ABI_MAJOR as the plugin was built. */
  int32_t abi_minor;
} MxPluginDesc;

/* The entry point every plugin exports (as a function, "C" linkage,
 * default visibility). */
#define MX_PLUGIN_INIT_SYMBOL "mx_plugin_init"
typedef MxStatusCode (*MxPluginInitFn)(const MxHostApi* host,
                                       MxPluginDesc* desc, MxStatus* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_H_ */
