// Part of mx_plugin_cpp.h (include that): what a kernel and an op's
// callbacks see. Errors thrown as mxplugin::Error keep their status code
// at the boundary; detail:: turns exceptions into statuses.
#ifndef MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_KERNEL_H_
#define MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_KERNEL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/plugin_api/mx_plugin.h"

namespace mxplugin {

// An error with a status code; what the host raises as the mx::Error of
// the same name.
class Error : public std::runtime_error {
 public:
  Error(MxStatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  MxStatusCode code() const { return code_; }

 private:
  MxStatusCode code_;
};

namespace detail {

inline void SetMessage(MxStatus* status, const char* message) {
  if (status != nullptr) {
    std::snprintf(status->message, sizeof(status->message), "%s", message);
  }
}

// Runs fn; turns whatever it throws into a status.
template <typename Fn>
MxStatusCode Guard(MxStatus* status, Fn&& fn) noexcept {
  try {
    fn();
    return MX_STATUS_OK;
  } catch (const Error& e) {
    SetMessage(status, e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    SetMessage(status, "out of memory");
    return MX_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    SetMessage(status, e.what());
    return MX_STATUS_RUNTIME_ERROR;
  } catch (...) {
    SetMessage(status, "threw an object that is not a std::exception");
    return MX_STATUS_RUNTIME_ERROR;
  }
}

// Keeps `p` alive for the process: the host holds raw pointers to it.
// Reachable from a global, so leak checkers do not report it.
template <typename T>
T* Keep(std::shared_ptr<T> p) {
  static auto* mu = new std::mutex();
  static auto* kept = new std::vector<std::shared_ptr<void>>();
  std::lock_guard<std::mutex> lock(*mu);
  kept->push_back(p);
  return p.get();
}

inline void Check(MxStatusCode code, const MxStatus& status) {
  if (code != MX_STATUS_OK) throw Error(code, status.message);
}

inline MxStatus NewStatus() {
  MxStatus s;
  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  return s;
}

}  // namespace detail

// ---- Kernel-side views ----

class Tensor {
 public:
  explicit Tensor(const MxTensor* t) : t_(t) {}
  template <typename T>
  T* data() const {
    return static_cast<T*>(t_->data);
  }
  int ndim() const { return t_->ndim; }
  int64_t dim(int i) const { return t_->shape[i]; }
  std::vector<int64_t> shape() const {
    return std::vector<int64_t>(t_->shape, t_->shape + t_->ndim);
  }
  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < t_->ndim; ++i) n *= t_->shape[i];
    return n;
  }
  MxDType dtype() const { return static_cast<MxDType>(t_->dtype); }
  int dev_type() const { return t_->dev_type; }
  int dev_id() const { return t_->dev_id; }
  const MxTensor* c() const { return t_; }

 private:
  const MxTensor* t_;
};

class Tensors {
 public:
  Tensors(const MxTensor* t, int32_t n) : t_(t), n_(n) {}
  int size() const { return n_; }
  Tensor operator[](int i) const { return Tensor(t_ + i); }

 private:
  const MxTensor* t_;
  int32_t n_;
};

class KernelContext {
 public:
  explicit KernelContext(const MxKernelContext* c) : c_(c) {}
  bool is_train() const { return c_->is_train != 0; }
  void* stream() const { return c_->stream; }
  int dev_type() const { return c_->dev_type; }
  int dev_id() const { return c_->dev_id; }
  // Needs MX_RESOURCE_TEMP_SPACE; throws when the host gave none.
  void* TempSpace(size_t bytes) const {
    void* p = c_->temp_space(c_->host, bytes);
    if (p == nullptr && bytes > 0) {
      throw Error(MX_STATUS_OUT_OF_MEMORY,
                  "no temp space (was MX_RESOURCE_TEMP_SPACE requested?)");
    }
    return p;
  }
  uint64_t RandomU64() const { return c_->random_u64(c_->host); }
  // Dynamic-shape ops (since ABI 1.2): allocates output `index` with
  // `shape` once the kernel knows it. Throws the host's error, or when the
  // host or the op does not allow it.
  Tensor AllocOutput(int index, const std::vector<int64_t>& shape) const {
    if (!MX_HAS_FIELD(c_, MxKernelContext, alloc_output) ||
        c_->alloc_output == nullptr) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  "AllocOutput: only kernels of dynamic-shape ops allocate "
                  "their outputs (and the host needs ABI 1.2)");
    }
    MxStatus status;
    status.struct_size = sizeof(status);
    status.message[0] = '\0';
    const MxTensor* t = nullptr;
    const MxStatusCode code =
        c_->alloc_output(c_->host, index, static_cast<int32_t>(shape.size()),
                         shape.data(), &t, &status);
    if (code != MX_STATUS_OK) throw Error(code, status.message);
    return Tensor(t);
  }
  // What input `index` holds (since ABI 1.3): equal pairs mean equal
  // contents. {0, 0} when the host cannot tell: do not cache then.
  struct InputVersion {
    uint64_t array_id = 0, version = 0;
    bool known() const { return array_id != 0; }
    friend bool operator==(const InputVersion& a, const InputVersion& b) {
      return a.array_id == b.array_id && a.version == b.version;
    }
    friend bool operator!=(const InputVersion& a, const InputVersion& b) {
      return !(a == b);
    }
  };
  InputVersion InputVersionOf(int index) const {
    InputVersion v;
    if (MX_HAS_FIELD(c_, MxKernelContext, input_version) &&
        c_->input_version != nullptr) {
      c_->input_version(c_->host, index, &v.array_id, &v.version);
    }
    return v;
  }
  // The CPU threads this call may use (since ABI 1.4; see
  // MxKernelContext.num_threads); 0 when the host does not say.
  int num_threads() const {
    return MX_HAS_FIELD(c_, MxKernelContext, num_threads) ? c_->num_threads : 0;
  }
  // fn(begin, end) on the host's CPU kernel threads. fn must not throw.
  template <typename Fn>
  void ParallelFor(int64_t n, int64_t grain, const Fn& fn) const {
    c_->parallel_for(
        c_->host, n, grain,
        [](void* arg, int64_t b, int64_t e) {
          (*static_cast<const Fn*>(arg))(b, e);
        },
        const_cast<Fn*>(&fn));
  }

 private:
  const MxKernelContext* c_;
};

