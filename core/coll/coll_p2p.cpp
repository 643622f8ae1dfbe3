// Point-to-point for collective algorithms: the request engine on the
// communicator's hidden collective context, so that collectives never meet
// user messages.  Owner: request/ (see request/README.md).
#include <fmt/format.h>

#include <utility>

#include "core/coll/coll.hpp"
#include "base/error.hpp"
#include "core/runtime.hpp"
#include "request/request.hpp"

namespace gridmpi::coll {

namespace {

request::Engine& engine() {
  core::Runtime& rt = core::runtime();
  if (!rt.engine) throw MpiError(MPI_ERR_INTERN, "the request engine is not running");
  return *rt.engine;
}

// Throws for a failed request (its status names the peer and tag).
void throw_if_failed(int error, const MPI_Status& s) {
  if (error != MPI_SUCCESS)
    throw MpiError(error, fmt::format("collective message from rank {} (internal tag {}) failed with error class {}",
                                      s.MPI_SOURCE, s.MPI_TAG, error));
}

// Copies the status, frees the request, and turns a failure into an exception.
void finish(request::Engine& e, request::Request* r, MPI_Status* status) {
  if (status) *status = r->status;
  const int error = r->error;
  const MPI_Status s = r->status;
  e.release(r);
  throw_if_failed(error, s);
}

// A send request waited for in this scope: finish() takes it.  When the
// wait throws, an incomplete one is cancelled (a message nobody matched yet
// is withdrawn: it must not meet a later collective, and its buffer is
// about to go) and freed, to complete or fail in the background.
class SendScope {
 public:
  explicit SendScope(request::Engine& e) : e_(e) {}
  SendScope(const SendScope&) = delete;
  SendScope& operator=(const SendScope&) = delete;
  ~SendScope() {
    if (!r_) return;
    if (!r_->complete) {
      try {
        e_.cancel(r_);
      } catch (...) {
        // The peer is gone or the frame cannot be sent: nothing to withdraw.
      }
    }
    if (r_->complete)
      e_.release(r_);
    else
      r_->freed = true;
  }
  void hold(request::Request* r) { r_ = r; }
  request::Request* get() const { return r_; }
  void finish() { coll::finish(e_, std::exchange(r_, nullptr), nullptr); }

 private:
  request::Engine& e_;
  request::Request* r_ = nullptr;
};

}  // namespace

request::Request* isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm) {
  return engine().isend(buf, count, type, dest, tag, comm, comm.coll_context(), request::SendMode::standard);
}

request::Request* irecv(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm) {
  return irecv_in(comm.coll_context(), buf, count, type, source, tag, comm);
}

request::Request* irecv_in(std::uint32_t context, void* buf, int count, MPI_Datatype type, int source, int tag,
                           core::Comm& comm) {
  return engine().irecv(buf, count, type, source, tag, comm, context);
}

void send(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm) {
  send_in(comm.coll_context(), buf, count, type, dest, tag, comm);
}

void send_in(std::uint32_t context, const void* buf, int count, MPI_Datatype type, int dest, int tag,
             core::Comm& comm) {
  auto& e = engine();
  // A short message goes out at once, without a request (MPI_Send's path).
  if (e.send_now(buf, count, type, dest, tag, comm, context)) return;
  SendScope send(e);
  send.hold(e.isend(buf, count, type, dest, tag, comm, context, request::SendMode::standard));
  request::Request* r = send.get();
  if (!r->complete) e.wait_until([r] { return r->complete; });
  send.finish();
}

void recv(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm, MPI_Status* status) {
  recv_in(comm.coll_context(), buf, count, type, source, tag, comm, status);
}

void recv_in(std::uint32_t context, void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
             MPI_Status* status) {
  auto& e = engine();
  request::BlockingReceive receive(e, buf, count, type, source, tag, comm, context);
  request::Request* r = receive.get();
  if (!r->complete) e.wait_until([r] { return r->complete; });
  if (status) *status = r->status;
  throw_if_failed(r->error, r->status);
}

void sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int source, int recvtag, core::Comm& comm, MPI_Status* status) {
  auto& e = engine();
  // On a throw, recv_finish takes the receive off the queue, or keeps it
  // until its data is in when it matched already.
  request::BlockingReceive receive(e, recvbuf, recvcount, recvtype, source, recvtag, comm, comm.coll_context());
  request::Request* r = receive.get();
  SendScope send(e);
  // A short message goes out at once, without a request (MPI_Send's path).
  if (!e.send_now(sendbuf, sendcount, sendtype, dest, sendtag, comm, comm.coll_context()))
    send.hold(e.isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, comm.coll_context(),
                      request::SendMode::standard));
  request::Request* sr = send.get();
  if (!r->complete || (sr && !sr->complete)) e.wait_until([&] { return r->complete && (!sr || sr->complete); });
  if (sr) send.finish();
  if (status) *status = r->status;
  throw_if_failed(r->error, r->status);
}

void wait_all(std::span<request::Request*> requests) {
  auto& e = engine();
  e.wait_until([&] {
    for (request::Request* r : requests)
      if (r && !r->complete) return false;
    return true;
  });
  // Free them all even when one failed, then report the first failure.
  std::exception_ptr first;
  for (request::Request*& r : requests) {
    if (!r) continue;
    try {
      finish(e, r, nullptr);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
    r = nullptr;
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace gridmpi::coll
