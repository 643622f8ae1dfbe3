// Fuzz target: the client side of the server protocol (impi/client.hpp,
// what mpirun -client runs) against arbitrary server bytes in any pieces,
// with its other events (local hosts, connection lost, finish, time) in any
// order.  Besides ASan/UBSan it checks:
//  * after Failed or Close nothing more is produced; Failed is one line
//    without the "mpirun: " prefix and leaves the state `failed`;
//  * at most one StartupComplete, in state ready (or failed, by bytes after
//    DONE in the same read, with Failed after it), with this client's
//    number, the server's IMPI answer, exactly the COLL results the server
//    sent, labels that JobMap::from_labels accepts and that survive
//    CollatedLabels::encode/decode;
//  * Close only right after the FINI that finish() sends;
//  * what the client sends is AUTH with its mask, [its key], IMPI K, the 14
//    standard labels in canonical order, DONE, [FINI], whole messages;
//  * while the start-up runs there is a deadline, and reaching it fails.
//
// Input (read front to back, tests/fuzz/fuzz_input.hpp; seeds: make_seeds.cpp):
//   client:u8 flags:u8 chunk:u8 key:u64 datalen:u32 xsize:u32 maxlinear:u32
//   timeout:u16, then operations op:u8 ...
//   K = client % 32; flags: bit 0 IMPI_AUTH_NONE, bit 1 IMPI_AUTH_KEY;
//   chunk: server bytes arrive in pieces of that size (0: whole);
//   startup_timeout = timeout * 10 ms (0: none).
//   op % 11: 0 connected | 1 hosts count:u8 {ipv4:u32 port:u16 pid:u32
//   ackmark:u8 hiwater:u8}... | 2 bytes blob | 3 lost how:u8 | 4 finish |
//   5 tick ms:u32 | 6 choice method:u32 length:u32 | 7 IMPI size:u32 |
//   8 COLL label:u8 [code:u32 when label > 14] mask:u32 blob | 9 DONE |
//   10 answer variant:u8 skip:u16 (a scripted server: every label with this
//   client's own contributions and those of the other clients, the labels
//   whose bit is set in skip left out, then DONE)
#include <chrono>
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>

#include "impi/client.hpp"
#include "impi/wire.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gridmpi::impi;
using gridmpi::fuzz::Bytes;
using gridmpi::fuzz::hex;
using gridmpi::fuzz::Input;

namespace {

using Clock = ClientSession::Clock;

Bytes int4(std::int32_t v) {
  Bytes out;
  append_u32(out, static_cast<std::uint32_t>(v));
  return out;
}

class Harness {
 public:
  Harness(ClientSettings settings, std::size_t chunk) : settings_(settings), session_(settings), chunk_(chunk) {}

  void run(Input& in) {
    while (!in.empty()) {
      switch (in.u8() % 11) {
        case 0: session_.connected(now_); break;
        case 1: session_.local_hosts(hosts(in), now_); break;
        case 2: feed(in.blob()); break;
        case 3: session_.connection_lost(in.u8() & 1 ? "Connection reset by peer" : "", now_); break;
        case 4:
          finish_called_in_ready_ = session_.state() == ClientSession::State::ready;
          session_.finish();
          break;
        case 5:
          now_ += std::chrono::milliseconds(in.u32());
          session_.tick(now_);
          break;
        case 6: {
          Bytes b;
          append_u32(b, in.u32());
          append_u32(b, in.u32());
          feed(b);
          break;
        }
        case 7: feed(encode_impi(static_cast<std::int32_t>(in.u32()))); break;
        case 8: {
          std::uint8_t label = in.u8();
          std::int32_t code = label < 14 ? standard_labels()[label].code
                              : label == 14 ? 0x7777
                                            : static_cast<std::int32_t>(in.u32());
          std::uint32_t mask = in.u32();
          feed(encode_coll_result(code, mask, in.blob()));
          break;
        }
        case 9: feed(encode_done()); break;
        case 10: {
          std::uint8_t variant = in.u8();
          feed(answer(variant, in.u16()));
          break;
        }
      }
      collect();
    }
    // Liveness: a start-up in progress has a deadline, and reaching it ends it.
    auto state = session_.state();
    bool starting = state == ClientSession::State::auth_choice || state == ClientSession::State::joining ||
                    state == ClientSession::State::exchanging;
    if (starting && settings_.startup_timeout.count() > 0) {
      auto deadline = session_.next_deadline();
      FUZZ_CHECK(deadline.has_value(), "a start-up in progress without a deadline");
      session_.tick(std::max(now_, *deadline));
      collect();
      FUZZ_CHECK(session_.state() == ClientSession::State::failed, "the deadline passed and the start-up goes on");
    }
    check_sent();
  }

