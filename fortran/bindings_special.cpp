// Hand-written Fortran bindings: the functions listed in HANDWRITTEN of
// fortran/gen_fortran.py (whose Fortran form is not a mechanical image of
// the C prototype), the predefined attribute callbacks callable from
// Fortran, the storage of mpif.h's sentinel COMMON blocks, and the helpers of
// fortran.hpp.  Owned by fortran/.
//
// As in the generated file, mpi_x_ calls MPI_X and pmpi_x_ calls PMPI_X, and
// mpi_x__ / pmpi_x__ are aliases (g77 mangling).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/api.hpp"
#include "core/attr.hpp"
#include "fortran/fortran.hpp"

// One-sided declarations that mpi.h may not have yet (identical to the
// standard's, so a later declaration in mpi.h agrees with them).
extern "C" {
int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag);
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag);
int MPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                          MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval, void* extra_state);
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval, void* extra_state);
}

// Every C function called here is referenced weakly: one not implemented yet
// must not break the link of libmpi.so (call() reports it instead).
#define GRIDMPI_FORTRAN_WEAK_REF(name) GRIDMPI_PRAGMA(weak MPI_##name) GRIDMPI_PRAGMA(weak PMPI_##name)
GRIDMPI_FORTRAN_WEAK_REF(Init)
GRIDMPI_FORTRAN_WEAK_REF(Init_thread)
GRIDMPI_FORTRAN_WEAK_REF(Pcontrol)
GRIDMPI_FORTRAN_WEAK_REF(Address)
GRIDMPI_FORTRAN_WEAK_REF(Type_hvector)
GRIDMPI_FORTRAN_WEAK_REF(Type_hindexed)
GRIDMPI_FORTRAN_WEAK_REF(Type_struct)
GRIDMPI_FORTRAN_WEAK_REF(Type_extent)
GRIDMPI_FORTRAN_WEAK_REF(Type_lb)
GRIDMPI_FORTRAN_WEAK_REF(Type_ub)
GRIDMPI_FORTRAN_WEAK_REF(Attr_put)
GRIDMPI_FORTRAN_WEAK_REF(Attr_get)
GRIDMPI_FORTRAN_WEAK_REF(Comm_get_attr)
GRIDMPI_FORTRAN_WEAK_REF(Type_get_attr)
GRIDMPI_FORTRAN_WEAK_REF(Win_get_attr)
GRIDMPI_FORTRAN_WEAK_REF(Keyval_create)
GRIDMPI_FORTRAN_WEAK_REF(Comm_create_keyval)
GRIDMPI_FORTRAN_WEAK_REF(Type_create_keyval)
GRIDMPI_FORTRAN_WEAK_REF(Win_create_keyval)
GRIDMPI_FORTRAN_WEAK_REF(Grequest_start)
GRIDMPI_FORTRAN_WEAK_REF(Buffer_detach)
GRIDMPI_FORTRAN_WEAK_REF(Info_get_string)
GRIDMPI_FORTRAN_WEAK_REF(Info_create_env)
GRIDMPI_FORTRAN_WEAK_REF(File_call_errhandler)
GRIDMPI_FORTRAN_WEAK_REF(Comm_spawn)
GRIDMPI_FORTRAN_WEAK_REF(Comm_spawn_multiple)

