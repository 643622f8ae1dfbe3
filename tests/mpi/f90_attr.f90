! f90_attr.f90 -- attribute values set from Fortran (MPI-3.1 17.2.7): set and
! get from Fortran give the value back unchanged, MPI_COMM_DUP_FN copies it,
! a Fortran delete callback receives the value, type attributes likewise.
module f90attr_cb
  use mpi
  implicit none
  integer :: deleted = 0
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = 0
contains
  subroutine del_fn(comm, keyval, val, extra, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deleted = deleted + 1
    last_deleted = val
    ierr = MPI_SUCCESS
  end subroutine del_fn
end module f90attr_cb

program f90attr
  use mpi
  use f90attr_cb
  implicit none
  integer :: ierr, key, tkey, dup, dtype, ival, ikey
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: flag

  call MPI_Init(ierr)
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_fn, key, extra, ierr)
  val = 1234567_MPI_ADDRESS_KIND
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val, ierr)
  val = 0
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, val, flag, ierr)
  call mt_check_int('get flag', merge(1, 0, flag), 1)
  call mt_check_int('get value', int(val), 1234567)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  val = 0
  call MPI_Comm_get_attr(dup, key, val, flag, ierr)
  call mt_check_int('dup flag', merge(1, 0, flag), 1)
  call mt_check_int('dup value', int(val), 1234567)
  call MPI_Comm_free(dup, ierr)
  call mt_check_int('deleted on free', deleted, 1)
  call mt_check_int('delete saw the value', int(last_deleted), 1234567)
  val = 42
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val, ierr)
  call mt_check_int('deleted on replace', deleted, 2)
  call mt_check_int('replace saw the old value', int(last_deleted), 1234567)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, val, flag, ierr)
  call mt_check_int('replaced value', int(val), 42)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key, ierr)
  call mt_check_int('deleted', deleted, 3)
  call mt_check_int('delete saw 42', int(last_deleted), 42)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, val, flag, ierr)
  call mt_check_int('gone', merge(1, 0, flag), 0)
  call MPI_Comm_free_keyval(key, ierr)

  ! MPI-1 style: default INTEGER values
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, ikey, 0, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, ikey, -77, ierr)
  call MPI_Attr_get(MPI_COMM_WORLD, ikey, ival, flag, ierr)
  call mt_check_int('attr_get value', ival, -77)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, ikey, val, flag, ierr)
  call mt_check_int('attr_put widened', int(val), -77)
  call MPI_Attr_delete(MPI_COMM_WORLD, ikey, ierr)
  call MPI_Keyval_free(ikey, ierr)

  ! datatypes
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkey, extra, ierr)
  val = 98765
  call MPI_Type_set_attr(MPI_INTEGER, tkey, val, ierr)
  call MPI_Type_dup(MPI_INTEGER, dtype, ierr)
  val = 0
  call MPI_Type_get_attr(dtype, tkey, val, flag, ierr)
  call mt_check_int('type dup value', int(val), 98765)
  call MPI_Type_free(dtype, ierr)
  call MPI_Type_delete_attr(MPI_INTEGER, tkey, ierr)
  call MPI_Type_free_keyval(tkey, ierr)

  call mt_finish()
end program f90attr

include 'mpitestf.h'
