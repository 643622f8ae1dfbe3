// Internal error type: thrown inside the library, caught by every C API shim
// (core/api.hpp) and mapped to an MPI error class, then handed to the
// communicator's error handler.
#pragma once
#include <mpi.h>

#include <stdexcept>
#include <string>

namespace gridmpi {

class MpiError : public std::runtime_error {
 public:
  MpiError(int error_class, std::string message)
      : std::runtime_error(std::move(message)), error_class_(error_class) {}
  int error_class() const noexcept { return error_class_; }

 private:
  int error_class_;
};

// Throws MpiError(cls, message) when the condition is false.
inline void require(bool condition, int error_class, const char* message) {
  if (!condition) throw MpiError(error_class, message);
}

}  // namespace gridmpi
