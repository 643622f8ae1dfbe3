C f77_misc.f -- Fortran 77 bindings with special argument rules:
C MPI_INFO_GET leaves VALUE untouched when the key is absent, the
C generalized-request callbacks receive the caller's own EXTRA_STATE
C variable (the free callback's update is seen by the program), and
C MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY in MPI_DIST_GRAPH_CREATE_ADJACENT.
      program f77misc
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, info, req, vlen, graph, indeg, outdeg
      integer nbr(1), srcs(1), dsts(1)
      logical flag, weighted
      character*(MPI_MAX_INFO_VAL) value
      integer(kind=MPI_ADDRESS_KIND) extra
      integer status(MPI_STATUS_SIZE)
      external queryfn, freefn, cancelfn

      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)

C     info: a missing key leaves the value as it was
      call MPI_INFO_CREATE(info, ierr)
      call MPI_INFO_SET(info, 'present', 'yes', ierr)
      value = 'untouched'
      flag = .true.
      call MPI_INFO_GET(info, 'absent', MPI_MAX_INFO_VAL, value,
     &     flag, ierr)
      call mt_check_int('info_get ierr', ierr, MPI_SUCCESS)
      call mt_check_true('absent key: flag false', .not. flag)
      call mt_check_true('absent key: value kept',
     &     value .eq. 'untouched')
      call MPI_INFO_GET(info, 'present', MPI_MAX_INFO_VAL, value,
     &     flag, ierr)
      call mt_check_true('present key: flag true', flag)
      call mt_check_true('present key: value', value .eq. 'yes')
      call MPI_INFO_GET_VALUELEN(info, 'present', vlen, flag, ierr)
      call mt_check_int('valuelen', vlen, 3)
      call MPI_INFO_FREE(info, ierr)

C     generalized request: the callbacks update EXTRA itself
      extra = 10
      call MPI_GREQUEST_START(queryfn, freefn, cancelfn, extra, req,
     &     ierr)
      call mt_check_int('grequest_start ierr', ierr, MPI_SUCCESS)
      call MPI_TEST(req, flag, status, ierr)
      call mt_check_true('grequest not complete yet', .not. flag)
      call MPI_GREQUEST_COMPLETE(req, ierr)
      call MPI_WAIT(req, status, ierr)
      call mt_check_int('grequest wait ierr', ierr, MPI_SUCCESS)
      call mt_check_int('status tag set by query_fn',
     &     status(MPI_TAG), 77)
      call mt_check_int('query (+1) and free (+100) saw EXTRA',
     &     int(extra), 111)

C     dist graph on a ring, unweighted then with empty weights
      nbr(1) = mod(rank + 1, size)
      srcs(1) = mod(rank + size - 1, size)
      call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, srcs,
     &     MPI_UNWEIGHTED, 1, nbr, MPI_UNWEIGHTED, MPI_INFO_NULL,
     &     .false., graph, ierr)
      call mt_check_int('dist_graph unweighted ierr', ierr,
     &     MPI_SUCCESS)
      call MPI_DIST_GRAPH_NEIGHBORS_COUNT(graph, indeg, outdeg,
     &     weighted, ierr)
      call mt_check_int('indegree', indeg, 1)
      call mt_check_true('unweighted', .not. weighted)
      call MPI_DIST_GRAPH_NEIGHBORS(graph, 1, srcs, MPI_UNWEIGHTED,
     &     1, dsts, MPI_UNWEIGHTED, ierr)
      call mt_check_int('neighbor', dsts(1), nbr(1))
      call MPI_COMM_FREE(graph, ierr)
      call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 0, srcs,
     &     MPI_WEIGHTS_EMPTY, 0, nbr, MPI_WEIGHTS_EMPTY,
     &     MPI_INFO_NULL, .false., graph, ierr)
      call mt_check_int('dist_graph empty weights ierr', ierr,
     &     MPI_SUCCESS)
      call MPI_DIST_GRAPH_NEIGHBORS_COUNT(graph, indeg, outdeg,
     &     weighted, ierr)
      call mt_check_int('empty: indegree', indeg, 0)
      call mt_check_int('empty: outdegree', outdeg, 0)
      call MPI_COMM_FREE(graph, ierr)

      call mt_finish()
      end

      subroutine queryfn(extra, status, ierr)
      implicit none
      include 'mpif.h'
      integer(kind=MPI_ADDRESS_KIND) extra
      integer status(MPI_STATUS_SIZE), ierr
      extra = extra + 1
      status(MPI_SOURCE) = MPI_UNDEFINED
      status(MPI_TAG) = 77
      call MPI_STATUS_SET_CANCELLED(status, .false., ierr)
      call MPI_STATUS_SET_ELEMENTS(status, MPI_BYTE, 0, ierr)
      ierr = MPI_SUCCESS
      end

      subroutine freefn(extra, ierr)
      implicit none
      include 'mpif.h'
      integer(kind=MPI_ADDRESS_KIND) extra
      integer ierr
      extra = extra + 100
      ierr = MPI_SUCCESS
      end

      subroutine cancelfn(extra, complete, ierr)
      implicit none
      include 'mpif.h'
      integer(kind=MPI_ADDRESS_KIND) extra
      logical complete
      integer ierr
      ierr = MPI_SUCCESS
      end

      include 'mpitestf.h'
