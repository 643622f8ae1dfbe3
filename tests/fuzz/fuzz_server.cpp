// Fuzz target: impi-server's state machine (impi/server.hpp) with several
// connections, bytes in any order and in any pieces, closes and signals.
// Besides ASan/UBSan it checks the actions it returns:
//  * Send / Close only for a connection that is open (opened, not closed by
//    the peer, not closed by the server), Print one non-empty line, at most
//    one Finish, exit status 0 only when every client sent FINI, and after
//    Finish every connection is closed;
//  * what each connection is sent is a well-formed server stream: the 8-byte
//    AUTH choice of a method the server enables, {IMPI, M}, COLL results of
//    known labels in strictly canonical order with a non-empty mask of
//    joined clients, at most one DONE and nothing after it, whole messages;
//  * every client receives the same broadcasts (= broadcast_labels()), and
//    after a clean run (status 0) they are exactly the contributions that
//    the clients' own streams carry, concatenated in client rank order;
//  * gridmpi's own label (GRIDMPI_DATAREP) only to the clients that sent
//    it, after the standard ones;
//  * when the input ends, every peer closes: a server that had a client
//    must then have finished (no waiting forever; connections that never
//    became clients are refused alone and the server waits on).
//
// Input (tests/fuzz/fuzz_input.hpp reads it front to back; seeds:
// make_seeds.cpp):
//   clients:u8 flags:u8 chunk:u8 limit:u8 key:u64, then operations op:u8 ...
//   clients = 1 + clients % 32; flags: bit 0 IMPI_AUTH_NONE, bit 1
//   IMPI_AUTH_KEY (neither: NONE), bit 2 verbose, bit 3 also feed events the
//   adapter never produces (bytes and closes for connections the server has
//   closed); chunk: byte strings arrive in pieces of that size (0: whole);
//   limit: max_command_length = 8 * limit (0: the default, 16 MiB).
//   op % 11: 0 open | 1 bytes conn blob | 2 close conn | 3 signal which |
//   4 AUTH conn mask:u32 | 5 key conn wrong:u8 [key:u64 when wrong is odd] |
//   6 IMPI conn rank:u32 | 7 COLL conn label:u8 (14: unknown, 15: GRIDMPI_DATAREP) [code:u32 when label > 15]
//   blob | 8 DONE conn | 9 FINI conn | 10 header conn command:u32 length:u32
//   conn:u8 picks one of the connections opened so far (conn % count).
#include <algorithm>
#include <array>
#include <csignal>
#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include "impi/server.hpp"
#include "impi/wire.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gridmpi::impi;
using gridmpi::fuzz::Bytes;
using gridmpi::fuzz::hex;
using gridmpi::fuzz::Input;

namespace {

struct Peer {
  bool server_closed = false;
  bool peer_closed = false;
  std::uint64_t fed = 0;  // bytes given to received() while open
  Bytes in;               // those bytes
  Bytes out;              // everything the server sent it
  bool open() const { return !server_closed && !peer_closed; }
};

class Harness {
 public:
  Harness(ServerSettings settings, std::size_t chunk, bool outside_contract)
      : settings_(settings), server_(settings), chunk_(chunk), outside_contract_(outside_contract) {}

