// Attribute keys and values the structure-aware fuzz targets draw from:
// every parameter name the registered ops declare (Op::params), the enum
// choices they accept, and values around the edges
// (0, negatives, None, nan, inf, arity limits). Unknown keys and junk values
// are generated too, by the targets themselves.
#ifndef MXCORE_FUZZ_VOCAB_H_
#define MXCORE_FUZZ_VOCAB_H_

#include <algorithm>
#include <string>
#include <vector>

#include "graph/op.h"

namespace mx {
namespace fuzz {

// `fixed`, then what the registry adds that `fixed` lacks (sorted): the
// fixed lists keep their positions, so the committed seed corpora decode
// as they were written, and ops added later are fuzzed without anyone
// remembering to list their attributes.
inline std::vector<std::string> WithRegistry(
    std::vector<std::string> fixed, std::vector<std::string> from_registry) {
  std::sort(from_registry.begin(), from_registry.end());
  from_registry.erase(std::unique(from_registry.begin(), from_registry.end()),
                      from_registry.end());
  for (std::string& v : from_registry) {
    if (std::find(fixed.begin(), fixed.end(), v) == fixed.end()) {
      fixed.push_back(std::move(v));
    }
  }
  return fixed;
}

// Every attribute name: a fixed list (the op_attrs corpus indexes it),
// then every other name an op's parameter schema declares.
inline const std::vector<std::string>& AttrKeys() {
  static const std::vector<std::string> keys = WithRegistry(
      {"a_max",
       "a_min",
       "act_type",
       "axes",
       "axis",
       "begin",
       "beta1",
       "beta2",
       "clip_gradient",
       "constant_value",
       "count",
       "count_include_pad",
       "ctx",
       "cudnn_off",
       "cudnn_tune",
       "depth",
       "dilate",
       "dim",
       "dtype",
       "end",
       "eps",
       "epsilon",
       "exclude",
       "fix_gamma",
       "flatten",
       "global_pool",
       "high",
       "infer_range",
       "input_dim",
       "k",
       "keepdims",
       "kernel",
       "layout",
       "lazy_update",
       "loc",
       "low",
       "lower_bound",
       "lr",
       "mode",
       "momentum",
       "no_bias",
       "normalize",
       "num_args",
       "num_filter",
       "num_group",
       "num_hidden",
       "num_outputs",
       "off_value",
       "on_value",
       "output_dim",
       "output_mean_var",
       "p",
       "pad",
       "pad_width",
       "pool_type",
       "pooling_convention",
       "repeat",
       "rescale_grad",
       "reverse",
       "scalar",
       "scale",
       "shape",
       "slope",
       "sparse_grad",
       "squeeze_axis",
       "start",
       "step",
       "stop",
       "stride",
       "temperature",
       "transpose_a",
       "transpose_b",
       "upper_bound",
       "use_global_stats",
       "value",
       "wd",
       "workspace",
       "__shape__",
       "__dtype__",
       "__ctx_group__",
       "reps",
       "ret_typ",
       "is_ascend",
       "lhs_begin",
       "rhs_begin",
       "lhs_axes",
       "rhs_axes",
       "adj",
       "target_shape",
       "grad_scale",
       "ignore_label",
       "multi_output",
       "use_ignore",
       "preserve_shape",
       "normalization",
       "out_grad",
       "smooth_alpha",
       "output_size",
       "overlap_thresh",
       "valid_thresh",
       "topk",
       "coord_start",
       "score_index",
       "id_index",
       "background_id",
       "force_suppress",
       "in_format",
       "out_format",
       "pooled_size",
       "spatial_scale",
       "sample_ratio",
       "position_sensitive",
       "aligned",
       "repeats",
       "use_sequence_length",
       "size"},
      [] {
        std::vector<std::string> names;
        for (const std::string& op : OpRegistry::Get()->ListNames()) {
          for (const auto& p : OpRegistry::Get()->Lookup(op).params()) {
            names.push_back(p.name);
          }
        }
        return names;
      }());
  return keys;
}

// Words (enum choices, dtypes, booleans) that are never sizes: a fixed
// list, then every other allowed value of an op's enumerated attributes.
inline const std::vector<std::string>& AttrWords() {
  static const std::vector<std::string> words = WithRegistry(
      {"always",   "avg",      "clip",     "constant", "edge",    "elu",
       "full",     "gelu",     "leaky",    "lp",       "max",     "prelu",
       "raise",    "reflect",  "rrelu",    "same",     "selu",    "sum",
       "training", "valid",    "wrap",     "relu",     "sigmoid", "tanh",
       "softrelu", "softsign", "NCHW",     "NCW",      "NCDHW",   "NHWC",
       "float32",  "float64",  "float16",  "uint8",    "int8",    "int32",
       "int64",    "bool",     "True",     "False",    "true",    "false",
       "1",        "0",        "None",     "none",     "",        "cpu",
       "cpu(0)",   "gpu(0)",   "null",     "value",    "indices", "both",
       "mask",     "batch",    "instance", "channel",  "spatial", "corner",
       "center"},
      [] {
        std::vector<std::string> choices;
        for (const std::string& op : OpRegistry::Get()->ListNames()) {
          for (const auto& p : OpRegistry::Get()->Lookup(op).params()) {
            choices.insert(choices.end(), p.choices.begin(), p.choices.end());
          }
        }
        return choices;
      }());
  return words;
}

// Values that may be huge or malformed: for shape inference only.
inline const std::vector<std::string>& WildValues() {
  static const std::vector<std::string> values = {"2147483647",
                                                  "2147483648",
                                                  "-2147483648",
                                                  "65536",
                                                  "65537",
                                                  "4294967296",
                                                  "9223372036854775807",
                                                  "-9223372036854775808",
                                                  "99999999999999999999",
                                                  "4611686018427387904",
                                                  "1e300",
                                                  "-1e300",
                                                  "nan",
                                                  "-nan",
                                                  "inf",
                                                  "-inf",
                                                  "1e-300",
                                                  "(4611686018427387904,4)",
                                                  "(2147483647,2147483647)",
                                                  "(-2,4611686018427387904,4)",
                                                  "(0,0,0,0)",
                                                  "(None,1)",
                                                  "(1,None)",
                                                  "((1,2),(3,4))",
                                                  "[",
                                                  "(",
                                                  ")",
                                                  "(,)",
                                                  "(1,,2)",
                                                  "0x10",
                                                  "1.5",
                                                  "-0",
                                                  "+1",
                                                  " 1",
                                                  "1 ",
                                                  "\xff\xfe",
                                                  "{}",
                                                  "[]"};
  return values;
}

// Registered op names, sorted, so an index picks the same op every run.
inline const std::vector<std::string>& OpNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = OpRegistry::Get()->ListNames();
    std::sort(n.begin(), n.end());
    return n;
  }();
  return names;
}

}  // namespace fuzz
}  // namespace mx

#endif  // MXCORE_FUZZ_VOCAB_H_
