// Where tests find the project's shared test data (../shared next to the
// source tree; never committed into the repository).
//
//   const std::string dir = mx::testing::MxnetModelsDir();
//   ReadTextFile(dir + "/resnet18_v1-symbol.json");
//
// A test using it lists "//:WORKSPACE" in its data: under bazel test that
// file links back into the source tree.
#ifndef MXCORE_TESTING_SHARED_DATA_H_
#define MXCORE_TESTING_SHARED_DATA_H_

#include <string>

namespace mx {
namespace testing {

// MX_MXNET_MODELS_DIR, else ../shared/mxnet-models beside the source tree
// ("" when the tree cannot be found).
std::string MxnetModelsDir();

// The whole file; "" when it cannot be read.
std::string ReadTextFile(const std::string& path);

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_SHARED_DATA_H_
