// Collectives on intercommunicators (MPI-3.1 5.2.2): the schedules behind
// both the blocking calls (nb::run) and the non-blocking ones (nb::start).
// Owner: core/coll/ (inter_*.cpp).
//
// Arguments are the intracommunicator argument structs of algorithm.hpp with
// the intercommunicator meaning of MPI-3.1: `root` is MPI_ROOT at the root,
// MPI_PROC_NULL at the other members of the root's group, and the root's rank
// in the remote group at the members of the other group; "all" collectives
// move data between the two groups (each group receives what the other sent;
// recvcounts/displs index the remote group).  MPI_IN_PLACE is not allowed on
// intercommunicators (the C API refuses it).  `tag` comes from nb::next_tag.
//
// Messages between the groups use comm's collective context; phases inside
// one group use the hidden local intracommunicator (comm.local_comm).  Scan
// and Exscan are not defined on intercommunicators.
#pragma once
#include <mpi.h>

#include "core/coll/algorithm.hpp"
#include "core/coll/nbc.hpp"

namespace gridmpi::coll::inter {

nb::Task barrier(core::Comm& comm, int tag);
nb::Task bcast(BcastArgs args, core::Comm& comm, int tag);
nb::Task gather(GatherArgs args, core::Comm& comm, int tag);
nb::Task gatherv(GathervArgs args, core::Comm& comm, int tag);
nb::Task scatter(GatherArgs args, core::Comm& comm, int tag);
nb::Task scatterv(ScattervArgs args, core::Comm& comm, int tag);
nb::Task allgather(GatherArgs args, core::Comm& comm, int tag);
nb::Task allgatherv(GathervArgs args, core::Comm& comm, int tag);
nb::Task alltoall(GatherArgs args, core::Comm& comm, int tag);
nb::Task alltoallv(AlltoallvArgs args, core::Comm& comm, int tag);
nb::Task alltoallw(AlltoallwArgs args, core::Comm& comm, int tag);
// Reduce: the root (MPI_ROOT) receives the reduction of the remote group's
// sendbufs; Allreduce: each group receives the reduction of the other's.
nb::Task reduce(ReduceArgs args, core::Comm& comm, int tag);
nb::Task allreduce(ReduceArgs args, core::Comm& comm, int tag);
// Each group's result (the reduction of the other group's data) is
// scattered over it by recvcounts (Reduce_scatter) or in blocks of
// args.count (Reduce_scatter_block).
nb::Task reduce_scatter(ReduceScatterArgs args, core::Comm& comm, int tag);
nb::Task reduce_scatter_block(ReduceArgs args, core::Comm& comm, int tag);

}  // namespace gridmpi::coll::inter
