// Failure modes of the dist_sync KVStore, run by mpirun_fault_test.sh:
//   dist_fault_test exit   rank 1 exits (code 3) after the first
//                          reduction; the other ranks wait in the second.
//   dist_fault_test stall  rank 1 stops calling the store for 20 s; the
//                          others fail with MX_KVSTORE_TIMEOUT's error,
//                          naming rank 1 as the one that never waited.
//   dist_fault_test abort  rank 1 calls KVStore::Abort after the first
//                          reduction; the others fail at once naming it.
// Each rank prints what happened to it; the script checks the outcome.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "base/error.h"
#include "kvstore/kvstore.h"

int main(int argc, char** argv) {
  using mx::NDArray;
  const std::string mode = argc > 1 ? argv[1] : "";
  auto kv = mx::kvstore::KVStore::Create("dist_sync");
  const int rank = kv->rank();
  NDArray a = NDArray::FromVector<float>({4}, {1, 2, 3, 4});
  kv->PushPull({0}, {a}, {a});
  a.WaitToRead();
  std::printf("rank %d: first reduction done\n", rank);
  std::fflush(stdout);
  if (rank == 1) {
    if (mode == "exit") {
      std::printf("rank 1: exiting with code 3\n");
      std::fflush(stdout);
      std::_Exit(3);
    }
    if (mode == "abort") {
      kv->Abort("gave up on purpose");
      std::printf("rank 1: aborted\n");
      std::fflush(stdout);
      // Lets the others report before mpirun ends the job.
      std::this_thread::sleep_for(std::chrono::seconds(5));
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(20));
    return 0;
  }
  try {
    kv->PushPull({0}, {a}, {a});
    a.WaitToRead();
    std::printf("rank %d: second reduction done (unexpected)\n", rank);
    return 0;
  } catch (const mx::Error& e) {
    std::printf("rank %d: error: %s\n", rank, e.what());
    std::fflush(stdout);
    return 2;
  }
}
