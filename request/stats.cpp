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

#define GRIDMPI_COUNTER_PVAR(variable, name, description)                                              \
  const core::pvars::Registration variable##_pvar{core::pvars::Pvar{                                     \
      name, description, core::pvars::Kind::counter, MPI_T_VERBOSITY_USER_BASIC,                        \
      [] { return static_cast<unsigned long long>(variable.load(std::memory_order_relaxed)); }, nullptr}}
GRIDMPI_COUNTER_PVAR(predict_idle_waits, "request.predict.idle_waits",
                     "waits for a message that found nothing and went idle (request.predict not off)");
GRIDMPI_COUNTER_PVAR(predict_predictions, "request.predict.predictions",
                     "predictions of the next message's header made while a receive waited idle");
GRIDMPI_COUNTER_PVAR(predict_hits, "request.predict.hits",
                     "predictions that the next message on their stream (communicator, source) matched");
GRIDMPI_COUNTER_PVAR(predict_misses, "request.predict.misses",
                     "predictions that the next message on their stream did not match");
GRIDMPI_COUNTER_PVAR(predict_credits, "request.predict.credits",
                     "credits given: a sender's next message predicted long may come eagerly");
GRIDMPI_COUNTER_PVAR(predict_credits_used, "request.predict.credits_used",
                     "long messages sent eagerly on a credit (a request-to-send and clear-to-send round trip "
                     "saved each)");
#undef GRIDMPI_COUNTER_PVAR
const core::pvars::Registration predict_time_saved_pvar{core::pvars::Pvar{
    "request.predict.time_saved",
    "seconds saved by credits: for each long message sent eagerly on one, the least time from request-to-send "
    "to clear-to-send of the rendezvous messages to that receiver (an estimate: 0 before any was measured)",
    core::pvars::Kind::timer, MPI_T_VERBOSITY_USER_BASIC, nullptr,
    [] { return predict_time_saved.load(std::memory_order_relaxed); }}};

}  // namespace

}  // namespace gridmpi::request::stats