// The g77-style aliases of a hand-written pair.
#define GRIDMPI_FORTRAN_ALIASES(name)                 \
  GRIDMPI_PRAGMA(weak mpi_##name##__ = mpi_##name##_) \
  GRIDMPI_PRAGMA(weak pmpi_##name##__ = pmpi_##name##_)

// ---- sentinel COMMON blocks of mpif.h -----------------------------------

extern "C" {
MPI_Fint mpi_fortran_bottom_;
MPI_Fint mpi_fortran_in_place_;
MPI_Fint mpi_fortran_status_ignore_[MPI_F_STATUS_SIZE];
MPI_Fint mpi_fortran_statuses_ignore_[MPI_F_STATUS_SIZE];
MPI_Fint mpi_fortran_errcodes_ignore_[1];
MPI_Fint mpi_fortran_unweighted_[1];
MPI_Fint mpi_fortran_weights_empty_[1];
char mpi_fortran_argv_null_[1];
char mpi_fortran_argvs_null_[1];
}

// ---- helpers of fortran.hpp ------------------------------------------------

namespace gridmpi::fortran {

InString::InString(const char* text, std::size_t length, Trim trim) {
  std::size_t begin = 0, end = length;
  while (end > 0 && text[end - 1] == ' ') --end;
  if (trim == Trim::both)
    while (begin < end && text[begin] == ' ') ++begin;
  text_.assign(text + begin, end - begin);
}

OutString::OutString(char* target, std::size_t length)
    : target_(target), length_(length), buffer_(std::max<std::size_t>(length, MPI_MAX_INFO_VAL) + 1, '\0') {}

void OutString::copy_out() {
  std::size_t n = std::min(std::strlen(buffer_.c_str()), length_);
  std::memcpy(target_, buffer_.data(), n);
  std::memset(target_ + n, ' ', length_ - n);
}

int not_implemented(const char* function) {
  return core::handle_error(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION, function,
                            "declared in mpi.h but not implemented in this build of libmpi");
}

void* attribute_box(MPI_Aint value) { return core::make_fortran_attr_box(value); }

}  // namespace gridmpi::fortran

namespace gf = gridmpi::fortran;

namespace {

// Calls fn when the C function exists, else reports it (see fortran.hpp).
template <class Fn, class... Args>
MPI_Fint call(const char* name, Fn* fn, Args... args) {
  if (fn == nullptr) return gf::not_implemented(name);
  return fn(args...);
}

// Predefined communicator attributes are stored as ints: C returns a pointer
// to the int, Fortran the value.
bool is_predefined_comm_int_attribute(int keyval) {
  switch (keyval) {
    case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL: case MPI_UNIVERSE_SIZE:
    case MPI_LASTUSEDCODE: case MPI_APPNUM: case IMPI_CLIENT_SIZE: case IMPI_CLIENT_COLOR:
    case IMPI_HOST_SIZE: case IMPI_HOST_COLOR:
      return true;
    default:
      return false;
  }
}

// The Fortran value of a communicator attribute given its C pointer value.
MPI_Aint comm_attribute_value(int keyval, void* value) {
  if (is_predefined_comm_int_attribute(keyval)) return *static_cast<int*>(value);
  return reinterpret_cast<MPI_Aint>(value);
}

MPI_Aint win_attribute_value(int keyval, void* value) {
  switch (keyval) {
    case MPI_WIN_SIZE:
      return *static_cast<MPI_Aint*>(value);
    case MPI_WIN_DISP_UNIT: case MPI_WIN_CREATE_FLAVOR: case MPI_WIN_MODEL:
      return *static_cast<int*>(value);
    default:  // MPI_WIN_BASE and user attributes: the pointer itself
      return reinterpret_cast<MPI_Aint>(value);
  }
}

// The Fortran view of a stored attribute value: the value itself when it was
// set from Fortran, else the C pointer as an integer.
MPI_Aint fortran_value(void* stored) {
  MPI_Aint v = 0;
  if (gridmpi::core::fortran_attr_box_value(stored, &v)) return v;
  return reinterpret_cast<MPI_Aint>(stored);
}

// ---- attribute callbacks written in Fortran --------------------------------

// MPI-2 style (communicators, datatypes, windows): values are
// INTEGER(KIND=MPI_ADDRESS_KIND), flag is LOGICAL.
using FortranCopyFn = void(MPI_Fint* object, MPI_Fint* keyval, MPI_Aint* extra_state, MPI_Aint* value_in,
                           MPI_Aint* value_out, MPI_Fint* flag, MPI_Fint* ierror);
using FortranDeleteFn = void(MPI_Fint* object, MPI_Fint* keyval, MPI_Aint* value, MPI_Aint* extra_state,
                             MPI_Fint* ierror);
// MPI-1 style (MPI_Keyval_create): every value is a default INTEGER.
using Fortran1CopyFn = void(MPI_Fint* comm, MPI_Fint* keyval, MPI_Fint* extra_state, MPI_Fint* value_in,
                            MPI_Fint* value_out, MPI_Fint* flag, MPI_Fint* ierror);
using Fortran1DeleteFn = void(MPI_Fint* comm, MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* extra_state,
                              MPI_Fint* ierror);

// What the C keyval carries as its extra_state.  Never freed: a keyval's
// callbacks may run until the last object holding the attribute is freed,
// after MPI_*_free_keyval; one small record per keyval created.
struct FortranKeyval {
  FortranCopyFn* copy = nullptr;
  FortranDeleteFn* del = nullptr;
  Fortran1CopyFn* copy1 = nullptr;
  Fortran1DeleteFn* del1 = nullptr;
  MPI_Aint extra_state = 0;
};

// The C callbacks (MPI_Comm, MPI_Datatype and MPI_Win are all int, so one
// pair serves the three kinds of keyval).
int copy_trampoline(int object, int keyval, void* extra, void* in, void* out, int* flag) {
  auto* k = static_cast<FortranKeyval*>(extra);
  MPI_Fint ierror = MPI_SUCCESS, logical = 0;
  if (k->copy1 != nullptr) {
    auto extra1 = static_cast<MPI_Fint>(k->extra_state);
    auto value_in = static_cast<MPI_Fint>(fortran_value(in));
    MPI_Fint value_out = 0;
    k->copy1(&object, &keyval, &extra1, &value_in, &value_out, &logical, &ierror);
    if (ierror == MPI_SUCCESS && logical != 0)
      *static_cast<void**>(out) = gf::attribute_box(static_cast<MPI_Aint>(value_out));
  } else {
    auto value_in = fortran_value(in);
    MPI_Aint value_out = 0;
    k->copy(&object, &keyval, &k->extra_state, &value_in, &value_out, &logical, &ierror);
    if (ierror == MPI_SUCCESS && logical != 0) *static_cast<void**>(out) = gf::attribute_box(value_out);
  }
  *flag = logical != 0;
  return ierror;
}

int delete_trampoline(int object, int keyval, void* value, void* extra) {
  auto* k = static_cast<FortranKeyval*>(extra);
  MPI_Fint ierror = MPI_SUCCESS;
  if (k->del1 != nullptr) {
    auto extra1 = static_cast<MPI_Fint>(k->extra_state);
    auto value1 = static_cast<MPI_Fint>(fortran_value(value));
    k->del1(&object, &keyval, &value1, &extra1, &ierror);
  } else {
    auto value2 = fortran_value(value);
    k->del(&object, &keyval, &value2, &k->extra_state, &ierror);
  }
  return ierror;
}

using CKeyvalCreate = int(MPI_Comm_copy_attr_function*, MPI_Comm_delete_attr_function*, int*, void*);

MPI_Fint create_keyval(const char* name, CKeyvalCreate* fn, FortranKeyval record, MPI_Fint* keyval) {
  auto* k = new FortranKeyval(record);  // see FortranKeyval: lives as long as the process
  MPI_Fint rc = call(name, fn, copy_trampoline, delete_trampoline, keyval, static_cast<void*>(k));
  if (rc != MPI_SUCCESS) delete k;
  return rc;
}

// ---- generalized requests --------------------------------------------------

using FortranQueryFn = void(MPI_Aint* extra_state, MPI_Fint* status, MPI_Fint* ierror);
using FortranFreeFn = void(MPI_Aint* extra_state, MPI_Fint* ierror);
using FortranCancelFn = void(MPI_Aint* extra_state, MPI_Fint* complete, MPI_Fint* ierror);

// The callbacks receive the caller's own EXTRA_STATE variable (its address is
// kept, as MPICH and Open MPI do), so what a callback stores there is seen by
// the program, e.g. a counter that the free callback updates.
struct FortranGrequest {
  FortranQueryFn* query;
  FortranFreeFn* free;
  FortranCancelFn* cancel;
  MPI_Aint* extra_state;
};

int grequest_query(void* extra, MPI_Status* status) {
  auto* g = static_cast<FortranGrequest*>(extra);
  MPI_Fint ierror = MPI_SUCCESS;
  g->query(g->extra_state, reinterpret_cast<MPI_Fint*>(status), &ierror);
  return ierror;
}

int grequest_free(void* extra) {
  auto* g = static_cast<FortranGrequest*>(extra);
  MPI_Fint ierror = MPI_SUCCESS;
  g->free(g->extra_state, &ierror);
  delete g;  // the free callback is the request's last
  return ierror;
}

int grequest_cancel(void* extra, int complete) {
  auto* g = static_cast<FortranGrequest*>(extra);
  MPI_Fint ierror = MPI_SUCCESS, logical = complete != 0;
  g->cancel(g->extra_state, &logical, &ierror);
  return ierror;
}

// ---- bodies shared by the mpi_ and pmpi_ entry points ----------------------

using AttrGetFn = int(int, int, void*, int*);

void attr_get_aint(const char* name, AttrGetFn* fn, MPI_Aint (*convert)(int, void*), const MPI_Fint* object,
                   const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag, MPI_Fint* ierror) {
  void* c_value = nullptr;
  int c_flag = 0;
  *ierror = call(name, fn, *object, *keyval, static_cast<void*>(&c_value), &c_flag);
  MPI_Aint boxed = 0;
  if (*ierror == MPI_SUCCESS && c_flag) {
    if (gridmpi::core::fortran_attr_box_value(c_value, &boxed)) *value = boxed;  // set from Fortran
    else *value = convert != nullptr ? convert(*keyval, c_value) : reinterpret_cast<MPI_Aint>(c_value);
  }
  *flag = *ierror == MPI_SUCCESS && c_flag ? 1 : 0;
}

void attr_get_int(AttrGetFn* fn, const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* flag,
                  MPI_Fint* ierror) {
  MPI_Aint wide = 0;
  attr_get_aint("MPI_Attr_get", fn, comm_attribute_value, comm, keyval, &wide, flag, ierror);
  if (*flag) *value = static_cast<MPI_Fint>(wide);
}

using TypeAintFn = int(MPI_Datatype, MPI_Aint*);

std::vector<MPI_Aint> widen(const MPI_Fint* values, MPI_Fint count) {
  return std::vector<MPI_Aint>(values, values + std::max<MPI_Fint>(count, 0));
}

void type_aint_out(const char* name, TypeAintFn* fn, const MPI_Fint* type, MPI_Fint* out, MPI_Fint* ierror) {
  MPI_Aint wide = 0;
  *ierror = call(name, fn, *type, &wide);
  if (*ierror == MPI_SUCCESS) *out = static_cast<MPI_Fint>(wide);
}

}  // namespace

extern "C" {

// ---- environment -------------------------------------------------------------

void mpi_init_(MPI_Fint* ierror) { *ierror = call("MPI_Init", MPI_Init, nullptr, nullptr); }
void pmpi_init_(MPI_Fint* ierror) { *ierror = call("MPI_Init", PMPI_Init, nullptr, nullptr); }
GRIDMPI_FORTRAN_ALIASES(init)

void mpi_init_thread_(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  *ierror = call("MPI_Init_thread", MPI_Init_thread, nullptr, nullptr, *required, provided);
}
void pmpi_init_thread_(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  *ierror = call("MPI_Init_thread", PMPI_Init_thread, nullptr, nullptr, *required, provided);
}
GRIDMPI_FORTRAN_ALIASES(init_thread)

void mpi_pcontrol_(const MPI_Fint* level) { call("MPI_Pcontrol", MPI_Pcontrol, *level); }
void pmpi_pcontrol_(const MPI_Fint* level) { call("MPI_Pcontrol", PMPI_Pcontrol, *level); }
GRIDMPI_FORTRAN_ALIASES(pcontrol)

// ---- MPI-1 datatype functions with default-INTEGER addresses -----------------

void mpi_address_(const void* location, MPI_Fint* address, MPI_Fint* ierror) {
  MPI_Aint wide = 0;
  *ierror = call("MPI_Address", MPI_Address, gf::choice(location), &wide);
  *address = static_cast<MPI_Fint>(wide);
}
void pmpi_address_(const void* location, MPI_Fint* address, MPI_Fint* ierror) {
  MPI_Aint wide = 0;
  *ierror = call("MPI_Address", PMPI_Address, gf::choice(location), &wide);
  *address = static_cast<MPI_Fint>(wide);
}
GRIDMPI_FORTRAN_ALIASES(address)

void mpi_type_hvector_(const MPI_Fint* count, const MPI_Fint* blocklength, const MPI_Fint* stride,
                       const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierror) {
  *ierror = call("MPI_Type_hvector", MPI_Type_hvector, *count, *blocklength,
                 static_cast<MPI_Aint>(*stride), *oldtype, newtype);
}
void pmpi_type_hvector_(const MPI_Fint* count, const MPI_Fint* blocklength, const MPI_Fint* stride,
                        const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierror) {
  *ierror = call("MPI_Type_hvector", PMPI_Type_hvector, *count, *blocklength,
                 static_cast<MPI_Aint>(*stride), *oldtype, newtype);
}
GRIDMPI_FORTRAN_ALIASES(type_hvector)

void mpi_type_hindexed_(const MPI_Fint* count, MPI_Fint* blocklengths, const MPI_Fint* displacements,
                        const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierror) {
  auto wide = widen(displacements, *count);
  *ierror = call("MPI_Type_hindexed", MPI_Type_hindexed, *count, blocklengths,
                 wide.data(), *oldtype, newtype);
}
void pmpi_type_hindexed_(const MPI_Fint* count, MPI_Fint* blocklengths, const MPI_Fint* displacements,
                         const MPI_Fint* oldtype, MPI_Fint* newtype, MPI_Fint* ierror) {
  auto wide = widen(displacements, *count);
  *ierror = call("MPI_Type_hindexed", PMPI_Type_hindexed, *count, blocklengths,
                 wide.data(), *oldtype, newtype);
}
GRIDMPI_FORTRAN_ALIASES(type_hindexed)

void mpi_type_struct_(const MPI_Fint* count, MPI_Fint* blocklengths, const MPI_Fint* displacements,
                      MPI_Fint* types, MPI_Fint* newtype, MPI_Fint* ierror) {
  auto wide = widen(displacements, *count);
  *ierror = call("MPI_Type_struct", MPI_Type_struct, *count, blocklengths,
                 wide.data(), types, newtype);
}
void pmpi_type_struct_(const MPI_Fint* count, MPI_Fint* blocklengths, const MPI_Fint* displacements,
                       MPI_Fint* types, MPI_Fint* newtype, MPI_Fint* ierror) {
  auto wide = widen(displacements, *count);
  *ierror = call("MPI_Type_struct", PMPI_Type_struct, *count, blocklengths,
                 wide.data(), types, newtype);
}
GRIDMPI_FORTRAN_ALIASES(type_struct)

void mpi_type_extent_(const MPI_Fint* type, MPI_Fint* extent, MPI_Fint* ierror) {
  type_aint_out("MPI_Type_extent", MPI_Type_extent, type, extent, ierror);
}
void pmpi_type_extent_(const MPI_Fint* type, MPI_Fint* extent, MPI_Fint* ierror) {
  type_aint_out("MPI_Type_extent", PMPI_Type_extent, type, extent, ierror);
}
GRIDMPI_FORTRAN_ALIASES(type_extent)

void mpi_type_lb_(const MPI_Fint* type, MPI_Fint* lb, MPI_Fint* ierror) {
  type_aint_out("MPI_Type_lb", MPI_Type_lb, type, lb, ierror);
}
void pmpi_type_lb_(const MPI_Fint* type, MPI_Fint* lb, MPI_Fint* ierror) {
  type_aint_out("MPI_Type_lb", PMPI_Type_lb, type, lb, ierror);
}
GRIDMPI_FORTRAN_ALIASES(type_lb)

void mpi_type_ub_(const MPI_Fint* type, MPI_Fint* ub, MPI_Fint* ierror) {
  type_aint_out("MPI_Type_ub", MPI_Type_ub, type, ub, ierror);
}
void pmpi_type_ub_(const MPI_Fint* type, MPI_Fint* ub, MPI_Fint* ierror) {
  type_aint_out("MPI_Type_ub", PMPI_Type_ub, type, ub, ierror);
}
GRIDMPI_FORTRAN_ALIASES(type_ub)

// ---- attributes ------------------------------------------------------------

void mpi_attr_put_(const MPI_Fint* comm, const MPI_Fint* keyval, const MPI_Fint* value, MPI_Fint* ierror) {
  *ierror = call("MPI_Attr_put", MPI_Attr_put, *comm, *keyval,
                 gf::attribute_box(static_cast<MPI_Aint>(*value)));
}
void pmpi_attr_put_(const MPI_Fint* comm, const MPI_Fint* keyval, const MPI_Fint* value, MPI_Fint* ierror) {
  *ierror = call("MPI_Attr_put", PMPI_Attr_put, *comm, *keyval,
                 gf::attribute_box(static_cast<MPI_Aint>(*value)));
}
GRIDMPI_FORTRAN_ALIASES(attr_put)

void mpi_attr_get_(const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* flag,
                   MPI_Fint* ierror) {
  attr_get_int(MPI_Attr_get, comm, keyval, value, flag, ierror);
}
void pmpi_attr_get_(const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* flag,
                    MPI_Fint* ierror) {
  attr_get_int(PMPI_Attr_get, comm, keyval, value, flag, ierror);
}
GRIDMPI_FORTRAN_ALIASES(attr_get)

void mpi_comm_get_attr_(const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                        MPI_Fint* ierror) {
  attr_get_aint("MPI_Comm_get_attr", MPI_Comm_get_attr, comm_attribute_value, comm, keyval, value, flag, ierror);
}
void pmpi_comm_get_attr_(const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                         MPI_Fint* ierror) {
  attr_get_aint("MPI_Comm_get_attr", PMPI_Comm_get_attr, comm_attribute_value, comm, keyval, value, flag, ierror);
}
GRIDMPI_FORTRAN_ALIASES(comm_get_attr)

void mpi_type_get_attr_(const MPI_Fint* type, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                        MPI_Fint* ierror) {
  attr_get_aint("MPI_Type_get_attr", MPI_Type_get_attr, nullptr, type, keyval, value, flag, ierror);
}
void pmpi_type_get_attr_(const MPI_Fint* type, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                         MPI_Fint* ierror) {
  attr_get_aint("MPI_Type_get_attr", PMPI_Type_get_attr, nullptr, type, keyval, value, flag, ierror);
}
GRIDMPI_FORTRAN_ALIASES(type_get_attr)

void mpi_win_get_attr_(const MPI_Fint* win, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                       MPI_Fint* ierror) {
  attr_get_aint("MPI_Win_get_attr", MPI_Win_get_attr, win_attribute_value, win, keyval, value, flag, ierror);
}
void pmpi_win_get_attr_(const MPI_Fint* win, const MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                        MPI_Fint* ierror) {
  attr_get_aint("MPI_Win_get_attr", PMPI_Win_get_attr, win_attribute_value, win, keyval, value, flag, ierror);
}
GRIDMPI_FORTRAN_ALIASES(win_get_attr)

// ---- keyvals with Fortran callbacks ----------------------------------------

void mpi_keyval_create_(Fortran1CopyFn* copy, Fortran1DeleteFn* del, MPI_Fint* keyval, const MPI_Fint* extra,
                        MPI_Fint* ierror) {
  *ierror = create_keyval("MPI_Keyval_create", MPI_Keyval_create, {nullptr, nullptr, copy, del, *extra}, keyval);
}
void pmpi_keyval_create_(Fortran1CopyFn* copy, Fortran1DeleteFn* del, MPI_Fint* keyval, const MPI_Fint* extra,
                         MPI_Fint* ierror) {
  *ierror = create_keyval("MPI_Keyval_create", PMPI_Keyval_create, {nullptr, nullptr, copy, del, *extra}, keyval);
}
GRIDMPI_FORTRAN_ALIASES(keyval_create)

#define GRIDMPI_FORTRAN_KEYVAL_CREATE(lower, Name)                                                         \
  void mpi_##lower##_(FortranCopyFn* copy, FortranDeleteFn* del, MPI_Fint* keyval, const MPI_Aint* extra, \
                      MPI_Fint* ierror) {                                                                  \
    *ierror = create_keyval("MPI_" #Name, MPI_##Name, {copy, del, nullptr, nullptr, *extra}, keyval);      \
  }                                                                                                        \
  void pmpi_##lower##_(FortranCopyFn* copy, FortranDeleteFn* del, MPI_Fint* keyval, const MPI_Aint* extra, \
                       MPI_Fint* ierror) {                                                                 \
    *ierror = create_keyval("MPI_" #Name, PMPI_##Name, {copy, del, nullptr, nullptr, *extra}, keyval);     \
  }                                                                                                        \
  GRIDMPI_FORTRAN_ALIASES(lower)

GRIDMPI_FORTRAN_KEYVAL_CREATE(comm_create_keyval, Comm_create_keyval)
GRIDMPI_FORTRAN_KEYVAL_CREATE(type_create_keyval, Type_create_keyval)
GRIDMPI_FORTRAN_KEYVAL_CREATE(win_create_keyval, Win_create_keyval)

// ---- predefined callbacks, Fortran flavour ----------------------------------

void mpi_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* flag, MPI_Fint* ierror) {
  *flag = 0;
  *ierror = MPI_SUCCESS;
}
void mpi_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* in, MPI_Fint* out, MPI_Fint* flag, MPI_Fint* ierror) {
  *out = *in;
  *flag = 1;
  *ierror = MPI_SUCCESS;
}
void mpi_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* ierror) { *ierror = MPI_SUCCESS; }

