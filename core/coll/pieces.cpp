#include "core/coll/pieces.hpp"

#include <algorithm>

#include "core/coll/coll.hpp"

namespace gridmpi::coll {

namespace {
int relative(int rank, int root, int p) { return (rank - root + p) % p; }
int absolute(int relative_rank, int root, int p) { return (relative_rank + root) % p; }
// Bytes of pieces [first, last).
std::size_t range_bytes(const Split& split, int first, int last) {
  return split.offset(last) - split.offset(first);
}
}  // namespace

void binomial_scatter_bytes(std::byte* data, const Split& split, int root, int tag,
                            core::Comm& comm) {
  const int p = comm.size;
  const int vr = relative(comm.rank, root, p);
  int mask = 1;
  while (mask < p) {
    if (vr & mask) {
      // My subtree is relative ranks [vr, vr + mask).
      int last = std::min(vr + mask, p);
      std::size_t n = range_bytes(split, vr, last);
      if (n > 0) {
        recv(data + split.offset(vr), byte_count(n), MPI_BYTE, absolute(vr - mask, root, p), tag,
             comm);
      }
      break;
    }
    mask <<= 1;
  }
  Requests children;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    int child = vr + mask;
    if (child >= p) continue;
    std::size_t n = range_bytes(split, child, std::min(child + mask, p));
    if (n > 0) {
      children.send(data + split.offset(child), byte_count(n), MPI_BYTE, absolute(child, root, p),
                    tag, comm);
    }
  }
  children.wait();
}

void ring_allgather_bytes(std::byte* data, const Split& split, int root, int tag,
                          core::Comm& comm, std::byte* sink) {
  const int p = comm.size;
  const int vr = relative(comm.rank, root, p);
  const int right = absolute((vr + 1) % p, root, p), left = absolute((vr - 1 + p) % p, root, p);
  for (int step = 0; step < p - 1; ++step) {
    int out = (vr - step + p) % p, in = (vr - step - 1 + p) % p;
    std::byte* target = sink != nullptr ? sink : data + split.offset(in);
    sendrecv(data + split.offset(out), byte_count(split.count(out)), MPI_BYTE, right, tag, target,
             byte_count(split.count(in)), MPI_BYTE, left, tag, comm);
  }
}

void recursive_doubling_allgather_bytes(std::byte* data, const Split& split, int root, int tag,
                                        core::Comm& comm, std::byte* sink) {
  const int p = comm.size;
  const int vr = relative(comm.rank, root, p);
  for (int mask = 1; mask < p; mask <<= 1) {
    int partner = vr ^ mask;
    int mine = vr & ~(mask - 1), theirs = partner & ~(mask - 1);
    std::byte* target = sink != nullptr ? sink : data + split.offset(theirs);
    sendrecv(data + split.offset(mine), byte_count(range_bytes(split, mine, mine + mask)),
             MPI_BYTE, absolute(partner, root, p), tag, target,
             byte_count(range_bytes(split, theirs, theirs + mask)), MPI_BYTE,
             absolute(partner, root, p), tag, comm);
  }
}

}  // namespace gridmpi::coll
