#include "backends/cuda/cuda_device.h"

#include <cuda_runtime.h>

#include "backends/cuda/cuda_util.h"

namespace mx_cuda {
namespace {

std::string Gpu(int dev_id) { return "gpu(" + std::to_string(dev_id) + ")"; }

cudaStream_t AsStream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

int CudaDevice::Count() { return DeviceCount(); }

void* CudaDevice::Alloc(int dev_id, size_t bytes) {
  UseDevice(dev_id);
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err == cudaSuccess) return ptr;
  cudaGetLastError();
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  cudaGetLastError();
  throw mxplugin::Error(
      err == cudaErrorMemoryAllocation ? MX_STATUS_OUT_OF_MEMORY
                                       : MX_STATUS_RUNTIME_ERROR,
      Gpu(dev_id) + ": cannot allocate " + std::to_string(bytes) + " bytes (" +
          cudaGetErrorString(err) + "; " +
          std::to_string(total_bytes - free_bytes) + " of " +
          std::to_string(total_bytes) + " bytes of the device in use)");
}

void CudaDevice::Free(int dev_id, void* ptr, size_t) {
  UseDevice(dev_id);
  CheckCuda(cudaFree(ptr), Gpu(dev_id) + ": cudaFree");
}

void* CudaDevice::CreateStream(int dev_id) {
  UseDevice(dev_id);
  cudaStream_t s = nullptr;
  CheckCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
            Gpu(dev_id) + ": cudaStreamCreate");
  return s;
}

void CudaDevice::DestroyStream(int dev_id, void* stream) {
  UseDevice(dev_id);
  CheckCuda(cudaStreamDestroy(AsStream(stream)),
            Gpu(dev_id) + ": cudaStreamDestroy");
}

void CudaDevice::Synchronize(int dev_id, void* stream) {
  UseDevice(dev_id);
  // Kernel faults (illegal addresses, failed launches) surface here, at the
  // end of the operation that caused them; the engine reports them at the
  // next wait.
  CheckCuda(cudaStreamSynchronize(AsStream(stream)),
            Gpu(dev_id) + ": kernel execution");
}

void* CudaDevice::CreateEvent(int dev_id) {
  UseDevice(dev_id);
  cudaEvent_t e = nullptr;
  CheckCuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
            Gpu(dev_id) + ": cudaEventCreate");
  return e;
}

void CudaDevice::DestroyEvent(int dev_id, void* event) {
  UseDevice(dev_id);
  CheckCuda(cudaEventDestroy(static_cast<cudaEvent_t>(event)),
            Gpu(dev_id) + ": cudaEventDestroy");
}

void CudaDevice::RecordEvent(int dev_id, void* event, void* stream) {
  UseDevice(dev_id);
  CheckCuda(cudaEventRecord(static_cast<cudaEvent_t>(event), AsStream(stream)),
            Gpu(dev_id) + ": cudaEventRecord");
}

void CudaDevice::WaitEvent(int dev_id, void* event, void* stream) {
  UseDevice(dev_id);
  CheckCuda(
      cudaStreamWaitEvent(AsStream(stream), static_cast<cudaEvent_t>(event), 0),
      Gpu(dev_id) + ": cudaStreamWaitEvent");
}

bool CudaDevice::QueryEvent(int dev_id, void* event) {
  UseDevice(dev_id);
  const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  CheckCuda(err, Gpu(dev_id) + ": cudaEventQuery");
  return true;
}

void CudaDevice::SynchronizeEvent(int dev_id, void* event) {
  UseDevice(dev_id);
  CheckCuda(cudaEventSynchronize(static_cast<cudaEvent_t>(event)),
            Gpu(dev_id) + ": cudaEventSynchronize");
}

void CudaDevice::Copy(int dev_id, void* dst, const void* src, size_t bytes,
                      int direction, void* stream) {
  if (bytes == 0) return;
  UseDevice(dev_id);
  const cudaMemcpyKind kind = direction == 0   ? cudaMemcpyHostToDevice
                              : direction == 1 ? cudaMemcpyDeviceToHost
                                               : cudaMemcpyDeviceToDevice;
  CheckCuda(
      cudaMemcpyAsync(dst, src, bytes, kind, AsStream(stream)),
      Gpu(dev_id) + ": cudaMemcpyAsync of " + std::to_string(bytes) + " bytes");
}

void CudaDevice::Memset(int dev_id, void* dst, int value, size_t bytes,
                        void* stream) {
  if (bytes == 0) return;
  UseDevice(dev_id);
  CheckCuda(cudaMemsetAsync(dst, value, bytes, AsStream(stream)),
            Gpu(dev_id) + ": cudaMemsetAsync");
}

}  // namespace mx_cuda
