// Communicators: the handle table, context-id agreement, and the
// constructors (dup, split, create, create_group, intercommunicator create
// and merge) and destructor (free).
//
// Context ids must be equal in every member and unique among the live
// communicators of each process.  Each process keeps a bitmap of free id
// pairs (ContextPool); a constructor ANDs the bitmaps of all the parent's
// processes with one allreduce on the parent (coll::allreduce runs on the
// parent's collective context, so it cannot meet user messages) and takes
// the lowest common pair.  Processes that get MPI_COMM_NULL take part but
// reserve nothing.  Intercommunicators AND the masks of each side on its
// local communicator, the two leaders exchange theirs, and each side
// broadcasts the result.
//
// Multi-client (IMPI) jobs replace the mask by the IMPI rule
// (docs/impi-protocol.md 9): the agreed value is the MAX of every
// participant's highest used id (impi_max_context), new ids are max+1,
// max+2, ... and every participant moves its maximum past them.  The same
// code paths carry either value (an "offer": 64 mask words combined with
// AND, or one word combined with MAX); see core/README.md.
#include <algorithm>
#include <bit>
#include <exception>
#include <functional>

#include <fmt/format.h>

#include "conf/log.hpp"
#include "core/attr.hpp"
#include "core/big_lock.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/inter_local.hpp"
#include "core/coll/nbc.hpp"
#include "core/coll/nbc_intra.hpp"
#include "core/coll/util.hpp"
#include "core/errhandler.hpp"
#include "core/group.hpp"
#include "core/job_layout.hpp"
#include "core/runtime.hpp"
#include "request/request.hpp"

