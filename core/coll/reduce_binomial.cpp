// Reduce along a binomial tree: in step k a rank whose bit k is set sends
// its partial result to the rank with that bit cleared and drops out.  A
// rank's partial result always covers a contiguous range of ranks and is
// combined as (lower range) op (higher range), so with the tree rooted at
// rank 0 the result is in rank order; for commutative ops the tree is rooted
// at the root instead (ranks renumbered), saving the final hop.
// Restrictions: none (non-commutative ops: the tree is rooted at 0 and rank 0
// sends the result to the root).
// Cost: ceil(log2 p) (alpha + n beta + n gamma) (+ alpha + n beta for a
// non-commutative op with root != 0).  Leaves send their data as it is; for
// a commutative op the partial result accumulates in place (the root's
// receive buffer) with the first child's data received into it, so that no
// process copies its own data.
#include <utility>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void reduce_binomial(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const bool commutative = is_commutative(a.op);
  const int tree_root = commutative ? a.root : 0;
  const int vr = (r - tree_root + p) % p;
  const void* mine = (r == a.root && a.sendbuf == MPI_IN_PLACE) ? a.recvbuf : a.sendbuf;
  // The children, nearest first, and the parent (-1 at the tree's root).
  int parent = -1, top = 1;
  while (top < p) {
    if (vr & top) {
      parent = (vr - top + tree_root) % p;
      break;
    }
    top <<= 1;
  }
  auto child = [&](int mask) { return vr + mask < p ? (vr + mask + tree_root) % p : -1; };
  if (top == 1 && parent >= 0) {
    // A leaf sends its own data as it is (no copy); a root that is a leaf
    // of the tree rooted at 0 (an ordered op) then gets the result.
    send(mine, a.count, a.type, parent, tag::reduce, comm);
    if (r == a.root) recv(a.recvbuf, a.count, a.type, tree_root, tag::reduce, comm);
    return;
  }
  if (commutative) {
    // Any order of the operands: the partial result accumulates in place,
    // in the receive buffer at the root, and the first child's data arrives
    // in the accumulator itself (mine is combined into it; no copy of mine).
    TypedBuffer own_acc, incoming;
    void* acc = r == a.root ? a.recvbuf : (own_acc = TypedBuffer(a.count, a.type)).get();
    bool have = false;  // acc holds mine combined with what came so far
    if (acc == mine) have = true;  // MPI_IN_PLACE at the root
    for (int mask = 1; mask < top; mask <<= 1) {
      const int from = child(mask);
      if (from < 0) continue;
      if (!have) {
        recv(acc, a.count, a.type, from, tag::reduce, comm);
        reduce_local(mine, acc, a.count, a.type, a.op);
        have = true;
        continue;
      }
      if (incoming.get() == nullptr && a.count > 0) incoming = TypedBuffer(a.count, a.type);
      recv(incoming.get(), a.count, a.type, from, tag::reduce, comm);
      reduce_local(incoming.get(), acc, a.count, a.type, a.op);
    }
    if (!have) copy(mine, acc, a.count, a.type);  // no child (a single process)
    if (parent >= 0) send(acc, a.count, a.type, parent, tag::reduce, comm);
    return;
  }
  TypedBuffer acc(a.count, a.type), incoming(a.count, a.type);
  copy(mine, acc.get(), a.count, a.type);
  for (int mask = 1; mask < top; mask <<= 1) {
    const int from = child(mask);
    if (from < 0) continue;
    recv(incoming.get(), a.count, a.type, from, tag::reduce, comm);
    // acc covers [vr, vr+mask), incoming [vr+mask, vr+2 mask): acc op incoming.
    reduce_local(acc.get(), incoming.get(), a.count, a.type, a.op);
    std::swap(acc, incoming);
  }
  if (parent >= 0) {
    send(acc.get(), a.count, a.type, parent, tag::reduce, comm);
  } else if (tree_root == a.root) {
    copy(acc.get(), a.recvbuf, a.count, a.type);
  } else {
    send(acc.get(), a.count, a.type, a.root, tag::reduce, comm);
  }
  if (r == a.root && r != tree_root) recv(a.recvbuf, a.count, a.type, tree_root, tag::reduce, comm);
}

}  // namespace gridmpi::coll