 private:
  std::vector<LocalHost> hosts(Input& in) {
    std::vector<LocalHost> out(in.u8() % 5);
    for (auto& h : out) {
      h.address = host_id_from_ipv4(in.u32());
      h.port = in.u16();
      h.pid = in.u32();
      h.ackmark = in.u8();
      h.hiwater = in.u8();
    }
    return out;
  }

  void feed(const Bytes& bytes) {
    std::size_t step = chunk_ == 0 ? bytes.size() : chunk_;
    for (std::size_t at = 0; at < bytes.size(); at += step) {
      std::size_t n = std::min(step, bytes.size() - at);
      if (session_.state() != ClientSession::State::failed && session_.state() != ClientSession::State::finished)
        fed_.insert(fed_.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at),
                    bytes.begin() + static_cast<std::ptrdiff_t>(at + n));
      session_.received(std::span<const std::byte>(bytes.data() + at, n), now_);
      collect();
    }
  }

  // The contributions this client sent (COLL ... in its stream).
  std::map<std::int32_t, Bytes> own_contributions() const {
    std::map<std::int32_t, Bytes> out;
    std::size_t at = 0;
    while (sent_.size() - at >= 8) {
      auto h = CommandHeader::decode(std::span(sent_).subspan(at));
      // The raw 8-byte key can sit in the stream too: skip what is no command.
      if (!is_known_command(h.command)) {
        at += 8;
        continue;
      }
      if (sent_.size() - at - 8 < h.length) break;
      if (h.command == static_cast<std::uint32_t>(Command::coll) && h.length >= 4) {
        auto code = static_cast<std::int32_t>(get_u32(sent_.data() + at + 8));
        out[code].assign(sent_.begin() + static_cast<std::ptrdiff_t>(at + 12),
                         sent_.begin() + static_cast<std::ptrdiff_t>(at + 8 + h.length));
      }
      at += 8 + h.length;
    }
    return out;
  }