namespace gridmpi::core {

namespace {

// ---- the IMPI context-id rule (multi-client jobs) ----
// Highest id used or skipped here: MPI_COMM_WORLD 0/1, MPI_COMM_SELF 2/3 and
// MPI_COMM_WORLD's client-local part 4/5 (runtime.cpp).
std::uint64_t impi_max = 5;

bool impi_ids() noexcept { return job_layout().multi_client(); }

// Non-blocking agreements (MPI_Comm_idup) under way in this process.  While
// one is, this process's free ids may change while a blocking agreement
// waits (the engine progresses the idup's schedule), so a blocking
// agreement must confirm its candidate, as under MPI_THREAD_MULTIPLE.
int pending_nb_agreements = 0;
bool must_confirm_here() { return big_lock().enabled() || pending_nb_agreements > 0; }

// Under the IMPI rule, a process that must confirm sets this bit of its
// offer (a MAX of values below 2^31 keeps it if anyone set it).
constexpr std::uint64_t impi_confirm_bit = std::uint64_t{1} << 62;

// What a process contributes to a context agreement, combined over every
// participant: the free mask (AND) with the ContextPool, its highest id
// (MAX) under the IMPI rule; plus whether it must confirm the candidate
// (pool: a last word, all ones when not, so that AND tells whether anyone
// must; IMPI rule: impi_confirm_bit), so that every participant takes the
// same path.
using Offer = std::vector<std::uint64_t>;
Offer my_offer() {
  const bool confirm = must_confirm_here();
  if (impi_ids()) return {impi_max | (confirm ? impi_confirm_bit : 0)};
  const ContextPool::Mask& mask = context_pool().free_mask();
  Offer offer(mask.begin(), mask.end());
  offer.push_back(confirm ? 0 : ~std::uint64_t{0});
  return offer;
}
int offer_words() { return impi_ids() ? 1 : ContextPool::words + 1; }
// Whether a combined offer asks every participant to confirm.
bool offer_confirms(const Offer& agreed) {
  if (impi_ids()) return (agreed.at(0) & impi_confirm_bit) != 0;
  return agreed.at(ContextPool::words) != ~std::uint64_t{0};
}
MPI_Op offer_op() { return impi_ids() ? MPI_MAX : MPI_BAND; }
void combine(std::uint64_t* into, const std::uint64_t* other, int count) {
  const bool max = impi_ids();
  for (int i = 0; i < count; ++i) into[i] = max ? std::max(into[i], other[i]) : into[i] & other[i];
}

void require_intra(const Comm& c, const char* operation) {
  if (c.is_inter())
    throw MpiError(MPI_ERR_COMM, fmt::format("{} on an intercommunicator is not supported yet", operation));
}

// ---- begin MPI_THREAD_MULTIPLE context agreement (owner: threads) ----
// With MPI_THREAD_MULTIPLE, two threads of a process may create
// communicators from different parents at once, and the big lock is
// released while the allreduce waits: both may agree on the same free pair.
// So each round reserves its candidate tentatively where it is still free
// and confirms with a second combination (AND of "it was free here");
// on failure the tentative reservations are undone and the next round
// picks a candidate that depends on the parent's context id, so that two
// parents colliding once do not keep colliding.  The same rounds run when a
// participant has a non-blocking agreement (MPI_Comm_idup) under way
// (must_confirm_here), and always in the non-blocking agreement itself.
std::uint32_t pick_candidate(const ContextPool::Mask& agreed, std::uint32_t parent_context, int round) {
  int total = 0;
  for (std::uint64_t w : agreed) total += std::popcount(w);
  if (round == 0 || total == 0) return context_pool().take_lowest(agreed, false);
  std::uint64_t h = (std::uint64_t{parent_context} << 20) ^ static_cast<std::uint64_t>(round);
  h *= 0x9e3779b97f4a7c15ull;
  int k = static_cast<int>((h >> 32) % static_cast<std::uint64_t>(total));
  for (int w = 0; w < ContextPool::words; ++w) {
    int n = std::popcount(agreed[w]);
    if (k >= n) {
      k -= n;
      continue;
    }
    std::uint64_t bits = agreed[w];
    for (; k > 0; --k) bits &= bits - 1;  // drop the k lowest set bits
    return static_cast<std::uint32_t>(2 * (w * 64 + std::countr_zero(bits)));
  }
  return context_pool().take_lowest(agreed, false);
}

// ---- end MPI_THREAD_MULTIPLE context agreement ----

int my_world_rank() { return runtime().world_rank; }

// Leaders of the two sides of an intercommunicator talk on its collective
// context with this tag (create_group's tags on a parent's collective
// context are (1 << 30) | tag too, but intercommunicators are never parents
// of create_group).
constexpr int leader_tag = 1 << 30;

void clear_pair(ContextPool::Mask& mask, std::uint32_t context_id) {
  std::uint32_t pair = context_id / 2;
  mask[pair / 64] &= ~(std::uint64_t{1} << (pair % 64));
}

// Send-receive with one peer of c on an explicit context (MPI_Intercomm_create
// runs the leaders' exchange on peer_comm's point-to-point context, with the
// user's tag, as the standard prescribes).
void exchange_with(Comm& c, std::uint32_t context, int peer, int tag, const void* out, int out_count, void* in,
                   int in_count, MPI_Datatype type) {
  request::Engine& e = *runtime().engine;
  request::Request* rr = e.irecv(in, in_count, type, peer, tag, c, context);
  request::Request* sr = nullptr;
  try {
    sr = e.isend(out, out_count, type, peer, tag, c, context, request::SendMode::standard);
  } catch (...) {
    if (e.cancel(rr)) e.release(rr);
    throw;
  }
  e.wait_until([&] { return rr->complete && sr->complete; });
  int error = rr->error != MPI_SUCCESS ? rr->error : sr->error;
  e.release(rr);
  e.release(sr);
  if (error != MPI_SUCCESS)
    throw MpiError(error, fmt::format("exchange with rank {} (tag {}) failed: {}", peer, tag, error_string(error)));
}

// ---- begin MPI_THREAD_MULTIPLE context agreement, other paths (owner: threads) ----
// Agreements that are not one allreduce on one intracommunicator
// (intercommunicators, MPI_Comm_create_group) get the same protection as
// agree_on_context_threaded.  and_all combines `count` offer words in place
// over every process taking part (AND of masks, or MAX under the IMPI rule).
using AndAll = std::function<void(std::uint64_t* words, int count)>;

// The IMPI rule: `pairs` id pairs above `agreed` (the MAX of every
// participant's impi_max): agreed+1/+2, agreed+3/+4, ...; every participant
// (members or not) moves its maximum to the top.  Under
// MPI_THREAD_MULTIPLE another thread of a process may have allocated above
// `agreed` while the agreement waited: a confirmation round (MAX of "not
// free here"; not part of IMPI, see core/README.md) then fails and all
// agree again above everybody's new maximum.
// After a failed confirmation round: what this process proposes next, a
// step above its maximum drawn from the agreement's seed (equal in every
// process) and the round.  Concurrent agreements that failed together
// (each reserved first on some processes: their order differs between
// processes) would meet again if all restarted from the same maximum, and
// could go on failing for ever; with steps, the one that agrees on the
// highest value is free everywhere, whatever the order.
std::uint64_t impi_retry_offer(std::uint32_t seed, std::uint32_t round, int pairs) {
  const std::uint64_t step = (seed * 0x9e3779b9u + round * 0x85ebca6bu) >> 29;  // 0..7
  return impi_max + 2 * static_cast<std::uint64_t>(pairs) * step;
}

std::vector<std::uint32_t> settle_impi(std::uint64_t agreed, int pairs, bool member, bool threaded, std::uint32_t seed,
                                       const AndAll& and_all) {
  for (std::uint32_t round = 1;; ++round) {
    const std::uint64_t top = agreed + 2 * static_cast<std::uint64_t>(pairs);
    if (top >= (std::uint64_t{1} << 31))
      throw MpiError(MPI_ERR_INTERN, fmt::format("out of communicator context ids: the IMPI rule asks for ids up "
                                                 "to {}, beyond the 31 bits used here (too many communicators "
                                                 "created in this job)",
                                                 top));
    const bool free_here = !member || impi_max <= agreed;
    if (!threaded && !free_here)
      throw MpiError(MPI_ERR_INTERN, "the agreed communicator context id is already in use here");
    if (free_here) impi_max = std::max(impi_max, top);
    bool ok = free_here;
    if (threaded) {
      std::uint64_t busy_somewhere = free_here ? 0 : 1;
      and_all(&busy_somewhere, 1);
      ok = busy_somewhere == 0;
    }
    if (ok) {
      std::vector<std::uint32_t> ids;
      for (int k = 0; k < pairs; ++k) ids.push_back(static_cast<std::uint32_t>(agreed + 1 + 2 * k));
      return ids;
    }
    std::uint64_t mine = impi_retry_offer(seed, round, pairs);
    and_all(&mine, 1);
    agreed = mine;
  }
}

// Takes n distinct id pairs from `agreed` (a mask already ANDed over every
// process), reserved here when member.  Under MPI_THREAD_MULTIPLE another
// thread may have taken one of them while the agreement waited: every
// process then says whether its pairs were still free, and on failure all
// agree again on a fresh mask with candidates seeded by `seed` (equal in
// every process).  Under the IMPI rule (`agreed` is then one word) the
// result has one more pair, for the client-local part of the last
// intracommunicator made from them (attach_client_comm).
std::vector<std::uint32_t> settle_contexts(const Offer& offer, int n, bool member, std::uint32_t seed,
                                           const AndAll& and_all) {
  // Confirmation rounds when any participant asked for them (my_offer).
  const bool threaded = offer_confirms(offer);
  if (impi_ids()) return settle_impi(offer.at(0) & ~impi_confirm_bit, n + 1, member, threaded, seed, and_all);
  ContextPool::Mask agreed{};
  std::copy(offer.begin(), offer.begin() + ContextPool::words, agreed.begin());
  ContextPool& pool = context_pool();
  for (int round = 0;; ++round) {
    if (round > 0) {
      agreed = pool.free_mask();
      and_all(agreed.data(), ContextPool::words);
    }
    std::vector<std::uint32_t> ids;
    ContextPool::Mask rest = agreed;
    for (int k = 0; k < n; ++k) {
      ids.push_back(pick_candidate(rest, seed, round == 0 ? 0 : round * n + k));
      clear_pair(rest, ids.back());
    }
    bool free_here = !member || std::all_of(ids.begin(), ids.end(), [&](std::uint32_t id) { return pool.is_free(id); });
    if (!threaded && !free_here)
      throw MpiError(MPI_ERR_INTERN, "the agreed communicator context id is already in use here");
    if (member && free_here)
      for (std::uint32_t id : ids) pool.reserve(id);
    if (!threaded) return ids;
    std::uint64_t free_everywhere = free_here ? 1 : 0;
    and_all(&free_everywhere, 1);
    if (free_everywhere) return ids;
    if (member && free_here)
      for (std::uint32_t id : ids) pool.release(id);
  }
}

// AND (MAX) over both groups of an intercommunicator that is being built or
// used: each group combines on `local`, the leaders swap results over
// (peer, context, tag), and each leader broadcasts the result in its group.
void and_across(Comm& local, int leader, Comm& peer, std::uint32_t context, int remote_leader, int tag,
                std::uint64_t* words, int count) {
  std::vector<std::uint64_t> mine(words, words + count);
  if (local.size > 1) coll::allreduce(mine.data(), words, count, MPI_UINT64_T, offer_op(), local);
  if (local.rank == leader) {
    std::vector<std::uint64_t> theirs(static_cast<std::size_t>(count));
    std::copy(words, words + count, mine.begin());
    exchange_with(peer, context, remote_leader, tag, mine.data(), count, theirs.data(), count, MPI_UINT64_T);
    combine(words, theirs.data(), count);
  }
  if (local.size > 1) coll::bcast(words, count, MPI_UINT64_T, leader, local);
}

AndAll and_over(Comm& intercomm) {
  return [&intercomm](std::uint64_t* words, int count) {
    and_across(comm(intercomm.local_comm), 0, intercomm, intercomm.coll_context(), 0, leader_tag, words, count);
  };
}
// ---- end MPI_THREAD_MULTIPLE context agreement, other paths ----

// The ids of a new intracommunicator made from parent: one pair from the
// ContextPool (AND of the free masks over parent), or under the IMPI rule
// the pair of the MAX allreduce over parent (run with parent's collectives, the IMPI ones
// when parent spans clients) and a second pair for its client-local part.
std::vector<std::uint32_t> agree_on_contexts(Comm& parent, bool member) {
  ContextPool& pool = context_pool();
  // Alone: the lowest pair free here (nothing can take it meanwhile).
  if (!impi_ids() && parent.size == 1) return {pool.take_lowest(pool.free_mask(), member)};
  // Errors propagate as MpiError: the calling MPI function reports them once.
  AndAll all = [&parent](std::uint64_t* words, int count) {
    if (parent.size == 1) return;
    std::vector<std::uint64_t> mine(words, words + count);
    coll::allreduce(mine.data(), words, count, MPI_UINT64_T, offer_op(), parent);
  };
  Offer offer = my_offer();
  all(offer.data(), offer_words());
  return settle_contexts(offer, 1, member, parent.context_id, all);
}

// An intracommunicator from agreed ids (agree_on_contexts, settle_contexts):
// ids[0] is its pair, ids[1] (IMPI rule) the pair of its client-local part.
Comm& make_intra(const std::vector<std::uint32_t>& ids, std::shared_ptr<Group> group) {
  Comm& c = make_comm(MPI_COMM_NULL, ids.at(0), std::move(group));
  if (ids.size() > 1) attach_client_comm(c, ids[1]);
  return c;
}

// An intercommunicator and its hidden local intracommunicator, from two
// agreed and reserved context ids (the same in both groups; the groups are
// disjoint, so the second id can serve both sides' local communicators),
// and under the IMPI rule a third for the local one's client-local part.
MPI_Comm make_intercomm(const std::vector<std::uint32_t>& ids, std::shared_ptr<Group> local,
                        std::shared_ptr<Group> remote) {
  std::uint32_t inter_id = ids.at(0);
  std::uint32_t local_id = ids.at(1);
  Comm& local_comm = make_comm(MPI_COMM_NULL, local_id, local);
  local_comm.name = "intercommunicator local group";
  if (ids.size() > 2) attach_client_comm(local_comm, ids[2]);
  Comm& inter = make_comm(MPI_COMM_NULL, inter_id, std::move(local));
  inter.remote_group = std::move(remote);
  inter.local_comm = local_comm.handle;
  return inter.handle;
}

// The offers of every process on both sides of intercomm combined (AND of
// the free masks, or the MAX of the IMPI maxima), plus the remote side's
// `value` (one int from its leader), known everywhere.
std::pair<Offer, int> agree_across(Comm& intercomm, int value) {
  Comm& local = comm(intercomm.local_comm);
  const int words = offer_words();
  Offer offer = my_offer();
  if (local.size > 1) {
    Offer mine = offer;
    coll::allreduce(mine.data(), offer.data(), words, MPI_UINT64_T, offer_op(), local);
  }
  // The offer words, then the leader's value.
  std::vector<std::uint64_t> message(static_cast<std::size_t>(words) + 1);
  if (local.rank == 0) {
    std::vector<std::uint64_t> mine = offer;
    mine.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(value)));
    exchange_with(intercomm, intercomm.coll_context(), 0, leader_tag, mine.data(), words + 1, message.data(),
                  words + 1, MPI_UINT64_T);
    combine(message.data(), offer.data(), words);
  }
  if (local.size > 1) coll::bcast(message.data(), words + 1, MPI_UINT64_T, 0, local);
  std::copy(message.begin(), message.begin() + words, offer.begin());
  return {offer, static_cast<int>(static_cast<std::int64_t>(message[static_cast<std::size_t>(words)]))};
}

