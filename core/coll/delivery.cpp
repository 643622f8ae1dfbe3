// The delivery algorithms as schedules (nbc.hpp): the dynamic multicast runs
// them non-blocking, MPI_Bcast runs them to completion (nb::run).
#include "core/coll/delivery.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "core/job_layout.hpp"

namespace gridmpi::coll {

namespace {

using Posted = std::vector<request::Request*>;

// The message cut into `parts` pieces; bytes of pieces [first, last).
struct Pieces {
  std::byte* data;
  Split split;
  std::size_t offset(int piece) const noexcept { return split.offset(piece); }
  std::size_t bytes(int first, int last) const noexcept { return split.offset(last) - split.offset(first); }
};

// The largest message to `peer`: between clusters at most IMPI_C_DATALEN
// (a longer one would wait a wide-area round trip for the long protocol's
// SYNCACK before its data flows; chunks flow at once, in order), else
// unlimited.  Both ends compute the same.
// And never more than INT_MAX bytes (a message's count is an int).
std::size_t chunk_limit(int peer, const core::Comm& comm) {
  constexpr std::size_t most = INT_MAX;
  if (!comm.clients) return most;
  const core::JobLayout& layout = core::job_layout();
  if (layout.client(comm.group->world_rank(peer)) == layout.client(comm.group->world_rank(comm.rank)))
    return most;
  return static_cast<std::size_t>(std::max(4096, layout.wan_datalen - 256));
}

// Zero-byte messages are skipped on both sides alike (both compute the same
// sizes).
void post_send(Posted& r, const Pieces& p, int first, int last, int dest, int tag, core::Comm& comm) {
  const std::size_t n = p.bytes(first, last), step = chunk_limit(dest, comm);
  for (std::size_t done = 0; done < n; done += step)
    r.push_back(isend(p.data + p.offset(first) + done, byte_count(std::min(step, n - done)), MPI_BYTE, dest, tag,
                      comm));
}
void post_recv(Posted& r, const Pieces& p, int first, int last, int source, int tag, core::Comm& comm) {
  const std::size_t n = p.bytes(first, last), step = chunk_limit(source, comm);
  for (std::size_t done = 0; done < n; done += step)
    r.push_back(irecv(p.data + p.offset(first) + done, byte_count(std::min(step, n - done)), MPI_BYTE, source, tag,
                      comm));
}

int lowest_bit(int v) noexcept { return v & -v; }
int ceil_power_of_two(int v) noexcept {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// A group of `size` members sharing the d pieces: member k holds the chunk
// of pieces [first(k), first(k+1)); chunks of a full group are single pieces.
struct Chunks {
  int d;
  int size;
  int first(int k) const noexcept { return static_cast<int>(Split{static_cast<std::size_t>(d), size}.offset(k)); }
  int owner(int piece) const noexcept {
    const int q = d / size, r = d % size;
    return piece < r * (q + 1) ? piece / (q + 1) : r + (piece - r * (q + 1)) / q;
  }
  // Chunks [first_chunk, first_chunk + count) mod size as piece ranges (one
  // or two).
  template <class F>
  void ranges(int first_chunk, int count, F&& f) const {
    int end = first_chunk + count;
    if (end <= size) {
      f(first(first_chunk), first(end));
    } else {
      f(first(first_chunk), first(size));
      f(first(0), first(end - size));
    }
  }
};

// Binomial scatter over indices 0..m-1 of `members` (index 0 has the data):
// afterwards index i holds pieces [i, i+1) (and, on the way, its subtree's).
// Sends stay pending in `sends`.
nb::Task scatter(Pieces p, int m, Members members, int tag, core::Comm& comm, Posted& sends) {
  const int me = members.me;
  int mask = 1;
  while (mask < m) {
    if (me & mask) {
      Posted in;
      post_recv(in, p, me, std::min(me + mask, m), members.rank(me - mask), tag, comm);
      co_await nb::wait(std::move(in));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    int child = me + mask;
    if (child < m) post_send(sends, p, child, std::min(child + mask, m), members.rank(child), tag, comm);
  }
}

// Allgather of the chunks inside one group: `base` is the group's first
// index, `k` this member's place in it; `root_here` when index 0 of the
// delivery (which has everything and receives nothing) is member 0.
nb::Task collect(Pieces p, Chunks c, int base, int k, bool root_here, Members members, int tag, core::Comm& comm,
                 Posted& sends) {
  const int s = c.size;
  if (s == 1) co_return;
  const bool i_am_root = root_here && k == 0;
  auto send_chunks = [&](int first_chunk, int count, int to) {
    if (root_here && to == 0) return;  // the root has everything
    c.ranges(first_chunk, count,
             [&](int a, int b) { post_send(sends, p, a, b, members.rank(base + to), tag, comm); });
  };
  auto recv_chunks = [&](Posted& in, int first_chunk, int count, int from) {
    if (i_am_root) return;
    c.ranges(first_chunk, count, [&](int a, int b) { post_recv(in, p, a, b, members.rank(base + from), tag, comm); });
  };
  if (is_power_of_two(s)) {
    // Recursive doubling: partners swap everything they hold.
    for (int mask = 1; mask < s; mask <<= 1) {
      int partner = k ^ mask;
      Posted in;
      recv_chunks(in, partner & ~(mask - 1), mask, partner);
      send_chunks(k & ~(mask - 1), mask, partner);
      co_await nb::wait(std::move(in));
    }
    co_return;
  }
  // Dissemination: member k holds chunks [k, k + have) mod s and gets the
  // next ones from k + have, which holds them as its first.
  for (int have = 1; have < s;) {
    int take = std::min(have, s - have);
    Posted in;
    recv_chunks(in, (k + have) % s, take, (k + have) % s);
    send_chunks(k, take, (k - have + s) % s);
    co_await nb::wait(std::move(in));
    have += take;
  }
}

}  // namespace

nb::Task hybrid_schedule(std::byte* data, std::size_t n, int d, Members members, int tag, core::Comm& comm) {
  const int size = members.size;
  if (size <= 1 || n == 0) co_return;
  if (d < 1 || d > size) throw MpiError(MPI_ERR_INTERN, "hybrid delivery: d outside 1..group size");
  const Pieces p{data, Split{n, d}};
  const int me = members.me;
  const int groups = (size + d - 1) / d;
  auto group_size = [&](int g) { return std::min(d, size - g * d); };
  const int g = me / d, k = me % d;
  Posted sends;

  // 1. Scatter inside group 0 (always full: d <= size).
  if (g == 0) co_await scatter(p, d, members, tag, comm, sends);

  // 2. Binomial tree over the groups: member k of a full group has piece k.
  //    Only the last group may be smaller, and the last node of a binomial
  //    tree is a leaf, so every sender is in a full group.
  int mask = 1;
  if (g > 0) {
    mask = lowest_bit(g);
    const int parent = (g - mask) * d;
    const Chunks mine{d, group_size(g)};
    Posted in;
    for (int piece = mine.first(k); piece < mine.first(k + 1); ++piece)
      post_recv(in, p, piece, piece + 1, members.rank(parent + piece), tag, comm);
    co_await nb::wait(std::move(in));
  } else {
    mask = ceil_power_of_two(groups);
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int child = g + mask;
    if (child >= groups) continue;
    const Chunks theirs{d, group_size(child)};
    post_send(sends, p, k, k + 1, members.rank(child * d + theirs.owner(k)), tag, comm);
  }

  // 3. Collect inside each group.
  co_await collect(p, Chunks{d, group_size(g)}, g * d, k, g == 0, members, tag, comm, sends);
  co_await nb::wait(std::move(sends));
}

nb::Task ring_schedule(std::byte* data, std::size_t n, Members members, int tag, core::Comm& comm) {
  const int size = members.size;
  if (size <= 1 || n == 0) co_return;
  const Pieces p{data, Split{n, size}};
  const int me = members.me;
  Posted sends;
  co_await scatter(p, size, members, tag, comm, sends);
  // Step s: index i passes piece i - s to its right neighbour.  Index 0 has
  // every piece, so its left neighbour does not send to it.
  const int right = (me + 1) % size, left = (me - 1 + size) % size;
  for (int step = 0; step < size - 1; ++step) {
    int out = (me - step + size) % size, in_piece = (me - step - 1 + size) % size;
    Posted in;
    if (me != 0) post_recv(in, p, in_piece, in_piece + 1, members.rank(left), tag, comm);
    if (right != 0) post_send(sends, p, out, out + 1, members.rank(right), tag, comm);
    co_await nb::wait(std::move(in));
  }
  co_await nb::wait(std::move(sends));
}

void deliver_hybrid(std::byte* data, std::size_t n, int d, const Members& members, int tag, core::Comm& comm) {
  nb::run(hybrid_schedule(data, n, d, members, tag, comm));
}

void deliver_ring(std::byte* data, std::size_t n, const Members& members, int tag, core::Comm& comm) {
  nb::run(ring_schedule(data, n, members, tag, comm));
}

}  // namespace gridmpi::coll
