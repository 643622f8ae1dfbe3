// Helpers of the IMPI collectives (impi_util.hpp) and the IMPI_COLL_MAXLINEAR
// setting.
#include "core/coll/impi_util.hpp"

#include <bit>
#include <climits>
#include <string>

#include "conf/registry.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/impi.hpp"
#include "core/datatype.hpp"
#include "base/error.hpp"
#include "core/job_layout.hpp"

namespace gridmpi::coll::impi {

// IMPI_COLL_MAXLINEAR as the job agreed on it (a fake layout,
// impi.fake_clients, takes the parameter: boot/start.cpp).
int max_linear() { return core::job_layout().coll_maxlinear; }

View view(core::Comm& c) {
  const core::ClientMap& map = *c.clients;
  const int n = map.num_masters();
  return View{c, map, core::comm(c.client_comm), n, map.master_of[static_cast<std::size_t>(c.rank)],
              n <= max_linear()};
}

int tree_dim(int n) {
  int d = 0;
  while ((1 << d) < n) ++d;
  return d;
}

int hibit(int v) { return v == 0 ? -1 : 31 - std::countl_zero(static_cast<unsigned>(v)); }

// The streams use the job-wide representation
// (core::JobLayout::coll_representation): they are relayed between clients,
// so one for all.
namespace {

bool coll_native(const core::JobLayout& layout) {
  return layout.coll_representation == p2p::DataRepresentation::native;
}

core::ExternalFormat coll_format(const core::JobLayout& layout) {
  return layout.coll_representation == p2p::DataRepresentation::external64 ? core::ExternalFormat::external64
                                                                            : core::ExternalFormat::external32;
}

}  // namespace

std::size_t ext_size(int count, MPI_Datatype type) {
  if (count <= 0) return 0;
  const core::JobLayout& layout = core::job_layout();
  if (coll_native(layout)) return core::datatype(type).size * static_cast<std::size_t>(count);
  return core::external_size(type, static_cast<std::size_t>(count), coll_format(layout));
}

void pack_ext(const void* buf, int count, MPI_Datatype type, std::byte* out) {
  if (count <= 0) return;
  const core::JobLayout& layout = core::job_layout();
  if (coll_native(layout))
    core::datatype(type).pack(buf, static_cast<std::size_t>(count), out);
  else
    core::pack_external32(buf, static_cast<std::size_t>(count), type, out, coll_format(layout));
}

void unpack_ext(const std::byte* in, int count, MPI_Datatype type, void* buf) {
  if (count <= 0) return;
  const core::JobLayout& layout = core::job_layout();
  if (coll_native(layout))
    core::datatype(type).unpack(in, static_cast<std::size_t>(count), buf);
  else
    core::unpack_external32(in, static_cast<std::size_t>(count), type, buf, coll_format(layout));
}

void send_bytes(const std::byte* data, std::size_t n, int dest, int tag, core::Comm& comm) {
  coll::send(data, byte_count(n), MPI_PACKED, dest, tag, comm);
}

void recv_bytes(std::byte* data, std::size_t n, int source, int tag, core::Comm& comm) {
  coll::recv(data, byte_count(n), MPI_PACKED, source, tag, comm);
}

void* element_of(void* buf, MPI_Aint index, MPI_Datatype type) {
  return element(buf, index, shape(type).extent);
}

const void* element_of(const void* buf, MPI_Aint index, MPI_Datatype type) {
  return element(buf, index, shape(type).extent);
}

int times(int count, int n) {
  long long v = static_cast<long long>(count) * n;
  if (v > INT_MAX)
    throw MpiError(MPI_ERR_COUNT, "the collective's total count " + std::to_string(v) +
                                      " exceeds INT_MAX on a multi-client communicator");
  return static_cast<int>(v);
}

}  // namespace gridmpi::coll::impi
