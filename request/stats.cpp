// MPI_T performance variables of the request layer (request/stats.hpp).
#include "request/stats.hpp"

#include <mpi.h>

#include "core/mpit_pvars.hpp"

namespace gridmpi::request::stats {

namespace {

const core::pvars::Registration messages_received_pvar{core::pvars::Pvar{
    "request.messages_received",
    "messages (eager, synchronous or rendezvous) that arrived at this process, from itself included",
    core::pvars::Kind::counter, MPI_T_VERBOSITY_USER_BASIC,
    [] { return static_cast<unsigned long long>(messages_received.load(std::memory_order_relaxed)); }, nullptr}};

}  // namespace

}  // namespace gridmpi::request::stats
