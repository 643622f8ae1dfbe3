// Requests and the request layer's engine.  Owner: request/.
//
// The engine owns matching (posted and unexpected queues per context, MPI
// non-overtaking order, wildcards), the eager / rendezvous protocols, the
// transports (chosen per destination from their declared capabilities) and
// the progress loop.  It knows nothing of which transport is which.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gridmpi::core { struct Comm; }
namespace gridmpi::impi { struct Startup; }

namespace gridmpi::request {

enum class SendMode : std::uint8_t { standard, buffered, synchronous, ready };

enum class RequestKind : std::uint8_t {
  send, recv, generalized, collective, partitioned,
};

// A request as the C API sees it.  The engine fills `status` and sets
// `complete`; the API layer maps MPI_Request handles to Request objects.
struct PointRequest;

struct Request {
  MPI_Request handle = MPI_REQUEST_NULL;
  RequestKind kind = RequestKind::send;
  bool complete = false;
  bool persistent = false;   // MPI_*_init: survives completion, restarted by MPI_Start
  bool active = true;        // persistent requests are inactive until started
  bool freed = false;        // MPI_Request_free called before completion
  bool cancelled = false;
  MPI_Status status{};
  // Error class to report for this request (e.g. MPI_ERR_TRUNCATE).
  int error = MPI_SUCCESS;
  // For persistent requests: the arguments needed to restart.
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  int peer = MPI_PROC_NULL;  // dest or source (comm rank)
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint32_t context = 0;
  SendMode mode = SendMode::standard;
  // Generalized and collective requests: called by progress to advance the
  // operation; returns true when it completed.  Null for point-to-point.
  std::function<bool()> poll;
  virtual ~Request() = default;
  // The point-to-point request this is, or null (cheaper than dynamic_cast
  // on every completion).
  virtual PointRequest* as_point() noexcept { return nullptr; }
};

class Engine {
 public:
  virtual ~Engine() = default;

