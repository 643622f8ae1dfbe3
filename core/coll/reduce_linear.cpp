// Reduce by the root receiving every contribution in turn and combining them
// in rank order, from the highest rank down (acc = a_i op acc), so the
// result is a_0 op a_1 op ... op a_{p-1} for any op.
// Restrictions: none (non-commutative ops included).
// Cost: (p-1) (alpha + n beta + n gamma) at the root, serialised.
#include <utility>

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
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  TypedBuffer acc(a.count, a.type), incoming(a.count, a.type);
  if (p - 1 == root) {
    copy(mine, acc.get(), a.count, a.type);
  } else {
    recv(acc.get(), a.count, a.type, p - 1, tag::reduce, comm);
  }
  for (int i = p - 2; i >= 0; --i) {
    const void* left = mine;
    if (i != root) {
      recv(incoming.get(), a.count, a.type, i, tag::reduce, comm);
      left = incoming.get();
    }
    reduce_local(left, acc.get(), a.count, a.type, a.op);
  }
  copy(acc.get(), a.recvbuf, a.count, a.type);
}

}  // namespace gridmpi::coll
