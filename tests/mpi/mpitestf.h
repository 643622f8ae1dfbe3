! mpitestf.h -- helpers of the Fortran tests (f77_*.f, f90_*.f90),
! the Fortran twin of mpitest.h.  It holds subroutines: include it after
! the END of the main program.  A failed check prints one line
!   FAIL: [rank R] <what>, expected X got Y
! and mt_finish then calls MPI_ABORT(MPI_COMM_WORLD, 1).  Fixed and free
! form alike (columns 7-72, no continuation lines).
      subroutine mt_fail_head(what)
      implicit none
      include 'mpif.h'
      character*(*) what
      integer rank, ierr, nerr
      common /mtfail/ nerr
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      nerr = nerr + 1
      write(*,'(A,I0,2A)',advance='no') 'FAIL: [rank ',rank,'] ',what
      end

      subroutine mt_check_int(what, got, expected)
      implicit none
      character*(*) what
      integer got, expected
      if (got .ne. expected) then
      call mt_fail_head(what)
      write(*,'(A,I0,A,I0)') ', expected ', expected, ' got ', got
      call flush(6)
      end if
      end

      subroutine mt_check_dbl(what, got, expected, tolerance)
      implicit none
      character*(*) what
      double precision got, expected, tolerance
      if (abs(got - expected) .gt. tolerance) then
      call mt_fail_head(what)
      write(*,'(A,G0,A,G0)') ', expected ', expected, ' got ', got
      call flush(6)
      end if
      end

      subroutine mt_check_true(what, cond)
      implicit none
      character*(*) what
      logical cond
      if (.not. cond) then
      call mt_fail_head(what)
      write(*,'(A)') ', expected .TRUE. got .FALSE.'
      call flush(6)
      end if
      end

! Known bugs of the reference implementations are skipped for them only
! (as MT_IS_MPICH does in mpitest.h).
      logical function mt_is_mpich()
      implicit none
      include 'mpif.h'
      character*(MPI_MAX_LIBRARY_VERSION_STRING) version
      integer len, ierr
      call MPI_GET_LIBRARY_VERSION(version, len, ierr)
      mt_is_mpich = index(version, 'MPICH') .gt. 0
      end

      subroutine mt_finish()
      implicit none
      include 'mpif.h'
      integer nerr, ierr
      common /mtfail/ nerr
      if (nerr .gt. 0) call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      call MPI_FINALIZE(ierr)
      end

      block data mt_block
      integer nerr
      common /mtfail/ nerr
      data nerr /0/
      end