  // Point-to-point.  `rank` is a rank of comm (remote group for an
  // intercommunicator); MPI_PROC_NULL gives an already complete request.
  // The datatype must be committed.  Returned requests stay owned by the
  // engine until release().
  virtual Request* isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                         core::Comm& comm, std::uint32_t context, SendMode mode) = 0;
  // A blocking standard-mode send's fast path: sends the message at once
  // when it is a short contiguous eager message the peer's transport copies
  // and nothing is queued before it, and returns true (the send is
  // complete); false when the caller must go through isend (nothing sent).
  // The arguments must have been checked (core::pt2pt::check_send).
  virtual bool send_now(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                        std::uint32_t context) = 0;
  virtual Request* irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                         core::Comm& comm, std::uint32_t context) = 0;
  // A blocking receive's request: irecv without a handle (nothing else can
  // name it).  The caller waits for it, then must hand it to recv_finish(),
  // also when the wait threw.
  virtual Request* recv_start(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                              std::uint32_t context) = 0;
  virtual void recv_finish(Request* request) noexcept = 0;
  // Matching probe without receiving.  Returns true and fills status when a
  // matching message has arrived (blocking = wait for one).
  virtual bool probe(int source, int tag, core::Comm& comm, std::uint32_t context, bool blocking,
                     MPI_Status* status) = 0;
  // MPI_Cancel.  A receive not yet matched is cancelled at once (returns
  // true).  A send (even one already complete locally) asks its receiver to
  // drop the message if nothing matched it yet: the request becomes
  // incomplete until the answer arrives, then `cancelled` tells the outcome
  // (returns false).  Anything else is left to complete normally (false).
  virtual bool cancel(Request* request) = 0;
  // After cancel() of a send: progresses until its receiver's answer is in,
  // so that the cancel is decided (the request complete and cancelled, or
  // the send going on normally) when MPI_Cancel returns.  Returns at once
  // for anything else.
  virtual void await_cancel(Request* request) = 0;

  // Runs every transport once without blocking; returns true if any work was done.
  virtual bool progress() = 0;
  // One round of a caller's own polling loop (MPI_Test*, MPI_Iprobe) that has
  // not found what it polls for: progress(), then, when the round did no
  // work or other threads wait for the big lock, gives the core (sched_yield)
  // or the lock away, so that a rank spinning on MPI_Test does not starve the
  // ranks or threads it waits for.  Returns whether the round did work.
  virtual bool test_round() = 0;
  // The give-away alone, for a polling call whose progress ran inside the
  // engine and found nothing (MPI_Iprobe).
  virtual void test_idle() = 0;
  // Progresses until done() is true: spins a bounded number of rounds, then
  // sleeps on the transports' fds (or yields for fd-less transports).
  virtual void wait_until(const std::function<bool()>& done) = 0;
  // Frees the request object (the API has copied out what it needs).
  virtual void release(Request* request) = 0;
  // Registers a request created outside the engine (collective, generalized)
  // so that progress() polls it; the engine takes ownership.
  virtual Request* adopt(std::unique_ptr<Request> request) = 0;
  // An adopted request made incomplete again (a persistent one restarted,
  // e.g. partitioned communication) goes back on the polled list.
  virtual void repoll(Request* request) = 0;

  // Wire-up: this process's endpoint description (published through the
  // control service), then every peer's (index = world rank).
  virtual std::string endpoint() = 0;
  virtual void set_peer_endpoints(const std::vector<std::string>& endpoints) = 0;

  // What the transport that reaches world rank `world` declares: its name,
  // one-way latency and bandwidth (the collectives' cost model falls back on
  // them when the site was never calibrated, core/coll/model.hpp).  A query:
  // nothing is set up.  Throws MpiError when no transport reaches it.
  struct PeerLink {
    const char* transport = "";
    double latency_us = 0;
    double bandwidth_bytes_per_s = 0;
  };
  virtual PeerLink peer_link(int world) const = 0;
  // Waits until every transport made the connections it must make before
  // MPI_Init returns (IMPI's host connections); throws MpiError on failure.
  virtual void wait_ready() = 0;
  // Called by MPI_Finalize after the final barrier: flushes and closes.
  virtual void shutdown() = 0;

  // Persistent requests (MPI_*_init): created inactive (complete, not active);
  // start() launches one; after completion it is inactive again until the
  // next start().  MPI_PROC_NULL is allowed.
  virtual Request* send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                             core::Comm& comm, std::uint32_t context, SendMode mode) = 0;
  virtual Request* recv_init(void* buf, int count, MPI_Datatype type, int source, int tag,
                             core::Comm& comm, std::uint32_t context) = 0;
  virtual void start(Request* request) = 0;

  // Matched probe (MPI_Improbe/MPI_Mprobe): takes the message out of the
  // matching queues and names it by an MPI_Message handle
  // (MPI_MESSAGE_NO_PROC for MPI_PROC_NULL); imrecv receives it.
  virtual bool improbe(int source, int tag, core::Comm& comm, std::uint32_t context, bool blocking,
                       MPI_Message* message, MPI_Status* status) = 0;
  virtual Request* imrecv(void* buf, int count, MPI_Datatype type, MPI_Message message) = 0;

  // MPI_Buffer_attach / MPI_Buffer_detach (detach waits until every buffered
  // message has left the buffer).  Throws MpiError(MPI_ERR_BUFFER) when a
  // buffer is already attached.
  virtual void buffer_attach(void* buffer, int size) = 0;
  virtual std::pair<void*, int> buffer_detach() = 0;
};

// MPI_Request handles: every Request the engine hands out has a handle
// (assigned by the engine); this finds it again, or returns nullptr.
Request* find_request(MPI_Request handle) noexcept;

// Creates the engine for this process (world rank/size, job cookie; the
// IMPI start-up in a multi-cluster job).
std::unique_ptr<Engine> make_engine(int world_rank, int world_size, std::uint64_t job_cookie,
                                    std::shared_ptr<const impi::Startup> impi = nullptr);

// A blocking receive from Engine::recv_start to Engine::recv_finish, on
// every way out of the scope (a wait that throws included).
class BlockingReceive {
 public:
  BlockingReceive(Engine& engine, void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                  std::uint32_t context)
      : engine_(engine), request_(engine.recv_start(buf, count, type, source, tag, comm, context)) {}
  BlockingReceive(const BlockingReceive&) = delete;
  BlockingReceive& operator=(const BlockingReceive&) = delete;
  ~BlockingReceive() { engine_.recv_finish(request_); }
  Request* get() const noexcept { return request_; }

 private:
  Engine& engine_;
  Request* request_;
};

}  // namespace gridmpi::request
