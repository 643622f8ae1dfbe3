! The `mpi` Fortran module of gridmpi (owned by fortran/): the constants,
! sentinels and function declarations of mpif.h, for `use mpi`.
module mpi
  implicit none
  include 'mpif.h'
end module mpi
