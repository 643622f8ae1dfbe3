// The IMPI transport's parts (impi/transport.hpp), shared by its files:
//   transport.cpp     the transport object: life, the host connections'
//                     set-up, send and receive (frames <-> packets through
//                     impi/translate.hpp), shut-down
//   connection.cpp    one host connection: connect or accept, TLS, the
//                     host index, writing packets, reading them through
//                     p2p/stream_reader.hpp
//   flow_control.cpp  IMPI's flow control per proc pair (section 8): the
//                     counted packets, PROTOACK, the held FIFO
// Internal to impi/: included only by those three files.
#pragma once
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "impi/startup.hpp"
#include "impi/tls.hpp"
#include "impi/translate.hpp"
#include "impi/wire.hpp"
#include "p2p/stream_reader.hpp"
#include "p2p/transport.hpp"

namespace gridmpi::impi {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace transport_detail {
constexpr std::size_t read_buffer_size = 256 * 1024;
constexpr std::size_t copy_limit = 64 * 1024;  // payloads up to this are copied, so the send completes at once
}  // namespace transport_detail

class ImpiTransport final : public p2p::Transport {
 public:
  ImpiTransport(const p2p::TransportContext& context, std::shared_ptr<const Startup> startup);
  ~ImpiTransport() override;
  ImpiTransport(const ImpiTransport&) = delete;
  ImpiTransport& operator=(const ImpiTransport&) = delete;

  const char* name() const noexcept override { return "impi"; }
  p2p::Capabilities capabilities() const override;
  bool reachable(int peer) const override;
  p2p::DataRepresentation representation(int peer) const override;
  std::string endpoint() override { return {}; }
  void set_peer_endpoint(int, std::string_view) override {}
  p2p::SendStatus send(int peer, const p2p::Frame& frame, std::span<const std::byte> payload,
                       std::uint64_t token) override;
  bool progress() override;
  bool ready() const override;
  void begin_shutdown() override;
  bool shutdown_complete() const override;

 private:
  class Connection;
  friend class Connection;

  // A packet waiting for the socket (or for flow control).
  struct OutPacket {
    std::array<std::byte, PacketHeader::size> head{};
    std::vector<std::byte> copy;
    std::span<const std::byte> payload;
    std::size_t written = 0;
    bool report = false;  // tell the sink when written (in_flight payload)
    std::uint64_t token = 0;
    int peer = -1;        // world rank, for on_send_complete
    bool fini = false;
    bool counted = false; // counts for flow control
    // The payload belongs to a request that stays open until this packet is
    // written (parts of a long message): referenced, never copied.
    bool reference = false;
    std::size_t total() const noexcept { return head.size() + payload.size(); }
  };
  // Per remote proc (world rank).
  struct PeerState {
    int host = -1;
    std::int64_t sent = 0;       // counted packets not yet acknowledged
    std::int64_t received = 0;   // counted packets not yet acknowledged by us
    std::deque<OutPacket> held;  // counted packets held by flow control (FIFO)
  };
  void adopt_listener();
  void accept_next();
  void connect_to(int host);
  void identified(const std::shared_ptr<Connection>& c, int host);
  void fail(const std::string& message);
  void fail(std::exception_ptr error);
  Proc proc(int rank) const { return map().procs[static_cast<std::size_t>(rank)]; }
  const JobMap& map() const { return startup_->map; }
  p2p::SendStatus submit(int peer, OutPacket&& packet, bool counted);
  void release_held(int peer);
  void send_control(int peer, PacketType type, std::uint64_t srqid, std::uint64_t drqid);
  // A packet arrived on the connection of host `host`: translate and deliver.
  // Returns the placement for its payload (DATA/DATASYNC) and fills
  // `frame_peer`; control packets are handled completely here.
  p2p::Placement on_packet(int host, const PacketHeader& h, int* frame_peer, bool* deliver_end);
  std::string describe_host(int host) const;
  p2p::TransportContext context_;
  std::shared_ptr<const Startup> startup_;
  Translator translator_;  // frames <-> packets, and IMPI's protocol state (impi/translate.hpp)
  tcp::acceptor acceptor_;
  int my_host_ = 0;
  std::int32_t datalen_ = 1048576;
  std::int64_t ackmark_ = 10, hiwater_ = 64;
  bool hiwater_set_ = false;      // IMPI_H_HIWATER given: every window is hiwater_
  double link_bandwidth_ = 1.25e9;
  std::int64_t socbuf_ = 0;
  std::chrono::milliseconds connect_timeout_{60000};
  std::shared_ptr<tls::Context> tls_;  // impi.tls on: every host connection is TLS
  std::chrono::milliseconds handshake_timeout_{30000};
  std::vector<std::shared_ptr<Connection>> hosts_;   // by global host index (null: not connected / own client)
  std::vector<std::shared_ptr<Connection>> unidentified_;
  std::vector<PeerState> peers_;                     // by world rank
  int expected_ = 0;                                 // host connections to make or accept
  int established_ = 0;
  std::uint64_t seqnum_ = 0;
  std::shared_ptr<ImpiTransport*> life_;
  std::exception_ptr failure_;
  bool shutting_down_ = false;
  std::chrono::steady_clock::time_point deadline_;
};

// ---- one host connection (connection.cpp) ----------------------------------------

class ImpiTransport::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(ImpiTransport& owner, tcp::socket socket, int host)
      : owner_(&owner),
        gate_(owner.context_.gate),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        host_(host),
        reader_(transport_detail::read_buffer_size, static_cast<std::size_t>(owner.datalen_)) {}

