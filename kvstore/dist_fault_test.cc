// Failure modes of the dist_sync KVStore, run by mpirun_fault_test.sh with
// 3 ranks and MX_KVSTORE_TIMEOUT=3:
//   exit           rank 1 exits (code 3) after the first reduction; the
//                  other ranks wait in the second.
//   stall          rank 1 stops calling the store for 8 s; the others fail
//                  with the timeout error naming rank 1, and rank 1, back
//                  in the store, fails naming the ranks that gave up.
//   abort          rank 1 calls KVStore::Abort while idle; the others fail
//                  at once naming it and its reason.
//   abort_waiting  rank 1 calls Abort while its own second reduction waits
//                  for the others: that reduction fails on rank 1, and the
//                  others fail naming rank 1 when they join.
// Each rank prints what happened to it; the script checks the outcome.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "base/error.h"
#include "kvstore/kvstore.h"

namespace {

void Sleep(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

void Say(int rank, const std::string& what) {
  std::printf("rank %d: %s\n", rank, what.c_str());
  std::fflush(stdout);
}

// The second reduction; returns the error it ended with ("" if none).
std::string Reduce(mx::kvstore::KVStore* kv, mx::NDArray* a) {
  try {
    kv->PushPull({0}, {*a}, {*a});
    a->WaitToRead();
    return "";
  } catch (const mx::Error& e) {
    return e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  using mx::NDArray;
  const std::string mode = argc > 1 ? argv[1] : "";
  auto kv = mx::kvstore::KVStore::Create("dist_sync");
  const int rank = kv->rank();
  NDArray a = NDArray::FromVector<float>({4}, {1, 2, 3, 4});
  kv->PushPull({0}, {a}, {a});
  a.WaitToRead();
  Say(rank, "first reduction done");
  if (rank == 1) {
    if (mode == "exit") {
      Say(rank, "exiting with code 3");
      std::_Exit(3);
    }
    if (mode == "abort") {
      kv->Abort("gave up on purpose");
      Say(rank, "aborted");
      Sleep(5);  // Lets the others report before mpirun ends the job.
      return 1;
    }
    if (mode == "abort_waiting") {
      kv->PushPull({0}, {a}, {a});  // The others join 2 s later.
      Sleep(0.5);
      kv->Abort("gave up while waiting");
      const std::string error = Reduce(kv.get(), &a);
      Say(rank, "own reduction: " + (error.empty() ? "done" : error));
      Sleep(5);
      return 1;
    }
    // stall: the others time out after 3 s and give up by about 5 s (2 s
    // of grace for each other's notices).
    Sleep(8);
    const std::string error = Reduce(kv.get(), &a);
    Say(rank, "back: " + (error.empty() ? "done (unexpected)" : error));
    return 2;
  }
  if (mode == "abort_waiting") Sleep(2);
  const std::string error = Reduce(kv.get(), &a);
  if (error.empty()) {
    Say(rank, "second reduction done (unexpected)");
    return 0;
  }
  Say(rank, "error: " + error);
  if (mode == "stall") Sleep(8);  // Rank 1 comes back at 8 s and reports.
  return 2;
}
