// Groups and communicators.  Owner: core/comm*.cpp, core/group*.cpp.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/handle_table.hpp"

namespace gridmpi::core {

// An ordered set of processes, named by their MPI_COMM_WORLD rank.
struct Group {
  MPI_Group handle = MPI_GROUP_NULL;
  std::vector<int> members;   // world rank of each group rank
  int my_rank = MPI_UNDEFINED;  // this process's rank in the group
  int size() const noexcept { return static_cast<int>(members.size()); }
  int world_rank(int rank) const { return members.at(rank); }
  int rank_of_world(int world) const noexcept;  // MPI_UNDEFINED when absent
};

struct Comm {
  MPI_Comm handle = MPI_COMM_NULL;
  // Point-to-point traffic uses context_id; collectives use context_id + 1
  // (the hidden collective context), so they never meet user messages.
  std::uint32_t context_id = 0;
  std::shared_ptr<Group> group;         // local group
  std::shared_ptr<Group> remote_group;  // intercommunicators only (issue 4)
  int rank = MPI_UNDEFINED;
  int size = 0;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  std::map<int, void*> attributes;
  // Per-communicator collective state (selected algorithms, sequence numbers).
  std::shared_ptr<void> coll_state;

  std::uint32_t coll_context() const noexcept { return context_id + 1; }
  bool is_inter() const noexcept { return remote_group != nullptr; }
  // World rank of a destination rank (remote group for intercommunicators).
  int peer_world_rank(int rank) const {
    return (remote_group ? remote_group : group)->world_rank(rank);
  }
  int peer_size() const noexcept { return (remote_group ? remote_group : group)->size(); }
};

HandleTable<Comm>& comm_table();
HandleTable<Group>& group_table();
Comm& comm(MPI_Comm handle);     // throws MpiError(MPI_ERR_COMM)
Group& group(MPI_Group handle);  // throws MpiError(MPI_ERR_GROUP)

}  // namespace gridmpi::core
