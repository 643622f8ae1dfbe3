C f77_env.f -- Fortran 77 bindings: environment, character and LOGICAL
C arguments, attributes (MPI_TAG_UB, Fortran keyval callbacks), error
C handling through IERROR.
      program f77env
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, ver, subver, len, provided, eclass
      integer tagub4, keyval, keyval2, newcomm, cnt, i
      integer(kind=mpi_address_kind) tagub, attrval, extra
      logical flag
      character*(MPI_MAX_PROCESSOR_NAME) pname
      character*(MPI_MAX_ERROR_STRING) estring
      character*(MPI_MAX_OBJECT_NAME) cname
      double precision t1, t2, tick
      external copyfn, deletefn
      integer ndeleted
      common /deleted/ ndeleted

      ndeleted = 0
      flag = .true.
      call MPI_INITIALIZED(flag, ierr)
      call mt_check_true('initialized before init', .not. flag)
      call MPI_INIT(ierr)
      call mt_check_int('ierror of MPI_INIT', ierr, MPI_SUCCESS)
      call MPI_INITIALIZED(flag, ierr)
      call mt_check_true('initialized after init', flag)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
      call mt_check_true('rank in range', rank .ge. 0 .and.
     &     rank .lt. size)
      call MPI_GET_VERSION(ver, subver, ierr)
      call mt_check_true('version >= 3', ver .ge. 3)
      call MPI_QUERY_THREAD(provided, ierr)
      call mt_check_true('thread level', provided .ge. MPI_THREAD_SINGLE
     &     .and. provided .le. MPI_THREAD_MULTIPLE)

C     character output: the length comes back, the rest is blank
      pname = 'x'
      call MPI_GET_PROCESSOR_NAME(pname, len, ierr)
      call mt_check_true('processor name length', len .gt. 0)
      call mt_check_int('len_trim of processor name', len_trim(pname),
     &     len)
      estring = 'x'
      call MPI_ERROR_STRING(MPI_ERR_RANK, estring, len, ierr)
      call mt_check_true('error string length', len .gt. 0)
      call mt_check_int('len_trim of error string', len_trim(estring),
     &     len)

C     character input: trailing blanks are not part of the name
      cname = 'fortran world   '
      call MPI_COMM_SET_NAME(MPI_COMM_WORLD, cname, ierr)
      cname = 'garbage garbage garbage'
      call MPI_COMM_GET_NAME(MPI_COMM_WORLD, cname, len, ierr)
      call mt_check_int('comm name length', len, 13)
      call mt_check_true('comm name', cname .eq. 'fortran world')

C     DOUBLE PRECISION functions without IERROR
      t1 = MPI_WTIME()
      tick = MPI_WTICK()
      t2 = MPI_WTIME()
      call mt_check_true('wtime is monotonic', t2 .ge. t1)
      call mt_check_true('wtick in (0, 1]', tick .gt. 0 .and.
     &     tick .le. 1)

C     predefined attribute: a value in Fortran (a pointer in C)
      tagub = -1
      flag = .false.
      call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag,
     &     ierr)
      call mt_check_true('MPI_TAG_UB flag', flag)
      call mt_check_true('MPI_TAG_UB >= 32767', tagub .ge. 32767)
      call MPI_ATTR_GET(MPI_COMM_WORLD, MPI_TAG_UB, tagub4, flag, ierr)
      call mt_check_true('MPI_TAG_UB flag (MPI-1)', flag)
      call mt_check_int('MPI_TAG_UB (MPI-1)', tagub4, int(tagub))

C     keyvals with Fortran callbacks: copy adds 1, delete counts
      extra = 1000
      call MPI_COMM_CREATE_KEYVAL(copyfn, deletefn, keyval, extra, ierr)
      call mt_check_int('ierror of create_keyval', ierr, MPI_SUCCESS)
      call MPI_COMM_CREATE_KEYVAL(MPI_COMM_NULL_COPY_FN,
     &     MPI_COMM_NULL_DELETE_FN, keyval2, extra, ierr)
      attrval = 41
      call MPI_COMM_SET_ATTR(MPI_COMM_WORLD, keyval, attrval, ierr)
      call MPI_COMM_SET_ATTR(MPI_COMM_WORLD, keyval2, attrval, ierr)
      call MPI_COMM_DUP(MPI_COMM_WORLD, newcomm, ierr)
      attrval = 0
      call MPI_COMM_GET_ATTR(newcomm, keyval, attrval, flag, ierr)
      call mt_check_true('copied attribute flag', flag)
      call mt_check_int('copied attribute', int(attrval), 1042)
      call MPI_COMM_GET_ATTR(newcomm, keyval2, attrval, flag, ierr)
      call mt_check_true('null-copied attribute absent', .not. flag)
      call MPI_COMM_FREE(newcomm, ierr)
      call mt_check_int('newcomm is null after free', newcomm,
     &     MPI_COMM_NULL)
      call mt_check_int('delete callback calls', ndeleted, 1)
      call MPI_COMM_DELETE_ATTR(MPI_COMM_WORLD, keyval, ierr)
      call mt_check_int('delete callback calls', ndeleted, 2)
      call MPI_COMM_FREE_KEYVAL(keyval, ierr)
      call MPI_COMM_FREE_KEYVAL(keyval2, ierr)

C     errors come back in IERROR under MPI_ERRORS_RETURN
      call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     ierr)
      call MPI_SEND(cnt, 1, MPI_INTEGER, size + 5, 0, MPI_COMM_WORLD,
     &     ierr)
      call mt_check_true('bad rank fails', ierr .ne. MPI_SUCCESS)
      call MPI_ERROR_CLASS(ierr, eclass, ierr)
      call mt_check_int('error class of a bad rank', eclass,
     &     MPI_ERR_RANK)
      i = 0
      call mt_finish()
      call MPI_FINALIZED(flag, ierr)
      call mt_check_true('finalized', flag)
      end

      subroutine copyfn(oldcomm, keyval, extra, valin, valout, flag,
     &     ierr)
      implicit none
      include 'mpif.h'
      integer oldcomm, keyval, ierr
      integer(kind=mpi_address_kind) extra, valin, valout
      logical flag
      valout = valin + extra + 1
      flag = .true.
      ierr = MPI_SUCCESS
      end

      subroutine deletefn(comm, keyval, val, extra, ierr)
      implicit none
      include 'mpif.h'
      integer comm, keyval, ierr
      integer(kind=mpi_address_kind) val, extra
      integer ndeleted
      common /deleted/ ndeleted
      ndeleted = ndeleted + 1
      ierr = MPI_SUCCESS
      end

      include 'mpitestf.h'
