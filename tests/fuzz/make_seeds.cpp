// Writes the seed corpora of tests/fuzz from real exchanges:
//   fuzz_make_seeds DIR      (tests/fuzz/run --seeds: DIR = tests/fuzz/corpus)
// M ClientSessions talk to one ServerState in memory, exactly as mpirun and
// impi-server would over TCP; every event is recorded in the input format of
// fuzz_server (what each connection sent, in order) and fuzz_client (what
// the server sent that client), and the messages, the collated labels and
// the host records become seeds of fuzz_wire and fuzz_job_map.  A few
// failure scripts and the byte images of the unit tests (the verified COLL
// example, the verified LAM packet header) are added.  Files are named
// seed-<what>; files of other names in DIR (kept crash inputs) are left alone.
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "impi/client.hpp"
#include "impi/server.hpp"
#include "impi/wire.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gridmpi::impi;
using gridmpi::fuzz::Bytes;
using gridmpi::fuzz::Script;

namespace {

namespace fs = std::filesystem;
using Clock = ClientSession::Clock;

fs::path out_dir;
int written = 0;

void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  fs::path dir = out_dir / target;
  fs::create_directories(dir);
  std::ofstream f(dir / ("seed-" + name), std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    std::fprintf(stderr, "fuzz_make_seeds: cannot write %s\n", (dir / ("seed-" + name)).c_str());
    std::exit(1);
  }
  ++written;
}

Bytes text_bytes(const std::string& s) {
  return Bytes(reinterpret_cast<const std::byte*>(s.data()), reinterpret_cast<const std::byte*>(s.data() + s.size()));
}

Bytes hex_bytes(std::string_view text) {
  Bytes out;
  std::string digits;
  for (char c : text)
    if (std::isxdigit(static_cast<unsigned char>(c))) digits += c;
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2)
    out.push_back(static_cast<std::byte>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  return out;
}

struct Options {
  int clients = 2;
  bool none = true;
  std::optional<std::uint64_t> key;
  int hosts_per_client = 1;
  bool hosts_first = false;  // local hosts before connecting (else after the IMPI answer)
};

// One start-up and shutdown of `clients` mpiruns against one impi-server.
struct Exchange {
  explicit Exchange(const Options& o) : options(o), server(server_settings(o)) {
    for (int k = 0; k < o.clients; ++k) {
      ClientSettings s;
      s.client = k;
      s.auth.none = o.none;
      s.auth.key = o.key;
      s.datalen = 65536 - 1024 * k;
      s.server = "10.0.0.100:4000";
      sessions.emplace_back(s);
      std::vector<LocalHost> h(static_cast<std::size_t>(o.hosts_per_client));
      for (int i = 0; i < o.hosts_per_client; ++i) {
        auto& host = h[static_cast<std::size_t>(i)];
        host.address = host_id_from_ipv4(0x0a000000u + static_cast<std::uint32_t>(k << 8 | (i + 1)));
        host.port = static_cast<std::uint16_t>(5000 + i);
        host.pid = 1000 + 10 * k + i;
        host.ackmark = 10 - i;
        host.hiwater = 20 + i;
      }
      hosts.push_back(h);
      Script c;
      c.u8(static_cast<std::uint8_t>(k)).u8(static_cast<std::uint8_t>((o.none ? 1 : 0) | (o.key ? 2 : 0))).u8(0);
      c.u64(o.key.value_or(0)).u32(static_cast<std::uint32_t>(s.datalen)).u32(0xffffffff).u32(0xffffffff).u16(30000);
      client_scripts.push_back(c);
      sent.emplace_back();
      received.emplace_back();
    }
    server_script.u8(static_cast<std::uint8_t>(o.clients - 1))
        .u8(static_cast<std::uint8_t>((o.none ? 1 : 0) | (o.key ? 2 : 0)))
        .u8(0)
        .u8(0)
        .u64(o.key.value_or(0));
  }

  static ServerSettings server_settings(const Options& o) {
    ServerSettings s;
    s.clients = o.clients;
    s.auth_none = o.none;
    s.auth_key = o.key;
    return s;
  }