// Intercommunicators: every local process passes the same `mine`; every
// process gets the remote side's (the leaders swap them on the collective
// context, then each leader broadcasts in its group).
std::vector<std::int64_t> swap_with_remote(Comm& intercomm, std::vector<std::int64_t> mine) {
  Comm& local = comm(intercomm.local_comm);
  std::int64_t remote_size = 0;
  std::vector<std::int64_t> theirs;
  if (local.rank == 0) {
    auto my_size = static_cast<std::int64_t>(mine.size());
    exchange_with(intercomm, intercomm.coll_context(), 0, leader_tag, &my_size, 1, &remote_size, 1, MPI_INT64_T);
    theirs.resize(static_cast<std::size_t>(remote_size));
    exchange_with(intercomm, intercomm.coll_context(), 0, leader_tag, mine.data(), static_cast<int>(mine.size()),
                  theirs.data(), static_cast<int>(remote_size), MPI_INT64_T);
  }
  if (local.size > 1) {
    coll::bcast(&remote_size, 1, MPI_INT64_T, 0, local);
    theirs.resize(static_cast<std::size_t>(remote_size));
    coll::bcast(theirs.data(), static_cast<int>(remote_size), MPI_INT64_T, 0, local);
  }
  return theirs;
}

// MPI_Comm_split on an intercommunicator (MPI-3.1 6.4.2): the local and
// remote processes of one color form a new intercommunicator, each side
// ordered by key; MPI_COMM_NULL when either side has none of the color.
MPI_Comm intercomm_split(Comm& parent, int color, int key) {
  Comm& local = comm(parent.local_comm);
  std::vector<int> color_key(2 * static_cast<size_t>(local.size));
  if (local.size == 1) {
    color_key = {color, key};
  } else {
    int mine[2] = {color, key};
    coll::allgather(mine, 2, MPI_INT, color_key.data(), 2, MPI_INT, local);
  }
  std::vector<std::int64_t> theirs = swap_with_remote(parent, std::vector<std::int64_t>(color_key.begin(), color_key.end()));
  // One mask free in every process of both sides: members of each color
  // take the lowest two pairs of it (the colors' process sets are disjoint).
  Offer agreed = agree_across(parent, 0).first;
  auto members_of = [&](const Group& g, auto key_color, int n) {
    std::vector<int> ranks;
    for (int r = 0; r < n; ++r)
      if (key_color(r).first == color) ranks.push_back(r);
    std::stable_sort(ranks.begin(), ranks.end(),
                     [&](int a, int b) { return key_color(a).second < key_color(b).second; });
    std::vector<int> members;
    for (int r : ranks) members.push_back(g.members[r]);
    return members;
  };
  std::vector<int> local_members, remote_members;
  if (color != MPI_UNDEFINED) {
    local_members = members_of(
        *parent.group, [&](int r) { return std::pair<int, int>(color_key[2 * r], color_key[2 * r + 1]); },
        local.size);
    remote_members = members_of(
        *parent.remote_group,
        [&](int r) {
          return std::pair<int, int>(static_cast<int>(theirs[2 * r]), static_cast<int>(theirs[2 * r + 1]));
        },
        parent.remote_group->size());
  }
  const bool member = color != MPI_UNDEFINED && !remote_members.empty();
  std::vector<std::uint32_t> ids = settle_contexts(agreed, 2, member, parent.context_id, and_over(parent));
  if (!member) return MPI_COMM_NULL;
  auto lg = std::make_shared<Group>(make_group(std::move(local_members), my_world_rank()));
  auto rg = std::make_shared<Group>(make_group(std::move(remote_members), my_world_rank()));
  return make_intercomm(ids, std::move(lg), std::move(rg));
}

