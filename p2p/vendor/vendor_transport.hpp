// The vendor transport: frames to the ranks of our own cluster through the
// site's MPI (loaded by vendor_library.hpp), as GridMPI did on IBM pSeries.
// The vendor only moves bytes; matching and protocols stay in request/.
//
// Wire (vendor messages in the vendor's MPI_COMM_WORLD, see p2p/vendor/README.md):
//  * tag first_tag: a VendorHeader (16 bytes: magic, frame-header length,
//    payload length), our frame header, and the payload when it is at most
//    short_limit bytes;
//  * tag second_tag: the payload of a longer frame, sent right after its
//    first part and received right after it (straight into the destination
//    the sink names).  MPI's non-overtaking rule per (source, tag) keeps
//    both streams in order, so the order of frames per peer holds.
//
// Sends are MPI_Isend, completed by MPI_Testsome in progress(); receives are
// a matched probe (MPI_Improbe) then MPI_Mrecv.  can_block is false: nothing wakes the engine's
// io_context, so in poll mode the engine keeps polling while we have
// traffic, and in thread mode start_progress_thread() runs a thread of ours
// (blocked in the vendor's MPI_Probe when the vendor granted
// MPI_THREAD_MULTIPLE, else polling with back-off under the gate).  Both
// Debian vendors spin inside a blocking MPI_Probe, so the thread stays there
// at most vendor.probe_block microseconds without traffic (a timer on the
// shared io_context wakes it with a message to itself) and then polls with
// sleeps of up to vendor.idle_sleep until traffic resumes: an idle rank
// does not burn a core, even with more ranks than cores.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "p2p/transport.hpp"

struct gridmpi_vendor_ops;

namespace gridmpi::p2p::vendor {

class Library;

struct VendorOptions {
  static constexpr std::size_t automatic = static_cast<std::size_t>(-1);
  // Payloads up to this many bytes travel in the same vendor message as
  // their header; longer ones as a second vendor message.  automatic: the
  // transport chooses from the vendor's name (automatic_short_limit).
  std::size_t short_limit = automatic;
  // Thread mode: the longest stay in the vendor's (spinning) blocking probe
  // without traffic, and the longest sleep between polls after it.
  std::chrono::microseconds probe_block{2000};
  std::chrono::microseconds idle_sleep{1000};
  // Thread mode: wait in the vendor's blocking MPI_Probe (1) or poll under
  // the gate (0); automatic_blocking_probe: per vendor (not with MPICH).
  static constexpr int automatic_blocking_probe = -1;
  int blocking_probe = automatic_blocking_probe;
  // Reads the vendor.* parameters (vendor.short_limit -1: automatic).
  static VendorOptions from_configuration();
  static std::size_t automatic_short_limit(std::string_view vendor);
};

class VendorTransport final : public Transport {
 public:
  // The library must outlive the transport (close_process_library() runs
  // after the engine's shutdown).
  VendorTransport(const TransportContext& context, Library& library, VendorOptions options);
  ~VendorTransport() override;
  VendorTransport(const VendorTransport&) = delete;
  VendorTransport& operator=(const VendorTransport&) = delete;

  const char* name() const noexcept override { return "vendor"; }
  Capabilities capabilities() const override;
  bool reachable(int peer) const override;
  std::size_t short_limit() const noexcept { return options_.short_limit; }
  std::string endpoint() override;
  void set_peer_endpoint(int peer, std::string_view endpoint) override;
  SendStatus send(int peer, const Frame& frame, std::span<const std::byte> payload,
                  std::uint64_t token) override;
  bool progress() override;
  void start_progress_thread() override;
  void begin_shutdown() override;
  bool shutdown_complete() const override;

