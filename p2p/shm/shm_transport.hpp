// The shared-memory transport: processes of one host talk through
// single-producer single-consumer rings (p2p/shm/shm_ring.hpp) in a segment
// owned by the receiver.  Small payloads are copied through the ring; large
// ones are read by the receiver straight from the sender's memory
// (process_vm_readv) when the kernel permits it, else streamed through the
// ring in parts.  A waiting process sleeps on an eventfd that senders write
// only after it said it is asleep.  Segments are memfds and the doorbells
// eventfds, handed to the peers over an abstract unix socket: nothing is
// ever created in /dev/shm or the file system.  See p2p/shm/README.md.
#pragma once
#include <boost/asio/posix/stream_descriptor.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "p2p/shm/shm_ring.hpp"
#include "p2p/transport.hpp"

namespace gridmpi::p2p::shm {

// What capabilities() declares (the collectives' cost model 1 uses them).
inline constexpr double declared_latency_us = 0.3;
inline constexpr double declared_bandwidth = 8e9;  // bytes per second

enum class LargePath : std::uint8_t {
  automatic,    // single copy when process_vm_readv is permitted, else two copies
  single_copy,  // single copy, and an error when it is not permitted
  two_copy,     // always through the ring
};

struct ShmOptions {
  std::size_t ring_size = 64 * 1024;  // bytes of each ring (a multiple of the page size)
  std::size_t eager_limit = 8 * 1024;  // payloads up to this go through the ring in one record
  LargePath large_path = LargePath::automatic;
  // How long progress() finds nothing before it tells senders to ring the
  // doorbell (poll mode).  The constructor sets it to half the engine's
  // spin (TransportContext::engine_spin), so that it is set before the
  // engine goes to sleep; this value serves transports driven alone.
  std::chrono::microseconds arm_after{25};
  std::chrono::milliseconds shutdown_timeout{10000};
  // Reads the shm.* parameters.
  static ShmOptions from_configuration();
};

// shm.enable is true and _YAMPI_DISABLE_UNIX (mpirun -nounix) is not set.
bool enabled_by_configuration();

// What makes two processes "on the same host" for this transport: the boot
// id, the network namespace and the pid namespace ("<boot id>.<net>.<pid>").
std::string host_key();

class ShmTransport final : public Transport {
 public:
  ShmTransport(const TransportContext& context, ShmOptions options);
  ~ShmTransport() override;
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;

  const char* name() const noexcept override { return "shm"; }
  Capabilities capabilities() const override;
  bool reachable(int peer) const override;
  std::string endpoint() override;
  void set_peer_endpoint(int peer, std::string_view endpoint) override;
  SendStatus send(int peer, const Frame& frame, std::span<const std::byte> payload,
                  std::uint64_t token) override;
  bool progress() override;
  void begin_shutdown() override;
  bool shutdown_complete() const override;

  // For tests: how large payloads from `peer` reach us (unknown until the
  // peer's hello has been read).
  SingleCopy large_path_from(int peer) const;

 private:
  struct Peer;
  struct Incoming;
  struct SegmentHeader;

  void create_segment();
  void open_listener();
  void wait_listener();
  void wait_incoming(const std::shared_ptr<Incoming>& in);
  void read_incoming(const std::shared_ptr<Incoming>& in);
  void wait_doorbell();
  bool push_hello(Peer& p);
  void accept_hello(const std::shared_ptr<Incoming>& in, const void* hello, int segment_fd, int doorbell_fd);
  void peer_closed(Incoming& in);

  SendStatus send_large(Peer& p, std::span<const std::byte> header, std::span<const std::byte> payload,
                        std::uint64_t token);
  bool continue_stream(Peer& p);
  bool progress_sends();
  bool full_progress();
  bool idle_round();
  bool drain(Peer& p);
  bool drain_ready();  // drains every ring whose head holds a record
  void deliver_end(Peer& p);
  void read_from_peer(Peer& p, std::span<std::byte> target, std::uint64_t address);
  void publish(Peer& p);
  void notify(Peer& p);
  void ring(Peer& p);
  void ring_self();
  bool arm();
  bool anything_pending();
  void add_sender(Peer& p);
  void fail(const std::string& message);

  TransportContext context_;
  ShmOptions options_;
  std::string host_key_;
  unsigned uid_ = 0;
  pid_t pid_ = 0;
  std::uint64_t probe_value_ = 0;  // peers read it with process_vm_readv to test whether they may

  int segment_fd_ = -1;  // kept: every local peer receives a duplicate
  std::size_t segment_size_ = 0;
  std::size_t pair_stride_ = 0;
  SegmentHeader* header_ = nullptr;
  int doorbell_fd_ = -1;
  std::uint64_t doorbell_value_ = 0;
  boost::asio::posix::stream_descriptor doorbell_;
  boost::asio::posix::stream_descriptor listener_;
  std::string socket_name_;

  std::vector<std::unique_ptr<Peer>> peers_;  // by world rank; null: not on this host
  std::vector<Peer*> receivers_;              // every local peer, polled by progress()
  // receivers_[i]'s ring head (RingReader::head_stamp, ready_stamp), kept
  // by drain(): progress() polls this array, a cache line for four peers,
  // not every Peer (with more ranks than cores each poll starts cold).
  struct Watch {
    std::uint64_t* stamp;
    std::uint64_t ready;
  };
  std::vector<Watch> watch_;
  std::vector<Peer*> senders_;                // local peers with sends in flight
  std::vector<Peer*> pending_hellos_;         // pushes the kernel refused for now (EAGAIN)
  std::vector<Peer*> to_publish_;             // poll mode: rings whose consumed lines progress() publishes next
  std::vector<std::shared_ptr<Incoming>> unidentified_;

  unsigned idle_polls_ = 0;
  // Poll mode: when the oldest single-copy send still being read started
  // (progress() counts it as activity for a while: see there).
  std::chrono::steady_clock::time_point reading_since_;
  bool reading_ = false;
  std::chrono::steady_clock::time_point idle_since_;
  std::shared_ptr<ShmTransport*> life_;
  std::exception_ptr failure_;
  bool shutting_down_ = false;
  std::chrono::steady_clock::time_point shutdown_deadline_;
};

}  // namespace gridmpi::p2p::shm
