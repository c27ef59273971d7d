// The op table's building blocks (op_table.cc), shared by the files that
// add its cases: op_cases_device.cc (the elementwise family, shape ops,
// fills, random numbers, optimizer updates, layout ops),
// op_cases_nn.cc (indexing, norms, losses, deconvolution),
// op_cases_rnn.cc (the fused RNN op) and op_cases_numpy.cc (MXNet 2's
// NumPy-interface elementwise ops).
#ifndef MXCORE_TESTS_PLUGIN_CONFORMANCE_OP_CASES_H_
#define MXCORE_TESTS_PLUGIN_CONFORMANCE_OP_CASES_H_

#include <functional>
#include <string>
#include <vector>

#include "tests/plugin_conformance/conformance.h"

namespace mx {
namespace conformance {
namespace cases {

using Shapes = std::vector<TShape>;

// The same shape list for every input of an n-ary elementwise op (four
// variants).
std::function<Shapes(int)> Same(int arity);
// Variant v's shapes are variants[v].
std::function<Shapes(int)> Fixed(std::vector<Shapes> variants);
// An elementwise op on inputs uniform in [lo, hi).
OpCase Unary(const std::string& op, double lo = -1, double hi = 1);
OpCase Binary(const std::string& op, double lo = -1, double hi = 1);
// A scalar op, with scalars 0.5, 2 and -3.
OpCase Scalar(const std::string& op, double lo = -1, double hi = 1);
OpCase Shaped(const std::string& op, std::vector<Shapes> variants,
              std::vector<AttrDict> attrs);
OpCase BatchNorm(bool train);

void AddDeviceCases(std::vector<OpCase>* t);  // op_cases_device.cc
void AddLayoutCases(std::vector<OpCase>* t);  // op_cases_device.cc
void AddIndexCases(std::vector<OpCase>* t);   // op_cases_nn.cc
void AddNnCases(std::vector<OpCase>* t);      // op_cases_nn.cc
void AddRnnCases(std::vector<OpCase>* t);     // op_cases_rnn.cc
void AddNumpyCases(std::vector<OpCase>* t);   // op_cases_numpy.cc

}  // namespace cases
}  // namespace conformance
}  // namespace mx

#endif  // MXCORE_TESTS_PLUGIN_CONFORMANCE_OP_CASES_H_