void mpi_comm_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint* flag,
                            MPI_Fint* ierror) {
  *flag = 0;
  *ierror = MPI_SUCCESS;
}
void mpi_comm_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag,
                      MPI_Fint* ierror) {
  *out = *in;
  *flag = 1;
  *ierror = MPI_SUCCESS;
}
void mpi_comm_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint* ierror) {
  *ierror = MPI_SUCCESS;
}
// Datatypes and windows: the same functions under their names.
#pragma weak mpi_type_null_copy_fn_ = mpi_comm_null_copy_fn_
#pragma weak mpi_type_dup_fn_ = mpi_comm_dup_fn_
#pragma weak mpi_type_null_delete_fn_ = mpi_comm_null_delete_fn_
#pragma weak mpi_win_null_copy_fn_ = mpi_comm_null_copy_fn_
#pragma weak mpi_win_dup_fn_ = mpi_comm_dup_fn_
#pragma weak mpi_win_null_delete_fn_ = mpi_comm_null_delete_fn_

// ---- generalized requests and the rest -------------------------------------

void mpi_grequest_start_(FortranQueryFn* query, FortranFreeFn* free, FortranCancelFn* cancel, MPI_Aint* extra,
                         MPI_Fint* request, MPI_Fint* ierror) {
  auto* g = new FortranGrequest{query, free, cancel, extra};  // deleted by grequest_free
  *ierror = call("MPI_Grequest_start", MPI_Grequest_start, grequest_query, grequest_free, grequest_cancel,
                 static_cast<void*>(g), request);
  if (*ierror != MPI_SUCCESS) delete g;
}
void pmpi_grequest_start_(FortranQueryFn* query, FortranFreeFn* free, FortranCancelFn* cancel,
                          MPI_Aint* extra, MPI_Fint* request, MPI_Fint* ierror) {
  auto* g = new FortranGrequest{query, free, cancel, extra};
  *ierror = call("MPI_Grequest_start", PMPI_Grequest_start, grequest_query, grequest_free, grequest_cancel,
                 static_cast<void*>(g), request);
  if (*ierror != MPI_SUCCESS) delete g;
}
GRIDMPI_FORTRAN_ALIASES(grequest_start)

