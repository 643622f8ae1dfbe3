// Reduce by the root receiving every contribution in turn and combining them
// in rank order, from the highest rank down (acc = a_i op acc), so the
// result is a_0 op a_1 op ... op a_{p-1} for any op.
// Restrictions: none (non-commutative ops included).
// Cost: (p-1) (alpha + n beta + n gamma) at the root, serialised.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void reduce_linear(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, root = a.root;
  if (comm.rank != root) {
    send(a.sendbuf, a.count, a.type, root, tag::reduce, comm);
    return;
  }
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  const void* mine = in_place ? a.recvbuf : a.sendbuf;
  // The result accumulates in the receive buffer itself, unless that holds
  // the root's own contribution (MPI_IN_PLACE).
  TypedBuffer own_acc = in_place ? TypedBuffer(a.count, a.type) : TypedBuffer();
  TypedBuffer incoming(a.count, a.type);
  void* acc = in_place ? own_acc.get() : a.recvbuf;
  if (p - 1 == root) {
    copy(mine, acc, a.count, a.type);
  } else {
    recv(acc, a.count, a.type, p - 1, tag::reduce, comm);
  }
  for (int i = p - 2; i >= 0; --i) {
    const void* left = mine;
    if (i != root) {
      recv(incoming.get(), a.count, a.type, i, tag::reduce, comm);
      left = incoming.get();
    }
    reduce_local(left, acc, a.count, a.type, a.op);
  }
  if (in_place) copy(acc, a.recvbuf, a.count, a.type);
}

}  // namespace gridmpi::coll
