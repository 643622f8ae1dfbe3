// IMPI Scatter, Scatterv, Reduce_scatter, Reduce_scatter_block: our
// two-tier designs (the protocol page lists only the tags 150 and 160; see
// core/coll/README.md).
//
// Scatter: the root's client is served natively from the root's sendbuf;
// for every other client the root packs the members' blocks in external32
// and sends the client's stream (MPI_PACKED, tag 150) to its master:
// linear = straight from the root; tree = binomial tree of master numbers
// relative to the root's client, a master passing on the streams of its
// subtree (contiguous master numbers).  The master scatters the blocks in
// its client and each member unpacks its own.  Cost between clients: n-1
// messages from the root (linear) or ceil(log2 n) rounds (tree).
// Scatterv: the same, linear only (intermediate masters would not know the
// other clients' counts); each master first gathers its members' sizes.
// Reduce_scatter(_block) = Reduce to rank 0 (IMPI, tag 190) + Scatterv
// (Scatter) from rank 0.
#include <climits>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/impi.hpp"
#include "core/coll/impi_util.hpp"
#include "base/error.hpp"

namespace gridmpi::coll::impi {

namespace {

// Native scatter in the root's client from the root's sendbuf, block i at
// element displs[i] (comm rank order).
void scatter_root_client(const View& v, const void* sendbuf, const std::vector<int>& counts,
                         const std::vector<int>& displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root) {
  std::vector<int> local_counts, local_displs;
  if (v.comm.rank == root) {
    for (int r : v.members(v.me)) {
      local_counts.push_back(counts[static_cast<std::size_t>(r)]);
      local_displs.push_back(displs[static_cast<std::size_t>(r)]);
    }
  }
  coll::scatterv(sendbuf, local_counts.data(), local_displs.data(), sendtype, recvbuf, recvcount, recvtype,
                 v.local_rank(root), v.local);
}

}  // namespace

void scatter(const GatherArgs& a, core::Comm& c) {
  View v = view(c);
  const int n = v.n, root_client = v.client_of(a.root);
  const bool root = c.rank == a.root;
  const std::size_t block = root ? ext_size(a.sendcount, a.sendtype) : ext_size(a.recvcount, a.recvtype);
  auto client_bytes = [&](int m) { return block * v.members(m).size(); };
  auto real = [&](int vr) { return (vr + root_client) % n; };
  auto range_bytes = [&](int from, int to) {  // virtual numbers [from, to)
    std::size_t total = 0;
    for (int w = from; w < to; ++w) total += client_bytes(real(w));
    return total;
  };
  const int vr = (v.me - root_client + n) % n;
  // Global phase: the streams of clients vr, vr+1, ... (the root: 1, 2, ...).
  std::vector<std::byte> stream;
  if (root) {
    stream.resize(range_bytes(1, n));
    std::size_t offset = 0;
    for (int w = 1; w < n; ++w) {
      for (int r : v.members(real(w))) {
        pack_ext(element_of(a.sendbuf, static_cast<MPI_Aint>(r) * a.sendcount, a.sendtype), a.sendcount,
                 a.sendtype, stream.data() + offset);
        offset += block;
      }
    }
  }
  if (root || (v.is_master() && v.me != root_client)) {
    if (v.linear) {
      if (root) {
        Requests sends;
        std::size_t offset = 0;
        for (int w = 1; w < n; ++w) {
          sends.send(stream.data() + offset, byte_count(client_bytes(real(w))), MPI_PACKED, v.master(real(w)),
                     tag::scatter, c);
          offset += client_bytes(real(w));
        }
        sends.wait();
      } else {
        stream.resize(client_bytes(v.me));
        recv_bytes(stream.data(), stream.size(), a.root, tag::scatter, c);
      }
    } else {
      const int dim = tree_dim(n);
      // The subtree of vr is [vr, vr + lowest bit of vr); the root's is everything.
      int span = vr == 0 ? (1 << dim) : (vr & -vr);
      if (vr != 0) {
        stream.resize(range_bytes(vr, std::min(vr + span, n)));
        recv_bytes(stream.data(), stream.size(), v.participant(real(vr - span), a.root), tag::scatter, c);
      }
      Requests sends;
      for (int bit = span >> 1; bit >= 1; bit >>= 1) {
        if (vr + bit >= n) continue;
        // The part for [vr + bit, vr + 2 bit) starts after [vr, vr + bit); the
        // root's stream has no part for itself (virtual 0).
        std::size_t offset = range_bytes(vr == 0 ? 1 : vr, vr + bit);
        sends.send(stream.data() + offset, byte_count(range_bytes(vr + bit, std::min(vr + 2 * bit, n))),
                   MPI_PACKED, v.master(real(vr + bit)), tag::scatter, c);
      }
      sends.wait();
    }
  }
  if (v.me == root_client) {
    const std::vector<int>& members = v.members(v.me);
    const int first = members.front();
    if (members.back() - first + 1 == static_cast<int>(members.size())) {
      coll::scatter(root ? element_of(a.sendbuf, static_cast<MPI_Aint>(first) * a.sendcount, a.sendtype) : nullptr,
                    a.sendcount, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, v.local_rank(a.root), v.local);
    } else {
      std::vector<int> counts, displs;
      if (root) {
        counts.assign(static_cast<std::size_t>(c.size), a.sendcount);
        for (int r = 0; r < c.size; ++r) displs.push_back(times(r, a.sendcount));
      }
      scatter_root_client(v, a.sendbuf, counts, displs, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, a.root);
    }
    return;
  }
  // Another client: the master scatters the client's blocks, each member unpacks its own.
  std::vector<std::byte> mine(block);
  coll::scatter(stream.data(), byte_count(block), MPI_BYTE, mine.data(), byte_count(block), MPI_BYTE, 0, v.local);
  unpack_ext(mine.data(), a.recvcount, a.recvtype, a.recvbuf);
}

void scatterv(const ScattervArgs& a, core::Comm& c) {
  View v = view(c);
  const int n = v.n, root_client = v.client_of(a.root);
  const bool root = c.rank == a.root;
  if (root) {
    // Every other client's stream to its master, then the root's own client.
    std::vector<std::vector<std::byte>> streams(static_cast<std::size_t>(n));
    Requests sends;
    for (int m = 0; m < n; ++m) {
      if (m == root_client) continue;
      std::vector<std::byte>& s = streams[static_cast<std::size_t>(m)];
      std::size_t total = 0;
      for (int r : v.members(m)) total += ext_size(a.sendcounts[r], a.sendtype);
      s.resize(total);
      std::size_t offset = 0;
      for (int r : v.members(m)) {
        pack_ext(element_of(a.sendbuf, a.displs[r], a.sendtype), a.sendcounts[r], a.sendtype, s.data() + offset);
        offset += ext_size(a.sendcounts[r], a.sendtype);
      }
      sends.send(s.data(), byte_count(total), MPI_PACKED, v.master(m), tag::scatterv, c);
    }
    scatter_root_client(v, a.sendbuf, std::vector<int>(a.sendcounts, a.sendcounts + c.size),
                        std::vector<int>(a.displs, a.displs + c.size), a.sendtype, a.recvbuf, a.recvcount,
                        a.recvtype, a.root);
    sends.wait();
    return;
  }
  if (v.me == root_client) {
    scatter_root_client(v, nullptr, {}, {}, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, a.root);
    return;
  }
  // Another client: the master learns its members' sizes, receives the
  // client's stream from the root and scatters it.
  const std::size_t size = ext_size(a.recvcount, a.recvtype);
  int my_bytes = byte_count(size);
  const bool master = v.is_master();
  std::vector<int> sizes(static_cast<std::size_t>(master ? v.local.size : 0)), offsets;
  coll::gather(&my_bytes, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, v.local);
  std::vector<std::byte> stream;
  if (master) {
    std::size_t total = 0;
    for (int s : sizes) {
      offsets.push_back(byte_count(total));
      total += static_cast<std::size_t>(s);
    }
    stream.resize(total);
    recv_bytes(stream.data(), total, a.root, tag::scatterv, c);
  }
  std::vector<std::byte> mine(size);
  coll::scatterv(stream.data(), sizes.data(), offsets.data(), MPI_BYTE, mine.data(), my_bytes, MPI_BYTE, 0, v.local);
  unpack_ext(mine.data(), a.recvcount, a.recvtype, a.recvbuf);
}

void reduce_scatter_block(const ReduceArgs& a, core::Comm& c) {
  const int total = times(a.count, c.size);
  TypedBuffer full(c.rank == 0 ? total : 0, a.type);
  const void* input = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  coll::reduce(input, full.get(), total, a.type, a.op, 0, c);
  coll::scatter(full.get(), a.count, a.type, a.recvbuf, a.count, a.type, 0, c);
}

void reduce_scatter(const ReduceScatterArgs& a, core::Comm& c) {
  std::vector<int> displs;
  long long sum = 0;
  for (int r = 0; r < c.size; ++r) {
    displs.push_back(static_cast<int>(sum));
    sum += a.recvcounts[r];
    if (sum > INT_MAX)
      throw MpiError(MPI_ERR_COUNT, "the sum of recvcounts exceeds INT_MAX on a multi-client communicator");
  }
  const int total = static_cast<int>(sum);
  if (total == 0) return;
  TypedBuffer full(c.rank == 0 ? total : 0, a.type);
  const void* input = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  coll::reduce(input, full.get(), total, a.type, a.op, 0, c);
  coll::scatterv(full.get(), a.recvcounts, displs.data(), a.type, a.recvbuf, a.recvcounts[c.rank], a.type, 0, c);
}

}  // namespace gridmpi::coll::impi