  void run(Input& in) {
    while (!in.empty()) {
      std::uint8_t op = in.u8() % 11;
      if (op == 0) {
        open();
        continue;
      }
      if (op == 3) {
        static const int signals[] = {SIGINT, SIGTERM, SIGHUP, 0};
        server_.interrupted(signals[in.u8() % 4]);
        collect();
        FUZZ_CHECK(server_.finished(), "interrupted() did not end the server");
        continue;
      }
      std::uint8_t which = in.u8();
      Bytes message;
      switch (op) {
        case 1: message = in.blob(); break;
        case 2: break;
        case 4: message = encode_auth(in.u32()); break;
        case 5: {
          std::uint8_t wrong = in.u8();
          std::uint64_t key = (wrong & 1) ? in.u64() : settings_.auth_key.value_or(0);
          message = encode_auth_key(key);
          break;
        }
        case 6: message = encode_impi(static_cast<std::int32_t>(in.u32())); break;
        case 7: {
          std::uint8_t label = in.u8();
          std::int32_t code = label < 14 ? standard_labels()[label].code
                              : label == 14 ? 0x7777
                              : label == 15 ? label_gridmpi_datarep
                                            : static_cast<std::int32_t>(in.u32());
          Bytes data = in.blob();
          message = encode_coll_contribution(code, data);
          break;
        }
        case 8: message = encode_done(); break;
        case 9: message = encode_fini(); break;
        case 10: {
          message.resize(CommandHeader::size);
          std::uint32_t command = in.u32();
          CommandHeader{command, in.u32()}.encode(message.data());
          break;
        }
      }
      if (peers_.empty()) continue;
      ConnectionId id = static_cast<ConnectionId>(which % peers_.size()) + 1;
      Peer& p = peers_[id];
      if (!p.open() && !outside_contract_) continue;
      if (op == 2) {
        if (p.peer_closed) continue;  // a socket closes once
        p.peer_closed = true;
        server_.connection_closed(id);
        collect();
      } else {
        deliver(id, message);
      }
    }
    // The end: every peer goes away.
    for (auto& [id, p] : peers_)
      if (p.open()) {
        p.peer_closed = true;
        server_.connection_closed(id);
        collect();
      }
    // A connection that never became a client is refused alone and the
    // server goes on waiting for the job's clients (impi/server.hpp); once
    // one has joined, its leaving ends the job.
    FUZZ_CHECK(server_.clients_joined() == 0 || server_.finished(),
               "every client is gone but the server has not finished (it would wait forever)");
    check_streams();
    if (server_.exit_status() == 0) check_collation();
  }

 private:
  void open() {
    ConnectionId id = peers_.size() + 1;
    peers_[id];
    server_.connection_opened(id, "10.0.0." + std::to_string(id % 250) + ":" + std::to_string(4000 + id));
    collect();
  }

  void deliver(ConnectionId id, const Bytes& message) {
    std::size_t step = chunk_ == 0 ? message.size() : chunk_;
    for (std::size_t at = 0; at < message.size(); at += step) {
      std::size_t n = std::min(step, message.size() - at);
      if (peers_[id].open() && !finish_seen_) {
        peers_[id].fed += n;
        peers_[id].in.insert(peers_[id].in.end(), message.begin() + static_cast<std::ptrdiff_t>(at),
                             message.begin() + static_cast<std::ptrdiff_t>(at + n));
      }
      server_.received(id, std::span<const std::byte>(message.data() + at, n));
      collect();
    }
  }

  void collect() {
    for (auto& action : server_.take_actions()) {
      if (auto* s = std::get_if<server_action::Send>(&action)) {
        FUZZ_CHECK(!finish_seen_, "Send after Finish");
        auto it = peers_.find(s->connection);
        FUZZ_CHECK(it != peers_.end(), "Send to a connection that was never opened");
        FUZZ_CHECK(it->second.open(), "Send to a closed connection " + std::to_string(s->connection));
        FUZZ_CHECK(!s->bytes.empty(), "Send of no bytes");
        it->second.out.insert(it->second.out.end(), s->bytes.begin(), s->bytes.end());
      } else if (auto* c = std::get_if<server_action::Close>(&action)) {
        auto it = peers_.find(c->connection);
        FUZZ_CHECK(it != peers_.end(), "Close of a connection that was never opened");
        FUZZ_CHECK(!it->second.server_closed, "Close twice for connection " + std::to_string(c->connection));
        FUZZ_CHECK(!it->second.peer_closed, "Close of a connection the peer had closed");
        it->second.server_closed = true;
      } else if (auto* p = std::get_if<server_action::Print>(&action)) {
        FUZZ_CHECK(!finish_seen_, "Print after Finish");
        FUZZ_CHECK(!p->line.empty() && p->line.find('\n') == std::string::npos,
                   "Print of an empty or multi-line text: '" + p->line + "'");
      } else if (auto* f = std::get_if<server_action::Finish>(&action)) {
        FUZZ_CHECK(!finish_seen_, "Finish twice");
        FUZZ_CHECK(f->exit_status == 0 || f->exit_status == 1, "exit status " + std::to_string(f->exit_status));
        FUZZ_CHECK(f->exit_status == 1 || server_.clients_finished() == settings_.clients,
                   "exit status 0 before every client sent FINI");
        finish_seen_ = true;
      }
    }
    FUZZ_CHECK(server_.finished() == finish_seen_, "finished() disagrees with the Finish action");
    if (finish_seen_) {
      FUZZ_CHECK(server_.exit_status().has_value(), "finished without an exit status");
      for (const auto& [id, p] : peers_)
        FUZZ_CHECK(!p.open(), "the server finished but connection " + std::to_string(id) + " is still open");
    }
  }

