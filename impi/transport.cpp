// The IMPI transport (impi/transport.hpp): the transport object.  Its host
// connections are impi/connection.cpp, its flow control
// impi/flow_control.cpp (impi/transport_internal.hpp lists the parts).
#include "impi/transport.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fmt/format.h>

#include "base/error.hpp"
#include "conf/checked.hpp"
#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "impi/params.hpp"
#include "impi/transport_internal.hpp"
#include "p2p/tcp/tcp_address.hpp"

namespace gridmpi::impi {

using gridmpi::log;

namespace {

const conf::Param<double> connect_timeout_param{
    "impi.connect_timeout", 60.0, "seconds",
    "how long MPI_Init waits for the IMPI host connections to the other clusters", conf::Level::tuner};

std::string proc_text(const JobMap& map, int rank) {
  const HostEntry& h = map.hosts[static_cast<std::size_t>(map.proc_host[static_cast<std::size_t>(rank)])];
  return fmt::format("rank {} (client {}, {}:{})", rank, h.client, to_string(h.address), h.port);
}

}  // namespace

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
  hiwater_set_ = conf::checked([] { return params::hiwater_set(); });
  link_bandwidth_ = conf::checked([] { return params::link_bandwidth(); });
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
  if (const auto& relay = startup_->relay) {
    // A private cluster reaches the others through its impi-relay.
    c->connect(tcp::endpoint(asio::ip::address_v4(relay->address), relay->port), connect_timeout_,
               static_cast<std::uint32_t>(my_host_),
               relay::format(relay::Line{relay::Line::Kind::connect, relay::Endpoint{*v4, h.port}, ""}));
    return;
  }
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
  caps.latency_us = declared_latency_us;
  caps.bandwidth_bytes_per_s = declared_bandwidth;
  caps.can_block = true;
  caps.rendezvous = p2p::Rendezvous::native;  // IMPI's long protocol (impi/translate.hpp)
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

p2p::SendStatus ImpiTransport::send(int peer, const p2p::Frame& frame, std::span<const std::byte> payload,
                                    std::uint64_t token) {
  if (failure_) std::rethrow_exception(failure_);
  if (!reachable(peer))
    throw MpiError(MPI_ERR_INTERN, fmt::format("impi: rank {} cannot reach rank {}", startup_->my_rank, peer));
  Translator::Outgoing out = translator_.to_packet(peer, frame, payload.size());
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
  if (!in.deliver) return {};
  if (in.carries_payload) {
    *deliver = true;
    return context_.sink->on_frame_begin(peer, in.frame, h.len);
  }
  p2p::Placement p = context_.sink->on_frame_begin(peer, in.frame, 0);
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
