// Alltoallw with every receive and every send posted at once (one datatype
// and one byte displacement per peer).
// Restrictions: none.  With MPI_IN_PLACE each outgoing block is first copied
// out of the receive buffer.
// Cost: (p-1) alpha + max(sum sent, sum received) beta per rank.
#include <vector>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void alltoallw_linear(const AlltoallwArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  std::vector<TypedBuffer> saved;
  if (in_place) {
    saved.resize(p);
    for (int i = 0; i < p; ++i) {
      if (i == r) continue;
      saved[i] = TypedBuffer(a.recvcounts[i], a.recvtypes[i]);
      copy(at_bytes(a.recvbuf, a.rdispls[i]), saved[i].get(), a.recvcounts[i], a.recvtypes[i]);
    }
  }
  Requests requests;
  for (int i = 1; i < p; ++i) {
    int from = (r - i + p) % p;
    requests.recv(at_bytes(a.recvbuf, a.rdispls[from]), a.recvcounts[from], a.recvtypes[from],
                  from, tag::alltoallw, comm);
  }
  for (int i = 1; i < p; ++i) {
    int to = (r + i) % p;
    if (in_place) {
      requests.send(saved[to].get(), a.recvcounts[to], a.recvtypes[to], to, tag::alltoallw, comm);
    } else {
      requests.send(at_bytes(a.sendbuf, a.sdispls[to]), a.sendcounts[to], a.sendtypes[to], to,
                    tag::alltoallw, comm);
    }
  }
  if (!in_place) {
    copy(at_bytes(a.sendbuf, a.sdispls[r]), a.sendcounts[r], a.sendtypes[r],
         at_bytes(a.recvbuf, a.rdispls[r]), a.recvcounts[r], a.recvtypes[r]);
  }
  requests.wait();
}

}  // namespace gridmpi::coll
