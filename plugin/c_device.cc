// Device types registered through the C plugin ABI: memory (under the
// host's pool), per-worker streams, and copies between host and device.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/context.h"
#include "base/error.h"
#include "engine/engine.h"
#include "ndarray/ndarray.h"
#include "ndarray/storage.h"
#include "plugin/c_util.h"
#include "plugin/plugin.h"
#include "plugin/registrar.h"

namespace mx {
namespace plugin {
namespace {

// Copied from the plugin's MxDeviceDef.
struct CDeviceDef {
  std::string who, name;
  // Function pointers and user_data; struct_size covers exactly the
  // functions present (1.0 plugins: no memset).
  MxDeviceDef fns;

  std::string Label(int dev_id) const {
    return absl::StrCat(who, ": device ", name, "(", dev_id, ")");
  }
  void CheckId(int dev_id) const {
    const int n = fns.count(fns.user_data);
    if (dev_id < 0 || dev_id >= n) {
      throw InvalidArgument(
          absl::StrCat(Label(dev_id), ": no such device (", n, " present)"));
    }
  }
};

class CAllocator : public DeviceAllocator {
 public:
  explicit CAllocator(std::shared_ptr<const CDeviceDef> def)
      : def_(std::move(def)) {}
  void* Alloc(size_t bytes, int dev_id) override {
    def_->CheckId(dev_id);
    void* ptr = nullptr;
    MxStatus status = EmptyStatus();
    const MxStatusCode code =
        def_->fns.alloc(def_->fns.user_data, dev_id, bytes, &ptr, &status);
    if (code != MX_STATUS_OK) {  // The label is built only on failure.
      ThrowIfFailed(
          code, status,
          absl::StrCat(def_->Label(dev_id), ": alloc of ", bytes, " bytes"));
    }
    if (ptr == nullptr && bytes > 0) {
      throw RuntimeError(absl::StrCat(def_->Label(dev_id), ": alloc of ", bytes,
                                      " bytes returned null"));
    }
    return ptr;
  }
  void Free(void* ptr, size_t bytes, int dev_id) override {
    MxStatus status = EmptyStatus();
    // Free runs from destructors: a failure cannot be reported to anyone.
    (void)def_->fns.free(def_->fns.user_data, dev_id, ptr, bytes, &status);
  }

