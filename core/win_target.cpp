// The target side of RMA: a window's server, polled by every progress round
// of the engine.  Owner: core/win*.cpp.
//
// The server takes operation messages off the window's context with
// improbe/imrecv, queues them per origin (MPI orders one origin's
// operations), and applies each queue's head once it has arrived.  A lock
// request at the head of a queue waits there until the lock manager grants
// it, so an origin's operations inside a lock epoch wait with it while other
// origins go on.  Operations on memory the origin reaches directly (its own
// window, a shared window) never come here: the origin performs them itself
// through apply_direct, with the same code.  Accumulates are element-wise
// atomic: on a process's own memory everything is applied by that process
// under the big lock (the server, or an immediate operation of its own), and
// on a shared window's memory under that member's accumulate lock, a
// process-shared mutex in the segment.  Progress happens only inside MPI
// calls of the target (no progress thread): see core/README.md.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include <pthread.h>

#include <fmt/format.h>

#include "conf/log.hpp"
#include "core/datatype.hpp"
#include "base/error.hpp"
#include "core/group.hpp"
#include "core/op.hpp"
#include "core/runtime.hpp"
#include "core/win.hpp"
#include "core/win_wire.hpp"
#include "request/request.hpp"

namespace gridmpi::core {

namespace {

request::Engine& engine() { return *runtime().engine; }

// A decoded operation message (views into Incoming::bytes).
struct Operation {
  RmaHeader header;
  const RmaBlock* blocks = nullptr;
  const std::byte* data = nullptr;
};

Operation decode(const ByteBuffer& bytes) {
  Operation op;
  if (bytes.size < sizeof(RmaHeader)) throw MpiError(MPI_ERR_INTERN, "RMA message shorter than its header");
  std::memcpy(&op.header, bytes.data(), sizeof op.header);
  std::size_t need = sizeof(RmaHeader) + op.header.block_count * sizeof(RmaBlock) + op.header.data_bytes;
  if (bytes.size != need)
    throw MpiError(MPI_ERR_INTERN, fmt::format("RMA message of {} bytes, its header says {}", bytes.size, need));
  op.blocks = reinterpret_cast<const RmaBlock*>(bytes.data() + sizeof(RmaHeader));
  op.data = bytes.data() + sizeof(RmaHeader) + op.header.block_count * sizeof(RmaBlock);
  return op;
}

std::span<const RmaBlock> blocks_of(const Operation& op) { return {op.blocks, op.header.block_count}; }

// True when [lo, hi) lies in attached memory.  One access may cross from an
// attached region into the next one when they are adjacent (two attaches of
// the two halves of an array), as MPI allows: the regions are walked until
// `hi` is covered or a gap appears.
bool attached_range(const std::map<std::uintptr_t, std::size_t>& attached, std::uintptr_t lo, std::uintptr_t hi) {
  auto region = attached.upper_bound(lo);
  if (region == attached.begin()) return false;
  --region;
  std::uintptr_t covered = region->first + region->second;
  if (covered <= lo && hi > lo) return false;
  while (covered < hi) {
    ++region;
    if (region == attached.end() || region->first != covered) return false;
    covered += region->second;
  }
  return true;
}

// The address of the operation's target buffer in the memory at `base`; for
// dynamic windows the offset is an address and every block must lie in
// attached memory.
std::byte* target_address(const Window& w, std::byte* base, const Operation& op, std::int64_t unit) {
  if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC) return base + op.header.target_offset;
  for (const RmaBlock& b : blocks_of(op)) {
    auto lo = static_cast<std::uintptr_t>(op.header.target_offset + b.displacement);
    auto hi = lo + static_cast<std::uintptr_t>(b.length * unit);
    if (!attached_range(w.attached, lo, hi))
      throw MpiError(MPI_ERR_RMA_RANGE,
                     fmt::format("bytes [{:#x}, {:#x}) are not in memory attached to the window", lo, hi));
  }
  return reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(op.header.target_offset));
}

