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
// impi/connection.cpp (a Session per host connection; the connecting side -
// the higher host index - is the TLS client).
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

// TLS straight on a connected non-blocking socket, for the host
// connections' data path.  asio's ssl::stream moves every 16 KiB record
// through a BIO pair and two more copies, with one completion handler and
// one send() per record: at 1 ms one-way it reached 0.72 of raw TCP
// ping-pong for 16 MiB on two cores.  Here OpenSSL reads the socket itself,
// up to read_buffer bytes per read() into its own buffer (read-ahead),
// decrypts in place and copies once into the caller's buffer; its records
// are gathered in this session's output buffer and go out up to
// output_batch bytes per send().  The caller waits for the socket (asio's
// async_wait) when an operation wants to read or write, then calls it again.
class Session {
 public:
  enum class Role { client, server };
  // What an operation needs before it can go on.
  enum class Want { nothing, read, write };
  struct Result {
    std::size_t bytes = 0;              // read or write: plain bytes taken or given
    Want want = Want::nothing;          // wait for the socket, then call again
    boost::system::error_code error;    // failed (eof: the peer's close_notify)
  };
  static constexpr std::size_t read_buffer = 64 * 1024;    // measured: 32 KiB-1 MiB within 5%, 64 KiB best
  static constexpr std::size_t output_batch = 256 * 1024;  // records encrypted before they must go out

  // `fd` stays the caller's (not closed here) and must be non-blocking.
  // Throws std::runtime_error when OpenSSL cannot make the session.
  Session(const std::shared_ptr<Context>& context, int fd, Role role);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Handshake: bytes is 0; nothing wanted and no error means done.
  Result handshake();
  // Up to plain.size() bytes.  A result with bytes > 0 may be followed by
  // more: call again until it wants something (then the socket is empty and
  // OpenSSL holds no whole record).
  Result read(std::span<std::byte> plain);
  // Encrypts from the front of `plain` - the first record sent at once (the
  // peer decrypts it meanwhile), then records while the output batch has
  // room, at most output_batch + 16 KiB in all; bytes says how many were
  // taken (they may be reused at once) - and sends what it can.
  // Want::write: the earlier output is still there, nothing was taken;
  // wait until the socket is writable.
  Result write(std::span<const std::byte> plain);
  // Sends the output still held; Want::write until it is all gone.
  Result flush();
  bool output_pending() const noexcept { return out_sent_ < out_.size(); }

  SSL* native_handle() const noexcept { return ssl_; }

 private:
  Result outcome(int rc);

  std::shared_ptr<Context> context_;
  SSL* ssl_ = nullptr;
  int fd_;
  std::vector<std::byte> out_;  // encrypted records not sent yet, from out_sent_
  std::size_t out_sent_ = 0;
};

}  // namespace gridmpi::impi::tls
