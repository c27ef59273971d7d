// main() for fuzz targets built without libFuzzer (gcc, and the normal
// sanitizer configurations): replays every file under the given paths
// through LLVMFuzzerTestOneInput. This is how each target's seed corpus is
// a regression test in `bazel test //...`.
//
//   replay [--mutate=N] PATH...   (PATH: a file or a directory of files)
//
// With --mutate=N and a target that defines LLVMFuzzerCustomMutator, each
// file is also mutated N times (deterministic seeds) and every mutant is
// run, so the structure-aware mutator is tested too. Exits 1 when no file
// was found; a finding aborts, as under libFuzzer.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc,
                                                          char*** argv);
extern "C" __attribute__((weak)) size_t LLVMFuzzerCustomMutator(
    uint8_t* data, size_t size, size_t max_size, unsigned int seed);

// libFuzzer's own byte-level mutator, which custom mutators fall back to.
// Without libFuzzer: a small deterministic stand-in (flip, insert, erase).
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size,
                                   size_t max_size) {
  static uint32_t state = 12345;
  state = state * 1103515245u + 12345u;
  uint32_t r = state >> 8;
  switch (r % 3) {
    case 0:
      if (size > 0) data[r % size] ^= static_cast<uint8_t>(1u << (r % 8));
      return size;
    case 1:
      if (size < max_size) {
        size_t at = size == 0 ? 0 : r % (size + 1);
        std::memmove(data + at + 1, data + at, size - at);
        data[at] = static_cast<uint8_t>(r >> 16);
        return size + 1;
      }
      return size;
    default:
      if (size > 0) {
        size_t at = r % size;
        std::memmove(data + at, data + at + 1, size - at - 1);
        return size - 1;
      }
      return size;
  }
}

namespace {

void Collect(const std::string& path, std::vector<std::string>* files) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "replay: cannot stat %s\n", path.c_str());
    std::exit(1);
  }
  if (!S_ISDIR(st.st_mode)) {
    files->push_back(path);
    return;
  }
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    Collect(path + "/" + e->d_name, files);
  }
  closedir(dir);
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void Run(const std::vector<uint8_t>& bytes) {
  // A heap copy of exactly the input's size, so ASan sees overreads.
  uint8_t* copy = new uint8_t[bytes.size() + (bytes.empty() ? 1 : 0)];
  std::copy(bytes.begin(), bytes.end(), copy);
  LLVMFuzzerTestOneInput(copy, bytes.size());
  delete[] copy;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int mutate = 0;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--mutate=", 9) == 0) {
      mutate = std::atoi(argv[i] + 9);
    } else {
      Collect(argv[i], &files);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files\n");
    return 1;
  }
  size_t runs = 0;
  for (const std::string& f : files) {
    std::vector<uint8_t> bytes = ReadFile(f);
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), bytes.size());
    Run(bytes);
    ++runs;
    if (mutate > 0 && LLVMFuzzerCustomMutator) {
      const size_t max_size = std::max<size_t>(4096, 2 * bytes.size());
      for (int seed = 1; seed <= mutate; ++seed) {
        std::vector<uint8_t> buf(bytes);
        buf.resize(max_size);
        size_t n = LLVMFuzzerCustomMutator(buf.data(), bytes.size(), max_size,
                                           static_cast<unsigned>(seed));
        if (n > max_size) {
          std::fprintf(stderr, "replay: mutator returned %zu > %zu\n", n,
                       max_size);
          return 1;
        }
        buf.resize(n);
        Run(buf);
        ++runs;
      }
    }
  }
  std::fprintf(stderr, "replay: %zu files, %zu runs, no findings\n",
               files.size(), runs);
  return 0;
}