  void give_hosts(int k) {
    auto& script = client_scripts[static_cast<std::size_t>(k)];
    const auto& h = hosts[static_cast<std::size_t>(k)];
    script.u8(1).u8(static_cast<std::uint8_t>(h.size()));
    for (const auto& host : h)
      script.u32(*ipv4_from_host_id(host.address))
          .u16(host.port)
          .u32(static_cast<std::uint32_t>(host.pid))
          .u8(static_cast<std::uint8_t>(host.ackmark))
          .u8(static_cast<std::uint8_t>(host.hiwater));
    sessions[static_cast<std::size_t>(k)].local_hosts(h, now);
    hosts_given.insert(k);
  }

  // Moves bytes both ways until nothing happens.
  void pump() {
    for (bool busy = true; busy;) {
      busy = false;
      for (int k = 0; k < options.clients; ++k) {
        auto& session = sessions[static_cast<std::size_t>(k)];
        if (!hosts_given.contains(k) && session.state() == ClientSession::State::exchanging) give_hosts(k);
        for (auto& a : session.take_actions()) {
          busy = true;
          if (auto* s = std::get_if<client_action::Send>(&a)) {
            auto& log = sent[static_cast<std::size_t>(k)];
            log.insert(log.end(), s->bytes.begin(), s->bytes.end());
            server_script.u8(1).u8(static_cast<std::uint8_t>(k)).blob(s->bytes);
            server.received(static_cast<ConnectionId>(k + 1), s->bytes);
          } else if (auto* c = std::get_if<client_action::StartupComplete>(&a)) {
            labels[k] = c->labels;
          } else if (auto* f = std::get_if<client_action::Failed>(&a)) {
            std::fprintf(stderr, "fuzz_make_seeds: client %d failed: %s\n", k, f->line.c_str());
            std::exit(1);
          }
        }
      }
      for (auto& a : server.take_actions()) {
        busy = true;
        if (auto* s = std::get_if<server_action::Send>(&a)) {
          auto k = static_cast<std::size_t>(s->connection - 1);
          received[k].insert(received[k].end(), s->bytes.begin(), s->bytes.end());
          client_scripts[k].u8(2).blob(s->bytes);
          sessions[k].received(s->bytes, now);
        } else if (auto* f = std::get_if<server_action::Finish>(&a)) {
          exit_status = f->exit_status;
        }
      }
    }
  }

  void run() {
    for (int k = 0; k < options.clients; ++k) {
      server_script.u8(0);
      server.connection_opened(static_cast<ConnectionId>(k + 1), "10.0.0." + std::to_string(k + 1) + ":40000");
    }
    for (int k = 0; k < options.clients; ++k) {
      if (options.hosts_first) give_hosts(k);
      client_scripts[static_cast<std::size_t>(k)].u8(0);
      sessions[static_cast<std::size_t>(k)].connected(now);
      pump();
    }
    pump();
    for (int k = 0; k < options.clients; ++k) {
      if (sessions[static_cast<std::size_t>(k)].state() != ClientSession::State::ready) {
        std::fprintf(stderr, "fuzz_make_seeds: client %d did not complete the start-up\n", k);
        std::exit(1);
      }
      client_scripts[static_cast<std::size_t>(k)].u8(4);  // finish
      sessions[static_cast<std::size_t>(k)].finish();
      pump();
      client_scripts[static_cast<std::size_t>(k)].u8(3).u8(0);  // the server closes
    }
    if (exit_status != 0) {
      std::fprintf(stderr, "fuzz_make_seeds: the server did not finish with status 0\n");
      std::exit(1);
    }
  }

  Options options;
  ServerState server;
  std::vector<ClientSession> sessions;
  std::vector<std::vector<LocalHost>> hosts;
  std::set<int> hosts_given;
  Script server_script;
  std::vector<Script> client_scripts;
  std::vector<Bytes> sent, received;
  std::map<int, CollatedLabels> labels;
  std::optional<int> exit_status;
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
};