// MPI_Comm_create on an intercommunicator (MPI-3.1 6.4.2): each side passes
// a subgroup of its local group; the result joins the two subgroups
// (MPI_COMM_NULL for non-members and when either subgroup is empty).
MPI_Comm intercomm_create_subset(Comm& parent, const Group& g) {
  for (int w : g.members)
    if (parent.group->rank_of_world(w) == MPI_UNDEFINED)
      throw MpiError(MPI_ERR_GROUP,
                     fmt::format("the group contains world rank {}, which is not in the local group", w));
  std::vector<std::int64_t> theirs =
      swap_with_remote(parent, std::vector<std::int64_t>(g.members.begin(), g.members.end()));
  Offer agreed = agree_across(parent, 0).first;
  const bool member = g.rank_of_world(my_world_rank()) != MPI_UNDEFINED && !theirs.empty();
  std::vector<std::uint32_t> ids = settle_contexts(agreed, 2, member, parent.context_id, and_over(parent));
  if (!member) return MPI_COMM_NULL;
  auto lg = std::make_shared<Group>(make_group(g.members, my_world_rank()));
  auto rg = std::make_shared<Group>(make_group(std::vector<int>(theirs.begin(), theirs.end()), my_world_rank()));
  return make_intercomm(ids, std::move(lg), std::move(rg));
}

}  // namespace

// ---- context pool -----------------------------------------------------------

ContextPool::ContextPool() { free_.fill(~std::uint64_t{0}); }

std::uint32_t ContextPool::take_lowest(const Mask& agreed, bool reserve_it) {
  for (int w = 0; w < words; ++w) {
    if (agreed[w] == 0) continue;
    int bit = std::countr_zero(agreed[w]);
    auto context_id = static_cast<std::uint32_t>(2 * (w * 64 + bit));
    if (reserve_it) reserve(context_id);
    return context_id;
  }
  throw MpiError(MPI_ERR_INTERN,
                 fmt::format("out of communicator context ids ({} communicators alive in some process); "
                             "free unused communicators with MPI_Comm_free",
                             words * 64));
}

void ContextPool::reserve(std::uint32_t context_id) {
  std::uint32_t pair = context_id / 2;
  if (pair >= words * 64u) throw MpiError(MPI_ERR_INTERN, fmt::format("context id {} out of range", context_id));
  free_[pair / 64] &= ~(std::uint64_t{1} << (pair % 64));
}

void ContextPool::release(std::uint32_t context_id) {
  std::uint32_t pair = context_id / 2;
  if (pair >= words * 64u) return;
  free_[pair / 64] |= std::uint64_t{1} << (pair % 64);
}

bool ContextPool::is_free(std::uint32_t context_id) const noexcept {
  std::uint32_t pair = context_id / 2;
  if (pair >= words * 64u) return false;
  return (free_[pair / 64] >> (pair % 64)) & 1;
}

ContextPool& context_pool() {
  static ContextPool pool;
  return pool;
}

// ---- table ------------------------------------------------------------------

