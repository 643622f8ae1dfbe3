#include "p2p/tcp/tcp_transport.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <fmt/format.h>

#include "conf/log.hpp"
#include "conf/checked.hpp"
#include "conf/registry.hpp"
#include "base/error.hpp"
#include "p2p/stream_reader.hpp"
#include "p2p/tcp/tcp_address.hpp"

namespace gridmpi::p2p::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

const conf::Param<std::int64_t> socbuf_param{
    "tcp.socbuf", 0, "bytes",
    "socket send and receive buffer size of tcp connections; 0 = kernel autotuning (GridMPI's default was "
    "65536: set that for its behaviour)",
    conf::Level::tuner, {"_YAMPI_SOCBUF"}};
const conf::Param<std::string> port_range_param{
    "tcp.port_range", "", "", "listening port range of the tcp transport, start:end inclusive (empty: any)",
    conf::Level::user, {"_YAMPI_PORT_RANGE"}};
const conf::Param<std::string> network_param{
    "tcp.network", "", "",
    "advertise the local address inside this IPv4 network (e.g. 10.9.0.0/24) instead of the host file's name",
    conf::Level::user};
const conf::Param<bool> one_connection_param{
    "tcp.one_connection", true, "",
    "answer on the connection the peer opened, one connection per pair (a reply carries the acknowledgement of "
    "its request: small-message latency); false = every process sends on connections it opened, one per direction "
    "(on loopback, faster ping-pongs of large messages; p2p/README.md)",
    conf::Level::tuner};
const conf::Param<std::int64_t> rts_prefix_param{
    "tcp.rts_prefix", 128 * 1024, "bytes",
    "a rendezvous message's request to send carries its first this many bytes, which travel while the "
    "receiver's answer comes back (0 = none; at most the 4 MiB fragment)",
    conf::Level::tuner};
const conf::Param<double> connect_timeout_param{
    "tcp.connect_timeout", 30.0, "seconds", "how long a connection to a peer may take before the job fails",
    conf::Level::tuner};

constexpr std::size_t read_buffer_size = 64 * 1024;
constexpr std::size_t max_kept_payload_buffer = std::size_t{4} << 20;  // the fragment size
constexpr std::size_t max_inline_header = 64;
// Payloads from this size on are placed by payload_padding (tcp_wire.hpp);
// the padding is at most this long.
constexpr std::size_t padded_payload_min = 16 * 1024;
constexpr std::size_t max_payload_padding = 256;
// Payloads still to be read from this size on switch the connection to
// immediate acknowledgements (Connection::acknowledge_quickly).
constexpr std::size_t quickack_payload_min = 64 * 1024;
constexpr std::size_t max_head = FramePrefix::size + max_inline_header + max_payload_padding;
// Above this many queued frames (or copied bytes) of one connection, send()
// says would_block and the request layer keeps the frames.
constexpr std::size_t max_queued_frames = 4096;
constexpr std::size_t max_queued_copy_bytes = 16 * 1024 * 1024;

bool is_would_block(const error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

}  // namespace

TcpOptions TcpOptions::from_configuration() {
  TcpOptions o;
  o.socket_buffer = conf::checked(socbuf_param);
  o.port_range = conf::checked(port_range_param);
  o.network = conf::checked(network_param);
  o.one_connection = conf::checked(one_connection_param);
  const std::int64_t prefix = conf::checked(rts_prefix_param);
  if (prefix < 0 || static_cast<std::uint64_t>(prefix) > max_kept_payload_buffer)
    throw MpiError(MPI_ERR_OTHER, fmt::format("tcp.rts_prefix = {} is outside 0..{} bytes", prefix,
                                              max_kept_payload_buffer));
  o.rts_prefix = static_cast<std::size_t>(prefix);
  double timeout = conf::checked(connect_timeout_param);
  if (timeout > 0) o.connect_timeout = std::chrono::milliseconds(static_cast<long long>(timeout * 1000));
  return o;
}

// ---- one socket -----------------------------------------------------------

class TcpTransport::Connection : public std::enable_shared_from_this<Connection> {
 public:
  enum class Role { outgoing, incoming };

  Connection(TcpTransport& owner, tcp::socket socket, Role role, int peer)
      : owner_(&owner),
        gate_(owner.context_.gate),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        role_(role),
        peer_(peer),
        reader_(read_buffer_size, max_kept_payload_buffer) {}

