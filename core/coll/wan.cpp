// The wide-area collectives (wan.hpp): the algorithms and the dispatch.
//
// A cluster is a client of the communicator's ClientMap; its members are in
// comm rank order, its master (leader) is the first.  Messages between
// clusters are ordinary point-to-point on the communicator's collective
// context, so the IMPI transport converts typed data between clusters of
// different representations as for any message; the Bcast stream is in
// the job's collective representation (impi::pack_ext), as the IMPI
// collectives' streams are.  The local phases run the single-cluster
// algorithms on the hidden client-local communicator.
//
// barrier  leaders  local barrier; the masters exchange zero-byte messages
//                   all to all (one wide-area latency, IMPI's takes two);
//                   local barrier.
// bcast    split    the root scatters the stream over its cluster's k
//                   members; member i sends piece i to its counterpart in
//                   every other cluster (pieces spread over the receiving
//                   cluster's members in contiguous runs); every cluster
//                   allgathers the pieces.  k connections carry m/k each.
// reduce   split    every cluster reduce-scatters into k = smallest cluster
//                   size pieces; the holders of piece j in the other
//                   clusters send it to its holder in the root's cluster,
//                   which combines them in cluster order; the root gathers
//                   the pieces.
// allreduce leaders local reduce to the master; the masters exchange their
//                   partial results all to all and each combines them in
//                   cluster order; local broadcast (one wide-area step,
//                   IMPI's reduce + bcast takes two).
// allreduce split   reduce-scatter in every cluster; the holders of piece j
//                   exchange their partials all to all and combine them in
//                   cluster order; every cluster allgathers the pieces.
// allgather split   every rank sends its block to one member of every other
//                   cluster (local index mod cluster size); every rank
//                   sends its own block to the members of its cluster, then
//                   the blocks it received from far.
// alltoall split    every pair at once: each block on its own connection.
//
// Every message between clusters goes in chunks of at most IMPI_C_DATALEN
// bytes (far_send/far_recv), so that none waits for the long protocol's
// SYNCACK round trip.
//
// Combining in cluster order (p_0 op (p_1 op (... p_{C-1}))) gives every
// process the same bits, so these need a commutative op only for the
// local phases; non-commutative ops take the IMPI algorithm.
#include <algorithm>
#include <climits>
#include <vector>

#include "base/error.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/impi_util.hpp"
#include "core/coll/util.hpp"
#include "core/coll/wan.hpp"
#include "core/job_layout.hpp"

namespace gridmpi::coll::wan {

namespace {

namespace tag {
inline constexpr int barrier = 41, bcast = 42, reduce = 43, allreduce = 44, allgather_far = 45,
                     allgather_own = 47, allgather_forward = 48, alltoall = 49;
}

// The clusters of a communicator, from this process's view.
struct Clusters {
  core::Comm& comm;
  const core::ClientMap& map;
  core::Comm& local;
  int count;  // clusters
  int me;     // this process's cluster
  int mine;   // this process's index in it

