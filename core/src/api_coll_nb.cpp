// C API of the non-blocking collectives (MPI-3.1 5.12): argument checks
// (shared with the blocking calls, coll_checks.hpp), then a schedule of
// core/coll/ (nbc_intra.hpp on intracommunicators, inter.hpp on
// intercommunicators) started as an MPI request.  Owner: core/src/
// (collectives).
//
// The user may free a datatype or op right after the call returns, so the
// request keeps a reference to every derived datatype and user op it uses
// until the schedule ends.  Counts, displacements and datatype arrays are
// read while the schedule runs, as the standard allows (the user must not
// change them before completion).
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "core/api.hpp"
#include "core/coll/inter.hpp"
#include "core/coll/mcast.hpp"
#include "core/coll/nbc.hpp"
#include "core/coll/nbc_intra.hpp"
#include "core/datatype.hpp"
#include "base/error.hpp"
#include "core/group.hpp"
#include "core/op.hpp"
#include "core/src/coll_checks.hpp"
#include "request/request.hpp"

namespace {

using gridmpi::core::Comm;
namespace coll = gridmpi::coll;
namespace core = gridmpi::core;
namespace nb = gridmpi::coll::nb;
namespace checks = gridmpi::core::coll_checks;

// References to the datatypes and op of a running schedule.  Handles the
// standard makes insignificant on this rank may be garbage, so only valid
// ones are retained (and exactly those are released).
class Retained {
 public:
  Retained(const std::vector<MPI_Datatype>& types, MPI_Op op) {
    for (MPI_Datatype t : types) {
      try {
        core::retain_datatype(t);
        types_.push_back(t);
      } catch (...) {
      }
    }
    if (op == MPI_OP_NULL) return;
    try {
      core::retain_op(op);
      op_ = op;
    } catch (...) {
    }
  }
  ~Retained() {
    for (MPI_Datatype t : types_) {
      try {
        core::release_datatype(t);
      } catch (...) {
      }
    }
    if (op_ == MPI_OP_NULL) return;
    try {
      core::release_op(op_);
    } catch (...) {
    }
  }
  Retained(const Retained&) = delete;
  Retained& operator=(const Retained&) = delete;

 private:
  std::vector<MPI_Datatype> types_;
  MPI_Op op_ = MPI_OP_NULL;
};

nb::Task retaining(nb::Task schedule, std::vector<MPI_Datatype> types, MPI_Op op) {
  Retained keep(types, op);
  co_await std::move(schedule);
}

// Starts the schedule (the intracommunicator or intercommunicator one, made
// by `make(tag)` from the right namespace) and returns its request handle.
template <class MakeIntra, class MakeInter>
MPI_Request launch(Comm& comm, MakeIntra&& make_intra, MakeInter&& make_inter,
                   std::vector<MPI_Datatype> types, MPI_Op op = MPI_OP_NULL) {
  const int tag = nb::next_tag(comm);
  nb::Task schedule = comm.is_inter() ? make_inter(tag) : make_intra(tag);
  return nb::start(retaining(std::move(schedule), std::move(types), op), comm)->handle;
}

// The datatypes of an Alltoallw call that the schedule will use.
std::vector<MPI_Datatype> alltoallw_types(const coll::AlltoallwArgs& a, int n) {
  std::vector<MPI_Datatype> types(a.recvtypes, a.recvtypes + n);
  if (a.sendbuf != MPI_IN_PLACE) types.insert(types.end(), a.sendtypes, a.sendtypes + n);
  return types;
}

}  // namespace

extern "C" int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Ibarrier", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Ibarrier");
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::barrier(c, tag); },
        [&](int tag) { return coll::inter::barrier(c, tag); }, {});
  });
}
GRIDMPI_WEAK(Ibarrier)

extern "C" int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  return core::api_call(comm, "MPI_Ibcast", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Ibcast");
    coll::BcastArgs args{buffer, count, datatype, root};
    checks::bcast(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::bcast(args, c, tag); },
        [&](int tag) { return coll::inter::bcast(args, c, tag); }, {datatype});
  });
}
GRIDMPI_WEAK(Ibcast)

extern "C" int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request* request) {
  return core::api_call(comm, "MPI_Igather", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Igather");
    coll::GatherArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root};
    checks::gather(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::gather(args, c, tag); },
        [&](int tag) { return coll::inter::gather(args, c, tag); }, {sendtype, recvtype});
  });
}
GRIDMPI_WEAK(Igather)

