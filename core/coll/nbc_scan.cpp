// MPI_Iscan and Iexscan: recursive doubling.  In step k ranks that differ in
// bit k exchange the reduction of their aligned block of 2^k ranks; the
// higher one folds the lower block into its result, both extend their block
// value in rank order (lower op higher).  For Exscan the result collects only
// the lower blocks (the first one copied), and rank 0's recvbuf is never
// written.  Owner: core/coll/.
// Restrictions: none (non-commutative ops included; any size).
// Cost: ceil(log2 p) (alpha + n beta + 2 n gamma).
#include <utility>

#include "core/coll/coll.hpp"
#include "core/coll/nbc_intra.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll::intra {

namespace {

nb::Task prefix(ReduceArgs a, bool inclusive, core::Comm& comm, int tag) {
  const int p = comm.size, r = comm.rank;
  const bool commutative = is_commutative(a.op);
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  TypedBuffer block(a.count, a.type), incoming(a.count, a.type);
  copy(mine, block.get(), a.count, a.type);
  if (inclusive && a.sendbuf != MPI_IN_PLACE) copy(a.sendbuf, a.recvbuf, a.count, a.type);
  bool have_result = inclusive;
  for (int mask = 1; mask < p; mask <<= 1) {
    const int partner = r ^ mask;
    if (partner >= p) continue;
    auto received = irecv(incoming.get(), a.count, a.type, partner, tag, comm);
    auto sent = isend(block.get(), a.count, a.type, partner, tag, comm);
    co_await nb::wait(received, sent);
    if (partner < r) {
      if (have_result) {
        reduce_local(incoming.get(), a.recvbuf, a.count, a.type, a.op);
      } else {
        copy(incoming.get(), a.recvbuf, a.count, a.type);
        have_result = true;
      }
      reduce_local(incoming.get(), block.get(), a.count, a.type, a.op);
    } else if (commutative) {
      reduce_local(incoming.get(), block.get(), a.count, a.type, a.op);
    } else {
      reduce_local(block.get(), incoming.get(), a.count, a.type, a.op);  // mine op theirs
      std::swap(block, incoming);
    }
  }
}

}  // namespace

nb::Task scan(ReduceArgs a, core::Comm& comm, int tag) { return prefix(a, true, comm, tag); }
nb::Task exscan(ReduceArgs a, core::Comm& comm, int tag) { return prefix(a, false, comm, tag); }

}  // namespace gridmpi::coll::intra