  // A scripted server's broadcasts: every other client has one host
  // (10.0.9.c:6000+c, pid 77+c) and defaults; `variant` perturbs them.
  Bytes answer(std::uint8_t variant, std::uint16_t skip) const {
    int size = session_.nclients() > 0 ? session_.nclients() : 2;
    auto mine = own_contributions();
    Bytes out;
    const auto& labels = standard_labels();
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (skip & (1u << i)) continue;
      std::int32_t code = labels[i].code;
      std::uint32_t mask = 0;
      Bytes data;
      for (int c = 0; c < size; ++c) {
        Bytes part;
        if (c == settings_.client) {
          auto it = mine.find(code);
          if (it == mine.end()) continue;
          part = it->second;
        } else {
          Bytes id(16);
          put_u32(id.data() + 12, 0x0a000900u + static_cast<std::uint32_t>(c));
          switch (code) {
            case label_c_version: part = Bytes(8); break;
            case label_c_nhosts: case label_c_nprocs: case label_h_nprocs: part = int4(1); break;
            case label_c_datalen: part = int4(variant & 1 ? 0 : 65536); break;
            case label_c_tagub: part = int4(0x7fffffff); break;
            case label_c_coll_xsize: part = int4(variant & 2 ? 4096 : -1); break;
            case label_c_coll_maxlinear: part = int4(-1); break;
            case label_h_ipv6: case label_p_ipv6: part = id; break;
            case label_h_port: part = int4(variant & 4 ? 0 : 6000 + c); break;
            case label_h_ackmark: part = int4(variant & 8 ? 30 : 10); break;
            case label_h_hiwater: part = int4(20); break;
            case label_p_pid: append_u64(part, variant & 16 ? 0 : 77u + static_cast<unsigned>(c)); break;
          }
        }
        mask |= 1u << c;
        data.insert(data.end(), part.begin(), part.end());
      }
      auto m = encode_coll_result(code, mask, data);
      out.insert(out.end(), m.begin(), m.end());
    }
    if (variant & 32) {
      auto m = encode_coll_result(0x7777, 1, int4(42));
      out.insert(out.end(), m.begin(), m.end());
    }
    auto done = encode_done();
    out.insert(out.end(), done.begin(), done.end());
    return out;
  }

  void collect() {
    bool fini_sent_now = false;
    for (auto& action : session_.take_actions()) {
      FUZZ_CHECK(!over_, "an action after Failed or Close");
      if (auto* s = std::get_if<client_action::Send>(&action)) {
        FUZZ_CHECK(!s->bytes.empty(), "Send of no bytes");
        sent_.insert(sent_.end(), s->bytes.begin(), s->bytes.end());
        fini_sent_now = s->bytes == encode_fini();
      } else if (auto* c = std::get_if<client_action::StartupComplete>(&action)) {
        FUZZ_CHECK(!complete_, "StartupComplete twice");
        complete_ = true;
        // Bytes after DONE in the same read fail the session right after
        // the hand-over (as they would in the next read): then Failed follows.
        FUZZ_CHECK(session_.state() == ClientSession::State::ready ||
                       session_.state() == ClientSession::State::failed,
                   "StartupComplete outside states ready and failed");
        const CollatedLabels& labels = c->labels;
        FUZZ_CHECK(labels.my_client == settings_.client, "StartupComplete for another client number");
        FUZZ_CHECK(labels.nclients == session_.nclients() && labels.nclients >= 1 && labels.nclients <= 32,
                   "StartupComplete with a client count other than the IMPI answer");
        try {
          (void)JobMap::from_labels(labels);
        } catch (const WireError& e) {
          FUZZ_CHECK(false, std::string("StartupComplete with labels JobMap refuses: ") + e.what());
        }
        FUZZ_CHECK(CollatedLabels::decode(labels.encode()) == labels, "CollatedLabels do not survive encode/decode");
        FUZZ_CHECK(labels.labels == server_labels(), "the labels handed over are not those the server sent");
      } else if (auto* f = std::get_if<client_action::Failed>(&action)) {
        FUZZ_CHECK(!f->line.empty() && f->line.find('\n') == std::string::npos,
                   "Failed with an empty or multi-line text: '" + f->line + "'");
        FUZZ_CHECK(f->line.rfind("mpirun: ", 0) != 0, "Failed line with the mpirun prefix");
        FUZZ_CHECK(session_.state() == ClientSession::State::failed, "Failed but the state is not failed");
        over_ = true;
      } else if (std::holds_alternative<client_action::Close>(action)) {
        FUZZ_CHECK(fini_sent_now && finish_called_in_ready_, "Close without FINI right before it");
        FUZZ_CHECK(session_.state() == ClientSession::State::finished, "Close but the state is not finished");
        over_ = true;
      }
    }
    if (session_.state() == ClientSession::State::failed)
      FUZZ_CHECK(over_, "state failed without a Failed action");
  }

  // The COLL results in the server's bytes (the AUTH choice, IMPI, then
  // COLL... DONE), read independently of the client.
  std::map<std::int32_t, CollatedLabel> server_labels() const {
    std::map<std::int32_t, CollatedLabel> out;
    std::size_t at = 8 + 12;
    while (fed_.size() >= at + 8) {
      auto h = CommandHeader::decode(std::span(fed_).subspan(at));
      if (h.command != static_cast<std::uint32_t>(Command::coll) || fed_.size() - at - 8 < h.length) break;
      CollatedLabel label;
      label.mask = get_u32(fed_.data() + at + 12);
      label.data.assign(fed_.begin() + static_cast<std::ptrdiff_t>(at + 16),
                        fed_.begin() + static_cast<std::ptrdiff_t>(at + 8 + h.length));
      out.emplace(static_cast<std::int32_t>(get_u32(fed_.data() + at + 8)), std::move(label));
      at += 8 + h.length;
    }
    return out;
  }

  // The client's stream, as the server reads it.
  void check_sent() const {
    if (sent_.empty()) return;
    std::string where = "the client sent " + hex(sent_) + ": ";
    FUZZ_CHECK(sent_.size() >= 12 && Bytes(sent_.begin(), sent_.begin() + 12) == encode_auth(settings_.auth.mask()),
               where + "not AUTH with its mask first");
    std::size_t at = 12;
    if (settings_.auth.key && sent_.size() - at >= 8 &&
        Bytes(sent_.begin() + 12, sent_.begin() + 20) == encode_auth_key(*settings_.auth.key) &&
        !(sent_.size() - at >= 12 &&
          Bytes(sent_.begin() + 12, sent_.begin() + 24) == encode_impi(settings_.client)))
      at += 8;
    int expected_label = 0;
    bool joined = false, done = false, fini = false;
    while (at < sent_.size()) {
      FUZZ_CHECK(!fini, where + "something after FINI");
      FUZZ_CHECK(sent_.size() - at >= 8, where + "a cut command header");
      auto h = CommandHeader::decode(std::span(sent_).subspan(at));
      FUZZ_CHECK(sent_.size() - at - 8 >= h.length, where + "a cut command");
      switch (static_cast<Command>(h.command)) {
        case Command::impi:
          FUZZ_CHECK(!joined && h.length == 4 && static_cast<int>(get_u32(sent_.data() + at + 8)) == settings_.client,
                     where + "IMPI twice or not K");
          joined = true;
          break;
        case Command::coll:
          FUZZ_CHECK(joined && !done && h.length >= 4 && expected_label < 14, where + "a misplaced COLL");
          FUZZ_CHECK(static_cast<std::int32_t>(get_u32(sent_.data() + at + 8)) ==
                         standard_labels()[static_cast<std::size_t>(expected_label)].code,
                     where + "labels not the 14 in canonical order");
          ++expected_label;
          break;
        case Command::done:
          FUZZ_CHECK(expected_label == 14 && !done && h.length == 0, where + "a misplaced DONE");
          done = true;
          break;
        case Command::fini:
          FUZZ_CHECK(done && h.length == 0, where + "FINI before DONE");
          fini = true;
          break;
        default: FUZZ_CHECK(false, where + "a command a client never sends");
      }
      at += 8 + h.length;
    }
  }

  ClientSettings settings_;
  ClientSession session_;
  std::size_t chunk_;
  Clock::time_point now_ = Clock::time_point{} + std::chrono::hours(1);
  Bytes sent_;
  Bytes fed_;  // the server's bytes, while the session listened
  bool over_ = false;
  bool complete_ = false;
  bool finish_called_in_ready_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  ClientSettings settings;
  settings.client = in.u8() % 32;
  std::uint8_t flags = in.u8();
  std::size_t chunk = in.u8();
  std::uint64_t key = in.u64();
  settings.auth.none = (flags & 1) != 0;
  if (flags & 2) settings.auth.key = key;
  settings.datalen = static_cast<std::int32_t>(in.u32());
  settings.coll_xsize = static_cast<std::int32_t>(in.u32());
  settings.coll_maxlinear = static_cast<std::int32_t>(in.u32());
  settings.startup_timeout = std::chrono::milliseconds(10 * in.u16());
  settings.server = "10.0.0.100:4000";
  Harness harness(settings, chunk);
  harness.run(in);
  return 0;
}
