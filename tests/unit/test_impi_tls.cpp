// impi/tls: the context builder's one-line errors (missing, empty, expired,
// mismatched, malformed files), the parameters, the memory-buffer Channel
// (a handshake between two channels, data both ways, a certificate of
// another CA rejected on each side), the socket Session (a handshake over a
// non-blocking socket pair, 8 MiB each way through small socket buffers so
// that the writer waits, the end of the stream with and without
// close_notify, a rejected certificate) and ClientSession over TLS.  The
// certificates come from tests/impi/make_test_certs.sh (the openssl
// command; the tests that need them are skipped without it).
#include <fcntl.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "conf/registry.hpp"
#include "impi/client.hpp"
#include "impi/tls.hpp"

using namespace gridmpi::impi;
namespace fs = std::filesystem;

namespace {

// The certificates, made once per run into a temporary directory ("" without openssl).
const std::string& cert_dir() {
  static const std::string dir = [] {
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) return std::string();
    fs::path script = fs::path(__FILE__).parent_path().parent_path() / "impi" / "make_test_certs.sh";
    fs::path d = fs::temp_directory_path() / ("gridmpi-tls-unit-" + std::to_string(::getpid()));
    std::string cmd = "timeout 60 '" + script.string() + "' '" + d.string() + "' >/dev/null";
    if (std::system(cmd.c_str()) != 0) return std::string();
    std::atexit([] { fs::remove_all(fs::temp_directory_path() / ("gridmpi-tls-unit-" + std::to_string(::getpid()))); });
    return d.string();
  }();
  return dir;
}

std::string file(const std::string& name) { return cert_dir() + "/" + name; }

tls::Settings settings(const std::string& cert = "site", const std::string& ca = "ca") {
  return tls::Settings{true, file(cert + ".pem"), file(cert + ".key"), file(ca + ".pem")};
}