  // Each connection's bytes as a client would read them.
  void check_streams() {
    const std::uint32_t all = settings_.clients == 32 ? 0xffffffffu : (1u << settings_.clients) - 1;
    std::optional<Bytes> broadcasts;  // what follows the IMPI answer, same for every client
    std::vector<std::int32_t> labels_seen;
    for (const auto& [id, p] : peers_) {
      const Bytes& out = p.out;
      if (out.empty()) continue;
      std::string where = "connection " + std::to_string(id) + " was sent " + hex(out) + ": ";
      FUZZ_CHECK(out.size() >= 8, where + "a cut AUTH answer");
      std::uint32_t method = get_u32(out.data()), length = get_u32(out.data() + 4);
      FUZZ_CHECK(length == 0, where + "an AUTH answer with method data");
      FUZZ_CHECK((method == 0 && settings_.auth_none) || (method == 1 && settings_.auth_key.has_value()),
                 where + "a method the server does not enable");
      std::size_t at = 8;
      bool joined = false, done = false;
      int last_index = -1;
      std::vector<std::int32_t> labels;
      Bytes tail;  // what follows the IMPI answer, without gridmpi's own label (sent to its senders only)
      while (at < out.size()) {
        FUZZ_CHECK(!done, where + "something after DONE");
        FUZZ_CHECK(out.size() - at >= CommandHeader::size, where + "a cut command header");
        auto h = CommandHeader::decode(std::span(out).subspan(at));
        FUZZ_CHECK(out.size() - at - CommandHeader::size >= h.length, where + "a cut command");
        auto payload = std::span(out).subspan(at + CommandHeader::size, h.length);
        switch (static_cast<Command>(h.command)) {
          case Command::impi:
            FUZZ_CHECK(!joined && h.length == 4, where + "IMPI twice or of a wrong length");
            FUZZ_CHECK(static_cast<int>(get_u32(payload.data())) == settings_.clients, where + "IMPI not M");
            joined = true;
            break;
          case Command::coll: {
            FUZZ_CHECK(joined && h.length >= 8, where + "COLL before IMPI or shorter than 8");
            auto code = static_cast<std::int32_t>(get_u32(payload.data()));
            std::uint32_t mask = get_u32(payload.data() + 4);
            int index = label_index(code);
            FUZZ_CHECK(index > last_index, where + "a label out of canonical order or unknown");
            FUZZ_CHECK(mask != 0 && (mask & ~all) == 0, where + "a mask of no client or of clients beyond M");
            last_index = index;
            if (code == label_gridmpi_datarep) break;
            labels.push_back(code);
            tail.insert(tail.end(), out.begin() + static_cast<std::ptrdiff_t>(at),
                        out.begin() + static_cast<std::ptrdiff_t>(at + CommandHeader::size + h.length));
            break;
          }
          case Command::done:
            FUZZ_CHECK(joined && h.length == 0, where + "DONE before IMPI or with a payload");
            done = true;
            tail.insert(tail.end(), out.begin() + static_cast<std::ptrdiff_t>(at),
                        out.begin() + static_cast<std::ptrdiff_t>(at + CommandHeader::size));
            break;
          default: FUZZ_CHECK(false, where + "a command a server never sends");
        }
        at += CommandHeader::size + h.length;
      }
      if (!joined) continue;
      // Refused after {IMPI, M} (a rank out of range) and closed: not a client.
      if (tail.empty() && p.server_closed) continue;
      if (!broadcasts) {
        broadcasts = tail;
        labels_seen = labels;
      } else {
        FUZZ_CHECK(*broadcasts == tail, where + "other broadcasts than another client got: " + hex(*broadcasts));
      }
    }
    std::vector<std::int32_t> standard_broadcasts;
    for (std::int32_t code : server_.broadcast_labels())
      if (code != label_gridmpi_datarep) standard_broadcasts.push_back(code);
    if (broadcasts) FUZZ_CHECK(labels_seen == standard_broadcasts, "broadcast_labels() is not what was sent");
  }