// The memory of window member `target` in this process: its own window
// memory, or its part of a shared window's segment.
std::byte* member_base(const Window& w, int target) {
  if (w.flavor == MPI_WIN_FLAVOR_SHARED)
    return w.shared_segment.get() + w.shared_offset[static_cast<std::size_t>(target)];
  return static_cast<std::byte*>(w.base);
}

// Holds the accumulate lock of member `target` of a shared window (every
// member applies operations to the others' memory itself, so one process's
// thread is not enough to make accumulates atomic there).  Elsewhere every
// operation on a member's memory is applied by that member's own process,
// under the big lock: nothing to take.  `needed` false: a plain put or get
// (not atomic, so not serialised).
class AccumulateGuard {
 public:
  AccumulateGuard(const Window& w, int target, bool needed = true)
      : mutex_(needed && w.accumulate_locks ? &w.accumulate_locks[static_cast<std::size_t>(target)].mutex
                                            : nullptr) {
    if (!mutex_) return;
    int rc = pthread_mutex_lock(mutex_);
    // A member died holding it: the job is ending; the data is no worse.
    if (rc == EOWNERDEAD) rc = pthread_mutex_consistent(mutex_);
    if (rc != 0)
      throw MpiError(MPI_ERR_INTERN, fmt::format("the accumulate lock of shared window member {}: {}", target,
                                                 std::strerror(rc)));
  }
  ~AccumulateGuard() {
    if (mutex_) pthread_mutex_unlock(mutex_);
  }
  AccumulateGuard(const AccumulateGuard&) = delete;
  AccumulateGuard& operator=(const AccumulateGuard&) = delete;

 private:
  pthread_mutex_t* mutex_;
};

void reply(Window& w, int origin, std::uint32_t tag, std::vector<std::byte> data) {
  if (tag == 0) return;
  Comm& c = comm(w.comm);
  w.replies.push_back({nullptr, std::move(data)});
  Window::Reply& r = w.replies.back();
  r.send = engine().isend(r.data.data(), static_cast<int>(r.data.size()), MPI_BYTE, origin, static_cast<int>(tag), c,
                          c.context_id, request::SendMode::standard);
}

void apply_put(std::byte* at, const Operation& op) {
  const std::byte* data = op.data;
  std::uint64_t left = op.header.data_bytes;
  for (const RmaBlock& b : blocks_of(op)) {
    std::size_t n = std::min<std::uint64_t>(left, static_cast<std::uint64_t>(b.length));
    if (n > 0) std::memmove(at + b.displacement, data, n);
    data += n;
    left -= n;
  }
}

std::vector<std::byte> gather_bytes(const std::byte* at, const Operation& op) {
  std::vector<std::byte> out;
  for (const RmaBlock& b : blocks_of(op))
    out.insert(out.end(), at + b.displacement, at + b.displacement + b.length);
  return out;
}

// The accumulate family: `data` holds packed elements; they are unpacked to
// their memory layout (pair types have padding) and combined block by block.
void combine(std::byte* at, const Operation& op, const std::byte* packed, std::size_t elements) {
  if (op.header.op == MPI_NO_OP || elements == 0) return;
  MPI_Datatype element = op.header.element;
  const Datatype& e = datatype(element);
  std::size_t extent = static_cast<std::size_t>(e.extent());
  // Packed elements without padding, suitably aligned, are combined where
  // they are (large accumulates: no second copy); others are unpacked first.
  std::size_t alignment = std::min<std::size_t>(extent & (~extent + 1), 16);
  std::vector<std::byte> values;
  const std::byte* in = packed;
  if (e.size != extent || reinterpret_cast<std::uintptr_t>(packed) % alignment != 0) {
    values.resize(elements * extent);
    e.unpack(packed, elements, values.data());
    in = values.data();
  }
  const Op& o = core::op(op.header.op);
  std::size_t done = 0;
  for (const RmaBlock& b : blocks_of(op)) {
    if (done == elements) break;
    std::size_t n = std::min<std::size_t>(elements - done, static_cast<std::size_t>(b.length));
    o.apply(in + done * extent, at + b.displacement, static_cast<int>(n), element);
    done += n;
  }
}