void bad_comm(MPI_Comm handle) {
  Comm* c = comm_table().find(handle);
  if (!c) {
    if (handle == MPI_COMM_NULL) throw MpiError(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
    throw MpiError(MPI_ERR_COMM, fmt::format("invalid communicator {}", handle));
  }
  if (c->freed) throw MpiError(MPI_ERR_COMM, fmt::format("communicator {} has been freed", handle));
  if (c->incomplete)
    throw MpiError(MPI_ERR_COMM, fmt::format("communicator {} is not usable yet: the MPI_Comm_idup that makes it "
                                             "has not completed (wait for its request first)",
                                             handle));
  throw MpiError(MPI_ERR_COMM, fmt::format("invalid communicator {}", handle));
}

Comm& make_comm(MPI_Comm fixed_handle, std::uint32_t context_id, std::shared_ptr<Group> group) {
  auto obj = std::make_unique<Comm>();
  Comm* c = obj.get();
  c->context_id = context_id;
  c->rank = group->my_rank;
  c->size = group->size();
  c->group = std::move(group);
  if (fixed_handle != MPI_COMM_NULL) {
    comm_table().put_at(fixed_handle, std::move(obj));
    c->handle = fixed_handle;
  } else {
    c->handle = comm_table().add(std::move(obj));
  }
  log().debug("communicator {} created: context {}, size {}, rank {}", c->handle, c->context_id, c->size,
              c->rank);
  return *c;
}

void attach_client_comm(Comm& c, std::uint32_t client_context) {
  const JobLayout& layout = job_layout();
  if (!layout.multi_client() || c.is_inter() || c.rank == MPI_UNDEFINED) return;
  auto map = std::make_shared<ClientMap>(client_map(*c.group, layout));
  if (map->num_masters() < 2) return;
  std::vector<int> mine;
  for (int r : map->members[static_cast<std::size_t>(map->master_of[c.rank])]) mine.push_back(c.group->members[r]);
  // (MPI_Init calls this before the runtime is in place: no my_world_rank().)
  const int me = c.group->members[static_cast<std::size_t>(c.rank)];
  Comm& local = make_comm(MPI_COMM_NULL, client_context, std::make_shared<Group>(make_group(std::move(mine), me)));
  local.name = "client-local part of a multi-client communicator";
  // make_comm may grow the table; objects stay where they are, so c is valid.
  log().debug("communicator {} spans {} IMPI clients: client-local part {} (context {})", c.handle,
              map->num_masters(), local.handle, client_context);
  c.clients = std::move(map);
  c.client_comm = local.handle;
}

std::uint64_t impi_max_context() noexcept { return impi_max; }
void set_impi_max_context(std::uint64_t value) noexcept { impi_max = value; }

// ---- operations ---------------------------------------------------------------

int comm_compare(const Comm& a, const Comm& b) {
  if (a.handle == b.handle) return MPI_IDENT;
  if (a.is_inter() != b.is_inter()) return MPI_UNEQUAL;
  int local = group_compare(*a.group, *b.group);
  int result = local == MPI_IDENT ? MPI_CONGRUENT : local;
  if (a.is_inter()) {
    int remote = group_compare(*a.remote_group, *b.remote_group);
    int remote_result = remote == MPI_IDENT ? MPI_CONGRUENT : remote;
    result = std::max(result, remote_result);
  }
  return result;
}

// MPI-3.1 section 8.3: a new communicator inherits its parent's error
// handler (for MPI_Intercomm_create, local_comm's).  Owner: p2pdone.
static MPI_Comm inherit_errhandler(const Comm& parent, MPI_Comm child) {
  Comm& c = comm(child);
  retain_errhandler(parent.errhandler);
  release_errhandler(c.errhandler);
  c.errhandler = parent.errhandler;
  return child;
}

MPI_Comm comm_dup(Comm& parent) {
  MPI_Comm handle;
  if (parent.is_inter()) {
    Offer agreed = agree_across(parent, 0).first;
    handle = make_intercomm(settle_contexts(agreed, 2, true, parent.context_id, and_over(parent)), parent.group,
                            parent.remote_group);
  } else {
    handle = make_intra(agree_on_contexts(parent, true), parent.group).handle;
  }
  // The table holds objects by pointer: `parent` stays valid as it grows.
  Comm& c = comm(handle);
  c.errhandler = parent.errhandler;
  retain_errhandler(c.errhandler);
  c.info_hints = parent.info_hints;
  c.topology = parent.topology;  // MPI-3.1 7.4: duplicates keep the topology
  try {
    copy_comm_attributes(parent, c);
  } catch (...) {
    c.attributes.clear();  // what was copied has been deleted already
    c.attribute_order.clear();
    comm_free(handle);
    throw;
  }
  return handle;
}

MPI_Comm comm_split(Comm& parent, int color, int key) {
  if (color < 0 && color != MPI_UNDEFINED)
    throw MpiError(MPI_ERR_ARG, fmt::format("color {} is negative (and not MPI_UNDEFINED)", color));
  if (parent.is_inter()) {
    MPI_Comm handle = intercomm_split(parent, color, key);
    return handle == MPI_COMM_NULL ? handle : inherit_errhandler(parent, handle);
  }
  std::vector<int> color_key(2 * static_cast<size_t>(parent.size));
  if (parent.size == 1) {
    color_key = {color, key};
  } else {
    int mine[2] = {color, key};
    coll::allgather(mine, 2, MPI_INT, color_key.data(), 2, MPI_INT, parent);
  }
  std::vector<std::uint32_t> ids = agree_on_contexts(parent, color != MPI_UNDEFINED);
  if (color == MPI_UNDEFINED) return MPI_COMM_NULL;

  std::vector<int> ranks;  // parent ranks with my color
  for (int r = 0; r < parent.size; ++r)
    if (color_key[2 * r] == color) ranks.push_back(r);
  std::stable_sort(ranks.begin(), ranks.end(),
                   [&](int a, int b) { return color_key[2 * a + 1] < color_key[2 * b + 1]; });
  std::vector<int> members;
  members.reserve(ranks.size());
  for (int r : ranks) members.push_back(parent.group->members[r]);
  auto group = std::make_shared<Group>(make_group(std::move(members), my_world_rank()));
  return inherit_errhandler(parent, make_intra(ids, std::move(group)).handle);
}

MPI_Comm comm_create(Comm& parent, const Group& g) {
  if (parent.is_inter()) {
    MPI_Comm handle = intercomm_create_subset(parent, g);
    return handle == MPI_COMM_NULL ? handle : inherit_errhandler(parent, handle);
  }
  for (int w : g.members)
    if (parent.group->rank_of_world(w) == MPI_UNDEFINED)
      throw MpiError(MPI_ERR_GROUP,
                     fmt::format("the group contains world rank {}, which is not in the communicator", w));
  bool member = g.rank_of_world(my_world_rank()) != MPI_UNDEFINED;
  std::vector<std::uint32_t> ids = agree_on_contexts(parent, member);
  if (!member) return MPI_COMM_NULL;
  auto group = std::make_shared<Group>(make_group(g.members, my_world_rank()));
  return inherit_errhandler(parent, make_intra(ids, std::move(group)).handle);
}

namespace {

// MPI_Comm_create_group's work, its messages on parent's collective context
// with internal_tag.
MPI_Comm create_group_on(Comm& parent, const Group& g, int internal_tag, const char* function) {
  int me = g.rank_of_world(my_world_rank());
  if (me == MPI_UNDEFINED)
    throw MpiError(MPI_ERR_GROUP, fmt::format("the calling process is not in the group (only members call {})",
                                              function));
  const int n = g.size();
  std::vector<int> parent_rank(n);
  for (int i = 0; i < n; ++i) {
    parent_rank[i] = parent.group->rank_of_world(g.members[i]);
    if (parent_rank[i] == MPI_UNDEFINED)
      throw MpiError(MPI_ERR_GROUP, fmt::format("the group contains world rank {}, which is not in the communicator",
                                                g.members[i]));
  }
  // Binomial reduce (AND, or MAX under the IMPI rule) to group rank 0, then
  // binomial broadcast back.
  AndAll and_all = [&](std::uint64_t* words, int count) {
    std::vector<std::uint64_t> other(static_cast<std::size_t>(count));
    for (int step = 1; step < n; step <<= 1) {
      if (me & step) {
        coll::send(words, count, MPI_UINT64_T, parent_rank[me - step], internal_tag, parent);
        break;
      }
      if (me + step < n) {
        coll::recv(other.data(), count, MPI_UINT64_T, parent_rank[me + step], internal_tag, parent);
        combine(words, other.data(), count);
      }
    }
    int step = 1;
    while (step < n && !(me & step)) step <<= 1;
    if (step < n) coll::recv(words, count, MPI_UINT64_T, parent_rank[me - step], internal_tag, parent);
    for (step >>= 1; step > 0; step >>= 1)
      if (me + step < n) coll::send(words, count, MPI_UINT64_T, parent_rank[me + step], internal_tag, parent);
  };
  Offer offer = my_offer();
  and_all(offer.data(), offer_words());
  std::uint32_t seed = parent.context_id ^ static_cast<std::uint32_t>(internal_tag);
  std::vector<std::uint32_t> ids = settle_contexts(offer, 1, true, seed, and_all);
  auto group = std::make_shared<Group>(make_group(g.members, my_world_rank()));
  return inherit_errhandler(parent, make_intra(ids, std::move(group)).handle);
}

// The internal tags on a parent's collective context: MPI_Comm_create_group
// with user tag t uses (1 << 30) | (t mod 2^29), the session constructors
// (1 << 30) | (1 << 29) | (a hash of the string tag mod 2^29).
constexpr int create_group_tag_bits = (1 << 29) - 1;

int stringtag_tag(const std::string& stringtag) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : stringtag) h = (h ^ ch) * 1099511628211ull;
  return (1 << 30) | (1 << 29) | static_cast<int>((h ^ (h >> 29) ^ (h >> 58)) & create_group_tag_bits);
}

}  // namespace

