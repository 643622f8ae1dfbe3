// Sends from a process to itself.  Frames are queued and delivered by
// progress(), never from inside send(), so that the request layer is never
// re-entered while it is sending.  In the thread progress mode nobody may
// call progress() soon (the sending thread may go to sleep waiting for its
// own message), so the first queued frame also posts a delivery to the
// io_context, which the engine's progress thread runs inside the gate.  Small payloads are copied (a blocking
// MPI_Send to self of a small message must return before the receive is
// posted); large payloads are referenced and copied once, straight into the
// destination the receiver names, then reported with on_send_complete.
#pragma once
#include <deque>
#include <memory>
#include <vector>

#include "p2p/transport.hpp"

namespace gridmpi::p2p {

class SelfTransport final : public Transport {
 public:
  explicit SelfTransport(const TransportContext& context);
  ~SelfTransport() override;
  SelfTransport(const SelfTransport&) = delete;
  SelfTransport& operator=(const SelfTransport&) = delete;

  const char* name() const noexcept override { return "self"; }
  Capabilities capabilities() const override;
  bool reachable(int peer) const override { return peer == rank_; }
  std::string endpoint() override { return {}; }
  void set_peer_endpoint(int, std::string_view) override {}
  SendStatus send(int peer, const Frame& frame, std::span<const std::byte> payload,
                  std::uint64_t token) override;
  bool progress() override;
  void begin_shutdown() override {}
  bool shutdown_complete() const override { return queue_.empty(); }

  // Payloads up to this size are copied at send time.
  static constexpr std::size_t copy_limit = 64 * 1024;

 private:
  struct Queued {
    Frame frame;  // handed over as it is: no bytes in between
    std::vector<std::byte> copied_payload;
    std::span<const std::byte> referenced_payload;  // when not copied
    bool referenced = false;
    std::uint64_t token = 0;
  };
  void post_delivery();

  int rank_;
  FrameSink* sink_;
  std::deque<Queued> queue_;
  // Thread mode only (null otherwise): where deliveries are posted and the
  // gate they run in.
  boost::asio::io_context* io_ = nullptr;
  EventGate* gate_ = nullptr;
  bool delivery_posted_ = false;
  // Posted deliveries check it: the transport may be gone when one runs.
  std::shared_ptr<SelfTransport*> life_;
};

}  // namespace gridmpi::p2p