 private:
  std::shared_ptr<const CDeviceDef> def_;
};

std::mutex& DefsMu() {
  static auto* mu = new std::mutex();
  return *mu;
}

std::map<int, std::shared_ptr<const CDeviceDef>>& Defs() {
  static auto* defs = new std::map<int, std::shared_ptr<const CDeviceDef>>();
  return *defs;
}

int NextPluginDeviceType() {
  static std::mutex mu;
  static int next = Context::kFirstPluginDevice;
  std::lock_guard<std::mutex> lock(mu);
  return next++;
}

void Copy(const CDeviceDef& def, int dev_id, void* dst, const void* src,
          size_t bytes, int direction, void* stream) {
  if (bytes == 0) return;
  MxStatus status = EmptyStatus();
  const MxStatusCode code = def.fns.copy(def.fns.user_data, dev_id, dst, src,
                                         bytes, direction, stream, &status);
  if (code != MX_STATUS_OK) {  // The label is built only on failure.
    ThrowIfFailed(code, status, absl::StrCat(def.Label(dev_id), ": copy"));
  }
}

}  // namespace

int AddCDevice(const MxDeviceDef& def, const std::string& who, UndoList* undo) {
  CheckStructSize(def.struct_size, MX_STRUCT_SIZE_UPTO(MxDeviceDef, user_data),
                  "MxDeviceDef", who);
  auto c = std::make_shared<CDeviceDef>();
  c->who = who;
  c->name = CopyString(def.name);
  const std::string label = absl::StrCat(who, ": device \"", c->name, "\"");
  if (c->name.empty() || c->name == "cpu" || c->name == "cpu_pinned") {
    throw InvalidArgument(label + ": a device needs a name other than cpu");
  }
  if (def.count == nullptr || def.alloc == nullptr || def.free == nullptr ||
      def.create_stream == nullptr || def.destroy_stream == nullptr ||
      def.synchronize == nullptr || def.create_event == nullptr ||
      def.destroy_event == nullptr || def.record_event == nullptr ||
      def.wait_event == nullptr || def.query_event == nullptr ||
      def.copy == nullptr) {
    throw InvalidArgument(label + ": every function up to copy is required");
  }
  std::memset(&c->fns, 0, sizeof(c->fns));
  std::memcpy(&c->fns, &def, MX_STRUCT_SIZE_UPTO(MxDeviceDef, user_data));
  c->fns.struct_size = MX_STRUCT_SIZE_UPTO(MxDeviceDef, user_data);
  if (MX_HAS_FIELD(&def, MxDeviceDef, memset) && def.memset != nullptr) {
    c->fns.memset = def.memset;
    c->fns.struct_size = sizeof(MxDeviceDef);
  }
  if (MX_HAS_FIELD(&def, MxDeviceDef, synchronize_event)) {
    c->fns.synchronize_event = def.synchronize_event;  // Null: polled.
  }
  const bool launch_on_any_thread =
      MX_HAS_FIELD(&def, MxDeviceDef, launch_on_any_thread) &&
      def.launch_on_any_thread != 0;
  int type = Context::DeviceTypeFromName(c->name);
  if (type > 0 && type != Context::kGPU) {
    throw AlreadyExists(label + ": a device of that name is registered");
  }
  if (type == Context::kGPU && Storage::Get()->HasDevice(Context::kGPU)) {
    throw AlreadyExists(label + ": a gpu device is registered");
  }
  if (type < 0) type = NextPluginDeviceType();

  Storage::Get()->RegisterDevice(type, std::make_unique<CAllocator>(c));
  undo->push_back([type] { Storage::Get()->UnregisterDevice(type); });
  if (type != Context::kGPU) {
    Context::SetDeviceTypeName(type, c->name);
    undo->push_back([type] { Context::ClearDeviceTypeName(type); });
  }

  engine::DeviceStreamOps streams;
  streams.create = [c](int dev_id) {
    void* s = nullptr;
    MxStatus status = EmptyStatus();
    ThrowIfFailed(c->fns.create_stream(c->fns.user_data, dev_id, &s, &status),
                  status, c->Label(dev_id) + ": create_stream");
    return s;
  };
  streams.destroy = [c](int dev_id, void* s) {
    MxStatus status = EmptyStatus();
    (void)c->fns.destroy_stream(c->fns.user_data, dev_id, s, &status);
  };
  streams.synchronize = [c](int dev_id, void* s) {
    MxStatus status = EmptyStatus();
    ThrowIfFailed(c->fns.synchronize(c->fns.user_data, dev_id, s, &status),
                  status, c->Label(dev_id) + ": synchronize");
  };
  // Events let the engine complete operations before their device work
  // (fences); a plugin without them gets a stream synchronize per op.
  if (c->fns.create_event != nullptr && c->fns.destroy_event != nullptr &&
      c->fns.record_event != nullptr && c->fns.wait_event != nullptr &&
      c->fns.query_event != nullptr) {
    streams.create_event = [c](int dev_id) {
      void* e = nullptr;
      MxStatus status = EmptyStatus();
      ThrowIfFailed(c->fns.create_event(c->fns.user_data, dev_id, &e, &status),
                    status, c->Label(dev_id) + ": create_event");
      return e;
    };
    streams.destroy_event = [c](int dev_id, void* e) {
      MxStatus status = EmptyStatus();
      (void)c->fns.destroy_event(c->fns.user_data, dev_id, e, &status);
    };
    streams.record_event = [c](int dev_id, void* e, void* s) {
      MxStatus status = EmptyStatus();
      ThrowIfFailed(
          c->fns.record_event(c->fns.user_data, dev_id, e, s, &status), status,
          c->Label(dev_id) + ": record_event");
    };
    streams.wait_event = [c](int dev_id, void* e, void* s) {
      MxStatus status = EmptyStatus();
      ThrowIfFailed(c->fns.wait_event(c->fns.user_data, dev_id, e, s, &status),
                    status, c->Label(dev_id) + ": wait_event");
    };
    streams.query_event = [c](int dev_id, void* e) {
      int32_t done = 0;
      MxStatus status = EmptyStatus();
      ThrowIfFailed(
          c->fns.query_event(c->fns.user_data, dev_id, e, &done, &status),
          status, c->Label(dev_id) + ": query_event");
      return done != 0;
    };
    if (c->fns.synchronize_event != nullptr) {
      streams.synchronize_event = [c](int dev_id, void* e) {
        MxStatus status = EmptyStatus();
        ThrowIfFailed(
            c->fns.synchronize_event(c->fns.user_data, dev_id, e, &status),
            status, c->Label(dev_id) + ": synchronize_event");
      };
    }
  }
  streams.launch_on_any_thread = launch_on_any_thread;
  engine::RegisterDeviceStreams(type, std::move(streams));
  undo->push_back([type] { engine::UnregisterDeviceStreams(type); });

  RegisterDeviceCopy(type, [c, type](const TBlob& from, const TBlob& to,
                                     engine::RunContext rctx) {
    if (from.dtype != to.dtype) {
      throw NotImplemented(absl::StrCat(
          c->who, ": copy ", from.ctx.ToString(), " -> ", to.ctx.ToString(),
          ": copies to or from a plugin device keep the dtype (",
          DTypeName(from.dtype), " vs ", DTypeName(to.dtype), ")"));
    }
    const size_t bytes =
        static_cast<size_t>(from.Size()) * DTypeSize(from.dtype);
    const bool from_host = from.ctx.is_host(), to_host = to.ctx.is_host();
    if (from_host) {
      c->CheckId(to.ctx.dev_id);
      Copy(*c, to.ctx.dev_id, to.dptr, from.dptr, bytes, 0, rctx.stream);
    } else if (to_host) {
      c->CheckId(from.ctx.dev_id);
      Copy(*c, from.ctx.dev_id, to.dptr, from.dptr, bytes, 1, rctx.stream);
    } else if (from.ctx.dev_type != type || to.ctx.dev_type != type) {
      throw NotImplemented(absl::StrCat(c->who, ": copy ", from.ctx.ToString(),
                                        " -> ", to.ctx.ToString(),
                                        " between two device types"));
    } else if (from.ctx.dev_id == to.ctx.dev_id) {
      Copy(*c, from.ctx.dev_id, to.dptr, from.dptr, bytes, 2, rctx.stream);
    } else {
      // Between two devices of the plugin: through host memory, on each
      // device's stream of this thread.
      c->CheckId(to.ctx.dev_id);
      std::vector<char> host(bytes);
      Copy(*c, from.ctx.dev_id, host.data(), from.dptr, bytes, 1, rctx.stream);
      engine::SynchronizeStream(from.ctx, rctx.stream);
      void* to_stream = engine::ThreadStream(to.ctx);
      Copy(*c, to.ctx.dev_id, to.dptr, host.data(), bytes, 0, to_stream);
      engine::SynchronizeStream(to.ctx, to_stream);
    }
  });
  undo->push_back([type] { UnregisterDeviceCopy(type); });
  {
    std::lock_guard<std::mutex> lock(DefsMu());
    Defs()[type] = c;
  }
  undo->push_back([type] {
    std::lock_guard<std::mutex> lock(DefsMu());
    Defs().erase(type);
  });
  return type;
}

}  // namespace plugin

const MxDeviceDef* PluginDeviceFunctions(int dev_type) {
  std::lock_guard<std::mutex> lock(plugin::DefsMu());
  auto it = plugin::Defs().find(dev_type);
  return it == plugin::Defs().end() ? nullptr : &it->second->fns;
}

}  // namespace mx