extern "C" int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Igatherv", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Igatherv");
    coll::GathervArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root};
    checks::gatherv(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::gatherv(args, c, tag); },
        [&](int tag) { return coll::inter::gatherv(args, c, tag); }, {sendtype, recvtype});
  });
}
GRIDMPI_WEAK(Igatherv)

extern "C" int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Iscatter", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Iscatter");
    coll::GatherArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root};
    checks::scatter(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::scatter(args, c, tag); },
        [&](int tag) { return coll::inter::scatter(args, c, tag); }, {sendtype, recvtype});
  });
}
GRIDMPI_WEAK(Iscatter)

extern "C" int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Iscatterv", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Iscatterv");
    coll::ScattervArgs args{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root};
    checks::scatterv(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::scatterv(args, c, tag); },
        [&](int tag) { return coll::inter::scatterv(args, c, tag); }, {sendtype, recvtype});
  });
}
GRIDMPI_WEAK(Iscatterv)

extern "C" int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return core::api_call(comm, "MPI_Iallgather", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Iallgather");
    coll::GatherArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0};
    checks::allgather(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::allgather(args, c, tag); },
        [&](int tag) { return coll::inter::allgather(args, c, tag); }, {sendtype, recvtype});
  });
}
GRIDMPI_WEAK(Iallgather)

extern "C" int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Iallgatherv", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Iallgatherv");
    coll::GathervArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0};
    checks::allgatherv(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::allgatherv(args, c, tag); },
        [&](int tag) { return coll::inter::allgatherv(args, c, tag); }, {sendtype, recvtype});
  });
}
GRIDMPI_WEAK(Iallgatherv)

extern "C" int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  return core::api_call(comm, "MPI_Ialltoall", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Ialltoall");
    coll::GatherArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0};
    checks::alltoall(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::alltoall(args, c, tag); },
        [&](int tag) { return coll::inter::alltoall(args, c, tag); }, {sendtype, recvtype});
  });
}
GRIDMPI_WEAK(Ialltoall)

extern "C" int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return core::api_call(comm, "MPI_Ialltoallv", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Ialltoallv");
    coll::AlltoallvArgs args{sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
    checks::alltoallv(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::alltoallv(args, c, tag); },
        [&](int tag) { return coll::inter::alltoallv(args, c, tag); }, {sendtype, recvtype});
  });
}
GRIDMPI_WEAK(Ialltoallv)

extern "C" int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                               const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request* request) {
  return core::api_call(comm, "MPI_Ialltoallw", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Ialltoallw");
    coll::AlltoallwArgs args{sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes};
    checks::alltoallw(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::alltoallw(args, c, tag); },
        [&](int tag) { return coll::inter::alltoallw(args, c, tag); }, alltoallw_types(args, c.peer_size()));
  });
}
GRIDMPI_WEAK(Ialltoallw)

extern "C" int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Ireduce", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Ireduce");
    coll::ReduceArgs args{sendbuf, recvbuf, count, datatype, op, root};
    checks::reduce(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::reduce(args, c, tag); },
        [&](int tag) { return coll::inter::reduce(args, c, tag); }, {datatype}, op);
  });
}
GRIDMPI_WEAK(Ireduce)

extern "C" int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Iallreduce", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Iallreduce");
    coll::ReduceArgs args{sendbuf, recvbuf, count, datatype, op, 0};
    checks::allreduce(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::allreduce(args, c, tag); },
        [&](int tag) { return coll::inter::allreduce(args, c, tag); }, {datatype}, op);
  });
}
GRIDMPI_WEAK(Iallreduce)

extern "C" int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Request* request) {
  return core::api_call(comm, "MPI_Ireduce_scatter", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Ireduce_scatter");
    coll::ReduceScatterArgs args{sendbuf, recvbuf, recvcounts, datatype, op};
    checks::reduce_scatter(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::reduce_scatter(args, c, tag); },
        [&](int tag) { return coll::inter::reduce_scatter(args, c, tag); }, {datatype}, op);
  });
}
GRIDMPI_WEAK(Ireduce_scatter)

