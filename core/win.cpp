// Windows: creation and destruction, epochs (fence, lock, PSCW) and the
// origin side of RMA operations.  Owner: core/win*.cpp.
//
// Every operation is a message to the target's server (core/win_target.cpp).
// The target handles one origin's messages in order, so an answer completes
// everything sent before it: puts and accumulates go unanswered, and
// completing an epoch is "make the last message to each target an answered
// one (a flush if need be), then wait for the answers": fence = that for
// everyone + barrier, unlock = that for the target (the unlock is answered).
// Except an operation on memory this process reaches directly (its own, or a
// shared window's): that one is performed at once (issue()), so it is
// complete when the call returns and nothing is left to write later into
// buffers the user may free.
#include "core/win.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <cstdio>

#include <fmt/format.h>

#include "core/attr.hpp"
#include "core/coll/coll.hpp"
#include "core/api.hpp"
#include "core/datatype.hpp"
#include "core/errhandler.hpp"
#include "base/error.hpp"
#include "core/group.hpp"
#include "core/op.hpp"
#include "core/runtime.hpp"
#include "core/win_wire.hpp"
#include "request/request.hpp"

namespace gridmpi::core {

namespace {

request::Engine& engine() { return *runtime().engine; }

struct WindowInfo {
  std::int64_t bytes;
  std::int32_t disp_unit;
  std::int32_t reserved;
};

// Collective: duplicates comm, learns every member's size and unit, starts
// the server.
MPI_Win make_window(Comm& parent, void* base, MPI_Aint bytes, int disp_unit, int flavor,
                    std::unique_ptr<std::byte[]> memory) {
  if (parent.is_inter())
    throw MpiError(MPI_ERR_COMM, "windows need an intracommunicator");
  auto w = std::make_unique<Window>();
  w->comm = comm_dup(parent);
  Comm& c = comm(w->comm);
  w->rank = c.rank;
  w->size = c.size;
  w->base = base;
  w->bytes = bytes;
  w->disp_unit = disp_unit;
  w->flavor = flavor;
  w->model = MPI_WIN_SEPARATE;
  w->allocated = std::move(memory);
  WindowInfo mine{bytes, disp_unit, 0};
  std::vector<WindowInfo> all(static_cast<std::size_t>(c.size));
  coll::allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, c);
  for (const WindowInfo& info : all) {
    w->target_bytes.push_back(static_cast<MPI_Aint>(info.bytes));
    w->target_disp_unit.push_back(info.disp_unit);
  }
  w->unflushed.assign(static_cast<std::size_t>(c.size), 0);
  Window* raw = w.get();
  raw->handle = win_table().add(std::move(w));
  start_server(*raw);
  return raw->handle;
}

void check_size_and_unit(MPI_Aint bytes, int disp_unit) {
  if (bytes < 0) throw MpiError(MPI_ERR_SIZE, fmt::format("window size {} is negative", bytes));
  if (disp_unit <= 0)
    throw MpiError(MPI_ERR_DISP, fmt::format("displacement unit {} must be positive", disp_unit));
}

bool is_dynamic(const Window& w) { return w.flavor == MPI_WIN_FLAVOR_DYNAMIC; }

// ---- completion of origin operations ----

bool try_finish(PendingOp& op) {
  if (op.finished) return true;
  if ((op.send && !op.send->complete) || (op.reply && !op.reply->complete)) return false;
  if (op.send) engine().release(op.send);
  if (op.reply) engine().release(op.reply);
  op.send = op.reply = nullptr;
  op.message.clear();
  op.finished = true;
  if (op.on_reply) op.on_reply(std::span<const std::byte>(op.reply_data.data(), op.reply_data.size));
  op.on_reply = nullptr;
  return true;
}

void forget(Window& w, const PendingOp& op) { w.pending_bytes -= std::min(w.pending_bytes, op.bytes); }

// Drops the finished operations at the front of the queue: cheap enough for
// every operation issued.
void reap_front(Window& w) {
  while (!w.pending.empty() && try_finish(*w.pending.front())) {
    forget(w, *w.pending.front());
    w.pending.pop_front();
  }
}

// Drops every finished operation.
void reap(Window& w) {
  std::erase_if(w.pending, [&](const std::shared_ptr<PendingOp>& op) {
    if (!try_finish(*op)) return false;
    forget(w, *op);
    return true;
  });
}

// The data part of an operation message: `bytes` written by `fill` straight
// into the message (packing the origin buffer there, without a second copy).
struct Payload {
  std::size_t bytes = 0;
  std::function<void(std::byte*)> fill;
};

std::shared_ptr<PendingOp> send_message(Window& w, int target, RmaHeader header, const std::vector<RmaBlock>& blocks,
                                        const Payload& data, bool wants_reply, std::size_t reply_bytes,
                                        std::function<void(std::span<const std::byte>)> on_reply);

bool in_scope(int target, const PendingOp& op) { return target < 0 || op.target == target; }

// Waits until every operation to `target` (-1: every target) is finished:
// sent, and answered when it has an answer.
void complete_locally(Window& w, int target) {
  engine().wait_until([&] {
    reap_front(w);
    for (auto& op : w.pending)
      if (in_scope(target, *op) && !try_finish(*op)) return false;
    return true;
  });
  reap(w);
}

// Remote completion of every operation to `target` (-1: every target): a
// flush message to each target whose last message is not answered, then
// every answer.
void complete_operations(Window& w, int target) {
  for (int t = 0; t < w.size; ++t) {
    if ((target >= 0 && t != target) || !w.unflushed[static_cast<std::size_t>(t)]) continue;
    RmaHeader h;
    h.kind = static_cast<std::uint32_t>(RmaKind::flush);
    send_message(w, t, h, {}, Payload{}, true, 0, nullptr);
  }
  complete_locally(w, target);
}

// An origin that issues operations faster than its targets serve them (a
// loop of large gets in one epoch) would hold every message and answer
// buffer at once: past these bounds it waits for the oldest answers.  The
// targets' servers run in every MPI call, so this only delays.  Every few
// operations the origin also makes progress itself, so that its messages
// leave and answers are taken in while it issues more.
constexpr std::size_t max_outstanding_ops = 4096;
constexpr std::size_t max_outstanding_bytes = std::size_t{64} << 20;
constexpr unsigned progress_every = 16;

// Every few operations issued, one progress round: the origin's messages
// leave and answers come in while it issues more, and its own server (its
// memory's other origins) is served even by a loop of immediate operations
// on its own window.
void progress_now_and_then(Window& w) {
  if (++w.issued_since_progress >= progress_every) {
    w.issued_since_progress = 0;
    engine().progress();
  }
}

void limit_outstanding(Window& w) {
  progress_now_and_then(w);
  reap_front(w);
  if (w.pending.size() <= max_outstanding_ops && w.pending_bytes <= max_outstanding_bytes) return;
  reap(w);
  if (w.pending.size() <= max_outstanding_ops && w.pending_bytes <= max_outstanding_bytes) return;
  // Operations finish mostly in issue order: sweep the front every round and
  // the whole queue only now and then (a full sweep per round is quadratic
  // when every send waits for its clear-to-send).
  unsigned rounds = 0;
  engine().wait_until([&] {
    if (++rounds % 64 == 0)
      reap(w);
    else
      reap_front(w);
    return w.pending.size() <= max_outstanding_ops / 2 && w.pending_bytes <= max_outstanding_bytes / 2;
  });
}

std::uint32_t next_reply_tag(Window& w) {
  std::uint32_t tag = rma_tag::first_reply + w.next_reply;
  w.next_reply = (w.next_reply + 1) % rma_tag::reply_span;
  return tag;
}

// Sends one operation message; the answer (reply_bytes long) goes to
// on_reply.  wants_reply = false for puts, accumulates and lock requests to
// another process.
std::shared_ptr<PendingOp> send_message(Window& w, int target, RmaHeader header,
                                        const std::vector<RmaBlock>& blocks, const Payload& data,
                                        bool wants_reply, std::size_t reply_bytes,
                                        std::function<void(std::span<const std::byte>)> on_reply) {
  Comm& c = comm(w.comm);
  auto op = std::make_shared<PendingOp>();
  op->target = target;
  header.block_count = static_cast<std::uint32_t>(blocks.size());
  header.data_bytes = data.bytes;
  std::size_t total = sizeof header + blocks.size() * sizeof(RmaBlock) + data.bytes;
  if (total > static_cast<std::size_t>(INT32_MAX) || reply_bytes > static_cast<std::size_t>(INT32_MAX))
    throw MpiError(MPI_ERR_COUNT, fmt::format("an RMA operation of {} bytes is larger than 2 GiB",
                                              std::max(total, reply_bytes)));
  auto& unflushed = w.unflushed[static_cast<std::size_t>(target)];
  if (wants_reply) {
    unflushed = 0;
    header.reply_tag = next_reply_tag(w);
    op->reply_data.allocate(reply_bytes);
    op->reply = engine().irecv(op->reply_data.data(), static_cast<int>(reply_bytes), MPI_BYTE, target,
                               static_cast<int>(header.reply_tag), c, c.context_id);
    op->on_reply = std::move(on_reply);
  } else if (header.kind != static_cast<std::uint32_t>(RmaKind::lock)) {
    unflushed = 1;
  }
  op->message.allocate(total);
  std::byte* at = op->message.data();
  std::memcpy(at, &header, sizeof header);
  at += sizeof header;
  if (!blocks.empty()) std::memcpy(at, blocks.data(), blocks.size() * sizeof(RmaBlock));
  at += blocks.size() * sizeof(RmaBlock);
  if (data.bytes > 0) data.fill(at);
  op->send = engine().isend(op->message.data(), static_cast<int>(total), MPI_BYTE, target,
                            rma_tag::operation, c, c.context_id, request::SendMode::standard);
  op->bytes = op->message.size + op->reply_data.size;
  w.pending_bytes += op->bytes;
  w.pending.push_back(op);
  limit_outstanding(w);
  return op;
}

std::shared_ptr<PendingOp> nothing_sent();

// Issues a data operation: performed at once when this process reaches the
// target's memory directly (as the target's server would perform it, and
// atomic in the same way), else sent as a message.  (A lock on such a
// target is held since MPI_Win_lock returned.)
std::shared_ptr<PendingOp> issue(Window& w, int target, RmaHeader header, const std::vector<RmaBlock>& blocks,
                                 const Payload& data, bool wants_reply, std::size_t reply_bytes,
                                 std::function<void(std::span<const std::byte>)> on_reply) {
  if (!reaches_directly(w, target))
    return send_message(w, target, header, blocks, data, wants_reply, reply_bytes, std::move(on_reply));
  header.data_bytes = data.bytes;
  std::vector<std::byte> old;
  try {
    if (w.direct_scratch.size() < data.bytes) w.direct_scratch.resize(data.bytes);
    if (data.bytes > 0) data.fill(w.direct_scratch.data());
    old = apply_direct(w, target, header, blocks, w.direct_scratch.data());
  } catch (...) {
    if (on_reply) on_reply({});  // lets go of what it holds (a datatype)
    throw;
  }
  if (w.direct_scratch.size() > (std::size_t{1} << 20)) std::vector<std::byte>().swap(w.direct_scratch);
  if (on_reply) on_reply(std::span<const std::byte>(old.data(), std::min(old.size(), reply_bytes)));
  progress_now_and_then(w);
  return nothing_sent();
}

// ---- argument checks ----

void check_rank(const Window& w, int rank, bool allow_proc_null) {
  if (allow_proc_null && rank == MPI_PROC_NULL) return;
  if (rank < 0 || rank >= w.size)
    throw MpiError(MPI_ERR_RANK, fmt::format("target rank {} is not in the window's group of {}", rank, w.size));
}

bool in_access_group(const Window& w, int target) {
  return w.access_started &&
         std::find(w.access_group.begin(), w.access_group.end(), target) != w.access_group.end();
}

void check_epoch(const Window& w, int target, bool request_based) {
  bool passive = w.lock_all || w.locks.count(target) != 0;
  if (request_based) {
    if (!passive)
      throw MpiError(MPI_ERR_RMA_SYNC,
                     fmt::format("request-based RMA needs a passive-target epoch: call MPI_Win_lock "
                                 "or MPI_Win_lock_all on target {} first",
                                 target));
    return;
  }
  if (passive || w.fence_epoch || in_access_group(w, target)) return;
  throw MpiError(MPI_ERR_RMA_SYNC,
                 fmt::format("no access epoch is open to target {}: call MPI_Win_fence, MPI_Win_lock, "
                             "MPI_Win_lock_all or MPI_Win_start first",
                             target));
}

void check_buffer(int count, MPI_Datatype type, const char* what) {
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{} count {} is negative", what, count));
  committed_datatype(type);
}

void append_block(std::vector<RmaBlock>& blocks, std::int64_t displacement, std::int64_t length,
                  std::int64_t unit) {
  if (length == 0) return;
  if (!blocks.empty()) {
    RmaBlock& last = blocks.back();
    if (last.displacement + last.length * unit == displacement) {
      last.length += length;
      return;
    }
  }
  blocks.push_back({displacement, length});
}

// The target layout in bytes (put, get).
std::vector<RmaBlock> byte_blocks(const Datatype& t, int count) {
  std::vector<RmaBlock> blocks;
  if (t.contiguous) {
    append_block(blocks, t.true_lb, static_cast<std::int64_t>(t.size) * count, 1);
    return blocks;
  }
  t.for_each_block(static_cast<std::size_t>(count), [&](MPI_Aint displacement, MPI_Datatype basic, std::size_t n) {
    append_block(blocks, displacement, static_cast<std::int64_t>(n * datatype(basic).size), 1);
  });
  return blocks;
}

// The target layout in elements of `element` (accumulate family).  For the
// MINLOC/MAXLOC pair types the type map holds the two components; a pair
// starts at each first component.
std::vector<RmaBlock> element_blocks(const Datatype& t, int count, MPI_Datatype element) {
  std::vector<RmaBlock> blocks;
  const Datatype& e = datatype(element);
  const std::int64_t unit = e.extent();
  if (t.handle == element) {
    append_block(blocks, 0, count, unit);
    return blocks;
  }
  auto bad = [&] {
    return MpiError(MPI_ERR_TYPE, fmt::format("the target datatype is not made of {} elements only",
                                              e.name.empty() ? std::to_string(element) : e.name));
  };
  if (!is_pair_type(element)) {
    t.for_each_block(static_cast<std::size_t>(count), [&](MPI_Aint displacement, MPI_Datatype basic, std::size_t n) {
      if (basic != element) throw bad();
      append_block(blocks, displacement, static_cast<std::int64_t>(n), unit);
    });
    return blocks;
  }
  MPI_Datatype first = e.blocks.front().basic, second = e.blocks.back().basic;
  bool expect_first = true;
  t.for_each_block(static_cast<std::size_t>(count), [&](MPI_Aint displacement, MPI_Datatype basic, std::size_t n) {
    if (first == second) {  // MPI_2INT and friends: runs of whole pairs
      if (basic != first || n % 2 != 0) throw bad();
      append_block(blocks, displacement, static_cast<std::int64_t>(n / 2), unit);
    } else if (expect_first) {
      if (basic != first || n != 1) throw bad();
      append_block(blocks, displacement, 1, unit);
      expect_first = false;
    } else {
      if (basic != second || n != 1) throw bad();
      expect_first = true;
    }
  });
  return blocks;
}

std::int64_t total_length(const std::vector<RmaBlock>& blocks) {
  std::int64_t n = 0;
  for (const RmaBlock& b : blocks) n += b.length;
  return n;
}

// Offset of the target address from the window base, checked against the
// target's window size (dynamic windows are checked at the target).
std::int64_t target_offset(const Window& w, int target, MPI_Aint target_disp,
                           const std::vector<RmaBlock>& blocks, std::int64_t unit) {
  if (is_dynamic(w)) return target_disp;
  if (target_disp < 0)
    throw MpiError(MPI_ERR_DISP, fmt::format("target displacement {} is negative", target_disp));
  std::int64_t offset = static_cast<std::int64_t>(target_disp) * w.target_disp_unit[static_cast<std::size_t>(target)];
  for (const RmaBlock& b : blocks) {
    std::int64_t lo = offset + b.displacement, hi = lo + b.length * unit;
    if (lo < 0 || hi > w.target_bytes[static_cast<std::size_t>(target)])
      throw MpiError(MPI_ERR_RMA_RANGE,
                     fmt::format("bytes [{}, {}) are outside the window of target {} ({} bytes)", lo, hi,
                                 target, w.target_bytes[static_cast<std::size_t>(target)]));
  }
  return offset;
}

// The origin buffer as message data, packed when the message is built.
Payload pack(const void* buf, int count, MPI_Datatype type) {
  const Datatype& t = datatype(type);
  Payload p;
  p.bytes = t.size * static_cast<std::size_t>(count);
  p.fill = [&t, buf, count](std::byte* out) { t.pack(buf, static_cast<std::size_t>(count), out); };
  return p;
}

// Unpacks an answer into (buf, count, type), keeping the type alive until then.
std::function<void(std::span<const std::byte>)> unpack_into(void* buf, int count, MPI_Datatype type) {
  retain_datatype(type);
  return [buf, count, type](std::span<const std::byte> bytes) {
    const Datatype& t = datatype(type);
    std::size_t n = std::min(bytes.size(), t.size * static_cast<std::size_t>(count));
    if (n > 0) t.unpack_range(std::span<const std::byte>(bytes.data(), n), static_cast<std::size_t>(count), 0, buf);
    release_datatype(type);
  };
}

// The predefined element type of an accumulate buffer, or MPI_DATATYPE_NULL.
MPI_Datatype element_of(MPI_Datatype type) {
  const Datatype& t = datatype(type);
  return t.reduction_basic;
}

void check_accumulate_op(MPI_Op op) {
  const Op& o = core::op(op);
  if (!o.predefined)
    throw MpiError(MPI_ERR_OP, fmt::format("{} is a user op: RMA accumulate operations take predefined ops only",
                                           op_name(op)));
}

bool moves_no_data(int count, MPI_Datatype type) { return count == 0 || datatype(type).size == 0; }

// The record of an operation complete at its call (nothing sent, or
// performed at once): one shared, immutable instance.
std::shared_ptr<PendingOp> nothing_sent() {
  static const std::shared_ptr<PendingOp> done = [] {
    auto op = std::make_shared<PendingOp>();
    op->finished = true;
    return op;
  }();
  return done;
}

}  // namespace