  int host() const noexcept { return host_; }
  bool open() const noexcept { return state_ == State::open; }
  // Counted packets in flight per proc pair on this connection: the round
  // trip measured when it opened times impi.link_bandwidth, in packets,
  // plus 2 x ackmark, at most the job's IMPI_H_HIWATER (connection.cpp).
  std::int64_t window() const noexcept { return window_; }
  bool fini_sent() const noexcept { return fini_written_; }
  bool fini_received() const noexcept { return fini_received_; }
  bool write_idle() const noexcept { return queue_.empty() && !(tls_ && tls_->output_pending()); }
  bool closed() const noexcept { return state_ == State::closed; }

  void detach();
  void close_socket();
  bool uses_tls() const noexcept { return tls_ != nullptr; }
  std::string remote() const;

  // Outgoing: connect, send our host index, then whatever is queued.
  // `relay_request`: a line for the impi-relay at `to` (CONNECT to the
  // real host), answered before the IMPI bytes start; empty: direct.
  void connect(const tcp::endpoint& to, std::chrono::milliseconds timeout, std::uint32_t my_host,
               std::string relay_request = {});

  // Incoming: the first 4 bytes name the connecting host (with TLS: after
  // the handshake, which the same time limit bounds).
  void accepted(std::chrono::milliseconds timeout);

  void enqueue(OutPacket&& p);

  // Writes at once when nothing is queued; returns true if all of it went.
  bool try_write_now(const std::array<std::byte, PacketHeader::size>& head, std::span<const std::byte> payload,
                     std::size_t* written);

  void send_fini();

 private:
  enum class State { idle, connecting, handshaking, open, closed };

  // TLS, connecting side (the higher host index): the TLS client.  The
  // host index and the packets follow inside TLS, as in plain IMPI.
  void client_handshake();

  void arm_handshake_timer();

  // TLS, accepting side: the first byte must start a TLS handshake (a
  // plain peer's host index starts with 0: it gets a TLS alert and is
  // refused), then the handshake as the TLS server.  A failed handshake is
  // refused (one warning here); the connecting side ends the job.
  void server_handshake();

  // Both roles: a tls::Session on the socket (false: the job failed, or
  // the connection was refused), then SSL_do_handshake until done, waiting
  // for the socket in between; handshake_finished takes the outcome.
  bool start_tls(tls::Session::Role role);
  void continue_handshake();
  void handshake_finished(const error_code& ec);

  void became_open();
  void after_connect();
  void relay_failed(const std::string& why);
  void size_window();

  void refuse(const std::string& why);

  void start_write();

  void on_written(const error_code& ec, std::size_t n);

  // n bytes of raw_ and the queue went: completed packets are reported -
  // from a later handler with defer_reports (the p2p contract: never
  // inside the send() that queued the packet).
  void account_written(std::size_t n, bool defer_reports = false);
  void report_sent(const std::vector<std::pair<int, std::uint64_t>>& done);

  // TLS: bytes encrypted and sent while the socket takes them
  // (write_pending_ held, so that packets queued meanwhile join this loop),
  // then a wait for the socket.  from_send: called by enqueue(), inside
  // the transport's send(): the bytes leave at once, the reports later.  tls_bytes(): what to write next - the
  // first piece whole if it fills a record, else the pieces gathered into
  // staging_ up to one record.
  void tls_flush(bool from_send = false);
  std::span<const std::byte> tls_bytes();
  // TLS: records read and parsed until OpenSSL wants the socket.
  void tls_read();
  // The bytes read into reader_'s target: false when reading must stop.
  bool take_read(std::size_t n);

  void write_failed(const error_code& ec);

  // As the tcp transport does (p2p/tcp/tcp_transport.cpp,
  // acknowledge_quickly): while a long message streams in, its segments are
  // acknowledged at once instead of in the kernel's delayed "pingpong"
  // manner, which holds back the sender's window (1 MiB ping-pong between
  // two clusters on loopback: about 330 against 200 us).  Set again before
  // every read, as the kernel drops the mode; a message of 128 KiB or more
  // (two packets or more at the default IMPI_C_DATALEN) turns it on until
  // a packet of a smaller message arrives.
  static constexpr std::uint64_t bulk_message = 128 * 1024;
  void acknowledge_quickly();

  void start_reading();

  void on_read(const error_code& ec, std::size_t n);

  void read_failed(const error_code& ec);

  void protocol_error(const std::string& why);

  void parse();

  static constexpr std::size_t tls_record = 16384;  // TLS's largest record payload

  ImpiTransport* owner_;
  // Thread progress mode: every handler runs inside the request layer's
  // lock (null in poll mode, where the polling thread holds it already).
  p2p::EventGate* gate_;
  tcp::socket socket_;
  std::unique_ptr<tls::Session> tls_;  // impi.tls: over socket_
  bool tls_client_ = false;            // the connecting side: the TLS client
  std::vector<std::byte> staging_;     // TLS: small pieces gathered into one record
  // Plain bytes one handler moves through TLS before it lets others run.
  static constexpr std::size_t tls_turn = 1 << 20;
  std::uint64_t packets_received_ = 0;
  asio::steady_timer timer_;
  int host_;
  State state_ = State::idle;
  std::string relay_request_, relay_reply_;
  std::int64_t window_ = 1;
  std::vector<std::byte> raw_;  // the host index, before any packet
  std::deque<OutPacket> queue_;
  bool write_pending_ = false;
  bool read_pending_ = false;
  bool fini_queued_ = false, fini_written_ = false, fini_received_ = false;
  bool bulk_ = false;  // the last data packet was of a long message (acknowledge_quickly)
  // The read buffer and the payload in progress; payloads never exceed the
  // job's IMPI_C_DATALEN, so the reader's own payload buffer is kept.
  p2p::StreamReader reader_;
  std::array<std::byte, 1> peek_{};  // the first byte of an accepted TLS connection
};

}  // namespace gridmpi::impi
