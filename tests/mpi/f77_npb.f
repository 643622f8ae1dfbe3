c f77_npb.f -- a fixed-form program in the style of the NAS Parallel
c Benchmarks 3.x: mpif.h included in a subroutine with COMMON blocks, the
c MPI datatype of DOUBLE PRECISION chosen once (npbparams.h's dp_type),
c COMM_SPLIT, ALLTOALL of DOUBLE COMPLEX, IRECV/ISEND/WAIT/WAITALL,
c REDUCE/ALLREDUCE with MAX, MIN and SUM, BCAST of INTEGER and LOGICAL,
c BARRIER and the WTIME timers.  fortran/CMakeLists.txt compiles it a
c second time with -fdefault-real-8 -mcmodel=medium (as some NPB make.def
c files do): mpif.h must stay valid, and MPI_WTIME must still return its
c 8-byte value when DOUBLE PRECISION is promoted to 16 bytes.
      program f77npb
      implicit none
      include 'mpif.h'
      integer me, np, ierr
      integer dp_type, dc_type
      common /mpistuff/ me, np, dp_type, dc_type
      integer nx, root, rowcomm, rowme, rownp, i, j, req(4)
      integer stats(MPI_STATUS_SIZE, 4), st(MPI_STATUS_SIZE)
      parameter (nx = 8)
      double precision u(nx), v(nx), umax, umin, usum, gsum
      double complex sbuf(4, 8), rbuf(4, 8)
      integer niter
      logical verified
      real*8 t0, t1, tick

      call mpi_init(ierr)
      call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
      call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
      if (kind(1.d0) .eq. 8) then
         dp_type = MPI_DOUBLE_PRECISION
         dc_type = MPI_DOUBLE_COMPLEX
      else
         dp_type = MPI_REAL16
         dc_type = MPI_COMPLEX32
      end if
      root = 0
      t0 = mpi_wtime()
      tick = mpi_wtick()
      call mt_check_true('wtick in (0,1]', tick .gt. 0 .and.
     &     tick .le. 1)

c     broadcast of the problem parameters, as NPB's setup does
      niter = 0
      verified = .false.
      if (me .eq. root) then
         niter = 20
         verified = .true.
      end if
      call mpi_bcast(niter, 1, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
      call mpi_bcast(verified, 1, MPI_LOGICAL, root, MPI_COMM_WORLD,
     &     ierr)
      call mt_check_int('bcast niter', niter, 20)
      call mt_check_true('bcast logical', verified)

      call fill(u, nx)
      call mpi_barrier(MPI_COMM_WORLD, ierr)

c     nearest-neighbour exchange on a ring (irecv first, as NPB does)
      call mpi_irecv(v(1), 1, dp_type, mod(me + np - 1, np), 1,
     &     MPI_COMM_WORLD, req(1), ierr)
      call mpi_irecv(v(nx), 1, dp_type, mod(me + 1, np), 2,
     &     MPI_COMM_WORLD, req(2), ierr)
      call mpi_isend(u(nx), 1, dp_type, mod(me + 1, np), 1,
     &     MPI_COMM_WORLD, req(3), ierr)
      call mpi_isend(u(1), 1, dp_type, mod(me + np - 1, np), 2,
     &     MPI_COMM_WORLD, req(4), ierr)
      call mpi_waitall(4, req, stats, ierr)
      call mt_check_int('waitall ierr', ierr, MPI_SUCCESS)
      call mt_check_dbl('ghost left', v(1),
     &     dble(mod(me + np - 1, np) * 100 + nx), 0d0)
      call mt_check_dbl('ghost right', v(nx),
     &     dble(mod(me + 1, np) * 100 + 1), 0d0)
      call mt_check_int('status source', stats(MPI_SOURCE, 1),
     &     mod(me + np - 1, np))

c     a single wait, as in the pipelined solvers
      call mpi_irecv(v(2), 1, dp_type, me, 3, MPI_COMM_WORLD,
     &     req(1), ierr)
      call mpi_send(u(2), 1, dp_type, me, 3, MPI_COMM_WORLD, ierr)
      call mpi_wait(req(1), st, ierr)
      call mt_check_dbl('self wait', v(2), u(2), 0d0)
      call mt_check_int('wait tag', st(MPI_TAG), 3)

c     norms: reduce with MAX, MIN and SUM
      umax = u(1)
      umin = u(1)
      usum = 0
      do i = 1, nx
         umax = max(umax, u(i))
         umin = min(umin, u(i))
         usum = usum + u(i)
      end do
      call mpi_reduce(umax, gsum, 1, dp_type, MPI_MAX, root,
     &     MPI_COMM_WORLD, ierr)
      if (me .eq. root) call mt_check_dbl('reduce max', gsum,
     &     dble((np - 1) * 100 + nx), 0d0)
      call mpi_allreduce(umin, gsum, 1, dp_type, MPI_MIN,
     &     MPI_COMM_WORLD, ierr)
      call mt_check_dbl('allreduce min', gsum, 1d0, 0d0)
      call mpi_allreduce(usum, gsum, 1, dp_type, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      call mt_check_dbl('allreduce sum', gsum,
     &     dble(np * nx * (nx + 1) / 2 + 100 * nx * np * (np - 1) / 2),
     &     1d-9)

c     the FT transpose: split into rows, alltoall of DOUBLE COMPLEX
      call mpi_comm_split(MPI_COMM_WORLD, 0, np - me, rowcomm, ierr)
      call mpi_comm_rank(rowcomm, rowme, ierr)
      call mpi_comm_size(rowcomm, rownp, ierr)
      call mt_check_int('split rank (reversed)', rowme, np - 1 - me)
      do j = 1, rownp
         do i = 1, 4
            sbuf(i, j) = dcmplx(dble(rowme * 10 + j), dble(i))
         end do
      end do
      call mpi_alltoall(sbuf, 4, dc_type, rbuf, 4, dc_type,
     &     rowcomm, ierr)
      do j = 1, rownp
         call mt_check_dbl('alltoall real', dble(rbuf(3, j)),
     &        dble((j - 1) * 10 + rowme + 1), 0d0)
         call mt_check_dbl('alltoall imag', dimag(rbuf(3, j)),
     &        3d0, 0d0)
      end do
      call mpi_comm_free(rowcomm, ierr)

      t1 = mpi_wtime()
      call mt_check_true('wtime advances', t1 .ge. t0)
      call mt_check_true('wtime plausible', t1 - t0 .lt. 100)
      call mt_finish()
      end

c u(i) = 100 * rank + i: the subroutine includes mpif.h and reads the
c COMMON block like NPB's routines
      subroutine fill(u, n)
      implicit none
      include 'mpif.h'
      integer me, np, dp_type, dc_type
      common /mpistuff/ me, np, dp_type, dc_type
      integer n, i
      double precision u(n)
      do i = 1, n
         u(i) = dble(me * 100 + i)
      end do
      end

      include 'mpitestf.h'