HandleTable<Window>& win_table() {
  static HandleTable<Window> table(MPI_ERR_WIN);
  return table;
}

Window& window(MPI_Win handle) {
  Window* w = win_table().find(handle);
  if (!w) throw MpiError(MPI_ERR_WIN, fmt::format("invalid window handle {}", handle));
  return *w;
}

// ---- lock manager ----

bool LockManager::acquire(int origin, int lock_type) {
  if (holds(origin)) return true;
  bool queued = std::any_of(waiting_.begin(), waiting_.end(), [&](const Waiter& x) { return x.origin == origin; });
  if (!queued) waiting_.push_back({origin, lock_type});
  grant();
  return holds(origin);
}

void LockManager::release(int origin) {
  if (exclusive_ == origin)
    exclusive_ = -1;
  else
    shared_.erase(origin);
  grant();
}

void LockManager::grant() {
  while (!waiting_.empty() && exclusive_ < 0) {
    const Waiter& next = waiting_.front();
    if (next.lock_type == MPI_LOCK_EXCLUSIVE) {
      if (!shared_.empty()) return;
      exclusive_ = next.origin;
    } else {
      shared_.insert(next.origin);
    }
    waiting_.pop_front();
  }
}

// ---- creation and destruction ----

MPI_Win win_create(void* base, MPI_Aint bytes, int disp_unit, Comm& comm) {
  check_size_and_unit(bytes, disp_unit);
  if (bytes > 0 && base == nullptr)
    throw MpiError(MPI_ERR_BASE, fmt::format("base is NULL for a window of {} bytes", bytes));
  return make_window(comm, base, bytes, disp_unit, MPI_WIN_FLAVOR_CREATE, nullptr);
}

