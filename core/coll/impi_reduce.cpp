// IMPI Reduce and Allreduce (docs/impi-protocol.md 10.5; LAM's ireduce.c,
// with the intent of its non-commutative branch).
//
// Commutative op: local reduce to the root (root's client) or to the
// master (other clients), then the partial results meet at the root
// (tag 190): linear = the root receives one from each other master in
// master order and combines each; tree = binomial tree of master numbers
// relative to the root's client (bit i set: send to v - 2^i and stop, else
// receive from v + 2^i).  Cost: one local reduce + (n-1) (alpha + m beta +
// m gamma) at the root (linear) or ceil(log2 n) of them (tree).
// Non-commutative op: no local phase; every other rank sends its buffer to
// the root, which combines x[0] op (x[1] op (... op x[p-1])).  Cost:
// (p-1) (alpha + m beta + m gamma) at the root, p-1 buffers of memory.
//
// Allreduce = Reduce to rank 0 + Bcast from rank 0 (as LAM).
//
// LAM/MPI 7.1.4's IMPI Reduce sends its global messages on the
// communicator's point-to-point context (its ssi_coll_impi_reduce.c does
// not switch to the IMPI collective context as its Barrier and Bcast do),
// so every message of ours to or from a rank of a LAM client
// (core::JobLayout::lam_client) goes there too; between gridmpi clients
// they stay on the collective context, where no user message can meet them.
#include <cstdint>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/impi.hpp"
#include "core/coll/impi_util.hpp"
#include "core/job_layout.hpp"

namespace gridmpi::coll::impi {

namespace {

// The context of a Reduce message between this process and comm rank `peer`:
// LAM's when either end is a LAM rank (this one only in a test's fake layout).
std::uint32_t context_with(int peer, core::Comm& c) {
  const core::JobLayout& layout = core::job_layout();
  const bool lam = layout.lam(c.peer_world_rank(peer)) || layout.lam(c.peer_world_rank(c.rank));
  return lam ? c.context_id : c.coll_context();
}
void send(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& c) {
  coll::send_in(context_with(dest, c), buf, count, type, dest, tag, c);
}
void recv(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& c) {
  coll::recv_in(context_with(source, c), buf, count, type, source, tag, c);
}

void reduce_in_rank_order(const ReduceArgs& a, core::Comm& c) {
  if (c.rank != a.root) {
    send(a.sendbuf, a.count, a.type, a.root, tag::reduce, c);
    return;
  }
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  std::vector<TypedBuffer> in(static_cast<std::size_t>(c.size));
  Requests receives;
  for (int r = 0; r < c.size; ++r) {
    if (r == a.root) continue;
    in[static_cast<std::size_t>(r)] = TypedBuffer(a.count, a.type);
    receives.recv_in(context_with(r, c), in[static_cast<std::size_t>(r)].get(), a.count, a.type, r, tag::reduce, c);
  }
  receives.wait();
  auto x = [&](int r) -> const void* { return r == a.root ? mine : in[static_cast<std::size_t>(r)].get(); };
  TypedBuffer result(a.count, a.type);
  copy(x(c.size - 1), result.get(), a.count, a.type);
  for (int r = c.size - 2; r >= 0; --r) reduce_local(x(r), result.get(), a.count, a.type, a.op);
  copy(result.get(), a.recvbuf, a.count, a.type);
}

}  // namespace

void reduce(const ReduceArgs& a, core::Comm& c) {
  if (!is_commutative(a.op)) return reduce_in_rank_order(a, c);
  View v = view(c);
  const int n = v.n, root_client = v.client_of(a.root);
  const bool root = c.rank == a.root;
  const bool participant = root || (v.is_master() && v.me != root_client);
  // The partial result of a participant: the root's recvbuf, a master's scratch.
  TypedBuffer scratch;
  void* partial = a.recvbuf;
  if (v.me == root_client) {
    coll::reduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, v.local_rank(a.root), v.local);
  } else {
    if (participant) {
      scratch = TypedBuffer(a.count, a.type);
      partial = scratch.get();
    }
    coll::reduce(a.sendbuf, participant ? partial : nullptr, a.count, a.type, a.op, 0, v.local);
  }
  if (!participant) return;
  TypedBuffer incoming(a.count, a.type);
  if (v.linear) {
    if (!root) {
      send(partial, a.count, a.type, a.root, tag::reduce, c);
      return;
    }
    for (int m = 0; m < n; ++m) {
      if (m == root_client) continue;
      recv(incoming.get(), a.count, a.type, v.master(m), tag::reduce, c);
      reduce_local(incoming.get(), partial, a.count, a.type, a.op);
    }
    return;
  }
  const int vr = (v.me - root_client + n) % n, dim = tree_dim(n);
  for (int i = 0; i < dim; ++i) {
    const int bit = 1 << i;
    if (vr & bit) {
      send(partial, a.count, a.type, v.participant((vr - bit + root_client) % n, a.root), tag::reduce, c);
      return;
    }
    if (vr + bit < n) {
      recv(incoming.get(), a.count, a.type, v.master((vr + bit + root_client) % n), tag::reduce, c);
      reduce_local(incoming.get(), partial, a.count, a.type, a.op);
    }
  }
}

void allreduce(const ReduceArgs& a, core::Comm& c) {
  ReduceArgs to_zero = a;
  to_zero.root = 0;
  // Off the root, reduce reads sendbuf and never writes recvbuf.
  if (a.sendbuf == MPI_IN_PLACE && c.rank != 0) to_zero.sendbuf = a.recvbuf;
  reduce(to_zero, c);
  coll::bcast(a.recvbuf, a.count, a.type, 0, c);
}

}  // namespace gridmpi::coll::impi
