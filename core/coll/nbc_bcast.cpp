// MPI_Ibcast: the cost model's choice as MPI_Bcast makes it (core/coll/
// model.hpp: ring, or hybrid d > 1, on the packed stream, as non-blocking
// schedules of core/coll/delivery.hpp), else a binomial tree on ranks
// renumbered relative to the root: a rank receives from the rank that
// differs in its lowest set bit, then forwards to the ranks below that bit,
// all at once.  The binomial tree stays where MPI_Bcast's choice is not the
// model's (coll.model = rules, the crowded host's linear rule over shared
// memory) and between clusters (forced or not: the deliveries' stream is
// native).  A delivery forced by GRIDMPI_BCAST_ALGORITHM is taken inside a
// cluster (linear runs the binomial tree).
// Owner: core/coll/.
// Restrictions: none.  Cost: binomial ceil(log2 p) (alpha + n beta); the
// others as MPI_Bcast's.
#include <vector>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/delivery.hpp"
#include "core/coll/model.hpp"
#include "core/coll/nbc_intra.hpp"

namespace gridmpi::coll::intra {

namespace {

// The forced delivery (GRIDMPI_BCAST_ALGORITHM; "linear" runs the binomial
// tree here), else the model's choice when it is not the binomial tree;
// {false, 1} otherwise.
model::Choice modelled_choice(const BcastArgs& a, const core::Comm& comm) {
  // Between clusters the typed binomial tree: the deliveries move the native
  // packed stream, which another cluster's byte order would misread.
  if (comm.clients) return {};
  model::Choice forced;
  if (forced_bcast_delivery(comm.size, &forced.ring, &forced.d)) return forced;
  if (comm.size <= 2 || model::rules_only()) return {};
  const std::size_t bytes = packed_size(a.count, a.type);
  if (bytes == 0 || crowded_linear_bcast(bytes, comm)) return {};
  return model::choose_bcast(bytes, comm);
}

nb::Task packed_delivery(BcastArgs a, core::Comm& comm, int tag, model::Choice choice) {
  const Members members{nullptr, comm.size, a.root, (comm.rank - a.root + comm.size) % comm.size};
  auto deliver = [&](std::byte* data, std::size_t n) {
    return choice.ring ? ring_schedule(data, n, members, tag, comm)
                       : hybrid_schedule(data, n, choice.d, members, tag, comm);
  };
  if (comm.rank == a.root) {
    PackedInput data(a.buffer, a.count, a.type);
    co_await deliver(const_cast<std::byte*>(data.data()), data.size());  // only read at the root
  } else {
    PackedOutput data(a.buffer, a.count, a.type);
    co_await deliver(data.data(), data.size());
    data.finish();
  }
}

nb::Task binomial(BcastArgs a, core::Comm& comm, int tag) {
  const int p = comm.size;
  const int relative = (comm.rank - a.root + p) % p;
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (relative & mask) {
      co_await nb::wait(irecv(a.buffer, a.count, a.type, (relative - mask + a.root) % p, tag, comm));
      break;
    }
  }
  std::vector<request::Request*> children;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (relative + mask < p)
      children.push_back(isend(a.buffer, a.count, a.type, (relative + mask + a.root) % p, tag, comm));
  }
  co_await nb::wait(std::move(children));
}

}  // namespace

nb::Task bcast(BcastArgs a, core::Comm& comm, int tag) {
  const model::Choice choice = modelled_choice(a, comm);
  if (choice.ring || choice.d > 1) return packed_delivery(a, comm, tag, choice);
  return binomial(a, comm, tag);
}

}  // namespace gridmpi::coll::intra
