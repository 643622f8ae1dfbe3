// Reduction operations: the predefined ops on every predefined type they are
// defined for (MINLOC/MAXLOC on the pair types) and user ops.  Owner:
// core/op*.cpp.
#pragma once
#include <mpi.h>

#include <string>

#include "core/handle_table.hpp"

namespace gridmpi::core {

struct Op {
  MPI_Op handle = MPI_OP_NULL;
  bool commutative = true;
  MPI_User_function* user_function = nullptr;  // null for predefined ops
  MPI_User_function_c* user_function_c = nullptr;  // MPI_Op_create_c's (then user_function is null)
  bool is_user() const noexcept { return user_function || user_function_c; }
  bool predefined = false;
  // The user's reference plus one per pending operation (retain_op): a user
  // op freed while a nonblocking collective uses it lives until that ends.
  int refcount = 1;

  // inout[i] = in[i] op inout[i] for count elements of datatype (the MPI
  // order: `in` is the left operand).  Throws MpiError(MPI_ERR_OP) when the op
  // is not defined on the type.
  void apply(const void* in, void* inout, int count, MPI_Datatype datatype) const;
};

HandleTable<Op>& op_table();
// The predefined ops by handle (filled when op_table() is built, null
// before): a reduction's lookup without the table's checks.
extern Op* predefined_ops[GRIDMPI_PREDEFINED_OP_COUNT];
Op& op_lookup(MPI_Op handle);  // throws MpiError(MPI_ERR_OP)
inline Op& op(MPI_Op handle) {
  if (handle > 0 && handle < GRIDMPI_PREDEFINED_OP_COUNT) [[likely]]
    if (Op* o = predefined_ops[handle]) return *o;
  return op_lookup(handle);
}

// ---- additions of the op implementation ----

// MPI_Op_create / MPI_Op_free (freeing a predefined op throws MPI_ERR_OP).
MPI_Op op_create(MPI_User_function* function, bool commutative);
MPI_Op op_create_c(MPI_User_function_c* function, bool commutative);
void op_free(MPI_Op handle);
// Reference counting of user ops held by pending (nonblocking) operations;
// no-ops on predefined ops.
void retain_op(MPI_Op handle);
void release_op(MPI_Op handle);
// Throws MpiError(MPI_ERR_OP) unless `op` is defined on `datatype`: lets a
// collective reject a bad (op, type) pair on every rank before it sends
// anything.  User ops, MPI_REPLACE and MPI_NO_OP accept every type.
void check_op(MPI_Op op, MPI_Datatype datatype);
// "MPI_SUM" for predefined ops, "user op N" otherwise.
std::string op_name(MPI_Op handle);

}  // namespace gridmpi::core