// Fortran cannot use the address of the detached buffer through a choice
// argument; BUFFER_ADDR is left untouched and only SIZE is returned.
void mpi_buffer_detach_(void*, MPI_Fint* size, MPI_Fint* ierror) {
  void* address = nullptr;
  *ierror = call("MPI_Buffer_detach", MPI_Buffer_detach, static_cast<void*>(&address), size);
}
void pmpi_buffer_detach_(void*, MPI_Fint* size, MPI_Fint* ierror) {
  void* address = nullptr;
  *ierror = call("MPI_Buffer_detach", PMPI_Buffer_detach, static_cast<void*>(&address), size);
}
GRIDMPI_FORTRAN_ALIASES(buffer_detach)

// ---- MPI-4.0 info functions ----------------------------------------------
// MPI_INFO_GET_STRING: in Fortran BUFLEN counts characters, without a
// terminator, both ways (in: how many to return; out: the value's length);
// VALUE is blank-padded, and left alone when BUFLEN is 0 or the key is
// missing.  MPI_INFO_CREATE_ENV has no argc/argv (the command line then
// comes from /proc/self/cmdline, as for C's argc 0).

namespace {

MPI_Fint info_get_string(int (*fn)(MPI_Info, const char*, int*, char*, int*), const MPI_Fint* info,
                         const char* key, MPI_Fint* buflen, char* value, MPI_Fint* flag, std::size_t key_len,
                         std::size_t value_len) {
  gf::InString k(key, key_len, gf::Trim::both);
  std::vector<char> buffer(MPI_MAX_INFO_VAL + 1, '\0');
  int c_len = *buflen < 0 ? *buflen : (*buflen > 0 ? MPI_MAX_INFO_VAL + 1 : 0);
  int c_flag = 0;
  MPI_Fint rc = call("MPI_Info_get_string", fn, *info, k.c_str(), &c_len, buffer.data(), &c_flag);
  if (rc != MPI_SUCCESS) return rc;
  *flag = c_flag ? 1 : 0;
  if (!c_flag) return rc;
  if (*buflen > 0) {
    std::size_t n = std::min({static_cast<std::size_t>(*buflen), value_len, std::strlen(buffer.data())});
    std::memcpy(value, buffer.data(), n);
    std::memset(value + n, ' ', value_len - n);
  }
  *buflen = c_len - 1;
  return rc;
}

}  // namespace