  explicit Clusters(core::Comm& c)
      : comm(c), map(*c.clients), local(core::comm(c.client_comm)), count(map.num_masters()),
        me(map.master_of[static_cast<std::size_t>(c.rank)]),
        mine(map.local_rank[static_cast<std::size_t>(c.rank)]) {}
  int size(int cluster) const { return static_cast<int>(map.members[static_cast<std::size_t>(cluster)].size()); }
  int member(int cluster, int index) const {
    return map.members[static_cast<std::size_t>(cluster)][static_cast<std::size_t>(index)];
  }
  int cluster_of(int rank) const { return map.master_of[static_cast<std::size_t>(rank)]; }
  int smallest() const {
    int n = INT_MAX;
    for (int e = 0; e < count; ++e) n = std::min(n, size(e));
    return n;
  }
};

// k pieces over the n members of a cluster in contiguous runs: piece j to
// member j*n/k; member r holds pieces [first_piece(r), first_piece(r+1)).
int owner(int j, int n, int k) { return static_cast<int>(static_cast<long long>(j) * n / k); }
int first_piece(int r, int n, int k) { return static_cast<int>((static_cast<long long>(r) * k + n - 1) / n); }

int as_int(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw MpiError(MPI_ERR_INTERN, "wide-area collective: a piece exceeds INT_MAX elements");
  return static_cast<int>(n);
}

// Messages between clusters go in chunks of at most IMPI_C_DATALEN bytes:
// a longer one takes IMPI's long protocol, whose SYNCACK costs a round trip
// of the wide area before the data flows; chunks are short messages that
// flow at once (and in order, on one tag), so a large transfer is
// pipelined through the connection's window.  Both ends cut alike: the
// count and the element's size in the job's collective representation are
// equal at both.
int chunk_elements(MPI_Datatype type) {
  const std::size_t element = std::max<std::size_t>(1, impi::ext_size(1, type));
  const std::size_t limit = static_cast<std::size_t>(std::max(1, core::job_layout().wan_datalen - 256));
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(limit / element, INT_MAX)));
}

void far_send(Requests& r, const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& c) {
  const int step = chunk_elements(type);
  if (count <= step) return r.send(buf, count, type, dest, tag, c);
  for (int done = 0; done < count; done += step)
    r.send(impi::element_of(buf, done, type), std::min(step, count - done), type, dest, tag, c);
}

void far_recv(Requests& r, void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& c) {
  const int step = chunk_elements(type);
  if (count <= step) return r.recv(buf, count, type, source, tag, c);
  for (int done = 0; done < count; done += step)
    r.recv(impi::element_of(buf, done, type), std::min(step, count - done), type, source, tag, c);
}

// dst = p_0 op (p_1 op (... op p_{C-1})), cnt elements each; dst may be one of them.
void combine(const std::vector<const void*>& partials, void* dst, int cnt, MPI_Datatype type, MPI_Op op) {
  TypedBuffer acc(cnt, type);
  copy(partials.back(), acc.get(), cnt, type);
  for (std::size_t e = partials.size() - 1; e-- > 0;) reduce_local(partials[e], acc.get(), cnt, type, op);
  copy(acc.get(), dst, cnt, type);
}

void barrier_leaders(core::Comm& c) {
  Clusters cl(c);
  coll::barrier(cl.local);
  if (cl.mine == 0) {
    Requests r;
    for (int e = 0; e < cl.count; ++e)
      if (e != cl.me) r.recv(nullptr, 0, MPI_BYTE, cl.member(e, 0), tag::barrier, c);
    for (int e = 0; e < cl.count; ++e)
      if (e != cl.me) r.send(nullptr, 0, MPI_BYTE, cl.member(e, 0), tag::barrier, c);
    r.wait();
  }
  coll::barrier(cl.local);
}

