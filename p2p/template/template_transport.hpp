// The transport to copy when writing a new one.  It is compiled and tested
// (tests/unit/test_transport_conformance.cpp) but never selected: it is not in
// transport_factories().
//
// Its "wire" is memory: instances created in one process with the same job
// cookie find each other through a process-wide directory keyed by the
// endpoint string ("template:<cookie>.<rank>").  That makes it useful for
// testing the request layer with several engines in one process, and it
// exercises the awkward parts of the contract on purpose: a bounded inbox
// (send returns would_block when the peer's inbox is full) and referenced
// payloads above a copy limit (send returns in_flight, completion comes after
// delivery).
//
// To write a real transport: copy this folder, replace the directory by
// connections, keep the three send outcomes, register one line in
// p2p/registry.cpp, write the folder's README.
#pragma once
#include <deque>
#include <map>
#include <vector>

#include "p2p/transport.hpp"

namespace gridmpi::p2p {

struct TemplateOptions {
  std::size_t inbox_frames = 8;          // frames a peer's inbox holds before would_block
  std::size_t copy_limit = 1024;         // payloads above this are referenced (in_flight)
  std::size_t eager_limit = 4096;        // declared in capabilities()
  std::size_t max_fragment = 16 * 1024;  // declared in capabilities()
  std::size_t max_frame_payload = 1 << 20;  // declared in capabilities()
};

class TemplateTransport final : public Transport {
 public:
  TemplateTransport(const TransportContext& context, TemplateOptions options = {});
  ~TemplateTransport() override;

  const char* name() const noexcept override { return "template"; }
  Capabilities capabilities() const override;
  bool reachable(int peer) const override;
  std::string endpoint() override;
  void set_peer_endpoint(int peer, std::string_view endpoint) override;
  SendStatus send(int peer, const Frame& frame, std::span<const std::byte> payload,
                  std::uint64_t token) override;
  bool progress() override;
  void begin_shutdown() override;
  bool shutdown_complete() const override;

 private:
  struct InboxFrame {
    int source = 0;
    // The frame as a byte transport carries it (frame::encode): what a
    // transport over a real wire writes in front of the payload.
    frame::HeaderBuffer header{};
    std::size_t header_size = 0;
    std::vector<std::byte> copied_payload;
    std::span<const std::byte> referenced_payload;
    bool referenced = false;
    std::uint64_t token = 0;
    TemplateTransport* sender = nullptr;  // to report completion of referenced payloads
  };
  TemplateTransport* find_peer(int peer) const;
  void sender_gone(TemplateTransport* sender);

  TransportContext context_;
  TemplateOptions options_;
  std::map<int, std::string> peer_endpoints_;
  std::deque<InboxFrame> inbox_;
  // Completions of referenced payloads, reported by our own progress() so
  // that upcalls always run in the owner's progress round.
  std::deque<std::pair<int, std::uint64_t>> completions_;
  bool shutting_down_ = false;
};

}  // namespace gridmpi::p2p
