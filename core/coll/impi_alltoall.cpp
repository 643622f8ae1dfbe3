// IMPI Alltoall, Alltoallv, Alltoallw: our two-tier design (the protocol
// page lists only the tags 170 and 180; Alltoallw uses 180 too; see
// core/coll/README.md).
//
// Blocks between members of one client go straight, on the client-local
// communicator.  Blocks for other clients are packed in external32 and
// gathered at the master (their sizes first), each pair of masters
// exchanges one message (MPI_PACKED) holding every block from one client
// to the other (sender's members outer, receiver's inner, comm rank
// order), and each master scatters to its members what they receive; the
// members unpack.  There is no tree variant: one message per pair of
// masters is already the fewest.  Cost between clients: n-1 messages per
// master, each carrying (client size x client size) blocks.
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/impi.hpp"
#include "core/coll/impi_util.hpp"

namespace gridmpi::coll::impi {

namespace {

struct Block {
  void* buf;
  int count;
  MPI_Datatype type;
};

// Sends out[r] to every comm rank r and receives in[r] from it.
void exchange(const std::vector<Block>& out, const std::vector<Block>& in, int tg, core::Comm& c) {
  View v = view(c);
  core::Comm& lc = v.local;
  const std::vector<int>& locals = v.members(v.me);
  const int nlocal = lc.size;
  // Inside the client: directly.
  Requests direct;
  for (int k = 0; k < nlocal; ++k) {
    const int r = locals[static_cast<std::size_t>(k)];
    const Block& o = out[static_cast<std::size_t>(r)];
    const Block& i = in[static_cast<std::size_t>(r)];
    if (r == c.rank) {
      copy(o.buf, o.count, o.type, i.buf, i.count, i.type);
      continue;
    }
    direct.recv(i.buf, i.count, i.type, k, tg, lc);
    direct.send(o.buf, o.count, o.type, k, tg, lc);
  }
  // The other clients' ranks, in the order every member of this client
  // uses: clients in master order, members in comm rank order.
  std::vector<int> peers;
  std::vector<int> first_peer(static_cast<std::size_t>(v.n), 0);  // of each other client
  for (int m = 0; m < v.n; ++m) {
    if (m == v.me) continue;
    first_peer[static_cast<std::size_t>(m)] = static_cast<int>(peers.size());
    for (int r : v.members(m)) peers.push_back(r);
  }
  const int npeers = static_cast<int>(peers.size());
  // [my sizes out..., my sizes in...] and my outgoing stream.
  std::vector<long long> sizes(2 * static_cast<std::size_t>(npeers));
  std::size_t out_total = 0;
  for (int k = 0; k < npeers; ++k) {
    const Block& o = out[static_cast<std::size_t>(peers[static_cast<std::size_t>(k)])];
    const Block& i = in[static_cast<std::size_t>(peers[static_cast<std::size_t>(k)])];
    sizes[static_cast<std::size_t>(k)] = static_cast<long long>(ext_size(o.count, o.type));
    sizes[static_cast<std::size_t>(npeers + k)] = static_cast<long long>(ext_size(i.count, i.type));
    out_total += static_cast<std::size_t>(sizes[static_cast<std::size_t>(k)]);
  }
  std::vector<std::byte> mine(out_total);
  {
    std::size_t offset = 0;
    for (int k = 0; k < npeers; ++k) {
      const Block& o = out[static_cast<std::size_t>(peers[static_cast<std::size_t>(k)])];
      pack_ext(o.buf, o.count, o.type, mine.data() + offset);
      offset += static_cast<std::size_t>(sizes[static_cast<std::size_t>(k)]);
    }
  }
  const bool master = v.is_master();
  const std::size_t row = 2 * static_cast<std::size_t>(npeers);
  std::vector<long long> all_sizes(master ? row * static_cast<std::size_t>(nlocal) : 0);
  coll::gather(sizes.data(), byte_count(row), MPI_LONG_LONG, all_sizes.data(), byte_count(row), MPI_LONG_LONG, 0,
               lc);
  auto out_size = [&](int member, int k) {
    return static_cast<std::size_t>(all_sizes[static_cast<std::size_t>(member) * row + static_cast<std::size_t>(k)]);
  };
  auto in_size = [&](int member, int k) {
    return static_cast<std::size_t>(
        all_sizes[static_cast<std::size_t>(member) * row + static_cast<std::size_t>(npeers + k)]);
  };
  // The members' streams at the master.
  std::vector<int> counts, displs;
  std::vector<std::byte> gathered;
  if (master) {
    std::size_t total = 0;
    for (int j = 0; j < nlocal; ++j) {
      std::size_t s = 0;
      for (int k = 0; k < npeers; ++k) s += out_size(j, k);
      counts.push_back(byte_count(s));
      displs.push_back(byte_count(total));
      total += s;
    }
    gathered.resize(total);
  }
  coll::gatherv(mine.data(), byte_count(out_total), MPI_BYTE, gathered.data(), counts.data(), displs.data(),
                MPI_BYTE, 0, lc);
  // Masters: one message each way per other client, then each member's
  // incoming blocks (peers order) to it.
  std::vector<std::byte> incoming;
  std::vector<int> in_counts, in_displs;
  if (master) {
    std::vector<std::vector<std::byte>> to(static_cast<std::size_t>(v.n)), from(static_cast<std::size_t>(v.n));
    Requests global;
    for (int m = 0; m < v.n; ++m) {
      if (m == v.me) continue;
      const int first = first_peer[static_cast<std::size_t>(m)];
      const int last = first + static_cast<int>(v.members(m).size());
      std::vector<std::byte>& t = to[static_cast<std::size_t>(m)];
      for (int i = 0; i < nlocal; ++i) {
        std::size_t start = static_cast<std::size_t>(displs[static_cast<std::size_t>(i)]), length = 0;
        for (int k = 0; k < first; ++k) start += out_size(i, k);
        for (int k = first; k < last; ++k) length += out_size(i, k);
        t.insert(t.end(), gathered.begin() + static_cast<std::ptrdiff_t>(start),
                 gathered.begin() + static_cast<std::ptrdiff_t>(start + length));
      }
      std::size_t expected = 0;
      for (int k = first; k < last; ++k)
        for (int j = 0; j < nlocal; ++j) expected += in_size(j, k);
      std::vector<std::byte>& f = from[static_cast<std::size_t>(m)];
      f.resize(expected);
      global.recv(f.data(), byte_count(expected), MPI_PACKED, v.master(m), tg, c);
      global.send(t.data(), byte_count(t.size()), MPI_PACKED, v.master(m), tg, c);
    }
    global.wait();
    // Member j's stream: for every peer k in order, the bytes from k to j.
    std::vector<std::size_t> start(static_cast<std::size_t>(nlocal));
    std::size_t total = 0;
    for (int j = 0; j < nlocal; ++j) {
      start[static_cast<std::size_t>(j)] = total;
      std::size_t s = 0;
      for (int k = 0; k < npeers; ++k) s += in_size(j, k);
      in_counts.push_back(byte_count(s));
      in_displs.push_back(byte_count(total));
      total += s;
    }
    incoming.resize(total);
    for (int m = 0; m < v.n; ++m) {
      if (m == v.me) continue;
      const int first = first_peer[static_cast<std::size_t>(m)];
      const int last = first + static_cast<int>(v.members(m).size());
      const std::byte* p = from[static_cast<std::size_t>(m)].data();
      for (int k = first; k < last; ++k) {
        for (int j = 0; j < nlocal; ++j) {
          std::size_t s = in_size(j, k);
          std::copy(p, p + s, incoming.begin() + static_cast<std::ptrdiff_t>(start[static_cast<std::size_t>(j)]));
          start[static_cast<std::size_t>(j)] += s;
          p += s;
        }
      }
    }
  }
  std::size_t in_total = 0;
  for (int k = 0; k < npeers; ++k) in_total += static_cast<std::size_t>(sizes[static_cast<std::size_t>(npeers + k)]);
  std::vector<std::byte> received(in_total);
  coll::scatterv(incoming.data(), in_counts.data(), in_displs.data(), MPI_BYTE, received.data(),
                 byte_count(in_total), MPI_BYTE, 0, lc);
  std::size_t offset = 0;
  for (int k = 0; k < npeers; ++k) {
    const Block& i = in[static_cast<std::size_t>(peers[static_cast<std::size_t>(k)])];
    unpack_ext(received.data() + offset, i.count, i.type, i.buf);
    offset += static_cast<std::size_t>(sizes[static_cast<std::size_t>(npeers + k)]);
  }
  direct.wait();
}

// MPI_IN_PLACE: what goes out is a copy of what is in the receive blocks.
std::vector<Block> copies_of(const std::vector<Block>& in, std::vector<TypedBuffer>& storage) {
  std::vector<Block> out;
  storage.resize(in.size());
  for (std::size_t r = 0; r < in.size(); ++r) {
    storage[r] = TypedBuffer(in[r].count, in[r].type);
    copy(in[r].buf, storage[r].get(), in[r].count, in[r].type);
    out.push_back(Block{storage[r].get(), in[r].count, in[r].type});
  }
  return out;
}

}  // namespace

void alltoall(const GatherArgs& a, core::Comm& c) {
  std::vector<Block> out, in;
  std::vector<TypedBuffer> storage;
  for (int r = 0; r < c.size; ++r)
    in.push_back(Block{element_of(a.recvbuf, static_cast<MPI_Aint>(r) * a.recvcount, a.recvtype), a.recvcount,
                       a.recvtype});
  if (a.sendbuf == MPI_IN_PLACE) {
    out = copies_of(in, storage);
  } else {
    for (int r = 0; r < c.size; ++r)
      out.push_back(Block{const_cast<void*>(element_of(a.sendbuf, static_cast<MPI_Aint>(r) * a.sendcount, a.sendtype)),
                          a.sendcount, a.sendtype});
  }
  exchange(out, in, tag::alltoall, c);
}

void alltoallv(const AlltoallvArgs& a, core::Comm& c) {
  std::vector<Block> out, in;
  std::vector<TypedBuffer> storage;
  for (int r = 0; r < c.size; ++r)
    in.push_back(Block{element_of(a.recvbuf, a.rdispls[r], a.recvtype), a.recvcounts[r], a.recvtype});
  if (a.sendbuf == MPI_IN_PLACE) {
    out = copies_of(in, storage);
  } else {
    for (int r = 0; r < c.size; ++r)
      out.push_back(Block{const_cast<void*>(element_of(a.sendbuf, a.sdispls[r], a.sendtype)), a.sendcounts[r],
                          a.sendtype});
  }
  exchange(out, in, tag::alltoallv, c);
}

void alltoallw(const AlltoallwArgs& a, core::Comm& c) {
  std::vector<Block> out, in;
  std::vector<TypedBuffer> storage;
  for (int r = 0; r < c.size; ++r)
    in.push_back(Block{at_bytes(a.recvbuf, a.rdispls[r]), a.recvcounts[r], a.recvtypes[r]});
  if (a.sendbuf == MPI_IN_PLACE) {
    out = copies_of(in, storage);
  } else {
    for (int r = 0; r < c.size; ++r)
      out.push_back(Block{const_cast<void*>(at_bytes(a.sendbuf, a.sdispls[r])), a.sendcounts[r], a.sendtypes[r]});
  }
  exchange(out, in, tag::alltoallv, c);
}

}  // namespace gridmpi::coll::impi
