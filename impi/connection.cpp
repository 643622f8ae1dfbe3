// One IMPI host connection (impi/transport_internal.hpp): connect or
// accept, TLS, the host index, packets written in order and read through
// p2p/stream_reader.hpp into the transport's on_packet.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <openssl/ssl.h>

#include "base/error.hpp"
#include "conf/log.hpp"
#include "impi/transport_internal.hpp"

namespace gridmpi::impi {

using gridmpi::log;

namespace {

bool is_would_block(const error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

}  // namespace

void ImpiTransport::Connection::detach() {
  owner_ = nullptr;
  close_socket();
}

void ImpiTransport::Connection::close_socket() {
  error_code ignored;
  timer_.cancel();
  socket_.close(ignored);
  state_ = State::closed;
}

std::string ImpiTransport::Connection::remote() const {
  error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  return ec ? std::string("?") : fmt::format("{}:{}", ep.address().to_string(), ep.port());
}

void ImpiTransport::Connection::connect(const tcp::endpoint& to, std::chrono::milliseconds timeout,
                                        std::uint32_t my_host, std::string relay_request) {
  state_ = State::connecting;
  relay_request_ = std::move(relay_request);
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
    if (ec || self->relay_request_.empty()) self->timer_.cancel();
    if (ec) {
      const auto& relay = self->owner_->startup_->relay;
      self->owner_->fail(relay ? fmt::format("impi: rank {} cannot reach impi-relay at {}: {} (is the relay "
                                             "running?)",
                                             self->owner_->startup_->my_rank, relay::to_string(*relay), ec.message())
                               : fmt::format("impi: rank {} cannot connect to {}: {} (is its cluster's job running? "
                                             "see IMPI_NETWORK and IMPI_PORT_RANGE)",
                                             self->owner_->startup_->my_rank,
                                             self->owner_->describe_host(self->host_), ec.message()));
      self->close_socket();
      return;
    }
    if (self->relay_request_.empty()) return self->after_connect();
    // Through impi-relay: the CONNECT line, its one-line answer, then IMPI.
    // Nothing else arrives before we speak, so reading up to the newline
    // reads nothing of IMPI's.
    asio::async_write(self->socket_, asio::buffer(self->relay_request_), [self](const error_code& ec, std::size_t) {
      p2p::GateScope scope(self->gate_);
      if (!self->owner_ || self->state_ != State::connecting) return;
      if (ec) return self->relay_failed(ec.message());
      asio::async_read_until(self->socket_, asio::dynamic_buffer(self->relay_reply_, relay::max_line), '\n',
                             [self](const error_code& ec, std::size_t n) {
                               p2p::GateScope scope(self->gate_);
                               if (!self->owner_ || self->state_ != State::connecting) return;
                               if (ec) return self->relay_failed(ec == asio::error::eof ? "it closed the connection"
                                                                                        : ec.message());
                               auto line = relay::parse(std::string_view(self->relay_reply_).substr(0, n - 1));
                               if (!line || line->kind != relay::Line::Kind::ok)
                                 return self->relay_failed(line && line->kind == relay::Line::Kind::err
                                                               ? line->text
                                                               : "unexpected answer '" + self->relay_reply_ + "'");
                               self->after_connect();
                             });
    });
  });
}

void ImpiTransport::Connection::relay_failed(const std::string& why) {
  timer_.cancel();
  owner_->fail(fmt::format("impi: rank {} cannot connect to {} through impi-relay at {}: {}", owner_->startup_->my_rank,
                           owner_->describe_host(host_), relay::to_string(*owner_->startup_->relay), why));
  close_socket();
}

void ImpiTransport::Connection::after_connect() {
  timer_.cancel();
  if (owner_->tls_) return client_handshake();
  became_open();
  owner_->identified(shared_from_this(), host_);
}

