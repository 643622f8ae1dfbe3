// Allreduce by recursive doubling: in step k ranks that differ in bit k
// exchange their partial results and both combine them as (lower ranks) op
// (higher ranks), so every rank computes the same value in rank order.  For
// a size that is not a power of two, the first 2*rem ranks (rem = p - 2^m)
// first fold pairwise (even into odd), and the odd ones hand the result back
// at the end.
// Restrictions: none (non-commutative ops included).
// Cost: (log2 p + 2 [p not a power of two]) (alpha + n beta + n gamma).
// The choice for short messages.
#include <utility>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allreduce_recursive_doubling(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const bool commutative = is_commutative(a.op);
  if (a.sendbuf != MPI_IN_PLACE) copy(a.sendbuf, a.recvbuf, a.count, a.type);
  TypedBuffer incoming(a.count, a.type);
  const int pof2 = floor_power_of_two(p), rem = p - pof2;
  int newrank;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      send(a.recvbuf, a.count, a.type, r + 1, tag::allreduce, comm);
      newrank = -1;
    } else {
      recv(incoming.get(), a.count, a.type, r - 1, tag::allreduce, comm);
      reduce_local(incoming.get(), a.recvbuf, a.count, a.type, a.op);
      newrank = r / 2;
    }
  } else {
    newrank = r - rem;
  }
  if (newrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      int newpartner = newrank ^ mask;
      int partner = newpartner < rem ? newpartner * 2 + 1 : newpartner + rem;
      sendrecv(a.recvbuf, a.count, a.type, partner, tag::allreduce, incoming.get(), a.count,
               a.type, partner, tag::allreduce, comm);
      if (commutative || partner < r) {
        reduce_local(incoming.get(), a.recvbuf, a.count, a.type, a.op);
      } else {
        reduce_local(a.recvbuf, incoming.get(), a.count, a.type, a.op);
        copy(incoming.get(), a.recvbuf, a.count, a.type);
      }
    }
  }
  if (r < 2 * rem) {
    if (r % 2 == 1) {
      send(a.recvbuf, a.count, a.type, r - 1, tag::allreduce, comm);
    } else {
      recv(a.recvbuf, a.count, a.type, r + 1, tag::allreduce, comm);
    }
  }
}

}  // namespace gridmpi::coll