std::string error_of(const tls::Settings& s) {
  try {
    tls::make_context(s);
  } catch (const gridmpi::conf::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// Runs the handshake between two channels until neither has anything to say.
void exchange(tls::Channel& a, tls::Channel& b, std::vector<std::byte>& plain_a, std::vector<std::byte>& plain_b) {
  for (int round = 0; round < 20; ++round) {
    auto from_a = a.take_output();
    auto from_b = b.take_output();
    if (from_a.empty() && from_b.empty()) return;
    if (!from_a.empty()) b.feed(from_a, plain_b);
    if (!from_b.empty()) a.feed(from_b, plain_a);
  }
}

std::vector<std::byte> bytes(std::string_view s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

// A connected pair of non-blocking stream sockets with small buffers.
struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() {
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
    for (int f : fd) {
      int size = 32 * 1024;
      ::setsockopt(f, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
      ::setsockopt(f, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
      ::fcntl(f, F_SETFL, ::fcntl(f, F_GETFL) | O_NONBLOCK);
    }
  }
  ~SocketPair() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
};

// Waits (at most 5 s) for what the two results want.
void wait_for(const SocketPair& p, const tls::Session::Result& a, const tls::Session::Result& b) {
  pollfd fds[2];
  int n = 0;
  for (auto [i, r] : {std::pair{0, &a}, std::pair{1, &b}}) {
    if (r->want == tls::Session::Want::nothing || p.fd[i] < 0) continue;
    fds[n++] = pollfd{p.fd[i], static_cast<short>(r->want == tls::Session::Want::read ? POLLIN : POLLOUT), 0};
  }
  if (n > 0) REQUIRE(::poll(fds, static_cast<nfds_t>(n), 5000) > 0);
}

// Both handshakes, driven alternately until done or failed.
std::pair<tls::Session::Result, tls::Session::Result> handshake(const SocketPair& p, tls::Session& client,
                                                                 tls::Session& server) {
  tls::Session::Result c, s;
  bool c_done = false, s_done = false;
  for (int round = 0; round < 100 && !(c_done && s_done); ++round) {
    if (!c_done) c = client.handshake();
    if (!s_done) s = server.handshake();
    c_done = c.want == tls::Session::Want::nothing;
    s_done = s.want == tls::Session::Want::nothing;
    if (c.error || s.error) break;
    if (!c_done || !s_done) wait_for(p, c_done ? tls::Session::Result{} : c, s_done ? tls::Session::Result{} : s);
  }
  return {c, s};
}

// Two Sessions on a SocketPair, their handshakes done.
struct Connected {
  std::shared_ptr<tls::Context> context = tls::make_context(settings());
  SocketPair p;
  tls::Session client{context, p.fd[0], tls::Session::Role::client};
  tls::Session server{context, p.fd[1], tls::Session::Role::server};
  Connected() {
    auto [c, s] = handshake(p, client, server);
    REQUIRE(!c.error);
    REQUIRE(!s.error);
    REQUIRE(c.want == tls::Session::Want::nothing);
    REQUIRE(s.want == tls::Session::Want::nothing);
  }
};

// `data` from `from` (socket from_index) to `to`: writes as long as the
// session takes bytes (Want::write once its output batch is full and the
// socket is), then the rest of its output flushed; reads into a 10000-byte
// buffer (records are 16 KiB).  Returns what `to` read.
std::vector<std::byte> transfer(const SocketPair& p, int from_index, tls::Session& from, tls::Session& to,
                                const std::vector<std::byte>& data, int* write_waits) {
  std::vector<std::byte> got;
  std::size_t sent = 0;
  std::byte buffer[10000];
  for (int round = 0; round < 100000 && got.size() < data.size(); ++round) {
    while (sent < data.size()) {
      tls::Session::Result w = from.write(std::span(data).subspan(sent));
      REQUIRE(!w.error);
      if (w.want != tls::Session::Want::nothing) {
        REQUIRE(w.bytes == 0);
        ++*write_waits;
        break;
      }
      REQUIRE(w.bytes > 0);
      REQUIRE(w.bytes <= tls::Session::output_batch + 16384);  // the first record goes alone, then a batch
      sent += w.bytes;
    }
    if (sent == data.size() && from.output_pending()) REQUIRE(!from.flush().error);
    for (;;) {
      tls::Session::Result r = to.read(buffer);
      REQUIRE(!r.error);
      if (r.want != tls::Session::Want::nothing) break;
      got.insert(got.end(), buffer, buffer + r.bytes);
    }
    if (got.size() < data.size()) {
      pollfd fds[2] = {{p.fd[1 - from_index], POLLIN, 0}, {p.fd[from_index], POLLOUT, 0}};
      REQUIRE(::poll(fds, sent < data.size() || from.output_pending() ? 2 : 1, 5000) > 0);
    }
  }
  return got;
}

// Reads at `s` until it reports something other than a wait.
tls::Session::Result read_end(const SocketPair& p, tls::Session& s) {
  std::byte buffer[100];
  tls::Session::Result r;
  for (int i = 0; i < 100; ++i) {
    r = s.read(buffer);
    if (r.want == tls::Session::Want::nothing) break;
    wait_for(p, tls::Session::Result{}, r);
  }
  return r;
}

}  // namespace

TEST_CASE("impi tls: files that cannot be used are one line naming the parameter", "[impi][tls]") {
  tls::Settings s{true, "/nonexistent/x.pem", "/nonexistent/x.key", "/nonexistent/ca.pem"};
  CHECK(error_of(s) == "impi.tls_cert: cannot read /nonexistent/x.pem: No such file or directory (set it in the "
                       "site file's [impi] section or GRIDMPI_IMPI_TLS_CERT)");
  s.cert.clear();
  CHECK(error_of(s) == "impi.tls is on but impi.tls_cert is not set (set it in the site file's [impi] section or "
                       "GRIDMPI_IMPI_TLS_CERT)");
  if (cert_dir().empty()) return;  // the rest needs real certificates
  s = settings();
  s.key = "/nonexistent/k.pem";
  CHECK(error_of(s) == "impi.tls_key: cannot read /nonexistent/k.pem: No such file or directory (set it in the "
                       "site file's [impi] section or GRIDMPI_IMPI_TLS_KEY)");
  s = settings();
  s.ca = "";
  CHECK(error_of(s) == "impi.tls is on but impi.tls_ca is not set (set it in the site file's [impi] section or "
                       "GRIDMPI_IMPI_TLS_CA)");
}

TEST_CASE("impi tls: the context builder checks what it loads", "[impi][tls]") {
  if (cert_dir().empty()) {
    WARN("no openssl command: skipped");
    return;
  }
  CHECK(tls::make_context(settings()) != nullptr);

  std::string expired = error_of(settings("expired"));
  CHECK(expired.starts_with("impi.tls_cert: the certificate in " + file("expired.pem") + " expired on Feb  1"));
  CHECK(expired.find("2020") != std::string::npos);

  tls::Settings s = settings();
  s.key = file("other.key");
  CHECK(error_of(s) == "impi.tls_key: the key in " + file("other.key") + " does not belong to the certificate in " +
                           file("site.pem") + " (impi.tls_cert): name the key the certificate was made for");

  std::string garbage = cert_dir() + "/garbage.txt";
  std::ofstream(garbage) << "not a certificate\n";
  s = settings();
  s.cert = garbage;
  std::string e = error_of(s);
  CHECK(e.starts_with("impi.tls_cert: " + garbage + ": not a usable PEM certificate chain ("));
  CHECK(e.ends_with("; set it in the site file's [impi] section or GRIDMPI_IMPI_TLS_CERT"));
  s = settings();
  s.key = garbage;
  CHECK(error_of(s).starts_with("impi.tls_key: " + garbage + ": not a usable unencrypted PEM private key ("));
  s = settings();
  s.ca = garbage;
  CHECK(error_of(s).starts_with("impi.tls_ca: " + garbage + ": not a usable PEM CA certificate file ("));
}

TEST_CASE("impi tls: the parameters", "[impi][tls]") {
  gridmpi::conf::reset_cache_for_tests();
  CHECK(tls::context_from_parameters() == nullptr);  // off by default
  CHECK(tls::handshake_timeout() == std::chrono::seconds(30));
  ::setenv("GRIDMPI_IMPI_TLS", "yes", 1);
  ::setenv("GRIDMPI_IMPI_TLS_CERT", "/nonexistent/site.pem", 1);
  gridmpi::conf::reset_cache_for_tests();
  auto s = tls::settings_from_parameters();
  CHECK(s.enabled);
  CHECK(s.cert == "/nonexistent/site.pem");
  CHECK_THROWS_WITH(tls::context_from_parameters(),
                    Catch::StartsWith("impi.tls_cert: cannot read /nonexistent/site.pem: No such file"));
  // ClientSession turns it into its first action's line.
  ClientSettings cs;
  cs.auth.none = true;
  ClientSession session(cs);
  session.connected(ClientSession::Clock::now());
  auto actions = session.take_actions();
  REQUIRE(actions.size() == 1);
  auto* failed = std::get_if<client_action::Failed>(&actions[0]);
  REQUIRE(failed);
  CHECK(failed->line.starts_with("impi.tls_cert: cannot read /nonexistent/site.pem"));
  ::unsetenv("GRIDMPI_IMPI_TLS");
  ::unsetenv("GRIDMPI_IMPI_TLS_CERT");
  gridmpi::conf::reset_cache_for_tests();
}

TEST_CASE("impi tls: TLS records are recognized", "[impi][tls]") {
  CHECK(tls::looks_like_tls(bytes("\x16\x03\x01")));
  CHECK(tls::looks_like_tls(tls::plaintext_rejection_alert()));
  CHECK_FALSE(tls::looks_like_tls(bytes("AUTH")));
  CHECK_FALSE(tls::looks_like_tls(std::vector<std::byte>{std::byte{0}, std::byte{0}, std::byte{0}, std::byte{1}}));
  CHECK_FALSE(tls::looks_like_tls({}));
}

TEST_CASE("impi tls: a socket Session handshakes and carries 8 MiB each way through small buffers", "[impi][tls]") {
  if (cert_dir().empty()) return;
  Connected pair;
  auto& [context, p, client, server] = pair;
  CHECK(std::string(SSL_get_version(client.native_handle())) == "TLSv1.3");
  CHECK(std::string(SSL_get_cipher_name(client.native_handle())) == "TLS_AES_128_GCM_SHA256");
  std::vector<std::byte> data(8 << 20);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>((i * 131 + i / 4093) & 0xff);
  int waits = 0;
  CHECK(transfer(p, 0, client, server, data, &waits) == data);
  CHECK(waits > 0);  // the 32 KiB socket buffers filled: the writer waited
  std::reverse(data.begin(), data.end());
  waits = 0;
  CHECK(transfer(p, 1, server, client, data, &waits) == data);
  CHECK(waits > 0);
  CHECK(!client.output_pending());
  CHECK(!server.output_pending());

  // The peer's socket closes without close_notify: truncated, not a clean end.
  p.close(0);
  CHECK(read_end(p, server).error == boost::asio::ssl::error::stream_truncated);
}

TEST_CASE("impi tls: a socket Session reports close_notify as the end of the stream", "[impi][tls]") {
  if (cert_dir().empty()) return;
  Connected pair;
  auto& [context, p, client, server] = pair;
  SSL_shutdown(client.native_handle());  // into the session's output
  REQUIRE(client.output_pending());
  REQUIRE(!client.flush().error);
  CHECK(read_end(p, server).error == boost::asio::error::eof);
}

TEST_CASE("impi tls: a socket Session rejects a certificate of another CA", "[impi][tls]") {
  if (cert_dir().empty()) return;
  auto good = tls::make_context(settings());
  auto other = tls::make_context(settings("other", "ca"));  // signed by other-ca, trusts ca
  SocketPair p;
  tls::Session client(good, p.fd[0], tls::Session::Role::client);
  tls::Session server(other, p.fd[1], tls::Session::Role::server);
  auto [c, s] = handshake(p, client, server);
  REQUIRE(c.error);
  CHECK(c.error.category() == boost::asio::error::get_ssl_category());
  CHECK(tls::describe_error(c.error, client.native_handle())
            .starts_with("certificate verify failed: unable to get local issuer certificate (the peer's certificate "
                         "is not signed by a CA of impi.tls_ca here)"));
}

TEST_CASE("impi tls: two channels handshake and carry data both ways", "[impi][tls]") {
  if (cert_dir().empty()) return;
  auto context = tls::make_context(settings());
  tls::Channel client(context, tls::Channel::Role::client), server(context, tls::Channel::Role::server);
  std::vector<std::byte> at_client, at_server;
  client.write(bytes("AUTH before the handshake"));  // held until it is through
  client.start();
  exchange(client, server, at_client, at_server);
  REQUIRE(client.handshake_done());
  REQUIRE(server.handshake_done());
  server.write(bytes("choice"));
  exchange(client, server, at_client, at_server);
  CHECK(at_server == bytes("AUTH before the handshake"));
  CHECK(at_client == bytes("choice"));
  client.close();
  exchange(client, server, at_client, at_server);
  CHECK(server.peer_closed());
}

TEST_CASE("impi tls: a certificate of another CA is rejected by either side", "[impi][tls]") {
  if (cert_dir().empty()) return;
  auto good = tls::make_context(settings());
  auto other = tls::make_context(settings("other", "ca"));  // signed by other-ca, trusts ca
  std::vector<std::byte> a, b;
  {
    // The server's certificate: the client's verification fails.
    tls::Channel client(good, tls::Channel::Role::client), server(other, tls::Channel::Role::server);
    client.start();
    exchange(client, server, a, b);
    CHECK(client.failed());
    CHECK(client.error().starts_with("certificate verify failed: unable to get local issuer certificate (the peer's "
                                     "certificate is not signed by a CA of impi.tls_ca here)"));
    CHECK(server.failed());
    CHECK(server.error().starts_with("the peer rejected this side's certificate ("));
  }
  {
    // The client's certificate: the server's verification fails.
    tls::Channel client(other, tls::Channel::Role::client), server(good, tls::Channel::Role::server);
    client.write(bytes("AUTH"));
    client.start();
    exchange(client, server, a, b);
    CHECK(server.failed());
    CHECK(server.error().starts_with("certificate verify failed: unable to get local issuer certificate"));
    CHECK(client.failed());
    CHECK(client.error().starts_with("the peer rejected this side's certificate ("));
  }
}

TEST_CASE("impi tls: ClientSession speaks TLS, and recognizes a TLS server when plain", "[impi][tls]") {
  ClientSettings plain;
  plain.auth.none = true;
  plain.tls_from_parameters = false;
  plain.server = "127.0.0.1:9";
  ClientSession p(plain);
  auto now = ClientSession::Clock::now();
  p.connected(now);
  (void)p.take_actions();
  p.received(tls::plaintext_rejection_alert(), now);
  auto actions = p.take_actions();
  REQUIRE(actions.size() == 1);
  auto* failed = std::get_if<client_action::Failed>(&actions[0]);
  REQUIRE(failed);
  CHECK(failed->line.starts_with("impi-server at 127.0.0.1:9 speaks TLS (impi.tls is on there, off here)"));

  if (cert_dir().empty()) return;
  ClientSettings with = plain;
  with.tls = tls::make_context(settings());
  ClientSession t(with);
  t.connected(now);
  actions = t.take_actions();
  REQUIRE(actions.size() == 1);
  auto* hello = std::get_if<client_action::Send>(&actions[0]);
  REQUIRE(hello);
  REQUIRE(hello->bytes.size() > 5);
  CHECK(hello->bytes[0] == tls::handshake_record);  // a ClientHello, not AUTH
  t.connection_lost("", now);
  actions = t.take_actions();
  REQUIRE(actions.size() == 1);
  failed = std::get_if<client_action::Failed>(&actions[0]);
  REQUIRE(failed);
  CHECK(failed->line.starts_with("impi-server closed the connection during the TLS handshake: 127.0.0.1:9 does not "
                                 "speak TLS"));
}
