// Helpers of the IMPI collectives (core/coll/impi*.cpp): this process's
// roles in a multi-client communicator, the binomial-tree arithmetic of
// docs/impi-protocol.md 10.2, and the external32 byte streams that carry
// the blocks of our own two-tier designs between clients.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "core/coll/util.hpp"
#include "core/group.hpp"

namespace gridmpi::coll::impi {

// This process's view of a communicator with Comm::clients set.
struct View {
  core::Comm& comm;
  const core::ClientMap& map;
  core::Comm& local;  // the client-local part (Comm::client_comm)
  int n;              // number of masters (clients in the communicator)
  int me;             // master number of this process's client
  bool linear;        // n <= max_linear()
  bool is_master() const { return map.masters[static_cast<std::size_t>(me)] == comm.rank; }
  int master(int m) const { return map.masters[static_cast<std::size_t>(m)]; }
  int client_of(int rank) const { return map.master_of[static_cast<std::size_t>(rank)]; }
  const std::vector<int>& members(int m) const { return map.members[static_cast<std::size_t>(m)]; }
  int local_rank(int rank) const { return map.local_rank[static_cast<std::size_t>(rank)]; }
  // The process that stands for client m in a rooted global phase: the
  // root for the root's client, the master for the others.
  int participant(int m, int root) const { return m == client_of(root) ? root : master(m); }
};
View view(core::Comm& c);

// dim = ceil(log2 n); hibit(v) = index of the highest set bit (-1 for 0).
int tree_dim(int n);
int hibit(int v);

// external32 images of (buf, count, type): sizes, packing, unpacking.
std::size_t ext_size(int count, MPI_Datatype type);
void pack_ext(const void* buf, int count, MPI_Datatype type, std::byte* out);
void unpack_ext(const std::byte* in, int count, MPI_Datatype type, void* buf);

// Point-to-point of external32 byte streams on comm's collective context
// (MPI_PACKED, which no IMPI agent converts).
void send_bytes(const std::byte* data, std::size_t n, int dest, int tag, core::Comm& comm);
void recv_bytes(std::byte* data, std::size_t n, int source, int tag, core::Comm& comm);

// Element `index` of a buffer of `type` (MPI_BOTTOM-safe).
void* element_of(void* buf, MPI_Aint index, MPI_Datatype type);
const void* element_of(const void* buf, MPI_Aint index, MPI_Datatype type);

// count * n as an int, or MPI_ERR_COUNT.
int times(int count, int n);

}  // namespace gridmpi::coll::impi