void bcast_split(const BcastArgs& a, core::Comm& c) {
  Clusters cl(c);
  const int R = cl.cluster_of(a.root), k = cl.size(R);
  const std::size_t m = impi::ext_size(a.count, a.type);
  Bytes stream(m);
  const bool root = c.rank == a.root;
  if (root) impi::pack_ext(a.buffer, a.count, a.type, stream.data());
  const Split s{m, k};
  auto piece = [&](int j) { return stream.data() + s.offset(j); };
  auto bytes = [&](int j) { return as_int(s.count(j)); };
  {
    Requests r;
    if (cl.me == R) {
      // Piece `mine` of the root's cluster: from the root, then to every other cluster.
      if (root) {
        for (int j = 0; j < k; ++j)
          if (j != cl.mine) r.send(piece(j), bytes(j), MPI_PACKED, cl.member(R, j), tag::bcast, c);
      } else {
        coll::recv(piece(cl.mine), bytes(cl.mine), MPI_PACKED, a.root, tag::bcast, c);
      }
      for (int e = 0; e < cl.count; ++e)
        if (e != R)
          far_send(r, piece(cl.mine), bytes(cl.mine), MPI_PACKED, cl.member(e, owner(cl.mine, cl.size(e), k)), tag::bcast, c);
    } else {
      const int n = cl.size(cl.me);
      for (int j = first_piece(cl.mine, n, k); j < first_piece(cl.mine + 1, n, k); ++j)
        far_recv(r, piece(j), bytes(j), MPI_PACKED, cl.member(R, j), tag::bcast, c);
    }
    r.wait();
  }
  const int n = cl.size(cl.me);
  if (n > 1) {
    std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
    for (int q = 0; q < n; ++q) {
      const int lo = first_piece(q, n, k), hi = first_piece(q + 1, n, k);
      displs[static_cast<std::size_t>(q)] = as_int(s.offset(std::min(lo, k - 1)));
      counts[static_cast<std::size_t>(q)] = as_int(hi > lo ? s.offset(hi - 1) + s.count(hi - 1) - s.offset(lo) : 0);
    }
    coll::allgatherv(MPI_IN_PLACE, 0, MPI_PACKED, stream.data(), counts.data(), displs.data(), MPI_PACKED, cl.local);
  }
  if (!root) impi::unpack_ext(stream.data(), a.count, a.type, a.buffer);
}

// The pieces of a split reduction: k = smallest cluster size pieces, each
// member of a cluster holding at most one.
struct Pieces {
  Split split;
  int k;
  int held = -1;  // the piece this process holds, or -1
  std::vector<int> counts, displs;  // per member of this process's cluster

  Pieces(const Clusters& cl, int count) : split{static_cast<std::size_t>(count), cl.smallest()}, k(cl.smallest()) {
    const int n = cl.size(cl.me);
    counts.assign(static_cast<std::size_t>(n), 0);
    displs.assign(static_cast<std::size_t>(n), 0);
    for (int j = 0; j < k; ++j) {
      const int q = owner(j, n, k);
      counts[static_cast<std::size_t>(q)] = as_int(split.count(j));
      displs[static_cast<std::size_t>(q)] = as_int(split.offset(j));
      if (q == cl.mine) held = j;
    }
  }
  int cnt() const { return held < 0 ? 0 : as_int(split.count(held)); }
};

// The partial results of one piece from every cluster (cnt elements each),
// combined in cluster order into dst; `mine` is this process's cluster's,
// peer(e) the process holding cluster e's.  With `exchange` this process
// also sends `mine` to each of them (they all end with the result).
template <class Peer>
void combine_clusters(const void* mine, int cnt, const ReduceArgs& a, Peer peer, bool exchange, int tag, void* dst,
                      const Clusters& cl, core::Comm& c) {
  TypedBuffer far(std::max(1, cnt * (cl.count - 1)), a.type);  // run() keeps count x clusters within an int
  std::vector<const void*> partials(static_cast<std::size_t>(cl.count));
  Requests r;
  MPI_Aint slot = 0;
  for (int e = 0; e < cl.count; ++e) {
    if (e == cl.me) {
      partials[static_cast<std::size_t>(e)] = mine;
      continue;
    }
    void* at = far.at(slot);
    slot += cnt;
    partials[static_cast<std::size_t>(e)] = at;
    far_recv(r, at, cnt, a.type, peer(e), tag, c);
    if (exchange) far_send(r, mine, cnt, a.type, peer(e), tag, c);
  }
  r.wait();
  combine(partials, dst, cnt, a.type, a.op);
}

