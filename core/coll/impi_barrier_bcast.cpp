// IMPI Barrier and Bcast, as docs/impi-protocol.md 10.3 and 10.4 describe
// them (LAM's ssi_coll_impi_barrier/bcast), message for message.
//
// Barrier: local barrier; masters exchange zero-byte MPI_BYTE messages
// (tag 110): linear = every master to master 0, which answers each in
// order; tree = fan-in to master 0 along the binomial tree of master
// numbers (children v | 2^i above v's top bit), then fan-out; local
// barrier again.  Cost: 2 local barriers + 2 (n-1) alpha at master 0
// (linear) or 2 ceil(log2 n) alpha (tree) between clients.
//
// Bcast: global phase first among {root} and the masters of the other
// clients (tag 120): linear = the root sends the whole buffer to each;
// tree = binomial tree of master numbers relative to the root's client;
// then a local broadcast in each client from the root or the master.
// Cost: (n-1) (alpha + m beta) at the root (linear) or ceil(log2 n)
// (alpha + m beta) (tree) between clients, + one local broadcast.
#include "core/coll/coll.hpp"
#include "core/coll/impi.hpp"
#include "core/coll/impi_util.hpp"

namespace gridmpi::coll::impi {

void barrier(const BarrierArgs&, core::Comm& c) {
  View v = view(c);
  coll::barrier(v.local);
  if (v.is_master()) {
    auto to = [&](int m) { coll::send(nullptr, 0, MPI_BYTE, v.master(m), tag::barrier, c); };
    auto from = [&](int m) { coll::recv(nullptr, 0, MPI_BYTE, v.master(m), tag::barrier, c); };
    const int n = v.n, me = v.me;
    if (v.linear) {
      if (me == 0) {
        for (int m = 1; m < n; ++m) from(m);
        for (int m = 1; m < n; ++m) to(m);
      } else {
        to(0);
        from(0);
      }
    } else {
      const int dim = tree_dim(n), top = hibit(me);
      for (int i = dim - 1; i > top; --i)
        if ((me | (1 << i)) < n) from(me | (1 << i));
      if (me != 0) {
        const int parent = me & ~(1 << top);
        to(parent);
        from(parent);
      }
      for (int i = top + 1; i < dim; ++i)
        if ((me | (1 << i)) < n) to(me | (1 << i));
    }
  }
  coll::barrier(v.local);
}

void bcast(const BcastArgs& a, core::Comm& c) {
  View v = view(c);
  const int n = v.n, root_client = v.client_of(a.root);
  const bool root = c.rank == a.root;
  if (root || (v.is_master() && v.me != root_client)) {
    if (v.linear) {
      if (root) {
        Requests sends;
        for (int m = 0; m < n; ++m)
          if (m != root_client) sends.send(a.buffer, a.count, a.type, v.master(m), tag::bcast, c);
        sends.wait();
      } else {
        coll::recv(a.buffer, a.count, a.type, a.root, tag::bcast, c);
      }
    } else {
      // Virtual numbers relative to the root's client; 0 is the root.
      const int vr = (v.me - root_client + n) % n, dim = tree_dim(n), top = hibit(vr);
      auto real = [&](int virtual_number) { return v.participant((virtual_number + root_client) % n, a.root); };
      if (vr != 0) coll::recv(a.buffer, a.count, a.type, real(vr & ~(1 << top)), tag::bcast, c);
      Requests sends;
      for (int i = top + 1; i < dim; ++i)
        if ((vr | (1 << i)) < n) sends.send(a.buffer, a.count, a.type, real(vr | (1 << i)), tag::bcast, c);
      sends.wait();
    }
  }
  coll::bcast(a.buffer, a.count, a.type, v.me == root_client ? v.local_rank(a.root) : 0, v.local);
}

}  // namespace gridmpi::coll::impi