MPI_Win win_allocate(MPI_Aint bytes, int disp_unit, Comm& comm, void* baseptr) {
  check_size_and_unit(bytes, disp_unit);
  if (!baseptr) throw MpiError(MPI_ERR_ARG, "baseptr is a null pointer");
  std::unique_ptr<std::byte[]> memory(new std::byte[bytes > 0 ? static_cast<std::size_t>(bytes) : 1]());
  void* base = memory.get();
  MPI_Win handle = make_window(comm, base, bytes, disp_unit, MPI_WIN_FLAVOR_ALLOCATE, std::move(memory));
  *static_cast<void**>(baseptr) = base;
  return handle;
}

MPI_Win win_create_dynamic(Comm& comm) {
  return make_window(comm, nullptr, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, nullptr);
}

namespace {

// Where a shared window's accumulate locks start in its segment: after the
// members' memory (`bytes`), on a cache line of their own.
std::size_t lock_area_offset(std::size_t bytes) {
  constexpr std::size_t line = alignof(Window::AccumulateLock);
  return (bytes + line - 1) / line * line;
}

// Makes the `count` process-shared mutexes at `at` (fresh, zeroed memory).
// Robust: a member that dies holding one does not hang the others.
std::string init_accumulate_locks(Window::AccumulateLock* at, std::size_t count) {
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc == 0) rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (rc == 0) rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  for (std::size_t i = 0; rc == 0 && i < count; ++i) rc = pthread_mutex_init(&at[i].mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  return rc == 0 ? std::string() : fmt::format("the accumulate locks: {}", std::strerror(rc));
}

// The node segment of a shared window (the members' `bytes` of memory, then
// one accumulate lock per member): created (and sized) by rank 0 under a
// fresh name, opened by the others, and unlinked by rank 0 as soon as every
// member has mapped it (or failed to), so a crash afterwards leaves nothing
// in /dev/shm.  Rank 0 makes the locks before anyone returns.
std::shared_ptr<std::byte> map_shared_segment(Comm& c, std::size_t bytes) {
  const std::size_t length =
      lock_area_offset(bytes) + static_cast<std::size_t>(c.size) * sizeof(Window::AccumulateLock);
  char name[64] = {};
  std::string error;
  int fd = -1;
  if (c.rank == 0) {
    std::random_device random;
    std::snprintf(name, sizeof name, "/gridmpi-win-%d-%08x", static_cast<int>(getpid()),
                  static_cast<unsigned>(random()));
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
      error = fmt::format("shm_open({}): {}", name, std::strerror(errno));
    } else if (ftruncate(fd, static_cast<off_t>(length)) != 0) {
      error = fmt::format("ftruncate of {} to {} bytes: {}", name, length, std::strerror(errno));
      close(fd);
      fd = -1;
      shm_unlink(name);
    }
    if (fd < 0) name[0] = '\0';  // tells the others that there is no segment
  }
  coll::bcast(name, sizeof name, MPI_CHAR, 0, c);
  if (name[0] == '\0' && error.empty()) error = "rank 0 of the window could not create the shared segment";
  if (c.rank != 0 && error.empty()) {
    fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) error = fmt::format("shm_open({}): {}", name, std::strerror(errno));
  }
  void* at = MAP_FAILED;
  if (fd >= 0) {
    at = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) error = fmt::format("mmap of {} bytes of {}: {}", length, name, std::strerror(errno));
    close(fd);
  }
  std::shared_ptr<std::byte> segment;
  if (at != MAP_FAILED)
    segment.reset(static_cast<std::byte*>(at), [length](std::byte* p) { munmap(p, length); });
  if (segment && c.rank == 0)
    error = init_accumulate_locks(
        reinterpret_cast<Window::AccumulateLock*>(segment.get() + lock_area_offset(bytes)),
        static_cast<std::size_t>(c.size));
  // Once everyone has tried to map it, rank 0 removes the name, before any
  // member returns.
  int ok = error.empty() ? 1 : 0, all_ok = 0;
  coll::reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, c);
  if (c.rank == 0 && name[0] != '\0') shm_unlink(name);
  coll::bcast(&all_ok, 1, MPI_INT, 0, c);
  if (!ok) throw MpiError(MPI_ERR_NO_MEM, fmt::format("shared window memory of {} bytes: {}", bytes, error));
  if (!all_ok)
    throw MpiError(MPI_ERR_NO_MEM, fmt::format("shared window memory of {} bytes: another member could not map it",
                                               bytes));
  return segment;
}

}  // namespace

