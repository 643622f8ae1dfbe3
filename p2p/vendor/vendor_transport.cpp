#include "p2p/vendor/vendor_transport.hpp"

#include <chrono>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <mutex>

#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "base/error.hpp"
#include "p2p/little_endian.hpp"
#include "p2p/vendor/vendor_abi.h"
#include "p2p/vendor/vendor_library.hpp"

namespace gridmpi::p2p::vendor {

namespace {

// -1: chosen per vendor (automatic_short_limit).  Measured on the
// development machine (p2p/vendor/README.md): a first part that stays within
// the vendor's own eager limit is what matters.
const conf::Param<std::int64_t> short_limit_param{
    "vendor.short_limit", -1, "bytes",
    "largest payload the vendor transport sends in the same vendor message as its header (longer payloads go as "
    "a second vendor message received in place); -1 = chosen per vendor (Open MPI 3968, MPICH 16256)",
    conf::Level::tuner, {"_YAMPI_VENDOR_SHORT"}};

const conf::Param<std::int64_t> probe_block_param{
    "vendor.probe_block", 2000, "microseconds",
    "thread mode: how long the vendor transport's thread stays in the vendor's blocking MPI_Probe (which spins in "
    "Open MPI and MPICH) without traffic before it polls with sleeps instead",
    conf::Level::tuner};

const conf::ChoiceParam blocking_probe_param{
    "vendor.blocking_probe", "auto", {"auto", "yes", "no"},
    "thread mode: whether the vendor transport's thread waits in the vendor's blocking MPI_Probe (outside the "
    "request layer's lock, needs MPI_THREAD_MULTIPLE) or polls with sleeps under the lock; auto = yes except for "
    "MPICH, whose blocking probe starves the application's sends of its global lock",
    conf::Level::tuner};

const conf::Param<std::int64_t> idle_sleep_param{
    "vendor.idle_sleep", 1000, "microseconds",
    "thread mode: the longest sleep between two polls of an idle vendor transport (the added latency of the first "
    "message after a pause)",
    conf::Level::tuner};

// Our header in front of every first part: magic, frame-header length,
// payload length.  Whether the payload follows inline is told by the vendor
// message's size (a long frame's first part ends after the frame header).
constexpr std::uint32_t magic = 0x31564d47;  // "GMV1"
constexpr std::size_t vendor_header_size = 16;

// Unreferenced temporary buffers above this are released after use.
constexpr std::size_t max_kept_buffer = VendorTransport::max_fragment;

}  // namespace

VendorOptions VendorOptions::from_configuration() {
  VendorOptions o;
  std::int64_t v = 0;
  try {
    v = short_limit_param.get();
  } catch (const conf::ConfigError& e) {
    throw MpiError(MPI_ERR_OTHER, e.what());
  }
  if (v < -1 || (v >= 0 && static_cast<std::uint64_t>(v) > VendorTransport::max_frame_payload))
    throw MpiError(MPI_ERR_OTHER, fmt::format("vendor.short_limit is {}; use -1 (per vendor) or 0 to {} bytes", v,
                                              VendorTransport::max_frame_payload));
  if (v >= 0) o.short_limit = static_cast<std::size_t>(v);
  std::int64_t block = 0, sleep = 0;
  try {
    block = probe_block_param.get();
    sleep = idle_sleep_param.get();
    std::string blocking = blocking_probe_param.get();
    o.blocking_probe = blocking == "auto" ? automatic_blocking_probe : blocking == "yes" ? 1 : 0;
  } catch (const conf::ConfigError& e) {
    throw MpiError(MPI_ERR_OTHER, e.what());
  }
  if (block < 0) throw MpiError(MPI_ERR_OTHER, fmt::format("vendor.probe_block is {}; use 0 or more microseconds", block));
  if (sleep < 1) throw MpiError(MPI_ERR_OTHER, fmt::format("vendor.idle_sleep is {}; use 1 or more microseconds", sleep));
  o.probe_block = std::chrono::microseconds(block);
  o.idle_sleep = std::chrono::microseconds(sleep);
  return o;
}

std::size_t VendorOptions::automatic_short_limit(std::string_view vendor) {
  // Open MPI's shared-memory BTL (vader) sends up to 4040 user bytes in its
  // eager fragment (4096 with its header); our 16-byte header and the
  // request layer's 32-byte eager header leave 3992: one vendor message
  // costs 2.7 us where a first part just above the limit costs 8 us.
  if (vendor == "openmpi") return 3968;
  // MPICH 4.0 (ch4/UCX): one message beats two at every size up to 16 KiB.
  if (vendor == "mpich") return 16256;
  return 3968;
}

VendorTransport::VendorTransport(const TransportContext& context, Library& library, VendorOptions options)
    : context_(context),
      library_(library),
      ops_(library.ops()),
      options_(options),
      job_(fmt::format("{:x}", ops_.job_id())),
      vendor_of_world_(static_cast<std::size_t>(context.world_size), -1),
      world_of_vendor_(static_cast<std::size_t>(library.size()), -1),
      done_(static_cast<std::size_t>(max_pending_requests)) {
  world_of_vendor_[static_cast<std::size_t>(library.rank())] = context_.world_rank;
  if (options_.short_limit == VendorOptions::automatic)
    options_.short_limit = VendorOptions::automatic_short_limit(ops_.name ? ops_.name : "");
  if (options_.blocking_probe == VendorOptions::automatic_blocking_probe)
    options_.blocking_probe = std::string_view(ops_.name ? ops_.name : "") == "mpich" ? 0 : 1;
  // The blocking probe runs outside the gate, concurrently with the
  // application's sends: only with MPI_THREAD_MULTIPLE.
  multiple_ = library.provided_thread_level() >= 3 && options_.blocking_probe == 1;
}

VendorTransport::~VendorTransport() {
  if (thread_.joinable()) {
    {
      GateScope scope(context_.gate);
      stop_ = true;
      poke_thread();
      if (probe_timer_) probe_timer_->cancel();
      if (blocked_) {
        blocked_ = false;
        ++wakes_sent_;
        ops_.wake();
      }
    }
    // The thread enters the gate once more before it sees stop_: the owner
    // must not hold the gate here (the engine destroys its transports after
    // shutdown, outside the lock; after a clean shutdown the thread is gone).
    thread_.join();
  }
  // Pre-posted receives must not outlive us (the vendor's MPI_Finalize follows).
  for (auto& p : posted_)
    if (p.slot >= 0) ops_.cancel_recv(p.slot);
}

Capabilities VendorTransport::capabilities() const {
  Capabilities caps;
  caps.eager_limit = eager_limit;
  caps.max_fragment = max_fragment;
  caps.max_frame_payload = max_frame_payload;
  caps.copies_up_to = options_.short_limit;  // inline payloads are copied into the first part
  // Measured one-way through the engine (README): about 1.5 us with Open MPI
  // shared memory, far below tcp's estimate, so the engine picks vendor for
  // every peer it reaches.
  caps.latency_us = 2;
  caps.bandwidth_bytes_per_s = 5e9;
  caps.can_block = false;
  return caps;
}

bool VendorTransport::reachable(int peer) const {
  return peer >= 0 && peer < context_.world_size && peer != context_.world_rank &&
         vendor_of_world_[static_cast<std::size_t>(peer)] >= 0;
}

// "vendor:<job>.<vendor rank>.<short limit>": the limit sizes the peers'
// pre-posted receives, so every rank of the vendor job must use the same.
std::string VendorTransport::endpoint() {
  return fmt::format("vendor:{}.{}.{}", job_, library_.rank(), options_.short_limit);
}

void VendorTransport::set_peer_endpoint(int peer, std::string_view endpoint) {
  auto malformed = [&] {
    return MpiError(MPI_ERR_OTHER, fmt::format("vendor: rank {}: malformed endpoint '{}' of rank {}",
                                               context_.world_rank, endpoint, peer));
  };
  constexpr std::string_view prefix = "vendor:";
  if (endpoint.substr(0, prefix.size()) != prefix) throw malformed();
  std::string_view rest = endpoint.substr(prefix.size());
  auto dot = rest.find('.');
  if (dot == std::string_view::npos) throw malformed();
  std::string_view job = rest.substr(0, dot);
  std::string_view rank_text = rest.substr(dot + 1);
  std::string_view limit_text;
  if (auto second = rank_text.find('.'); second != std::string_view::npos) {
    limit_text = rank_text.substr(second + 1);
    rank_text = rank_text.substr(0, second);
    if (limit_text.empty()) throw malformed();
  }
  auto number = [&](std::string_view text, std::size_t digits) {
    std::uint64_t v = 0;
    if (text.empty() || text.size() > digits) throw malformed();
    for (char c : text) {
      if (c < '0' || c > '9') throw malformed();
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
  };
  int vrank = static_cast<int>(number(rank_text, 9));
  // Another cluster's vendor job: not ours to reach (tcp or impi will).
  if (job != job_) return;
  if (!limit_text.empty() && number(limit_text, 19) != options_.short_limit)
    throw MpiError(MPI_ERR_OTHER, fmt::format("vendor: rank {} uses vendor.short_limit {} but rank {} uses {}: "
                                              "give every process of the job the same value",
                                              context_.world_rank, options_.short_limit, peer, limit_text));
  if (peer < 0 || peer >= context_.world_size || vrank >= library_.size())
    throw MpiError(MPI_ERR_OTHER,
                   fmt::format("vendor: rank {}: rank {} published vendor rank {}, but the vendor job has {} ranks",
                               context_.world_rank, peer, vrank, library_.size()));
  int& known = world_of_vendor_[static_cast<std::size_t>(vrank)];
  if (known >= 0 && known != peer)
    throw MpiError(MPI_ERR_OTHER, fmt::format("vendor: rank {}: ranks {} and {} both published vendor rank {}",
                                              context_.world_rank, known, peer, vrank));
  known = peer;
  vendor_of_world_[static_cast<std::size_t>(peer)] = vrank;
}

int VendorTransport::world_of_vendor(int vendor_rank) const {
  if (vendor_rank < 0 || static_cast<std::size_t>(vendor_rank) >= world_of_vendor_.size()) return -1;
  return world_of_vendor_[static_cast<std::size_t>(vendor_rank)];
}

void VendorTransport::fail_call(int rc, const char* call, int peer_world) {
  char text[512] = {};
  ops_.error_string(rc, text, sizeof text);
  std::string who = peer_world >= 0 ? fmt::format("rank {} (vendor rank {}) with rank {}", context_.world_rank,
                                                  library_.rank(), peer_world)
                                    : fmt::format("rank {} (vendor rank {})", context_.world_rank, library_.rank());
  throw MpiError(MPI_ERR_OTHER, fmt::format("vendor {}: {}: {} failed: {}", ops_.name, who, call, text));
}

std::vector<std::byte> VendorTransport::take_buffer() {
  if (spare_buffers_.empty()) return {};
  auto b = std::move(spare_buffers_.back());
  spare_buffers_.pop_back();
  return b;
}

void VendorTransport::give_buffer(std::vector<std::byte>&& b) {
  if (b.capacity() == 0 || b.capacity() > 64 * 1024 || spare_buffers_.size() >= 256) return;
  b.clear();
  spare_buffers_.push_back(std::move(b));
}

SendStatus VendorTransport::send(int peer, const Frame& frame, std::span<const std::byte> payload,
                                 std::uint64_t token) {
  if (failure_) std::rethrow_exception(failure_);
  int vpeer = (peer >= 0 && peer < context_.world_size) ? vendor_of_world_[static_cast<std::size_t>(peer)] : -1;
  if (vpeer < 0 || peer == context_.world_rank)
    throw MpiError(MPI_ERR_INTERN, fmt::format("vendor: rank {} cannot reach rank {}", context_.world_rank, peer));
  if (payload.size() > max_frame_payload)
    throw MpiError(MPI_ERR_INTERN, fmt::format("vendor: frame of {} bytes above its limit of {}", payload.size(),
                                               max_frame_payload));
  static_assert(frame::max_header_size <= max_frame_header);
  frame::HeaderBuffer buffer;
  const std::span<const std::byte> header = frame::encoded(frame, buffer);
  const bool inline_payload = payload.size() <= options_.short_limit;
  if (ops_.pending_sends() + (inline_payload ? 1 : 2) > max_pending_requests) return SendStatus::would_block;

  std::vector<std::byte> first = take_buffer();
  first.resize(vendor_header_size + header.size() + (inline_payload ? payload.size() : 0));
  WireWriter w(first.data());
  w.put(magic).put(static_cast<std::uint32_t>(header.size())).put(static_cast<std::uint64_t>(payload.size()));
  if (!header.empty()) std::memcpy(first.data() + vendor_header_size, header.data(), header.size());
  if (inline_payload && !payload.empty())
    std::memcpy(first.data() + vendor_header_size + header.size(), payload.data(), payload.size());

  auto remember = [&](int slot, Pending p) {
    if (static_cast<std::size_t>(slot) >= pending_.size()) pending_.resize(static_cast<std::size_t>(slot) + 1);
    pending_[static_cast<std::size_t>(slot)] = std::move(p);
  };
  // Sent and tested once: a short message the vendor sent eagerly is done
  // here and never occupies a slot (no MPI_Testsome for it).
  int slot = -1;
  int rc = ops_.isend_now(first.data(), first.size(), vpeer, first_tag, &slot);
  if (rc != 0) fail_call(rc, "MPI_Isend", peer);
  bool first_done = slot < 0;
  if (first_done)
    give_buffer(std::move(first));
  else
    remember(slot, Pending{peer, 0, false, std::move(first)});  // moving keeps the storage the vendor reads
  bool second_done = true;
  if (!inline_payload) {
    rc = ops_.isend_now(payload.data(), payload.size(), vpeer, second_tag, &slot);
    if (rc != 0) fail_call(rc, "MPI_Isend", peer);
    if (slot >= 0) {
      remember(slot, Pending{peer, token, true, {}});
      second_done = false;
    }
  }
  // Thread mode: the thread sleeping in MPI_Probe must come back to test
  // a send still in flight (nothing else would complete it).  A send the
  // vendor finished at once needs nothing more: waking the thread for it
  // cost a second vendor message per message.
  if (blocked_ && !(first_done && second_done)) {
    blocked_ = false;
    ++wakes_sent_;
    if ((rc = ops_.wake()) != 0) fail_call(rc, "MPI_Isend (wake)", -1);
  } else if (idle_) {
    idle_ = false;  // traffic again: back to the blocking probe
    poke_thread();
  }
  return second_done ? SendStatus::complete : SendStatus::in_flight;
}

bool VendorTransport::complete_sends() {
  if (ops_.pending_sends() == 0) return false;
  int count = 0;
  int failed = -1;
  int rc = ops_.testsome(done_.data(), static_cast<int>(done_.size()), &count, &failed);
  for (int i = 0; i < count; ++i) {
    const auto slot = static_cast<std::size_t>(done_[static_cast<std::size_t>(i)]);
    if (slot >= pending_.size()) continue;  // not ours (nothing else may send; defensive)
    Pending p = std::move(pending_[slot]);
    give_buffer(std::move(p.buffer));
    if (p.report) context_.sink->on_send_complete(p.peer, p.token);
  }
  if (rc != 0) {
    int peer = failed >= 0 && static_cast<std::size_t>(failed) < pending_.size()
                   ? pending_[static_cast<std::size_t>(failed)].peer
                   : -1;
    fail_call(rc, "MPI_Testsome", peer);
  }
  return count > 0;
}

void VendorTransport::receive_one(int source, std::size_t bytes) {
  receive_buffer_.resize(bytes);
  int rc = ops_.recv_probed(receive_buffer_.data(), bytes);
  if (rc != 0) fail_call(rc, "MPI_Mrecv", world_of_vendor(source));
  // receive_buffer_ is not touched by send(), which the sink may call.
  deliver(source, receive_buffer_.data(), bytes);
}

// A first part of `bytes` bytes from vendor rank `source` at data (memory
// that stays ours until we return): to the sink, with its second part.
void VendorTransport::deliver(int source, std::byte* data, std::size_t bytes) {
  const int peer = world_of_vendor(source);
  int rc = 0;
  if (bytes < vendor_header_size || load_le<std::uint32_t>(data) != magic)
    throw MpiError(MPI_ERR_OTHER,
                   fmt::format("vendor: rank {}: a {}-byte vendor message from rank {} is not a gridmpi frame "
                               "(another program using the vendor's MPI_COMM_WORLD?)",
                               context_.world_rank, bytes, peer));
  const std::size_t header_size = load_le<std::uint32_t>(data + 4);
  const std::uint64_t payload_size = load_le<std::uint64_t>(data + 8);
  const bool inline_payload =
      payload_size <= max_frame_payload && bytes == vendor_header_size + header_size + payload_size;
  if (payload_size > max_frame_payload || (!inline_payload && bytes != vendor_header_size + header_size))
    throw MpiError(MPI_ERR_OTHER, fmt::format("vendor: rank {}: malformed frame from rank {} ({} bytes for a "
                                              "{}-byte header and a {}-byte payload)",
                                              context_.world_rank, peer, bytes, header_size, payload_size));
  const Frame frame = frame::decode(std::span<const std::byte>(data + vendor_header_size, header_size));
  if (inline_payload)
    return context_.sink->on_frame(peer, frame, std::span<const std::byte>(data + vendor_header_size + header_size, payload_size));
  Placement placement = context_.sink->on_frame_begin(peer, frame, payload_size);
  if (!placement.destination.empty() && placement.destination.size() != payload_size)
    throw MpiError(MPI_ERR_INTERN, "vendor: the request layer named a destination of the wrong size");
  // The second part was sent right after the first: receive it now, so that
  // the next first part of this source pairs with the next second part.
  std::span<std::byte> target = placement.destination;
  if (target.empty()) {
    payload_buffer_.resize(payload_size);
    target = payload_buffer_;
  }
  rc = ops_.recv(target.data(), payload_size, source, second_tag);
  if (rc != 0) fail_call(rc, "MPI_Recv", peer);
  context_.sink->on_frame_end(peer, placement.token, target);
  if (payload_buffer_.capacity() > max_kept_buffer) std::vector<std::byte>().swap(payload_buffer_);
}

// Poll mode: pre-posted receives (an MPI_Test of the oldest is much cheaper
// than a matched probe and a receive).  Thread mode keeps the probe: its
// thread waits in the vendor's MPI_Probe, which posted receives would hide
// messages from.
void VendorTransport::post_receives() {
  const std::size_t capacity = vendor_header_size + max_frame_header + options_.short_limit;
  posted_.resize(posted_receives);
  for (auto& p : posted_) {
    p.buffer.resize(capacity);
    if (int rc = ops_.post_recv(p.buffer.data(), capacity, first_tag, &p.slot); rc != 0)
      fail_call(rc, "MPI_Irecv", -1);
  }
}

// Posts again, oldest first, the receives whose frames were delivered: the
// vendor matches in posting order, which stays the ring's order.  Done at
// the next progress() rather than right after the upcalls, so that the
// vendor's MPI_Irecv is not on the path of the message just delivered (the
// application has it before we repost).
void VendorTransport::repost_delivered() {
  const std::size_t n = posted_.size();
  while (unposted_ > 0) {
    Posted& p = posted_[(posted_head_ + n - unposted_) % n];
    if (int rc = ops_.post_recv(p.buffer.data(), p.buffer.size(), first_tag, &p.slot); rc != 0)
      fail_call(rc, "MPI_Irecv", -1);
    --unposted_;
  }
}

// One frame per call: the engine looks at the request it waits for after
// every progress() (testing the next receive first would put one more
// vendor MPI_Test, i.e. a run of the vendor's progress engine, on the path
// of every message); a burst is taken one frame per engine round.
bool VendorTransport::receive_posted() {
  if (posted_.empty()) post_receives();
  if (unposted_ > 0) repost_delivered();
  Posted& p = posted_[posted_head_];
  if (!head_done_) {
    int flag = 0;
    if (int rc = ops_.test_recv(p.slot, &flag, &head_source_, &head_bytes_); rc != 0) {
      if (flag) p.slot = -1;
      fail_call(rc, "MPI_Test (receive)", -1);
    }
    if (!flag) return false;
    p.slot = -1;
    head_done_ = true;
  }
  // A peer faster through wire-up than we are: its frame waits here until
  // its endpoint tells us who it is.
  if (world_of_vendor(head_source_) < 0) return false;
  head_done_ = false;
  // The ring moves on (and the receive is posted again) even when the frame
  // is refused (deliver throws): the next frames still arrive.
  posted_head_ = (posted_head_ + 1) % posted_.size();
  ++unposted_;
  deliver(head_source_, p.buffer.data(), head_bytes_);
  return true;
}

bool VendorTransport::receive_frames() {
  if (context_.progress == ProgressMode::poll) return receive_posted();
  bool worked = false;
  for (int n = 0; n < frames_per_progress; ++n) {
    if (held_source_ < 0) {
      int flag = 0;
      std::size_t bytes = 0;
      int rc = ops_.improbe(first_tag, &flag, &held_source_, &bytes);
      if (rc != 0) fail_call(rc, "MPI_Improbe", -1);
      if (!flag) {
        held_source_ = -1;
        break;
      }
      held_bytes_ = bytes;
    }
    // A peer faster through wire-up than we are: the matched probe holds its
    // frame in the plug-in until its endpoint tells us who it is.
    if (world_of_vendor(held_source_) < 0) break;
    int source = held_source_;
    held_source_ = -1;
    receive_one(source, held_bytes_);
    worked = true;
  }
  return worked;
}

bool VendorTransport::progress_locked() {
  if (in_progress_) return false;  // an upcall's send() does not recurse here
  in_progress_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{in_progress_};
  bool worked = complete_sends();
  worked = receive_frames() || worked;
  return worked;
}

bool VendorTransport::progress() {
  if (failure_) std::rethrow_exception(failure_);
  return progress_locked();
}

// ---- thread mode ----------------------------------------------------------

void VendorTransport::poke_thread() {
  {
    std::lock_guard lock(sleep_mutex_);
    poke_ = true;
  }
  sleep_cv_.notify_one();
}

void VendorTransport::start_progress_thread() {
  if (thread_.joinable()) return;
  if (context_.io) probe_timer_ = std::make_unique<boost::asio::steady_timer>(*context_.io);
  thread_running_ = true;
  thread_ = std::thread([this] { thread_main(); });
}

void VendorTransport::thread_main() {
  using namespace std::chrono;
  auto backoff = microseconds(0);
  auto last_traffic = steady_clock::now();
  try {
    for (;;) {
      bool worked = false;
      bool sends_pending = false;
      bool block = false;
      bool exiting = false;
      long wakes_to_drain = 0;
      {
        GateScope scope(context_.gate);
        worked = progress_locked();
        sends_pending = ops_.pending_sends() > 0;
        if (stop_ && !sends_pending) {
          wakes_to_drain = wakes_sent_ - wakes_received_;
          wakes_received_ = wakes_sent_;
          exiting = true;  // leave below, outside the gate
        } else if (worked) {
          idle_ = false;
        } else if (!sends_pending && multiple_ && !idle_) {
          // Set under the gate: a send() after this point sees it and wakes us.
          blocked_ = block = true;
          arm_probe_timer();
        }
      }
      if (exiting) {
        for (long i = 0; i < wakes_to_drain; ++i)
          if (int rc = ops_.recv_wake(); rc != 0) fail_call(rc, "MPI_Recv (wake)", -1);
        break;
      }
      if (block) {
        int source = -1;
        int tag = -1;
        std::size_t bytes = 0;
        int rc = ops_.probe_any(&source, &tag, &bytes);  // outside the gate: MPI_THREAD_MULTIPLE
        GateScope scope(context_.gate);
        blocked_ = false;
        if (probe_timer_) probe_timer_->cancel();
        if (rc != 0) fail_call(rc, "MPI_Probe", -1);
        if (tag == GRIDMPI_VENDOR_WAKE_TAG && source == library_.rank()) {
          if ((rc = ops_.recv_wake()) != 0) fail_call(rc, "MPI_Recv (wake)", -1);
          ++wakes_received_;
        } else {
          idle_ = false;
        }
        backoff = microseconds(0);
        continue;
      }
      if (worked) {
        backoff = microseconds(0);
        last_traffic = steady_clock::now();
        continue;
      }
      // Polling: sends to complete (the vendor progresses them only inside
      // its calls), or no blocking probe.  Yield for probe_block after the
      // last traffic (a busy exchange keeps its latency), then back off up
      // to idle_sleep so that an idle job does not burn a core.
      if (sends_pending || (!multiple_ && steady_clock::now() - last_traffic < options_.probe_block)) {
        std::this_thread::yield();
        continue;
      }
      backoff = backoff < microseconds(1) ? microseconds(1) : std::min(backoff * 2, options_.idle_sleep);
      std::unique_lock lock(sleep_mutex_);
      sleep_cv_.wait_for(lock, backoff, [&] { return poke_ || stop_.load(); });
      if (poke_) backoff = microseconds(0);
      poke_ = false;
    }
  } catch (...) {
    GateScope scope(context_.gate);
    if (!failure_) failure_ = std::current_exception();
    try {
      std::rethrow_exception(failure_);
    } catch (const std::exception& e) {
      log().error("{}", e.what());
    } catch (...) {
    }
  }
  thread_running_ = false;
}

void VendorTransport::begin_shutdown() {
  shutting_down_ = true;
  if (!thread_.joinable()) return;
  // Called under the gate (the engine's lock).
  stop_ = true;
  poke_thread();
  if (probe_timer_) probe_timer_->cancel();
  if (blocked_) {
    blocked_ = false;
    ++wakes_sent_;
    if (int rc = ops_.wake(); rc != 0) fail_call(rc, "MPI_Isend (wake)", -1);
  }
}

bool VendorTransport::shutdown_complete() const {
  if (failure_) return true;  // progress() reports it
  if (thread_.joinable()) return !thread_running_;
  // The vendor's MPI_Finalize (close_process_library) synchronises the
  // vendor job: only our own sends must be done before it.
  return ops_.pending_sends() == 0;
}

}  // namespace gridmpi::p2p::vendor

namespace gridmpi::p2p::vendor {

// Under the gate, as the thread is about to block in probe_any: after
// probe_block without traffic, wake it (a message to ourselves) and let it
// poll with sleeps (idle_), since the vendors spin inside MPI_Probe.
void VendorTransport::arm_probe_timer() {
  if (!probe_timer_) return;
  probe_timer_->expires_after(options_.probe_block);
  probe_timer_->async_wait([this, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
    // Cancelled (the probe returned, or shutdown), or queued when we were destroyed.
    if (ec || alive.expired()) return;
    GateScope scope(context_.gate);
    if (!blocked_) return;
    blocked_ = false;
    idle_ = true;
    ++wakes_sent_;
    if (int rc = ops_.wake(); rc != 0 && !failure_) {
      try {
        fail_call(rc, "MPI_Isend (wake)", -1);
      } catch (...) {
        failure_ = std::current_exception();
      }
    }
  });
}

}  // namespace gridmpi::p2p::vendor