  Role role() const noexcept { return role_; }
  int peer() const noexcept { return peer_; }
  void set_peer(int peer) noexcept { peer_ = peer; }
  bool open() const noexcept { return state_ == State::open; }
  std::string remote() const {
    error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    return ec ? std::string("?") : fmt::format("{}:{}", ep.address().to_string(), ep.port());
  }

  // The transport is going away: never touch it again.
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

  // Outgoing: connect, then write the hello and whatever was queued meanwhile.
  void connect(const tcp::endpoint& to, std::chrono::milliseconds timeout, const std::string& what) {
    state_ = State::connecting;
    auto self = shared_from_this();
    timer_.expires_after(timeout);
    timer_.async_wait([self, what, timeout](const error_code& ec) {
      GateScope scope(self->gate_);
      if (ec || !self->owner_ || self->state_ != State::connecting) return;
      self->owner_->fail(fmt::format("{}: no answer within {} ms (host down or port filtered? see "
                                     "_YAMPI_PORT_RANGE and GRIDMPI_TCP_NETWORK)",
                                     what, timeout.count()));
      self->close_socket();
    });
    socket_.async_connect(to, [self, what](const error_code& ec) {
      GateScope scope(self->gate_);
      if (!self->owner_ || self->state_ != State::connecting) return;
      self->timer_.cancel();
      if (ec) {
        self->owner_->fail(fmt::format("{}: {} (is the peer running and its port reachable? see _YAMPI_PORT_RANGE "
                                       "and GRIDMPI_TCP_NETWORK)",
                                       what, ec.message()));
        self->close_socket();
        return;
      }
      self->became_open();
    });
  }

  // Incoming: wait for the hello, with a deadline.
  void accepted(std::chrono::milliseconds hello_timeout) {
    became_open();
    auto self = shared_from_this();
    timer_.expires_after(hello_timeout);
    timer_.async_wait([self, hello_timeout](const error_code& ec) {
      GateScope scope(self->gate_);
      if (ec || !self->owner_ || self->peer_ >= 0 || self->state_ != State::open) return;
      self->owner_->refuse(self, fmt::format("no hello within {} ms", hello_timeout.count()));
    });
  }

  void cancel_timer() { timer_.cancel(); }

  SendStatus send(FrameType type, std::span<const std::byte> header, std::span<const std::byte> payload,
                  std::uint64_t token) {
    if (header.size() > max_inline_header)
      throw MpiError(MPI_ERR_INTERN, fmt::format("tcp: frame header of {} bytes", header.size()));
    std::array<std::byte, max_head> head;
    FramePrefix prefix{type, static_cast<std::uint16_t>(header.size()), payload.size()};
    std::size_t head_size = FramePrefix::size + header.size();
    if (payload.size() >= padded_payload_min) {
      prefix.padding = payload_padding(reinterpret_cast<std::uintptr_t>(payload.data()), head_size);
      std::memset(head.data() + head_size, 0, prefix.padding);
      head_size += prefix.padding;
    }
    prefix.encode(std::span<std::byte, FramePrefix::size>(head.data(), FramePrefix::size));
    if (!header.empty()) std::memcpy(head.data() + FramePrefix::size, header.data(), header.size());
    const std::size_t total = head_size + payload.size();
    std::size_t written = 0;
    if (state_ == State::open && queue_.empty()) {
      // The common case: straight into the socket, gathered from the caller's memory.
      std::array<asio::const_buffer, 2> buffers{asio::buffer(head.data(), head_size),
                                                asio::buffer(payload.data(), payload.size())};
      error_code ec;
      written = socket_.write_some(buffers, ec);
      if (ec && !is_would_block(ec)) {
        write_failed(ec);
        return SendStatus::complete;  // the failure surfaces through progress()
      }
      if (ec) written = 0;
      if (written == total) {
        after_frame_written(type);
        return SendStatus::complete;
      }
    } else if (state_ == State::closed) {
      if (owner_ && !owner_->shutting_down_)
        owner_->fail(fmt::format("tcp: rank {}: send to rank {} on a closed connection", owner_->context_.world_rank,
                                 peer_));
      return SendStatus::complete;
    } else if (type == FrameType::message &&
               (queue_.size() >= max_queued_frames ||
                (payload.size() <= copy_limit && queued_copy_bytes_ + payload.size() > max_queued_copy_bytes))) {
      return SendStatus::would_block;
    }
    OutFrame f;
    f.type = type;
    std::memcpy(f.head.data(), head.data(), head_size);
    f.head_size = head_size;
    f.written = written;
    SendStatus result;
    if (payload.size() <= copy_limit) {
      f.copy.assign(payload.begin(), payload.end());
      f.payload = f.copy;
      queued_copy_bytes_ += payload.size();
      result = SendStatus::complete;
    } else {
      f.payload = payload;
      f.report = true;
      f.token = token;
      result = SendStatus::in_flight;
    }
    queue_.push_back(std::move(f));  // moving the vector keeps its heap buffer: f.payload stays valid
    if (state_ == State::open && !write_pending_) start_write();
    return result;
  }