void reduce_split(const ReduceArgs& a, core::Comm& c) {
  Clusters cl(c);
  const int R = cl.cluster_of(a.root);
  const bool root = c.rank == a.root;
  Pieces pc(cl, a.count);
  const int cnt = pc.cnt(), j = pc.held;
  TypedBuffer partial(std::max(cnt, 1), a.type);
  coll::reduce_scatter(root && a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf, partial.get(), pc.counts.data(),
                       a.type, a.op, cl.local);
  if (j >= 0 && cl.me != R) {
    Requests r;
    far_send(r, partial.get(), cnt, a.type, cl.member(R, owner(j, cl.size(R), pc.k)), tag::reduce, c);
    r.wait();
  } else if (j >= 0) {
    // In place: partial is this cluster's share and then the result.
    combine_clusters(partial.get(), cnt, a, [&](int e) { return cl.member(e, owner(j, cl.size(e), pc.k)); }, false,
                     tag::reduce, partial.get(), cl, c);
  }
  if (cl.me == R)
    coll::gatherv(partial.get(), cnt, a.type, a.recvbuf, pc.counts.data(), pc.displs.data(), a.type,
                  cl.map.local_rank[static_cast<std::size_t>(a.root)], cl.local);
}

void allreduce_split(const ReduceArgs& a, core::Comm& c) {
  Clusters cl(c);
  Pieces pc(cl, a.count);
  const int cnt = pc.cnt(), j = pc.held;
  TypedBuffer partial(std::max(cnt, 1), a.type);
  coll::reduce_scatter(a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf, partial.get(), pc.counts.data(), a.type,
                       a.op, cl.local);
  if (j >= 0)
    combine_clusters(partial.get(), cnt, a, [&](int e) { return cl.member(e, owner(j, cl.size(e), pc.k)); }, true,
                     tag::allreduce, impi::element_of(a.recvbuf, static_cast<MPI_Aint>(pc.split.offset(j)), a.type),
                     cl, c);
  coll::allgatherv(MPI_IN_PLACE, 0, a.type, a.recvbuf, pc.counts.data(), pc.displs.data(), a.type, cl.local);
}

void allreduce_leaders(const ReduceArgs& a, core::Comm& c) {
  Clusters cl(c);
  const bool leader = cl.mine == 0;
  const void* in = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  coll::reduce(leader && in == a.recvbuf ? MPI_IN_PLACE : in, a.recvbuf, a.count, a.type, a.op, 0, cl.local);
  if (leader)
    combine_clusters(a.recvbuf, a.count, a, [&](int e) { return cl.member(e, 0); }, true, tag::allreduce, a.recvbuf,
                     cl, c);
  coll::bcast(a.recvbuf, a.count, a.type, 0, cl.local);
}

