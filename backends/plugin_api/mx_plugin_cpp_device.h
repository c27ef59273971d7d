// Part of mx_plugin_cpp.h (include that): a device a plugin registers
// (memory, streams, events, copies), as virtual functions.
#ifndef MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_DEVICE_H_
#define MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_DEVICE_H_

#include <cstddef>
#include <string>

namespace mxplugin {

// ---- Devices ----

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  virtual int Count() = 0;
  virtual void* Alloc(int dev_id, size_t bytes) = 0;
  virtual void Free(int dev_id, void* ptr, size_t bytes) = 0;
  virtual void* CreateStream(int dev_id) = 0;
  virtual void DestroyStream(int dev_id, void* stream) = 0;
  virtual void Synchronize(int dev_id, void* stream) = 0;
  virtual void* CreateEvent(int dev_id) = 0;
  virtual void DestroyEvent(int dev_id, void* event) = 0;
  virtual void RecordEvent(int dev_id, void* event, void* stream) = 0;
  virtual void WaitEvent(int dev_id, void* event, void* stream) = 0;
  virtual bool QueryEvent(int dev_id, void* event) = 0;
  // direction: 0 host->device, 1 device->host, 2 device->device.
  virtual void Copy(int dev_id, void* dst, const void* src, size_t bytes,
                    int direction, void* stream) = 0;
  virtual void Memset(int dev_id, void* dst, int value, size_t bytes,
                      void* stream) = 0;
  // Blocks until the event is reached; by default polls QueryEvent.
  virtual void SynchronizeEvent(int dev_id, void* event) {
    while (!QueryEvent(dev_id, event)) {
    }
  }
  // Whether kernels may run on any thread, one at a time per stream, on
  // streams lent to threads in turn (MxDeviceDef.launch_on_any_thread).
  virtual bool LaunchesOnAnyThread() const { return false; }
};

}  // namespace mxplugin

#endif  // MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_DEVICE_H_
