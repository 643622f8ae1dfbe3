// Schedules of the non-blocking collectives on intracommunicators (MPI-3.1
// 5.12): the nb::Task behind MPI_Ibarrier ... MPI_Iexscan.  Owner: core/coll/
// (nbc_<collective>.cpp).
//
// Arguments are the structs of algorithm.hpp with the intracommunicator
// meaning, MPI_IN_PLACE included, already checked by the C API; `tag` comes
// from nb::next_tag(comm) and every message of the call uses it.  The
// schedules favour being right on every datatype over speed: binomial trees
// for bcast and reduce, linear gather/scatter and alltoall(v/w), a ring for
// allgather(v), reduce + bcast for allreduce, reduce + scatterv for
// reduce_scatter(_block), recursive doubling for scan and exscan.  Every
// reduction combines (lower ranks) op (higher ranks), so non-commutative ops
// are reduced in rank order.
//
// They may also be co_awaited as phases of other schedules (e.g. on an
// intercommunicator's local_comm), with that communicator's tag.
#pragma once
#include <mpi.h>

#include <vector>

#include "core/coll/algorithm.hpp"
#include "core/coll/nbc.hpp"

namespace gridmpi::coll::intra {

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
nb::Task reduce(ReduceArgs args, core::Comm& comm, int tag);
nb::Task allreduce(ReduceArgs args, core::Comm& comm, int tag);
nb::Task reduce_scatter(ReduceScatterArgs args, core::Comm& comm, int tag);
nb::Task reduce_scatter_block(ReduceArgs args, core::Comm& comm, int tag);
nb::Task scan(ReduceArgs args, core::Comm& comm, int tag);
nb::Task exscan(ReduceArgs args, core::Comm& comm, int tag);

}  // namespace gridmpi::coll::intra

// ---- shared by the schedule files ------------------------------------------
namespace gridmpi::coll::intra::detail {

// One block of a user buffer: (addr, count, type), addr already offset.
struct Block {
  const void* addr = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  void* out() const noexcept { return const_cast<void*>(addr); }
};

// Linear gather: every rank but the root sends `mine` to the root, which
// receives block i into `blocks[i]` and copies its own (unless in_place).
nb::Task gather_blocks(Block mine, std::vector<Block> blocks, bool in_place, int root,
                       core::Comm& comm, int tag);
// Linear scatter: the root sends `blocks[i]` to rank i; everyone receives
// into `mine` (the root copies, unless in_place).
nb::Task scatter_blocks(std::vector<Block> blocks, Block mine, bool in_place, int root,
                        core::Comm& comm, int tag);
// The n blocks of a buffer of equal blocks of (count, type).
std::vector<Block> equal_blocks(const void* buf, int count, MPI_Datatype type, int n);
// Block i at displs[i] elements of (counts[i], type).
std::vector<Block> varying_blocks(const void* buf, const int* counts, const int* displs,
                                  MPI_Datatype type, int n);

}  // namespace gridmpi::coll::intra::detail