// The old contents of the target buffer, packed.
std::vector<std::byte> gather_elements(std::byte* at, const Operation& op) {
  const Datatype& e = datatype(op.header.element);
  std::size_t extent = static_cast<std::size_t>(e.extent());
  std::vector<std::byte> values;
  std::size_t elements = 0;
  for (const RmaBlock& b : blocks_of(op)) {
    values.insert(values.end(), at + b.displacement, at + b.displacement + b.length * static_cast<std::int64_t>(extent));
    elements += static_cast<std::size_t>(b.length);
  }
  std::vector<std::byte> packed(elements * e.size);
  if (elements > 0) e.pack(values.data(), elements, packed.data());
  return packed;
}

std::size_t packed_elements(const Operation& op) {
  return static_cast<std::size_t>(op.header.data_bytes / datatype(op.header.element).size);
}

std::vector<std::byte> compare_and_swap(std::byte* at, const Operation& op) {
  std::size_t size = datatype(op.header.element).size;
  std::vector<std::byte> old(at, at + size);
  if (std::memcmp(old.data(), op.data + size, size) == 0) std::memcpy(at, op.data, size);
  return old;
}

// Performs a data operation (put, get, the accumulate family) on the memory
// of member `target`; returns what get, get_accumulate and compare_and_swap
// answer with (the old data), empty for the others.
std::vector<std::byte> perform(const Window& w, int target, const Operation& op) {
  std::byte* base = member_base(w, target);
  // A put or get with an op is an accumulate (MPI_REPLACE) or get_accumulate
  // (MPI_NO_OP) of a layout with mixed element types: atomic too.
  const bool atomic_transfer = op.header.op != MPI_OP_NULL;
  switch (static_cast<RmaKind>(op.header.kind)) {
    case RmaKind::put: {
      std::byte* at = target_address(w, base, op, 1);
      AccumulateGuard guard(w, target, atomic_transfer);
      apply_put(at, op);
      return {};
    }
    case RmaKind::get: {
      const std::byte* at = target_address(w, base, op, 1);
      AccumulateGuard guard(w, target, atomic_transfer);
      return gather_bytes(at, op);
    }
    case RmaKind::accumulate: {
      std::byte* at = target_address(w, base, op, datatype(op.header.element).extent());
      AccumulateGuard guard(w, target);
      combine(at, op, op.data, packed_elements(op));
      return {};
    }
    case RmaKind::get_accumulate: {
      std::byte* at = target_address(w, base, op, datatype(op.header.element).extent());
      AccumulateGuard guard(w, target);
      std::vector<std::byte> old = gather_elements(at, op);
      combine(at, op, op.data, packed_elements(op));
      return old;
    }
    case RmaKind::compare_and_swap: {
      std::byte* at = target_address(w, base, op, static_cast<std::int64_t>(datatype(op.header.element).size));
      AccumulateGuard guard(w, target);
      return compare_and_swap(at, op);
    }
    default:
      break;
  }
  throw MpiError(MPI_ERR_INTERN, fmt::format("RMA operation {} is not a data operation", op.header.kind));
}

// Applies one operation; false when it must wait (a lock not granted yet).
bool apply(Window& w, int origin, const Operation& op) {
  const std::uint32_t tag = op.header.reply_tag;
  switch (static_cast<RmaKind>(op.header.kind)) {
    case RmaKind::lock:
      if (!w.lock_manager.acquire(origin, op.header.element)) return false;
      reply(w, origin, tag, {});
      return true;
    case RmaKind::unlock:
      w.lock_manager.release(origin);
      reply(w, origin, tag, {});
      return true;
    case RmaKind::flush:
      reply(w, origin, tag, {});
      return true;
    default:
      reply(w, origin, tag, perform(w, w.rank, op));
      return true;
  }
}

