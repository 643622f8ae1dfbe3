C f77_io.f -- MPI-IO from Fortran 77 (mpif.h): MPI_FILE_OPEN, WRITE_AT
C and READ_AT with INTEGER(KIND=MPI_OFFSET_KIND) offsets, a strided view
C (MPI_TYPE_VECTOR resized) written with WRITE_ALL and read back whole by
C every rank, GET_VIEW, GET_SIZE, the status count, error classes and
C MPI_FILE_DELETE.  The file lives in $TMPDIR (or /tmp).
      program f77io
      implicit none
      include 'mpif.h'
      integer n, b
      parameter (n = 8, b = 2)
      integer ierr, rank, size, fh, i, count, ftype, blk, etype
      integer buf(n), all(4096), status(MPI_STATUS_SIZE), pid, rc
      integer ecls
      integer(kind=MPI_OFFSET_KIND) off, fsize, disp
      integer(kind=MPI_ADDRESS_KIND) lb, extent
      character*(512) dir
      character*(600) fname
      character*(MPI_MAX_DATAREP_STRING) rep
      integer getpid

      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
      dir = ' '
      call get_environment_variable('TMPDIR', dir)
      if (dir .eq. ' ') dir = '/tmp'
      pid = getpid()
      call MPI_BCAST(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
      write(fname, '(A,A,I0)') trim(dir), '/gridmpi-f77io-', pid

C     a missing file: MPI_ERR_NO_SUCH_FILE (files return errors)
      call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(fname)//'.none',
     &     MPI_MODE_RDONLY, MPI_INFO_NULL, fh, rc)
      call MPI_ERROR_CLASS(rc, ecls, ierr)
      call mt_check_int('open missing: class', ecls,
     &     MPI_ERR_NO_SUCH_FILE)

      call MPI_FILE_OPEN(MPI_COMM_WORLD, fname,
     &     MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
      call mt_check_int('open ierr', ierr, MPI_SUCCESS)

C     explicit offsets: each rank writes its block of n integers
      do i = 1, n
         buf(i) = rank * n + i
      end do
      off = rank * n * 4
      call MPI_FILE_WRITE_AT(fh, off, buf, n, MPI_INTEGER, status,
     &     ierr)
      call mt_check_int('write_at ierr', ierr, MPI_SUCCESS)
      call MPI_GET_COUNT(status, MPI_INTEGER, count, ierr)
      call mt_check_int('write_at count', count, n)
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      off = 0
      call MPI_FILE_READ_AT(fh, off, all, n * size, MPI_INTEGER,
     &     status, ierr)
      call MPI_GET_COUNT(status, MPI_INTEGER, count, ierr)
      call mt_check_int('read_at count', count, n * size)
      do i = 1, n * size
         call mt_check_int('read_at data', all(i), i)
      end do
      call MPI_FILE_GET_SIZE(fh, fsize, ierr)
      call mt_check_int('get_size', int(fsize), n * size * 4)

C     a strided view: blocks of b integers, interleaved by rank
      call MPI_TYPE_CONTIGUOUS(b, MPI_INTEGER, blk, ierr)
      lb = 0
      extent = b * size * 4
      call MPI_TYPE_CREATE_RESIZED(blk, lb, extent, ftype, ierr)
      call MPI_TYPE_COMMIT(ftype, ierr)
      disp = rank * b * 4
      call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, ftype, 'native',
     &     MPI_INFO_NULL, ierr)
      call mt_check_int('set_view ierr', ierr, MPI_SUCCESS)
      do i = 1, n
         buf(i) = 1000 * (rank + 1) + i
      end do
      call MPI_FILE_WRITE_ALL(fh, buf, n, MPI_INTEGER, status, ierr)
      call mt_check_int('write_all ierr', ierr, MPI_SUCCESS)
      call MPI_FILE_GET_VIEW(fh, disp, etype, blk, rep, ierr)
      call mt_check_int('get_view disp', int(disp), rank * b * 4)
      call mt_check_int('get_view etype', etype, MPI_INTEGER)
      call mt_check_true('get_view datarep', rep .eq. 'native')
      call MPI_TYPE_FREE(blk, ierr)

C     every rank reads the whole file back with the byte view
      disp = 0
      call MPI_FILE_SET_VIEW(fh, disp, MPI_BYTE, MPI_BYTE, 'native',
     &     MPI_INFO_NULL, ierr)
      off = 0
      call MPI_FILE_READ_AT(fh, off, all, n * size, MPI_INTEGER,
     &     status, ierr)
      do i = 0, n * size - 1
C        integer i (0-based) is in block i/b, owned by mod(i/b, size),
C        its index there is (i/b/size)*b + mod(i, b)
         call mt_check_int('view data', all(i + 1),
     &        1000 * (mod(i / b, size) + 1) + (i / b / size) * b
     &        + mod(i, b) + 1)
      end do

C     MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL
      call MPI_FILE_SET_VIEW(fh, MPI_DISPLACEMENT_CURRENT, MPI_INTEGER,
     &     MPI_INTEGER, 'native', MPI_INFO_NULL, rc)
      call mt_check_true('DISPLACEMENT_CURRENT refused',
     &     rc .ne. MPI_SUCCESS)
      call MPI_FILE_CLOSE(fh, ierr)
      call mt_check_int('close ierr', ierr, MPI_SUCCESS)
      call mt_check_int('closed handle', fh, MPI_FILE_NULL)
      call MPI_TYPE_FREE(ftype, ierr)
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         call MPI_FILE_DELETE(fname, MPI_INFO_NULL, ierr)
         call mt_check_int('delete ierr', ierr, MPI_SUCCESS)
      end if
      call mt_finish()
      end

      include 'mpitestf.h'