void mpi_info_get_string_(const MPI_Fint* info, const char* key, MPI_Fint* buflen, char* value, MPI_Fint* flag,
                          MPI_Fint* ierror, std::size_t key_len, std::size_t value_len) {
  *ierror = info_get_string(MPI_Info_get_string, info, key, buflen, value, flag, key_len, value_len);
}
void pmpi_info_get_string_(const MPI_Fint* info, const char* key, MPI_Fint* buflen, char* value, MPI_Fint* flag,
                           MPI_Fint* ierror, std::size_t key_len, std::size_t value_len) {
  *ierror = info_get_string(PMPI_Info_get_string, info, key, buflen, value, flag, key_len, value_len);
}
GRIDMPI_FORTRAN_ALIASES(info_get_string)

void mpi_info_create_env_(MPI_Fint* info, MPI_Fint* ierror) {
  *ierror = call("MPI_Info_create_env", MPI_Info_create_env, 0, nullptr, info);
}
void pmpi_info_create_env_(MPI_Fint* info, MPI_Fint* ierror) {
  *ierror = call("MPI_Info_create_env", PMPI_Info_create_env, 0, nullptr, info);
}
GRIDMPI_FORTRAN_ALIASES(info_create_env)

// ---- MPI_COMM_SPAWN, MPI_COMM_SPAWN_MULTIPLE ---------------------------------
// Fortran's ARGV is an array of CHARACTER*(*) ended by a blank entry (and
// ARRAY_OF_ARGV a two-dimensional one), not C's NULL-terminated char**.
// Spawning is not supported (core/src/api_dynamic.cpp): the C functions
// report MPI_ERR_SPAWN without reading the arguments, so only the command
// (for the message), the handles and the error codes are passed on.
void mpi_comm_spawn_(const char* command, const char*, MPI_Fint* maxprocs, MPI_Fint* info, MPI_Fint* root,
                     MPI_Fint* comm, MPI_Fint* intercomm, MPI_Fint* errcodes, MPI_Fint* ierror,
                     std::size_t command_length, std::size_t) {
  gf::InString c(command, command_length, gf::Trim::both);
  *ierror = call("MPI_Comm_spawn", MPI_Comm_spawn, c.c_str(), MPI_ARGV_NULL, *maxprocs, *info, *root, *comm,
                 intercomm, gf::errcodes(errcodes));
}
void pmpi_comm_spawn_(const char* command, const char*, MPI_Fint* maxprocs, MPI_Fint* info, MPI_Fint* root,
                      MPI_Fint* comm, MPI_Fint* intercomm, MPI_Fint* errcodes, MPI_Fint* ierror,
                      std::size_t command_length, std::size_t) {
  gf::InString c(command, command_length, gf::Trim::both);
  *ierror = call("MPI_Comm_spawn", PMPI_Comm_spawn, c.c_str(), MPI_ARGV_NULL, *maxprocs, *info, *root, *comm,
                 intercomm, gf::errcodes(errcodes));
}
GRIDMPI_FORTRAN_ALIASES(comm_spawn)

