// Allreduce by Rabenseifner's algorithm: a reduce-scatter by recursive
// halving (in step k partners exchange half of what they still hold and
// reduce the half they keep) followed by an allgather by recursive doubling.
// Sizes that are not a power of two first fold the first 2*rem ranks
// pairwise (rem = p - 2^m) and unfold at the end.
// Restrictions: commutative ops.
// Cost: 2 log2 p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma (+ 2 (alpha +
// n beta) + n gamma when p is not a power of two).  The choice for long
// messages.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allreduce_rabenseifner(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  if (a.sendbuf != MPI_IN_PLACE) copy(a.sendbuf, a.recvbuf, a.count, a.type);
  const MPI_Aint extent = shape(a.type).extent;
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
    const Split seg{static_cast<std::size_t>(a.count), pof2};
    auto at = [&](int i) {
      return element(a.recvbuf, static_cast<MPI_Aint>(seg.offset(i)), extent);
    };
    auto span = [&](int first, int last) {
      return static_cast<int>(seg.offset(last) - seg.offset(first));
    };
    auto real = [&](int nr) { return nr < rem ? nr * 2 + 1 : nr + rem; };
    int lo = 0, hi = pof2;  // segments I am still responsible for
    for (int mask = pof2 / 2; mask > 0; mask /= 2) {
      int newpartner = newrank ^ mask, partner = real(newpartner);
      int mid = lo + mask;
      int keep_lo = newrank < newpartner ? lo : mid, keep_hi = newrank < newpartner ? mid : hi;
      int give_lo = newrank < newpartner ? mid : lo, give_hi = newrank < newpartner ? hi : mid;
      sendrecv(at(give_lo), span(give_lo, give_hi), a.type, partner, tag::allreduce,
               incoming.get(), span(keep_lo, keep_hi), a.type, partner, tag::allreduce, comm);
      reduce_local(incoming.get(), at(keep_lo), span(keep_lo, keep_hi), a.type, a.op);
      lo = keep_lo;
      hi = keep_hi;
    }
    for (int mask = 1; mask < pof2; mask *= 2) {
      int newpartner = newrank ^ mask, partner = real(newpartner);
      int mine = newrank & ~(mask - 1), theirs = newpartner & ~(mask - 1);
      sendrecv(at(mine), span(mine, mine + mask), a.type, partner, tag::allreduce, at(theirs),
               span(theirs, theirs + mask), a.type, partner, tag::allreduce, comm);
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