MPI_Win win_allocate_shared(MPI_Aint bytes, int disp_unit, Comm& parent, void* baseptr) {
  check_size_and_unit(bytes, disp_unit);
  if (!baseptr) throw MpiError(MPI_ERR_ARG, "baseptr is a null pointer");
  if (parent.is_inter()) throw MpiError(MPI_ERR_COMM, "windows need an intracommunicator");
  // Every member must share this host (the same test as MPI_Comm_split_type).
  const Runtime& rt = runtime();
  const std::string& host = rt.host_names.at(static_cast<std::size_t>(rt.world_rank));
  for (int world : parent.group->members)
    if (rt.host_names.at(static_cast<std::size_t>(world)) != host)
      throw MpiError(MPI_ERR_RMA_SHARED,
                     fmt::format("MPI_Win_allocate_shared needs every process on one host, but rank {} of "
                                 "MPI_COMM_WORLD is on {} and this one on {}; split the communicator with "
                                 "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) first",
                                 world, rt.host_names.at(static_cast<std::size_t>(world)), host));
  MPI_Win handle = make_window(parent, nullptr, bytes, disp_unit, MPI_WIN_FLAVOR_SHARED, nullptr);
  Window& w = window(handle);
  MPI_Aint total = 0;
  try {
    for (MPI_Aint b : w.target_bytes) {
      w.shared_offset.push_back(total);
      total += b;
    }
    w.shared_segment = map_shared_segment(comm(w.comm), static_cast<std::size_t>(total));
  } catch (...) {
    stop_server(w);
    comm_free(w.comm);
    win_table().release(handle);
    throw;
  }
  // Nothing can target this window before every member has returned from
  // the agreement in map_shared_segment, and the base is set before it.
  w.base = w.shared_segment.get() + w.shared_offset[static_cast<std::size_t>(w.rank)];
  w.accumulate_locks = reinterpret_cast<Window::AccumulateLock*>(
      w.shared_segment.get() + lock_area_offset(static_cast<std::size_t>(total)));
  w.model = MPI_WIN_UNIFIED;
  *static_cast<void**>(baseptr) = w.base;
  return handle;
}

