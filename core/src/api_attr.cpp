// C API: attribute caching on communicators and datatypes (MPI-3.1 section
// 6.7), including the deprecated MPI-1 names.
#include "core/api.hpp"
#include "core/attr.hpp"
#include "core/group.hpp"
#include "core/runtime.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

int comm_keyval_create(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del, int* keyval,
                       void* extra_state) {
  require(keyval != nullptr, MPI_ERR_ARG, "keyval is a null pointer");
  *keyval = create_comm_keyval(copy, del, extra_state);
  return MPI_SUCCESS;
}

void comm_attr_get(MPI_Comm comm_handle, int keyval, void* attribute_val, int* flag) {
  require(attribute_val != nullptr && flag != nullptr, MPI_ERR_ARG, "attribute_val or flag is a null pointer");
  void* value = nullptr;
  *flag = get_comm_attr(comm_local(comm_handle), keyval, &value);
  // attribute_val is really a void**: the stored pointer is returned through it.
  if (*flag) *static_cast<void**>(attribute_val) = value;
}

}  // namespace

extern "C" int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del,
                                       int* keyval, void* extra_state) {
  return api_call(MPI_COMM_WORLD, "MPI_Comm_create_keyval", [&] {
    require_initialized("MPI_Comm_create_keyval");
    comm_keyval_create(copy, del, keyval, extra_state);
  });
}
GRIDMPI_WEAK(Comm_create_keyval)

extern "C" int PMPI_Keyval_create(MPI_Copy_function* copy, MPI_Delete_function* del, int* keyval,
                                  void* extra_state) {
  return api_call(MPI_COMM_WORLD, "MPI_Keyval_create", [&] {
    require_initialized("MPI_Keyval_create");
    comm_keyval_create(copy, del, keyval, extra_state);
  });
}
GRIDMPI_WEAK(Keyval_create)

extern "C" int PMPI_Comm_free_keyval(int* keyval) {
  return api_call(MPI_COMM_WORLD, "MPI_Comm_free_keyval", [&] {
    require_initialized("MPI_Comm_free_keyval");
    free_keyval(keyval, KeyvalKind::comm);
  });
}
GRIDMPI_WEAK(Comm_free_keyval)

extern "C" int PMPI_Keyval_free(int* keyval) {
  return api_call(MPI_COMM_WORLD, "MPI_Keyval_free", [&] {
    require_initialized("MPI_Keyval_free");
    free_keyval(keyval, KeyvalKind::comm);
  });
}
GRIDMPI_WEAK(Keyval_free)

extern "C" int PMPI_Comm_set_attr(MPI_Comm comm_handle, int keyval, void* attribute_val) {
  return api_call(comm_handle, "MPI_Comm_set_attr", [&] {
    require_initialized("MPI_Comm_set_attr");
    set_comm_attr(comm_local(comm_handle), keyval, attribute_val);
  });
}
GRIDMPI_WEAK(Comm_set_attr)

extern "C" int PMPI_Attr_put(MPI_Comm comm_handle, int keyval, void* attribute_val) {
  return api_call(comm_handle, "MPI_Attr_put", [&] {
    require_initialized("MPI_Attr_put");
    set_comm_attr(comm_local(comm_handle), keyval, attribute_val);
  });
}
GRIDMPI_WEAK(Attr_put)

extern "C" int PMPI_Comm_get_attr(MPI_Comm comm_handle, int keyval, void* attribute_val, int* flag) {
  return api_call(comm_handle, "MPI_Comm_get_attr", [&] {
    require_initialized("MPI_Comm_get_attr");
    comm_attr_get(comm_handle, keyval, attribute_val, flag);
  });
}
GRIDMPI_WEAK(Comm_get_attr)

extern "C" int PMPI_Attr_get(MPI_Comm comm_handle, int keyval, void* attribute_val, int* flag) {
  return api_call(comm_handle, "MPI_Attr_get", [&] {
    require_initialized("MPI_Attr_get");
    comm_attr_get(comm_handle, keyval, attribute_val, flag);
  });
}
GRIDMPI_WEAK(Attr_get)

extern "C" int PMPI_Comm_delete_attr(MPI_Comm comm_handle, int keyval) {
  return api_call(comm_handle, "MPI_Comm_delete_attr", [&] {
    require_initialized("MPI_Comm_delete_attr");
    delete_comm_attr(comm_local(comm_handle), keyval);
  });
}
GRIDMPI_WEAK(Comm_delete_attr)

extern "C" int PMPI_Attr_delete(MPI_Comm comm_handle, int keyval) {
  return api_call(comm_handle, "MPI_Attr_delete", [&] {
    require_initialized("MPI_Attr_delete");
    delete_comm_attr(comm_local(comm_handle), keyval);
  });
}
GRIDMPI_WEAK(Attr_delete)

extern "C" int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* copy, MPI_Type_delete_attr_function* del,
                                       int* keyval, void* extra_state) {
  return api_call(MPI_COMM_WORLD, "MPI_Type_create_keyval", [&] {
    require_initialized("MPI_Type_create_keyval");
    require(keyval != nullptr, MPI_ERR_ARG, "keyval is a null pointer");
    *keyval = create_type_keyval(copy, del, extra_state);
  });
}
GRIDMPI_WEAK(Type_create_keyval)

extern "C" int PMPI_Type_free_keyval(int* keyval) {
  return api_call(MPI_COMM_WORLD, "MPI_Type_free_keyval", [&] {
    require_initialized("MPI_Type_free_keyval");
    free_keyval(keyval, KeyvalKind::type);
  });
}
GRIDMPI_WEAK(Type_free_keyval)

extern "C" int PMPI_Type_set_attr(MPI_Datatype type, int keyval, void* attribute_val) {
  return api_call(MPI_COMM_WORLD, "MPI_Type_set_attr", [&] {
    require_initialized("MPI_Type_set_attr");
    set_type_attr(type, keyval, attribute_val);
  });
}
GRIDMPI_WEAK(Type_set_attr)

extern "C" int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void* attribute_val, int* flag) {
  return api_call(MPI_COMM_WORLD, "MPI_Type_get_attr", [&] {
    require_initialized("MPI_Type_get_attr");
    require(attribute_val != nullptr && flag != nullptr, MPI_ERR_ARG, "attribute_val or flag is a null pointer");
    void* value = nullptr;
    *flag = get_type_attr(type, keyval, &value);
    if (*flag) *static_cast<void**>(attribute_val) = value;
  });
}
GRIDMPI_WEAK(Type_get_attr)

extern "C" int PMPI_Type_delete_attr(MPI_Datatype type, int keyval) {
  return api_call(MPI_COMM_WORLD, "MPI_Type_delete_attr", [&] {
    require_initialized("MPI_Type_delete_attr");
    delete_type_attr(type, keyval);
  });
}
GRIDMPI_WEAK(Type_delete_attr)