void allgather_split(const GatherArgs& a, core::Comm& c) {
  Clusters cl(c);
  const MPI_Aint block = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  auto slot = [&](int rank) { return at_bytes(a.recvbuf, rank * block); };
  if (a.sendbuf != MPI_IN_PLACE) copy(a.sendbuf, a.sendcount, a.sendtype, slot(c.rank), a.recvcount, a.recvtype);
  const int n = cl.size(cl.me);
  // The far blocks member q of this cluster receives, in one order for all.
  auto far_blocks_of = [&](int q, auto&& each) {
    for (int e = 0; e < cl.count; ++e)
      if (e != cl.me)
        for (int i = q; i < cl.size(e); i += n) each(cl.member(e, i));
  };
  // A block longer than a chunk crosses as its packed stream, cut in
  // chunks: ranks may describe their blocks with different datatypes of one
  // signature, so only bytes cut alike (the stream's size is the same at all).
  const std::size_t bytes = impi::ext_size(a.recvcount, a.recvtype);
  const bool staged = bytes > static_cast<std::size_t>(chunk_elements(MPI_PACKED));
  {
    Requests r;
    std::vector<std::pair<int, Bytes>> far_in;  // (block, stream) when staged
    if (staged) {
      int blocks = 0;
      far_blocks_of(cl.mine, [&](int) { ++blocks; });
      far_in.reserve(static_cast<std::size_t>(blocks));  // no reallocation while receives are pending
    }
    far_blocks_of(cl.mine, [&](int b) {
      if (!staged) return far_recv(r, slot(b), a.recvcount, a.recvtype, b, tag::allgather_far, c);
      far_in.emplace_back(b, Bytes(bytes));
      far_recv(r, far_in.back().second.data(), as_int(bytes), MPI_PACKED, b, tag::allgather_far, c);
    });
    for (int q = 0; q < n; ++q)
      if (q != cl.mine) r.recv(slot(cl.member(cl.me, q)), a.recvcount, a.recvtype, cl.member(cl.me, q), tag::allgather_own, c);
    Bytes mine;
    if (staged) {
      mine = Bytes(bytes);
      impi::pack_ext(slot(c.rank), a.recvcount, a.recvtype, mine.data());
    }
    for (int e = 0; e < cl.count; ++e) {
      if (e == cl.me) continue;
      const int to = cl.member(e, cl.mine % cl.size(e));
      if (staged) far_send(r, mine.data(), as_int(bytes), MPI_PACKED, to, tag::allgather_far, c);
      else far_send(r, slot(c.rank), a.recvcount, a.recvtype, to, tag::allgather_far, c);
    }
    for (int q = 0; q < n; ++q)
      if (q != cl.mine) r.send(slot(c.rank), a.recvcount, a.recvtype, cl.member(cl.me, q), tag::allgather_own, c);
    r.wait();
    for (auto& [b, stream] : far_in) impi::unpack_ext(stream.data(), a.recvcount, a.recvtype, slot(b));
  }
  Requests r;
  for (int q = 0; q < n; ++q) {
    if (q == cl.mine) continue;
    const int peer = cl.member(cl.me, q);
    far_blocks_of(q, [&](int b) { r.recv(slot(b), a.recvcount, a.recvtype, peer, tag::allgather_forward, c); });
    far_blocks_of(cl.mine, [&](int b) { r.send(slot(b), a.recvcount, a.recvtype, peer, tag::allgather_forward, c); });
  }
  r.wait();
}

// Every pair at once (receives first, peers from the neighbours on).  A
// block to another cluster longer than a chunk goes as its packed stream in
// the job's collective representation, cut in chunks (sender and receiver
// may describe it with different datatypes, so only bytes cut alike).
void alltoall_split(const GatherArgs& a, core::Comm& c) {
  Clusters cl(c);
  const int p = c.size, me = c.rank;
  const MPI_Aint rblock = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  const AlltoallSource src(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, p);
  const std::size_t bytes = impi::ext_size(a.recvcount, a.recvtype);
  const bool staged = bytes > static_cast<std::size_t>(chunk_elements(MPI_PACKED));
  std::vector<Bytes> in(staged ? static_cast<std::size_t>(p) : 0), out(staged ? static_cast<std::size_t>(p) : 0);
  Requests r;
  for (int i = 1; i < p; ++i) {
    const int from = (me - i + p) % p;
    void* at = at_bytes(a.recvbuf, from * rblock);
    if (cl.cluster_of(from) == cl.me || !staged) {
      r.recv(at, a.recvcount, a.recvtype, from, tag::alltoall, c);
    } else {
      in[static_cast<std::size_t>(from)] = Bytes(bytes);
      far_recv(r, in[static_cast<std::size_t>(from)].data(), as_int(bytes), MPI_PACKED, from, tag::alltoall, c);
    }
  }
  for (int i = 1; i < p; ++i) {
    const int to = (me + i) % p;
    const void* at = at_bytes(src.buf, to * src.block);
    if (cl.cluster_of(to) == cl.me || !staged) {
      r.send(at, src.count, src.type, to, tag::alltoall, c);
    } else {
      Bytes& stream = out[static_cast<std::size_t>(to)] = Bytes(bytes);
      impi::pack_ext(at, src.count, src.type, stream.data());
      far_send(r, stream.data(), as_int(bytes), MPI_PACKED, to, tag::alltoall, c);
    }
  }
  if (!src.in_place)
    copy(at_bytes(src.buf, me * src.block), src.count, src.type, at_bytes(a.recvbuf, me * rblock), a.recvcount,
         a.recvtype);
  r.wait();
  for (int from = 0; from < p; ++from)
    if (staged && from != me && cl.cluster_of(from) != cl.me)
      impi::unpack_ext(in[static_cast<std::size_t>(from)].data(), a.recvcount, a.recvtype,
                       at_bytes(a.recvbuf, from * rblock));
}

