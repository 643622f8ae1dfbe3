// Reading parameters inside an MPI process: a configuration error
// (conf::ConfigError, whose message names the parameter, the value and its
// source) becomes MpiError(MPI_ERR_OTHER) with the same message, which the
// API shims report through the error handler.  One helper for the layers
// that read their parameters at start-up (transports, the engine, IMPI).
#pragma once
#include <utility>

#include "base/error.hpp"
#include "conf/registry.hpp"

namespace gridmpi::conf {

// Runs `read` (a getter, or any code that reads parameters).
template <class F>
auto checked(F&& read) {
  try {
    return std::forward<F>(read)();
  } catch (const ConfigError& e) {
    throw MpiError(MPI_ERR_OTHER, e.what());
  }
}

// The value of one parameter.
template <class T>
T checked(const Param<T>& param) {
  return checked([&] { return param.get(); });
}

}  // namespace gridmpi::conf
