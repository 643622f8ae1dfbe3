// One-sided communication (MPI-3.1 chapter 11): windows, epochs and RMA
// operations.  Owner: core/win*.cpp.
//
// A window owns a private duplicate of its communicator.  Every origin
// operation is one message on that duplicate's point-to-point context to the
// target (core/win_wire.hpp): a header, the target's layout as (offset,
// length) blocks and the packed origin data.  The target serves them from
// the engine's progress loop (core/win_target.cpp: an adopted request whose
// poll function receives and applies operations) and answers every one
// (an ack, or the data of a get / fetch), so the origin completes an
// operation when its answer arrives.  An operation on memory this process
// reaches directly (its own, or any member's of a shared window) is
// performed at once instead, by the origin itself.  See core/README.md,
// "One-sided communication".
#pragma once
#include <mpi.h>
#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/handle_table.hpp"

namespace gridmpi::request { struct Request; }

namespace gridmpi::core {

struct Comm;
struct RmaHeader;
struct RmaBlock;

// A byte buffer that is not zeroed when allocated (message buffers are
// written in full before use; zeroing megabytes per operation shows).
struct ByteBuffer {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size = 0;
  void allocate(std::size_t n) {
    bytes = n > 0 ? std::make_unique_for_overwrite<std::byte[]>(n) : nullptr;
    size = n;
  }
  void clear() noexcept {
    bytes.reset();
    size = 0;
  }
  std::byte* data() const noexcept { return bytes.get(); }
};

// An origin operation whose answer has not been consumed yet.
struct PendingOp {
  int target = MPI_PROC_NULL;
  request::Request* send = nullptr;   // the operation message
  request::Request* reply = nullptr;  // its answer (ack or data)
  ByteBuffer message;                 // kept until the send completes
  ByteBuffer reply_data;
  std::function<void(std::span<const std::byte>)> on_reply;  // e.g. unpack a get
  std::size_t bytes = 0;  // message + answer buffers, counted in Window::pending_bytes
  bool finished = false;
};

// One incoming operation message at the target, in arrival order per origin.
struct Incoming {
  request::Request* recv = nullptr;
  ByteBuffer bytes;
};

// Lock manager of one window at the target: grants in arrival order; an
// exclusive lock excludes every other lock.
class LockManager {
 public:
  // Queues the request (once) and grants what can be granted; true when
  // `origin` holds its lock.
  bool acquire(int origin, int lock_type);
  void release(int origin);
  bool holds(int origin) const noexcept { return exclusive_ == origin || shared_.count(origin) != 0; }

 private:
  void grant();
  struct Waiter {
    int origin;
    int lock_type;
  };
  std::deque<Waiter> waiting_;
  int exclusive_ = -1;
  std::set<int> shared_;
};

struct Window {
  MPI_Win handle = MPI_WIN_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate: its own context
  int rank = 0, size = 0;
  // Local memory (MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT ...).
  void* base = nullptr;
  MPI_Aint bytes = 0;
  int disp_unit = 1;
  int flavor = 0;  // MPI_WIN_FLAVOR_*
  int model = 0;   // MPI_WIN_SEPARATE (MPI_WIN_UNIFIED for shared windows)
  std::unique_ptr<std::byte[]> allocated;  // MPI_Win_allocate's memory
  // MPI_Win_allocate_shared: the whole node segment (every member's memory,
  // contiguous in rank order), unmapped when the window is destroyed, and
  // each member's offset in it.
  std::shared_ptr<std::byte> shared_segment;
  std::vector<MPI_Aint> shared_offset;
  // In the same segment, after the members' memory: one process-shared
  // mutex per member, held while an operation of the accumulate family is
  // applied to its memory (by whichever member performs it).
  struct alignas(64) AccumulateLock {
    pthread_mutex_t mutex;
  };
  AccumulateLock* accumulate_locks = nullptr;
  // Every member's size and displacement unit, for range checks at the origin.
  std::vector<MPI_Aint> target_bytes;
  std::vector<int> target_disp_unit;
  // Dynamic windows: attached regions (address -> bytes), checked at the target.
  std::map<std::uintptr_t, std::size_t> attached;

  std::string name;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  // The MPI-3.1 window hints given at creation or by MPI_Win_set_info
  // (others are ignored), reported by MPI_Win_get_info with the defaults.
  // None changes what the implementation does: it already gives the
  // strictest accumulate ordering and supports every operation.
  std::map<std::string, std::string> hints;

  // ---- origin side ----
  // Operations not reaped yet, in issue order (finished ones leave from the
  // front; complete_operations sweeps the rest).
  std::deque<std::shared_ptr<PendingOp>> pending;
  std::size_t pending_bytes = 0;
  unsigned issued_since_progress = 0;
  // Per target: the last message sent to it expects no answer (a put or an
  // accumulate), so completing it remotely needs a flush message.  Any
  // answered message clears it: the target answers after applying
  // everything this origin sent before.
  std::vector<char> unflushed;
  std::vector<std::byte> direct_scratch;  // the packed origin data of an immediate operation
  std::uint32_t next_reply = 0;
  bool fence_epoch = false;          // after a fence without MPI_MODE_NOSUCCEED
  std::map<int, int> locks;          // target -> lock type (MPI_Win_lock)
  std::set<int> nocheck_locks;       // targets locked with MPI_MODE_NOCHECK (no messages)
  bool lock_all = false;
  bool lock_all_nocheck = false;
  bool access_started = false;       // MPI_Win_start .. MPI_Win_complete
  std::vector<int> access_group;     // window ranks
  bool access_nocheck = false;

