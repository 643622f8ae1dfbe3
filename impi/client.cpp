// The IMPI client state machine (impi/client.hpp).
#include "impi/client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace gridmpi::impi {

namespace {

long long whole_seconds(std::chrono::milliseconds ms) { return (ms.count() + 999) / 1000; }

std::vector<std::byte> int4_values(const std::vector<LocalHost>& hosts, std::int32_t LocalHost::*field) {
  std::vector<std::byte> out;
  for (const auto& h : hosts) append_u32(out, static_cast<std::uint32_t>(h.*field));
  return out;
}

std::vector<std::byte> one_int4(std::int32_t value) {
  std::vector<std::byte> out;
  append_u32(out, static_cast<std::uint32_t>(value));
  return out;
}

}  // namespace

const char* client_state_name(ClientSession::State state) noexcept {
  switch (state) {
    case ClientSession::State::idle: return "idle";
    case ClientSession::State::auth_choice: return "authenticating";
    case ClientSession::State::joining: return "joining";
    case ClientSession::State::exchanging: return "exchanging labels";
    case ClientSession::State::ready: return "ready";
    case ClientSession::State::finished: return "finished";
    case ClientSession::State::failed: return "failed";
  }
  return "?";
}

ClientSession::ClientSession(ClientSettings settings) : settings_(std::move(settings)) {
  labels_.my_client = settings_.client;
  if (!settings_.tls && settings_.tls_from_parameters) {
    try {
      settings_.tls = tls::context_from_parameters();
    } catch (const std::exception& e) {
      tls_config_error_ = e.what();
    }
  }
}

std::vector<ClientAction> ClientSession::take_actions() {
  std::vector<ClientAction> out;
  out.swap(actions_);
  return out;
}

std::string ClientSession::methods(std::uint32_t mask) const {
  std::string out;
  if (mask & auth_bit(auth_none)) out = "IMPI_AUTH_NONE";
  if (mask & auth_bit(auth_key)) out += out.empty() ? "IMPI_AUTH_KEY" : " and IMPI_AUTH_KEY";
  return out.empty() ? "nothing" : out;
}

void ClientSession::fail(std::string line) {
  if (state_ == State::failed || state_ == State::finished) return;
  state_ = State::failed;
  deadline_.reset();
  input_.clear();
  actions_.emplace_back(client_action::Failed{std::move(line)});
}

void ClientSession::send(std::vector<std::byte> bytes) {
  if (tls_) {
    tls_->write(bytes);
    flush_tls();
    return;
  }
  actions_.emplace_back(client_action::Send{std::move(bytes)});
}

void ClientSession::flush_tls() {
  auto raw = tls_->take_output();
  if (!raw.empty()) actions_.emplace_back(client_action::Send{std::move(raw)});
}

void ClientSession::connected(Clock::time_point now) {
  if (state_ != State::idle) return;
  std::uint32_t mask = settings_.auth.mask();
  if (mask == 0) {
    fail("no IMPI authentication is enabled: set IMPI_AUTH_NONE=1 or IMPI_AUTH_KEY=<number> (the same on "
         "impi-server and on every mpirun -client)");
    return;
  }
  if (!tls_config_error_.empty()) {
    fail(tls_config_error_);
    return;
  }
  state_ = State::auth_choice;
  if (settings_.startup_timeout.count() > 0) deadline_ = now + settings_.startup_timeout;
  if (settings_.tls) {
    // AUTH waits in the channel until the handshake is through.
    tls_ = std::make_unique<tls::Channel>(settings_.tls, tls::Channel::Role::client);
    tls_->start();
    flush_tls();
    if (tls_->failed()) {
      fail(fmt::format("cannot start TLS with impi-server at {}: {}", settings_.server, tls_->error()));
      return;
    }
  }
  send(encode_auth(mask));
}

void ClientSession::local_hosts(std::vector<LocalHost> hosts, Clock::time_point now) {
  if (state_ == State::failed || state_ == State::finished || hosts_) return;
  if (hosts.empty()) {
    fail("no local rank to announce to impi-server");
    return;
  }
  hosts_ = std::move(hosts);
  if (state_ == State::exchanging) send_labels();
  tick(now);
}

