// Reduction operations: the predefined ops on every predefined type they are
// defined for (MINLOC/MAXLOC on the pair types) and user ops.  Owner:
// core/op*.cpp.
#pragma once
#include <mpi.h>

#include "core/handle_table.hpp"

namespace gridmpi::core {

struct Op {
  MPI_Op handle = MPI_OP_NULL;
  bool commutative = true;
  MPI_User_function* user_function = nullptr;  // null for predefined ops
  bool predefined = false;

  // inout[i] = in[i] op inout[i] for count elements of datatype (the MPI
  // order: `in` is the left operand).  Throws MpiError(MPI_ERR_OP) when the op
  // is not defined on the type.
  void apply(const void* in, void* inout, int count, MPI_Datatype datatype) const;
};

HandleTable<Op>& op_table();
Op& op(MPI_Op handle);  // throws MpiError(MPI_ERR_OP)

}  // namespace gridmpi::core