MPI_Comm comm_create_group(Comm& parent, const Group& g, int tag) {
  require_intra(parent, "MPI_Comm_create_group");
  if (tag < 0) throw MpiError(MPI_ERR_TAG, fmt::format("tag {} is negative", tag));
  // Distinct user tags keep concurrent calls with overlapping groups apart.
  return create_group_on(parent, g, (1 << 30) | (tag & create_group_tag_bits), "MPI_Comm_create_group");
}

MPI_Comm comm_create_from_group(const Group& g, const std::string& stringtag) {
  // Every process of a session's group is in MPI_COMM_WORLD, which the
  // runtime always has (the user may not be able to use it).
  return create_group_on(comm(MPI_COMM_WORLD), g, stringtag_tag(stringtag), "MPI_Comm_create_from_group");
}

MPI_Comm intercomm_create_from_groups(const Group& local, int local_leader, const Group& remote, int remote_leader,
                                      const std::string& stringtag) {
  if (local_leader < 0 || local_leader >= local.size())
    throw MpiError(MPI_ERR_RANK, fmt::format("local_leader {} is not a rank of the local group (size {})",
                                             local_leader, local.size()));
  if (remote_leader < 0 || remote_leader >= remote.size())
    throw MpiError(MPI_ERR_RANK, fmt::format("remote_leader {} is not a rank of the remote group (size {})",
                                             remote_leader, remote.size()));
  Comm& world = comm(MPI_COMM_WORLD);
  const int tag = stringtag_tag(stringtag);
  MPI_Comm local_comm = create_group_on(world, local, tag, "MPI_Intercomm_create_from_groups");
  MPI_Comm inter = MPI_COMM_NULL;
  try {
    // The leaders talk on MPI_COMM_WORLD (its world ranks are the group
    // members) with the string tag's internal tag.
    inter = intercomm_create(comm(local_comm), local_leader, world, remote.world_rank(remote_leader), tag);
  } catch (...) {
    comm_free(local_comm);
    throw;
  }
  comm_free(local_comm);
  return inter;
}

MPI_Comm intercomm_create(Comm& local_comm, int local_leader, Comm& peer_comm, int remote_leader, int tag) {
  require_intra(local_comm, "MPI_Intercomm_create (local_comm)");
  if (local_leader < 0 || local_leader >= local_comm.size)
    throw MpiError(MPI_ERR_RANK, fmt::format("local_leader {} is not a rank of local_comm (size {})", local_leader,
                                             local_comm.size));
  if (tag < 0) throw MpiError(MPI_ERR_TAG, fmt::format("tag {} is negative", tag));
  // The offer: the free mask, or under the IMPI rule the group's maximum
  // (the leaders swap their groups' maxima and both sides use the larger).
  const int words = offer_words();
  Offer mask = my_offer();
  if (local_comm.size > 1) {
    Offer mine = mask;
    coll::allreduce(mine.data(), mask.data(), words, MPI_UINT64_T, offer_op(), local_comm);
  }
  // The leader learns the remote group and offer; then every local process
  // gets [remote size, agreed offer words..., remote world ranks...].
  std::vector<std::uint64_t> message(1 + static_cast<std::size_t>(words));
  if (local_comm.rank == local_leader) {
    if (remote_leader < 0 || remote_leader >= peer_comm.peer_size())
      throw MpiError(MPI_ERR_RANK, fmt::format("remote_leader {} is not a rank of peer_comm (size {})",
                                               remote_leader, peer_comm.peer_size()));
    int my_size = local_comm.size, remote_size = 0;
    exchange_with(peer_comm, peer_comm.context_id, remote_leader, tag, &my_size, 1, &remote_size, 1, MPI_INT);
    std::vector<std::uint64_t> mine(1 + words + my_size);
    mine[0] = static_cast<std::uint64_t>(my_size);
    std::copy(mask.begin(), mask.end(), mine.begin() + 1);
    for (int i = 0; i < my_size; ++i) mine[1 + words + i] = local_comm.group->members[i];
    message.resize(1 + words + remote_size);
    exchange_with(peer_comm, peer_comm.context_id, remote_leader, tag, mine.data(), static_cast<int>(mine.size()),
                  message.data(), static_cast<int>(message.size()), MPI_UINT64_T);
    combine(message.data() + 1, mask.data(), words);
  }
  if (local_comm.size > 1) {
    std::uint64_t remote_size = message[0];
    coll::bcast(&remote_size, 1, MPI_UINT64_T, local_leader, local_comm);
    message.resize(1 + words + remote_size);
    coll::bcast(message.data(), static_cast<int>(message.size()), MPI_UINT64_T, local_leader, local_comm);
  }
  Offer agreed(message.begin() + 1, message.begin() + 1 + words);
  std::vector<int> remote_members;
  for (size_t i = 1 + static_cast<size_t>(words); i < message.size(); ++i)
    remote_members.push_back(static_cast<int>(message[i]));
  for (int w : remote_members)
    if (local_comm.group->rank_of_world(w) != MPI_UNDEFINED)
      throw MpiError(MPI_ERR_COMM, fmt::format("world rank {} is in both groups (they must be disjoint)", w));
  // The confirmation rounds use the leaders' channel again (same tag, so in
  // order); the tag is the only seed both groups share.
  std::vector<std::uint32_t> ids =
      settle_contexts(agreed, 2, true, static_cast<std::uint32_t>(tag), [&](std::uint64_t* words, int count) {
        and_across(local_comm, local_leader, peer_comm, peer_comm.context_id, remote_leader, tag, words, count);
      });
  auto remote = std::make_shared<Group>(make_group(std::move(remote_members), my_world_rank()));
  return inherit_errhandler(local_comm, make_intercomm(ids, local_comm.group, std::move(remote)));
}