void ClientSession::send_labels() {
  if (labels_sent_ || !hosts_) return;
  labels_sent_ = true;
  const auto& hosts = *hosts_;
  auto count = static_cast<std::int32_t>(hosts.size());
  std::vector<std::byte> out;
  auto label = [&](std::int32_t code, const std::vector<std::byte>& data) {
    auto bytes = encode_coll_contribution(code, data);
    out.insert(out.end(), bytes.begin(), bytes.end());
    sent_codes_.push_back(code);
  };
  // Canonical order (the IU server mis-collates anything else); every
  // process is its own host, serving one proc: itself.
  label(label_c_version, std::vector<std::byte>(8));  // the one version, 0.0
  label(label_c_nhosts, one_int4(count));
  label(label_c_nprocs, one_int4(count));
  label(label_c_datalen, one_int4(settings_.datalen));
  label(label_c_tagub, one_int4(0x7fffffff));
  label(label_c_coll_xsize, one_int4(settings_.coll_xsize));
  label(label_c_coll_maxlinear, one_int4(settings_.coll_maxlinear));
  std::vector<std::byte> addresses, reach, ports, ones, pids;
  for (const auto& h : hosts) {
    addresses.insert(addresses.end(), h.address.begin(), h.address.end());
    // H_IPV6/H_PORT: where the host is reached (a relay's port, when set);
    // P_IPV6: the proc's own identity, unchanged.
    const HostId& at = h.reach_port ? h.reach_address : h.address;
    reach.insert(reach.end(), at.begin(), at.end());
    append_u32(ports, h.reach_port ? h.reach_port : h.port);
    append_u32(ones, 1);
    append_u64(pids, static_cast<std::uint64_t>(h.pid));
  }
  label(label_h_ipv6, reach);
  label(label_h_port, ports);
  label(label_h_nprocs, ones);
  label(label_h_ackmark, int4_values(hosts, &LocalHost::ackmark));
  label(label_h_hiwater, int4_values(hosts, &LocalHost::hiwater));
  label(label_p_ipv6, addresses);
  label(label_p_pid, pids);
  // gridmpi's own label, when every local rank holds data alike
  // (impi/datarep.hpp); a server that does not know it drops it.
  if (hosts.front().datarep &&
      std::all_of(hosts.begin(), hosts.end(), [&](const LocalHost& h) { return h.datarep == hosts.front().datarep; })) {
    auto record = hosts.front().datarep->encode();
    label(label_gridmpi_datarep, std::vector<std::byte>(record.begin(), record.end()));
  }
  auto done = encode_done();
  out.insert(out.end(), done.begin(), done.end());
  send(std::move(out));
}

void ClientSession::received(std::span<const std::byte> bytes, Clock::time_point now) {
  if (state_ == State::failed || state_ == State::finished || bytes.empty()) return;
  std::vector<std::byte> plain;
  if (tls_) {
    bool ok = tls_->feed(bytes, plain);
    flush_tls();
    if (!ok) {
      fail(fmt::format("TLS with impi-server at {} failed: {}", settings_.server, tls_->error()));
      return;
    }
    if (plain.empty()) {  // handshake records, session tickets
      tick(now);
      return;
    }
    bytes = plain;
  } else if (state_ == State::auth_choice && input_.empty() && tls::looks_like_tls(bytes)) {
    fail(fmt::format("impi-server at {} speaks TLS (impi.tls is on there, off here): set impi.tls = true with "
                     "impi.tls_cert, impi.tls_key and impi.tls_ca on this side too (site file [impi] section)",
                     settings_.server));
    return;
  }
  if (state_ == State::ready) {
    // The protocol has nothing for the server to say until FINI.
    fail(fmt::format("impi-server at {} sent data after the start-up was complete (nothing is expected until FINI): "
                     "is it an IMPI server of another version?",
                     settings_.server));
    return;
  }
  if (state_ == State::idle) {
    fail(fmt::format("impi-server at {} sent data before this side spoke: is it an IMPI server?", settings_.server));
    return;
  }
  input_.insert(input_.end(), bytes.begin(), bytes.end());
  parse();
  tick(now);
}

