// Typed errors thrown by every mxcore layer.
//
// All errors derive from mx::Error, so callers can catch one type. Subclasses
// say what kind of thing was wrong; the message says which thing, with what
// was expected and what was found.
//
// Rule for every public function of mxcore: the only exceptions that leave it
// are mx::Error subclasses. Bad input (files, JSON, attributes, plugins) is
// reported as one, never as a crash, a hang, undefined behaviour, a huge
// allocation or a third-party exception (std::bad_alloc aside: running out
// of memory for a legitimately sized request):
//
//   try {
//     engine->WaitForAll();
//   } catch (const mx::InvalidArgument& e) {
//     std::cerr << e.what();  // "Engine::Push(op \"add\"): var listed ..."
//   }
#ifndef MXCORE_BASE_ERROR_H_
#define MXCORE_BASE_ERROR_H_

#include <stdexcept>
#include <string>

namespace mx {

// Base of all mxcore errors.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// An argument to an API call is malformed or inconsistent.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Array shapes do not fit an operation.
class ShapeError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// Element types (dtypes) do not fit an operation.
class DTypeError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// A named thing (op, pass, backend, file, plugin) does not exist.
class NotFound : public Error {
 public:
  using Error::Error;
};

// A name that must be unique is registered twice.
class AlreadyExists : public Error {
 public:
  using Error::Error;
};

// An environment variable or option has a bad value.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// The feature exists in the design but is not implemented (yet).
class NotImplemented : public Error {
 public:
  using Error::Error;
};

// An object was used in a state that does not allow it (e.g. a deleted var).
class StateError : public Error {
 public:
  using Error::Error;
};

// A device or system call failed (CUDA, dlopen, file I/O).
class RuntimeError : public Error {
 public:
  using Error::Error;
};

}  // namespace mx

#endif  // MXCORE_BASE_ERROR_H_