MPI_Comm intercomm_merge(Comm& intercomm, bool high) {
  if (!intercomm.is_inter()) throw MpiError(MPI_ERR_COMM, "MPI_Intercomm_merge needs an intercommunicator");
  auto [agreed, remote_high] = agree_across(intercomm, high ? 1 : 0);
  // The group that said high = false comes first; on a tie, the group whose
  // first process has the lower world rank (both sides compute the same).
  bool local_first = high != static_cast<bool>(remote_high)
                         ? !high
                         : intercomm.group->members.front() < intercomm.remote_group->members.front();
  const Group& first = local_first ? *intercomm.group : *intercomm.remote_group;
  const Group& second = local_first ? *intercomm.remote_group : *intercomm.group;
  std::vector<int> members = first.members;
  members.insert(members.end(), second.members.begin(), second.members.end());
  std::vector<std::uint32_t> ids = settle_contexts(agreed, 1, true, intercomm.context_id, and_over(intercomm));
  auto group = std::make_shared<Group>(make_group(std::move(members), my_world_rank()));
  return inherit_errhandler(intercomm, make_intra(ids, std::move(group)).handle);
}

namespace {

// The end of a communicator: its context, error handler, handle and hidden
// local communicator go.  Runs when it is freed and no operation is pending.
void destroy_comm(Comm& c) {
  MPI_Comm handle = c.handle;
  MPI_Comm hidden[] = {c.local_comm, c.client_comm};
  // IMPI-rule ids are never reused (the rule only moves up).
  if (!impi_ids()) context_pool().release(c.context_id);
  release_errhandler(c.errhandler);
  log().debug("communicator {} destroyed (context {})", handle, c.context_id);
  comm_table().release(handle);
  for (MPI_Comm h : hidden) {
    if (Comm* l = comm_table().find(h)) {
      l->freed = true;
      if (l->pending_operations == 0) destroy_comm(*l);
    }
  }
}

}  // namespace

void comm_free(MPI_Comm handle) {
  if (handle == MPI_COMM_WORLD || handle == MPI_COMM_SELF)
    throw MpiError(MPI_ERR_COMM, "cannot free MPI_COMM_WORLD or MPI_COMM_SELF");
  Comm& c = comm(handle);
  delete_all_comm_attributes(c);
  c.freed = true;
  if (c.pending_operations == 0) {
    destroy_comm(c);
  } else {
    log().debug("communicator {} freed with {} operations pending: destroyed when they end", handle,
                c.pending_operations);
  }
}

void destroy_freed_comm(Comm& c) noexcept {
  try {
    destroy_comm(c);
  } catch (const std::exception& e) {
    log().warn("destroying freed communicator {}: {}", c.handle, e.what());
  }
}

void comm_unhold(MPI_Comm handle) noexcept {
  if (Comm* c = comm_table().find(handle)) comm_unhold(*c);
}