int client_of_root(const core::Comm& c, int root) { return c.clients->master_of[static_cast<std::size_t>(root)]; }

}  // namespace

template <Kind K>
bool run(const Args<K>& a, core::Comm& c) {
  if (!enabled() || c.clients == nullptr) return false;
  const core::ClientMap& map = *c.clients;
  if constexpr (K == Kind::barrier) {
    if (choose(K, 0, map, -1) != Variant::leaders) return false;
    barrier_leaders(c);
    return true;
  } else if constexpr (K == Kind::bcast) {
    const std::size_t bytes = impi::ext_size(a.count, a.type);
    if (bytes > static_cast<std::size_t>(INT_MAX) || choose(K, bytes, map, client_of_root(c, a.root)) != Variant::split)
      return false;
    bcast_split(a, c);
    return true;
  } else if constexpr (K == Kind::reduce || K == Kind::allreduce) {
    // count is the same at every rank: the temporaries of count x clusters
    // elements fit an int everywhere or nowhere.
    if (!is_commutative(a.op) || static_cast<long long>(a.count) * map.num_masters() > INT_MAX) return false;
    const std::size_t bytes = impi::ext_size(a.count, a.type);
    const Variant v = choose(K, bytes, map, K == Kind::reduce ? client_of_root(c, a.root) : -1);
    if (K == Kind::reduce && v == Variant::split) reduce_split(a, c);
    else if (K == Kind::allreduce && v == Variant::split) allreduce_split(a, c);
    else if (K == Kind::allreduce && v == Variant::leaders) allreduce_leaders(a, c);
    else return false;
    return true;
  } else if constexpr (K == Kind::allgather || K == Kind::alltoall) {
    // Uniform at every rank (ranks' counts may differ, the stream size may not).
    if (impi::ext_size(a.recvcount, a.recvtype) * static_cast<std::size_t>(c.size) > static_cast<std::size_t>(INT_MAX))
      return false;
    if (choose(K, impi::ext_size(a.recvcount, a.recvtype), map, -1) != Variant::split) return false;
    if constexpr (K == Kind::allgather) allgather_split(a, c);
    else alltoall_split(a, c);
    return true;
  } else {
    return false;
  }
}

#define GRIDMPI_WAN_INSTANTIATE(kind) template bool run<Kind::kind>(const Args<Kind::kind>&, core::Comm&);
GRIDMPI_WAN_INSTANTIATE(barrier)
GRIDMPI_WAN_INSTANTIATE(bcast)
GRIDMPI_WAN_INSTANTIATE(gather)
GRIDMPI_WAN_INSTANTIATE(gatherv)
GRIDMPI_WAN_INSTANTIATE(scatter)
GRIDMPI_WAN_INSTANTIATE(scatterv)
GRIDMPI_WAN_INSTANTIATE(allgather)
GRIDMPI_WAN_INSTANTIATE(allgatherv)
GRIDMPI_WAN_INSTANTIATE(alltoall)
GRIDMPI_WAN_INSTANTIATE(alltoallv)
GRIDMPI_WAN_INSTANTIATE(alltoallw)
GRIDMPI_WAN_INSTANTIATE(reduce)
GRIDMPI_WAN_INSTANTIATE(allreduce)
GRIDMPI_WAN_INSTANTIATE(reduce_scatter)
GRIDMPI_WAN_INSTANTIATE(reduce_scatter_block)
GRIDMPI_WAN_INSTANTIATE(scan)
GRIDMPI_WAN_INSTANTIATE(exscan)
#undef GRIDMPI_WAN_INSTANTIATE

}  // namespace gridmpi::coll::wan