// Each command of a stream as a seed of its own (the 8 raw AUTH bytes skipped).
void command_seeds(const std::string& name, const Bytes& stream, std::size_t skip) {
  std::size_t at = skip, n = 0;
  while (stream.size() - at >= CommandHeader::size) {
    auto h = CommandHeader::decode(std::span(stream).subspan(at));
    if (!is_known_command(h.command)) {  // the raw key
      at += 8;
      continue;
    }
    std::size_t end = at + CommandHeader::size + h.length;
    write("wire", name + "-" + std::to_string(n++), Bytes(stream.begin() + static_cast<std::ptrdiff_t>(at),
                                                         stream.begin() + static_cast<std::ptrdiff_t>(end)));
    at = end;
  }
}

void exchange_seeds(const std::string& name, const Options& options) {
  Exchange x(options);
  x.run();
  write("server", name, x.server_script.bytes());
  Bytes bytewise = x.server_script.bytes();
  bytewise[2] = std::byte{1};  // chunk: one byte at a time
  write("server", name + "-bytewise", bytewise);
  for (int k = 0; k < options.clients; ++k) {
    auto ks = std::to_string(k);
    write("client", name + "-client" + ks, x.client_scripts[static_cast<std::size_t>(k)].bytes());
    write("wire", name + "-from-client" + ks, x.sent[static_cast<std::size_t>(k)]);
    write("wire", name + "-to-client" + ks, x.received[static_cast<std::size_t>(k)]);
  }
  if (name == "two-none") {
    command_seeds(name + "-command-to-server", x.sent[0], 12);
    command_seeds(name + "-command-to-client", x.received[0], 8);
  }
  const CollatedLabels& labels = x.labels.at(0);
  Bytes record = text_bytes(labels.encode());
  record.insert(record.begin(), std::byte{0});
  write("job_map", name + "-labels", record);
  Bytes host = text_bytes(x.hosts[0][0].encode());
  host.insert(host.begin(), std::byte{1});
  write("job_map", name + "-local-host", host);
  Script built;
  built.u8(2).u8(static_cast<std::uint8_t>(labels.nclients)).u8(static_cast<std::uint8_t>(labels.my_client));
  for (const auto& [code, label] : labels.labels)
    built.u8(static_cast<std::uint8_t>(label_index(code))).u32(label.mask).blob(label.data);
  write("job_map", name + "-built", built.bytes());
}

// Server scripts of the ways a job ends early.
void server_failure_seeds() {
  auto header = [](int clients, std::uint8_t flags, std::uint64_t key = 0) {
    Script s;
    s.u8(static_cast<std::uint8_t>(clients - 1)).u8(flags).u8(0).u8(0).u64(key);
    return s;
  };
  Bytes label_data(4);
  {  // wrong key, structured operations
    Script s = header(2, 2, 42);
    s.u8(0).u8(4).u8(0).u32(2).u8(5).u8(0).u8(1).u64(43);
    write("server", "wrong-key", s.bytes());
  }
  {  // a probe, then a client that joins, labels with an unknown one, DONE, FINI
    Script s = header(1, 1 | 4);
    s.u8(0).u8(2).u8(0);  // connection 1 opens and closes: a probe
    s.u8(0).u8(4).u8(1).u32(1).u8(6).u8(1).u32(0);
    s.u8(7).u8(1).u8(0).blob(Bytes(8));
    s.u8(7).u8(1).u8(14).blob(label_data);
    s.u8(7).u8(1).u8(1).blob(label_data);
    s.u8(8).u8(1).u8(9).u8(1);
    write("server", "probe-unknown-label", s.bytes());
  }
  {  // three clients, one leaves during the exchange
    Script s = header(3, 1);
    for (int k = 0; k < 3; ++k) s.u8(0);
    for (std::uint8_t k = 0; k < 3; ++k) s.u8(4).u8(k).u32(1).u8(6).u8(k).u32(k);
    s.u8(7).u8(0).u8(2).blob(label_data).u8(7).u8(2).u8(3).blob(label_data).u8(2).u8(1);
    write("server", "three-one-leaves", s.bytes());
  }
  {  // a length over the limit, and SIGTERM
    Script s = header(2, 1);
    s.u8(0).u8(0).u8(4).u8(0).u32(1).u8(10).u8(0).u32(0x434f4c4c).u32(0x01000000).u8(3).u8(1);
    write("server", "huge-length-sigterm", s.bytes());
  }
}

