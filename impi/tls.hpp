// Optional TLS for the IMPI layer (OpenSSL through boost::asio::ssl): the
// client <-> impi-server connection and the host connections between MPI
// processes of different clusters.  Off by default (plain IMPI, so that other
// implementations can join); on with impi.tls = true on every side.
//
// Parameters (site file section [impi], or GRIDMPI_IMPI_TLS*):
//   impi.tls       bool    TLS on the server and host connections
//   impi.tls_cert  path    this site's certificate chain (PEM, leaf first)
//   impi.tls_key   path    its private key (PEM, unencrypted)
//   impi.tls_ca    path    the CA certificate(s) (PEM) that must have signed the peer's
//
// Verification is mutual and by chain only: each side presents its
// certificate and checks that the peer's chains to a CA of its impi.tls_ca
// (no host name check: the processes of a job are not named by DNS).  TLS 1.2
// at least; 1.3 when both sides have it.  Inside TLS the IMPI byte stream is
// unchanged (AUTH with the IMPI key still happens).
//
// Users: impi/tools/impi_server.cpp (asio::ssl::stream, server role),
// impi/client.cpp (ClientSession runs a Channel: mpirun owns a plain fd),
// impi/transport.cpp (asio::ssl::stream per host connection; the connecting
// side - the higher host index - is the TLS client).
#pragma once
#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

typedef struct ssl_st SSL;

namespace gridmpi::impi::tls {

using Context = boost::asio::ssl::context;

struct Settings {
  bool enabled = false;
  std::string cert;  // PEM chain
  std::string key;   // PEM private key
  std::string ca;    // PEM CA bundle
};

// The four parameters.  Throws conf::ConfigError for a malformed impi.tls.
Settings settings_from_parameters();

// The context both roles use (client and server; mutual verification).
// Throws conf::ConfigError with one line naming the parameter, the file and
// the fix, e.g. "impi.tls_cert: cannot read /x/y.pem: No such file or
// directory (set it in the site file's [impi] section or
// GRIDMPI_IMPI_TLS_CERT)".  Also refuses a certificate that has expired or
// is not yet valid, and a key that does not belong to the certificate.
std::shared_ptr<Context> make_context(const Settings& settings);

// impi.tls_handshake_timeout: the bound on one TLS handshake (and on the
// first byte of an accepted TLS connection).
std::chrono::milliseconds handshake_timeout();

// make_context(settings_from_parameters()), or nullptr when impi.tls is off.
std::shared_ptr<Context> context_from_parameters();

// The first byte of a TLS connection (a handshake record) and of a TLS alert.
constexpr std::byte handshake_record{0x16};
constexpr std::byte alert_record{0x15};
// A fatal TLS alert "unexpected_message": what a TLS side sends to a peer
// that spoke plain IMPI to it, before closing (a plain GridMPI peer
// recognizes it and says so; others just see the connection close).
std::vector<std::byte> plaintext_rejection_alert();
// Whether `bytes` (the start of what a plain peer received) looks like TLS:
// a handshake or alert record header (0x16 or 0x15, then 0x03).
bool looks_like_tls(std::span<const std::byte> bytes);

// Short text for a failed TLS operation, with the likely fix, e.g.
// "certificate verify failed: unable to get local issuer certificate (the
// peer's certificate is not signed by a CA of impi.tls_ca here)".  `ssl`
// (may be null) supplies the verification result.
std::string describe_error(const boost::system::error_code& ec, const SSL* ssl);
std::string describe_openssl_error(unsigned long error, const SSL* ssl);

// TLS over memory buffers, for a connection whose socket is someone else's
// (mpirun owns the server connection's fd): raw bytes in with feed(), raw
// bytes out with take_output().  Plain bytes written before the handshake
// completes are held and sent after it.
class Channel {
 public:
  enum class Role { client, server };
  Channel(std::shared_ptr<Context> context, Role role);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Starts the handshake (the client's ClientHello goes to the output).
  void start();
  // Raw bytes from the peer.  Decrypted bytes are appended to `plain`.
  // Returns false once the channel failed (error() says why).
  bool feed(std::span<const std::byte> raw, std::vector<std::byte>& plain);
  // Plain bytes for the peer.
  void write(std::span<const std::byte> plain);
  // A close_notify for the peer.
  void close();
  // Raw bytes to send.
  std::vector<std::byte> take_output();

  bool handshake_done() const noexcept { return handshake_done_; }
  bool failed() const noexcept { return !error_.empty(); }
  bool peer_closed() const noexcept { return peer_closed_; }
  // Bytes received so far (raw): 0 means the peer never answered.
  std::uint64_t raw_received() const noexcept { return raw_received_; }
  const std::string& error() const noexcept { return error_; }

 private:
  void pump();
  void flush_pending();
  void set_error(int ssl_error, int rc);

  std::shared_ptr<Context> context_;
  SSL* ssl_ = nullptr;
  void* in_ = nullptr;   // BIO*
  void* out_ = nullptr;  // BIO*
  bool handshake_done_ = false;
  bool peer_closed_ = false;
  std::uint64_t raw_received_ = 0;
  std::vector<std::byte> pending_;  // plain bytes written before the handshake completed
  std::vector<std::byte>* plain_ = nullptr;
  std::string error_;
};

}  // namespace gridmpi::impi::tls
