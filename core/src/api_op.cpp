// C API: user reduction operations and MPI_Reduce_local.  None of these
// needs MPI_Init.
#include "core/api.hpp"
#include "core/datatype.hpp"
#include "core/op.hpp"

using gridmpi::MpiError;
using gridmpi::require;
namespace core = gridmpi::core;

extern "C" int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Op_create", [&] {
    require(op != nullptr, MPI_ERR_ARG, "op is a null pointer");
    *op = core::op_create(user_fn, commute != 0);
  });
}
GRIDMPI_WEAK(Op_create)

extern "C" int PMPI_Op_free(MPI_Op* op) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Op_free", [&] {
    require(op != nullptr, MPI_ERR_ARG, "op is a null pointer");
    core::op_free(*op);
    *op = MPI_OP_NULL;
  });
}
GRIDMPI_WEAK(Op_free)

extern "C" int PMPI_Op_commutative(MPI_Op op, int* commute) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Op_commutative", [&] {
    require(commute != nullptr, MPI_ERR_ARG, "commute is a null pointer");
    *commute = core::op(op).commutative ? 1 : 0;
  });
}
GRIDMPI_WEAK(Op_commutative)

extern "C" int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Reduce_local", [&] {
    require(count >= 0, MPI_ERR_COUNT, "count is negative");
    require(inbuf != MPI_IN_PLACE && inoutbuf != MPI_IN_PLACE, MPI_ERR_BUFFER,
            "MPI_IN_PLACE is not allowed in MPI_Reduce_local");
    require(count == 0 || inbuf != inoutbuf, MPI_ERR_BUFFER,
            "inbuf and inoutbuf are the same buffer; MPI_Reduce_local needs two distinct buffers");
    core::committed_datatype(datatype);
    const core::Op& o = core::op(op);
    core::check_op(op, datatype);
    if (count == 0) return;
    o.apply(inbuf, inoutbuf, count, datatype);
  });
}
GRIDMPI_WEAK(Reduce_local)