// Client scripts that use the scripted server (operation 10) and time.
void client_scripted_seeds() {
  auto header = [](int client, std::uint8_t flags, std::uint64_t key = 0) {
    Script s;
    s.u8(static_cast<std::uint8_t>(client)).u8(flags).u8(0).u64(key).u32(65536).u32(0xffffffff).u32(0xffffffff);
    s.u16(1000);
    return s;
  };
  auto one_host = [](Script& s) { s.u8(1).u8(1).u32(0x0a000101).u16(5000).u32(4242).u8(10).u8(20); };
  {
    Script s = header(1, 1);
    s.u8(0).u8(6).u32(0).u32(0).u8(7).u32(3);
    one_host(s);
    s.u8(10).u8(32).u16(0).u8(4).u8(3).u8(0);
    write("client", "scripted-server", s.bytes());
  }
  {
    Script s = header(0, 3, 99);
    one_host(s);
    s.u8(0).u8(6).u32(1).u32(0).u8(7).u32(2).u8(10).u8(2).u16(0x0040);
    write("client", "scripted-server-key-mismatch", s.bytes());
  }
  {
    Script s = header(2, 1);
    s.u8(0).u8(6).u32(0).u32(0).u8(7).u32(3).u8(5).u32(20000);
    write("client", "timeout-waiting-for-hosts", s.bytes());
  }
}

// The byte images of tests/unit/test_impi_wire.cpp and docs/impi-protocol.md.
void wire_image_seeds() {
  write("wire", "verified-coll", hex_bytes("434f4c4c 00000010 00001200 00000003 00000002 00000003"));
  Bytes lam = hex_bytes(
      "00000000 00000010"
      "00000000 00000000 00000000 7f000002 00000000 00005693"
      "00000000 00000000 00000000 7f000001 00000000 00001092"
      "00000000 00000000 00000000 00000000 00000000 00000010 00000001 00000007"
      "00000000 00000000 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000"
      "00000001 00000002 00000003 00000004");
  write("wire", "verified-lam-data", lam);
  // A stream: LAM's DATA, a SYNCACK, LAM's FINI (pk_len 128 and no payload).
  PacketHeader syncack;
  syncack.type = PacketType::syncack;
  syncack.srqid = 1;
  syncack.drqid = 0xabcd;
  PacketHeader fini;
  fini.type = PacketType::fini;
  fini.len = 128;
  fini.msglen = 128;
  fini.src.pid = -1;
  fini.dest.pid = -1;
  fini.count = -1;
  Bytes stream = lam;
  for (const auto* h : {&syncack, &fini}) {
    std::array<std::byte, PacketHeader::size> b{};
    h->encode(b.data());
    stream.insert(stream.end(), b.begin(), b.end());
  }
  write("wire", "packet-stream", stream);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds DIR (tests/fuzz/corpus)\n");
    return 2;
  }
  out_dir = argv[1];
  // Stale seeds go; kept crash inputs (other names) stay.
  for (const char* target : {"server", "client", "wire", "job_map"}) {
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(out_dir / target, ignored))
      if (entry.path().filename().string().rfind("seed-", 0) == 0) fs::remove(entry.path());
  }
  exchange_seeds("two-none", Options{});
  exchange_seeds("three-key", Options{3, false, 12345678901234567890ull, 1, true});
  exchange_seeds("two-both-two-hosts", Options{2, true, 7, 2, false});
  server_failure_seeds();
  client_scripted_seeds();
  wire_image_seeds();
  std::printf("fuzz_make_seeds: %d seeds written to %s\n", written, out_dir.c_str());
  return 0;
}