extern "C" int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                          MPI_Request* request) {
  return core::api_call(comm, "MPI_Ireduce_scatter_block", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Ireduce_scatter_block");
    coll::ReduceArgs args{sendbuf, recvbuf, recvcount, datatype, op, 0};
    checks::reduce_scatter_block(args, c);
    checks::request_out(request);
    *request = launch(
        c, [&](int tag) { return coll::intra::reduce_scatter_block(args, c, tag); },
        [&](int tag) { return coll::inter::reduce_scatter_block(args, c, tag); }, {datatype}, op);
  });
}
GRIDMPI_WEAK(Ireduce_scatter_block)

// Scan and Exscan exist on intracommunicators only (the check refuses the others).
extern "C" int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Iscan", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Iscan");
    coll::ReduceArgs args{sendbuf, recvbuf, count, datatype, op, 0};
    checks::scan(args, c);
    checks::request_out(request);
    const int tag = nb::next_tag(c);
    *request = nb::start(retaining(coll::intra::scan(args, c, tag), {datatype}, op), c)->handle;
  });
}
GRIDMPI_WEAK(Iscan)

extern "C" int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Iexscan", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Iexscan");
    coll::ReduceArgs args{sendbuf, recvbuf, count, datatype, op, 0};
    checks::scan(args, c);
    checks::request_out(request);
    const int tag = nb::next_tag(c);
    *request = nb::start(retaining(coll::intra::exscan(args, c, tag), {datatype}, op), c)->handle;
  });
}
GRIDMPI_WEAK(Iexscan)

// ---- the dynamic multicast (gridmpi's extension, core/coll/mcast.hpp) -------
// Blocking and non-blocking here: both run the schedules of mcast.hpp.

extern "C" int PGMPI_Mcast(const void* buf, int count, MPI_Datatype datatype, const int targets[], int ntargets,
                           MPI_Comm comm) {
  return core::api_call(comm, "GMPI_Mcast", [&] {
    Comm& c = checks::collective_comm(comm, "GMPI_Mcast");
    checks::mcast(count, datatype, c);
    nb::run(coll::mcast::send(buf, count, datatype, coll::mcast::checked_targets(targets, ntargets, c), c));
  });
}
#pragma weak GMPI_Mcast = PGMPI_Mcast

extern "C" int PGMPI_Imcast(const void* buf, int count, MPI_Datatype datatype, const int targets[], int ntargets,
                            MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "GMPI_Imcast", [&] {
    Comm& c = checks::collective_comm(comm, "GMPI_Imcast");
    checks::mcast(count, datatype, c);
    checks::request_out(request);
    std::vector<int> list = coll::mcast::checked_targets(targets, ntargets, c);
    nb::Task schedule = coll::mcast::send(buf, count, datatype, std::move(list), c);
    *request = nb::start(retaining(std::move(schedule), {datatype}, MPI_OP_NULL), c)->handle;
  });
}
#pragma weak GMPI_Imcast = PGMPI_Imcast

extern "C" int PGMPI_Mcast_recv(void* buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                MPI_Status* status) {
  auto result = std::make_shared<MPI_Status>();
  const int rc = core::api_call(comm, "GMPI_Mcast_recv", [&] {
    Comm& c = checks::collective_comm(comm, "GMPI_Mcast_recv");
    checks::mcast(count, datatype, c);
    checks::mcast_root(root, c);
    try {
      nb::run(coll::mcast::recv(buf, count, datatype, root, c, result));
    } catch (const gridmpi::MpiError& e) {
      result->MPI_ERROR = e.error_class();
      if (status != MPI_STATUS_IGNORE) *status = *result;
      throw;
    }
    if (status != MPI_STATUS_IGNORE) *status = *result;
  });
  return rc;
}
#pragma weak GMPI_Mcast_recv = PGMPI_Mcast_recv

extern "C" int PGMPI_Imcast_recv(void* buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                 MPI_Request* request) {
  return core::api_call(comm, "GMPI_Imcast_recv", [&] {
    Comm& c = checks::collective_comm(comm, "GMPI_Imcast_recv");
    checks::mcast(count, datatype, c);
    checks::mcast_root(root, c);
    checks::request_out(request);
    auto result = std::make_shared<MPI_Status>();
    auto control = std::make_shared<coll::mcast::RecvControl>();
    nb::Task schedule = coll::mcast::recv(buf, count, datatype, root, c, result, control);
    *request = nb::start(retaining(std::move(schedule), {datatype}, MPI_OP_NULL), c, result,
                         [control] { coll::mcast::cancel_recv(*control); })
                   ->handle;
  });
}
#pragma weak GMPI_Imcast_recv = PGMPI_Imcast_recv
