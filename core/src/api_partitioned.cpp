// C API: MPI-4.0 partitioned point-to-point communication (MPI-4.0 4.2).
//
// A partitioned request is persistent and holds one persistent point-to-
// point request for the whole buffer (partitions x count elements).  The
// receive side posts it at MPI_Start, so MPI_Parrived reports every
// partition once the message has arrived; the send side sends it when the
// last partition is marked ready (MPI_Pready*), from the thread that marks
// it.  Sending partitions one by one would let early partitions leave
// sooner; one message keeps the two sides free to partition differently
// (the standard allows it) with nothing to reassemble.  The message travels
// on the communicator's point-to-point context with the user's tag, so an
// ordinary receive with that tag could take it: mixing the two on one tag
// is the program's error, not detected here.
#include <climits>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/runtime.hpp"
#include "core/src/api_pt2pt_util.hpp"

using namespace gridmpi;
using namespace gridmpi::core;
using gridmpi::request::Request;

namespace {

struct PartitionedRequest : Request {
  bool is_send = false;
  int partitions = 0;
  Request* inner = nullptr;   // the persistent send or receive of the whole buffer
  std::vector<bool> ready;    // send side: partitions marked ready since MPI_Start
  int nready = 0;
  bool inner_started = false;
};

PartitionedRequest& partitioned(MPI_Request handle, const char* what) {
  Request& r = pt2pt::lookup(handle);
  auto* p = r.kind == request::RequestKind::partitioned ? dynamic_cast<PartitionedRequest*>(&r) : nullptr;
  if (!p) throw MpiError(MPI_ERR_REQUEST, fmt::format("request {} is not a partitioned {} request", handle, what));
  return *p;
}

int whole_count(int partitions, MPI_Count count) {
  if (partitions < 1)
    throw MpiError(MPI_ERR_ARG, fmt::format("partitions is {}; it must be at least 1", partitions));
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
  if (count > INT_MAX / partitions)
    throw MpiError(MPI_ERR_COUNT, fmt::format("{} partitions of {} elements is more than {} elements, the most "
                                              "gridmpi's partitioned requests carry",
                                              partitions, count, INT_MAX));
  return static_cast<int>(count) * partitions;
}

// Completion of the outer request follows the inner one's.
bool poll_partitioned(PartitionedRequest* p) {
  if (!p->inner_started || !p->inner->complete) return false;
  p->status = p->inner->status;
  p->error = p->inner->error;
  p->inner->active = false;  // ready for the next MPI_Start
  p->inner_started = false;
  return true;
}

MPI_Request make_partitioned(bool is_send, int partitions, Request* inner, MPI_Comm comm) {
  auto p = std::make_unique<PartitionedRequest>();
  p->kind = request::RequestKind::partitioned;
  p->persistent = true;
  p->active = false;
  p->complete = true;
  p->comm = comm;
  p->is_send = is_send;
  p->partitions = partitions;
  p->inner = inner;
  PartitionedRequest* raw = p.get();
  raw->poll = [raw] { return poll_partitioned(raw); };
  return pt2pt::engine().adopt(std::move(p))->handle;
}

void start_inner(PartitionedRequest& p) {
  pt2pt::engine().start(p.inner);
  p.inner_started = true;
}

void mark_ready(PartitionedRequest& p, int partition) {
  if (!p.is_send) throw MpiError(MPI_ERR_REQUEST, "MPI_Pready on a partitioned receive request");
  if (!p.active) throw MpiError(MPI_ERR_REQUEST, "MPI_Pready on an inactive request (call MPI_Start first)");
  if (partition < 0 || partition >= p.partitions)
    throw MpiError(MPI_ERR_ARG, fmt::format("partition {} is not one of 0..{}", partition, p.partitions - 1));
  if (p.ready[static_cast<std::size_t>(partition)])
    throw MpiError(MPI_ERR_ARG, fmt::format("partition {} was already marked ready since MPI_Start", partition));
  p.ready[static_cast<std::size_t>(partition)] = true;
  if (++p.nready == p.partitions) start_inner(p);
}

}  // namespace

namespace gridmpi::core::pt2pt {

// MPI_Start / MPI_Startall on a partitioned request; false for others.
bool start_if_partitioned(Request& r) {
  if (r.kind != request::RequestKind::partitioned) return false;
  auto& p = dynamic_cast<PartitionedRequest&>(r);
  if (p.active) throw MpiError(MPI_ERR_REQUEST, "persistent request is already active");
  p.active = true;
  p.complete = false;
  p.ready.assign(static_cast<std::size_t>(p.partitions), false);
  p.nready = 0;
  if (!p.is_send) start_inner(p);
  engine().repoll(&p);
  return true;
}

// MPI_Request_free of a partitioned request: frees the inner one too.
bool free_if_partitioned(Request& r) {
  if (r.kind != request::RequestKind::partitioned) return false;
  auto& p = dynamic_cast<PartitionedRequest&>(r);
  if (p.active && !p.complete)
    throw MpiError(MPI_ERR_REQUEST, "an active partitioned request cannot be freed (complete it first)");
  request::Engine& e = engine();
  e.release(p.inner);
  e.release(&p);
  return true;
}

}  // namespace gridmpi::core::pt2pt

