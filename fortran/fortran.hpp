// Helpers shared by the generated Fortran bindings (fortran_bindings.cpp,
// written by fortran/gen_fortran.py) and the hand-written ones
// (fortran/bindings_special.cpp).  Owned by fortran/.
//
// Fortran passes everything by reference, INTEGER is MPI_Fint (int), LOGICAL
// is a 4-byte int with .TRUE. == 1 (gfortran), CHARACTER arguments come with
// hidden std::size_t lengths after the other arguments, and the special
// addresses MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE ... are variables
// in COMMON blocks declared by mpif.h, recognised here by address.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>

// Size of MPI_Status in INTEGERs (MPI_STATUS_SIZE of mpif.h; the generated
// file checks both against the C struct).
#define MPI_F_STATUS_SIZE 6

// The COMMON blocks of mpif.h (gfortran names a block /NAME/ "name_").
extern "C" {
extern MPI_Fint mpi_fortran_bottom_;
extern MPI_Fint mpi_fortran_in_place_;
extern MPI_Fint mpi_fortran_status_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint mpi_fortran_statuses_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint mpi_fortran_errcodes_ignore_[1];
extern MPI_Fint mpi_fortran_unweighted_[1];
extern MPI_Fint mpi_fortran_weights_empty_[1];
extern char mpi_fortran_argv_null_[1];
extern char mpi_fortran_argvs_null_[1];
}

namespace gridmpi::fortran {

// A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become the C constants.
inline void* choice(const void* p) {
  if (p == &mpi_fortran_bottom_) return MPI_BOTTOM;
  if (p == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  return const_cast<void*>(p);
}

// A status or an array of statuses: either ignore sentinel becomes NULL.
inline MPI_Status* status(MPI_Fint* p) {
  if (p == mpi_fortran_status_ignore_ || p == mpi_fortran_statuses_ignore_) return MPI_STATUS_IGNORE;
  return reinterpret_cast<MPI_Status*>(p);
}

inline int* errcodes(MPI_Fint* p) { return p == mpi_fortran_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : p; }

// MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY of mpi.h are the very COMMON blocks of
// mpif.h, so weights arrays pass through unchanged.
static_assert(MPI_UNWEIGHTED == +mpi_fortran_unweighted_ && MPI_WEIGHTS_EMPTY == +mpi_fortran_weights_empty_);
template <class Int>
Int* weights(Int* p) {
  return p;
}

// C true may be any non-zero int; Fortran .TRUE. is 1.
inline void to_logical(MPI_Fint* flag) {
  if (flag != nullptr) *flag = *flag != 0 ? 1 : 0;
}

// Indices returned by Waitany/Testany/Waitsome/Testsome count from 1 in
// Fortran; MPI_UNDEFINED stays.
inline void to_one_based(MPI_Fint* indices, MPI_Fint count) {
  for (MPI_Fint i = 0; i < count; ++i)
    if (indices[i] != MPI_UNDEFINED && indices[i] >= 0) ++indices[i];
}

enum class Trim { trailing, both };

// An input CHARACTER argument as a NUL-terminated string (trailing blanks,
// and for info keys and values leading blanks too, removed).
class InString {
 public:
  InString(const char* text, std::size_t length, Trim trim);
  const char* c_str() const { return text_.c_str(); }

 private:
  std::string text_;
};

// An output CHARACTER argument: the C function writes a NUL-terminated
// string into a buffer at least as long as every MPI_MAX_* limit; copy_out()
// copies it into the Fortran variable, truncated or blank-padded.
class OutString {
 public:
  OutString(char* target, std::size_t length);
  char* c_str() { return buffer_.data(); }
  void copy_out();

 private:
  char* target_;
  std::size_t length_;
  std::string buffer_;
};

// For a function declared in mpi.h but not implemented in this build:
// reports it through MPI_COMM_WORLD's error handler and returns the code.
int not_implemented(const char* function);

// The void* that stores an attribute value set from Fortran (a pointer to the
// INTEGER(KIND=MPI_ADDRESS_KIND) value, owned by the attribute store).
void* attribute_box(MPI_Aint value);

template <class T>
T not_implemented_value(const char* function) {
  not_implemented(function);
  return T{};
}

}  // namespace gridmpi::fortran
