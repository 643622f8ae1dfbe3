! f90_module.f90 -- the `mpi` module in free-form Fortran 90: the same
! constants, sentinels and bindings as mpif.h through `use mpi`.
program f90module
  use mpi
  implicit none
  integer :: ierr, rank, size, right, left, i, cnt, len
  integer :: status(MPI_STATUS_SIZE), reqs(2)
  integer :: sbuf(8), rbuf(8)
  double precision :: dvals(3), t1, t2
  integer(kind=MPI_ADDRESS_KIND) :: tagub
  logical :: flag
  character(len=MPI_MAX_ERROR_STRING) :: estring

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  t1 = MPI_Wtime()

  sbuf = [(rank * 10 + i, i = 1, 8)]
  rbuf = -1
  call MPI_Irecv(rbuf, 8, MPI_INTEGER, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, 5, MPI_INTEGER, right, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call mt_check_int('rbuf(5)', rbuf(5), left * 10 + 5)
  call mt_check_int('rbuf(6) untouched', rbuf(6), -1)
  call MPI_Sendrecv(sbuf, 8, MPI_INTEGER, right, 2, rbuf, 8, MPI_INTEGER, left, 2, &
                    MPI_COMM_WORLD, status, ierr)
  call mt_check_int('status(MPI_SOURCE)', status(MPI_SOURCE), left)
  call mt_check_int('status(MPI_TAG)', status(MPI_TAG), 2)
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  call mt_check_int('count', cnt, 8)

  dvals = [1d0 * rank, 2d0, -1d0 * rank]
  call MPI_Allreduce(MPI_IN_PLACE, dvals, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call mt_check_dbl('in-place sum 1', dvals(1), 0.5d0 * size * (size - 1), 0d0)
  call mt_check_dbl('in-place sum 2', dvals(2), 2d0 * size, 0d0)
  call mt_check_dbl('in-place sum 3', dvals(3), -0.5d0 * size * (size - 1), 0d0)
  i = merge(42, 0, rank == 0)
  call MPI_Bcast(i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call mt_check_int('bcast', i, 42)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag, ierr)
  call mt_check_true('MPI_TAG_UB flag', flag)
  call mt_check_true('MPI_TAG_UB >= 32767', tagub >= 32767)
  call MPI_Error_string(MPI_ERR_TRUNCATE, estring, len, ierr)
  call mt_check_true('error string', len > 0 .and. len_trim(estring) == len)
  t2 = MPI_Wtime()
  call mt_check_true('wtime', t2 >= t1)
  call mt_check_int('MPI_STATUS_SIZE is at least 3', min(MPI_STATUS_SIZE, 3), 3)
  ! MPI_SIZEOF (a generic of the module) agrees with MPI_TYPE_SIZE, for
  ! scalars and arrays
  block
    integer :: isz, tsz, iv(3)
    real :: r
    complex :: c
    logical :: l
    integer(kind=8) :: i8
    call MPI_Sizeof(iv, isz, ierr)
    call MPI_Type_size(MPI_INTEGER, tsz, ierr)
    call mt_check_int('sizeof integer array', isz, tsz)
    call MPI_Sizeof(r, isz, ierr)
    call MPI_Type_size(MPI_REAL, tsz, ierr)
    call mt_check_int('sizeof real', isz, tsz)
    call MPI_Sizeof(dvals, isz, ierr)
    call MPI_Type_size(MPI_DOUBLE_PRECISION, tsz, ierr)
    call mt_check_int('sizeof double precision', isz, tsz)
    call MPI_Sizeof(c, isz, ierr)
    call MPI_Type_size(MPI_COMPLEX, tsz, ierr)
    call mt_check_int('sizeof complex', isz, tsz)
    call MPI_Sizeof(l, isz, ierr)
    call MPI_Type_size(MPI_LOGICAL, tsz, ierr)
    call mt_check_int('sizeof logical', isz, tsz)
    call MPI_Sizeof(estring, isz, ierr)
    call MPI_Type_size(MPI_CHARACTER, tsz, ierr)
    call mt_check_int('sizeof character', isz, tsz)
    call MPI_Sizeof(i8, isz, ierr)
    call mt_check_int('sizeof integer(8)', isz, 8)
    call mt_check_int('sizeof ierror', ierr, MPI_SUCCESS)
  end block

  call mt_finish()
end program f90module

include 'mpitestf.h'
