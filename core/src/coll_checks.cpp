// Argument checks of the collective C API (coll_checks.hpp).  Owner:
// core/src/ (collectives).
#include "core/src/coll_checks.hpp"

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/datatype.hpp"
#include "base/error.hpp"
#include "core/op.hpp"

namespace gridmpi::core::coll_checks {

namespace {

void check_count(int count, const char* what) {
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{} is negative ({})", what, count));
}

void check_type(MPI_Datatype type, const char* what) {
  try {
    committed_datatype(type);
  } catch (const MpiError& e) {
    throw MpiError(e.error_class(), fmt::format("{}: {}", what, e.what()));
  }
}

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

void check_types(const MPI_Datatype* types, int n, const char* what) {
  check_array(types, what);
  for (int i = 0; i < n; ++i) check_type(types[i], fmt::format("{}[{}]", what, i).c_str());
}

void forbid_in_place(const void* buf, const char* what) {
  if (buf == MPI_IN_PLACE) {
    throw MpiError(MPI_ERR_BUFFER, fmt::format("MPI_IN_PLACE is not allowed as {} here", what));
  }
}

void forbid_in_place_inter(const void* buf, const char* what) {
  if (buf == MPI_IN_PLACE) {
    throw MpiError(MPI_ERR_BUFFER,
                   fmt::format("MPI_IN_PLACE is not allowed as {} on an intercommunicator", what));
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

void check_send(int count, MPI_Datatype type) {
  check_count(count, "sendcount");
  check_type(type, "sendtype");
}

void check_recv(int count, MPI_Datatype type) {
  check_count(count, "recvcount");
  check_type(type, "recvtype");
}

void check_root(int root, const Comm& comm) {
  if (root < 0 || root >= comm.size) {
    throw MpiError(MPI_ERR_ROOT,
                   fmt::format("root {} is not a rank of the communicator (size {})", root, comm.size));
  }
}

// What a member of an intercommunicator does in a rooted collective.
enum class Side { root, root_group, other_group };

Side inter_side(int root, const Comm& comm) {
  if (root == MPI_ROOT) return Side::root;
  if (root == MPI_PROC_NULL) return Side::root_group;
  if (root < 0 || root >= comm.peer_size()) {
    throw MpiError(MPI_ERR_ROOT,
                   fmt::format("root {} on an intercommunicator must be MPI_ROOT (at the root), "
                               "MPI_PROC_NULL (elsewhere in the root's group) or a rank of the "
                               "remote group (size {})",
                               root, comm.peer_size()));
  }
  return Side::other_group;
}

void check_reduction_type(int count, MPI_Datatype type, MPI_Op op) {
  check_count(count, "count");
  check_type(type, "datatype");
  core::check_op(op, type);
}

}  // namespace

Comm& collective_comm(MPI_Comm handle, const char* function) {
  require_initialized(function);
  return comm(handle);
}

void request_out(const MPI_Request* request) {
  if (request == nullptr) throw MpiError(MPI_ERR_ARG, "request argument is NULL");
}

void bcast(const coll::BcastArgs& a, const Comm& comm) {
  if (comm.is_inter()) {
    Side side = inter_side(a.root, comm);
    if (side == Side::root_group) return;
    check_count(a.count, "count");
    check_type(a.type, "datatype");
    forbid_in_place_inter(a.buffer, "buffer");
    return;
  }
  check_count(a.count, "count");
  check_type(a.type, "datatype");
  check_root(a.root, comm);
  forbid_in_place(a.buffer, "buffer");
}

void gather(const coll::GatherArgs& a, const Comm& comm) {
  if (comm.is_inter()) {
    Side side = inter_side(a.root, comm);
    if (side == Side::root) {
      check_recv(a.recvcount, a.recvtype);
      forbid_in_place_inter(a.recvbuf, "recvbuf");
    } else if (side == Side::other_group) {
      check_send(a.sendcount, a.sendtype);
      forbid_in_place_inter(a.sendbuf, "sendbuf");
    }
    return;
  }
  check_root(a.root, comm);
  bool is_root = comm.rank == a.root;
  if (!is_root) forbid_in_place(a.sendbuf, "sendbuf (only the root may use it)");
  if (a.sendbuf != MPI_IN_PLACE) check_send(a.sendcount, a.sendtype);
  if (is_root) {
    check_recv(a.recvcount, a.recvtype);
    forbid_in_place(a.recvbuf, "recvbuf");
  }
}

void gatherv(const coll::GathervArgs& a, const Comm& comm) {
  if (comm.is_inter()) {
    Side side = inter_side(a.root, comm);
    if (side == Side::root) {
      check_counts(a.recvcounts, comm.peer_size(), "recvcounts");
      check_array(a.displs, "displs");
      check_type(a.recvtype, "recvtype");
      forbid_in_place_inter(a.recvbuf, "recvbuf");
    } else if (side == Side::other_group) {
      check_send(a.sendcount, a.sendtype);
      forbid_in_place_inter(a.sendbuf, "sendbuf");
    }
    return;
  }
  check_root(a.root, comm);
  bool is_root = comm.rank == a.root;
  if (!is_root) forbid_in_place(a.sendbuf, "sendbuf (only the root may use it)");
  if (a.sendbuf != MPI_IN_PLACE) check_send(a.sendcount, a.sendtype);
  if (is_root) {
    check_counts(a.recvcounts, comm.size, "recvcounts");
    check_array(a.displs, "displs");
    check_type(a.recvtype, "recvtype");
    forbid_in_place(a.recvbuf, "recvbuf");
  }
}

void scatter(const coll::GatherArgs& a, const Comm& comm) {
  if (comm.is_inter()) {
    Side side = inter_side(a.root, comm);
    if (side == Side::root) {
      check_send(a.sendcount, a.sendtype);
      forbid_in_place_inter(a.sendbuf, "sendbuf");
    } else if (side == Side::other_group) {
      check_recv(a.recvcount, a.recvtype);
      forbid_in_place_inter(a.recvbuf, "recvbuf");
    }
    return;
  }
  check_root(a.root, comm);
  bool is_root = comm.rank == a.root;
  if (!is_root) forbid_in_place(a.recvbuf, "recvbuf (only the root may use it)");
  if (is_root) {
    check_send(a.sendcount, a.sendtype);
    forbid_in_place(a.sendbuf, "sendbuf");
  }
  if (a.recvbuf != MPI_IN_PLACE) check_recv(a.recvcount, a.recvtype);
}

void scatterv(const coll::ScattervArgs& a, const Comm& comm) {
  if (comm.is_inter()) {
    Side side = inter_side(a.root, comm);
    if (side == Side::root) {
      check_counts(a.sendcounts, comm.peer_size(), "sendcounts");
      check_array(a.displs, "displs");
      check_type(a.sendtype, "sendtype");
      forbid_in_place_inter(a.sendbuf, "sendbuf");
    } else if (side == Side::other_group) {
      check_recv(a.recvcount, a.recvtype);
      forbid_in_place_inter(a.recvbuf, "recvbuf");
    }
    return;
  }
  check_root(a.root, comm);
  bool is_root = comm.rank == a.root;
  if (!is_root) forbid_in_place(a.recvbuf, "recvbuf (only the root may use it)");
  if (is_root) {
    check_counts(a.sendcounts, comm.size, "sendcounts");
    check_array(a.displs, "displs");
    check_type(a.sendtype, "sendtype");
    forbid_in_place(a.sendbuf, "sendbuf");
  }
  if (a.recvbuf != MPI_IN_PLACE) check_recv(a.recvcount, a.recvtype);
}

void allgather(const coll::GatherArgs& a, const Comm& comm) {
  if (comm.is_inter()) forbid_in_place_inter(a.sendbuf, "sendbuf");
  if (a.sendbuf != MPI_IN_PLACE) check_send(a.sendcount, a.sendtype);
  check_recv(a.recvcount, a.recvtype);
  forbid_in_place(a.recvbuf, "recvbuf");
}

void allgatherv(const coll::GathervArgs& a, const Comm& comm) {
  if (comm.is_inter()) forbid_in_place_inter(a.sendbuf, "sendbuf");
  if (a.sendbuf != MPI_IN_PLACE) check_send(a.sendcount, a.sendtype);
  check_counts(a.recvcounts, comm.peer_size(), "recvcounts");
  check_array(a.displs, "displs");
  check_type(a.recvtype, "recvtype");
  forbid_in_place(a.recvbuf, "recvbuf");
}

void alltoall(const coll::GatherArgs& a, const Comm& comm) { allgather(a, comm); }

void alltoallv(const coll::AlltoallvArgs& a, const Comm& comm) {
  const int n = comm.peer_size();
  if (comm.is_inter()) forbid_in_place_inter(a.sendbuf, "sendbuf");
  if (a.sendbuf != MPI_IN_PLACE) {
    check_counts(a.sendcounts, n, "sendcounts");
    check_array(a.sdispls, "sdispls");
    check_type(a.sendtype, "sendtype");
  }
  check_counts(a.recvcounts, n, "recvcounts");
  check_array(a.rdispls, "rdispls");
  check_type(a.recvtype, "recvtype");
  forbid_in_place(a.recvbuf, "recvbuf");
}

void alltoallw(const coll::AlltoallwArgs& a, const Comm& comm) {
  const int n = comm.peer_size();
  if (comm.is_inter()) forbid_in_place_inter(a.sendbuf, "sendbuf");
  if (a.sendbuf != MPI_IN_PLACE) {
    check_counts(a.sendcounts, n, "sendcounts");
    check_array(a.sdispls, "sdispls");
    check_types(a.sendtypes, n, "sendtypes");
  }
  check_counts(a.recvcounts, n, "recvcounts");
  check_array(a.rdispls, "rdispls");
  check_types(a.recvtypes, n, "recvtypes");
  forbid_in_place(a.recvbuf, "recvbuf");
}

void reduce(const coll::ReduceArgs& a, const Comm& comm) {
  if (comm.is_inter()) {
    Side side = inter_side(a.root, comm);
    if (side == Side::root_group) return;
    check_reduction_type(a.count, a.type, a.op);
    if (side == Side::root) forbid_in_place_inter(a.recvbuf, "recvbuf");
    else forbid_in_place_inter(a.sendbuf, "sendbuf");
    return;
  }
  check_root(a.root, comm);
  check_reduction_type(a.count, a.type, a.op);
  if (comm.rank == a.root) {
    forbid_in_place(a.recvbuf, "recvbuf");
    forbid_alias(a.sendbuf, a.recvbuf, a.count);
  } else {
    forbid_in_place(a.sendbuf, "sendbuf (only the root may use it)");
  }
}

void allreduce(const coll::ReduceArgs& a, const Comm& comm) {
  if (comm.is_inter()) forbid_in_place_inter(a.sendbuf, "sendbuf");
  check_reduction_type(a.count, a.type, a.op);
  forbid_in_place(a.recvbuf, "recvbuf");
  forbid_alias(a.sendbuf, a.recvbuf, a.count);
}

void reduce_scatter_block(const coll::ReduceArgs& a, const Comm& comm) { allreduce(a, comm); }

void reduce_scatter(const coll::ReduceScatterArgs& a, const Comm& comm) {
  if (comm.is_inter()) forbid_in_place_inter(a.sendbuf, "sendbuf");
  // Each group's result is scattered over that group: counts of the local group.
  check_counts(a.recvcounts, comm.size, "recvcounts");
  check_type(a.type, "datatype");
  core::check_op(a.op, a.type);
  forbid_in_place(a.recvbuf, "recvbuf");
  forbid_alias(a.sendbuf, a.recvbuf, a.recvcounts[comm.rank]);
}

void scan(const coll::ReduceArgs& a, const Comm& comm) {
  if (comm.is_inter()) {
    throw MpiError(MPI_ERR_COMM,
                   "scan and exscan are not defined on intercommunicators (MPI-3.1 5.11); use an "
                   "intracommunicator (e.g. from MPI_Intercomm_merge)");
  }
  check_reduction_type(a.count, a.type, a.op);
  forbid_in_place(a.recvbuf, "recvbuf");
  forbid_alias(a.sendbuf, a.recvbuf, a.count);
}

void mcast(int count, MPI_Datatype type, const Comm& comm) {
  if (comm.is_inter())
    throw MpiError(MPI_ERR_COMM, "the dynamic multicast needs an intracommunicator (this one is an intercommunicator)");
  check_count(count, "count");
  check_type(type, "datatype");
}

void mcast_root(int root, const Comm& comm) {
  if (root == MPI_ANY_SOURCE) return;
  check_root(root, comm);
  if (root == comm.rank)
    throw MpiError(MPI_ERR_ROOT, fmt::format("root {} is this process: a multicast never goes to its own root", root));
}

}  // namespace gridmpi::core::coll_checks
