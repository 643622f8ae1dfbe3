C f77_types.f -- Fortran 77 bindings of derived datatypes: TYPE_VECTOR
C (a row of a column-major matrix), TYPE_CREATE_STRUCT with absolute
C addresses from GET_ADDRESS used with MPI_BOTTOM, sizes and extents in
C INTEGER(KIND=MPI_ADDRESS_KIND).
      program f77types
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, right, left, i, j, rowtype, structtype
      integer recvtype, tsize, blens(2), types(2)
      integer status(MPI_STATUS_SIZE)
      integer a(4, 5), row(5), ival, irecv, bytes(3)
      double precision dval, drecv
      integer(kind=mpi_address_kind) lb, extent, disps(2)
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
      right = mod(rank + 1, size)
      left = mod(rank + size - 1, size)

C     row 2 of a(4,5): 5 integers 4 apart
      do j = 1, 5
         do i = 1, 4
            a(i, j) = 1000 * rank + 10 * i + j
         end do
      end do
      call MPI_TYPE_VECTOR(5, 1, 4, MPI_INTEGER, rowtype, ierr)
      call MPI_TYPE_COMMIT(rowtype, ierr)
      call MPI_TYPE_SIZE(rowtype, tsize, ierr)
      call mt_check_int('vector size', tsize, 20)
      call MPI_TYPE_GET_EXTENT(rowtype, lb, extent, ierr)
      call mt_check_int('vector lb', int(lb), 0)
      call mt_check_int('vector extent', int(extent), 68)
      call MPI_SENDRECV(a(2, 1), 1, rowtype, right, 1, row, 5,
     &     MPI_INTEGER, left, 1, MPI_COMM_WORLD, status, ierr)
      do j = 1, 5
         call mt_check_int('row received', row(j),
     &        1000 * left + 20 + j)
      end do
C     and back into row 3 of the matrix
      call MPI_SENDRECV(row, 5, MPI_INTEGER, right, 2, a(3, 1), 1,
     &     rowtype, left, 2, MPI_COMM_WORLD, status, ierr)
      call MPI_GET_COUNT(status, rowtype, i, ierr)
      call mt_check_int('count of vectors', i, 1)
      do j = 1, 5
         call mt_check_int('row 3', a(3, j),
     &        1000 * mod(left + size - 1, size) + 20 + j)
         call mt_check_int('row 4 untouched', a(4, j),
     &        1000 * rank + 40 + j)
      end do
      call MPI_TYPE_FREE(rowtype, ierr)
      call mt_check_int('freed type', rowtype, MPI_DATATYPE_NULL)

C     a struct of absolute addresses, sent and received at MPI_BOTTOM
      ival = 7 + rank
      dval = 0.5d0 + rank
      call MPI_GET_ADDRESS(ival, disps(1), ierr)
      call MPI_GET_ADDRESS(dval, disps(2), ierr)
      blens(1) = 1
      blens(2) = 1
      types(1) = MPI_INTEGER
      types(2) = MPI_DOUBLE_PRECISION
      call MPI_TYPE_CREATE_STRUCT(2, blens, disps, types, structtype,
     &     ierr)
      call MPI_TYPE_COMMIT(structtype, ierr)
      call MPI_TYPE_SIZE(structtype, tsize, ierr)
      call mt_check_int('struct size', tsize, 12)
      call MPI_SENDRECV(MPI_BOTTOM, 1, structtype, right, 3, bytes,
     &     12, MPI_BYTE, left, 3, MPI_COMM_WORLD, status, ierr)
      call MPI_GET_COUNT(status, MPI_BYTE, i, ierr)
      call mt_check_int('bytes from the struct', i, 12)
      call mt_check_int('int from the struct', bytes(1), 7 + left)
      call MPI_GET_ADDRESS(irecv, disps(1), ierr)
      call MPI_GET_ADDRESS(drecv, disps(2), ierr)
      call MPI_TYPE_CREATE_STRUCT(2, blens, disps, types, recvtype,
     &     ierr)
      call MPI_TYPE_COMMIT(recvtype, ierr)
      irecv = -1
      drecv = -1
      call MPI_SENDRECV(MPI_BOTTOM, 1, structtype, right, 4,
     &     MPI_BOTTOM, 1, recvtype, left, 4, MPI_COMM_WORLD, status,
     &     ierr)
      call mt_check_int('struct int at MPI_BOTTOM', irecv, 7 + left)
      call mt_check_dbl('struct double at MPI_BOTTOM', drecv,
     &     0.5d0 + left, 0d0)
      call MPI_TYPE_FREE(structtype, ierr)
      call MPI_TYPE_FREE(recvtype, ierr)
      call mt_finish()
      end

      include 'mpitestf.h'