  // After a clean run (status 0) every client's stream was valid: each
  // broadcast must be exactly the contributions those streams carry.
  void check_collation() {
    std::map<int, std::map<std::int32_t, Bytes>> contributed;  // client rank -> label -> data
    // Answered {IMPI, M} and sent more: a client (others may be half-way,
    // or refused after {IMPI, M}: a rank out of range, impi/server.hpp).  A
    // client of a run that ended with status 0 was sent DONE at least.
    auto joined = [](const Peer& p) {
      return p.out.size() > 20 && get_u32(p.out.data() + 8) == static_cast<std::uint32_t>(Command::impi);
    };
    std::map<ConnectionId, int> rank_of;
    for (const auto& [id, p] : peers_) {
      if (!joined(p)) continue;
      std::string where = "connection " + std::to_string(id) + " sent " + hex(p.in) + ": ";
      std::size_t at = 12;
      if (get_u32(p.out.data()) == static_cast<std::uint32_t>(auth_key)) at += 8;
      int rank = -1;
      while (at < p.in.size()) {
        FUZZ_CHECK(p.in.size() - at >= 8, where + "status 0 after a cut command");
        auto h = CommandHeader::decode(std::span(p.in).subspan(at));
        FUZZ_CHECK(p.in.size() - at - 8 >= h.length, where + "status 0 after a cut command");
        auto payload = std::span(p.in).subspan(at + 8, h.length);
        if (h.command == static_cast<std::uint32_t>(Command::fini)) break;  // what follows is dropped
        if (h.command == static_cast<std::uint32_t>(Command::impi)) rank = static_cast<int>(get_u32(payload.data()));
        if (h.command == static_cast<std::uint32_t>(Command::coll)) {
          auto code = static_cast<std::int32_t>(get_u32(payload.data()));
          if (label_index(code) >= 0) contributed[rank][code].assign(payload.begin() + 4, payload.end());
        }
        at += 8 + h.length;
      }
      FUZZ_CHECK(rank >= 0, where + "status 0 but a client without IMPI");
      rank_of[id] = rank;
    }
    Bytes expected, own_label;
    std::uint32_t own_mask = 0;
    for (const auto& info : known_labels()) {
      std::uint32_t mask = 0;
      Bytes data;
      for (const auto& [rank, labels] : contributed)
        if (auto it = labels.find(info.code); it != labels.end()) {
          mask |= 1u << rank;
          data.insert(data.end(), it->second.begin(), it->second.end());
        }
      if (mask == 0) continue;
      auto m = encode_coll_result(info.code, mask, data);
      if (info.code == label_gridmpi_datarep) {
        own_label = m;
        own_mask = mask;
        continue;
      }
      expected.insert(expected.end(), m.begin(), m.end());
    }
    auto done = encode_done();
    for (const auto& [id, p] : peers_) {
      if (!joined(p)) continue;
      // The client's stream: the AUTH choice, {IMPI, M}, then the broadcasts;
      // gridmpi's own label only to the clients that sent it, last.
      Bytes want = expected;
      if (own_mask & (1u << rank_of[id])) want.insert(want.end(), own_label.begin(), own_label.end());
      want.insert(want.end(), done.begin(), done.end());
      Bytes tail(p.out.begin() + 20, p.out.end());
      FUZZ_CHECK(tail == want, "connection " + std::to_string(id) + " got " + hex(tail) +
                                   " but the clients' contributions make " + hex(want));
    }
  }

  ServerSettings settings_;
  ServerState server_;
  std::size_t chunk_;
  bool outside_contract_;
  std::map<ConnectionId, Peer> peers_;
  bool finish_seen_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  ServerSettings settings;
  settings.clients = 1 + in.u8() % 32;
  std::uint8_t flags = in.u8();
  std::size_t chunk = in.u8();
  std::uint8_t limit = in.u8();
  std::uint64_t key = in.u64();
  settings.auth_none = (flags & 1) != 0;
  if (flags & 2) settings.auth_key = key;
  if (!settings.auth_none && !settings.auth_key) settings.auth_none = true;
  settings.verbose = (flags & 4) != 0;
  if (limit != 0) settings.max_command_length = 8u * limit;
  Harness harness(settings, chunk, (flags & 8) != 0);
  harness.run(in);
  return 0;
}
