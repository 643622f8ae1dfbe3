// C API: error handlers and error codes/classes/strings (MPI-3.1 section 8.3-8.5).
#include <cstring>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/errhandler.hpp"
#include "core/group.hpp"
#include "core/runtime.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

MPI_Errhandler create_errhandler(MPI_Comm_errhandler_function* fn) {
  require(fn != nullptr, MPI_ERR_ARG, "the error handler function is a null pointer");
  auto e = std::make_unique<Errhandler>();
  e->function = fn;
  Errhandler* raw = e.get();
  raw->handle = errhandler_table().add(std::move(e));
  return raw->handle;
}

void set_errhandler(MPI_Comm comm_handle, MPI_Errhandler handle) {
  replace_errhandler(comm_local(comm_handle).errhandler, handle);
}

MPI_Errhandler get_errhandler(MPI_Comm comm_handle) {
  Comm& c = comm_local(comm_handle);
  // The caller owns the returned handle (and may MPI_Errhandler_free it).
  retain_errhandler(c.errhandler);
  return c.errhandler;
}

}  // namespace

extern "C" int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler_out) {
  return api_call(MPI_COMM_WORLD, "MPI_Comm_create_errhandler", [&] {
    require_initialized("MPI_Comm_create_errhandler");
    require(errhandler_out != nullptr, MPI_ERR_ARG, "errhandler is a null pointer");
    *errhandler_out = create_errhandler(fn);
  });
}
GRIDMPI_WEAK(Comm_create_errhandler)

extern "C" int PMPI_Errhandler_create(MPI_Handler_function* fn, MPI_Errhandler* errhandler_out) {
  return api_call(MPI_COMM_WORLD, "MPI_Errhandler_create", [&] {
    require_initialized("MPI_Errhandler_create");
    require(errhandler_out != nullptr, MPI_ERR_ARG, "errhandler is a null pointer");
    *errhandler_out = create_errhandler(fn);
  });
}
GRIDMPI_WEAK(Errhandler_create)

extern "C" int PMPI_Comm_set_errhandler(MPI_Comm comm_handle, MPI_Errhandler handle) {
  return api_call(comm_handle, "MPI_Comm_set_errhandler", [&] {
    require_initialized("MPI_Comm_set_errhandler");
    set_errhandler(comm_handle, handle);
  });
}
GRIDMPI_WEAK(Comm_set_errhandler)

extern "C" int PMPI_Errhandler_set(MPI_Comm comm_handle, MPI_Errhandler handle) {
  return api_call(comm_handle, "MPI_Errhandler_set", [&] {
    require_initialized("MPI_Errhandler_set");
    set_errhandler(comm_handle, handle);
  });
}
GRIDMPI_WEAK(Errhandler_set)

extern "C" int PMPI_Comm_get_errhandler(MPI_Comm comm_handle, MPI_Errhandler* handle) {
  return api_call(comm_handle, "MPI_Comm_get_errhandler", [&] {
    require_initialized("MPI_Comm_get_errhandler");
    require(handle != nullptr, MPI_ERR_ARG, "errhandler is a null pointer");
    *handle = get_errhandler(comm_handle);
  });
}
GRIDMPI_WEAK(Comm_get_errhandler)

extern "C" int PMPI_Errhandler_get(MPI_Comm comm_handle, MPI_Errhandler* handle) {
  return api_call(comm_handle, "MPI_Errhandler_get", [&] {
    require_initialized("MPI_Errhandler_get");
    require(handle != nullptr, MPI_ERR_ARG, "errhandler is a null pointer");
    *handle = get_errhandler(comm_handle);
  });
}
GRIDMPI_WEAK(Errhandler_get)

extern "C" int PMPI_Errhandler_free(MPI_Errhandler* handle) {
  return api_call(MPI_COMM_WORLD, "MPI_Errhandler_free", [&] {
    require_initialized("MPI_Errhandler_free");
    require(handle != nullptr, MPI_ERR_ARG, "errhandler is a null pointer");
    errhandler(*handle);  // validates
    // Predefined handlers are never destroyed, but freeing the handle that
    // MPI_Comm_get_errhandler returned for one is legal.
    release_errhandler(*handle);
    *handle = MPI_ERRHANDLER_NULL;
  });
}
GRIDMPI_WEAK(Errhandler_free)

extern "C" int PMPI_Comm_call_errhandler(MPI_Comm comm_handle, int errorcode) {
  return api_call(comm_handle, "MPI_Comm_call_errhandler", [&] {
    require_initialized("MPI_Comm_call_errhandler");
    comm_local(comm_handle);
    std::string text;
    try {
      text = error_string(errorcode);
    } catch (const MpiError&) {
      text = fmt::format("error code {}", errorcode);
    }
    if (text.empty()) text = fmt::format("error code {}", errorcode);
    invoke_errhandler(comm_handle, errorcode, "MPI_Comm_call_errhandler", text.c_str());
  });
}
GRIDMPI_WEAK(Comm_call_errhandler)

extern "C" int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  return api_call(MPI_COMM_WORLD, "MPI_Error_string", [&] {
    require(string != nullptr && resultlen != nullptr, MPI_ERR_ARG, "string or resultlen is a null pointer");
    std::string text = error_string(errorcode);
    size_t n = std::min(text.size(), static_cast<size_t>(MPI_MAX_ERROR_STRING - 1));
    std::memcpy(string, text.data(), n);
    string[n] = '\0';
    *resultlen = static_cast<int>(n);
  });
}
GRIDMPI_WEAK(Error_string)

extern "C" int PMPI_Error_class(int errorcode, int* errorclass) {
  return api_call(MPI_COMM_WORLD, "MPI_Error_class", [&] {
    require(errorclass != nullptr, MPI_ERR_ARG, "errorclass is a null pointer");
    *errorclass = error_class_of(errorcode);
  });
}
GRIDMPI_WEAK(Error_class)

extern "C" int PMPI_Add_error_class(int* errorclass) {
  return api_call(MPI_COMM_WORLD, "MPI_Add_error_class", [&] {
    require_initialized("MPI_Add_error_class");
    require(errorclass != nullptr, MPI_ERR_ARG, "errorclass is a null pointer");
    *errorclass = add_error_class();
  });
}
GRIDMPI_WEAK(Add_error_class)

extern "C" int PMPI_Add_error_code(int errorclass, int* errorcode) {
  return api_call(MPI_COMM_WORLD, "MPI_Add_error_code", [&] {
    require_initialized("MPI_Add_error_code");
    require(errorcode != nullptr, MPI_ERR_ARG, "errorcode is a null pointer");
    *errorcode = add_error_code(errorclass);
  });
}
GRIDMPI_WEAK(Add_error_code)

extern "C" int PMPI_Add_error_string(int errorcode, const char* string) {
  return api_call(MPI_COMM_WORLD, "MPI_Add_error_string", [&] {
    require_initialized("MPI_Add_error_string");
    require(string != nullptr, MPI_ERR_ARG, "string is a null pointer");
    add_error_string(errorcode, string);
  });
}
GRIDMPI_WEAK(Add_error_string)

// MPI-4.0: may be called before MPI_Session_init (its result is passed to it).
extern "C" int PMPI_Session_create_errhandler(MPI_Session_errhandler_function* fn, MPI_Errhandler* errhandler_out) {
  return api_call(MPI_COMM_WORLD, "MPI_Session_create_errhandler", [&] {
    require(errhandler_out != nullptr, MPI_ERR_ARG, "errhandler is a null pointer");
    *errhandler_out = create_errhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(fn));
  });
}
GRIDMPI_WEAK(Session_create_errhandler)
