// Groups and communicators.  Owner: core/comm*.cpp, core/group*.cpp.
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/handle_table.hpp"
#include "core/job_layout.hpp"

namespace gridmpi::core {

struct Topology;  // core/topo.hpp

// An ordered set of processes, named by their MPI_COMM_WORLD rank.
struct Group {
  MPI_Group handle = MPI_GROUP_NULL;
  std::vector<int> members;   // world rank of each group rank
  int my_rank = MPI_UNDEFINED;  // this process's rank in the group
  int size() const noexcept { return static_cast<int>(members.size()); }
  int world_rank(int rank) const { return members.at(rank); }
  int rank_of_world(int world) const noexcept;  // MPI_UNDEFINED when absent
};

// How the members of an intracommunicator are spread over the IMPI clients
// of a multi-client job (docs/impi-protocol.md 10.1): the master of a client
// is its lowest comm rank; masters are numbered by increasing comm rank, so
// rank 0 is master 0.  A pure function of the group and the job layout
// (client_map below), equal in every member.
struct ClientMap {
  std::vector<int> master_of;             // master number of each comm rank's client
  std::vector<int> masters;               // comm rank of each master
  std::vector<int> local_rank;            // rank of each comm rank inside its client's members
  std::vector<std::vector<int>> members;  // comm ranks of each master's client, increasing
  int num_masters() const noexcept { return static_cast<int>(masters.size()); }
  bool is_master(int rank) const { return masters[master_of[rank]] == rank; }
  // Whether every client's members are consecutive comm ranks.
  bool contiguous() const noexcept;
};
// The map of `g` (members = world ranks) under `layout`.
ClientMap client_map(const Group& g, const JobLayout& layout);

struct Comm {
  MPI_Comm handle = MPI_COMM_NULL;
  // Point-to-point traffic uses context_id; collectives use context_id + 1
  // (the hidden collective context), so they never meet user messages.
  std::uint32_t context_id = 0;
  std::shared_ptr<Group> group;         // local group
  std::shared_ptr<Group> remote_group;  // intercommunicators only (issue 4)
  // Intercommunicators: a hidden intracommunicator over the local group
  // (its own context), for operations inside one side (merge, dup, and the
  // local phases of intercommunicator collectives).  Freed with this one.
  MPI_Comm local_comm = MPI_COMM_NULL;
  int rank = MPI_UNDEFINED;
  int size = 0;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  std::map<int, void*> attributes;
  std::vector<int> attribute_order;  // keyvals in the order set (deleted newest first)
  // Hints given by MPI_Comm_set_info / MPI_Comm_dup_with_info (none are acted on yet).
  std::vector<std::pair<std::string, std::string>> info_hints;
  // Per-communicator collective state (selected algorithms, sequence numbers).
  // A cache (the cost model of core/coll/model.cpp), hence mutable.
  mutable std::shared_ptr<void> coll_state;
  // Non-blocking collectives started on this communicator (coll::nb::next_tag).
  std::uint32_t nb_sequence = 0;
  // Dynamic multicasts this process started as root on this communicator
  // (core/coll/mcast.hpp: their data tags).
  std::uint32_t mcast_sequence = 0;
  // Process topology (MPI_Cart_create, ...; core/topo.hpp), shared by dups.
  std::shared_ptr<const Topology> topology;
  // MPI_Comm_free with operations still pending (MPI-3.1 6.4.3: they
  // complete normally): the handle is invalid for the user at once (freed),
  // the object, its context id and its local_comm live until the count of
  // pending operations (non-blocking collective schedules, point-to-point
  // requests) drops to zero.  See comm_hold / comm_unhold.
  int pending_operations = 0;
  bool freed = false;
  // MPI_Comm_idup / _with_info not yet complete: the handle exists (the
  // user got it) but has no context yet; comm() refuses it until then.
  bool incomplete = false;
  // Multi-client jobs (core/job_layout.hpp), intracommunicators whose members
  // span >= 2 clients: the IMPI roles, and a hidden intracommunicator over
  // this process's client members in comm rank order (its own context from
  // the same agreed allocation) for the local phases of the IMPI
  // collectives (core/coll/impi.hpp).  Null otherwise.  Freed with this one.
  std::shared_ptr<const ClientMap> clients;
  MPI_Comm client_comm = MPI_COMM_NULL;

