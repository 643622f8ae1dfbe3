// C API: C <-> Fortran handle conversion.  Our handles are ints already, so
// every conversion is the identity (and needs no MPI_Init).
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
GRIDMPI_HANDLE_CONVERSION(Win, MPI_Win)  // one-sided (helper "rma")
