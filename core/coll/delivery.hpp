// Delivery algorithms: broadcasting a packed byte stream from one process to
// an ordered list of processes of a communicator.  MPI_Bcast runs them over
// the whole communicator (the list is the ranks rotated to start at the
// root); the dynamic multicast (core/coll/mcast.cpp) over the root and its
// targets.  The names and the cost formulas follow the dynamic-multicast
// paper (hybrid d after Barnett et al., "ring" = binomial scatter + ring
// allgather); see core/coll/README.md "Broadcast: hybrid d and the cost
// model".
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "core/coll/algorithm.hpp"
#include "core/coll/nbc.hpp"
#include "core/coll/util.hpp"
#include "core/group.hpp"

namespace gridmpi::coll {

// Who takes part: index i of the delivery (0 = the process that holds the
// data) is rank rank(i) of the communicator.  Either the communicator's ranks
// rotated to start at `root` (list == nullptr, size == comm size) or an
// explicit list of `size` distinct ranks.
struct Members {
  const int* list = nullptr;
  int size = 0;
  int root = 0;  // with list == nullptr: the rank at index 0
  int me = 0;    // this process's index
  int rank(int i) const noexcept { return list != nullptr ? list[i] : (root + i) % size; }
};

// Hybrid d: the n bytes are cut into d pieces; the members form groups of d
// consecutive indices (the last group may be smaller); a binomial scatter
// puts piece k on member k of group 0; a binomial tree over the groups
// copies piece k to member k of every other group (a smaller last group's
// member k receives a contiguous share of the d pieces); each group then
// collects its pieces, by recursive doubling when its size is a power of
// two, else by a dissemination (Bruck) allgather of the same number of
// steps.  d = 1 is the binomial tree, d = size the scatter + recursive
// doubling allgather.  1 <= d <= size.  At index 0 `data` is only read.
void deliver_hybrid(std::byte* data, std::size_t n, int d, const Members& members, int tag,
                    core::Comm& comm);

// "ring": binomial scatter of size pieces, then a ring allgather.  At index 0
// `data` is only read (its left neighbour does not send to it).
void deliver_ring(std::byte* data, std::size_t n, const Members& members, int tag, core::Comm& comm);

// The same as schedules (non-blocking; `members.list`, when set, and `data`
// must outlive them).
nb::Task hybrid_schedule(std::byte* data, std::size_t n, int d, Members members, int tag, core::Comm& comm);
nb::Task ring_schedule(std::byte* data, std::size_t n, Members members, int tag, core::Comm& comm);

// coll.bcast_hybrid_d (GRIDMPI_BCAST_HYBRID_D): the forced d, 0 = the model's.
std::int64_t bcast_forced_hybrid_d();

// The delivery GRIDMPI_BCAST_ALGORITHM forces over m members, when it names
// one (binomial = hybrid 1, scatter_recursive_doubling_allgather = hybrid m,
// scatter_ring_allgather = ring, hybrid with a forced d); false otherwise
// (nothing forced, "linear", or "hybrid" with d from the model).
bool forced_bcast_delivery(int m, bool* ring, int* d);

// ---- MPI_Bcast over a delivery ---------------------------------------------

// Runs deliver(data, n, members) for a broadcast: the root's packed message
// (only read), the others' packed receive area (unpacked afterwards), the
// communicator's ranks rotated to start at the root.
template <class Deliver>
void bcast_packed(const BcastArgs& a, core::Comm& comm, Deliver&& deliver) {
  const Members members{nullptr, comm.size, a.root, (comm.rank - a.root + comm.size) % comm.size};
  if (comm.rank == a.root) {
    PackedInput data(a.buffer, a.count, a.type);
    deliver(const_cast<std::byte*>(data.data()), data.size(), members);
  } else {
    PackedOutput data(a.buffer, a.count, a.type);
    deliver(data.data(), data.size(), members);
    data.finish();
  }
}

}  // namespace gridmpi::coll
