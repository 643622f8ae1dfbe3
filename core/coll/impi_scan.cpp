// IMPI Scan and Exscan: our two-tier design (the protocol page lists only
// the tag, 200; Exscan uses it too; see core/coll/README.md).
//
// When every client's members are consecutive comm ranks (WORLD, its dups,
// order-keeping splits): a native scan (exscan) inside each client; each
// client's total (its last member's inclusive prefix, sent to the master)
// goes into an exclusive scan among the masters in master order (tag 200):
// linear = a chain from master 0; tree = recursive doubling; each master
// broadcasts its client's prefix, which the members put in front of their
// local result.  Cost between clients: n-1 (linear) or ceil(log2 n) (tree)
// rounds of (alpha + m beta).
// Otherwise (clients interleaved in rank order) a chain along the comm
// ranks (tag 200), every rank passing its inclusive prefix on: p-1 rounds.
// Both keep the rank order, so non-commutative ops are exact.
#include <utility>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/impi.hpp"
#include "core/coll/impi_util.hpp"

namespace gridmpi::coll::impi {

namespace {

constexpr int total_tag = tag::scan;  // last member -> master, on the client-local communicator

void chain(const ReduceArgs& a, core::Comm& c, bool inclusive) {
  const int p = c.size, r = c.rank;
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  TypedBuffer through(a.count, a.type);  // x_0 op ... op x_r
  copy(mine, through.get(), a.count, a.type);
  if (r > 0) {
    TypedBuffer before(a.count, a.type);
    coll::recv(before.get(), a.count, a.type, r - 1, tag::scan, c);
    reduce_local(before.get(), through.get(), a.count, a.type, a.op);
    if (!inclusive) copy(before.get(), a.recvbuf, a.count, a.type);
  }
  if (r < p - 1) coll::send(through.get(), a.count, a.type, r + 1, tag::scan, c);
  if (inclusive) copy(through.get(), a.recvbuf, a.count, a.type);
}

void two_tier(const ReduceArgs& a, core::Comm& c, bool inclusive) {
  View v = view(c);
  core::Comm& lc = v.local;
  const int n = v.n, me = v.me, last = lc.size - 1;
  // The client's total, x of all its members in order, at the last member.
  TypedBuffer total(a.count, a.type);
  if (lc.rank == last) copy(a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf, total.get(), a.count, a.type);
  if (inclusive) {
    coll::scan(a.sendbuf, a.recvbuf, a.count, a.type, a.op, lc);
    if (lc.rank == last) copy(a.recvbuf, total.get(), a.count, a.type);
  } else {
    coll::exscan(a.sendbuf, a.recvbuf, a.count, a.type, a.op, lc);
    if (lc.rank == last && last > 0) reduce_local(a.recvbuf, total.get(), a.count, a.type, a.op);
  }
  if (last > 0) {
    if (lc.rank == last) coll::send(total.get(), a.count, a.type, 0, total_tag, lc);
    if (lc.rank == 0) coll::recv(total.get(), a.count, a.type, last, total_tag, lc);
  }
  // Masters: prefix = total_0 op ... op total_{me-1} (me > 0).
  TypedBuffer prefix(a.count, a.type);
  if (v.is_master()) {
    if (v.linear) {
      if (me > 0) coll::recv(prefix.get(), a.count, a.type, v.master(me - 1), tag::scan, c);
      if (me < n - 1) {
        if (me > 0) reduce_local(prefix.get(), total.get(), a.count, a.type, a.op);
        coll::send(total.get(), a.count, a.type, v.master(me + 1), tag::scan, c);
      }
    } else {
      // Recursive doubling: `total` grows to cover the aligned block of
      // masters around me; blocks from below also go into the prefix.
      bool have_prefix = false;
      TypedBuffer other(a.count, a.type);
      for (int d = 1; d < n; d <<= 1) {
        const int partner = me ^ d;
        if (partner >= n) continue;
        coll::sendrecv(total.get(), a.count, a.type, v.master(partner), tag::scan, other.get(), a.count, a.type,
                       v.master(partner), tag::scan, c);
        if (partner < me) {
          if (have_prefix) {
            reduce_local(other.get(), prefix.get(), a.count, a.type, a.op);
          } else {
            copy(other.get(), prefix.get(), a.count, a.type);
            have_prefix = true;
          }
          reduce_local(other.get(), total.get(), a.count, a.type, a.op);
        } else {
          // total = total op other: combine into `other`, then swap roles.
          reduce_local(total.get(), other.get(), a.count, a.type, a.op);
          std::swap(total, other);
        }
      }
    }
  }
  if (me == 0) return;
  coll::bcast(prefix.get(), a.count, a.type, 0, lc);
  if (!inclusive && lc.rank == 0) {
    copy(prefix.get(), a.recvbuf, a.count, a.type);
  } else {
    reduce_local(prefix.get(), a.recvbuf, a.count, a.type, a.op);
  }
}

void run(const ReduceArgs& a, core::Comm& c, bool inclusive) {
  if (c.clients->contiguous()) {
    two_tier(a, c, inclusive);
  } else {
    chain(a, c, inclusive);
  }
}

}  // namespace

void scan(const ReduceArgs& a, core::Comm& c) { run(a, c, true); }
void exscan(const ReduceArgs& a, core::Comm& c) { run(a, c, false); }

}  // namespace gridmpi::coll::impi
