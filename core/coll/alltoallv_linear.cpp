// Alltoallv with every receive and every send posted at once.
// Restrictions: none.  With MPI_IN_PLACE each outgoing block is first copied
// out of the receive buffer.
// Cost: (p-1) alpha + max(sum sent, sum received) beta per rank.
#include <vector>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void alltoallv_linear(const AlltoallvArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint rextent = shape(a.recvtype).extent;
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  std::vector<TypedBuffer> saved;
  if (in_place) {
    saved.resize(p);
    for (int i = 0; i < p; ++i) {
      if (i == r) continue;
      saved[i] = TypedBuffer(a.recvcounts[i], a.recvtype);
      copy(element(a.recvbuf, a.rdispls[i], rextent), saved[i].get(), a.recvcounts[i],
           a.recvtype);
    }
  }
  const MPI_Aint sextent = in_place ? 0 : shape(a.sendtype).extent;
  Requests requests;
  for (int i = 1; i < p; ++i) {
    int from = (r - i + p) % p;
    requests.recv(element(a.recvbuf, a.rdispls[from], rextent), a.recvcounts[from], a.recvtype,
                  from, tag::alltoallv, comm);
  }
  for (int i = 1; i < p; ++i) {
    int to = (r + i) % p;
    if (in_place) {
      requests.send(saved[to].get(), a.recvcounts[to], a.recvtype, to, tag::alltoallv, comm);
    } else {
      requests.send(element(a.sendbuf, a.sdispls[to], sextent), a.sendcounts[to], a.sendtype,
                    to, tag::alltoallv, comm);
    }
  }
  if (!in_place) {
    copy(element(a.sendbuf, a.sdispls[r], sextent), a.sendcounts[r], a.sendtype,
         element(a.recvbuf, a.rdispls[r], rextent), a.recvcounts[r], a.recvtype);
  }
  requests.wait();
}

}  // namespace gridmpi::coll
