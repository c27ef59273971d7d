// LibTorch's side of tools/bench/lstm_compare.sh: the same 2-layer LSTM
// (T 35, N 32, input and hidden 256), inference under NoGradGuard and a
// train step (forward, backward from a fixed head gradient into the
// parameters and the input). Prints "libtorch <metric> <median ms>".
// Not part of mxcore's build: needs Debian's libtorch-dev.
//   g++ -std=c++17 -O2 lstm_torch_peer.cc -I/usr/include/torch/csrc/api/include
//       -ltorch_cpu -lc10 -o lstm_torch_peer && ./lstm_torch_peer THREADS
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

// Median milliseconds of `reps` calls after `warmup` untimed ones.
double MedianMs(const std::function<void()>& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  const int64_t steps = 35, batch = 32, size = 256;
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(size, size).num_layers(2));
  const torch::Tensor x0 = torch::rand({steps, batch, size}) * 2 - 1;
  const torch::Tensor head = torch::rand({steps, batch, size}) * 2 - 1;
  const double infer = MedianMs(
      [&] {
        torch::NoGradGuard no_grad;
        auto out = std::get<0>(lstm->forward(x0));
      },
      3, 30);
  torch::Tensor x = x0.clone().set_requires_grad(true);
  const double train = MedianMs(
      [&] {
        auto out = std::get<0>(lstm->forward(x));
        out.backward(head);
      },
      3, 30);
  std::printf("libtorch lstm_infer_ms %.3f\n", infer);
  std::printf("libtorch lstm_train_ms %.3f\n", train);
  return 0;
}
