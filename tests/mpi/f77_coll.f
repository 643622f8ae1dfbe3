C f77_coll.f -- Fortran 77 bindings of collectives: BCAST, REDUCE and
C ALLREDUCE on INTEGER, DOUBLE PRECISION and DOUBLE COMPLEX, IN_PLACE,
C ALLTOALL, ALLGATHER, MAXLOC on MPI_2INTEGER, COMM_SPLIT, and
C MPI_OP_CREATE with a Fortran user function.
      program f77coll
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, i, ival, isum, root, newcomm, nrank
      integer nsize, myop, nexpect
      integer ibuf(3), sendv(16), recvv(16), pair(2), pairout(2)
      double precision dval, dsum
      double complex zval, zsum
      external absmax
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
      root = size - 1

C     broadcast
      do i = 1, 3
         ibuf(i) = 0
         if (rank .eq. root) ibuf(i) = 10 * i
      end do
      call MPI_BCAST(ibuf, 3, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
      call mt_check_int('bcast ibuf(3)', ibuf(3), 30)
      dval = 0
      if (rank .eq. root) dval = 2.5d0
      call MPI_BCAST(dval, 1, MPI_DOUBLE_PRECISION, root,
     &     MPI_COMM_WORLD, ierr)
      call mt_check_dbl('bcast dval', dval, 2.5d0, 0d0)

C     reductions
      ival = rank + 1
      isum = -1
      call MPI_REDUCE(ival, isum, 1, MPI_INTEGER, MPI_SUM, 0,
     &     MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) call mt_check_int('reduce sum', isum,
     &     size * (size + 1) / 2)
      dval = 0.5d0 * rank
      call MPI_ALLREDUCE(dval, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      call mt_check_dbl('allreduce dsum', dsum,
     &     0.25d0 * size * (size - 1), 1d-12)
      zval = dcmplx(rank, 1)
      call MPI_ALLREDUCE(zval, zsum, 1, MPI_DOUBLE_COMPLEX, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      call mt_check_dbl('complex sum (real)', dble(zsum),
     &     0.5d0 * size * (size - 1), 0d0)
      call mt_check_dbl('complex sum (imag)', dimag(zsum),
     &     dble(size), 0d0)
      ival = rank
      call MPI_ALLREDUCE(MPI_IN_PLACE, ival, 1, MPI_INTEGER, MPI_MAX,
     &     MPI_COMM_WORLD, ierr)
      call mt_check_int('in-place max', ival, size - 1)
      pair(1) = mod(rank, 2)
      pair(2) = rank
      call MPI_ALLREDUCE(pair, pairout, 1, MPI_2INTEGER, MPI_MAXLOC,
     &     MPI_COMM_WORLD, ierr)
      nexpect = 0
      if (size .gt. 1) nexpect = 1
      call mt_check_int('maxloc value', pairout(1), nexpect)
      call mt_check_int('maxloc location', pairout(2), nexpect)

C     alltoall and allgather
      do i = 1, size
         sendv(i) = 100 * rank + i - 1
         recvv(i) = -1
      end do
      call MPI_ALLTOALL(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER,
     &     MPI_COMM_WORLD, ierr)
      do i = 1, size
         call mt_check_int('alltoall', recvv(i), 100 * (i - 1) + rank)
      end do
      call MPI_ALLGATHER(rank, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER,
     &     MPI_COMM_WORLD, ierr)
      do i = 1, size
         call mt_check_int('allgather', recvv(i), i - 1)
      end do

C     split into even and odd ranks, reversed order
      call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), -rank, newcomm,
     &     ierr)
      call MPI_COMM_RANK(newcomm, nrank, ierr)
      call MPI_COMM_SIZE(newcomm, nsize, ierr)
      call mt_check_int('split size', nsize,
     &     (size - mod(rank, 2) + 1) / 2)
      call mt_check_int('split rank', nrank,
     &     nsize - 1 - rank / 2)
      call MPI_ALLREDUCE(rank, isum, 1, MPI_INTEGER, MPI_SUM, newcomm,
     &     ierr)
      ival = 0
      do i = mod(rank, 2), size - 1, 2
         ival = ival + i
      end do
      call mt_check_int('sum over split', isum, ival)
      call MPI_COMM_FREE(newcomm, ierr)

C     user operation written in Fortran: largest absolute value
      call MPI_OP_CREATE(absmax, .true., myop, ierr)
      call mt_check_int('op_create ierror', ierr, MPI_SUCCESS)
      ival = rank
      if (mod(rank, 2) .eq. 1) ival = -rank
      call MPI_ALLREDUCE(ival, isum, 1, MPI_INTEGER, myop,
     &     MPI_COMM_WORLD, ierr)
      ival = size - 1
      if (mod(size - 1, 2) .eq. 1) ival = -(size - 1)
      call mt_check_int('user op result', isum, ival)
      call MPI_OP_FREE(myop, ierr)
      call mt_check_int('op freed', myop, MPI_OP_NULL)
      call mt_finish()
      end

      subroutine absmax(invec, inoutvec, len, datatype)
      implicit none
      integer len, datatype, i
      integer invec(len), inoutvec(len)
      do i = 1, len
         if (abs(invec(i)) .gt. abs(inoutvec(i))) then
            inoutvec(i) = invec(i)
         end if
      end do
      end

      include 'mpitestf.h'
