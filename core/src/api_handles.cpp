// C API: C <-> Fortran handle conversion.  Our handles are ints already, so
// every conversion is the identity (and needs no MPI_Init).
#include <cstring>

#include "core/api.hpp"

#define GRIDMPI_HANDLE_CONVERSION(Kind, CType)                                 \
  extern "C" MPI_Fint PMPI_##Kind##_c2f(CType handle) { return handle; }       \
  GRIDMPI_WEAK(Kind##_c2f)                                                     \
  extern "C" CType PMPI_##Kind##_f2c(MPI_Fint handle) { return handle; }       \
  GRIDMPI_WEAK(Kind##_f2c)

GRIDMPI_HANDLE_CONVERSION(Comm, MPI_Comm)
GRIDMPI_HANDLE_CONVERSION(Type, MPI_Datatype)
GRIDMPI_HANDLE_CONVERSION(Group, MPI_Group)
GRIDMPI_HANDLE_CONVERSION(Op, MPI_Op)
GRIDMPI_HANDLE_CONVERSION(Request, MPI_Request)
GRIDMPI_HANDLE_CONVERSION(Errhandler, MPI_Errhandler)
GRIDMPI_HANDLE_CONVERSION(Info, MPI_Info)
GRIDMPI_HANDLE_CONVERSION(Message, MPI_Message)
GRIDMPI_HANDLE_CONVERSION(Win, MPI_Win)  // one-sided

// A Fortran status is MPI_STATUS_SIZE integers with the same layout as the C
// struct (fortran/README.md), so the conversions are copies.
static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0);

extern "C" int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  if (!c_status || !f_status) return MPI_ERR_ARG;
  std::memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
GRIDMPI_WEAK(Status_c2f)

extern "C" int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  if (!c_status || !f_status) return MPI_ERR_ARG;
  std::memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
GRIDMPI_WEAK(Status_f2c)