  bool write_idle() const noexcept { return queue_.empty(); }
  bool goodbye_sent() const noexcept { return goodbye_written_; }
  bool goodbye_received() const noexcept { return goodbye_received_; }
  bool read_closed() const noexcept { return read_closed_; }

  void send_goodbye() {
    if (goodbye_queued_ || state_ == State::closed) {
      goodbye_written_ = true;
      return;
    }
    goodbye_queued_ = true;
    send(FrameType::goodbye, {}, {}, 0);
  }

  void start_reading() {
    if (read_pending_ || held_ || state_ != State::open) return;
    std::span<std::byte> target = reader_.read_target();
    read_pending_ = true;
    read_requested_ = target.size();
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(target.data(), target.size()),
                            [self](const error_code& ec, std::size_t n) {
                              GateScope scope(self->gate_);
                              self->on_read(ec, n);
                            });
  }

 private:
  enum class State { idle, connecting, open, closed };
  struct OutFrame {
    FrameType type = FrameType::message;
    std::array<std::byte, max_head> head{};
    std::size_t head_size = 0;
    std::vector<std::byte> copy;
    std::span<const std::byte> payload;
    std::size_t written = 0;
    bool report = false;
    std::uint64_t token = 0;
    std::size_t total() const noexcept { return head_size + payload.size(); }
  };

  void became_open() {
    state_ = State::open;
    error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    socket_.non_blocking(true, ignored);
    if (!queue_.empty()) start_write();
    start_reading();
  }

  void after_frame_written(FrameType type) {
    if (type == FrameType::goodbye) {
      goodbye_written_ = true;
      // Nothing follows a goodbye; the peer reads it, then end-of-file.
      error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  void start_write() {
    // Gather several queued frames into one write (the operation keeps its own copy of this vector).
    std::vector<asio::const_buffer> buffers;
    buffers.reserve(16);
    for (auto it = queue_.begin(); it != queue_.end() && buffers.size() + 2 <= 64; ++it) {
      std::size_t skip = it->written;
      if (skip < it->head_size) {
        buffers.push_back(asio::buffer(it->head.data() + skip, it->head_size - skip));
        skip = 0;
      } else {
        skip -= it->head_size;
      }
      if (skip < it->payload.size()) buffers.push_back(asio::buffer(it->payload.data() + skip, it->payload.size() - skip));
    }
    write_pending_ = true;
    auto self = shared_from_this();
    socket_.async_write_some(std::move(buffers),
                             [self](const error_code& ec, std::size_t n) {
                               GateScope scope(self->gate_);
                               self->on_written(ec, n);
                             });
  }

  void on_written(const error_code& ec, std::size_t n) {
    write_pending_ = false;
    if (!owner_ || ec == asio::error::operation_aborted) return;
    if (ec) return write_failed(ec);
    std::vector<std::uint64_t> done;
    while (n > 0 && !queue_.empty()) {
      OutFrame& f = queue_.front();
      std::size_t take = std::min(n, f.total() - f.written);
      f.written += take;
      n -= take;
      if (f.written < f.total()) break;
      if (f.report) done.push_back(f.token);
      queued_copy_bytes_ -= f.copy.size();
      FrameType type = f.type;
      queue_.pop_front();
      after_frame_written(type);
    }
    TcpTransport* owner = owner_;
    try {
      for (std::uint64_t token : done) owner->context_.sink->on_send_complete(peer_, token);
    } catch (...) {
      owner->fail(std::current_exception());
    }
    if (!queue_.empty() && !write_pending_ && state_ == State::open) start_write();
  }

  void write_failed(const error_code& ec) {
    TcpTransport* owner = owner_;
    bool quiet = owner->shutting_down_ || owner->peers_[peer_].said_goodbye;
    if (quiet) {
      log().debug("tcp: rank {}: write to rank {} after goodbye: {}", owner->context_.world_rank, peer_, ec.message());
      queue_.clear();
      goodbye_written_ = true;
      read_closed_ = true;
      close_socket();
      return;
    }
    owner->fail(fmt::format("tcp: rank {} lost the connection to {} while writing: {}", owner->context_.world_rank,
                            owner->describe_peer(peer_), ec.message()));
    close_socket();
  }

  void on_read(const error_code& ec, std::size_t n) {
    read_pending_ = false;
    if (!owner_ || ec == asio::error::operation_aborted) return;
    if (ec) return read_failed(ec);
    parse_and_read_on(n < read_requested_, [&] {
      if (reader_.received(n))
        reader_.end_payload(*owner_->context_.sink);
      // Again after every read of a large payload: the quick-ack mode set
      // at its start does not last through megabytes (4 MiB ping-pong,
      // 16 alternations: 1.03 -> 1.15 of Open MPI's bandwidth).
      else if (reader_.in_payload() && reader_.payload_left() >= quickack_payload_min)
        acknowledge_quickly();
    });
  }

  // The peer's `moved` was read: go on past its `switched`.
  void resume() {
    held_ = false;
    if (owner_ && state_ == State::open) parse_and_read_on(false, [] {});
  }

  // `drained`: the last read took less than it asked for, so the socket is
  // very likely empty.  Asio (1.74) reads at once when a read is started
  // after one that returned data; in poll mode that read, almost always
  // EAGAIN, would come before the waiter gets its message (and answers it),
  // so it is left to the transport's next progress() (rearm_later).
  template <class Before>
  void parse_and_read_on(bool drained, Before before) {
    try {
      before();
      parse();
    } catch (...) {
      if (owner_) owner_->fail(std::current_exception());
      close_socket();
      return;
    }
    if (!owner_ || state_ != State::open) return;
    if (drained && !reader_.in_payload() && !held_ && owner_->context_.progress == ProgressMode::poll)
      owner_->rearm_.push_back(shared_from_this());
    else
      start_reading();
  }

  void read_failed(const error_code& ec) {
    TcpTransport* owner = owner_;
    read_closed_ = true;
    if (peer_ < 0) {
      log().debug("tcp: rank {}: connection from {} closed before its hello: {}", owner->context_.world_rank,
                  remote(), ec.message());
      owner->forget_unidentified(this);
      close_socket();
      return;
    }
    bool goodbye = goodbye_received_ || owner->peers_[peer_].said_goodbye;
    if (goodbye) {
      // A normal end.  Close our side once our own goodbye is out; before
      // that the socket stays open for it.
      if (goodbye_queued_ && queue_.empty()) close_socket();
      return;
    }
    std::string text = fmt::format("tcp: rank {} lost the connection {} rank {} ({}): {} (the peer exited or was "
                                   "killed without MPI_Finalize)",
                                   owner->context_.world_rank, role_ == Role::incoming ? "from" : "to", peer_,
                                   owner->describe_peer(peer_), ec == asio::error::eof ? "end of file" : ec.message());
    close_socket();
    if (owner->shutting_down_) {
      log().warn("{}", text);
      return;
    }
    owner->fail(text);
  }

  void protocol_error(const std::string& why) {
    if (peer_ < 0) {
      owner_->refuse(shared_from_this(), why);
      return;
    }
    owner_->fail(fmt::format("tcp: rank {}: garbage from rank {} ({}): {}", owner_->context_.world_rank, peer_,
                             owner_->describe_peer(peer_), why));
    close_socket();
  }

  // The rest of a large payload is coming: acknowledge its segments at
  // once.  A connection that carries answers both ways is in the kernel's
  // "pingpong" mode, which delays acknowledgements to piggyback them on the
  // next reply; during a bulk transfer that holds back the sender's
  // congestion window (1 MiB ping-pong on loopback: 270 against 150 us).
  // The kernel goes back to delaying once we send again, and the quick-ack
  // mode does not last through a payload of megabytes: it is set again
  // after every read while 64 KiB or more are still to come.
  void acknowledge_quickly() {
    int one = 1;
    (void)::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  }

  // Handles every complete frame in the buffer; stops at a partial one or
  // when a payload is to be read straight into its destination.
  void parse() {
    while (!reader_.in_payload() && state_ == State::open && owner_) {
      std::span<const std::byte> in = reader_.buffered();
      if (in.size() < FramePrefix::size) return;
      std::string why;
      auto prefix = FramePrefix::decode(std::span<const std::byte, FramePrefix::size>(in.data(), FramePrefix::size), &why);
      if (!prefix) return protocol_error(why);
      const std::size_t head_size = FramePrefix::size + prefix->header_length + prefix->padding;
      if (in.size() < head_size) return;
      std::span<const std::byte> header(in.data() + FramePrefix::size, prefix->header_length);

      if (peer_ < 0) {
        // The first frame of an incoming connection must be a valid hello.
        if (prefix->type != FrameType::hello || prefix->header_length != Hello::size || prefix->payload_length != 0)
          return protocol_error("first frame is not a hello");
        auto hello = Hello::decode(std::span<const std::byte, Hello::size>(header.data(), Hello::size), &why);
        if (!hello) return protocol_error(why);
        reader_.consume(head_size);
        if (!owner_->accept_hello(shared_from_this(), *hello)) return;
        continue;
      }
      switch (prefix->type) {
        case FrameType::hello: return protocol_error("second hello on one connection");
        case FrameType::goodbye:
          reader_.consume(head_size);
          goodbye_received_ = true;
          owner_->peers_[peer_].said_goodbye = true;
          continue;
        case FrameType::moved:
          if (prefix->header_length != 0 || prefix->payload_length != 0 || moved_)
            return protocol_error("malformed or repeated moved frame");
          reader_.consume(head_size);
          moved_ = true;
          owner_->peer_moved(peer_);
          continue;
        case FrameType::switched: {
          if (prefix->header_length != 0 || prefix->payload_length != 0)
            return protocol_error("malformed switched frame");
          PeerState& p = owner_->peers_[peer_];
          if (!p.moved_seen) {
            // Frames from before it are still to come on the other connection.
            if (p.held && p.held != this) return protocol_error("switched on two connections");
            p.held = this;
            held_ = true;
            return;
          }
          reader_.consume(head_size);
          continue;
        }
        case FrameType::message: break;
      }
      if (moved_) return protocol_error("message frame after moved");

      const std::size_t size = prefix->payload_length;
      // Decoded in place (a frame of garbage is a protocol error, not the
      // engine's): the lambda's result initialises `frame` without a copy.
      bool bad = false;
      const Frame frame = [&]() -> Frame {
        try {
          return frame::decode(header);
        } catch (const MpiError& e) {
          protocol_error(e.what());
          bad = true;
          return {};
        }
      }();
      if (bad) return;
      Placement placement = owner_->context_.sink->on_frame_begin(peer_, frame, size);
      reader_.consume(head_size);
      reader_.begin_payload(*owner_->context_.sink, peer_, placement, size, "tcp");
      if (reader_.in_payload() && reader_.payload_left() >= quickack_payload_min) acknowledge_quickly();
    }
  }

  friend class TcpTransport;

  TcpTransport* owner_;
  // Thread progress mode: every handler runs inside the request layer's
  // lock (null in poll mode, where the polling thread holds it already).
  EventGate* gate_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  Role role_;
  int peer_;  // -1 until the hello of an incoming connection
  State state_ = State::idle;

  std::deque<OutFrame> queue_;
  std::size_t queued_copy_bytes_ = 0;
  bool write_pending_ = false;
  bool goodbye_queued_ = false;
  bool goodbye_written_ = false;
  bool goodbye_received_ = false;
  bool read_closed_ = false;

  StreamReader reader_;  // the read buffer and the payload in progress
  bool read_pending_ = false;
  std::size_t read_requested_ = 0;
  bool held_ = false;   // stopped at a `switched`: see PeerState::held
  bool moved_ = false;  // the peer said `moved` on this connection: no frames follow but its goodbye
};

// ---- the transport --------------------------------------------------------

TcpTransport::TcpTransport(const TransportContext& context, TcpOptions options)
    : context_(context),
      options_(std::move(options)),
      acceptor_(*context.io),
      accept_retry_(*context.io),
      peers_(static_cast<std::size_t>(context.world_size)),
      life_(std::make_shared<TcpTransport*>(this)) {
  std::string how;
  address_ = choose_advertised_address(options_.network, &how);
  open_listener();
  log().debug("tcp: rank {} listens on port {}, advertises {} ({})", context_.world_rank, port_, address_, how);
  accept_next();
}

TcpTransport::~TcpTransport() {
  *life_ = nullptr;
  error_code ignored;
  accept_retry_.cancel();
  acceptor_.close(ignored);
  for (auto& p : peers_) {
    if (p.outgoing) p.outgoing->detach();
    if (p.incoming) p.incoming->detach();
  }
  for (auto& c : unidentified_) c->detach();
}

void TcpTransport::open_listener() {
  PortRange range = parse_port_range(options_.port_range, "tcp.port_range (_YAMPI_PORT_RANGE)");
  error_code ec;
  acceptor_.open(tcp::v4(), ec);
  if (ec) throw MpiError(MPI_ERR_OTHER, fmt::format("tcp: rank {}: cannot create a socket: {}", context_.world_rank, ec.message()));
  acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (options_.socket_buffer > 0) {
    // Set before listen so that accepted sockets inherit it (and the window scale fits).
    acceptor_.set_option(asio::socket_base::receive_buffer_size(static_cast<int>(options_.socket_buffer)), ec);
    acceptor_.set_option(asio::socket_base::send_buffer_size(static_cast<int>(options_.socket_buffer)), ec);
  }
  std::uint32_t first = range.any() ? 0 : range.first;
  std::uint32_t last = range.any() ? 0 : range.last;
  error_code bind_error;
  for (std::uint32_t port = first; port <= last; ++port) {
    acceptor_.bind(tcp::endpoint(tcp::v4(), static_cast<std::uint16_t>(port)), bind_error);
    if (!bind_error) break;
  }
  if (bind_error)
    throw MpiError(MPI_ERR_OTHER,
                   range.any() ? fmt::format("tcp: rank {}: cannot bind a listening port: {}", context_.world_rank,
                                             bind_error.message())
                               : fmt::format("tcp: rank {}: no free port in _YAMPI_PORT_RANGE {}:{} ({}); widen the range",
                                             context_.world_rank, range.first, range.last, bind_error.message()));
  acceptor_.listen(std::max(128, context_.world_size), ec);
  if (ec) throw MpiError(MPI_ERR_OTHER, fmt::format("tcp: rank {}: listen failed: {}", context_.world_rank, ec.message()));
  port_ = acceptor_.local_endpoint().port();
}

void TcpTransport::accept_next() {
  acceptor_.async_accept([life = life_, gate = context_.gate](const error_code& ec, tcp::socket socket) {
    GateScope scope(gate);
    TcpTransport* self = *life;
    if (!self || ec == asio::error::operation_aborted) return;
    if (!ec) {
      auto c = std::make_shared<Connection>(*self, std::move(socket), Connection::Role::incoming, -1);
      self->unidentified_.push_back(c);
      c->accepted(self->options_.hello_timeout);
      self->accept_next();
      return;
    }
    // Out of descriptors or similar: say so, and try again a little later
    // rather than spinning on the same error.
    log().warn("tcp: rank {}: accept failed: {}; retrying in 100 ms", self->context_.world_rank, ec.message());
    self->accept_retry_.expires_after(std::chrono::milliseconds(100));
    self->accept_retry_.async_wait([life, gate](const error_code& wait_error) {
      GateScope scope(gate);
      if (TcpTransport* t = *life; t && !wait_error) t->accept_next();
    });
  });
}

bool TcpTransport::accept_hello(const std::shared_ptr<Connection>& c, const Hello& hello) {
  if (hello.version != Hello::current_version) {
    refuse(c, fmt::format("protocol version {}, this library speaks {} (mixed gridmpi installations?)", hello.version,
                          Hello::current_version));
    return false;
  }
  if (hello.job_cookie != context_.job_cookie) {
    refuse(c, "job cookie does not match (a process of another job, or a stray connection)");
    return false;
  }
  int rank = hello.world_rank;
  if (rank < 0 || rank >= context_.world_size || rank == context_.world_rank) {
    refuse(c, fmt::format("claims to be rank {} (this job has ranks 0..{}, this is rank {})", rank,
                          context_.world_size - 1, context_.world_rank));
    return false;
  }
  if (peers_[rank].incoming) {
    refuse(c, fmt::format("rank {} is already connected", rank));
    return false;
  }
  c->cancel_timer();
  c->set_peer(rank);
  peers_[rank].incoming = c;
  forget_unidentified(c.get());
  if (shutting_down_) c->send_goodbye();
  return true;
}

void TcpTransport::refuse(const std::shared_ptr<Connection>& c, const std::string& why) {
  log().warn("tcp: rank {} refused a connection from {}: {}", context_.world_rank, c->remote(), why);
  forget_unidentified(c.get());
  c->close_socket();
}

void TcpTransport::forget_unidentified(const Connection* c) {
  std::erase_if(unidentified_, [c](const auto& p) { return p.get() == c; });
}

void TcpTransport::fail(const std::string& message) {
  if (failure_) return;
  // Debug only: the error reaches the user through the MPI error handler,
  // which prints it; logging it here too would say everything twice.
  log().debug("{}", message);
  failure_ = std::make_exception_ptr(MpiError(MPI_ERR_OTHER, message));
}

void TcpTransport::fail(std::exception_ptr error) {
  if (!failure_) failure_ = error;
}

std::string TcpTransport::describe_peer(int peer) const {
  if (peer < 0 || peer >= context_.world_size) return "unknown peer";
  const PeerState& p = peers_[peer];
  return p.known ? fmt::format("{}:{}", p.host, p.port) : std::string("address unknown");
}

Capabilities TcpTransport::capabilities() const {
  Capabilities caps;
  caps.eager_limit = eager_limit;
  caps.max_fragment = max_kept_payload_buffer;
  caps.rts_prefix = options_.rts_prefix;
  caps.latency_us = declared_latency_us;
  caps.bandwidth_bytes_per_s = declared_bandwidth;
  caps.can_block = true;
  return caps;
}

bool TcpTransport::reachable(int peer) const {
  return peer != context_.world_rank && peer >= 0 && peer < context_.world_size && peers_[peer].known;
}

std::string TcpTransport::endpoint() { return fmt::format("tcp:{}:{}", address_, port_); }

void TcpTransport::set_peer_endpoint(int peer, std::string_view endpoint) {
  if (peer < 0 || peer >= context_.world_size) return;
  auto rest = endpoint.substr(endpoint.find(':') + 1);
  auto hp = split_host_port(rest);
  if (!hp)
    throw MpiError(MPI_ERR_OTHER, fmt::format("tcp: rank {}: malformed endpoint '{}' of rank {}", context_.world_rank,
                                              endpoint, peer));
  peers_[peer].host = hp->host;
  peers_[peer].port = hp->port;
  peers_[peer].known = true;
}

TcpTransport::Connection& TcpTransport::sending(int peer) {
  PeerState& p = peers_[peer];
  if (p.sending) {
    // Both of us connected at once: the higher rank moves to the lower's
    // connection (tcp_wire.hpp), so that replies carry the acknowledgements.
    // Only once our own connection is open: the peer then reads it (and
    // would see it fail) while it holds the other at `switched`.
    if (options_.one_connection && p.sending == p.outgoing && peer < context_.world_rank && p.outgoing->open() &&
        p.incoming && p.incoming->open() &&
        !p.said_goodbye && !shutting_down_) {
      p.outgoing->send(FrameType::moved, {}, {}, 0);
      p.incoming->send(FrameType::switched, {}, {}, 0);
      p.sending = p.incoming;
      log().debug("tcp: rank {}: now sends to rank {} on the connection that rank opened", context_.world_rank, peer);
    }
    return *p.sending;
  }
  if (options_.one_connection && p.incoming && p.incoming->open())
    p.sending = p.incoming;  // the peer opened one: answer on it
  else
    p.sending = open_outgoing(peer).shared_from_this();
  return *p.sending;
}

void TcpTransport::peer_moved(int peer) {
  PeerState& p = peers_[peer];
  p.moved_seen = true;
  if (!p.held) return;
  // Not from inside this parse: the held connection goes on in a handler of its own.
  auto c = p.held->shared_from_this();
  p.held = nullptr;
  asio::post(*context_.io, [c] {
    GateScope scope(c->gate_);
    c->resume();
  });
}

bool TcpTransport::sends_on_peer_connection(int peer) const {
  if (peer < 0 || peer >= context_.world_size) return false;
  const PeerState& p = peers_[peer];
  return p.sending && p.sending == p.incoming;
}

TcpTransport::Connection& TcpTransport::open_outgoing(int peer) {
  PeerState& p = peers_[peer];
  if (!p.known)
    throw MpiError(MPI_ERR_INTERN, fmt::format("tcp: rank {}: no endpoint for rank {}", context_.world_rank, peer));
  std::string what = fmt::format("tcp: rank {} cannot connect to rank {} at {}:{}", context_.world_rank, peer, p.host, p.port);
  error_code ec;
  auto address = asio::ip::make_address(p.host, ec);
  if (ec) {
    std::string error;
    auto resolved = resolve_ipv4(p.host, &error);
    if (!resolved) throw MpiError(MPI_ERR_OTHER, fmt::format("{}: cannot resolve the host: {}", what, error));
    address = asio::ip::address_v4(*resolved);
  }
  tcp::socket socket(*context_.io);
  socket.open(address.is_v4() ? tcp::v4() : tcp::v6(), ec);
  if (ec) throw MpiError(MPI_ERR_OTHER, fmt::format("{}: cannot create a socket: {}", what, ec.message()));
  if (options_.socket_buffer > 0) {
    socket.set_option(asio::socket_base::receive_buffer_size(static_cast<int>(options_.socket_buffer)), ec);
    socket.set_option(asio::socket_base::send_buffer_size(static_cast<int>(options_.socket_buffer)), ec);
  }
  p.outgoing = std::make_shared<Connection>(*this, std::move(socket), Connection::Role::outgoing, peer);
  // The hello goes first in the queue, ahead of the frame that caused the connect.
  std::array<std::byte, Hello::size> hello_bytes;
  Hello{Hello::current_version, context_.job_cookie, context_.world_rank}.encode(hello_bytes);
  p.outgoing->send(FrameType::hello, hello_bytes, {}, 0);
  p.outgoing->connect(tcp::endpoint(address, p.port), options_.connect_timeout, what);
  return *p.outgoing;
}

SendStatus TcpTransport::send(int peer, const Frame& frame, std::span<const std::byte> payload,
                              std::uint64_t token) {
  if (failure_) std::rethrow_exception(failure_);
  if (!reachable(peer))
    throw MpiError(MPI_ERR_INTERN, fmt::format("tcp: rank {} cannot reach rank {}", context_.world_rank, peer));
  frame::HeaderBuffer buffer;
  return sending(peer).send(FrameType::message, frame::encoded(frame, buffer), payload, token);
}

bool TcpTransport::progress() {
  // Every round of every waiter asks, mostly for nothing: that case without
  // the set-up of the rest.
  if (failure_ || !rearm_.empty()) [[unlikely]]
    return restart_reads();
  return false;
}

bool TcpTransport::restart_reads() {
  if (failure_) std::rethrow_exception(failure_);
  // start_reading() only starts an operation (its handler runs later), so
  // it cannot add to rearm_ meanwhile; clear() keeps the vector's memory
  // for the next message.
  for (auto& c : rearm_) c->start_reading();
  rearm_.clear();
  return false;  // the I/O itself runs in the io_context's handlers
}

void TcpTransport::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  shutdown_deadline_ = std::chrono::steady_clock::now() + options_.shutdown_timeout;
  for (auto& p : peers_) {
    if (p.outgoing) p.outgoing->send_goodbye();
    if (p.incoming) p.incoming->send_goodbye();
  }
  // Connections whose hello has not been read yet stay: their frames may be
  // a peer's last messages; they get our goodbye once identified.
}

bool TcpTransport::shutdown_complete() const {
  if (!shutting_down_) return false;
  if (failure_) return true;
  bool all = unidentified_.empty();
  for (const auto& p : peers_) {
    for (const auto* c : {p.outgoing.get(), p.incoming.get()}) {
      if (!c) continue;
      bool written = c->goodbye_sent() && c->write_idle();
      bool heard = c->goodbye_received() || c->read_closed() || !c->open();
      if (!(written && heard)) all = false;
    }
  }
  if (all) return true;
  if (std::chrono::steady_clock::now() >= shutdown_deadline_) {
    log().debug("tcp: rank {}: not every peer said goodbye within {} ms; closing anyway", context_.world_rank,
                options_.shutdown_timeout.count());
    return true;
  }
  return false;
}

}  // namespace gridmpi::p2p::tcp
