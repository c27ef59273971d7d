// Internal to the plugin host: what one plugin registers through the C ABI,
// recorded so that a failed load can be undone completely.
#ifndef MXCORE_PLUGIN_REGISTRAR_H_
#define MXCORE_PLUGIN_REGISTRAR_H_

#include <functional>
#include <string>
#include <vector>

#include "backends/plugin_api/mx_plugin.h"
#include "subgraph/subgraph_property.h"

namespace mx {
namespace plugin {

class Registrar {
 public:
  // `desc` is the plugin's self-description, filled before it registers.
  Registrar(std::string path, const MxPluginDesc* desc);

  // The table handed to mx_plugin_init.
  const MxHostApi* api() const { return &api_; }

  // "plugin \"name\" (path)", for errors.
  std::string Label() const;

  // Each throws an mx::Error (AlreadyExists for a taken name); what was
  // registered before stays recorded for Rollback.
  void RegisterKernel(const MxKernelDef& def);
  void RegisterOp(const MxOpDef& def);
  void RegisterSubgraphProperty(const MxSubgraphPropertyDef& def);
  int RegisterDevice(const MxDeviceDef& def);
  // Keeps the offered runtime for Commit.
  void RegisterThreadRuntime(const MxThreadRuntimeDef& def);

  // After a successful mx_plugin_init: makes an offered thread runtime the
  // host's chunk runner unless another plugin's already is. Returns whether
  // this plugin's runtime is used.
  bool Commit();

  // Undoes everything, newest first.
  void Rollback();

  // The first error a register_* call returned to the plugin.
  const std::string& first_error() const { return first_error_; }
  bool clashed() const { return clashed_; }
  void NoteError(const std::string& message, bool clash);

  const std::vector<std::string>& ops() const { return ops_; }
  const std::vector<std::string>& kernels() const { return kernels_; }
  const std::vector<std::string>& backends() const { return backends_; }
  const std::vector<std::string>& devices() const { return devices_; }

 private:
  std::string path_;
  const MxPluginDesc* desc_;
  MxHostApi api_;
  std::vector<std::function<void()>> undo_;
  bool offered_runtime_ = false;
  MxThreadRuntimeDef runtime_{};
  std::vector<std::string> ops_, kernels_, backends_, devices_;
  std::string first_error_;
  bool clashed_ = false;
};

// The adapters (c_op.cc, c_subgraph.cc, c_device.cc). Each registers with
// the host's registries and appends how to undo it to `undo`.
using UndoList = std::vector<std::function<void()>>;
void AddCKernel(const MxKernelDef& def, const std::string& who, UndoList* undo);
void AddCOp(const MxOpDef& def, const std::string& who, UndoList* undo);
// A SubgraphProperty calling the plugin's callbacks (not yet registered).
std::shared_ptr<SubgraphProperty> MakeCSubgraphProperty(
    const MxSubgraphPropertyDef& def, const std::string& who);
int AddCDevice(const MxDeviceDef& def, const std::string& who, UndoList* undo);

}  // namespace plugin
}  // namespace mx

#endif  // MXCORE_PLUGIN_REGISTRAR_H_
