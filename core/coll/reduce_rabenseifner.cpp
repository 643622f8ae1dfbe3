// Reduce by Rabenseifner's algorithm: a reduce-scatter by recursive halving
// (as allreduce_rabenseifner.cpp: in step k partners exchange half of what
// they still hold and reduce the half they keep; afterwards process i of the
// 2^m holds the reduced segment i) followed by a binomial gather of the
// segments to the root (partners of the halving in reverse: in step k the
// process with bit k set, relative to the gathering one, sends the aligned
// block of 2^k segments it holds and drops out).  Sizes that are not a power
// of two first fold the first 2*rem ranks pairwise (rem = p - 2^m); a root
// folded out gets the result from its partner.  No process copies its own
// data: the first step reads it where it is, and the root's receive buffer
// is the work buffer (unless MPI_IN_PLACE).
// Restrictions: commutative ops.
// Cost: 2 log2 p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma (+ alpha + n
// beta + n gamma to fold, + alpha + n beta when the root was folded out),
// against the binomial tree's log2 p (alpha + n beta + n gamma): the choice
// for long messages.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void reduce_rabenseifner(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const bool in_place = r == a.root && a.sendbuf == MPI_IN_PLACE;
  const void* mine = in_place ? a.recvbuf : a.sendbuf;
  const MPI_Aint extent = shape(a.type).extent;
  const int pof2 = floor_power_of_two(p), rem = p - pof2;
  // Ranks below 2*rem pair up: the even one hands its data to the odd one.
  auto newrank_of = [&](int rank) { return rank < 2 * rem ? (rank % 2 == 0 ? -1 : rank / 2) : rank - rem; };
  auto real = [&](int nr) { return nr < rem ? nr * 2 + 1 : nr + rem; };
  const int newrank = newrank_of(r);
  // The process that gathers the result: the root, or its partner when the
  // root was folded out.
  const int gatherer = newrank_of(a.root) >= 0 ? newrank_of(a.root) : a.root / 2;
  if (newrank < 0) {
    send(mine, a.count, a.type, r + 1, tag::reduce, comm);
    if (r == a.root) recv(a.recvbuf, a.count, a.type, r + 1, tag::reduce, comm);
    return;
  }
  // The work buffer: the root's receive buffer unless it holds the root's
  // own data (MPI_IN_PLACE).  Nobody copies its own data into it: the first
  // step reads from `src` and reduces into the half it keeps.
  TypedBuffer work, incoming;
  void* acc = newrank == gatherer && r == a.root && !in_place ? a.recvbuf
                                                               : (work = TypedBuffer(a.count, a.type)).get();
  const void* src = mine;
  if (r < 2 * rem) {
    recv(acc, a.count, a.type, r - 1, tag::reduce, comm);
    reduce_local(mine, acc, a.count, a.type, a.op);  // commutative: either order
    src = acc;
  }
  const Split seg{static_cast<std::size_t>(a.count), pof2};
  auto offset = [&](int i) { return static_cast<MPI_Aint>(seg.offset(i)); };
  auto at = [&](int i) { return element(acc, offset(i), extent); };
  auto span = [&](int first, int last) { return static_cast<int>(seg.offset(last) - seg.offset(first)); };
  int lo = 0, hi = pof2;
  for (int mask = pof2 / 2; mask > 0; mask /= 2) {
    const int newpartner = newrank ^ mask, partner = real(newpartner);
    const int mid = lo + mask;
    const bool lower = newrank < newpartner;
    const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
    const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
    if (src != acc) {
      // First step from the caller's data: the partner's half of what I
      // keep arrives in place and takes mine in.
      sendrecv(element(src, offset(give_lo), extent), span(give_lo, give_hi), a.type, partner, tag::reduce,
               at(keep_lo), span(keep_lo, keep_hi), a.type, partner, tag::reduce, comm);
      reduce_local(element(src, offset(keep_lo), extent), at(keep_lo), span(keep_lo, keep_hi), a.type, a.op);
      src = acc;
    } else {
      if (incoming.get() == nullptr && a.count > 0) incoming = TypedBuffer(a.count, a.type);
      sendrecv(at(give_lo), span(give_lo, give_hi), a.type, partner, tag::reduce, incoming.get(),
               span(keep_lo, keep_hi), a.type, partner, tag::reduce, comm);
      reduce_local(incoming.get(), at(keep_lo), span(keep_lo, keep_hi), a.type, a.op);
    }
    lo = keep_lo;
    hi = keep_hi;
  }
  if (src != acc) copy(src, acc, a.count, a.type);  // a single process
  // Gather: relative to the gatherer (XOR keeps the halving's pairs), a
  // process holds the aligned block of `mask` segments around its own.
  const int vr = newrank ^ gatherer;
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int newpartner = newrank ^ mask, partner = real(newpartner);
    if (vr & mask) {
      const int first = newrank & ~(mask - 1);
      send(at(first), span(first, first + mask), a.type, partner, tag::reduce, comm);
      return;
    }
    const int first = newpartner & ~(mask - 1);
    recv(at(first), span(first, first + mask), a.type, partner, tag::reduce, comm);
  }
  // The gatherer: the result is in acc.
  if (r == a.root) {
    if (acc != a.recvbuf) copy(acc, a.recvbuf, a.count, a.type);
  } else {
    send(acc, a.count, a.type, a.root, tag::reduce, comm);
  }
}

}  // namespace gridmpi::coll
