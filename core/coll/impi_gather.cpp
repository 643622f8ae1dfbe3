// IMPI Gather, Gatherv, Allgather, Allgatherv: our two-tier designs (the
// protocol page lists only their tags, 130 and 140; see core/coll/README.md).
//
// Gather: the root's client gathers natively into the root's recvbuf; in
// every other client the members' blocks are packed in external32 and
// gathered at the master, which forwards the client's stream (MPI_PACKED,
// tag 130) toward the root: linear = straight to the root; tree = binomial
// tree of master numbers relative to the root's client, a master
// forwarding the streams of its subtree (contiguous master numbers).  The
// root unpacks every block into place.  Cost between clients: n-1 messages
// at the root (linear) or ceil(log2 n) rounds (tree); the data crosses
// each client boundary once.
// Gatherv: the same, linear only (intermediate masters would not know the
// other clients' counts); each master first gathers its members' sizes.
// Allgather(v) = Gather(v) to rank 0 + Bcast from rank 0 (of the whole
// receive buffer: an indexed type over the blocks for Allgatherv).
#include <numeric>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/impi.hpp"
#include "core/coll/impi_util.hpp"
#include "core/datatype.hpp"

namespace gridmpi::coll::impi {

namespace {

// Native gather of the root's client into the root's buffer, block i at
// element displs[i] of recvbuf (comm rank order).  `mine` is this member's
// block (MPI_IN_PLACE at the root when it is already in place).
void gather_root_client(const View& v, const void* mine, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const std::vector<int>& counts, const std::vector<int>& displs, MPI_Datatype recvtype,
                        int root) {
  const std::vector<int>& members = v.members(v.me);
  std::vector<int> local_counts, local_displs;
  if (v.comm.rank == root) {
    for (int r : members) {
      local_counts.push_back(counts[static_cast<std::size_t>(r)]);
      local_displs.push_back(displs[static_cast<std::size_t>(r)]);
    }
  }
  coll::gatherv(mine, sendcount, sendtype, recvbuf, local_counts.data(), local_displs.data(), recvtype,
                v.local_rank(root), v.local);
}

}  // namespace

void gather(const GatherArgs& a, core::Comm& c) {
  View v = view(c);
  const int n = v.n, root_client = v.client_of(a.root);
  const bool root = c.rank == a.root;
  if (v.me == root_client) {
    const std::vector<int>& members = v.members(v.me);
    const int first = members.front();
    if (members.back() - first + 1 == static_cast<int>(members.size())) {
      // Consecutive ranks: one native gather into the right place.
      coll::gather(a.sendbuf, a.sendcount, a.sendtype,
                   root ? element_of(a.recvbuf, static_cast<MPI_Aint>(first) * a.recvcount, a.recvtype) : nullptr,
                   a.recvcount, a.recvtype, v.local_rank(a.root), v.local);
    } else {
      std::vector<int> counts, displs;
      if (root) {
        counts.assign(static_cast<std::size_t>(c.size), a.recvcount);
        for (int r = 0; r < c.size; ++r) displs.push_back(times(r, a.recvcount));
      }
      gather_root_client(v, a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, counts, displs, a.recvtype, a.root);
    }
  }
  // The external32 size of one block (equal everywhere: one signature).
  const std::size_t block = root ? ext_size(a.recvcount, a.recvtype) : ext_size(a.sendcount, a.sendtype);
  auto client_bytes = [&](int m) { return block * v.members(m).size(); };
  // Virtual master numbers relative to the root's client; the stream of a
  // range of them is the clients' streams in that order.
  auto real = [&](int vr) { return (vr + root_client) % n; };
  const int vr = (v.me - root_client + n) % n;
  std::vector<std::byte> stream;  // clients vr, vr+1, ... (the root: 1, 2, ...)
  if (v.me != root_client) {
    std::vector<std::byte> mine(block);
    pack_ext(a.sendbuf, a.sendcount, a.sendtype, mine.data());
    if (v.is_master()) stream.resize(client_bytes(v.me));
    coll::gather(mine.data(), byte_count(block), MPI_BYTE, stream.data(), byte_count(block), MPI_BYTE, 0, v.local);
    if (!v.is_master()) return;
  } else if (!root) {
    return;
  }
  auto range_bytes = [&](int from, int to) {  // virtual numbers [from, to)
    std::size_t total = 0;
    for (int w = from; w < to; ++w) total += client_bytes(real(w));
    return total;
  };
  if (v.linear) {
    if (!root) {
      send_bytes(stream.data(), stream.size(), a.root, tag::gather, c);
      return;
    }
    stream.resize(range_bytes(1, n));
    Requests receives;
    std::size_t offset = 0;
    for (int w = 1; w < n; ++w) {
      receives.recv(stream.data() + offset, byte_count(client_bytes(real(w))), MPI_PACKED, v.master(real(w)),
                    tag::gather, c);
      offset += client_bytes(real(w));
    }
    receives.wait();
  } else {
    const int dim = tree_dim(n);
    for (int i = 0; i < dim; ++i) {
      const int bit = 1 << i;
      if (vr & bit) {
        send_bytes(stream.data(), stream.size(), v.participant(real(vr - bit), a.root), tag::gather, c);
        return;
      }
      if (vr + bit < n) {
        const std::size_t old = stream.size(), more = range_bytes(vr + bit, std::min(vr + 2 * bit, n));
        stream.resize(old + more);
        recv_bytes(stream.data() + old, more, v.master(real(vr + bit)), tag::gather, c);
      }
    }
  }
  // The root: every other client's blocks into place.
  std::size_t offset = 0;
  for (int w = 1; w < n; ++w) {
    for (int r : v.members(real(w))) {
      unpack_ext(stream.data() + offset, a.recvcount, a.recvtype,
                 element_of(a.recvbuf, static_cast<MPI_Aint>(r) * a.recvcount, a.recvtype));
      offset += block;
    }
  }
}

void gatherv(const GathervArgs& a, core::Comm& c) {
  View v = view(c);
  const int n = v.n, root_client = v.client_of(a.root);
  const bool root = c.rank == a.root;
  if (v.me == root_client) {
    std::vector<int> counts, displs;
    if (root) {
      counts.assign(a.recvcounts, a.recvcounts + c.size);
      displs.assign(a.displs, a.displs + c.size);
    }
    gather_root_client(v, a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, counts, displs, a.recvtype, a.root);
    if (!root) return;
    Requests receives;
    std::vector<std::vector<std::byte>> streams(static_cast<std::size_t>(n));
    for (int m = 0; m < n; ++m) {
      if (m == root_client) continue;
      std::size_t total = 0;
      for (int r : v.members(m)) total += ext_size(a.recvcounts[r], a.recvtype);
      streams[static_cast<std::size_t>(m)].resize(total);
      receives.recv(streams[static_cast<std::size_t>(m)].data(), byte_count(total), MPI_PACKED, v.master(m),
                    tag::gatherv, c);
    }
    receives.wait();
    for (int m = 0; m < n; ++m) {
      if (m == root_client) continue;
      std::size_t offset = 0;
      for (int r : v.members(m)) {
        unpack_ext(streams[static_cast<std::size_t>(m)].data() + offset, a.recvcounts[r], a.recvtype,
                   element_of(a.recvbuf, a.displs[r], a.recvtype));
        offset += ext_size(a.recvcounts[r], a.recvtype);
      }
    }
    return;
  }
  // Another client: sizes, then the packed blocks, to the master; the master
  // forwards the client's stream to the root.
  const std::size_t size = ext_size(a.sendcount, a.sendtype);
  std::vector<std::byte> mine(size);
  pack_ext(a.sendbuf, a.sendcount, a.sendtype, mine.data());
  const int nlocal = v.local.size;
  int my_bytes = byte_count(size);
  std::vector<int> sizes(static_cast<std::size_t>(v.is_master() ? nlocal : 0)), offsets;
  coll::gather(&my_bytes, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, v.local);
  std::vector<std::byte> stream;
  if (v.is_master()) {
    std::size_t total = 0;
    for (int s : sizes) {
      offsets.push_back(byte_count(total));
      total += static_cast<std::size_t>(s);
    }
    stream.resize(total);
  }
  coll::gatherv(mine.data(), my_bytes, MPI_BYTE, stream.data(), sizes.data(), offsets.data(), MPI_BYTE, 0, v.local);
  if (v.is_master()) send_bytes(stream.data(), stream.size(), a.root, tag::gatherv, c);
}

void allgather(const GatherArgs& a, core::Comm& c) {
  GatherArgs to_zero = a;
  to_zero.root = 0;
  if (a.sendbuf == MPI_IN_PLACE && c.rank != 0) {
    to_zero.sendbuf = element_of(a.recvbuf, static_cast<MPI_Aint>(c.rank) * a.recvcount, a.recvtype);
    to_zero.sendcount = a.recvcount;
    to_zero.sendtype = a.recvtype;
  }
  gather(to_zero, c);
  coll::bcast(a.recvbuf, times(a.recvcount, c.size), a.recvtype, 0, c);
}

void allgatherv(const GathervArgs& a, core::Comm& c) {
  GathervArgs to_zero = a;
  to_zero.root = 0;
  if (a.sendbuf == MPI_IN_PLACE && c.rank != 0) {
    to_zero.sendbuf = element_of(a.recvbuf, a.displs[c.rank], a.recvtype);
    to_zero.sendcount = a.recvcounts[c.rank];
    to_zero.sendtype = a.recvtype;
  }
  gatherv(to_zero, c);
  // The whole receive buffer, blocks in rank order: the same signature everywhere.
  MPI_Datatype blocks = core::type_indexed(c.size, a.recvcounts, a.displs, a.recvtype);
  try {
    core::type_commit(blocks);
    coll::bcast(a.recvbuf, 1, blocks, 0, c);
  } catch (...) {
    core::type_free(blocks);
    throw;
  }
  core::type_free(blocks);
}

}  // namespace gridmpi::coll::impi