void ClientSession::parse() {
  std::size_t used = 0;
  auto left = [&] { return input_.size() - used; };
  while (state_ != State::failed && state_ != State::ready) {
    if (state_ == State::auth_choice) {
      // The choice is 8 raw bytes, no command header (section 3.3).
      if (left() < 8) break;
      auto method = static_cast<std::int32_t>(get_u32(input_.data() + used));
      std::uint32_t length = get_u32(input_.data() + used + 4);
      used += 8;
      std::uint32_t mask = settings_.auth.mask();
      if (method != auth_none && method != auth_key) {
        fail(fmt::format("impi-server at {} chose authentication method {}, unknown here (this side offers {}): is "
                         "it an IMPI server?",
                         settings_.server, method, methods(mask)));
        return;
      }
      const char* name = method == auth_none ? "IMPI_AUTH_NONE" : "IMPI_AUTH_KEY";
      if (!(mask & auth_bit(method))) {
        fail(fmt::format("impi-server chose {}, which this side did not offer (it offers {}): set the same "
                         "IMPI_AUTH_NONE / IMPI_AUTH_KEY on impi-server and on every mpirun -client",
                         name, methods(mask)));
        return;
      }
      if (length != 0) {
        fail(fmt::format("impi-server at {} announces {} bytes of {} data (the method has none): is it an IMPI "
                         "server of another version?",
                         settings_.server, length, name));
        return;
      }
      auth_chosen_ = method;
      if (method == auth_key) send(encode_auth_key(*settings_.auth.key));
      send(encode_impi(settings_.client));
      state_ = State::joining;
      continue;
    }
    if (left() < CommandHeader::size) break;
    auto header = CommandHeader::decode(std::span(input_.data() + used, left()));
    if (!is_known_command(header.command)) {
      fail(fmt::format("impi-server at {} sent an unknown command {} while {}: is it an IMPI server?",
                       settings_.server, command_name(header.command), client_state_name(state_)));
      return;
    }
    if (header.length > max_payload) {
      fail(fmt::format("impi-server at {} announced a {} command of {} bytes (at most {} accepted): is it an IMPI "
                       "server?",
                       settings_.server, command_name(header.command), header.length, max_payload));
      return;
    }
    if (left() < CommandHeader::size + header.length) break;
    std::span payload(input_.data() + used + CommandHeader::size, header.length);
    used += CommandHeader::size + header.length;
    if (!handle_command(header.command, payload)) return;
  }
  if (state_ == State::failed) return;
  input_.erase(input_.begin(), input_.begin() + static_cast<std::ptrdiff_t>(used));
  if (state_ == State::ready && !input_.empty())
    fail(fmt::format("impi-server at {} sent data after its DONE (nothing is expected until FINI): is it an IMPI "
                     "server of another version?",
                     settings_.server));
}

bool ClientSession::handle_command(std::uint32_t command, std::span<const std::byte> payload) {
  auto unexpected = [&] {
    fail(fmt::format("impi-server at {} sent an unexpected {} command ({} bytes) while {}: a protocol error of the "
                     "server",
                     settings_.server, command_name(command), payload.size(), client_state_name(state_)));
    return false;
  };
  if (state_ == State::joining) {
    if (command != static_cast<std::uint32_t>(Command::impi)) return unexpected();
    if (payload.size() != 4) {
      fail(fmt::format("impi-server at {} answered IMPI with {} bytes instead of 4: a protocol error of the server",
                       settings_.server, payload.size()));
      return false;
    }
    auto size = static_cast<std::int32_t>(get_u32(payload.data()));
    if (size < 1 || size > 32) {
      fail(fmt::format("impi-server at {} announced {} clients (IMPI allows 1 to 32): a protocol error of the server",
                       settings_.server, size));
      return false;
    }
    if (settings_.client >= size) {
      fail(fmt::format("-client {} is out of range: the server expects clients 0..{}; use a client number below {} "
                       "(or start impi-server -server {})",
                       settings_.client, size - 1, size, settings_.client + 1));
      return false;
    }
    labels_.nclients = size;
    state_ = State::exchanging;
    send_labels();
    return true;
  }
  // exchanging
  if (command == static_cast<std::uint32_t>(Command::coll)) {
    if (payload.size() < 8) {
      fail(fmt::format("impi-server at {} sent a COLL answer of {} bytes (at least 8: label and mask): a protocol "
                       "error of the server",
                       settings_.server, payload.size()));
      return false;
    }
    auto code = static_cast<std::int32_t>(get_u32(payload.data()));
    std::uint32_t mask = get_u32(payload.data() + 4);
    std::uint32_t all = labels_.nclients == 32 ? 0xffffffffu : (1u << labels_.nclients) - 1;
    if (mask & ~all) {
      fail(fmt::format("impi-server at {} sent {} with client mask 0x{:x}, but the job has clients 0..{}: a protocol "
                       "error of the server",
                       settings_.server, label_name(code), mask, labels_.nclients - 1));
      return false;
    }
    if (mask == 0 && payload.size() > 8) {
      fail(fmt::format("impi-server at {} sent {} with data but no contributing client: a protocol error of the "
                       "server",
                       settings_.server, label_name(code)));
      return false;
    }
    CollatedLabel label;
    label.mask = mask;
    label.data.assign(payload.begin() + 8, payload.end());
    if (!labels_.labels.emplace(code, std::move(label)).second) {
      fail(fmt::format("impi-server at {} sent {} twice: a protocol error of the server", settings_.server,
                       label_name(code)));
      return false;
    }
    return true;
  }
  if (command == static_cast<std::uint32_t>(Command::done)) {
    if (!payload.empty()) {
      fail(fmt::format("impi-server at {} sent DONE with {} bytes of payload (none expected): a protocol error of the "
                       "server",
                       settings_.server, payload.size()));
      return false;
    }
    if (!labels_sent_) {
      fail(fmt::format("impi-server at {} sent DONE before this cluster sent its labels: a protocol error of the "
                       "server",
                       settings_.server));
      return false;
    }
    complete();
    return state_ == State::ready;
  }
  return unexpected();
}

