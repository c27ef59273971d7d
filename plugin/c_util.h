// Internal to the plugin host: conversions between the C plugin ABI
// (backends/plugin_api/mx_plugin.h) and mxcore's C++ types.
#ifndef MXCORE_PLUGIN_C_UTIL_H_
#define MXCORE_PLUGIN_C_UTIL_H_

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "backends/plugin_api/mx_plugin.h"
#include "base/error.h"
#include "graph/op.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace plugin {

// Throws the mx::Error subclass matching `code` (nothing for OK), with
// "<who>: <message>" where `who` names the plugin and the op, property or
// device involved.
void ThrowIfFailed(MxStatusCode code, const MxStatus& status,
                   const std::string& who);

// The status code of a host error (its mx::Error subclass).
MxStatusCode CodeOf(const Error& e);

// A status with its size set and an empty message.
MxStatus EmptyStatus();

// Checks that a plugin struct is at least as large as version 1.0's layout
// (`min_size`); throws InvalidArgument naming the struct and the plugin.
void CheckStructSize(size_t struct_size, size_t min_size, const char* type,
                     const std::string& who);

// Copies `s` (null: "") so the plugin's storage may go away.
std::string CopyString(const char* s);

// MxTensors over TBlobs, which must outlive this object (the shapes point
// into them). No heap allocation for up to 8 tensors: this is on every
// plugin kernel call.
class CTensors {
 public:
  explicit CTensors(const std::vector<TBlob>& blobs);
  CTensors(const CTensors&) = delete;
  CTensors& operator=(const CTensors&) = delete;
  const MxTensor* data() const { return data_; }
  int32_t size() const { return size_; }

 private:
  static constexpr size_t kInline = 8;
  MxTensor inline_[kInline];  // Left uninitialized: filled as needed.
  std::unique_ptr<MxTensor[]> heap_;
  MxTensor* data_;
  int32_t size_;
};

// An attribute dictionary as MxAttrs, pointing into `dict` (which must
// outlive this object); no heap allocation for up to 8 attributes.
class CAttrStrings {
 public:
  CAttrStrings(const AttrDict& dict, const char* node_name);
  CAttrStrings(const CAttrStrings&) = delete;
  CAttrStrings& operator=(const CAttrStrings&) = delete;
  const MxAttrs* get() const { return &c_; }

 private:
  absl::InlinedVector<const char*, 8> keys_, values_;
  MxAttrs c_;
};

// Requests as the C codes.
absl::InlinedVector<int32_t, 8> CRequests(const std::vector<OpReqType>& req);

// A kernel context over an OpContext (valid while both live).
// `dynamic_outputs`: the unallocated outputs of a dynamic-shape op, which
// the kernel allocates through alloc_output (null for other kernels).
class CKernelContext {
 public:
  // `inputs`: the kernel's input blobs, for input_version.
  CKernelContext(const OpContext& ctx, const std::vector<TBlob>& inputs,
                 const std::vector<NDArray>* dynamic_outputs = nullptr);
  CKernelContext(const CKernelContext&) = delete;
  CKernelContext& operator=(const CKernelContext&) = delete;
  const MxKernelContext* get() const { return &c_; }
  // Dynamic-shape kernels: how many outputs alloc_output has allocated.
  size_t NumAllocated() const {
    return static_cast<size_t>(
        std::count(host_.allocated.begin(), host_.allocated.end(), true));
  }

  // What MxKernelContext::host points to.
  struct Host {
    const OpContext* ctx;
    const std::vector<TBlob>* inputs;
    const std::vector<NDArray>* dynamic_outputs;
    // alloc_output's answers, alive until the kernel returns.
    std::vector<std::unique_ptr<MxTensor>> tensors;
    std::vector<std::unique_ptr<TShape>> shapes;
    std::vector<bool> allocated;
  };

 private:
  Host host_;
  MxKernelContext c_;
};

}  // namespace plugin
}  // namespace mx

#endif  // MXCORE_PLUGIN_C_UTIL_H_