  // ---- target side ----
  request::Request* server = nullptr;  // adopted; polled by every progress round
  std::map<int, std::deque<Incoming>> incoming;  // per origin rank
  struct Reply {
    request::Request* send = nullptr;
    std::vector<std::byte> data;
  };
  std::list<Reply> replies;
  LockManager lock_manager;
  bool exposure_posted = false;      // MPI_Win_post .. MPI_Win_wait/test
  std::vector<request::Request*> complete_notices;  // one receive per origin of the post group
  std::vector<request::Request*> control_sends;     // post / complete notices in flight
};

HandleTable<Window>& win_table();
Window& window(MPI_Win handle);  // throws MpiError(MPI_ERR_WIN)

// ---- creation and destruction (collective over comm) ----
MPI_Win win_create(void* base, MPI_Aint bytes, int disp_unit, Comm& comm);
MPI_Win win_allocate(MPI_Aint bytes, int disp_unit, Comm& comm, void* baseptr);
MPI_Win win_create_dynamic(Comm& comm);
// Every member's memory in one POSIX shared-memory segment: all members must
// be on one host (MPI_ERR_RMA_SHARED otherwise).  The segment's name is
// unlinked before the call returns, so nothing is left in /dev/shm.
MPI_Win win_allocate_shared(MPI_Aint bytes, int disp_unit, Comm& comm, void* baseptr);
// MPI_Win_shared_query: rank's segment (MPI_PROC_NULL: the lowest rank with
// a non-empty one).
void win_shared_query(const Window& w, int rank, MPI_Aint* bytes, int* disp_unit, void* baseptr);
void win_attach(Window& w, void* base, MPI_Aint bytes);
void win_detach(Window& w, const void* base);
void win_free(MPI_Win handle);
MPI_Group win_get_group(const Window& w);

// ---- synchronisation ----
void win_fence(Window& w, int assert_flags);
void win_lock(Window& w, int lock_type, int rank, int assert_flags);
void win_unlock(Window& w, int rank);
void win_lock_all(Window& w, int assert_flags);
void win_unlock_all(Window& w);
void win_flush(Window& w, int rank);
void win_flush_all(Window& w);
// Local completion only: the origin buffers may be reused (gets have their data).
void win_flush_local(Window& w, int rank);
void win_flush_local_all(Window& w);
void win_post(Window& w, MPI_Group group, int assert_flags);
void win_start(Window& w, MPI_Group group, int assert_flags);
void win_complete(Window& w);
void win_wait(Window& w);
bool win_test(Window& w);

// ---- communication ----
// An operation; returns its pending record (for the R* request forms), or
// null when nothing was sent (MPI_PROC_NULL target, zero bytes).
struct RmaCall {
  const void* origin = nullptr;
  int origin_count = 0;
  MPI_Datatype origin_type = MPI_DATATYPE_NULL;
  void* result = nullptr;  // get, get_accumulate, fetch_and_op, compare_and_swap
  int result_count = 0;
  MPI_Datatype result_type = MPI_DATATYPE_NULL;
  const void* compare = nullptr;  // compare_and_swap
  int target = MPI_PROC_NULL;
  MPI_Aint target_disp = 0;
  int target_count = 0;
  MPI_Datatype target_type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  bool request_based = false;  // MPI_Rput and friends: passive target only
};
std::shared_ptr<PendingOp> rma_put(Window& w, const RmaCall& call);
std::shared_ptr<PendingOp> rma_get(Window& w, const RmaCall& call);
std::shared_ptr<PendingOp> rma_accumulate(Window& w, const RmaCall& call);
std::shared_ptr<PendingOp> rma_get_accumulate(Window& w, const RmaCall& call);
std::shared_ptr<PendingOp> rma_compare_and_swap(Window& w, const RmaCall& call);
// The MPI request of an R* operation: complete when the operation is
// (remotely) complete.
MPI_Request rma_request(Window& w, std::shared_ptr<PendingOp> op);

// ---- target side (core/win_target.cpp) ----
// Whether this process reaches the memory of window member `target`
// directly: itself, or any member of a shared window.  Operations on such a
// target are performed at once by the origin (apply_direct).
inline bool reaches_directly(const Window& w, int target) {
  return target == w.rank || w.flavor == MPI_WIN_FLAVOR_SHARED;
}
// Performs one data operation (put, get, the accumulate family) on the
// memory of `target` (reached directly), as its server would: `data` is the
// packed origin data; returns the old data that get, get_accumulate and
// compare_and_swap answer with.  Accumulates are atomic with respect to
// those of every other origin (the accumulate locks of a shared window; a
// process's own memory is only ever written by one thread at a time).
std::vector<std::byte> apply_direct(const Window& w, int target, const RmaHeader& header,
                                    std::span<const RmaBlock> blocks, const std::byte* data);
void start_server(Window& w);
void stop_server(Window& w);  // waits for the answers still being sent

// ---- errors ----
// Runs the window's error handler (MPI_COMM_WORLD's rules when the window is
// invalid) and returns the code for the caller.
int handle_win_error(MPI_Win win, int error_class, const char* function, const char* message) noexcept;

}  // namespace gridmpi::core
