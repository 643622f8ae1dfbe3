// The intra-group phases of the intercommunicator collectives (inter_*.cpp):
// small non-blocking sub-schedules over one group's hidden local
// intracommunicator (core::Comm::local_comm), always rooted at local rank 0
// (the group's leader).  Owner: core/coll/ (inter).
//
// Every phase takes the tag it should use on the local communicator; a
// schedule gives each of its local phases a different one (local_tag) so
// that messages of consecutive phases can never be confused.
#pragma once
#include <mpi.h>

#include <cstddef>

#include "core/coll/nbc.hpp"
#include "core/coll/util.hpp"
#include "core/group.hpp"

namespace gridmpi::coll::inter {

// co_await wait_for(r) / wait_for(r1, r2): nb::wait of one or two requests.
// (GCC cannot keep the initializer_list of nb::wait({...}) in a coroutine
// frame, so schedules build the list in this ordinary function.)
nb::WaitAll wait_for(request::Request* a, request::Request* b = nullptr);

// The hidden intracommunicator over the local group of intercomm.
core::Comm& local_comm(core::Comm& intercomm);

// Tag of local phase `phase` (1..7) of the collective that got `tag` from
// nb::next_tag: distinct from the blocking collectives' tags (1..63) and from
// any tag nb::next_tag could hand out on the local communicator itself.
int local_tag(int tag, int phase);

// Binomial broadcast from local rank 0 of (buf, count, type).
nb::Task local_bcast(void* buf, int count, MPI_Datatype type, core::Comm& lc, int tag);

// Binomial reduction to local rank 0 in rank order: afterwards `result` (a
// TypedBuffer(count, type) the caller owns) holds at rank 0
// sendbuf_0 op sendbuf_1 op ... op sendbuf_{n-1}.  Other ranks' `result` is
// scratch.
nb::Task local_reduce(const void* sendbuf, TypedBuffer& result, int count, MPI_Datatype type,
                      MPI_Op op, core::Comm& lc, int tag);

// Binomial fan-in to local rank 0 of empty messages (the first half of a
// barrier): rank 0 finishes once every member has entered.
nb::Task local_fanin(core::Comm& lc, int tag);

// Linear scatter from local rank 0: rank i receives counts[i] elements of
// type into recvbuf; at rank 0 they start at element displs[i] of sendbuf.
nb::Task local_scatterv(const void* sendbuf, const int* counts, const int* displs,
                        MPI_Datatype type, void* recvbuf, core::Comm& lc, int tag);

}  // namespace gridmpi::coll::inter
