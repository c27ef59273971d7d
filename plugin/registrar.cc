#include "plugin/registrar.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/parallel.h"
#include "plugin/c_util.h"

namespace mx {
namespace plugin {
namespace {

// Writes `message` into a plugin's status, if it gave one.
void Report(MxStatus* status, const std::string& message) {
  if (status == nullptr) return;
  std::snprintf(status->message, sizeof(status->message), "%s",
                message.c_str());
}

// Runs a registration for the C table: errors become statuses.
template <typename Fn>
MxStatusCode Guard(void* registrar, MxStatus* status, const void* def, Fn fn) {
  auto* r = static_cast<Registrar*>(registrar);
  try {
    if (r == nullptr) throw InvalidArgument("null registrar");
    if (def == nullptr) throw InvalidArgument("null definition");
    fn(r);
    return MX_STATUS_OK;
  } catch (const Error& e) {
    const MxStatusCode code = CodeOf(e);
    if (r != nullptr) r->NoteError(e.what(), code == MX_STATUS_ALREADY_EXISTS);
    Report(status, e.what());
    return code;
  } catch (const std::exception& e) {
    if (r != nullptr) r->NoteError(e.what(), false);
    Report(status, e.what());
    return MX_STATUS_RUNTIME_ERROR;
  }
}

MxStatusCode CRegisterKernel(void* registrar, const MxKernelDef* def,
                             MxStatus* status) {
  return Guard(registrar, status, def,
               [&](Registrar* r) { r->RegisterKernel(*def); });
}
MxStatusCode CRegisterOp(void* registrar, const MxOpDef* def,
                         MxStatus* status) {
  return Guard(registrar, status, def,
               [&](Registrar* r) { r->RegisterOp(*def); });
}
MxStatusCode CRegisterSubgraphProperty(void* registrar,
                                       const MxSubgraphPropertyDef* def,
                                       MxStatus* status) {
  return Guard(registrar, status, def,
               [&](Registrar* r) { r->RegisterSubgraphProperty(*def); });
}
MxStatusCode CRegisterDevice(void* registrar, const MxDeviceDef* def,
                             int32_t* dev_type, MxStatus* status) {
  return Guard(registrar, status, def, [&](Registrar* r) {
    const int type = r->RegisterDevice(*def);
    if (dev_type != nullptr) *dev_type = type;
  });
}

MxStatusCode CRegisterThreadRuntime(void* registrar,
                                    const MxThreadRuntimeDef* def,
                                    MxStatus* status) {
  return Guard(registrar, status, def,
               [&](Registrar* r) { r->RegisterThreadRuntime(*def); });
}

}  // namespace

Registrar::Registrar(std::string path, const MxPluginDesc* desc)
    : path_(std::move(path)), desc_(desc) {
  std::memset(&api_, 0, sizeof(api_));
  api_.struct_size = sizeof(api_);
  api_.abi_major = MX_PLUGIN_ABI_MAJOR;
  api_.abi_minor = MX_PLUGIN_ABI_MINOR;
  api_.registrar = this;
  api_.register_kernel = CRegisterKernel;
  api_.register_op = CRegisterOp;
  api_.register_subgraph_property = CRegisterSubgraphProperty;
  api_.register_device = CRegisterDevice;
  api_.register_thread_runtime = CRegisterThreadRuntime;
}

std::string Registrar::Label() const {
  const char* name = desc_ != nullptr ? desc_->name : nullptr;
  return absl::StrCat("plugin \"", name == nullptr ? "?" : name, "\" (", path_,
                      ")");
}

void Registrar::NoteError(const std::string& message, bool clash) {
  if (first_error_.empty()) first_error_ = message;
  clashed_ = clashed_ || clash;
}

void Registrar::RegisterKernel(const MxKernelDef& def) {
  AddCKernel(def, Label(), &undo_);
  kernels_.push_back(CopyString(def.op_name));
}

void Registrar::RegisterOp(const MxOpDef& def) {
  AddCOp(def, Label(), &undo_);
  ops_.push_back(CopyString(def.name));
}

void Registrar::RegisterSubgraphProperty(const MxSubgraphPropertyDef& def) {
  SubgraphPropertyPtr property = MakeCSubgraphProperty(def, Label());
  const std::string backend = CopyString(def.backend);
  SubgraphBackendRegistry* registry = SubgraphBackendRegistry::Get();
  const bool mine =
      std::find(backends_.begin(), backends_.end(), backend) != backends_.end();
  if (!mine && registry->Has(backend)) {
    throw AlreadyExists(absl::StrCat(Label(), ": subgraph backend \"", backend,
                                     "\" is already registered"));
  }
  registry->Register(backend, std::move(property));
  if (!mine) {
    backends_.push_back(backend);
    undo_.push_back(
        [backend] { SubgraphBackendRegistry::Get()->Unregister(backend); });
  }
}

int Registrar::RegisterDevice(const MxDeviceDef& def) {
  const int type = AddCDevice(def, Label(), &undo_);
  devices_.push_back(CopyString(def.name));
  return type;
}

void Registrar::RegisterThreadRuntime(const MxThreadRuntimeDef& def) {
  if (def.struct_size < MX_STRUCT_SIZE_UPTO(MxThreadRuntimeDef, run) ||
      def.run == nullptr) {
    throw InvalidArgument(
        absl::StrCat(Label(), ": thread runtime without a run function"));
  }
  if (offered_runtime_) return;  // A plugin's first offer counts.
  offered_runtime_ = true;
  runtime_ = def;
}

bool Registrar::Commit() {
  // The plugin's run has the runner's shape (base/parallel.h); it and its
  // user_data stay valid for the process's life, as plugins never unload.
  return offered_runtime_ && SetChunkRunner(runtime_.run, runtime_.user_data);
}

void Registrar::Rollback() {
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) (*it)();
  undo_.clear();
}

}  // namespace plugin
}  // namespace mx