// ---- MPI_Comm_idup: the non-blocking context agreement ----------------------
// The same agreement as the blocking constructors, as a schedule of the
// non-blocking collective engine (coll/nbc.hpp) on the parent's collective
// context with the tag of the call, so that it progresses with every other
// non-blocking collective and pending idup, in any order across processes.
// It always confirms its candidate (tentative reservation, then a second
// combination of "free here"), since this process may take ids for other
// communicators while it waits; candidates are hashed from the parent's
// context and the call's tag (not the lowest free pair), so that idups on
// overlapping communicators rarely pick the same pair, and retry with
// fresh offers when they do.  Under the IMPI rule the MAX agreement and its
// id layout are those of MPI_Comm_dup (max+1/+2, then the client-local or
// local parts), plus the confirmation.
namespace {

// Counts this process's non-blocking agreements under way (my_offer).
struct PendingAgreement {
  PendingAgreement() noexcept { ++pending_nb_agreements; }
  ~PendingAgreement() { --pending_nb_agreements; }
  PendingAgreement(const PendingAgreement&) = delete;
  PendingAgreement& operator=(const PendingAgreement&) = delete;
};

// `words` combined (offer_op) over every process of parent, both groups of
// an intercommunicator: an allreduce on an intracommunicator; on an
// intercommunicator each group reduces to its leader on the hidden local
// communicator, the leaders swap on parent's collective context, and each
// broadcasts the combination in its group.  May run several times with one
// tag: the rounds of one call follow each other on every pair of processes.
coll::nb::Task combine_all(Comm& parent, int tag, std::vector<std::uint64_t>& words) {
  const int count = static_cast<int>(words.size());
  const MPI_Op op = offer_op();
  if (!parent.is_inter()) {
    if (parent.size == 1) co_return;
    std::vector<std::uint64_t> mine = words;
    co_await coll::intra::allreduce(coll::ReduceArgs{mine.data(), words.data(), count, MPI_UINT64_T, op, 0},
                                    parent, tag);
    co_return;
  }
  Comm& local = coll::inter::local_comm(parent);
  coll::TypedBuffer reduced(count, MPI_UINT64_T);
  co_await coll::inter::local_reduce(words.data(), reduced, count, MPI_UINT64_T, op, local,
                                     coll::inter::local_tag(tag, 1));
  if (local.rank == 0) {
    const auto* r = static_cast<const std::uint64_t*>(reduced.get());
    std::copy(r, r + count, words.begin());
    std::vector<std::uint64_t> theirs(words.size());
    co_await coll::inter::wait_for(coll::irecv(theirs.data(), count, MPI_UINT64_T, 0, tag, parent),
                                   coll::isend(words.data(), count, MPI_UINT64_T, 0, tag, parent));
    combine(words.data(), theirs.data(), count);
  }
  co_await coll::inter::local_bcast(words.data(), count, MPI_UINT64_T, local, coll::inter::local_tag(tag, 2));
}

// n id pairs agreed over parent and reserved here (n + 1 under the IMPI
// rule, as settle_contexts), into `ids`.
coll::nb::Task settle_nonblocking(Comm& parent, int tag, int n, std::uint32_t seed,
                                  std::vector<std::uint32_t>& ids) {
  ids.clear();
  if (impi_ids()) {
    const int pairs = n + 1;
    std::vector<std::uint64_t> words{impi_max};
    co_await combine_all(parent, tag, words);
    for (std::uint32_t round = 1;; ++round) {
      const std::uint64_t agreed = words[0];
      const std::uint64_t top = agreed + 2 * static_cast<std::uint64_t>(pairs);
      if (top >= (std::uint64_t{1} << 31))
        throw MpiError(MPI_ERR_INTERN, fmt::format("out of communicator context ids: the IMPI rule asks for ids "
                                                   "up to {}, beyond the 31 bits used here",
                                                   top));
      const bool free_here = impi_max <= agreed;
      if (free_here) impi_max = std::max(impi_max, top);
      std::vector<std::uint64_t> busy{free_here ? 0u : 1u};
      co_await combine_all(parent, tag, busy);  // MAX: busy somewhere
      if (busy[0] == 0) {
        for (int k = 0; k < pairs; ++k) ids.push_back(static_cast<std::uint32_t>(agreed + 1 + 2 * k));
        co_return;
      }
      // Busy somewhere: another agreement of this process (an idup on
      // another communicator) reserved past `agreed` first.
      words.assign(1, impi_retry_offer(seed, round, pairs));
      co_await combine_all(parent, tag, words);
    }
  }
  ContextPool& pool = context_pool();
  for (int round = 0;; ++round) {
    const ContextPool::Mask& mine = pool.free_mask();
    std::vector<std::uint64_t> words(mine.begin(), mine.end());
    co_await combine_all(parent, tag, words);  // AND of the free masks
    ContextPool::Mask rest{};
    std::copy(words.begin(), words.end(), rest.begin());
    ids.clear();
    for (int k = 0; k < n; ++k) {
      ids.push_back(pick_candidate(rest, seed, 1 + round * n + k));
      clear_pair(rest, ids.back());
    }
    const bool free_here =
        std::all_of(ids.begin(), ids.end(), [&](std::uint32_t id) { return pool.is_free(id); });
    if (free_here)
      for (std::uint32_t id : ids) pool.reserve(id);
    std::vector<std::uint64_t> ok{free_here ? 1u : 0u};
    co_await combine_all(parent, tag, ok);  // AND: free everywhere
    if (ok[0] == 1) co_return;
    if (free_here)
      for (std::uint32_t id : ids) pool.release(id);
  }
}

// Until its idup completes, a new communicator has no context.
constexpr std::uint32_t no_context = 0xfffffffeu;

// Drops the communicator of an idup that failed (or whose attribute copy
// failed at the call): its attributes' delete callbacks run, then it goes.
void discard_incomplete(MPI_Comm handle) noexcept {
  Comm* c = comm_table().find(handle);
  if (!c) return;
  try {
    delete_all_comm_attributes(*c);
  } catch (const std::exception& e) {
    log().warn("MPI_Comm_idup failed: deleting the attributes of communicator {}: {}", handle, e.what());
  }
  c->freed = true;
  c->incomplete = false;
  try {
    if (c->pending_operations == 0) destroy_comm(*c);
  } catch (const std::exception& e) {
    log().warn("MPI_Comm_idup failed: destroying communicator {}: {}", handle, e.what());
  }
}

coll::nb::Task idup_schedule(Comm& parent, MPI_Comm child, int tag, bool discard) {
  PendingAgreement pending;
  const bool inter = parent.is_inter();
  std::vector<std::uint32_t> ids;
  const std::uint32_t seed = (parent.context_id * 0x9e3779b9u) ^ static_cast<std::uint32_t>(tag);
  try {
    co_await settle_nonblocking(parent, tag, inter ? 2 : 1, seed, ids);
  } catch (...) {
    discard_incomplete(child);  // the request reports the error
    throw;
  }
  Comm* c = comm_table().find(child);
  if (discard || !c) {
    // Every process agreed (no peer is left waiting), but this call had
    // failed already: the ids go back, the communicator goes.
    if (!impi_ids())
      for (std::uint32_t id : ids) context_pool().release(id);
    discard_incomplete(child);
    co_return;
  }
  if (inter) {
    // As make_intercomm: ids[1] for the hidden local communicator, ids[2]
    // (IMPI rule) for its client-local part.
    Comm& local = make_comm(MPI_COMM_NULL, ids.at(1), c->group);
    local.name = "intercommunicator local group";
    if (ids.size() > 2) attach_client_comm(local, ids[2]);
    c = comm_table().find(child);  // (objects stay put; found again for clarity)
    c->local_comm = local.handle;
  }
  c->context_id = ids.at(0);
  if (!inter && ids.size() > 1) attach_client_comm(*c, ids[1]);
  c->incomplete = false;
  log().debug("MPI_Comm_idup: communicator {} complete: context {}", child, c->context_id);
}

}  // namespace

MPI_Request comm_idup(Comm& parent, const std::vector<std::pair<std::string, std::string>>* hints,
                      MPI_Comm* newcomm) {
  // The new communicator exists at once (the user gets its handle now), but
  // refuses use (Comm::incomplete) until the agreement has given it ids.
  Comm& c = make_comm(MPI_COMM_NULL, no_context, parent.group);
  c.remote_group = parent.remote_group;
  c.incomplete = true;
  c.errhandler = parent.errhandler;
  retain_errhandler(c.errhandler);
  c.info_hints = hints ? *hints : parent.info_hints;
  c.topology = parent.topology;  // MPI-3.1 7.4: duplicates keep the topology
  const MPI_Comm handle = c.handle;
  // Attributes are copied now, from the parent as it is at the call (the
  // copy callbacks run in MPI_Comm_idup, as in MPI_Comm_dup; the parent may
  // change or be freed before completion).  If a callback fails, the
  // agreement still runs (the other processes take part in it), and its
  // request frees itself and the communicator when done.
  std::exception_ptr copy_failure;
  try {
    copy_comm_attributes(parent, c);
  } catch (...) {
    c.attributes.clear();  // what was copied has been deleted already
    c.attribute_order.clear();
    copy_failure = std::current_exception();
  }
  const int tag = coll::nb::next_tag(parent);
  request::Request* r = coll::nb::start(idup_schedule(parent, handle, tag, copy_failure != nullptr), parent);
  if (copy_failure) {
    if (r->complete) runtime().engine->release(r);
    else r->freed = true;
    std::rethrow_exception(copy_failure);
  }
  *newcomm = handle;
  return r->handle;
}

}  // namespace gridmpi::core