// A node's attribute strings (a view; valid during the call), and what
// the op's Parse function made of them.
class Attrs {
 public:
  explicit Attrs(const void* c, const void* parsed = nullptr)
      : a_(static_cast<const MxAttrs*>(c)), parsed_(parsed) {}
  // The object OpDef::Parse returned for this node.
  template <typename T>
  const T& parsed() const {
    if (parsed_ == nullptr) {
      throw Error(MX_STATUS_RUNTIME_ERROR, "the op has no Parse function");
    }
    return *static_cast<const T*>(parsed_);
  }
  std::optional<std::string_view> Find(std::string_view key) const {
    if (a_ == nullptr) return std::nullopt;
    for (int i = 0; i < a_->num; ++i) {
      if (key == a_->keys[i]) return std::string_view(a_->values[i]);
    }
    return std::nullopt;
  }
  std::string Get(std::string_view key, std::string fallback = "") const {
    auto v = Find(key);
    return v ? std::string(*v) : fallback;
  }
  double GetFloat(std::string_view key, double fallback) const {
    auto v = Find(key);
    return v ? std::strtod(std::string(*v).c_str(), nullptr) : fallback;
  }
  int64_t GetInt(std::string_view key, int64_t fallback) const {
    auto v = Find(key);
    return v ? std::strtoll(std::string(*v).c_str(), nullptr, 10) : fallback;
  }
  const MxAttrs* c() const { return a_; }

 private:
  const MxAttrs* a_;
  const void* parsed_;
};

// Attribute strings held by value and seen as Attrs: a parsed node's own
// copy, or attributes read back from elsewhere (a region's JSON steps).
// Neither copied nor moved: the view points into it.
//
//   OwnedAttrs a({{"kernel", "(3,3)"}, {"pool_type", "avg"}});
//   ParsePool(a.view());
class OwnedAttrs {
 public:
  explicit OwnedAttrs(std::vector<std::pair<std::string, std::string>> items,
                      std::string node_name = "")
      : items_(std::move(items)), node_name_(std::move(node_name)) {
    for (const auto& [key, value] : items_) {
      keys_.push_back(key.c_str());
      values_.push_back(value.c_str());
    }
    c_.struct_size = sizeof(c_);
    c_.num = static_cast<int32_t>(items_.size());
    c_.keys = keys_.data();
    c_.values = values_.data();
    c_.node_name = node_name_.c_str();
  }
  OwnedAttrs(const OwnedAttrs&) = delete;
  OwnedAttrs& operator=(const OwnedAttrs&) = delete;

  // With `parsed` as what OpDef::Parse made of them.
  Attrs view(const void* parsed = nullptr) const { return Attrs(&c_, parsed); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
  std::string node_name_;
  std::vector<const char*> keys_, values_;
  MxAttrs c_{};
};

using Kernel = std::function<void(const KernelContext&, const Attrs&,
                                  Tensors in, const int32_t* req, Tensors out)>;

// Shapes during inference: nullopt for an unknown rank, -1 for an unknown
// dimension.
using Shape = std::vector<int64_t>;
using ShapeSlots = std::vector<std::optional<Shape>>;
using InferShapeFn =
    std::function<void(const Attrs&, ShapeSlots& in, ShapeSlots& out)>;
using InferTypeFn = std::function<void(const Attrs&, std::vector<int>& in,
                                       std::vector<int>& out)>;

// Every input and output has one shape (the first known one).
inline void SameShape(const Attrs&, ShapeSlots& in, ShapeSlots& out) {
  std::optional<Shape> known;
  for (auto* slots : {&in, &out}) {
    for (auto& s : *slots) {
      if (s && !known) known = s;
    }
  }
  if (!known) return;
  for (auto* slots : {&in, &out}) {
    for (auto& s : *slots) {
      if (s && *s != *known) {
        throw Error(MX_STATUS_SHAPE_ERROR, "operands have different shapes");
      }
      s = known;
    }
  }
}

}  // namespace mxplugin

#endif  // MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_KERNEL_H_