void ImpiTransport::Connection::accepted(std::chrono::milliseconds timeout) {
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

void ImpiTransport::Connection::enqueue(OutPacket&& p) {
  queue_.push_back(std::move(p));
  if (state_ == State::open && !write_pending_) start_write();
}

bool ImpiTransport::Connection::try_write_now(const std::array<std::byte, PacketHeader::size>& head,
                                              std::span<const std::byte> payload, std::size_t* written) {
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

void ImpiTransport::Connection::send_fini() {
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

void ImpiTransport::Connection::client_handshake() {
  state_ = State::handshaking;
  if (!start_tls(tls::Session::Role::client)) return;
  arm_handshake_timer();
  continue_handshake();
}

bool ImpiTransport::Connection::start_tls(tls::Session::Role role) {
  tls_client_ = role == tls::Session::Role::client;
  error_code ignored;
  socket_.non_blocking(true, ignored);
  try {
    tls_ = std::make_unique<tls::Session>(owner_->tls_, socket_.native_handle(), role);
  } catch (const std::exception& e) {
    if (!tls_client_) {
      refuse(e.what());
      return false;
    }
    owner_->fail(fmt::format("impi: rank {}: TLS with {} failed: {}", owner_->startup_->my_rank,
                             owner_->describe_host(host_), e.what()));
    close_socket();
    return false;
  }
  return true;
}

void ImpiTransport::Connection::continue_handshake() {
  tls::Session::Result r = tls_->handshake();
  if (r.want == tls::Session::Want::nothing) return handshake_finished(r.error);
  auto self = shared_from_this();
  socket_.async_wait(r.want == tls::Session::Want::read ? tcp::socket::wait_read : tcp::socket::wait_write,
                     [self](const error_code& ec) {
                       p2p::GateScope scope(self->gate_);
                       if (!self->owner_ || self->state_ != State::handshaking) return;
                       if (ec) return self->handshake_finished(ec);
                       self->continue_handshake();
                     });
}

void ImpiTransport::Connection::handshake_finished(const error_code& ec) {
  if (!tls_client_) {
    if (ec) return refuse("TLS handshake failed: " + tls::describe_error(ec, tls_->native_handle()));
    became_open();
    return;
  }
  timer_.cancel();
  if (ec) {
    owner_->fail(fmt::format("impi: rank {}: TLS with {} failed: {}", owner_->startup_->my_rank,
                             owner_->describe_host(host_), tls::describe_error(ec, tls_->native_handle())));
    close_socket();
    return;
  }
  became_open();
  owner_->identified(shared_from_this(), host_);
}

void ImpiTransport::Connection::arm_handshake_timer() {
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

void ImpiTransport::Connection::server_handshake() {
  state_ = State::handshaking;
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
        if (self->start_tls(tls::Session::Role::server)) self->continue_handshake();
      });
}

void ImpiTransport::Connection::became_open() {
  state_ = State::open;
  error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);
  if (owner_->socbuf_ > 0) {
    socket_.set_option(asio::socket_base::receive_buffer_size(static_cast<int>(owner_->socbuf_)), ignored);
    socket_.set_option(asio::socket_base::send_buffer_size(static_cast<int>(owner_->socbuf_)), ignored);
  }
  socket_.non_blocking(true, ignored);
  size_window();
  if (!raw_.empty() || !queue_.empty()) start_write();
  start_reading();
}

// The window of this connection: enough counted packets in flight per proc
// pair to fill impi.link_bandwidth over the round trip the kernel measured
// during the TCP (and TLS) handshake, plus 2 x ackmark so that the
// receiver's PROTOACK (sent every ackmark packets) returns before the
// sender stops; never more than the job's IMPI_H_HIWATER, which is exactly
// the window when it is set.  On a LAN this is 2 x ackmark + 1 packets.
void ImpiTransport::Connection::size_window() {
  const ImpiTransport& o = *owner_;
  window_ = o.hiwater_;
  tcp_info info{};
  socklen_t len = sizeof info;
  double rtt = getsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_INFO, &info, &len) == 0 ? info.tcpi_rtt * 1e-6 : 0;
  if (!o.hiwater_set_ && rtt > 0) {
    double bdp_packets = std::ceil(rtt * o.link_bandwidth_ / static_cast<double>(o.datalen_));
    window_ = std::clamp<std::int64_t>(static_cast<std::int64_t>(bdp_packets) + 2 * o.ackmark_, o.ackmark_, o.hiwater_);
  }
  log().debug("impi: rank {}: connection with {}: round trip {:.3f} ms, window {} packets of {} bytes (IMPI_H_HIWATER {}{}){}",
              o.startup_->my_rank, remote(), rtt * 1e3, window_, o.datalen_, o.hiwater_, o.hiwater_set_ ? ", set" : "",
              tls_ ? fmt::format(", {} {}", SSL_get_version(tls_->native_handle()),
                                 SSL_get_cipher_name(tls_->native_handle()))
                   : std::string());
}

