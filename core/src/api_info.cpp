// C API: info objects (MPI-3.1 chapter 9, MPI-4.0 chapter 10).  As MPI-4.0
// allows, every info function also works before MPI_Init and after
// MPI_Finalize (errors then go to the default handler, MPI_ERRORS_ARE_FATAL).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/info.hpp"
#include "core/runtime.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

std::string checked_key(const char* key) {
  require(key != nullptr, MPI_ERR_INFO_KEY, "info key is a null pointer");
  size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
  if (n == 0 || n > MPI_MAX_INFO_KEY)
    throw MpiError(MPI_ERR_INFO_KEY, fmt::format("info key must have 1..{} characters", MPI_MAX_INFO_KEY));
  return std::string(key, n);
}

MPI_Info store(std::unique_ptr<Info> obj) {
  Info* raw = obj.get();
  raw->handle = info_table().add(std::move(obj));
  return raw->handle;
}

}  // namespace

extern "C" int PMPI_Info_create(MPI_Info* info_out) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_create", [&] {
    require(info_out != nullptr, MPI_ERR_ARG, "info is a null pointer");
    *info_out = store(std::make_unique<Info>());
  });
}
GRIDMPI_WEAK(Info_create)

extern "C" int PMPI_Info_set(MPI_Info handle, const char* key, const char* value) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_set", [&] {
    Info& i = info(handle);
    std::string k = checked_key(key);
    require(value != nullptr, MPI_ERR_INFO_VALUE, "info value is a null pointer");
    size_t n = strnlen(value, MPI_MAX_INFO_VAL + 1);
    if (n > MPI_MAX_INFO_VAL)
      throw MpiError(MPI_ERR_INFO_VALUE,
                     fmt::format("info value for key '{}' is longer than {} characters", k, MPI_MAX_INFO_VAL));
    i.set(k, std::string(value, n));
  });
}
GRIDMPI_WEAK(Info_set)

extern "C" int PMPI_Info_get(MPI_Info handle, const char* key, int valuelen, char* value, int* flag) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_get", [&] {
    Info& i = info(handle);
    std::string k = checked_key(key);
    require(flag != nullptr, MPI_ERR_ARG, "flag is a null pointer");
    if (valuelen < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative valuelen {}", valuelen));
    auto v = i.get(k);
    *flag = v.has_value();
    if (!v) return;
    require(value != nullptr, MPI_ERR_ARG, "value is a null pointer");
    // valuelen excludes the terminating null (the standard's convention).
    size_t n = std::min(v->size(), static_cast<size_t>(valuelen));
    std::memcpy(value, v->data(), n);
    value[n] = '\0';
  });
}
GRIDMPI_WEAK(Info_get)

// MPI-4.0: *buflen is the size of value (terminating null included) on
// input and the size the whole value needs on output; the value is cut to
// fit, always null-terminated when *buflen > 0.  A missing key leaves both
// alone.
extern "C" int PMPI_Info_get_string(MPI_Info handle, const char* key, int* buflen, char* value, int* flag) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_get_string", [&] {
    Info& i = info(handle);
    std::string k = checked_key(key);
    require(buflen != nullptr && flag != nullptr, MPI_ERR_ARG, "buflen or flag is a null pointer");
    if (*buflen < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative buflen {}", *buflen));
    auto v = i.get(k);
    *flag = v.has_value();
    if (!v) return;
    if (*buflen > 0) {
      require(value != nullptr, MPI_ERR_ARG, "value is a null pointer");
      size_t n = std::min(v->size(), static_cast<size_t>(*buflen) - 1);
      std::memcpy(value, v->data(), n);
      value[n] = '\0';
    }
    *buflen = static_cast<int>(v->size()) + 1;
  });
}
GRIDMPI_WEAK(Info_get_string)

extern "C" int PMPI_Info_create_env(int argc, char* argv[], MPI_Info* info_out) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_create_env", [&] {
    require(info_out != nullptr, MPI_ERR_ARG, "info is a null pointer");
    if (argc < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative argc {}", argc));
    auto obj = std::make_unique<Info>();
    obj->entries = startup_info(argc, argv);
    *info_out = store(std::move(obj));
  });
}
GRIDMPI_WEAK(Info_create_env)

extern "C" int PMPI_Info_get_valuelen(MPI_Info handle, const char* key, int* valuelen, int* flag) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_get_valuelen", [&] {
    Info& i = info(handle);
    std::string k = checked_key(key);
    require(valuelen != nullptr && flag != nullptr, MPI_ERR_ARG, "valuelen or flag is a null pointer");
    auto v = i.get(k);
    *flag = v.has_value();
    if (v) *valuelen = static_cast<int>(v->size());
  });
}
GRIDMPI_WEAK(Info_get_valuelen)

extern "C" int PMPI_Info_get_nkeys(MPI_Info handle, int* nkeys) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_get_nkeys", [&] {
    require(nkeys != nullptr, MPI_ERR_ARG, "nkeys is a null pointer");
    *nkeys = static_cast<int>(info(handle).entries.size());
  });
}
GRIDMPI_WEAK(Info_get_nkeys)

extern "C" int PMPI_Info_get_nthkey(MPI_Info handle, int n, char* key) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_get_nthkey", [&] {
    Info& i = info(handle);
    require(key != nullptr, MPI_ERR_ARG, "key is a null pointer");
    if (n < 0 || n >= static_cast<int>(i.entries.size()))
      throw MpiError(MPI_ERR_ARG, fmt::format("key number {} out of range (the info has {} keys)", n,
                                              i.entries.size()));
    const std::string& k = i.entries[n].first;
    std::memcpy(key, k.c_str(), k.size() + 1);
  });
}
GRIDMPI_WEAK(Info_get_nthkey)

extern "C" int PMPI_Info_delete(MPI_Info handle, const char* key) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_delete", [&] {
    Info& i = info(handle);
    i.erase(checked_key(key));
  });
}
GRIDMPI_WEAK(Info_delete)

extern "C" int PMPI_Info_dup(MPI_Info handle, MPI_Info* newinfo) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_dup", [&] {
    require(newinfo != nullptr, MPI_ERR_ARG, "newinfo is a null pointer");
    auto copy = std::make_unique<Info>(info(handle));
    *newinfo = store(std::move(copy));
  });
}
GRIDMPI_WEAK(Info_dup)

extern "C" int PMPI_Info_free(MPI_Info* handle) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_free", [&] {
    require(handle != nullptr, MPI_ERR_ARG, "info is a null pointer");
    info(*handle);
    if (*handle == MPI_INFO_ENV) throw MpiError(MPI_ERR_INFO, "MPI_INFO_ENV cannot be freed");
    info_table().release(*handle);
    *handle = MPI_INFO_NULL;
  });
}
GRIDMPI_WEAK(Info_free)