  std::uint32_t coll_context() const noexcept { return context_id + 1; }
  bool is_inter() const noexcept { return remote_group != nullptr; }
  // World rank of a destination rank (remote group for intercommunicators).
  int peer_world_rank(int rank) const {
    return (remote_group ? remote_group : group)->world_rank(rank);
  }
  int peer_size() const noexcept { return (remote_group ? remote_group : group)->size(); }
};

// Inline, as comm() is: every point-to-point call looks its communicator up.
inline HandleTable<Comm>& comm_table() {
  static HandleTable<Comm> table(MPI_ERR_COMM);
  return table;
}
HandleTable<Group>& group_table();
[[noreturn]] void bad_comm(MPI_Comm handle);  // throws MpiError(MPI_ERR_COMM) naming the problem
inline Comm& comm(MPI_Comm handle) {    // throws MpiError(MPI_ERR_COMM)
  Comm* c = comm_table().find(handle);
  if (!c || c->freed || c->incomplete) [[unlikely]]
    bad_comm(handle);
  return *c;
}
// For the local queries and settings (size, rank, group, name, error
// handler, attributes, info): also a communicator whose MPI_Comm_idup has not
// completed, as Open MPI and MPICH accept (mpi4py's Comm.Idup sets an error
// handler on it at once).  All of these exist from the call on; only its
// context does not.
inline Comm& comm_local(MPI_Comm handle) {  // throws MpiError(MPI_ERR_COMM)
  Comm* c = comm_table().find(handle);
  if (!c || c->freed) [[unlikely]]
    bad_comm(handle);
  return *c;
}
Group& group(MPI_Group handle);  // throws MpiError(MPI_ERR_GROUP)

// ---- group operations (core/group.cpp) ------------------------------------
// Pure functions of their arguments, so that unit tests run them without a
// job.  my_world_rank fills Group::my_rank of the result.  Argument errors
// (the checks MPI-3.1 section 6.3.2 asks for) throw MpiError(MPI_ERR_RANK or
// MPI_ERR_ARG).
Group make_group(std::vector<int> members, int my_world_rank);
Group group_union(const Group& a, const Group& b, int my_world_rank);
Group group_intersection(const Group& a, const Group& b, int my_world_rank);
Group group_difference(const Group& a, const Group& b, int my_world_rank);
Group group_incl(const Group& g, std::span<const int> ranks, int my_world_rank);
Group group_excl(const Group& g, std::span<const int> ranks, int my_world_rank);
// ranges: (first, last, stride) triplets.
Group group_range_incl(const Group& g, std::span<const int[3]> ranges, int my_world_rank);
Group group_range_excl(const Group& g, std::span<const int[3]> ranges, int my_world_rank);
// ranks1 of a -> ranks of b (MPI_UNDEFINED when absent, MPI_PROC_NULL kept).
void group_translate_ranks(const Group& a, std::span<const int> ranks1, const Group& b,
                           std::span<int> ranks2);
int group_compare(const Group& a, const Group& b);  // MPI_IDENT / MPI_SIMILAR / MPI_UNEQUAL
// Stores a group in the handle table and returns its new handle.
MPI_Group add_group(Group g);

// ---- communicators (core/comm.cpp) ----------------------------------------
// The process's pool of context ids.  Ids come in pairs (even id for
// point-to-point, id+1 for collectives); a bit per pair, set when free.  A new
// communicator's id is the lowest pair free in every member, found with one
// MPI_BAND allreduce of these masks over the parent.
class ContextPool {
 public:
  static constexpr int words = 64;  // 64 * 64 = 4096 pairs
  using Mask = std::array<std::uint64_t, words>;
  ContextPool();
  const Mask& free_mask() const noexcept { return free_; }
  // Lowest pair free in `agreed` (the AND of every member's mask); reserves
  // it here when `reserve`.  Throws MpiError(MPI_ERR_INTERN) when none is left.
  std::uint32_t take_lowest(const Mask& agreed, bool reserve);
  void reserve(std::uint32_t context_id);
  void release(std::uint32_t context_id);
  bool is_free(std::uint32_t context_id) const noexcept;