void ImpiTransport::Connection::refuse(const std::string& why) {
  log().warn("impi: rank {}: refused an IMPI connection from {}: {}", owner_->startup_->my_rank, remote(), why);
  ImpiTransport* owner = owner_;
  close_socket();
  auto& list = owner->unidentified_;
  list.erase(std::remove_if(list.begin(), list.end(), [this](const auto& c) { return c.get() == this; }), list.end());
}

void ImpiTransport::Connection::start_write() {
  // The bytes leave now (the caller may return from MPI and not come back
  // for a while); under TLS the completions come from a later handler, as
  // asio's do on the plain path.
  if (tls_) return tls_flush(true);
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
  socket_.async_write_some(std::move(buffers), [self](const error_code& ec, std::size_t n) {
    p2p::GateScope scope(self->gate_);
    self->on_written(ec, n);
  });
}

std::span<const std::byte> ImpiTransport::Connection::tls_bytes() {
  // The unwritten pieces in order: raw_, then each packet's head and payload.
  staging_.clear();
  auto piece = [this](std::span<const std::byte> b) -> bool {  // true: stop gathering
    if (b.empty()) return false;
    if (staging_.empty() && b.size() >= tls_record) return true;
    std::size_t take = std::min(b.size(), tls_record - staging_.size());
    staging_.insert(staging_.end(), b.begin(), b.begin() + static_cast<std::ptrdiff_t>(take));
    return staging_.size() == tls_record || take < b.size();
  };
  if (piece(raw_)) return staging_.empty() ? std::span<const std::byte>(raw_) : std::span<const std::byte>(staging_);
  for (const OutPacket& p : queue_) {
    std::size_t skip = p.written;
    std::span<const std::byte> head(p.head.data(), p.head.size());
    std::span<const std::byte> payload(p.payload.data(), p.payload.size());
    if (skip < head.size()) {
      if (piece(head.subspan(skip))) return staging_.empty() ? head.subspan(skip) : std::span<const std::byte>(staging_);
      skip = 0;
    } else {
      skip -= head.size();
    }
    if (skip < payload.size() && piece(payload.subspan(skip)))
      return staging_.empty() ? payload.subspan(skip) : std::span<const std::byte>(staging_);
  }
  return staging_;
}

void ImpiTransport::Connection::tls_flush(bool from_send) {
  // write_pending_ is held through the loop: a packet queued by a completion
  // callback joins it instead of starting a second writer.  The session
  // copies what it takes, so packets complete as they are encrypted; their
  // records leave in batches, and write_idle() waits for the last of them.
  write_pending_ = true;
  std::size_t moved = 0;
  auto self = shared_from_this();
  for (;;) {
    std::span<const std::byte> bytes = tls_bytes();
    tls::Session::Result r = bytes.empty() ? tls_->flush() : tls_->write(bytes);
    if (r.error) {
      write_pending_ = false;
      return write_failed(r.error);
    }
    if (r.bytes > 0) {
      moved += r.bytes;
      account_written(r.bytes, from_send);
      if (!owner_ || state_ != State::open) break;
    }
    if (r.want != tls::Session::Want::nothing) {
      socket_.async_wait(r.want == tls::Session::Want::write ? tcp::socket::wait_write : tcp::socket::wait_read,
                         [self](const error_code& ec) {
                           p2p::GateScope scope(self->gate_);
                           if (!self->owner_ || ec == asio::error::operation_aborted) return;
                           if (ec) {
                             self->write_pending_ = false;
                             return self->write_failed(ec);
                           }
                           if (self->state_ == State::open) self->tls_flush();
                         });
      return;
    }
    if (bytes.empty()) break;  // everything went
    if (moved >= tls_turn) {
      asio::post(socket_.get_executor(), [self] {
        p2p::GateScope scope(self->gate_);
        if (self->owner_ && self->state_ == State::open) self->tls_flush();
      });
      return;
    }
  }
  write_pending_ = false;
}

void ImpiTransport::Connection::on_written(const error_code& ec, std::size_t n) {
  write_pending_ = false;
  if (!owner_ || ec == asio::error::operation_aborted) return;
  if (ec) return write_failed(ec);
  account_written(n);
  if (owner_ && (!queue_.empty() || !raw_.empty()) && !write_pending_ && state_ == State::open) start_write();
}

void ImpiTransport::Connection::account_written(std::size_t n, bool defer_reports) {
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
  if (done.empty()) return;
  if (defer_reports) {
    auto self = shared_from_this();
    asio::post(socket_.get_executor(), [self, done = std::move(done)] {
      p2p::GateScope scope(self->gate_);
      if (self->owner_) self->report_sent(done);
    });
    return;
  }
  report_sent(done);
}

