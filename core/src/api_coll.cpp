// C API of the blocking collectives: argument checks, then core/coll/.
//
// Only the arguments the standard makes significant on the calling rank are
// checked (e.g. the receive side of MPI_Gather only at the root), so a
// program that passes garbage where the standard says "ignored" still works.
#include <fmt/format.h>

#include "core/api.hpp"
#include "core/coll/coll.hpp"
#include "core/datatype.hpp"
#include "core/error.hpp"
#include "core/group.hpp"
#include "core/op.hpp"

namespace {

using gridmpi::MpiError;
using gridmpi::core::Comm;
namespace coll = gridmpi::coll;
namespace core = gridmpi::core;

Comm& intracomm(MPI_Comm handle, const char* function) {
  core::require_initialized(function);
  Comm& comm = core::comm(handle);
  if (comm.is_inter()) {
    throw MpiError(MPI_ERR_COMM,
                   "collectives on intercommunicators are not supported yet; use an "
                   "intracommunicator (e.g. from MPI_Intercomm_merge)");
  }
  return comm;
}

void check_count(int count, const char* what) {
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{} is negative ({})", what, count));
}

void check_type(MPI_Datatype type, const char* what) {
  try {
    core::committed_datatype(type);
  } catch (const MpiError& e) {
    throw MpiError(e.error_class(), fmt::format("{}: {}", what, e.what()));
  }
}

void check_root(int root, const Comm& comm) {
  if (root < 0 || root >= comm.size) {
    throw MpiError(MPI_ERR_ROOT, fmt::format("root {} is not a rank of the communicator "
                                             "(size {})",
                                             root, comm.size));
  }
}

// Rejects an invalid op, or one not defined on the type (e.g. MPI_SUM on
// MPI_BYTE), on every rank before anything is sent.
void check_op(MPI_Op op, MPI_Datatype type) { core::check_op(op, type); }

void check_array(const void* array, const char* what) {
  if (array == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{} is NULL", what));
}

void check_counts(const int* counts, int n, const char* what) {
  check_array(counts, what);
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) {
      throw MpiError(MPI_ERR_COUNT, fmt::format("{}[{}] is negative ({})", what, i, counts[i]));
    }
  }
}

void forbid_in_place(const void* buf, const char* what) {
  if (buf == MPI_IN_PLACE) {
    throw MpiError(MPI_ERR_BUFFER, fmt::format("MPI_IN_PLACE is not allowed as {} here", what));
  }
}

// The standard forbids aliased send and receive buffers (MPI_IN_PLACE is
// the way to reuse one); catching it here beats silently wrong results.
void forbid_alias(const void* sendbuf, const void* recvbuf, int count) {
  if (count > 0 && sendbuf == recvbuf && sendbuf != MPI_BOTTOM) {
    throw MpiError(MPI_ERR_BUFFER,
                   "sendbuf and recvbuf are the same buffer; pass MPI_IN_PLACE as sendbuf");
  }
}

void check_reduction(const void* sendbuf, const void* recvbuf, int count, MPI_Datatype type,
                     MPI_Op op) {
  check_count(count, "count");
  check_type(type, "datatype");
  check_op(op, type);
  forbid_in_place(recvbuf, "recvbuf");
  forbid_alias(sendbuf, recvbuf, count);
}

}  // namespace

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  return core::api_call(comm, "MPI_Barrier", [&] { coll::barrier(intracomm(comm, "MPI_Barrier")); });
}
GRIDMPI_WEAK(Barrier)

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
                          MPI_Comm comm) {
  return core::api_call(comm, "MPI_Bcast", [&] {
    Comm& c = intracomm(comm, "MPI_Bcast");
    check_count(count, "count");
    check_type(datatype, "datatype");
    check_root(root, c);
    forbid_in_place(buffer, "buffer");
    coll::bcast(buffer, count, datatype, root, c);
  });
}
GRIDMPI_WEAK(Bcast)