void win_shared_query(const Window& w, int rank, MPI_Aint* bytes, int* disp_unit, void* baseptr) {
  if (w.flavor != MPI_WIN_FLAVOR_SHARED)
    throw MpiError(MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query needs a window made by MPI_Win_allocate_shared");
  if (rank == MPI_PROC_NULL) {
    rank = 0;
    for (int r = 0; r < w.size; ++r)
      if (w.target_bytes[static_cast<std::size_t>(r)] > 0) {
        rank = r;
        break;
      }
  } else if (rank < 0 || rank >= w.size) {
    throw MpiError(MPI_ERR_RANK, fmt::format("rank {} is not in the window's group of {}", rank, w.size));
  }
  auto r = static_cast<std::size_t>(rank);
  *bytes = w.target_bytes[r];
  *disp_unit = w.target_disp_unit[r];
  // An empty segment has no memory to point at (as MPICH answers).
  *static_cast<void**>(baseptr) = *bytes > 0 ? w.shared_segment.get() + w.shared_offset[r] : nullptr;
}

void win_attach(Window& w, void* base, MPI_Aint bytes) {
  if (!is_dynamic(w))
    throw MpiError(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a window made by MPI_Win_create_dynamic");
  if (bytes < 0) throw MpiError(MPI_ERR_SIZE, fmt::format("size {} is negative", bytes));
  if (bytes > 0 && !base) throw MpiError(MPI_ERR_BASE, "base is NULL");
  if (bytes == 0) return;
  auto at = reinterpret_cast<std::uintptr_t>(base);
  auto next = w.attached.lower_bound(at);
  bool overlaps = (next != w.attached.end() && next->first < at + static_cast<std::uintptr_t>(bytes)) ||
                  (next != w.attached.begin() && std::prev(next)->first + std::prev(next)->second > at);
  if (overlaps) throw MpiError(MPI_ERR_RMA_ATTACH, "the memory overlaps memory already attached to the window");
  w.attached.emplace(at, static_cast<std::size_t>(bytes));
}

void win_detach(Window& w, const void* base) {
  if (!is_dynamic(w))
    throw MpiError(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a window made by MPI_Win_create_dynamic");
  auto it = w.attached.find(reinterpret_cast<std::uintptr_t>(base));
  if (it == w.attached.end())
    throw MpiError(MPI_ERR_RMA_ATTACH, "the address was not attached to this window with MPI_Win_attach");
  w.attached.erase(it);
}

void win_free(MPI_Win handle) {
  Window& w = window(handle);
  if (!w.locks.empty() || w.lock_all || w.access_started || w.exposure_posted)
    throw MpiError(MPI_ERR_RMA_SYNC, "the window still has an open lock, access or exposure epoch");
  delete_win_attributes(handle);
  complete_operations(w, -1);
  // Once every member is here, no operation targets this window any more.
  coll::barrier(comm(w.comm));
  stop_server(w);
  comm_free(w.comm);
  release_errhandler(w.errhandler);
  win_table().release(handle);
}

MPI_Group win_get_group(const Window& w) {
  Group g = *comm(w.comm).group;
  g.handle = MPI_GROUP_NULL;
  return add_group(std::move(g));
}

// ---- synchronisation ----

void win_fence(Window& w, int assert_flags) {
  if (!w.locks.empty() || w.lock_all || w.access_started || w.exposure_posted)
    throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_fence inside a lock or post/start epoch");
  complete_operations(w, -1);
  coll::barrier(comm(w.comm));
  w.fence_epoch = (assert_flags & MPI_MODE_NOSUCCEED) == 0;
}

void win_lock(Window& w, int lock_type, int rank, int assert_flags) {
  if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
    throw MpiError(MPI_ERR_LOCKTYPE, fmt::format("lock type {} is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED",
                                                 lock_type));
  check_rank(w, rank, true);
  if (rank == MPI_PROC_NULL) return;
  if (w.locks.count(rank) || w.lock_all)
    throw MpiError(MPI_ERR_RMA_SYNC, fmt::format("target {} is already locked in this window", rank));
  if (w.access_started) throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_lock inside an MPI_Win_start epoch");
  w.fence_epoch = false;  // a lock ends an (empty) fence epoch
  w.locks[rank] = lock_type;
  if (assert_flags & MPI_MODE_NOCHECK) {
    w.nocheck_locks.insert(rank);
    return;
  }
  RmaHeader h;
  h.kind = static_cast<std::uint32_t>(RmaKind::lock);
  h.element = lock_type;
  // A lock on memory this process reaches directly (its own window, a member
  // of a shared window) is held on return: it protects the loads and stores
  // to that memory (MPI-3.1 11.5.3) and the operations on it, which are
  // performed at once.  Others are granted lazily, in order with the ops.
  bool direct = reaches_directly(w, rank);
  send_message(w, rank, h, {}, Payload{}, direct, 0, nullptr);
  if (direct) complete_operations(w, rank);
}

void win_unlock(Window& w, int rank) {
  check_rank(w, rank, true);
  if (rank == MPI_PROC_NULL) return;
  auto it = w.locks.find(rank);
  if (it == w.locks.end())
    throw MpiError(MPI_ERR_RMA_SYNC, fmt::format("target {} is not locked in this window", rank));
  if (!w.nocheck_locks.erase(rank)) {
    RmaHeader h;
    h.kind = static_cast<std::uint32_t>(RmaKind::unlock);
    send_message(w, rank, h, {}, Payload{}, true, 0, nullptr);
  }
  complete_operations(w, rank);
  w.locks.erase(it);
}

void win_lock_all(Window& w, int assert_flags) {
  if (w.lock_all || !w.locks.empty())
    throw MpiError(MPI_ERR_RMA_SYNC, "the window already has a lock epoch open");
  if (w.access_started) throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all inside an MPI_Win_start epoch");
  w.fence_epoch = false;
  w.lock_all = true;
  w.lock_all_nocheck = (assert_flags & MPI_MODE_NOCHECK) != 0;
  if (w.lock_all_nocheck) return;
  for (int target = 0; target < w.size; ++target) {
    RmaHeader h;
    h.kind = static_cast<std::uint32_t>(RmaKind::lock);
    h.element = MPI_LOCK_SHARED;
    send_message(w, target, h, {}, Payload{}, reaches_directly(w, target), 0, nullptr);
  }
  // Held on return where this process reaches the memory (as MPI_Win_lock).
  complete_operations(w, w.flavor == MPI_WIN_FLAVOR_SHARED ? -1 : w.rank);
}

void win_unlock_all(Window& w) {
  if (!w.lock_all) throw MpiError(MPI_ERR_RMA_SYNC, "the window is not locked with MPI_Win_lock_all");
  if (!w.lock_all_nocheck) {
    for (int target = 0; target < w.size; ++target) {
      RmaHeader h;
      h.kind = static_cast<std::uint32_t>(RmaKind::unlock);
      send_message(w, target, h, {}, Payload{}, true, 0, nullptr);
    }
  }
  complete_operations(w, -1);
  w.lock_all = false;
  w.lock_all_nocheck = false;
}

void win_flush(Window& w, int rank) {
  check_rank(w, rank, true);
  if (rank == MPI_PROC_NULL) return;
  if (!w.lock_all && !w.locks.count(rank))
    throw MpiError(MPI_ERR_RMA_SYNC, fmt::format("target {} is not locked in this window", rank));
  complete_operations(w, rank);
}

void win_flush_all(Window& w) {
  if (!w.lock_all && w.locks.empty())
    throw MpiError(MPI_ERR_RMA_SYNC, "no passive-target epoch is open on this window");
  complete_operations(w, -1);
}

void win_flush_local(Window& w, int rank) {
  check_rank(w, rank, true);
  if (rank == MPI_PROC_NULL) return;
  if (!w.lock_all && !w.locks.count(rank))
    throw MpiError(MPI_ERR_RMA_SYNC, fmt::format("target {} is not locked in this window", rank));
  complete_locally(w, rank);
}

void win_flush_local_all(Window& w) {
  if (!w.lock_all && w.locks.empty())
    throw MpiError(MPI_ERR_RMA_SYNC, "no passive-target epoch is open on this window");
  complete_locally(w, -1);
}

namespace {

std::vector<int> window_ranks(const Window& w, MPI_Group group_handle) {
  const Group& g = group(group_handle);
  const Group& members = *comm(w.comm).group;
  std::vector<int> ranks;
  for (int world : g.members) {
    int r = members.rank_of_world(world);
    if (r == MPI_UNDEFINED)
      throw MpiError(MPI_ERR_GROUP, fmt::format("process {} of MPI_COMM_WORLD is not in the window's group", world));
    ranks.push_back(r);
  }
  return ranks;
}

void release_finished(std::vector<request::Request*>& requests) {
  std::erase_if(requests, [](request::Request* r) {
    if (!r->complete) return false;
    engine().release(r);
    return true;
  });
}

}  // namespace

void win_post(Window& w, MPI_Group group_handle, int assert_flags) {
  if (w.exposure_posted) throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_post: an exposure epoch is already open");
  std::vector<int> origins = window_ranks(w, group_handle);
  Comm& c = comm(w.comm);
  release_finished(w.control_sends);
  w.fence_epoch = false;
  for (int origin : origins) {
    w.complete_notices.push_back(
        engine().irecv(nullptr, 0, MPI_BYTE, origin, rma_tag::complete, c, c.context_id));
    if (!(assert_flags & MPI_MODE_NOCHECK))
      w.control_sends.push_back(engine().isend(nullptr, 0, MPI_BYTE, origin, rma_tag::post, c, c.context_id,
                                               request::SendMode::standard));
  }
  w.exposure_posted = true;
}

void win_start(Window& w, MPI_Group group_handle, int assert_flags) {
  if (w.access_started) throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_start: an access epoch is already open");
  if (w.lock_all || !w.locks.empty()) throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_start inside a lock epoch");
  w.access_group = window_ranks(w, group_handle);
  w.access_nocheck = (assert_flags & MPI_MODE_NOCHECK) != 0;
  w.fence_epoch = false;
  if (!w.access_nocheck) {
    Comm& c = comm(w.comm);
    std::vector<request::Request*> posts;
    for (int target : w.access_group)
      posts.push_back(engine().irecv(nullptr, 0, MPI_BYTE, target, rma_tag::post, c, c.context_id));
    engine().wait_until([&] { return std::all_of(posts.begin(), posts.end(), [](auto* r) { return r->complete; }); });
    for (auto* r : posts) engine().release(r);
  }
  w.access_started = true;
}

void win_complete(Window& w) {
  if (!w.access_started) throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start");
  for (int target : w.access_group) complete_operations(w, target);
  Comm& c = comm(w.comm);
  release_finished(w.control_sends);
  for (int target : w.access_group)
    w.control_sends.push_back(engine().isend(nullptr, 0, MPI_BYTE, target, rma_tag::complete, c, c.context_id,
                                             request::SendMode::standard));
  w.access_started = false;
  w.access_group.clear();
}

bool win_test(Window& w) {
  if (!w.exposure_posted) throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_test/MPI_Win_wait without MPI_Win_post");
  engine().progress();
  bool all = std::all_of(w.complete_notices.begin(), w.complete_notices.end(), [](auto* r) { return r->complete; });
  if (!all) return false;
  release_finished(w.complete_notices);
  w.exposure_posted = false;
  return true;
}

void win_wait(Window& w) {
  if (!w.exposure_posted) throw MpiError(MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post");
  engine().wait_until([&] {
    return std::all_of(w.complete_notices.begin(), w.complete_notices.end(), [](auto* r) { return r->complete; });
  });
  win_test(w);
}

// ---- communication ----

std::shared_ptr<PendingOp> rma_put(Window& w, const RmaCall& call) {
  check_buffer(call.origin_count, call.origin_type, "origin");
  check_buffer(call.target_count, call.target_type, "target");
  check_rank(w, call.target, true);
  if (call.target == MPI_PROC_NULL) return nothing_sent();
  check_epoch(w, call.target, call.request_based);
  reap_front(w);
  const Datatype& target_type = datatype(call.target_type);
  std::vector<RmaBlock> blocks = byte_blocks(target_type, call.target_count);
  Payload data = pack(call.origin, call.origin_count, call.origin_type);
  if (static_cast<std::int64_t>(data.bytes) > total_length(blocks))
    throw MpiError(MPI_ERR_TRUNCATE, fmt::format("MPI_Put of {} bytes into a target buffer of {} bytes",
                                                 data.bytes, total_length(blocks)));
  RmaHeader h;
  h.kind = static_cast<std::uint32_t>(RmaKind::put);
  h.op = call.op;  // MPI_REPLACE for an accumulate done as a put: applied atomically
  h.target_offset = target_offset(w, call.target, call.target_disp, blocks, 1);
  return issue(w, call.target, h, blocks, data, false, 0, nullptr);
}

std::shared_ptr<PendingOp> rma_get(Window& w, const RmaCall& call) {
  check_buffer(call.result_count, call.result_type, "origin");
  check_buffer(call.target_count, call.target_type, "target");
  check_rank(w, call.target, true);
  if (call.target == MPI_PROC_NULL) return nothing_sent();
  check_epoch(w, call.target, call.request_based);
  reap_front(w);
  std::vector<RmaBlock> blocks = byte_blocks(datatype(call.target_type), call.target_count);
  std::size_t capacity = datatype(call.result_type).size * static_cast<std::size_t>(call.result_count);
  std::size_t bytes = static_cast<std::size_t>(total_length(blocks));
  if (bytes > capacity)
    throw MpiError(MPI_ERR_TRUNCATE,
                   fmt::format("MPI_Get of {} bytes into an origin buffer of {} bytes", bytes, capacity));
  RmaHeader h;
  h.kind = static_cast<std::uint32_t>(RmaKind::get);
  h.op = call.op;  // MPI_NO_OP for a get_accumulate done as a get: applied atomically
  h.target_offset = target_offset(w, call.target, call.target_disp, blocks, 1);
  return issue(w, call.target, h, blocks, Payload{}, true, bytes,
               unpack_into(call.result, call.result_count, call.result_type));
}

std::shared_ptr<PendingOp> rma_accumulate(Window& w, const RmaCall& call) {
  check_buffer(call.origin_count, call.origin_type, "origin");
  check_buffer(call.target_count, call.target_type, "target");
  check_accumulate_op(call.op);
  check_rank(w, call.target, true);
  if (call.target == MPI_PROC_NULL) return nothing_sent();
  check_epoch(w, call.target, call.request_based);
  // Nothing to combine (zero counts or zero-size types): no element types to match.
  if (moves_no_data(call.origin_count, call.origin_type) && moves_no_data(call.target_count, call.target_type))
    return nothing_sent();
  MPI_Datatype element = element_of(call.origin_type);
  if (element == MPI_DATATYPE_NULL || element_of(call.target_type) != element) {
    if (call.op == MPI_REPLACE) return rma_put(w, call);  // a put, element by element
    throw MpiError(MPI_ERR_TYPE, "accumulate: the origin and target datatypes must consist of one and the "
                                 "same predefined element type");
  }
  if (call.op != MPI_NO_OP) check_op(call.op, element);
  reap_front(w);
  std::vector<RmaBlock> blocks = element_blocks(datatype(call.target_type), call.target_count, element);
  Payload data = pack(call.origin, call.origin_count, call.origin_type);
  std::int64_t elements = static_cast<std::int64_t>(data.bytes / datatype(element).size);
  if (elements > total_length(blocks))
    throw MpiError(MPI_ERR_TRUNCATE, fmt::format("accumulate of {} elements into a target buffer of {}",
                                                 elements, total_length(blocks)));
  RmaHeader h;
  h.kind = static_cast<std::uint32_t>(RmaKind::accumulate);
  h.op = call.op;
  h.element = element;
  h.target_offset = target_offset(w, call.target, call.target_disp, blocks, datatype(element).extent());
  return issue(w, call.target, h, blocks, data, false, 0, nullptr);
}

std::shared_ptr<PendingOp> rma_get_accumulate(Window& w, const RmaCall& call) {
  bool no_op = call.op == MPI_NO_OP;
  if (!no_op) check_buffer(call.origin_count, call.origin_type, "origin");
  check_buffer(call.result_count, call.result_type, "result");
  check_buffer(call.target_count, call.target_type, "target");
  check_accumulate_op(call.op);
  check_rank(w, call.target, true);
  if (call.target == MPI_PROC_NULL) return nothing_sent();
  check_epoch(w, call.target, call.request_based);
  if ((no_op || moves_no_data(call.origin_count, call.origin_type)) &&
      moves_no_data(call.target_count, call.target_type) && moves_no_data(call.result_count, call.result_type))
    return nothing_sent();
  MPI_Datatype element = element_of(call.target_type);
  bool same = element != MPI_DATATYPE_NULL && element_of(call.result_type) == element &&
              (no_op || element_of(call.origin_type) == element);
  if (!same) {
    if (no_op) return rma_get(w, call);
    throw MpiError(MPI_ERR_TYPE, "get_accumulate: the origin, result and target datatypes must consist of one "
                                 "and the same predefined element type");
  }
  if (!no_op) check_op(call.op, element);
  reap_front(w);
  std::vector<RmaBlock> blocks = element_blocks(datatype(call.target_type), call.target_count, element);
  Payload data;
  if (!no_op) data = pack(call.origin, call.origin_count, call.origin_type);
  const std::size_t element_size = datatype(element).size;
  std::int64_t target_elements = total_length(blocks);
  if (static_cast<std::int64_t>(data.bytes / element_size) > target_elements)
    throw MpiError(MPI_ERR_TRUNCATE, "get_accumulate: the origin buffer is larger than the target buffer");
  std::size_t reply_bytes = static_cast<std::size_t>(target_elements) * element_size;
  if (reply_bytes > datatype(call.result_type).size * static_cast<std::size_t>(call.result_count))
    throw MpiError(MPI_ERR_TRUNCATE, "get_accumulate: the result buffer is smaller than the target buffer");
  RmaHeader h;
  h.kind = static_cast<std::uint32_t>(RmaKind::get_accumulate);
  h.op = call.op;
  h.element = element;
  h.target_offset = target_offset(w, call.target, call.target_disp, blocks, datatype(element).extent());
  return issue(w, call.target, h, blocks, data, true, reply_bytes,
               unpack_into(call.result, call.result_count, call.result_type));
}

std::shared_ptr<PendingOp> rma_compare_and_swap(Window& w, const RmaCall& call) {
  const Datatype& t = committed_datatype(call.target_type);
  if (!t.predefined || is_pair_type(call.target_type))
    throw MpiError(MPI_ERR_TYPE, "MPI_Compare_and_swap needs a predefined integer, logical or byte datatype");
  check_rank(w, call.target, true);
  if (call.target == MPI_PROC_NULL) return nothing_sent();
  check_epoch(w, call.target, call.request_based);
  reap_front(w);
  std::vector<RmaBlock> blocks{{0, 1}};
  Payload data;
  data.bytes = 2 * t.size;
  data.fill = [&](std::byte* out) {
    std::memcpy(out, call.origin, t.size);
    std::memcpy(out + t.size, call.compare, t.size);
  };
  RmaHeader h;
  h.kind = static_cast<std::uint32_t>(RmaKind::compare_and_swap);
  h.element = call.target_type;
  h.target_offset = target_offset(w, call.target, call.target_disp, blocks, static_cast<std::int64_t>(t.size));
  return issue(w, call.target, h, blocks, data, true, t.size, unpack_into(call.result, 1, call.target_type));
}

namespace {

struct RmaRequest : request::Request {
  std::shared_ptr<PendingOp> op;
};

}  // namespace

MPI_Request rma_request(Window& w, std::shared_ptr<PendingOp> op) {
  auto owned = std::make_unique<RmaRequest>();
  RmaRequest* r = owned.get();
  r->kind = request::RequestKind::collective;
  r->comm = MPI_COMM_NULL;
  r->status.MPI_SOURCE = MPI_ANY_SOURCE;
  r->status.MPI_TAG = MPI_ANY_TAG;
  r->status.MPI_ERROR = MPI_SUCCESS;
  r->op = std::move(op);
  r->complete = try_finish(*r->op);
  if (!r->complete) r->poll = [r] { return try_finish(*r->op); };
  (void)w;
  return engine().adopt(std::move(owned))->handle;
}

// ---- errors ----

int handle_win_error(MPI_Win win, int error_class, const char* function, const char* message) noexcept {
  try {
    Window* w = win_table().find(win);
    if (!w || state() != State::initialized) return handle_error(MPI_COMM_WORLD, error_class, function, message);
    // Window handlers have the communicator handlers' C signature with an MPI_Win.
    if (auto* fn = reinterpret_cast<MPI_Win_errhandler_function*>(
            user_errhandler(w->errhandler, error_class, function, message))) {
      MPI_Win win_arg = win;
      int code_arg = error_class;
      fn(&win_arg, &code_arg);
    }
  } catch (...) {
    fatal_exit(error_class, fmt::format("{}: {} ({})", function, message, error_class_name(error_class)));
  }
  return error_class;
}

}  // namespace gridmpi::core