 private:
  Mask free_;
};
ContextPool& context_pool();

int comm_compare(const Comm& a, const Comm& b);  // MPI_IDENT / CONGRUENT / SIMILAR / UNEQUAL
// Collective over `parent`; each returns the new handle or MPI_COMM_NULL.
MPI_Comm comm_dup(Comm& parent);
// MPI_Comm_idup / MPI_Comm_idup_with_info: a non-blocking collective over
// parent.  Writes the new handle (usable once the request completes) to
// *newcomm and returns the request.  `hints`: the new communicator's info
// (null: parent's, as MPI_Comm_dup).
MPI_Request comm_idup(Comm& parent, const std::vector<std::pair<std::string, std::string>>* hints,
                      MPI_Comm* newcomm);
MPI_Comm comm_split(Comm& parent, int color, int key);
MPI_Comm comm_create(Comm& parent, const Group& group);
// Collective over the members of `group` only (MPI_Comm_create_group): the
// context agreement runs point-to-point on the parent's collective context
// with tag (1 << 30) | tag, a range the collective algorithms do not use.
MPI_Comm comm_create_group(Comm& parent, const Group& group, int tag);
// MPI_Intercomm_create: collective over local_comm and the two leaders
// (which talk on peer_comm with the user's tag).
// MPI-4.0 MPI_Comm_create_from_group / MPI_Intercomm_create_from_groups:
// collective over the group(s) only, their messages on MPI_COMM_WORLD's
// collective context with an internal tag derived from the string tag.
// The errhandler is the caller's to set.
MPI_Comm comm_create_from_group(const Group& group, const std::string& stringtag);
MPI_Comm intercomm_create_from_groups(const Group& local, int local_leader, const Group& remote, int remote_leader,
                                      const std::string& stringtag);
MPI_Comm intercomm_create(Comm& local_comm, int local_leader, Comm& peer_comm, int remote_leader, int tag);
// MPI_Intercomm_merge: collective over both groups of the intercommunicator.
MPI_Comm intercomm_merge(Comm& intercomm, bool high);
// Local: runs the delete callbacks, releases the context, the error handler
// and the handle (deferred while operations are pending, see Comm::freed).
void comm_free(MPI_Comm handle);
// An operation that refers to the communicator until it ends (a request)
// holds it; the last unhold of a freed communicator destroys it.
// Inline: a request holds its communicator, so both run once per message.
void destroy_freed_comm(Comm& c) noexcept;  // comm_unhold's last step
inline void comm_hold(Comm& c) noexcept { ++c.pending_operations; }
inline void comm_unhold(Comm& c) noexcept {
  if (--c.pending_operations > 0 || !c.freed) return;
  destroy_freed_comm(c);
}
void comm_unhold(MPI_Comm handle) noexcept;  // no-op for unknown handles
// Makes a communicator object over `group` with the given context (used by
// MPI_Init for MPI_COMM_WORLD / MPI_COMM_SELF and by the constructors above).
Comm& make_comm(MPI_Comm fixed_handle, std::uint32_t context_id, std::shared_ptr<Group> group);
// Multi-client jobs: when c is an intracommunicator whose members span >= 2
// clients, sets c.clients and makes c.client_comm with `client_context`
// (the same id in every client: the client-local groups are disjoint).
// Nothing otherwise.
void attach_client_comm(Comm& c, std::uint32_t client_context);
// The IMPI context-id rule of multi-client jobs (docs/impi-protocol.md 9;
// single-client jobs use the ContextPool): the highest context id this
// process has used or agreed to skip.  MPI_Init sets it above the
// predefined communicators' ids.
std::uint64_t impi_max_context() noexcept;
void set_impi_max_context(std::uint64_t value) noexcept;

}  // namespace gridmpi::core
