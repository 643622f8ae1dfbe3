! The `mpi` Fortran module of gridmpi (owned by fortran/): the constants,
! sentinels and function declarations of mpif.h, for `use mpi`, and the
! generic MPI_SIZEOF (MPI-3.1 17.1.9), whose specifics are C functions of
! fortran/bindings_special.cpp (mpi_sizeof_<type><bytes>_).  Only the .mod
! file is used: interfaces, no code.
module mpi
  implicit none
  include 'mpif.h'

  interface mpi_sizeof
    subroutine mpi_sizeof_integer1(x, size, ierror)
      integer(kind=1), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_integer2(x, size, ierror)
      integer(kind=2), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_integer4(x, size, ierror)
      integer(kind=4), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_integer8(x, size, ierror)
      integer(kind=8), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_real4(x, size, ierror)
      real(kind=4), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_real8(x, size, ierror)
      real(kind=8), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_real16(x, size, ierror)
      real(kind=16), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_complex8(x, size, ierror)
      complex(kind=4), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_complex16(x, size, ierror)
      complex(kind=8), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_complex32(x, size, ierror)
      complex(kind=16), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_logical1(x, size, ierror)
      logical(kind=1), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_logical2(x, size, ierror)
      logical(kind=2), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_logical4(x, size, ierror)
      logical(kind=4), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    subroutine mpi_sizeof_logical8(x, size, ierror)
      logical(kind=8), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
    ! the size of one character (that of MPI_CHARACTER), whatever the length
    subroutine mpi_sizeof_character1(x, size, ierror)
      character(len=*), dimension(..), intent(in) :: x
      integer, intent(out) :: size, ierror
    end subroutine
  end interface
end module mpi
