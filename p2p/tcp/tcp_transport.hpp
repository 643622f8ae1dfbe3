// The tcp transport (Boost.Asio).  One connection per pair of processes,
// opened lazily by the first to send; the other answers on it, so that a
// reply carries the acknowledgement of the request (two one-way connections
// cost a pure ACK per message: 7.6 against 4.8 us one way on loopback).  Two
// processes that connect to each other at the same moment end up on the
// lower rank's connection (the `moved`/`switched` frames of tcp_wire.hpp).
// Each connection starts with a hello (magic, version, job cookie, opener's
// rank) and ends with a goodbye each way.  See p2p/README.md.
#pragma once
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "p2p/tcp/tcp_wire.hpp"
#include "p2p/transport.hpp"

namespace gridmpi::p2p::tcp {

// What capabilities() declares (the collectives' cost model 1 uses them).
inline constexpr double declared_latency_us = 25;
inline constexpr double declared_bandwidth = 1e9;  // bytes per second

struct TcpOptions {
  std::int64_t socket_buffer = 65536;  // 0: kernel autotuning
  std::string port_range;              // "start:end" or "" for any
  std::string network;                 // advertise the interface inside this prefix
  bool one_connection = true;          // answer on the peer's connection (false: one per direction)
  std::size_t rts_prefix = 128 * 1024;  // Capabilities::rts_prefix
  std::chrono::milliseconds connect_timeout{30000};
  std::chrono::milliseconds hello_timeout{10000};
  std::chrono::milliseconds shutdown_timeout{10000};
  // Reads the tcp.* parameters.
  static TcpOptions from_configuration();
};

class TcpTransport final : public Transport {
 public:
  TcpTransport(const TransportContext& context, TcpOptions options);
  ~TcpTransport() override;
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  const char* name() const noexcept override { return "tcp"; }
  Capabilities capabilities() const override;
  bool reachable(int peer) const override;
  std::string endpoint() override;
  void set_peer_endpoint(int peer, std::string_view endpoint) override;
  SendStatus send(int peer, const Frame& frame, std::span<const std::byte> payload,
                  std::uint64_t token) override;
  bool progress() override;
  void begin_shutdown() override;
  bool shutdown_complete() const override;

  // Whether frames to `peer` go on the connection the peer opened
  // (diagnostics and tests).
  bool sends_on_peer_connection(int peer) const;

  std::uint16_t port() const noexcept { return port_; }
  const std::string& address() const noexcept { return address_; }

  // Payloads up to this size are copied when they cannot be written at once,
  // so that eager sends complete immediately; larger ones are referenced.
  static constexpr std::size_t copy_limit = 64 * 1024;
  static constexpr std::size_t eager_limit = 64 * 1024;

 private:
  [[gnu::noinline]] bool restart_reads();  // progress() when it has work: rethrows a failure, re-arms reads
  class Connection;
  friend class Connection;
  struct PeerState {
    std::string host;
    std::uint16_t port = 0;
    bool known = false;
    std::shared_ptr<Connection> outgoing;  // the connection we opened
    std::shared_ptr<Connection> incoming;  // the connection the peer opened
    std::shared_ptr<Connection> sending;   // the one our frames go on: fixed at the first, moved at most once
    bool said_goodbye = false;
    bool moved_seen = false;               // the peer's `moved` was read
    Connection* held = nullptr;            // reading stopped at the peer's `switched`, until its `moved`
  };

  void open_listener();
  void accept_next();
  Connection& sending(int peer);
  Connection& open_outgoing(int peer);
  void peer_moved(int peer);
  bool accept_hello(const std::shared_ptr<Connection>& c, const Hello& hello);
  void refuse(const std::shared_ptr<Connection>& c, const std::string& why);
  void forget_unidentified(const Connection* c);
  void fail(const std::string& message);
  void fail(std::exception_ptr error);
  std::string describe_peer(int peer) const;

  TransportContext context_;
  TcpOptions options_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;  // pause after a failed accept (EMFILE...)
  std::string address_;
  std::uint16_t port_ = 0;
  std::vector<PeerState> peers_;
  std::vector<std::shared_ptr<Connection>> unidentified_;
  // Poll mode: connections whose next read starts at the next progress()
  // (Connection::parse_and_read_on).
  std::vector<std::shared_ptr<Connection>> rearm_;
  // Handlers check this before touching the transport (it is cleared by the destructor).
  std::shared_ptr<TcpTransport*> life_;
  std::exception_ptr failure_;
  bool shutting_down_ = false;
  std::chrono::steady_clock::time_point shutdown_deadline_;
};

}  // namespace gridmpi::p2p::tcp
