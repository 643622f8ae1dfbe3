C f77_p2p.f -- Fortran 77 bindings of point-to-point: statuses as
C INTEGER arrays (MPI_SOURCE, MPI_TAG, MPI_GET_COUNT), MPI_STATUS_IGNORE,
C ISEND/IRECV/WAITALL with MPI_STATUSES_IGNORE, 1-based WAITANY and
C WAITSOME indices, IPROBE's LOGICAL flag, SENDRECV around a ring.
      program f77p2p
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, right, left, i, cnt, idx, outcnt
      integer status(MPI_STATUS_SIZE), stats(MPI_STATUS_SIZE, 2)
      integer reqs(2), indices(2)
      integer sbuf(10), rbuf(10)
      double precision dsend(5), drecv(5)
      logical flag, mt_is_mpich

      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
      right = mod(rank + 1, size)
      left = mod(rank + size - 1, size)
      do i = 1, 10
         sbuf(i) = 100 * rank + i
         rbuf(i) = -1
      end do

C     status fields of a receive from the left neighbour
      call MPI_IRECV(rbuf, 10, MPI_INTEGER, left, 7, MPI_COMM_WORLD,
     &     reqs(1), ierr)
      call MPI_SEND(sbuf, 7, MPI_INTEGER, right, 7, MPI_COMM_WORLD,
     &     ierr)
      call MPI_WAIT(reqs(1), status, ierr)
      call mt_check_int('request freed', reqs(1), MPI_REQUEST_NULL)
      call mt_check_int('status(MPI_SOURCE)', status(MPI_SOURCE), left)
      call mt_check_int('status(MPI_TAG)', status(MPI_TAG), 7)
      call MPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
      call mt_check_int('get_count', cnt, 7)
      call mt_check_int('rbuf(7)', rbuf(7), 100 * left + 7)
      call mt_check_int('rbuf(8) untouched', rbuf(8), -1)

C     MPI_ANY_SOURCE / MPI_ANY_TAG with a blocking receive
      call MPI_ISEND(sbuf, 3, MPI_INTEGER, right, 11 + rank,
     &     MPI_COMM_WORLD, reqs(1), ierr)
      call MPI_RECV(rbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG,
     &     MPI_COMM_WORLD, status, ierr)
      call mt_check_int('any source', status(MPI_SOURCE), left)
      call mt_check_int('any tag', status(MPI_TAG), 11 + left)
      call MPI_WAIT(reqs(1), MPI_STATUS_IGNORE, ierr)

C     waitall with MPI_STATUSES_IGNORE, DOUBLE PRECISION data
      do i = 1, 5
         dsend(i) = rank + i / 4.0d0
         drecv(i) = 0
      end do
      call MPI_IRECV(drecv, 5, MPI_DOUBLE_PRECISION, left, 3,
     &     MPI_COMM_WORLD, reqs(1), ierr)
      call MPI_ISEND(dsend, 5, MPI_DOUBLE_PRECISION, right, 3,
     &     MPI_COMM_WORLD, reqs(2), ierr)
      call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
      call mt_check_int('waitall ierror', ierr, MPI_SUCCESS)
      call mt_check_int('waitall freed 1', reqs(1), MPI_REQUEST_NULL)
      call mt_check_int('waitall freed 2', reqs(2), MPI_REQUEST_NULL)
      call mt_check_dbl('drecv(5)', drecv(5), left + 1.25d0, 0d0)

C     waitall with statuses
      call MPI_IRECV(rbuf, 10, MPI_INTEGER, left, 4, MPI_COMM_WORLD,
     &     reqs(1), ierr)
      call MPI_ISEND(sbuf, 2, MPI_INTEGER, right, 4, MPI_COMM_WORLD,
     &     reqs(2), ierr)
      call MPI_WAITALL(2, reqs, stats, ierr)
      call mt_check_int('statuses(MPI_SOURCE,1)', stats(MPI_SOURCE,1),
     &     left)
      call MPI_GET_COUNT(stats(1,1), MPI_INTEGER, cnt, ierr)
      call mt_check_int('count from statuses', cnt, 2)

C     waitany and waitsome return Fortran (1-based) indices
      reqs(1) = MPI_REQUEST_NULL
      call MPI_IRECV(rbuf, 10, MPI_INTEGER, left, 5, MPI_COMM_WORLD,
     &     reqs(2), ierr)
      call MPI_SEND(sbuf, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD,
     &     ierr)
      call MPI_WAITANY(2, reqs, idx, status, ierr)
      call mt_check_int('waitany index', idx, 2)
      call MPI_WAITANY(2, reqs, idx, status, ierr)
C     MPICH 4.0.2 returns MPI_UNDEFINED + 1 here (it adds 1 regardless)
      if (.not. mt_is_mpich()) call mt_check_int(
     &     'waitany on null requests', idx, MPI_UNDEFINED)
      call MPI_IRECV(rbuf, 10, MPI_INTEGER, left, 6, MPI_COMM_WORLD,
     &     reqs(2), ierr)
      call MPI_SEND(sbuf, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD,
     &     ierr)
      call MPI_WAITSOME(2, reqs, outcnt, indices, stats, ierr)
      call mt_check_int('waitsome outcount', outcnt, 1)
      call mt_check_int('waitsome index', indices(1), 2)

C     iprobe: LOGICAL flag, then the probed message
      call MPI_ISEND(sbuf, 4, MPI_INTEGER, right, 9, MPI_COMM_WORLD,
     &     reqs(1), ierr)
      flag = .false.
      do while (.not. flag)
         call MPI_IPROBE(left, 9, MPI_COMM_WORLD, flag, status, ierr)
      end do
      call MPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
      call mt_check_int('probed count', cnt, 4)
      call MPI_RECV(rbuf, 4, MPI_INTEGER, left, 9, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, ierr)
      call MPI_WAIT(reqs(1), MPI_STATUS_IGNORE, ierr)
      call MPI_IPROBE(left, 9, MPI_COMM_WORLD, flag, status, ierr)
      call mt_check_true('nothing left to probe', .not. flag)

C     sendrecv around the ring
      call MPI_SENDRECV(sbuf, 10, MPI_INTEGER, right, 8, rbuf, 10,
     &     MPI_INTEGER, left, 8, MPI_COMM_WORLD, status, ierr)
      call mt_check_int('sendrecv rbuf(10)', rbuf(10), 100 * left + 10)
      call mt_check_int('sendrecv source', status(MPI_SOURCE), left)

C     MPI_PROC_NULL
      call MPI_RECV(rbuf, 10, MPI_INTEGER, MPI_PROC_NULL, 1,
     &     MPI_COMM_WORLD, status, ierr)
      call mt_check_int('proc_null source', status(MPI_SOURCE),
     &     MPI_PROC_NULL)
      call MPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
      call mt_check_int('proc_null count', cnt, 0)
      call mt_finish()
      end

      include 'mpitestf.h'
