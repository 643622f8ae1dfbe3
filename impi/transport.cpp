// The IMPI transport (impi/transport.hpp).
#include "impi/transport.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <fmt/format.h>

#include "conf/log.hpp"
#include "conf/checked.hpp"
#include "conf/registry.hpp"
#include "base/error.hpp"
#include "impi/params.hpp"
#include "impi/tls.hpp"
#include "impi/translate.hpp"
#include "p2p/stream_reader.hpp"
#include "p2p/tcp/tcp_address.hpp"

namespace gridmpi::impi {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using gridmpi::log;

namespace {

const conf::Param<double> connect_timeout_param{
    "impi.connect_timeout", 60.0, "seconds",
    "how long MPI_Init waits for the IMPI host connections to the other clusters", conf::Level::tuner};

constexpr std::size_t read_buffer_size = 256 * 1024;
constexpr std::size_t copy_limit = 64 * 1024;  // payloads up to this are copied, so the send completes at once

bool is_would_block(const error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

std::string proc_text(const JobMap& map, int rank) {
  const HostEntry& h = map.hosts[static_cast<std::size_t>(map.proc_host[static_cast<std::size_t>(rank)])];
  return fmt::format("rank {} (client {}, {}:{})", rank, h.client, to_string(h.address), h.port);
}

}  // namespace

// ---- the transport ------------------------------------------------------------

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
  p2p::SendStatus send(int peer, std::span<const std::byte> header, std::span<const std::byte> payload,
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
  std::int32_t datalen_ = 262144;
  std::int64_t ackmark_ = 10, hiwater_ = 20;
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

// ---- one host connection --------------------------------------------------------

class ImpiTransport::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(ImpiTransport& owner, tcp::socket socket, int host)
      : owner_(&owner),
        gate_(owner.context_.gate),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        host_(host),
        reader_(read_buffer_size, static_cast<std::size_t>(owner.datalen_)) {}

  int host() const noexcept { return host_; }
  bool open() const noexcept { return state_ == State::open; }
  bool fini_sent() const noexcept { return fini_written_; }
  bool fini_received() const noexcept { return fini_received_; }
  bool write_idle() const noexcept { return queue_.empty(); }
  bool closed() const noexcept { return state_ == State::closed; }

  void detach() {
    owner_ = nullptr;
    close_socket();
  }
  void close_socket() {
    error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
    state_ = State::closed;
  }
  bool uses_tls() const noexcept { return tls_.has_value(); }
  std::string remote() const {
    error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    return ec ? std::string("?") : fmt::format("{}:{}", ep.address().to_string(), ep.port());
  }

  // Outgoing: connect, send our host index, then whatever is queued.
  void connect(const tcp::endpoint& to, std::chrono::milliseconds timeout, std::uint32_t my_host) {
    state_ = State::connecting;
    std::array<std::byte, 4> index;
    put_u32(index.data(), my_host);
    raw_.assign(index.begin(), index.end());
    auto self = shared_from_this();
    timer_.expires_after(timeout);
    timer_.async_wait([self, timeout](const error_code& ec) {
      p2p::GateScope scope(self->gate_);
      if (ec || !self->owner_ || self->state_ != State::connecting) return;
      self->owner_->fail(fmt::format("impi: rank {} cannot connect to {}: no answer within {} s (is that host "
                                     "reachable from here? see IMPI_NETWORK and IMPI_PORT_RANGE)",
                                     self->owner_->startup_->my_rank, self->owner_->describe_host(self->host_),
                                     timeout.count() / 1000));
      self->close_socket();
    });
    socket_.async_connect(to, [self](const error_code& ec) {
      p2p::GateScope scope(self->gate_);
      if (!self->owner_ || self->state_ != State::connecting) return;
      self->timer_.cancel();
      if (ec) {
        self->owner_->fail(fmt::format("impi: rank {} cannot connect to {}: {} (is its cluster's job running? see "
                                       "IMPI_NETWORK and IMPI_PORT_RANGE)",
                                       self->owner_->startup_->my_rank, self->owner_->describe_host(self->host_),
                                       ec.message()));
        self->close_socket();
        return;
      }
      if (self->owner_->tls_) return self->client_handshake();
      self->became_open();
      self->owner_->identified(self, self->host_);
    });
  }

  // Incoming: the first 4 bytes name the connecting host (with TLS: after
  // the handshake, which the same time limit bounds).
  void accepted(std::chrono::milliseconds timeout) {
    auto self = shared_from_this();
    timer_.expires_after(timeout);
    timer_.async_wait([self](const error_code& ec) {
      p2p::GateScope scope(self->gate_);
      if (ec || !self->owner_ || self->host_ >= 0 || self->state_ == State::closed) return;
      self->refuse(self->state_ == State::handshaking ? "no TLS handshake within the time limit"
                                                      : "no host index within the time limit");
    });
    if (owner_->tls_) return server_handshake();
    became_open();
  }

  void enqueue(OutPacket&& p) {
    queue_.push_back(std::move(p));
    if (state_ == State::open && !write_pending_) start_write();
  }

  // Writes at once when nothing is queued; returns true if all of it went.
  bool try_write_now(const std::array<std::byte, PacketHeader::size>& head, std::span<const std::byte> payload,
                     std::size_t* written) {
    *written = 0;
    // Not under TLS: an SSL write that would block must be retried with the same bytes.
    if (state_ != State::open || !queue_.empty() || !raw_.empty() || tls_) return false;
    std::array<asio::const_buffer, 2> buffers{asio::buffer(head.data(), head.size()),
                                              asio::buffer(payload.data(), payload.size())};
    error_code ec;
    std::size_t n = socket_.write_some(buffers, ec);
    if (ec && !is_would_block(ec)) {
      write_failed(ec);
      return true;  // the failure surfaces through progress()
    }
    *written = ec ? 0 : n;
    return *written == head.size() + payload.size();
  }

  void send_fini() {
    if (fini_queued_ || state_ == State::closed) {
      fini_written_ = true;
      return;
    }
    fini_queued_ = true;
    OutPacket p;
    PacketHeader h;
    h.type = PacketType::fini;
    h.src.pid = -1;
    h.dest.pid = -1;
    h.count = -1;
    h.encode(p.head.data());
    p.fini = true;
    enqueue(std::move(p));
  }

 private:
  enum class State { idle, connecting, handshaking, open, closed };

  // TLS, connecting side (the higher host index): the TLS client.  The
  // host index and the packets follow inside TLS, as in plain IMPI.
  void client_handshake() {
    state_ = State::handshaking;
    tls_.emplace(socket_, *owner_->tls_);
    auto self = shared_from_this();
    arm_handshake_timer();
    tls_->async_handshake(asio::ssl::stream_base::client, [self](const error_code& ec) {
      p2p::GateScope scope(self->gate_);
      if (!self->owner_ || self->state_ != State::handshaking) return;
      self->timer_.cancel();
      if (ec) {
        self->owner_->fail(fmt::format("impi: rank {}: TLS with {} failed: {}", self->owner_->startup_->my_rank,
                                       self->owner_->describe_host(self->host_),
                                       tls::describe_error(ec, self->tls_->native_handle())));
        self->close_socket();
        return;
      }
      self->became_open();
      self->owner_->identified(self, self->host_);
    });
  }

  void arm_handshake_timer() {
    auto self = shared_from_this();
    timer_.expires_after(owner_->handshake_timeout_);
    timer_.async_wait([self](const error_code& ec) {
      p2p::GateScope scope(self->gate_);
      if (ec || !self->owner_ || self->state_ != State::handshaking) return;
      self->owner_->fail(fmt::format("impi: rank {}: no TLS handshake with {} within {} s: does its cluster run with "
                                     "impi.tls on? (impi.tls_handshake_timeout)",
                                     self->owner_->startup_->my_rank, self->owner_->describe_host(self->host_),
                                     self->owner_->handshake_timeout_.count() / 1000));
      self->close_socket();
    });
  }

  // TLS, accepting side: the first byte must start a TLS handshake (a
  // plain peer's host index starts with 0: it gets a TLS alert and is
  // refused), then the handshake as the TLS server.  A failed handshake is
  // refused (one warning here); the connecting side ends the job.
  void server_handshake() {
    state_ = State::handshaking;
    tls_.emplace(socket_, *owner_->tls_);
    auto self = shared_from_this();
    socket_.async_receive(
        asio::buffer(peek_.data(), 1), asio::socket_base::message_peek, [self](const error_code& ec, std::size_t n) {
          p2p::GateScope scope(self->gate_);
          if (!self->owner_ || self->state_ != State::handshaking) return;
          if (ec || n == 0) return self->refuse("closed before the TLS handshake");
          if (self->peek_[0] != tls::handshake_record) {
            error_code ignored;
            auto alert = tls::plaintext_rejection_alert();
            asio::write(self->socket_, asio::buffer(alert), ignored);
            return self->refuse(fmt::format("it does not speak TLS (first byte 0x{:02x}): impi.tls is off in its "
                                            "cluster and on here; set impi.tls in every cluster and at impi-server",
                                            static_cast<unsigned>(self->peek_[0])));
          }
          self->tls_->async_handshake(asio::ssl::stream_base::server, [self](const error_code& e) {
            p2p::GateScope scope(self->gate_);
            if (!self->owner_ || self->state_ != State::handshaking) return;
            if (e) return self->refuse("TLS handshake failed: " + tls::describe_error(e, self->tls_->native_handle()));
            self->became_open();
          });
        });
  }

  void became_open() {
    state_ = State::open;
    error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    if (owner_->socbuf_ > 0) {
      socket_.set_option(asio::socket_base::receive_buffer_size(static_cast<int>(owner_->socbuf_)), ignored);
      socket_.set_option(asio::socket_base::send_buffer_size(static_cast<int>(owner_->socbuf_)), ignored);
    }
    socket_.non_blocking(true, ignored);
    if (!raw_.empty() || !queue_.empty()) start_write();
    start_reading();
  }

  void refuse(const std::string& why) {
    log().warn("impi: rank {}: refused an IMPI connection from {}: {}", owner_->startup_->my_rank, remote(), why);
    ImpiTransport* owner = owner_;
    close_socket();
    auto& list = owner->unidentified_;
    list.erase(std::remove_if(list.begin(), list.end(), [this](const auto& c) { return c.get() == this; }), list.end());
  }

  void start_write() {
    std::vector<asio::const_buffer> buffers;
    if (!raw_.empty()) buffers.push_back(asio::buffer(raw_));
    for (auto it = queue_.begin(); it != queue_.end() && buffers.size() + 2 <= 64; ++it) {
      std::size_t skip = it->written;
      if (skip < it->head.size()) {
        buffers.push_back(asio::buffer(it->head.data() + skip, it->head.size() - skip));
        skip = 0;
      } else {
        skip -= it->head.size();
      }
      if (skip < it->payload.size())
        buffers.push_back(asio::buffer(it->payload.data() + skip, it->payload.size() - skip));
    }
    if (buffers.empty()) return;
    write_pending_ = true;
    auto self = shared_from_this();
    if (tls_) {
      // One TLS record per write: small pieces (a header, short payloads)
      // are gathered into one record instead of a record each.
      if (buffers[0].size() >= tls_record) {
        tls_->async_write_some(buffers[0], [self](const error_code& ec, std::size_t n) {
          p2p::GateScope scope(self->gate_);
          self->on_written(ec, n);
        });
        return;
      }
      staging_.clear();
      for (const auto& b : buffers) {
        std::size_t take = std::min(b.size(), tls_record - staging_.size());
        const auto* p = static_cast<const std::byte*>(b.data());
        staging_.insert(staging_.end(), p, p + take);
        if (staging_.size() == tls_record) break;
      }
      tls_->async_write_some(asio::buffer(staging_), [self](const error_code& ec, std::size_t n) {
        p2p::GateScope scope(self->gate_);
        self->on_written(ec, n);
      });
      return;
    }
    socket_.async_write_some(std::move(buffers), [self](const error_code& ec, std::size_t n) {
      p2p::GateScope scope(self->gate_);
      self->on_written(ec, n);
    });
  }

  void on_written(const error_code& ec, std::size_t n) {
    write_pending_ = false;
    if (!owner_ || ec == asio::error::operation_aborted) return;
    if (ec) return write_failed(ec);
    if (!raw_.empty()) {
      std::size_t take = std::min(n, raw_.size());
      raw_.erase(raw_.begin(), raw_.begin() + static_cast<std::ptrdiff_t>(take));
      n -= take;
    }
    std::vector<std::pair<int, std::uint64_t>> done;
    while (n > 0 && !queue_.empty()) {
      OutPacket& p = queue_.front();
      std::size_t take = std::min(n, p.total() - p.written);
      p.written += take;
      n -= take;
      if (p.written < p.total()) break;
      if (p.report) done.emplace_back(p.peer, p.token);
      if (p.fini) fini_written_ = true;
      queue_.pop_front();
    }
    ImpiTransport* owner = owner_;
    try {
      for (auto [peer, token] : done) owner->context_.sink->on_send_complete(peer, token);
    } catch (...) {
      owner->fail(std::current_exception());
    }
    if ((!queue_.empty() || !raw_.empty()) && !write_pending_ && state_ == State::open) start_write();
  }

  void write_failed(const error_code& ec) {
    ImpiTransport* owner = owner_;
    if (fini_received_ || owner->shutting_down_) {
      queue_.clear();
      fini_written_ = true;
      close_socket();
      return;
    }
    owner->fail(fmt::format("impi: rank {} lost the IMPI connection to {} while writing: {} (that cluster's job "
                            "ended; see its mpirun's output)",
                            owner->startup_->my_rank, owner->describe_host(host_), ec.message()));
    close_socket();
  }

  // As the tcp transport does (p2p/tcp/tcp_transport.cpp,
  // acknowledge_quickly): while a long message streams in, its segments are
  // acknowledged at once instead of in the kernel's delayed "pingpong"
  // manner, which holds back the sender's window (1 MiB ping-pong between
  // two clusters on loopback: about 330 against 200 us).  Set again before
  // every read, as the kernel drops the mode; a message of 128 KiB or more
  // (two packets or more at the default IMPI_C_DATALEN) turns it on until
  // a packet of a smaller message arrives.
  static constexpr std::uint64_t bulk_message = 128 * 1024;
  void acknowledge_quickly() {
    int one = 1;
    (void)::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  }

  void start_reading() {
    if (read_pending_ || state_ != State::open) return;
    if (bulk_) acknowledge_quickly();
    std::span<std::byte> target = reader_.read_target();
    read_pending_ = true;
    auto self = shared_from_this();
    if (tls_)
      tls_->async_read_some(asio::buffer(target.data(), target.size()),
                            [self](const error_code& ec, std::size_t n) {
                              p2p::GateScope scope(self->gate_);
                              self->on_read(ec, n);
                            });
    else
      socket_.async_read_some(asio::buffer(target.data(), target.size()),
                              [self](const error_code& ec, std::size_t n) {
                                p2p::GateScope scope(self->gate_);
                                self->on_read(ec, n);
                              });
  }

  void on_read(const error_code& ec, std::size_t n) {
    read_pending_ = false;
    if (!owner_ || ec == asio::error::operation_aborted) return;
    if (ec) return read_failed(ec);
    try {
      if (reader_.received(n)) reader_.end_payload(*owner_->context_.sink);
      parse();
    } catch (const WireError& e) {
      if (owner_) protocol_error(e.what());
      return;
    } catch (...) {
      if (owner_) owner_->fail(std::current_exception());
      close_socket();
      return;
    }
    if (owner_ && state_ == State::open) start_reading();
  }

  void read_failed(const error_code& ec) {
    ImpiTransport* owner = owner_;
    if (host_ < 0) {
      log().debug("impi: rank {}: connection from {} closed before naming its host: {}", owner->startup_->my_rank,
                  remote(), ec.message());
      refuse("closed before naming its host");
      return;
    }
    if (fini_received_) {
      if (fini_written_ || queue_.empty()) close_socket();
      return;
    }
    std::string text;
    if (!tls_ && packets_received_ == 0 &&
        tls::looks_like_tls(reader_.buffered())) {
      text = fmt::format("impi: rank {}: {} speaks TLS (impi.tls is on in its cluster, off here): set impi.tls in "
                         "every cluster and at impi-server (or off everywhere)",
                         owner->startup_->my_rank, owner->describe_host(host_));
    } else if (tls_ && ec.category() == asio::error::get_ssl_category()) {
      // TLS 1.3: a rejected client certificate shows up after the handshake.
      text = fmt::format("impi: rank {}: TLS with {} failed: {}", owner->startup_->my_rank,
                         owner->describe_host(host_), tls::describe_error(ec, tls_->native_handle()));
    } else {
      text = fmt::format("impi: rank {} lost the IMPI connection to {} without PK_FINI: {} (that "
                         "cluster's job ended or the process died; see its mpirun's output)",
                         owner->startup_->my_rank, owner->describe_host(host_),
                         ec == asio::error::eof                       ? "end of file"
                         : ec == asio::ssl::error::stream_truncated ? "end of file (no TLS close_notify)"
                                                                      : ec.message());
    }
    close_socket();
    if (owner->shutting_down_) {
      log().warn("{}", text);
      return;
    }
    owner->fail(text);
  }

  void protocol_error(const std::string& why) {
    if (host_ < 0) return refuse(why);
    owner_->fail(fmt::format("impi: rank {}: malformed IMPI data from {}: {}", owner_->startup_->my_rank,
                             owner_->describe_host(host_), why));
    close_socket();
  }

  void parse() {
    while (!reader_.in_payload() && state_ == State::open && owner_) {
      std::span<const std::byte> in = reader_.buffered();
      if (host_ < 0) {
        // An accepted connection: first its host index.
        if (in.size() < 4) return;
        if (!tls_ && tls::looks_like_tls(in.first(2)))
          return refuse("it speaks TLS (impi.tls is on in its cluster, off here): set impi.tls in every cluster and "
                        "at impi-server (or off everywhere)");
        std::uint32_t index = get_u32(in.data());
        reader_.consume(4);
        timer_.cancel();
        const JobMap& map = owner_->map();
        if (index >= map.hosts.size())
          return refuse(fmt::format("it names host {}, this job has hosts 0..{}", index, map.hosts.size() - 1));
        int h = static_cast<int>(index);
        if (map.hosts[index].client == map.my_client)
          return refuse(fmt::format("it names host {} of this process's own cluster", index));
        if (h < owner_->my_host_)
          return refuse(fmt::format("it names host {}, which this host connects to itself", index));
        if (owner_->hosts_[index])
          return refuse(fmt::format("host {} is connected already", index));
        host_ = h;
        owner_->identified(shared_from_this(), h);
        continue;
      }
      if (in.size() < PacketHeader::size) return;
      PacketHeader h = PacketHeader::decode(in.first(PacketHeader::size));
      reader_.consume(PacketHeader::size);
      ++packets_received_;
      if (h.type == PacketType::fini) {
        fini_received_ = true;
        continue;
      }
      if (fini_received_) throw WireError(fmt::format("{} packet after PK_FINI", packet_type_name(h.type)));
      if (h.type == PacketType::data || h.type == PacketType::datasync) bulk_ = h.msglen >= bulk_message;
      int peer = -1;
      bool deliver = false;
      p2p::Placement placement = owner_->on_packet(host_, h, &peer, &deliver);
      if (!deliver) continue;
      reader_.begin_payload(*owner_->context_.sink, peer, placement, h.len, "impi");
    }
  }

  static constexpr std::size_t tls_record = 16384;  // TLS's largest record payload

  ImpiTransport* owner_;
  // Thread progress mode: every handler runs inside the request layer's
  // lock (null in poll mode, where the polling thread holds it already).
  p2p::EventGate* gate_;
  tcp::socket socket_;
  std::optional<asio::ssl::stream<tcp::socket&>> tls_;  // impi.tls: over socket_
  std::vector<std::byte> staging_;                      // TLS: the bytes of the write in progress
  std::uint64_t packets_received_ = 0;
  asio::steady_timer timer_;
  int host_;
  State state_ = State::idle;
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

// ---- the transport ------------------------------------------------------------------

ImpiTransport::ImpiTransport(const p2p::TransportContext& context, std::shared_ptr<const Startup> startup)
    : context_(context),
      startup_(std::move(startup)),
      translator_(startup_->map, startup_->my_rank),
      acceptor_(*context.io),
      life_(std::make_shared<ImpiTransport*>(this)) {
  const JobMap& m = map();
  my_host_ = m.proc_host[static_cast<std::size_t>(startup_->my_rank)];
  datalen_ = m.datalen;
  ackmark_ = m.ackmark;
  hiwater_ = m.hiwater;
  socbuf_ = conf::checked([] { return params::socbuf(); });
  double timeout = conf::checked([] { return connect_timeout_param.get(); });
  if (timeout > 0) connect_timeout_ = std::chrono::milliseconds(static_cast<long long>(timeout * 1000));
  tls_ = conf::checked([] { return tls::context_from_parameters(); });
  if (tls_) handshake_timeout_ = conf::checked([] { return tls::handshake_timeout(); });
  hosts_.resize(m.hosts.size());
  peers_.resize(static_cast<std::size_t>(m.world_size()));
  for (int r = 0; r < m.world_size(); ++r) peers_[static_cast<std::size_t>(r)].host = m.proc_host[static_cast<std::size_t>(r)];
  for (int c = 0; c < m.nclients; ++c)
    if (c != m.my_client)
      log().debug("impi: rank {}: user data to client {} travels as {}", startup_->my_rank, c,
                  representation_name(m.representation_with(c)));
  adopt_listener();
  for (int h = 0; h < static_cast<int>(m.hosts.size()); ++h) {
    if (m.hosts[static_cast<std::size_t>(h)].client == m.my_client) continue;
    ++expected_;
    if (h < my_host_) connect_to(h);
  }
  accept_next();
  deadline_ = std::chrono::steady_clock::now() + connect_timeout_;
}

ImpiTransport::~ImpiTransport() {
  *life_ = nullptr;
  for (auto& c : hosts_)
    if (c) c->detach();
  for (auto& c : unidentified_) c->detach();
  error_code ignored;
  acceptor_.close(ignored);
}

void ImpiTransport::adopt_listener() {
  int fd = ::dup(startup_->listen_fd);
  if (fd < 0) throw MpiError(MPI_ERR_OTHER, fmt::format("impi: cannot use the listening socket: {}", std::strerror(errno)));
  error_code ec;
  acceptor_.assign(tcp::v4(), fd, ec);
  if (ec) {
    ::close(fd);
    throw MpiError(MPI_ERR_OTHER, fmt::format("impi: cannot use the listening socket: {}", ec.message()));
  }
}

void ImpiTransport::accept_next() {
  auto life = life_;
  acceptor_.async_accept([this, life, gate = context_.gate](const error_code& ec, tcp::socket socket) {
    p2p::GateScope scope(gate);
    if (!*life) return;
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      log().warn("impi: rank {}: accept failed: {}", startup_->my_rank, ec.message());
      accept_next();
      return;
    }
    auto c = std::make_shared<Connection>(*this, std::move(socket), -1);
    unidentified_.push_back(c);
    c->accepted(std::chrono::milliseconds(10000));
    accept_next();
  });
}

void ImpiTransport::connect_to(int host) {
  const HostEntry& h = map().hosts[static_cast<std::size_t>(host)];
  auto v4 = ipv4_from_host_id(h.address);
  if (!v4)
    throw MpiError(MPI_ERR_OTHER, fmt::format("impi: {} has an IPv6 address; this build speaks IPv4 only",
                                              describe_host(host)));
  tcp::socket socket(*context_.io);
  error_code ec;
  socket.open(tcp::v4(), ec);
  if (ec) throw MpiError(MPI_ERR_OTHER, fmt::format("impi: cannot create a socket: {}", ec.message()));
  auto c = std::make_shared<Connection>(*this, std::move(socket), host);
  hosts_[static_cast<std::size_t>(host)] = c;
  c->connect(tcp::endpoint(asio::ip::address_v4(*v4), h.port), connect_timeout_, static_cast<std::uint32_t>(my_host_));
}

void ImpiTransport::identified(const std::shared_ptr<Connection>& c, int host) {
  auto it = std::find(unidentified_.begin(), unidentified_.end(), c);
  if (it != unidentified_.end()) unidentified_.erase(it);
  hosts_[static_cast<std::size_t>(host)] = c;
  ++established_;
  log().debug("impi: rank {}: connected to {}", startup_->my_rank, describe_host(host));
  // Packets queued for its procs before the connection was up.
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r)
    if (peers_[static_cast<std::size_t>(r)].host == host) release_held(r);
}

std::string ImpiTransport::describe_host(int host) const {
  const JobMap& m = map();
  const HostEntry& h = m.hosts[static_cast<std::size_t>(host)];
  if (h.nprocs == 1) return proc_text(m, h.first_rank);
  return fmt::format("host {} (client {}, {}:{}, ranks {}..{})", host, h.client, to_string(h.address), h.port,
                     h.first_rank, h.first_rank + h.nprocs - 1);
}

void ImpiTransport::fail(const std::string& message) {
  if (!failure_) failure_ = std::make_exception_ptr(MpiError(MPI_ERR_OTHER, message));
}
void ImpiTransport::fail(std::exception_ptr error) {
  if (!failure_) failure_ = error;
}

p2p::Capabilities ImpiTransport::capabilities() const {
  p2p::Capabilities caps;
  caps.eager_limit = static_cast<std::size_t>(datalen_) + 1;  // one packet up to maxdatalen bytes
  caps.max_fragment = static_cast<std::size_t>(datalen_);
  caps.max_frame_payload = static_cast<std::size_t>(datalen_);
  caps.latency_us = 50;
  caps.bandwidth_bytes_per_s = 1e9;
  caps.can_block = true;
  caps.external32 = true;
  caps.rts_carries_first_fragment = true;
  return caps;
}

bool ImpiTransport::reachable(int peer) const {
  if (peer < 0 || peer >= static_cast<int>(peers_.size())) return false;
  return map().proc_client[static_cast<std::size_t>(peer)] != map().my_client;
}

p2p::DataRepresentation ImpiTransport::representation(int peer) const { return translator_.representation(peer); }

bool ImpiTransport::ready() const {
  if (failure_) return true;  // progress() reports it
  return established_ >= expected_;
}

bool ImpiTransport::progress() {
  if (failure_) std::rethrow_exception(failure_);
  if (established_ < expected_ && std::chrono::steady_clock::now() > deadline_) {
    std::string missing;
    for (int h = 0; h < static_cast<int>(hosts_.size()); ++h) {
      if (map().hosts[static_cast<std::size_t>(h)].client == map().my_client) continue;
      auto& c = hosts_[static_cast<std::size_t>(h)];
      if (c && c->open()) continue;
      if (!missing.empty()) missing += ", ";
      missing += describe_host(h);
      if (missing.size() > 200) {
        missing += ", ...";
        break;
      }
    }
    fail(fmt::format("impi: rank {}: the IMPI connections were not all made within {} s; missing: {} (see "
                     "IMPI_NETWORK, IMPI_PORT_RANGE and impi.connect_timeout)",
                     startup_->my_rank, connect_timeout_.count() / 1000, missing));
    std::rethrow_exception(failure_);
  }
  if (shutting_down_) {
    // PK_FINI goes once nothing is held back by flow control for that host.
    for (int h = 0; h < static_cast<int>(hosts_.size()); ++h) {
      auto& c = hosts_[static_cast<std::size_t>(h)];
      if (!c || c->fini_sent()) continue;
      bool held = std::any_of(peers_.begin(), peers_.end(),
                              [h](const PeerState& p) { return p.host == h && !p.held.empty(); });
      if (!held) c->send_fini();
    }
  }
  return false;
}

p2p::SendStatus ImpiTransport::submit(int peer, OutPacket&& packet, bool counted) {
  PeerState& ps = peers_[static_cast<std::size_t>(peer)];
  auto& c = hosts_[static_cast<std::size_t>(ps.host)];
  packet.peer = peer;
  packet.counted = counted;
  bool may_go = c && c->open() && (!counted || (ps.held.empty() && ps.sent < hiwater_));
  if (may_go) {
    if (counted) ++ps.sent;
    std::size_t written = 0;
    if (packet.copy.empty() && c->try_write_now(packet.head, packet.payload, &written)) return p2p::SendStatus::complete;
    packet.written = written;
  }
  p2p::SendStatus result;
  if (packet.copy.empty() && !packet.reference && packet.payload.size() <= copy_limit) {
    packet.copy.assign(packet.payload.begin(), packet.payload.end());
    packet.payload = packet.copy;
    result = p2p::SendStatus::complete;
  } else if (!packet.copy.empty()) {
    result = p2p::SendStatus::complete;
  } else {
    packet.report = true;
    result = p2p::SendStatus::in_flight;
  }
  if (may_go)
    c->enqueue(std::move(packet));
  else
    ps.held.push_back(std::move(packet));  // moving keeps the copy's heap buffer: payload stays valid
  return result;
}

void ImpiTransport::release_held(int peer) {
  PeerState& ps = peers_[static_cast<std::size_t>(peer)];
  auto& c = hosts_[static_cast<std::size_t>(ps.host)];
  if (!c || !c->open()) return;
  while (!ps.held.empty() && (!ps.held.front().counted || ps.sent < hiwater_)) {
    if (ps.held.front().counted) ++ps.sent;
    c->enqueue(std::move(ps.held.front()));
    ps.held.pop_front();
  }
}

void ImpiTransport::send_control(int peer, PacketType type, std::uint64_t srqid, std::uint64_t drqid) {
  PacketHeader h = translator_.header_to(peer, type);
  h.srqid = srqid;
  h.drqid = drqid;
  h.seqnum = ++seqnum_;
  OutPacket p;
  h.encode(p.head.data());
  submit(peer, std::move(p), counts_for_flow_control(type));
}

p2p::SendStatus ImpiTransport::send(int peer, std::span<const std::byte> header, std::span<const std::byte> payload,
                                    std::uint64_t token) {
  if (failure_) std::rethrow_exception(failure_);
  if (!reachable(peer))
    throw MpiError(MPI_ERR_INTERN, fmt::format("impi: rank {} cannot reach rank {}", startup_->my_rank, peer));
  Translator::Outgoing out = translator_.to_packet(peer, header, payload.size());
  OutPacket packet;
  packet.payload = payload;
  packet.token = token;
  packet.reference = out.reference;
  out.header.seqnum = ++seqnum_;
  out.header.encode(packet.head.data());
  return submit(peer, std::move(packet), counts_for_flow_control(out.header.type));
}

p2p::Placement ImpiTransport::on_packet(int host, const PacketHeader& h, int* frame_peer, bool* deliver) {
  const JobMap& m = map();
  int peer = m.rank_of(h.src);
  if (peer < 0 || m.proc_host[static_cast<std::size_t>(peer)] != host)
    throw WireError(fmt::format("{} packet names source proc {}/{}, not a proc of that host",
                                packet_type_name(h.type), to_string(h.src.host), h.src.pid));
  if (h.dest != proc(startup_->my_rank))
    throw WireError(fmt::format("{} packet for proc {}/{}, which is not this process",
                                packet_type_name(h.type), to_string(h.dest.host), h.dest.pid));
  PeerState& ps = peers_[static_cast<std::size_t>(peer)];
  *frame_peer = peer;
  *deliver = false;
  if (h.type == PacketType::protoack) {
    ps.sent = std::max<std::int64_t>(0, ps.sent - ackmark_);
    release_held(peer);
    return {};
  }
  // Every other packet counts (section 8); acknowledge every ackmark.
  if (++ps.received >= ackmark_) {
    ps.received -= ackmark_;
    send_control(peer, PacketType::protoack, 0, 0);
  }
  Translator::Incoming in = translator_.to_frame(peer, h);
  if (in.header_size == 0) return {};
  if (in.carries_payload) {
    *deliver = true;
    return context_.sink->on_frame_begin(peer, in.frame(), h.len);
  }
  p2p::Placement p = context_.sink->on_frame_begin(peer, in.frame(), 0);
  context_.sink->on_frame_end(peer, p.token, {});
  return {};
}

void ImpiTransport::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  progress();
}

bool ImpiTransport::shutdown_complete() const {
  if (!shutting_down_) return false;
  if (failure_) return true;
  bool all = true;
  for (const auto& c : hosts_) {
    if (!c || c->closed()) continue;
    if (!(c->fini_sent() && c->write_idle() && c->fini_received())) all = false;
  }
  if (all) {
    for (const auto& c : hosts_)
      if (c) c->close_socket();
    return true;
  }
  if (std::chrono::steady_clock::now() >= deadline_) {
    log().warn("impi: rank {}: not every IMPI host sent PK_FINI within 10 s; closing anyway", startup_->my_rank);
    return true;
  }
  return false;
}

std::unique_ptr<p2p::Transport> make_transport(const p2p::TransportContext& context) {
  if (!context.impi) return nullptr;
  return std::make_unique<ImpiTransport>(context, context.impi);
}

}  // namespace gridmpi::impi
