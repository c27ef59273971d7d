#include "testing/shared_data.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace mx {
namespace testing {

std::string MxnetModelsDir() {
  if (const char* dir = std::getenv("MX_MXNET_MODELS_DIR")) return dir;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string link =
      std::string(srcdir ? srcdir : ".") + "/mxcore/WORKSPACE";
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  const std::string root(resolved);
  return root.substr(0, root.rfind('/')) + "/../shared/mxnet-models";
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace testing
}  // namespace mx
