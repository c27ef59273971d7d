// The "gpu" device type of the CUDA plugin: memory from cudaMalloc (the
// host's Storage pools freed blocks per size class, so the hot path does
// not reach cudaMalloc/cudaFree), one non-blocking CUDA stream per engine
// worker, CUDA events, and copies with cudaMemcpyAsync.
//
// Without a usable GPU the device registers with a count of 0: using
// gpu(0) is then a typed error, and NoDeviceReason() says why.
#ifndef MXCORE_BACKENDS_CUDA_CUDA_DEVICE_H_
#define MXCORE_BACKENDS_CUDA_CUDA_DEVICE_H_

#include <string>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_cuda {

class CudaDevice : public mxplugin::Device {
 public:
  std::string name() const override { return "gpu"; }
  int Count() override;
  void* Alloc(int dev_id, size_t bytes) override;
  void Free(int dev_id, void* ptr, size_t bytes) override;
  void* CreateStream(int dev_id) override;
  void DestroyStream(int dev_id, void* stream) override;
  void Synchronize(int dev_id, void* stream) override;
  void* CreateEvent(int dev_id) override;
  void DestroyEvent(int dev_id, void* event) override;
  void RecordEvent(int dev_id, void* event, void* stream) override;
  void WaitEvent(int dev_id, void* event, void* stream) override;
  bool QueryEvent(int dev_id, void* event) override;
  void SynchronizeEvent(int dev_id, void* event) override;
  void Copy(int dev_id, void* dst, const void* src, size_t bytes, int direction,
            void* stream) override;
  void Memset(int dev_id, void* dst, int value, size_t bytes,
              void* stream) override;
  // Kernels keep their handles and scratch memory per stream
  // (cuda_util.h), so the engine may launch on the pushing thread.
  bool LaunchesOnAnyThread() const override { return true; }
};

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_CUDA_DEVICE_H_
