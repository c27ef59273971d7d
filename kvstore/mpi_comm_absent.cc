// Built when Open MPI was not found (deps.bzl's local_mpi).
#include "base/error.h"
#include "kvstore/comm.h"

namespace mx {
namespace kvstore {

std::unique_ptr<Comm> MakeMpiComm() {
  throw ConfigError(
      "KVStore dist_sync: mxcore was built without Open MPI (install "
      "openmpi-bin and libopenmpi-dev, e.g. with tools/setup.sh, and "
      "rebuild)");
}

}  // namespace kvstore
}  // namespace mx
