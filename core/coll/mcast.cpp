#include "core/coll/mcast.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/error.hpp"
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/delivery.hpp"
#include "core/coll/impi_util.hpp"
#include "core/coll/model.hpp"
#include "core/coll/util.hpp"
#include "core/job_layout.hpp"
#include "core/runtime.hpp"
#include "request/request.hpp"

namespace gridmpi::coll::mcast {

namespace {

constexpr std::uint32_t magic = 0x474d4331;  // "GMC1"
constexpr std::size_t fixed_bytes = 32;

enum class Algorithm : std::uint8_t { hybrid = 0, ring = 1, linear = 2 };

struct Header {
  std::uint32_t root = 0;
  std::uint32_t sequence = 0;
  std::uint64_t bytes = 0;  // of the stream
  Algorithm algorithm = Algorithm::hybrid;
  bool external = false;  // the stream is external32 (the communicator spans clusters)
  std::uint32_t d = 1;
  std::uint32_t comm_size = 0;
  std::vector<std::uint8_t> bitmap;  // bit r (byte r/8, bit r%8): rank r is a target
};

std::size_t header_size(int comm_size) { return fixed_bytes + (static_cast<std::size_t>(comm_size) + 7) / 8; }

void put32(std::byte* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}
void put64(std::byte* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}
std::uint32_t get32(const std::byte* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}
std::uint64_t get64(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

std::vector<std::byte> encode(const Header& h) {
  std::vector<std::byte> out(header_size(static_cast<int>(h.comm_size)));
  put32(&out[0], magic);
  put32(&out[4], h.root);
  put32(&out[8], h.sequence);
  put64(&out[12], h.bytes);
  out[20] = static_cast<std::byte>(h.algorithm);
  out[21] = static_cast<std::byte>(h.external ? 1 : 0);
  put32(&out[24], h.d);
  put32(&out[28], h.comm_size);
  std::memcpy(&out[fixed_bytes], h.bitmap.data(), h.bitmap.size());
  return out;
}

Header decode(const std::vector<std::byte>& in, int comm_size) {
  Header h;
  if (get32(&in[0]) != magic || get32(&in[28]) != static_cast<std::uint32_t>(comm_size))
    throw MpiError(MPI_ERR_INTERN, "multicast: a header that is not ours (another root's library version?)");
  h.root = get32(&in[4]);
  h.sequence = get32(&in[8]);
  h.bytes = get64(&in[12]);
  h.algorithm = static_cast<Algorithm>(in[20]);
  h.external = in[21] != std::byte{0};
  h.d = get32(&in[24]);
  h.comm_size = get32(&in[28]);
  h.bitmap.resize(in.size() - fixed_bytes);
  std::memcpy(h.bitmap.data(), &in[fixed_bytes], h.bitmap.size());
  return h;
}

// The stream of (buf, count, type): native packed bytes, or external32
// when the communicator spans clusters (of possibly other byte orders).
std::size_t stream_size(int count, MPI_Datatype type, bool external) {
  return external ? impi::ext_size(count, type) : packed_size(count, type);
}

// Ring or hybrid d for n bytes over m members: forced by
// GRIDMPI_BCAST_ALGORITHM where it names a delivery, else the cost model.
model::Choice choose(std::size_t n, const std::vector<int>& members, const core::Comm& comm) {
  const int m = static_cast<int>(members.size());
  model::Choice forced;
  if (forced_bcast_delivery(m, &forced.ring, &forced.d)) return forced;
  std::vector<int> world(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) world[i] = comm.group->world_rank(members[i]);
  return model::choose(n, m, model::for_members(world.data(), m));
}

// The members of a multicast: the root, then its targets cluster by cluster
// (the root's cluster first), by rank inside each: the deliveries' trees
// and groups take consecutive members, so the message crosses between
// clusters on few edges.  Root and targets order them alike from the
// bitmap and the job layout.
std::vector<int> members_of(int root, std::vector<int> targets, const core::Comm& comm) {
  const core::JobLayout& layout = core::job_layout();
  if (layout.multi_client()) {
    const int home = layout.client(comm.group->world_rank(root));
    auto key = [&](int r) {
      const int c = layout.client(comm.group->world_rank(r));
      return std::pair<int, int>(c == home ? -1 : c, r);
    };
    std::sort(targets.begin(), targets.end(), [&](int a, int b) { return key(a) < key(b); });
  }
  std::vector<int> members{root};
  members.insert(members.end(), targets.begin(), targets.end());
  return members;
}

// The root sends the whole message to every other member (the crowded
// host's choice, as MPI_Bcast's: every receiver copies at once).
nb::Task linear_schedule(std::byte* data, std::size_t n, std::vector<int> members, int me, core::Comm& comm, int tag) {
  std::vector<request::Request*> r;
  if (n == 0) co_return;
  constexpr std::size_t step = INT_MAX;  // a message's count is an int
  for (std::size_t done = 0; done < n; done += step) {
    const int count = byte_count(std::min(step, n - done));
    if (me == 0) {
      for (std::size_t i = 1; i < members.size(); ++i)
        r.push_back(isend(data + done, count, MPI_BYTE, members[i], tag, comm));
    } else {
      r.push_back(irecv(data + done, count, MPI_BYTE, members[0], tag, comm));
    }
  }
  co_await nb::wait(std::move(r));
}

nb::Task run(std::byte* data, std::size_t n, Algorithm algorithm, int d, const std::vector<int>& members, int me,
             int tag, core::Comm& comm) {
  const Members m{members.data(), static_cast<int>(members.size()), 0, me};
  if (algorithm == Algorithm::linear) return linear_schedule(data, n, members, me, comm, tag);
  if (algorithm == Algorithm::ring) return ring_schedule(data, n, m, tag, comm);
  return hybrid_schedule(data, n, std::min(d, m.size), m, tag, comm);
}

// The members cut cluster by cluster (they are ordered so): each part starts
// with its source, the root in the root's cluster, else the part's first
// member (its leader).
std::vector<std::vector<int>> parts_of(const std::vector<int>& members, const core::Comm& comm) {
  const core::JobLayout& layout = core::job_layout();
  std::vector<std::vector<int>> parts;
  int last = -1;
  for (int r : members) {
    const int c = layout.client(comm.group->world_rank(r));
    if (parts.empty() || c != last) parts.emplace_back();
    parts.back().push_back(r);
    last = c;
  }
  return parts;
}

// Inside one cluster: one delivery over the members (the header's
// algorithm).  Across clusters: first over the root and the leaders (the
// header's algorithm: each byte crosses between clusters about once, in
// chunks), then inside each cluster from its source (the part's own choice,
// by the same model over its members: a cluster's processes share their
// configuration, as every collective's choice assumes).
nb::Task deliver(std::byte* data, std::size_t n, const Header& h, const std::vector<int>& members, int me,
                 core::Comm& comm) {
  const int tag = data_tag(h.sequence, static_cast<int>(h.root), comm.size);
  const std::vector<std::vector<int>> parts = comm.clients ? parts_of(members, comm) : std::vector<std::vector<int>>{};
  if (parts.size() <= 1) {
    co_await run(data, n, h.algorithm, static_cast<int>(h.d), members, me, tag, comm);
    co_return;
  }
  std::vector<int> leaders;
  for (const auto& part : parts) leaders.push_back(part.front());
  const int rank = members[static_cast<std::size_t>(me)];
  auto at = std::find(leaders.begin(), leaders.end(), rank);
  if (at != leaders.end())
    co_await run(data, n, h.algorithm, static_cast<int>(h.d), leaders, static_cast<int>(at - leaders.begin()), tag,
                 comm);
  for (const auto& part : parts) {
    auto mine = std::find(part.begin(), part.end(), rank);
    if (mine == part.end()) continue;
    const model::Choice local = choose(n, part, comm);
    co_await run(data, n, local.ring ? Algorithm::ring : Algorithm::hybrid, local.d, part,
                 static_cast<int>(mine - part.begin()), tag, comm);
  }
}

}  // namespace

int data_tag(std::uint32_t sequence, int root, int comm_size) {
  // Sequence numbers wrap after `window` multicasts of one root: far more
  // than can be in flight at once.
  const std::uint32_t span = static_cast<std::uint32_t>(header_tag) - 2;
  const std::uint32_t window = std::max<std::uint32_t>(1, span / static_cast<std::uint32_t>(comm_size));
  return header_tag + 1 + static_cast<int>((sequence % window) * static_cast<std::uint32_t>(comm_size)) + root;
}

std::vector<int> checked_targets(const int* targets, int count, const core::Comm& comm) {
  if (count < 0) throw MpiError(MPI_ERR_ARG, fmt::format("ntargets is {}; give 0 or more target ranks", count));
  if (count > 0 && targets == nullptr) throw MpiError(MPI_ERR_ARG, "targets is NULL with ntargets > 0");
  std::vector<int> out(targets, targets + count);
  for (int i = 0; i < count; ++i) {
    const int r = out[static_cast<std::size_t>(i)];
    if (r < 0 || r >= comm.size)
      throw MpiError(MPI_ERR_RANK, fmt::format("targets[{}] is {}, not a rank of the communicator (0..{})", i, r,
                                               comm.size - 1));
    if (r == comm.rank)
      throw MpiError(MPI_ERR_RANK, fmt::format("targets[{}] is {}, the root itself; list only the other ranks", i, r));
    const core::JobLayout& layout = core::job_layout();
    const int client = layout.client(comm.group->world_rank(r));
    if (!layout.lam_client.empty() && layout.lam_client[static_cast<std::size_t>(client)])
      throw MpiError(MPI_ERR_RANK, fmt::format("targets[{}] is {}, a process of a LAM/MPI cluster, which has no "
                                               "dynamic multicast; multicast only to gridmpi processes",
                                               i, r));
  }
  std::sort(out.begin(), out.end());
  auto dup = std::adjacent_find(out.begin(), out.end());
  if (dup != out.end())
    throw MpiError(MPI_ERR_RANK, fmt::format("rank {} is listed twice in targets; list each target once", *dup));
  return out;
}

nb::Task send(const void* buf, int count, MPI_Datatype type, std::vector<int> targets, core::Comm& comm) {
  Header h;
  h.root = static_cast<std::uint32_t>(comm.rank);
  h.sequence = comm.mcast_sequence++;
  h.external = comm.clients != nullptr;
  h.bytes = stream_size(count, type, h.external);
  h.comm_size = static_cast<std::uint32_t>(comm.size);
  h.bitmap.assign((static_cast<std::size_t>(comm.size) + 7) / 8, 0);
  for (int t : targets) h.bitmap[static_cast<std::size_t>(t) / 8] |= static_cast<std::uint8_t>(1u << (t % 8));
  if (targets.empty()) co_return;
  const std::vector<int> members = members_of(comm.rank, targets, comm);
  // Across clusters the header's choice is for the root and the leaders.
  std::vector<int> first_hop;
  if (comm.clients)
    for (const auto& part : parts_of(members, comm)) first_hop.push_back(part.front());
  const model::Choice choice = choose(h.bytes, first_hop.size() > 1 ? first_hop : members, comm);
  h.algorithm = choice.ring ? Algorithm::ring : Algorithm::hybrid;
  // A crowded host over shared memory: linear, as MPI_Bcast there (unless an
  // algorithm is forced).
  if (first_hop.size() <= 1 && forced_algorithm<Kind::bcast>() == nullptr && crowded_linear_bcast(h.bytes, comm))
    h.algorithm = Algorithm::linear;
  h.d = static_cast<std::uint32_t>(choice.ring ? members.size() : static_cast<std::size_t>(choice.d));
  const std::vector<std::byte> header = encode(h);
  std::vector<request::Request*> headers;
  for (int t : targets) headers.push_back(isend(header.data(), static_cast<int>(header.size()), MPI_BYTE, t,
                                                header_tag, comm));
  if (h.external) {
    Bytes stream(h.bytes);
    impi::pack_ext(buf, count, type, stream.data());
    co_await deliver(stream.data(), h.bytes, h, members, 0, comm);
  } else {
    PackedInput data(buf, count, type);
    co_await deliver(const_cast<std::byte*>(data.data()), h.bytes, h, members, 0, comm);  // only read
  }
  co_await nb::wait(std::move(headers));
}

void cancel_recv(RecvControl& control) {
  core::Runtime& rt = core::runtime();
  if (control.header != nullptr && rt.engine && rt.engine->cancel(control.header)) control.cancelled = true;
}

nb::Task recv(void* buf, int count, MPI_Datatype type, int root, core::Comm& comm,
              std::shared_ptr<MPI_Status> status, std::shared_ptr<RecvControl> control) {
  std::vector<std::byte> raw(header_size(comm.size));
  request::Request* header = irecv(raw.data(), static_cast<int>(raw.size()), MPI_BYTE, root, header_tag, comm);
  if (control) control->header = header;
  co_await nb::wait(header);  // releases it
  if (control) {
    control->header = nullptr;
    if (control->cancelled) {
      status->MPI_SOURCE = MPI_ANY_SOURCE;
      status->MPI_TAG = MPI_ANY_TAG;
      status->MPI_ERROR = MPI_SUCCESS;
      status->gridmpi_count = 0;
      status->gridmpi_cancelled = 1;
      co_return;
    }
  }
  const Header h = decode(raw, comm.size);
  std::vector<int> targets;
  for (int r = 0; r < comm.size; ++r) {
    if (r != static_cast<int>(h.root) && (h.bitmap[static_cast<std::size_t>(r) / 8] & (1u << (r % 8))))
      targets.push_back(r);
  }
  const std::vector<int> members = members_of(static_cast<int>(h.root), std::move(targets), comm);
  const int me = static_cast<int>(std::find(members.begin(), members.end(), comm.rank) - members.begin());
  if (me == 0 || me >= static_cast<int>(members.size()) || h.d < 1 || h.d > members.size() ||
      static_cast<int>(h.algorithm) > static_cast<int>(Algorithm::linear))
    throw MpiError(MPI_ERR_INTERN, fmt::format("multicast {} of rank {}: a header this process cannot follow",
                                               h.sequence, h.root));
  const std::size_t n = h.bytes;
  const std::size_t element = stream_size(1, type, h.external);
  const std::size_t capacity = stream_size(count, type, h.external);
  const int elements = element == 0 ? 0 : static_cast<int>(std::min<std::size_t>(n, capacity) / element);
  if (!h.external && n <= capacity && element > 0 && n % element == 0) {
    PackedOutput out(buf, elements, type);  // the user's memory when the type is contiguous
    co_await deliver(out.data(), n, h, members, me, comm);
    out.finish();
  } else {
    Bytes stream(n);
    co_await deliver(stream.data(), n, h, members, me, comm);
    if (h.external)
      impi::unpack_ext(stream.data(), elements, type, buf);
    else
      unpack(stream.data(), elements, type, buf);
  }
  status->MPI_SOURCE = static_cast<int>(h.root);
  status->MPI_TAG = 0;
  status->MPI_ERROR = MPI_SUCCESS;
  status->gridmpi_cancelled = 0;
  status->gridmpi_count = static_cast<long long>(h.external ? packed_size(elements, type) : std::min(n, capacity));
  if (n > capacity)
    throw MpiError(MPI_ERR_TRUNCATE, fmt::format("multicast from rank {}: {} bytes into a buffer of {}", h.root, n,
                                                 capacity));
}

}  // namespace gridmpi::coll::mcast
