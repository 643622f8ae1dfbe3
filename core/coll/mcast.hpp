// The dynamic multicast (GMPI_Mcast, GMPI_Mcast_recv and their non-blocking
// forms, core/include/mpi.h): one root sends a buffer to a subset of a
// communicator's processes that changes from call to call, without a
// communicator per subset (whose creation is a collective over everybody).
// After the dynamic-multicast paper: the group travels with the message and
// only the targets take part.
//
// Protocol (on the communicator's collective context):
//  * the root sends every target a header (tag header_tag, so that a
//    target gets the root's multicasts in the order sent: messages between
//    two processes do not overtake): the root, a sequence number, the
//    stream's size, the algorithm (ring or hybrid d) and the bitmap of the
//    targets.  Little-endian, fixed layout, so clusters of any byte order
//    read it alike.
//  * the members are the root (index 0) and the targets cluster by cluster
//    (the root's first), by rank inside each; the data is the packed stream (in the job's
//    collective representation, external32, when the communicator spans
//    clusters), delivered by core/coll/delivery.hpp on a tag made of the
//    root and its sequence number, so that multicasts in flight (of one
//    root or several) never mix.
//  * the root chooses ring or hybrid d with the cost model over the
//    members (model::for_members, the same model as MPI_Bcast), unless
//    GRIDMPI_BCAST_ALGORITHM forces one (binomial = hybrid 1,
//    scatter_recursive_doubling_allgather = hybrid m, hybrid with
//    coll.bcast_hybrid_d, scatter_ring_allgather = ring; linear is not a
//    delivery and leaves the choice to the model).
// Cost over the broadcast: one header per target at the root (one
// latency before the data, the paper's group set-up).
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

#include "core/coll/nbc.hpp"
#include "core/group.hpp"

namespace gridmpi::coll::mcast {

// The targets, checked: every rank in 0..size-1, none twice, not the root
// (MPI_ERR_RANK, MPI_ERR_ARG naming the culprit); returned sorted.
std::vector<int> checked_targets(const int* targets, int count, const core::Comm& comm);

// The root's side: multicasts (buf, count, type) to `targets` (checked).
nb::Task send(const void* buf, int count, MPI_Datatype type, std::vector<int> targets, core::Comm& comm);

// A target's side: the next multicast from `root` (a rank, or
// MPI_ANY_SOURCE) that includes this process, into (buf, count, type).
// `status` gets the root, tag 0 and the size received; a message longer than
// the buffer is still forwarded, then MPI_ERR_TRUNCATE.
// `control`, when given, lets MPI_Cancel withdraw the receive until the
// header has come (cancel_recv); the status is then marked cancelled.
struct RecvControl {
  request::Request* header = nullptr;  // the header's receive while it is pending
  bool cancelled = false;
};
nb::Task recv(void* buf, int count, MPI_Datatype type, int root, core::Comm& comm,
              std::shared_ptr<MPI_Status> status, std::shared_ptr<RecvControl> control = nullptr);
// MPI_Cancel of a GMPI_Imcast_recv: withdraws its header's receive if
// nothing matched it yet.
void cancel_recv(RecvControl& control);

// Tags on the collective context (above every other collective's, below
// the context agreement's 1 << 30).
inline constexpr int header_tag = 1 << 29;
int data_tag(std::uint32_t sequence, int root, int comm_size);

}  // namespace gridmpi::coll::mcast
