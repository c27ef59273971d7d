"""PyTorch eager on the same GPU workloads as backends/cuda/cuda_benchmark.

Same math as mxcore's defaults: float32 without TF32. Each timed call is
followed by a synchronize, as each mxcore iteration waits for its result.

    python3 tools/gpu/torch_peer.py
"""
import time

import torch


def timed(fn, min_time=1.0):
    fn()
    torch.cuda.synchronize()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_time:
        fn()
        n += 1
    return (time.perf_counter() - start) / n


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda:0")
    print("torch", torch.__version__, torch.cuda.get_device_name(0),
          "cuDNN", torch.backends.cudnn.version())

    a = torch.randn(4096, 4096, device=dev)
    w = torch.randn(4096, 4096, device=dev)

    def gemm():
        torch.nn.functional.linear(a, w)
        torch.cuda.synchronize()
    t = timed(gemm)
    print(f"torch linear 4096^3 fp32: {t * 1e3:.3f} ms "
          f"({2 * 4096 ** 3 / t / 1e12:.2f} TFLOP/s)")

    x = torch.randn(64, 64, 56, 56, device=dev)
    k = torch.randn(64, 64, 3, 3, device=dev)

    def conv():
        torch.nn.functional.conv2d(x, k, padding=1)
        torch.cuda.synchronize()
    print(f"torch conv2d 3x3 b64 64->64 56x56 fp32: {timed(conv) * 1e3:.3f} ms")

    p = torch.randn(1, device=dev)
    q = torch.randn(1, device=dev)

    def add_waited():
        _ = p + q
        torch.cuda.synchronize()
    print(f"torch 1-element add + synchronize: {timed(add_waited) * 1e6:.2f} us")

    def add_stream():
        for _ in range(1000):
            _ = p + q
        torch.cuda.synchronize()
    print(f"torch 1-element add in a stream of 1000: "
          f"{timed(add_stream) * 1e6 / 1000:.2f} us per op")

    line = torch.rand(1 << 24, device=dev) * 2 - 1

    def cumsum_line():
        torch.cumsum(line, 0)
        torch.cuda.synchronize()
    print(f"torch cumsum of one line of 2^24 fp32: "
          f"{timed(cumsum_line) * 1e6:.1f} us")

    train_steps(dev)


def train_steps(dev):
    """The CNN at batch 64 and ResNet-18 at batch 32, SGD momentum."""
    import torchvision

    cnn = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(3136, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 10)).to(dev)
    for name, net, shape, batch in [
            ("CNN", cnn, (1, 28, 28), 64),
            ("ResNet-18", torchvision.models.resnet18(num_classes=10).to(dev),
             (3, 224, 224), 32)]:
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        x = torch.rand(batch, *shape, device=dev)
        y = torch.randint(0, 10, (batch,), device=dev)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=False)
            loss_fn(net(x), y).backward()
            opt.step()
            torch.cuda.synchronize()
        for _ in range(3):
            step()
        print(f"torch {name} train step batch {batch}: "
              f"{timed(step) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
