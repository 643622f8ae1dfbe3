// Attribute caching: keyvals with copy/delete callbacks, attributes on
// communicators (stored in Comm::attributes) and on datatypes (stored here,
// keyed by the datatype handle, so that core::Datatype stays the datatype
// owner's business).  Owner: core/attr*.cpp.
#pragma once
#include <mpi.h>

#include "core/handle_table.hpp"

namespace gridmpi::core {

struct Comm;

enum class KeyvalKind { comm, type, win };

struct Keyval {
  int handle = MPI_KEYVAL_INVALID;
  KeyvalKind kind = KeyvalKind::comm;
  bool predefined = false;
  // One of the two pairs is used, depending on kind (comm and win callbacks
  // have the same C signature modulo the handle type).
  MPI_Comm_copy_attr_function* comm_copy = nullptr;
  MPI_Comm_delete_attr_function* comm_delete = nullptr;
  MPI_Type_copy_attr_function* type_copy = nullptr;
  MPI_Type_delete_attr_function* type_delete = nullptr;
  void* extra_state = nullptr;
  // The user's handle (until MPI_*_free_keyval) plus one per attribute stored
  // with this keyval: a freed keyval lives on until its last attribute goes.
  int refcount = 1;
  bool freed = false;
};

HandleTable<Keyval>& keyval_table();  // predefined keyvals (MPI_TAG_UB ...) always present

// The predefined communicator attributes (MPI_TAG_UB, MPI_HOST, ..., the
// IMPI_* ones): MPI_Comm_get_attr returns a pointer to the stored int.
void set_predefined_attribute(int keyval, int value);
int* predefined_attribute(int keyval) noexcept;  // nullptr for other keyvals

// Communicator attributes.
int create_comm_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del,
                       void* extra_state);
void free_keyval(int* keyval, KeyvalKind kind);
void set_comm_attr(Comm& comm, int keyval, void* value);
bool get_comm_attr(const Comm& comm, int keyval, void** value);
void delete_comm_attr(Comm& comm, int keyval);
// MPI_Comm_dup: runs every copy callback of `from`, storing the copies in `to`.
// On a failing callback, deletes what was copied and throws.
void copy_comm_attributes(const Comm& from, Comm& to);
// MPI_Comm_free / MPI_Finalize: runs every delete callback (throws the first
// failure after trying them all; attributes whose callback failed stay).
void delete_all_comm_attributes(Comm& comm);

// Datatype attributes.  The datatype owner calls copy_type_attributes from
// MPI_Type_dup and delete_type_attributes from MPI_Type_free.
int create_type_keyval(MPI_Type_copy_attr_function* copy, MPI_Type_delete_attr_function* del,
                       void* extra_state);
void set_type_attr(MPI_Datatype type, int keyval, void* value);
bool get_type_attr(MPI_Datatype type, int keyval, void** value);
void delete_type_attr(MPI_Datatype type, int keyval);
void copy_type_attributes(MPI_Datatype from, MPI_Datatype to);
void delete_type_attributes(MPI_Datatype type);

// ---- window attributes (stored here keyed by the window
// handle).  The predefined MPI_WIN_BASE ... MPI_WIN_MODEL are answered by
// core/src/api_win.cpp before get_win_attr is asked; MPI_Win_free calls
// delete_win_attributes.
int create_win_keyval(MPI_Win_copy_attr_function* copy, MPI_Win_delete_attr_function* del,
                      void* extra_state);
void set_win_attr(MPI_Win win, int keyval, void* value);
bool get_win_attr(MPI_Win win, int keyval, void** value);
void delete_win_attr(MPI_Win win, int keyval);
void delete_win_attributes(MPI_Win win);
// ---- end of window attributes ----

// Attribute values set from Fortran (MPI-3.1 17.2.7): the stored void* is the
// address of a heap MPI_Aint "box" holding the Fortran value, so C's get (and
// C callbacks) see a pointer to the value.  Boxes are reference counted by the
// attributes storing them (a C copy callback such as MPI_COMM_DUP_FN shares
// one) and freed with the last.
void* make_fortran_attr_box(MPI_Aint value);          // unreferenced until stored
bool fortran_attr_box_value(void* stored, MPI_Aint* value) noexcept;  // false: not a box
void discard_unused_fortran_attr_box(void* box) noexcept;  // after a failed set

}  // namespace gridmpi::core