void ImpiTransport::Connection::report_sent(const std::vector<std::pair<int, std::uint64_t>>& done) {
  ImpiTransport* owner = owner_;
  try {
    for (auto [peer, token] : done) owner->context_.sink->on_send_complete(peer, token);
  } catch (...) {
    owner->fail(std::current_exception());
  }
}

void ImpiTransport::Connection::write_failed(const error_code& ec) {
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

void ImpiTransport::Connection::acknowledge_quickly() {
  int one = 1;
  (void)::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

void ImpiTransport::Connection::start_reading() {
  if (read_pending_ || state_ != State::open) return;
  if (bulk_) acknowledge_quickly();
  if (tls_) return tls_read();
  std::span<std::byte> target = reader_.read_target();
  read_pending_ = true;
  auto self = shared_from_this();
  socket_.async_read_some(asio::buffer(target.data(), target.size()), [self](const error_code& ec, std::size_t n) {
    p2p::GateScope scope(self->gate_);
    self->on_read(ec, n);
  });
}

void ImpiTransport::Connection::on_read(const error_code& ec, std::size_t n) {
  read_pending_ = false;
  if (!owner_ || ec == asio::error::operation_aborted) return;
  if (ec) return read_failed(ec);
  if (take_read(n)) start_reading();
}

bool ImpiTransport::Connection::take_read(std::size_t n) {
  try {
    if (reader_.received(n)) reader_.end_payload(*owner_->context_.sink);
    parse();
  } catch (const WireError& e) {
    if (owner_) protocol_error(e.what());
    return false;
  } catch (...) {
    if (owner_) owner_->fail(std::current_exception());
    close_socket();
    return false;
  }
  return owner_ && state_ == State::open;
}

void ImpiTransport::Connection::tls_read() {
  // read_pending_ is held through the loop (parse() may ask to read again).
  read_pending_ = true;
  std::size_t moved = 0;
  auto self = shared_from_this();
  for (;;) {
    if (moved >= tls_turn) {
      // OpenSSL may hold whole records already read: come back by post, not
      // by a wait for the socket.
      asio::post(socket_.get_executor(), [self] {
        p2p::GateScope scope(self->gate_);
        self->read_pending_ = false;
        if (self->owner_) self->start_reading();
      });
      return;
    }
    std::span<std::byte> target = reader_.read_target();
    tls::Session::Result r = tls_->read(target);
    if (r.want != tls::Session::Want::nothing) {
      socket_.async_wait(r.want == tls::Session::Want::read ? tcp::socket::wait_read : tcp::socket::wait_write,
                         [self](const error_code& ec) {
                           p2p::GateScope scope(self->gate_);
                           self->read_pending_ = false;
                           if (!self->owner_ || ec == asio::error::operation_aborted) return;
                           if (ec) return self->read_failed(ec);
                           self->start_reading();
                         });
      return;
    }
    if (r.error) {
      read_pending_ = false;
      return read_failed(r.error);
    }
    moved += r.bytes;
    if (!take_read(r.bytes)) break;
  }
  read_pending_ = false;
}

void ImpiTransport::Connection::read_failed(const error_code& ec) {
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
    text = fmt::format("impi: rank {} lost the IMPI connection to {}{} without PK_FINI: {} ({}that "
                       "cluster's job ended or the process died; see its mpirun's output)",
                       owner->startup_->my_rank, owner->describe_host(host_),
                       owner->startup_->relay ? " through impi-relay at " + relay::to_string(*owner->startup_->relay)
                                              : std::string(),
                       ec == asio::error::eof                       ? "end of file"
                       : ec == asio::ssl::error::stream_truncated ? "end of file (no TLS close_notify)"
                                                                    : ec.message(),
                       owner->startup_->relay ? "the relay ended, or " : "");
  }
  close_socket();
  if (owner->shutting_down_) {
    log().warn("{}", text);
    return;
  }
  owner->fail(text);
}

void ImpiTransport::Connection::protocol_error(const std::string& why) {
  if (host_ < 0) return refuse(why);
  owner_->fail(fmt::format("impi: rank {}: malformed IMPI data from {}: {}", owner_->startup_->my_rank,
                           owner_->describe_host(host_), why));
  close_socket();
}

void ImpiTransport::Connection::parse() {
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

}  // namespace gridmpi::impi