extern "C" int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm) {
  return core::api_call(comm, "MPI_Gather", [&] {
    Comm& c = intracomm(comm, "MPI_Gather");
    check_root(root, c);
    bool is_root = c.rank == root;
    if (!is_root) forbid_in_place(sendbuf, "sendbuf (only the root may use it)");
    if (sendbuf != MPI_IN_PLACE) {
      check_count(sendcount, "sendcount");
      check_type(sendtype, "sendtype");
    }
    if (is_root) {
      check_count(recvcount, "recvcount");
      check_type(recvtype, "recvtype");
      forbid_in_place(recvbuf, "recvbuf");
    }
    coll::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c);
  });
}
GRIDMPI_WEAK(Gather)

extern "C" int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Gatherv", [&] {
    Comm& c = intracomm(comm, "MPI_Gatherv");
    check_root(root, c);
    bool is_root = c.rank == root;
    if (!is_root) forbid_in_place(sendbuf, "sendbuf (only the root may use it)");
    if (sendbuf != MPI_IN_PLACE) {
      check_count(sendcount, "sendcount");
      check_type(sendtype, "sendtype");
    }
    if (is_root) {
      check_counts(recvcounts, c.size, "recvcounts");
      check_array(displs, "displs");
      check_type(recvtype, "recvtype");
      forbid_in_place(recvbuf, "recvbuf");
    }
    coll::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, c);
  });
}
GRIDMPI_WEAK(Gatherv)

extern "C" int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  return core::api_call(comm, "MPI_Scatter", [&] {
    Comm& c = intracomm(comm, "MPI_Scatter");
    check_root(root, c);
    bool is_root = c.rank == root;
    if (!is_root) forbid_in_place(recvbuf, "recvbuf (only the root may use it)");
    if (is_root) {
      check_count(sendcount, "sendcount");
      check_type(sendtype, "sendtype");
      forbid_in_place(sendbuf, "sendbuf");
    }
    if (recvbuf != MPI_IN_PLACE) {
      check_count(recvcount, "recvcount");
      check_type(recvtype, "recvtype");
    }
    coll::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c);
  });
}
GRIDMPI_WEAK(Scatter)

extern "C" int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Scatterv", [&] {
    Comm& c = intracomm(comm, "MPI_Scatterv");
    check_root(root, c);
    bool is_root = c.rank == root;
    if (!is_root) forbid_in_place(recvbuf, "recvbuf (only the root may use it)");
    if (is_root) {
      check_counts(sendcounts, c.size, "sendcounts");
      check_array(displs, "displs");
      check_type(sendtype, "sendtype");
      forbid_in_place(sendbuf, "sendbuf");
    }
    if (recvbuf != MPI_IN_PLACE) {
      check_count(recvcount, "recvcount");
      check_type(recvtype, "recvtype");
    }
    coll::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, c);
  });
}
GRIDMPI_WEAK(Scatterv)

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return core::api_call(comm, "MPI_Allgather", [&] {
    Comm& c = intracomm(comm, "MPI_Allgather");
    if (sendbuf != MPI_IN_PLACE) {
      check_count(sendcount, "sendcount");
      check_type(sendtype, "sendtype");
    }
    check_count(recvcount, "recvcount");
    check_type(recvtype, "recvtype");
    forbid_in_place(recvbuf, "recvbuf");
    coll::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c);
  });
}
GRIDMPI_WEAK(Allgather)

extern "C" int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Allgatherv", [&] {
    Comm& c = intracomm(comm, "MPI_Allgatherv");
    if (sendbuf != MPI_IN_PLACE) {
      check_count(sendcount, "sendcount");
      check_type(sendtype, "sendtype");
    }
    check_counts(recvcounts, c.size, "recvcounts");
    check_array(displs, "displs");
    check_type(recvtype, "recvtype");
    forbid_in_place(recvbuf, "recvbuf");
    coll::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, c);
  });
}
GRIDMPI_WEAK(Allgatherv)

extern "C" int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Alltoall", [&] {
    Comm& c = intracomm(comm, "MPI_Alltoall");
    if (sendbuf != MPI_IN_PLACE) {
      check_count(sendcount, "sendcount");
      check_type(sendtype, "sendtype");
    }
    check_count(recvcount, "recvcount");
    check_type(recvtype, "recvtype");
    forbid_in_place(recvbuf, "recvbuf");
    coll::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c);
  });
}
GRIDMPI_WEAK(Alltoall)

