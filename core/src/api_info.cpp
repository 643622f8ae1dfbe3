// C API: info objects (MPI-3.1 chapter 9).
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
    require_initialized("MPI_Info_create");
    require(info_out != nullptr, MPI_ERR_ARG, "info is a null pointer");
    *info_out = store(std::make_unique<Info>());
  });
}
GRIDMPI_WEAK(Info_create)

extern "C" int PMPI_Info_set(MPI_Info handle, const char* key, const char* value) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_set", [&] {
    require_initialized("MPI_Info_set");
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
    require_initialized("MPI_Info_get");
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

extern "C" int PMPI_Info_get_valuelen(MPI_Info handle, const char* key, int* valuelen, int* flag) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_get_valuelen", [&] {
    require_initialized("MPI_Info_get_valuelen");
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
    require_initialized("MPI_Info_get_nkeys");
    require(nkeys != nullptr, MPI_ERR_ARG, "nkeys is a null pointer");
    *nkeys = static_cast<int>(info(handle).entries.size());
  });
}
GRIDMPI_WEAK(Info_get_nkeys)

extern "C" int PMPI_Info_get_nthkey(MPI_Info handle, int n, char* key) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_get_nthkey", [&] {
    require_initialized("MPI_Info_get_nthkey");
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
    require_initialized("MPI_Info_delete");
    Info& i = info(handle);
    i.erase(checked_key(key));
  });
}
GRIDMPI_WEAK(Info_delete)

extern "C" int PMPI_Info_dup(MPI_Info handle, MPI_Info* newinfo) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_dup", [&] {
    require_initialized("MPI_Info_dup");
    require(newinfo != nullptr, MPI_ERR_ARG, "newinfo is a null pointer");
    auto copy = std::make_unique<Info>(info(handle));
    *newinfo = store(std::move(copy));
  });
}
GRIDMPI_WEAK(Info_dup)

extern "C" int PMPI_Info_free(MPI_Info* handle) {
  return api_call(MPI_COMM_WORLD, "MPI_Info_free", [&] {
    require_initialized("MPI_Info_free");
    require(handle != nullptr, MPI_ERR_ARG, "info is a null pointer");
    info(*handle);
    if (*handle == MPI_INFO_ENV) throw MpiError(MPI_ERR_INFO, "MPI_INFO_ENV cannot be freed");
    info_table().release(*handle);
    *handle = MPI_INFO_NULL;
  });
}
GRIDMPI_WEAK(Info_free)
