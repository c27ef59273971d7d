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

// Every op's declared attributes (Op::params), in registry order.
template <typename Fn>
void ForEachRegisteredParam(Fn fn) {
  for (const std::string& op : OpRegistry::Get()->ListNames()) {
    for (const Op::ParamInfo& p : OpRegistry::Get()->Lookup(op).params()) {
      fn(p);
    }
  }
}

// `fixed`, then what `extra` adds that `fixed` lacks (sorted, once): the
// fixed lists keep their positions, so the committed seed corpora decode
// as they were written, and ops added later are fuzzed without anyone
// remembering to list their attributes.
inline std::vector<std::string> Extended(std::vector<std::string> fixed,
                                         std::vector<std::string> extra) {
  std::sort(extra.begin(), extra.end());
  extra.erase(std::unique(extra.begin(), extra.end()), extra.end());
  for (std::string& v : extra) {
    if (std::find(fixed.begin(), fixed.end(), v) == fixed.end()) {
      fixed.push_back(std::move(v));
    }
  }
  return fixed;
}

// The attribute names and words the op_attrs corpus indexes: never
// reordered (tables, kept packed).
// clang-format off
inline const std::vector<std::string>& FixedAttrKeys() {
  static const std::vector<std::string> keys = {
      "a_max", "a_min", "act_type", "axes", "axis", "begin", "beta1", "beta2",
      "clip_gradient", "constant_value", "count", "count_include_pad", "ctx",
      "cudnn_off", "cudnn_tune", "depth", "dilate", "dim", "dtype", "end",
      "eps", "epsilon", "exclude", "fix_gamma", "flatten", "global_pool",
      "high", "infer_range", "input_dim", "k", "keepdims", "kernel", "layout",
      "lazy_update", "loc", "low", "lower_bound", "lr", "mode", "momentum",
      "no_bias", "normalize", "num_args", "num_filter", "num_group",
      "num_hidden", "num_outputs", "off_value", "on_value", "output_dim",
      "output_mean_var", "p", "pad", "pad_width", "pool_type",
      "pooling_convention", "repeat", "rescale_grad", "reverse", "scalar",
      "scale", "shape", "slope", "sparse_grad", "squeeze_axis", "start",
      "step", "stop", "stride", "temperature", "transpose_a", "transpose_b",
      "upper_bound", "use_global_stats", "value", "wd", "workspace",
      "__shape__", "__dtype__", "__ctx_group__", "reps", "ret_typ", "is_ascend",
      "lhs_begin", "rhs_begin", "lhs_axes", "rhs_axes", "adj", "target_shape",
      "grad_scale", "ignore_label", "multi_output", "use_ignore",
      "preserve_shape", "normalization", "out_grad", "smooth_alpha",
      "output_size", "overlap_thresh", "valid_thresh", "topk", "coord_start",
      "score_index", "id_index", "background_id", "force_suppress",
      "in_format", "out_format", "pooled_size", "spatial_scale",
      "sample_ratio", "position_sensitive", "aligned", "repeats",
      "use_sequence_length", "size"};
  return keys;
}

inline const std::vector<std::string>& FixedAttrWords() {
  static const std::vector<std::string> words = {
      "always", "avg", "clip", "constant", "edge", "elu", "full", "gelu",
      "leaky", "lp", "max", "prelu", "raise", "reflect", "rrelu", "same",
      "selu", "sum", "training", "valid", "wrap", "relu", "sigmoid", "tanh",
      "softrelu", "softsign", "NCHW", "NCW", "NCDHW", "NHWC", "float32",
      "float64", "float16", "uint8", "int8", "int32", "int64", "bool", "True",
      "False", "true", "false", "1", "0", "None", "none", "", "cpu", "cpu(0)",
      "gpu(0)", "null", "value", "indices", "both", "mask", "batch",
      "instance", "channel", "spatial", "corner", "center"};
  return words;
}
// clang-format on

// Every attribute name: the fixed list, then every other name an op's
// parameter schema declares.
inline const std::vector<std::string>& AttrKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> declared;
    ForEachRegisteredParam(
        [&](const Op::ParamInfo& p) { declared.push_back(p.name); });
    return Extended(FixedAttrKeys(), std::move(declared));
  }();
  return keys;
}

// Words (enum choices, dtypes, booleans) that are never sizes: the fixed
// list, then every other allowed value of an op's enumerated attributes.
inline const std::vector<std::string>& AttrWords() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> choices;
    ForEachRegisteredParam([&](const Op::ParamInfo& p) {
      choices.insert(choices.end(), p.choices.begin(), p.choices.end());
    });
    return Extended(FixedAttrWords(), std::move(choices));
  }();
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