extern "C" int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Alltoallv", [&] {
    Comm& c = intracomm(comm, "MPI_Alltoallv");
    if (sendbuf != MPI_IN_PLACE) {
      check_counts(sendcounts, c.size, "sendcounts");
      check_array(sdispls, "sdispls");
      check_type(sendtype, "sendtype");
    }
    check_counts(recvcounts, c.size, "recvcounts");
    check_array(rdispls, "rdispls");
    check_type(recvtype, "recvtype");
    forbid_in_place(recvbuf, "recvbuf");
    coll::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                    recvtype, c);
  });
}
GRIDMPI_WEAK(Alltoallv)

extern "C" int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf,
                              const int recvcounts[], const int rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return core::api_call(comm, "MPI_Alltoallw", [&] {
    Comm& c = intracomm(comm, "MPI_Alltoallw");
    if (sendbuf != MPI_IN_PLACE) {
      check_counts(sendcounts, c.size, "sendcounts");
      check_array(sdispls, "sdispls");
      check_array(sendtypes, "sendtypes");
      for (int i = 0; i < c.size; ++i) check_type(sendtypes[i], "sendtypes[i]");
    }
    check_counts(recvcounts, c.size, "recvcounts");
    check_array(rdispls, "rdispls");
    check_array(recvtypes, "recvtypes");
    for (int i = 0; i < c.size; ++i) check_type(recvtypes[i], "recvtypes[i]");
    forbid_in_place(recvbuf, "recvbuf");
    coll::alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                    recvtypes, c);
  });
}
GRIDMPI_WEAK(Alltoallw)

extern "C" int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Reduce", [&] {
    Comm& c = intracomm(comm, "MPI_Reduce");
    check_root(root, c);
    check_count(count, "count");
    check_type(datatype, "datatype");
    check_op(op, datatype);
    if (c.rank == root) {
      forbid_in_place(recvbuf, "recvbuf");
      forbid_alias(sendbuf, recvbuf, count);
    } else {
      forbid_in_place(sendbuf, "sendbuf (only the root may use it)");
    }
    coll::reduce(sendbuf, recvbuf, count, datatype, op, root, c);
  });
}
GRIDMPI_WEAK(Reduce)

extern "C" int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Allreduce", [&] {
    Comm& c = intracomm(comm, "MPI_Allreduce");
    check_reduction(sendbuf, recvbuf, count, datatype, op);
    coll::allreduce(sendbuf, recvbuf, count, datatype, op, c);
  });
}
GRIDMPI_WEAK(Allreduce)

extern "C" int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Reduce_scatter", [&] {
    Comm& c = intracomm(comm, "MPI_Reduce_scatter");
    check_counts(recvcounts, c.size, "recvcounts");
    check_type(datatype, "datatype");
    check_op(op, datatype);
    forbid_in_place(recvbuf, "recvbuf");
    forbid_alias(sendbuf, recvbuf, recvcounts[c.rank]);
    coll::reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, c);
  });
}
GRIDMPI_WEAK(Reduce_scatter)

extern "C" int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Reduce_scatter_block", [&] {
    Comm& c = intracomm(comm, "MPI_Reduce_scatter_block");
    check_reduction(sendbuf, recvbuf, recvcount, datatype, op);
    coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, c);
  });
}
GRIDMPI_WEAK(Reduce_scatter_block)

extern "C" int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Scan", [&] {
    Comm& c = intracomm(comm, "MPI_Scan");
    check_reduction(sendbuf, recvbuf, count, datatype, op);
    coll::scan(sendbuf, recvbuf, count, datatype, op, c);
  });
}
GRIDMPI_WEAK(Scan)

extern "C" int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Exscan", [&] {
    Comm& c = intracomm(comm, "MPI_Exscan");
    check_reduction(sendbuf, recvbuf, count, datatype, op);
    coll::exscan(sendbuf, recvbuf, count, datatype, op, c);
  });
}
GRIDMPI_WEAK(Exscan)