void ClientSession::complete() {
  std::uint32_t mine = 1u << settings_.client;
  for (std::int32_t code : sent_codes_) {
    if (code == label_gridmpi_datarep) continue;  // other servers drop it: then external32
    auto it = labels_.labels.find(code);
    if (it == labels_.labels.end() || !(it->second.mask & mine)) {
      fail(fmt::format("impi-server at {} finished the start-up without this cluster's {}: a protocol error of the "
                       "server",
                       settings_.server, label_name(code)));
      return;
    }
  }
  // Checked here, once, so that data that do not fit together are one line
  // from mpirun rather than the same error from every rank.
  try {
    (void)JobMap::from_labels(labels_);
  } catch (const WireError& e) {
    fail(fmt::format("the clusters' IMPI start-up data do not fit together: {}", e.what()));
    return;
  }
  state_ = State::ready;
  deadline_.reset();
  actions_.emplace_back(client_action::StartupComplete{labels_});
}

void ClientSession::connection_lost(const std::string& os_error, Clock::time_point) {
  if (state_ == State::failed || state_ == State::finished) return;
  std::string what = os_error.empty() ? "impi-server closed the connection"
                                      : "lost the connection to impi-server (" + os_error + ")";
  if (tls_ && !tls_->handshake_done()) {
    fail(fmt::format("{} during the TLS handshake: {} does not speak TLS (set impi.tls on impi-server too, or off "
                     "here) or it rejected this side's certificate (see impi-server's output)",
                     what, settings_.server));
    return;
  }
  if (!input_.empty()) {
    fail(fmt::format("{} in the middle of a message ({} bytes of it arrived) while {}: is {} an IMPI server?", what,
                     input_.size(), client_state_name(state_), settings_.server));
    return;
  }
  switch (state_) {
    case State::idle:
    case State::auth_choice:
      // The server also closes every connection when another client
      // fails: the two causes look the same from here.
      fail(fmt::format("{} during authentication: it accepts none of the methods this side enables ({}), or "
                       "another cluster's job already failed; set the same IMPI_AUTH_NONE or IMPI_AUTH_KEY on "
                       "impi-server and on every mpirun -client",
                       what, methods(settings_.auth.mask())));
      return;
    case State::joining:
      // impi-server refuses a newcomer by closing its connection alone (no
      // IMPI answer), and says why in its own output.
      if (auth_chosen_ == auth_key)
        fail(fmt::format("{} after authentication, when this cluster asked to be client {}: impi-server refuses a "
                         "wrong IMPI_AUTH_KEY, and a client number that another mpirun already has or that is beyond "
                         "its -server count (its output says which); use the server's key and a free mpirun -client "
                         "number (if both are right, another cluster's job already failed)",
                         what, settings_.client));
      else
        fail(fmt::format("{} when this cluster asked to be client {}: impi-server refuses a client number that another "
                         "mpirun already has or that is beyond its -server count (its output says which); run this "
                         "mpirun with a free -client number (if it is right, another cluster's job already failed)",
                         what, settings_.client));
      return;
    case State::exchanging:
      fail(what + " during the start-up: another cluster's job failed or the server stopped; ending this cluster's "
                  "job");
      return;
    case State::ready:
      fail(what + ": another cluster's job failed or the server stopped; ending this cluster's job");
      return;
    case State::finished:
    case State::failed:
      return;
  }
}

void ClientSession::finish() {
  if (state_ != State::ready) return;
  state_ = State::finished;
  send(encode_fini());
  if (tls_) {
    tls_->close();
    flush_tls();
  }
  actions_.emplace_back(client_action::Close{});
}

std::optional<ClientSession::Clock::time_point> ClientSession::next_deadline() const { return deadline_; }

void ClientSession::tick(Clock::time_point now) {
  if (!deadline_ || now < *deadline_) return;
  long long limit = whole_seconds(settings_.startup_timeout);
  if (state_ == State::exchanging && !labels_sent_) {
    fail(fmt::format("this cluster's ranks did not all publish their IMPI address within {} s of joining "
                     "impi-server: are they stuck before MPI_Init? (raise impi.startup_timeout if they are slow)",
                     limit));
    return;
  }
  if (labels_.nclients > 0)
    fail(fmt::format("impi-server did not complete the start-up within {} s: are all {} clusters started with "
                     "mpirun -client 0..{}? (impi.startup_timeout)",
                     limit, labels_.nclients, labels_.nclients - 1));
  else
    fail(fmt::format("impi-server did not complete the start-up within {} s: are all clusters started with mpirun "
                     "-client? (impi.startup_timeout)",
                     limit));
}

}  // namespace gridmpi::impi
