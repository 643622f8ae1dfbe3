// impi-server's state machine (impi/server.hpp).
#include "impi/server.hpp"

#include <fmt/format.h>

#include <bit>
#include <csignal>
#include <stdexcept>
#include <utility>

#include "impi/tls.hpp"
#include "impi/wire.hpp"

namespace gridmpi::impi {

namespace {

constexpr std::size_t label_count = 15;  // known_labels()

std::string signal_name(int signo) {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return fmt::format("signal {}", signo);
  }
}

// The length a command must have, or nullopt for COLL (at least 4).
std::optional<std::uint32_t> fixed_length(Command c) {
  switch (c) {
    case Command::auth: case Command::impi: return 4;
    case Command::done: case Command::fini: return 0;
    case Command::coll: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::string describe_auth_mask(std::uint32_t mask) {
  std::string names;
  if (mask & auth_bit(auth_none)) names = "NONE";
  if (mask & auth_bit(auth_key)) names += names.empty() ? "KEY" : "+KEY";
  if (mask & ~(auth_bit(auth_none) | auth_bit(auth_key))) names += names.empty() ? "unknown methods" : "+unknown";
  if (names.empty()) names = "none";
  return fmt::format("0x{:x} = {}", mask, names);
}

ServerState::ServerState(ServerSettings settings) : settings_(std::move(settings)) {
  if (settings_.clients < 1 || settings_.clients > 32)
    throw std::invalid_argument(fmt::format("impi-server: {} clients: use 1..32", settings_.clients));
  if (!settings_.auth_none && !settings_.auth_key)
    throw std::invalid_argument("impi-server: no authentication method enabled");
  clients_.resize(static_cast<std::size_t>(settings_.clients));
  contributions_.assign(label_count, std::vector<std::optional<std::vector<std::byte>>>(clients_.size()));
}

std::uint32_t ServerState::server_mask() const noexcept {
  return (settings_.auth_none ? auth_bit(auth_none) : 0u) | (settings_.auth_key ? auth_bit(auth_key) : 0u);
}

std::vector<ServerAction> ServerState::take_actions() { return std::exchange(actions_, {}); }

void ServerState::send(ConnectionId id, std::vector<std::byte> bytes) {
  actions_.emplace_back(server_action::Send{id, std::move(bytes)});
}
void ServerState::close(ConnectionId id) { actions_.emplace_back(server_action::Close{id}); }
void ServerState::print(std::string line) { actions_.emplace_back(server_action::Print{std::move(line)}); }
void ServerState::verbose(const std::string& line) {
  if (settings_.verbose) print("impi-server: " + line);
}

std::string ServerState::who(const Connection& c) const {
  if (c.rank >= 0) return fmt::format("client {} ({})", c.rank, c.peer);
  return "client from " + c.peer;
}

// ---- events ---------------------------------------------------------------------

void ServerState::connection_opened(ConnectionId id, std::string peer) {
  if (finished()) {
    close(id);
    return;
  }
  verbose("connection from " + peer);
  connections_[id].peer = std::move(peer);
}

void ServerState::received(ConnectionId id, std::span<const std::byte> bytes) {
  if (finished()) return;
  auto it = connections_.find(id);
  if (it == connections_.end()) return;  // closed by us; late bytes are dropped
  Connection& c = it->second;
  if (c.bytes_received == 0 && c.phase == Phase::auth && tls::looks_like_tls(bytes)) {
    misbehaved(id, c,
               fmt::format("{} speaks TLS (its first byte is 0x{:02x}, a TLS record, where AUTH was expected): "
                           "impi.tls is on there and off at impi-server; set impi.tls on both sides (or off on both)",
                           who(c), static_cast<unsigned>(bytes[0])));
    return;
  }
  c.bytes_received += bytes.size();
  c.input.insert(c.input.end(), bytes.begin(), bytes.end());
  std::size_t used = 0;
  for (;;) {
    std::size_t n = step(id, c, std::span<const std::byte>(c.input).subspan(used));
    if (finished()) return;
    if (!connections_.contains(id)) return;  // FINI: the connection is gone
    if (n == 0) break;
    used += n;
  }
  c.input.erase(c.input.begin(), c.input.begin() + static_cast<std::ptrdiff_t>(used));
}

void ServerState::connection_closed(ConnectionId id) {
  if (finished()) return;
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  if (c.phase == Phase::auth && c.bytes_received == 0) {
    verbose("connection from " + c.peer + " closed without sending anything (a probe, not a client): ignored");
    connections_.erase(it);
    return;
  }
  if (c.rank < 0) {
    // Not a client of this job yet: nothing of the job depends on it.
    const char* when = c.phase == Phase::identify ? "before sending IMPI (its client rank)" : "during authentication";
    print(fmt::format("impi-server: {} disconnected {}: it was not a client yet; the job goes on{}", who(c), when,
                      waiting_for()));
    connections_.erase(it);
    return;
  }
  std::string what = fmt::format("{} disconnected before FINI", who(c));
  connections_.erase(it);  // already gone: not closed again
  fail(what, true);
}

void ServerState::connection_failed(ConnectionId id, const std::string& why) {
  if (finished()) return;
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  std::string what = fmt::format("{}: {}", who(it->second), why);
  if (it->second.rank < 0) {
    connections_.erase(it);  // the adapter closes it
    refuse(std::nullopt, what);
    return;
  }
  connections_.erase(it);
  fail(what, true);
}

void ServerState::interrupted(int signo) {
  if (finished()) return;
  std::size_t n = connections_.size();
  stop(n == 0 ? fmt::format("impi-server: interrupted by {} (no client was connected)", signal_name(signo))
              : fmt::format("impi-server: interrupted by {}: closing {} client connection{}", signal_name(signo), n,
                            n == 1 ? "" : "s"),
       1);
}

// ---- one command ----------------------------------------------------------------

std::size_t ServerState::step(ConnectionId id, Connection& c, std::span<const std::byte> in) {
  if (c.phase == Phase::key) {
    if (in.size() < 8) return 0;
    on_key(id, c, get_u64(in.data()));
    return 8;
  }
  if (in.size() < CommandHeader::size) return 0;
  CommandHeader h = CommandHeader::decode(in);
  if (!is_known_command(h.command)) {
    misbehaved(id, c,
               fmt::format("{} sent {} where a command was expected (not an IMPI client, or out of step with the "
                           "protocol)",
                           who(c), command_name(h.command)));
    return 0;
  }
  auto command = static_cast<Command>(h.command);
  std::string name = command_name(h.command);

  // Order first: a command in the wrong place is the clearer message.
  auto out_of_order = [&](const char* why) {
    misbehaved(id, c, fmt::format("{} sent {} {}", who(c), name, why));
    return std::size_t{0};
  };
  switch (c.phase) {
    case Phase::auth:
      if (command != Command::auth) return out_of_order("before AUTH (a client starts with AUTH)");
      break;
    case Phase::key: break;  // handled above
    case Phase::identify:
      if (command == Command::auth) return out_of_order("twice");
      if (command != Command::impi) return out_of_order("before IMPI (its client rank)");
      break;
    case Phase::collate:
      if (command == Command::auth || command == Command::impi) return out_of_order("again after joining");
      if (command == Command::fini) return out_of_order("before DONE");
      break;
    case Phase::done:
      if (command == Command::coll) return out_of_order("after DONE");
      if (command != Command::fini) return out_of_order("again after DONE");
      if (!done_sent_)
        return out_of_order("before the start-up exchange ended (the server had not sent DONE yet)");
      break;
  }

  if (auto want = fixed_length(command); want && h.length != *want) {
    misbehaved(id, c, fmt::format("{} sent {} with length {} (must be {})", who(c), name, h.length, *want));
    return 0;
  }
  if (command == Command::coll && h.length < 4) {
    misbehaved(id, c,
               fmt::format("{} sent COLL with length {} (must be at least 4, for the label)", who(c), h.length));
    return 0;
  }
  if (h.length > settings_.max_command_length) {
    misbehaved(id, c, fmt::format("{} sent {} with length {} (more than the limit of {} bytes)", who(c), name,
                                  h.length, settings_.max_command_length));
    return 0;
  }
  if (in.size() - CommandHeader::size < h.length) return 0;
  auto payload = in.subspan(CommandHeader::size, h.length);
  switch (command) {
    case Command::auth: on_auth(id, c, get_u32(payload.data())); break;
    case Command::impi: on_impi(id, c, static_cast<std::int32_t>(get_u32(payload.data()))); break;
    case Command::coll:
      on_coll(c, static_cast<std::int32_t>(get_u32(payload.data())), payload.subspan(4));
      break;
    case Command::done: on_done(c); break;
    case Command::fini: on_fini(id, c); break;
  }
  return CommandHeader::size + h.length;
}

void ServerState::on_auth(ConnectionId id, Connection& c, std::uint32_t mask) {
  std::uint32_t common = mask & server_mask();
  if (common & auth_bit(auth_key)) {
    send(id, encode_auth_choice(auth_key));
    c.phase = Phase::key;
    verbose(fmt::format("{}: offers {}; chose KEY", who(c), describe_auth_mask(mask)));
  } else if (common & auth_bit(auth_none)) {
    send(id, encode_auth_choice(auth_none));
    c.phase = Phase::identify;
    verbose(fmt::format("{}: offers {}; chose NONE", who(c), describe_auth_mask(mask)));
  } else {
    refuse(id, fmt::format("{}: no common authentication method (client offers {}, server enables {}); set "
                           "IMPI_AUTH_NONE, or the same IMPI_AUTH_KEY, on the server and every cluster",
                           who(c), describe_auth_mask(mask), describe_auth_mask(server_mask())));
  }
}

void ServerState::on_key(ConnectionId id, Connection& c, std::uint64_t key) {
  if (key != settings_.auth_key) {
    refuse(id, fmt::format("{}: wrong IMPI_AUTH_KEY (set the same key on the server and every cluster)", who(c)));
    return;
  }
  c.phase = Phase::identify;
  verbose(who(c) + ": key accepted");
}

void ServerState::on_impi(ConnectionId id, Connection& c, std::int32_t rank) {
  if (rank < 0 || rank >= settings_.clients) {
    // The size tells a client that checks rank < size (GridMPI's, LAM's)
    // exactly what is wrong; then the connection goes.
    send(id, encode_impi(settings_.clients));
    refuse(id, fmt::format("{}: client rank {} is out of range: impi-server -server {} takes clients 0..{} (check "
                           "mpirun -client)",
                           who(c), rank, settings_.clients, settings_.clients - 1));
    return;
  }
  Client& client = clients_[static_cast<std::size_t>(rank)];
  if (client.connection) {
    refuse(id, fmt::format("{}: client rank {} is already taken by {} (give every mpirun -client a different "
                           "number)",
                           who(c), rank, client.peer));
    return;
  }
  client.connection = id;
  client.peer = c.peer;
  c.rank = rank;
  c.phase = Phase::collate;
  ++joined_;
  send(id, encode_impi(settings_.clients));
  verbose(fmt::format("{}: joined ({} of {})", who(c), joined_, settings_.clients));
  flush();
}

void ServerState::on_coll(Connection& c, std::int32_t label, std::span<const std::byte> data) {
  int index = label_index(label);
  if (index < 0) {
    verbose(fmt::format("{}: dropped unknown {} ({} bytes)", who(c), label_name(label), data.size()));
    return;
  }
  Client& client = clients_[static_cast<std::size_t>(c.rank)];
  if (index == client.progress) {
    fail(fmt::format("{} sent {} twice", who(c), label_name(label)));
    return;
  }
  if (index < client.progress) {
    fail(fmt::format("{} sent {} after {} (labels must come in the canonical order, docs/impi-protocol.md 3.6)",
                     who(c), label_name(label), known_labels()[static_cast<std::size_t>(client.progress)].name));
    return;
  }
  client.progress = index;
  contributions_[static_cast<std::size_t>(index)][static_cast<std::size_t>(c.rank)] =
      std::vector<std::byte>(data.begin(), data.end());
  verbose(fmt::format("{}: {} ({} bytes)", who(c), label_name(label), data.size()));
  flush();
}

void ServerState::on_done(Connection& c) {
  clients_[static_cast<std::size_t>(c.rank)].done = true;
  c.phase = Phase::done;
  ++dones_;
  verbose(fmt::format("{}: DONE ({} of {})", who(c), dones_, settings_.clients));
  flush();
}

void ServerState::on_fini(ConnectionId id, Connection& c) {
  clients_[static_cast<std::size_t>(c.rank)].fini = true;
  ++finis_;
  verbose(fmt::format("{}: FINI ({} of {})", who(c), finis_, settings_.clients));
  // The client may close its end now; the server closes it in any case.
  connections_.erase(id);
  close(id);
  if (finis_ == settings_.clients) {
    verbose(fmt::format("all {} clients sent FINI: the job is over, exiting", settings_.clients));
    stop("", 0);
  }
}

// ---- collation -------------------------------------------------------------------

void ServerState::broadcast(const std::vector<std::byte>& bytes) {
  for (const Client& client : clients_) send(*client.connection, bytes);
}

void ServerState::flush() {
  if (joined_ < settings_.clients) return;  // a label needs every client's answer
  while (next_label_ < label_count) {
    for (const Client& client : clients_)
      if (!client.done && client.progress < static_cast<int>(next_label_)) return;
    std::uint32_t mask = 0;
    std::vector<std::byte> data;
    auto& slots = contributions_[next_label_];
    for (std::size_t rank = 0; rank < slots.size(); ++rank) {
      if (!slots[rank]) continue;
      mask |= 1u << rank;
      data.insert(data.end(), slots[rank]->begin(), slots[rank]->end());
      slots[rank].reset();
    }
    std::int32_t label = known_labels()[next_label_].code;
    const bool standard = next_label_ < standard_labels().size();
    ++next_label_;
    // A label nobody submitted is not sent: no client waits for it.
    if (mask == 0) continue;
    const std::vector<std::byte> result = encode_coll_result(label, mask, data);
    if (standard) {
      broadcast(result);
      verbose(fmt::format("sent {} to {} clients (mask 0x{:x}, {} bytes)", label_name(label), clients_.size(), mask,
                          data.size()));
    } else {
      // gridmpi's own label goes to the clients that sent it, and only to
      // them: another implementation reads an answer to each label it sent
      // and then DONE, and takes anything else for a protocol error (LAM/MPI
      // 7.1.4: "expecting IMPI_CMD_DONE from server, got COLL").
      for (std::size_t rank = 0; rank < clients_.size(); ++rank)
        if (mask & (1u << rank)) send(*clients_[rank].connection, result);
      verbose(fmt::format("sent {} to the {} clients that sent it (mask 0x{:x}, {} bytes)", label_name(label),
                          std::popcount(mask), mask, data.size()));
    }
    broadcast_.push_back(label);
  }
  if (dones_ == settings_.clients && !done_sent_) {
    done_sent_ = true;
    broadcast(encode_done());
    verbose(fmt::format("start-up exchange complete: DONE sent to {} clients; waiting for FINI", clients_.size()));
  }
}

// ---- refusing one connection, ending the job ---------------------------------------

std::string ServerState::waiting_for() const {
  if (joined_ == settings_.clients) return "";
  return fmt::format(" ({} of {} clients joined)", joined_, settings_.clients);
}

void ServerState::misbehaved(ConnectionId id, const Connection& c, const std::string& what) {
  if (c.rank < 0)
    refuse(id, what);
  else
    fail(what);
}

void ServerState::refuse(std::optional<ConnectionId> id, const std::string& what) {
  print(fmt::format("impi-server: {}: refused, only this connection is closed; the job goes on{}", what,
                    waiting_for()));
  if (!id) return;
  connections_.erase(*id);
  close(*id);
}


void ServerState::fail(const std::string& what, bool connection_gone) {
  bool others = connections_.size() > (connection_gone ? 0u : 1u);
  stop(fmt::format("impi-server: {}: the job is over{}", what, others ? "; closing the other clients" : ""), 1);
}

void ServerState::stop(const std::string& line, int exit_status) {
  if (!line.empty()) print(line);
  for (const auto& [id, c] : connections_) close(id);
  connections_.clear();
  exit_status_ = exit_status;
  actions_.emplace_back(server_action::Finish{exit_status});
}

}  // namespace gridmpi::impi