// Answers an operation that failed at the target (so the origin is not left
// waiting) and says why.
void apply_or_report(Window& w, int origin, const Operation& op, bool& applied) {
  try {
    applied = apply(w, origin, op);
  } catch (const MpiError& e) {
    log().error("rank {}: RMA operation from rank {} of window {} dropped: {}", w.rank, origin, w.handle, e.what());
    std::uint64_t bytes = 0;
    auto kind = static_cast<RmaKind>(op.header.kind);
    if (kind == RmaKind::get) {
      for (const RmaBlock& b : blocks_of(op)) bytes += static_cast<std::uint64_t>(b.length);
    } else if (kind == RmaKind::get_accumulate || kind == RmaKind::compare_and_swap) {
      std::int64_t n = 0;
      for (const RmaBlock& b : blocks_of(op)) n += b.length;
      bytes = static_cast<std::uint64_t>(n) * datatype(op.header.element).size;
    }
    reply(w, origin, op.header.reply_tag, std::vector<std::byte>(bytes));
    applied = true;
  }
}

void accept_messages(Window& w) {
  Comm& c = comm(w.comm);
  for (;;) {
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status{};
    if (!engine().improbe(MPI_ANY_SOURCE, rma_tag::operation, c, c.context_id, false, &message, &status)) return;
    std::deque<Incoming>& queue = w.incoming[status.MPI_SOURCE];
    queue.push_back({});
    Incoming& in = queue.back();
    in.bytes.allocate(static_cast<std::size_t>(status.gridmpi_count));
    in.recv = engine().imrecv(in.bytes.data(), static_cast<int>(in.bytes.size), MPI_BYTE, message);
  }
}

// Applies the arrived heads of every origin's queue until nothing moves (an
// unlock may let another origin's lock through).
void apply_arrived(Window& w) {
  bool moved = true;
  while (moved) {
    moved = false;
    for (auto& [origin, queue] : w.incoming) {
      while (!queue.empty() && queue.front().recv->complete) {
        Operation op = decode(queue.front().bytes);
        bool applied = false;
        apply_or_report(w, origin, op, applied);
        if (!applied) break;
        engine().release(queue.front().recv);
        queue.pop_front();
        moved = true;
      }
    }
  }
}

void release_sent_replies(Window& w) {
  std::erase_if(w.replies, [](const Window::Reply& r) {
    if (!r.send->complete) return false;
    engine().release(r.send);
    return true;
  });
}

void serve(Window& w) {
  try {
    accept_messages(w);
    apply_arrived(w);
    release_sent_replies(w);
  } catch (const std::exception& e) {
    log().error("rank {}: RMA server of window {}: {}", w.rank, w.handle, e.what());
  }
}

}  // namespace

std::vector<std::byte> apply_direct(const Window& w, int target, const RmaHeader& header,
                                    std::span<const RmaBlock> blocks, const std::byte* data) {
  Operation op;
  op.header = header;
  op.header.block_count = static_cast<std::uint32_t>(blocks.size());
  op.blocks = blocks.data();
  op.data = data;
  return perform(w, target, op);
}

void start_server(Window& w) {
  auto server = std::make_unique<request::Request>();
  server->kind = request::RequestKind::collective;
  server->freed = true;  // nobody waits for it: the engine frees it when it completes
  server->comm = w.comm;
  Window* raw = &w;
  server->poll = [raw] {
    serve(*raw);
    return false;
  };
  w.server = engine().adopt(std::move(server));
}

void stop_server(Window& w) {
  engine().wait_until([&] {
    release_sent_replies(w);
    return w.replies.empty();
  });
  // Marked complete, the server is dropped (and freed) by the next progress round.
  w.server->poll = nullptr;
  w.server->complete = true;
  w.server = nullptr;
  for (auto& [origin, queue] : w.incoming)
    for (Incoming& in : queue) engine().release(in.recv);
  w.incoming.clear();
  std::vector<request::Request*> leftovers;
  leftovers.swap(w.control_sends);
  for (auto* r : leftovers) {
    engine().wait_until([r] { return r->complete; });
    engine().release(r);
  }
}

}  // namespace gridmpi::core
