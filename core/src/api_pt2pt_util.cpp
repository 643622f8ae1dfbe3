#include "core/src/api_pt2pt_util.hpp"

#include "core/datatype.hpp"
#include "core/runtime.hpp"
#include "request/request_types.hpp"

namespace gridmpi::core::pt2pt {

request::Engine& engine() {
  Runtime& rt = runtime();
  if (!rt.engine) throw MpiError(MPI_ERR_INTERN, "the request engine is not running");
  return *rt.engine;
}

void poll_round() { engine().test_round(); }

void yield_idle() { engine().test_idle(); }

namespace {

// The checks run on every call (inline); their failures are out of line.
[[noreturn, gnu::cold, gnu::noinline]] void bad_count(int count) {
  throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
}

[[noreturn, gnu::cold, gnu::noinline]] void null_type() {
  throw MpiError(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
}

[[noreturn, gnu::cold, gnu::noinline]] void bad_rank(const Comm& c, int rank, const char* what) {
  throw MpiError(MPI_ERR_RANK, fmt::format("{} rank {} is outside 0..{} of the {}communicator", what, rank,
                                           c.peer_size() - 1, c.is_inter() ? "remote group of the inter" : ""));
}

[[noreturn, gnu::cold, gnu::noinline]] void bad_tag(int tag, bool any_allowed) {
  throw MpiError(MPI_ERR_TAG, fmt::format("tag {} is invalid (tags are 0..{}{})", tag, 0x7fffffff,
                                          any_allowed ? " or MPI_ANY_TAG" : ""));
}

[[noreturn, gnu::cold, gnu::noinline]] void null_comm() {
  throw MpiError(MPI_ERR_COMM, "communicator is MPI_COMM_NULL");
}

// MPI_DATATYPE_NULL with count 0 is an empty message of MPI_BYTE: MPICH
// accepts it on every point-to-point call (its test suite sends and
// receives that way, from MPI_PROC_NULL too); Open MPI refuses it.  No
// element needs no type map, and the program moves no data either way.
// With any other count it is MPI_ERR_TYPE, as in both.
[[gnu::always_inline]] inline void check_count_and_type(int count, MPI_Datatype& type) {
  if (count < 0) [[unlikely]]
    bad_count(count);
  if (type == MPI_DATATYPE_NULL) [[unlikely]] {
    if (count != 0) null_type();
    type = MPI_BYTE;
    return;
  }
  // Refuses uncommitted types and types whose size overflowed (too_large)
  // before any caller computes count * size.
  committed_datatype(type);
}

[[gnu::always_inline]] inline void check_rank(const Comm& c, int rank, bool any_allowed, const char* what) {
  if (rank == MPI_PROC_NULL || (any_allowed && rank == MPI_ANY_SOURCE)) return;
  if (rank < 0 || rank >= c.peer_size()) [[unlikely]]
    bad_rank(c, rank, what);
}

[[gnu::always_inline]] inline void check_tag(int tag, bool any_allowed) {
  if (any_allowed && tag == MPI_ANY_TAG) return;
  // MPI_TAG_UB is 0x7fffffff: every non-negative int is a valid tag.
  if (tag < 0) [[unlikely]]
    bad_tag(tag, any_allowed);
}

[[gnu::always_inline]] inline Comm& check_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) [[unlikely]]
    null_comm();
  return core::comm(comm);
}

}  // namespace

Comm& check_send(const void*, int count, MPI_Datatype& type, int dest, int tag, MPI_Comm comm) {
  Comm& c = check_comm(comm);
  check_count_and_type(count, type);
  check_rank(c, dest, false, "destination");
  check_tag(tag, false);
  return c;
}

Comm& check_recv(void*, int count, MPI_Datatype& type, int source, int tag, MPI_Comm comm) {
  Comm& c = check_comm(comm);
  check_count_and_type(count, type);
  check_rank(c, source, true, "source");
  check_tag(tag, true);
  return c;
}

Comm& check_probe(int source, int tag, MPI_Comm comm) {
  Comm& c = check_comm(comm);
  check_rank(c, source, true, "source");
  check_tag(tag, true);
  return c;
}

request::Request& lookup(MPI_Request handle) {
  if (handle == MPI_REQUEST_NULL) throw MpiError(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
  request::Request* r = request::find_request(handle);
  if (!r) throw MpiError(MPI_ERR_REQUEST, fmt::format("invalid request handle {}", handle));
  return *r;
}

void set_empty_status(MPI_Status* status) {
  if (!status) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->gridmpi_count = 0;
  status->gridmpi_cancelled = 0;
}

void copy_status(MPI_Status* to, const MPI_Status& from) {
  if (!to) return;
  int error = to->MPI_ERROR;
  *to = from;
  to->MPI_ERROR = error;
}

bool is_inactive(const request::Request* r) { return !r || (r->persistent && !r->active); }

namespace {

std::string describe_failure(const request::Request& r) {
  if (r.error == MPI_ERR_TRUNCATE) {
    const auto* p = dynamic_cast<const request::PointRequest*>(&r);
    if (p)
      return fmt::format("message of {} bytes from rank {} (tag {}) truncated to the {}-byte receive buffer",
                         p->message_size, r.status.MPI_SOURCE, r.status.MPI_TAG, p->bytes);
    return "message truncated";
  }
  if (r.handle == MPI_REQUEST_NULL) return fmt::format("the receive failed with error class {}", r.error);
  return fmt::format("request {} failed with error class {}", r.handle, r.error);
}

}  // namespace

int finish(request::Engine& engine, MPI_Request* handle, MPI_Status* status, std::string* message) {
  request::Request& r = lookup(*handle);
  if (auto* g = as_generalized(r)) {
    MPI_Status local{};
    set_empty_status(&local);
    int error = g->query ? g->query(g->extra_state, &local) : MPI_SUCCESS;
    copy_status(status, local);
    int free_error = g->free ? g->free(g->extra_state) : MPI_SUCCESS;
    engine.release(g);
    *handle = MPI_REQUEST_NULL;
    if (error == MPI_SUCCESS) error = free_error;
    if (error != MPI_SUCCESS && message) *message = fmt::format("generalized request callback returned {}", error);
    return error;
  }
  copy_status(status, r.status);
  int error = r.error;
  if (error != MPI_SUCCESS && message) *message = describe_failure(r);
  if (r.persistent) {
    r.active = false;
  } else {
    engine.release(&r);
    *handle = MPI_REQUEST_NULL;
  }
  return error;
}

void release_checked(request::Engine& engine, request::Request* r, MPI_Status* status) {
  copy_status(status, r->status);
  int error = r->error;
  std::string message = error != MPI_SUCCESS ? describe_failure(*r) : std::string();
  engine.release(r);
  if (error != MPI_SUCCESS) throw MpiError(error, message);
}

void wait_and_release(request::Engine& engine, request::Request* r, MPI_Status* status) {
  if (!r->complete) engine.wait_until([r] { return r->complete; });
  release_checked(engine, r, status);
}

void recv_blocking(request::Engine& engine, void* buf, int count, MPI_Datatype type, int source, int tag,
                   Comm& comm, std::uint32_t context, MPI_Status* status) {
  request::BlockingReceive receive(engine, buf, count, type, source, tag, comm, context);
  request::Request* r = receive.get();
  if (!r->complete) engine.wait_until([r] { return r->complete; });
  copy_status(status, r->status);
  if (r->error != MPI_SUCCESS) throw MpiError(r->error, describe_failure(*r));
}

}  // namespace gridmpi::core::pt2pt