extern "C" int PMPI_Psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest,
                               int tag, MPI_Comm comm, MPI_Info info_handle, MPI_Request* request) {
  return api_call(comm, "MPI_Psend_init", [&] {
    require_initialized("MPI_Psend_init");
    require_out(request, "request");
    int whole = whole_count(partitions, count);
    Comm& c = pt2pt::check_send(buf, whole, datatype, dest, tag, comm);
    if (c.is_inter()) throw MpiError(MPI_ERR_COMM, "partitioned communication needs an intracommunicator");
    (void)info_handle;
    Request* inner = pt2pt::engine().send_init(buf, whole, datatype, dest, tag, c, c.context_id,
                                               request::SendMode::standard);
    *request = make_partitioned(true, partitions, inner, comm);
  });
}
GRIDMPI_WEAK(Psend_init)

extern "C" int PMPI_Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                               int tag, MPI_Comm comm, MPI_Info info_handle, MPI_Request* request) {
  return api_call(comm, "MPI_Precv_init", [&] {
    require_initialized("MPI_Precv_init");
    require_out(request, "request");
    int whole = whole_count(partitions, count);
    if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)
      throw MpiError(source == MPI_ANY_SOURCE ? MPI_ERR_RANK : MPI_ERR_TAG,
                     "partitioned receives take no wildcards (MPI-4.0 4.2.2)");
    Comm& c = pt2pt::check_recv(buf, whole, datatype, source, tag, comm);
    if (c.is_inter()) throw MpiError(MPI_ERR_COMM, "partitioned communication needs an intracommunicator");
    (void)info_handle;
    Request* inner = pt2pt::engine().recv_init(buf, whole, datatype, source, tag, c, c.context_id);
    *request = make_partitioned(false, partitions, inner, comm);
  });
}
GRIDMPI_WEAK(Precv_init)

extern "C" int PMPI_Pready(int partition, MPI_Request request) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Pready", [&] {
    require_initialized("MPI_Pready");
    PartitionedRequest& p = partitioned(request, "send");
    error_comm = p.comm;
    mark_ready(p, partition);
  });
}
GRIDMPI_WEAK(Pready)

extern "C" int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Pready_range", [&] {
    require_initialized("MPI_Pready_range");
    PartitionedRequest& p = partitioned(request, "send");
    error_comm = p.comm;
    if (partition_low > partition_high)
      throw MpiError(MPI_ERR_ARG, fmt::format("partition_low {} is above partition_high {}", partition_low,
                                              partition_high));
    for (int i = partition_low; i <= partition_high; ++i) mark_ready(p, i);
  });
}
GRIDMPI_WEAK(Pready_range)

extern "C" int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Pready_list", [&] {
    require_initialized("MPI_Pready_list");
    PartitionedRequest& p = partitioned(request, "send");
    error_comm = p.comm;
    if (length < 0) throw MpiError(MPI_ERR_ARG, fmt::format("length {} is negative", length));
    gridmpi::require(length == 0 || array_of_partitions != nullptr, MPI_ERR_ARG, "array_of_partitions is NULL");
    for (int i = 0; i < length; ++i) mark_ready(p, array_of_partitions[i]);
  });
}
GRIDMPI_WEAK(Pready_list)

extern "C" int PMPI_Parrived(MPI_Request request, int partition, int* flag) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Parrived", [&] {
    require_initialized("MPI_Parrived");
    require_out(flag, "flag");
    PartitionedRequest& p = partitioned(request, "receive");
    error_comm = p.comm;
    if (p.is_send) throw MpiError(MPI_ERR_REQUEST, "MPI_Parrived on a partitioned send request");
    if (partition < 0 || partition >= p.partitions)
      throw MpiError(MPI_ERR_ARG, fmt::format("partition {} is not one of 0..{}", partition, p.partitions - 1));
    // Inactive (completed and not restarted): every partition has arrived.
    if (!p.active || p.complete || (p.inner_started && p.inner->complete)) {
      *flag = 1;
      return;
    }
    pt2pt::poll_round();
    *flag = p.complete || (p.inner_started && p.inner->complete) ? 1 : 0;
  });
}
GRIDMPI_WEAK(Parrived)
