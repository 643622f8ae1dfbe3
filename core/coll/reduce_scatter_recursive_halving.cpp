// Reduce_scatter by recursive halving: in step k partners exchange the half
// of the vector whose result belongs to the other's side and reduce the half
// they keep, until every rank holds the reduced piece it owns.  Sizes that
// are not a power of two first fold the first 2*rem ranks pairwise (rem =
// p - 2^m): the odd one of a pair then works for both and hands the even one
// its piece at the end.
// Restrictions: commutative ops.
// Cost: log2 p alpha + (p-1)/p n beta + (p-1)/p n gamma (+ alpha + n beta +
// n gamma when p is not a power of two), n = the whole vector.
#include <climits>
#include <vector>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "base/error.hpp"

namespace gridmpi::coll {

void reduce_scatter_recursive_halving(const ReduceScatterArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  std::vector<long long> displs(p + 1, 0);
  for (int i = 0; i < p; ++i) displs[i + 1] = displs[i] + a.recvcounts[i];
  require(displs[p] <= INT_MAX, MPI_ERR_COUNT,
          "reduce_scatter: the counts add up to more than INT_MAX");
  const int total = static_cast<int>(displs[p]);
  const MPI_Aint extent = shape(a.type).extent;
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  TypedBuffer work(total, a.type), incoming(total, a.type);
  copy(mine, work.get(), total, a.type);
  auto at = [&](long long index) { return element(work.get(), index, extent); };

  const int pof2 = floor_power_of_two(p), rem = p - pof2;
  int newrank;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      send(work.get(), total, a.type, r + 1, tag::reduce_scatter, comm);
      newrank = -1;
    } else {
      recv(incoming.get(), total, a.type, r - 1, tag::reduce_scatter, comm);
      reduce_local(incoming.get(), work.get(), total, a.type, a.op);
      newrank = r / 2;
    }
  } else {
    newrank = r - rem;
  }
  if (newrank >= 0) {
    // New rank j owns the pieces of old ranks 2j, 2j+1 (j < rem) or j+rem.
    auto start = [&](int j) { return j == pof2 ? displs[p] : displs[j < rem ? 2 * j : j + rem]; };
    auto real = [&](int j) { return j < rem ? 2 * j + 1 : j + rem; };
    int lo = 0, hi = pof2;
    for (int mask = pof2 / 2; mask > 0; mask /= 2) {
      int newpartner = newrank ^ mask, partner = real(newpartner);
      int mid = lo + mask;
      bool lower = newrank < newpartner;
      int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
      int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
      int keep = static_cast<int>(start(keep_hi) - start(keep_lo));
      int give = static_cast<int>(start(give_hi) - start(give_lo));
      sendrecv(at(start(give_lo)), give, a.type, partner, tag::reduce_scatter, incoming.get(),
               keep, a.type, partner, tag::reduce_scatter, comm);
      reduce_local(incoming.get(), at(start(keep_lo)), keep, a.type, a.op);
      lo = keep_lo;
      hi = keep_hi;
    }
  }
  if (r < 2 * rem && r % 2 == 0) {
    recv(a.recvbuf, a.recvcounts[r], a.type, r + 1, tag::reduce_scatter, comm);
    return;
  }
  if (r < 2 * rem) {
    send(at(displs[r - 1]), a.recvcounts[r - 1], a.type, r - 1, tag::reduce_scatter, comm);
  }
  copy(at(displs[r]), a.recvbuf, a.recvcounts[r], a.type);
}

}  // namespace gridmpi::coll