void mpi_comm_spawn_multiple_(MPI_Fint* count, const char*, const char*, MPI_Fint* maxprocs, MPI_Fint* info,
                              MPI_Fint* root, MPI_Fint* comm, MPI_Fint* intercomm, MPI_Fint* errcodes,
                              MPI_Fint* ierror, std::size_t, std::size_t) {
  *ierror = call("MPI_Comm_spawn_multiple", MPI_Comm_spawn_multiple, *count, nullptr, nullptr, maxprocs, info, *root,
                 *comm, intercomm, gf::errcodes(errcodes));
}
void pmpi_comm_spawn_multiple_(MPI_Fint* count, const char*, const char*, MPI_Fint* maxprocs, MPI_Fint* info,
                               MPI_Fint* root, MPI_Fint* comm, MPI_Fint* intercomm, MPI_Fint* errcodes,
                               MPI_Fint* ierror, std::size_t, std::size_t) {
  *ierror = call("MPI_Comm_spawn_multiple", PMPI_Comm_spawn_multiple, *count, nullptr, nullptr, maxprocs, info,
                 *root, *comm, intercomm, gf::errcodes(errcodes));
}
GRIDMPI_FORTRAN_ALIASES(comm_spawn_multiple)

// ---- MPI_REGISTER_DATAREP (MPI-IO) -----------------------------------------
// Fortran conversion callbacks take every argument by reference and have an
// IERROR; no trampolines exist yet, so Fortran programs get
// MPI_ERR_UNSUPPORTED_OPERATION (through MPI_FILE_NULL's error handler, as
// the C function reports its errors).  C programs can register data
// representations (core/file.cpp).
namespace {
int fortran_register_datarep(int (*call_errhandler)(MPI_File, int)) {
  if (call_errhandler) call_errhandler(MPI_FILE_NULL, MPI_ERR_UNSUPPORTED_OPERATION);
  return MPI_ERR_UNSUPPORTED_OPERATION;
}
}  // namespace
void mpi_register_datarep_(const char*, void*, void*, void*, void*, MPI_Fint* ierror, std::size_t) {
  *ierror = fortran_register_datarep(MPI_File_call_errhandler);
}
void pmpi_register_datarep_(const char*, void*, void*, void*, void*, MPI_Fint* ierror, std::size_t) {
  *ierror = fortran_register_datarep(PMPI_File_call_errhandler);
}
GRIDMPI_FORTRAN_ALIASES(register_datarep)