  static constexpr int first_tag = 1;
  static constexpr int second_tag = 2;
  static constexpr std::size_t eager_limit = 64 * 1024;
  static constexpr std::size_t max_fragment = std::size_t{4} << 20;
  // Frames never exceed what one MPI count (int) can name.
  static constexpr std::size_t max_frame_payload = std::size_t{1} << 30;
  // Vendor requests (two per long frame) before send() says would_block.
  static constexpr int max_pending_requests = 8192;
  // Thread mode: frames received per progress() call, so that one busy peer
  // cannot keep the engine from its other work (poll mode takes one).
  static constexpr int frames_per_progress = 64;
  // Poll mode: first parts arrive in this many pre-posted vendor receives
  // (MPI_Irecv from any source, tested in posting order), each big enough
  // for our header, a frame header of up to max_frame_header bytes and a
  // payload of short_limit bytes.
  static constexpr int posted_receives = 8;
  static constexpr std::size_t max_frame_header = 64;

 private:
  struct Pending {
    int peer = -1;               // world rank
    std::uint64_t token = 0;
    bool report = false;         // on_send_complete when done
    std::vector<std::byte> buffer;  // the first part we built
  };
  bool progress_locked();
  bool complete_sends();
  bool receive_frames();
  bool receive_posted();
  void post_receives();
  void repost_delivered();
  void receive_one(int vendor_source, std::size_t bytes);
  void deliver(int vendor_source, std::byte* data, std::size_t bytes);
  void thread_main();
  void poke_thread();
  void arm_probe_timer();
  [[noreturn]] void fail_call(int rc, const char* call, int peer_world);
  int world_of_vendor(int vendor_rank) const;
  std::vector<std::byte> take_buffer();
  void give_buffer(std::vector<std::byte>&& b);

  TransportContext context_;
  Library& library_;
  const gridmpi_vendor_ops& ops_;
  VendorOptions options_;
  std::string job_;                      // our vendor job's id (hex)
  std::vector<int> vendor_of_world_;     // -1: not reachable through us
  std::vector<int> world_of_vendor_;     // -1: unknown
  std::vector<Pending> pending_;         // by plug-in slot id
  std::vector<int> done_;                // testsome output
  std::vector<std::vector<std::byte>> spare_buffers_;
  std::vector<std::byte> receive_buffer_;   // first parts
  std::vector<std::byte> payload_buffer_;   // second parts nobody placed
  // Poll mode: the pre-posted receives, a ring in posting order (the order
  // the vendor matches them in); the head's completion is kept while its
  // sender's endpoint is still unknown (wire-up).
  struct Posted {
    int slot = -1;
    std::vector<std::byte> buffer;
  };
  std::vector<Posted> posted_;
  std::size_t posted_head_ = 0;
  // Receives delivered but not posted again yet: the ring slots just behind
  // posted_head_ (reposted at the next progress(), off the message's path).
  std::size_t unposted_ = 0;
  bool head_done_ = false;
  int head_source_ = -1;
  std::size_t head_bytes_ = 0;
  std::exception_ptr failure_;           // a vendor failure seen by our thread
  int held_source_ = -1;                 // improbe found a frame of this vendor rank
  std::size_t held_bytes_ = 0;
  bool in_progress_ = false;
  bool shutting_down_ = false;

  // Thread mode.
  std::thread thread_;
  bool multiple_ = false;                 // the vendor granted MPI_THREAD_MULTIPLE
  std::atomic<bool> thread_running_{false};
  std::atomic<bool> stop_{false};
  bool blocked_ = false;                  // the thread is (about to be) in probe_any; under the gate
  bool idle_ = false;                     // probe_block passed without traffic: poll with sleeps; under the gate
  std::unique_ptr<boost::asio::steady_timer> probe_timer_;  // ends a blocking probe after probe_block
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);    // the timer's handler checks we still exist
  std::mutex sleep_mutex_;                // the thread's sleeps between polls
  std::condition_variable sleep_cv_;      // send() and shutdown cut them short
  bool poke_ = false;                     // under sleep_mutex_
  long wakes_sent_ = 0;                   // under the gate
  long wakes_received_ = 0;               // thread only
};

}  // namespace gridmpi::p2p::vendor
