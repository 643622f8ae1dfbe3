// Scan along the chain of ranks: rank r waits for the prefix a_0..a_{r-1}
// from rank r-1, computes prefix op a_r and passes it on.
// Restrictions: none (non-commutative ops included).
// Cost: (p-1) (alpha + n beta + n gamma) for the last rank.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void scan_linear(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  if (a.sendbuf != MPI_IN_PLACE) copy(a.sendbuf, a.recvbuf, a.count, a.type);
  if (r > 0) {
    TypedBuffer prefix(a.count, a.type);
    recv(prefix.get(), a.count, a.type, r - 1, tag::scan, comm);
    reduce_local(prefix.get(), a.recvbuf, a.count, a.type, a.op);
  }
  if (r < p - 1) send(a.recvbuf, a.count, a.type, r + 1, tag::scan, comm);
}

}  // namespace gridmpi::coll