// ---- MPI_SIZEOF (MPI-3.1 17.1.9) -----------------------------------------
// A generic of the `mpi` module (mpi.f90): one specific per type and kind,
// each an assumed-rank dummy (the descriptor is ignored here), so the size
// comes from the interface that the compiler picked.
#define GRIDMPI_FORTRAN_SIZEOF(suffix, bytes)                                          \
  void mpi_sizeof_##suffix##_(const void*, MPI_Fint* size, MPI_Fint* ierror) {         \
    *size = (bytes);                                                                  \
    *ierror = MPI_SUCCESS;                                                            \
  }                                                                                   \
  void pmpi_sizeof_##suffix##_(const void*, MPI_Fint* size, MPI_Fint* ierror) {        \
    *size = (bytes);                                                                  \
    *ierror = MPI_SUCCESS;                                                            \
  }
GRIDMPI_FORTRAN_SIZEOF(integer1, 1)
GRIDMPI_FORTRAN_SIZEOF(integer2, 2)
GRIDMPI_FORTRAN_SIZEOF(integer4, 4)
GRIDMPI_FORTRAN_SIZEOF(integer8, 8)
GRIDMPI_FORTRAN_SIZEOF(real4, 4)
GRIDMPI_FORTRAN_SIZEOF(real8, 8)
GRIDMPI_FORTRAN_SIZEOF(real16, 16)
GRIDMPI_FORTRAN_SIZEOF(complex8, 8)
GRIDMPI_FORTRAN_SIZEOF(complex16, 16)
GRIDMPI_FORTRAN_SIZEOF(complex32, 32)
GRIDMPI_FORTRAN_SIZEOF(logical1, 1)
GRIDMPI_FORTRAN_SIZEOF(logical2, 2)
GRIDMPI_FORTRAN_SIZEOF(logical4, 4)
GRIDMPI_FORTRAN_SIZEOF(logical8, 8)
GRIDMPI_FORTRAN_SIZEOF(character1, 1)  // the hidden length argument is not needed

}  // extern "C"
