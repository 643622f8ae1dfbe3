// TLS for the IMPI layer (impi/tls.hpp).
#include "impi/tls.hpp"

#include <sys/socket.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>

#include "conf/registry.hpp"

namespace gridmpi::impi::tls {

namespace {

using conf::Level;
using conf::Param;

const Param<bool> tls_param{
    "impi.tls", false, "",
    "TLS with mutual certificate authentication on the impi-server and host connections (every cluster and the "
    "server must agree; plain IMPI when off)",
    Level::user};
const Param<std::string> cert_param{
    "impi.tls_cert", "", "", "PEM file: this site's certificate chain (leaf first), used when impi.tls is on",
    Level::user};
const Param<std::string> key_param{
    "impi.tls_key", "", "", "PEM file: the private key of impi.tls_cert (unencrypted; keep it readable only by you)",
    Level::user};
const Param<std::string> ca_param{
    "impi.tls_ca", "", "",
    "PEM file: the CA certificate(s) that must have signed the peers' certificates, used when impi.tls is on",
    Level::user};

const Param<double> handshake_timeout_param{
    "impi.tls_handshake_timeout", 30.0, "seconds",
    "bound on one TLS handshake of an IMPI connection (server or host connection)", Level::tuner};

std::string where(const conf::ParamBase& p) {
  return fmt::format("set it in the site file's [impi] section or {}", conf::environment_name(p.info().name));
}

// The reason text of the last OpenSSL error on this thread, and clears the queue.
std::string last_openssl_reason() {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "unknown error";
  const char* r = ERR_reason_error_string(e);
  return r ? r : fmt::format("error {:#x}", e);
}

// The file must exist and be readable: a clear errno before OpenSSL's text.
void check_readable(const conf::ParamBase& p, const std::string& path) {
  if (path.empty())
    throw conf::ConfigError(fmt::format("impi.tls is on but {} is not set ({})", p.info().name, where(p)));
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f)
    throw conf::ConfigError(
        fmt::format("{}: cannot read {}: {} ({})", p.info().name, path, std::strerror(errno), where(p)));
  std::fclose(f);
}

std::string asn1_time_text(const ASN1_TIME* t) {
  BIO* b = BIO_new(BIO_s_mem());
  if (!b) return "?";
  ASN1_TIME_print(b, t);
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  std::string out(data, static_cast<std::size_t>(n > 0 ? n : 0));
  BIO_free(b);
  return out;
}

int reason_of(unsigned long e) { return ERR_GET_REASON(e); }

}  // namespace

Settings settings_from_parameters() {
  Settings s;
  s.enabled = tls_param.get();
  s.cert = cert_param.get();
  s.key = key_param.get();
  s.ca = ca_param.get();
  return s;
}

std::shared_ptr<Context> make_context(const Settings& s) {
  check_readable(cert_param, s.cert);
  check_readable(key_param, s.key);
  check_readable(ca_param, s.ca);
  ERR_clear_error();
  auto context = std::make_shared<Context>(Context::tls);
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // TLS 1.3 suites, fastest first with AES instructions (the server's order
  // decides): AES-128-GCM encrypts a sixth faster than AES-256-GCM.
  SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256");
  SSL_CTX_set_num_tickets(ctx, 0);  // sessions are never resumed: no tickets to send
  if (SSL_CTX_use_certificate_chain_file(ctx, s.cert.c_str()) != 1)
    throw conf::ConfigError(fmt::format("impi.tls_cert: {}: not a usable PEM certificate chain ({}); {}", s.cert,
                                        last_openssl_reason(), where(cert_param)));
  if (X509* leaf = SSL_CTX_get0_certificate(ctx)) {
    if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0)
      throw conf::ConfigError(fmt::format("impi.tls_cert: the certificate in {} expired on {}: have the site's CA sign "
                                          "a new one (docs/multicluster.md, \"Security: TLS\")",
                                          s.cert, asn1_time_text(X509_get0_notAfter(leaf))));
    if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0)
      throw conf::ConfigError(fmt::format("impi.tls_cert: the certificate in {} is not valid before {} (is this "
                                          "host's clock right?)",
                                          s.cert, asn1_time_text(X509_get0_notBefore(leaf))));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, s.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    unsigned long e = ERR_peek_last_error();
    if (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      throw conf::ConfigError(fmt::format("impi.tls_key: the key in {} does not belong to the certificate in {} "
                                          "(impi.tls_cert): name the key the certificate was made for",
                                          s.key, s.cert));
    }
    throw conf::ConfigError(fmt::format("impi.tls_key: {}: not a usable unencrypted PEM private key ({}); {}", s.key,
                                        last_openssl_reason(), where(key_param)));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    throw conf::ConfigError(fmt::format("impi.tls_key: the key in {} does not belong to the certificate in {} "
                                        "(impi.tls_cert): name the key the certificate was made for",
                                        s.key, s.cert));
  }
  if (SSL_CTX_load_verify_locations(ctx, s.ca.c_str(), nullptr) != 1)
    throw conf::ConfigError(fmt::format("impi.tls_ca: {}: not a usable PEM CA certificate file ({}); {}", s.ca,
                                        last_openssl_reason(), where(ca_param)));
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  ERR_clear_error();
  return context;
}

std::chrono::milliseconds handshake_timeout() {
  double v = handshake_timeout_param.get();
  if (!(v > 0 && v <= 86400))
    throw conf::ConfigError(fmt::format("impi.tls_handshake_timeout is {}: use a number of seconds above 0", v));
  return std::chrono::milliseconds(static_cast<long long>(v * 1000));
}

std::shared_ptr<Context> context_from_parameters() {
  Settings s = settings_from_parameters();
  if (!s.enabled) return nullptr;
  return make_context(s);
}

std::vector<std::byte> plaintext_rejection_alert() {
  // TLS 1.2 record: type alert, version 3.3, length 2, level fatal (2), unexpected_message (10).
  return {std::byte{0x15}, std::byte{0x03}, std::byte{0x03}, std::byte{0x00},
          std::byte{0x02}, std::byte{0x02}, std::byte{0x0a}};
}

bool looks_like_tls(std::span<const std::byte> bytes) {
  if (bytes.empty()) return false;
  if (bytes[0] != handshake_record && bytes[0] != alert_record) return false;
  return bytes.size() < 2 || bytes[1] == std::byte{0x03};
}

std::string describe_openssl_error(unsigned long error, const SSL* ssl) {
  int reason = reason_of(error);
  const char* text = ERR_reason_error_string(error);
  std::string what = text ? text : fmt::format("TLS error {:#x}", error);
  switch (reason) {
    case SSL_R_CERTIFICATE_VERIFY_FAILED: {
      long v = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
      std::string detail = v != X509_V_OK ? X509_verify_cert_error_string(v) : "";
      std::string hint = v == X509_V_ERR_CERT_HAS_EXPIRED
                             ? "the peer's certificate has expired: it needs a new one"
                             : "the peer's certificate is not signed by a CA of impi.tls_ca here";
      return fmt::format("certificate verify failed{}{} ({})", detail.empty() ? "" : ": ", detail, hint);
    }
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_UNKNOWN_PROTOCOL:
      return fmt::format("the peer does not speak TLS ({}): set impi.tls on both sides (or off on both)", what);
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return "the peer sent no certificate: set impi.tls_cert and impi.tls_key there";
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
      return fmt::format("the peer rejected this side's certificate ({}): the peer's impi.tls_ca must hold the CA "
                         "that signed impi.tls_cert here, and the certificate must be valid",
                         what);
    default:
      return what;
  }
}

std::string describe_error(const boost::system::error_code& ec, const SSL* ssl) {
  if (ec.category() == boost::asio::error::get_ssl_category())
    return describe_openssl_error(static_cast<unsigned long>(static_cast<unsigned int>(ec.value())), ssl);
  if (ec == boost::asio::ssl::error::stream_truncated || ec == boost::asio::error::eof ||
      ec == boost::asio::error::connection_reset)
    return fmt::format("the peer closed the connection during the TLS handshake ({}): it does not speak TLS (set "
                       "impi.tls on both sides) or it rejected this side's certificate (see its output)",
                       ec == boost::asio::ssl::error::stream_truncated ? "stream truncated" : ec.message());
  return ec.message();
}

// ---- Channel ------------------------------------------------------------------------

Channel::Channel(std::shared_ptr<Context> context, Role role) : context_(std::move(context)) {
  ssl_ = SSL_new(context_->native_handle());
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (!ssl_ || !in || !out) {
    if (in) BIO_free(in);
    if (out) BIO_free(out);
    error_ = "cannot create a TLS session: " + last_openssl_reason();
    return;
  }
  BIO_set_mem_eof_return(in, -1);  // empty = "want more", not end of file
  SSL_set_bio(ssl_, in, out);      // owned by ssl_ from here
  in_ = in;
  out_ = out;
  if (role == Role::client)
    SSL_set_connect_state(ssl_);
  else
    SSL_set_accept_state(ssl_);
}

Channel::~Channel() {
  if (ssl_) SSL_free(ssl_);
}

void Channel::set_error(int ssl_error, int rc) {
  if (!error_.empty()) return;
  unsigned long e = ERR_peek_last_error();
  if (ssl_error == SSL_ERROR_SSL && e != 0) {
    error_ = describe_openssl_error(e, ssl_);
  } else if (ssl_error == SSL_ERROR_ZERO_RETURN) {
    error_ = "the peer closed the TLS session";
  } else {
    error_ = fmt::format("TLS failure (SSL error {}, rc {})", ssl_error, rc);
  }
  ERR_clear_error();
}

void Channel::start() {
  if (!ssl_ || failed()) return;
  pump();
}

void Channel::pump() {
  if (!handshake_done_) {
    ERR_clear_error();
    int rc = SSL_do_handshake(ssl_);
    if (rc == 1) {
      handshake_done_ = true;
      flush_pending();
    } else {
      int e = SSL_get_error(ssl_, rc);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        set_error(e, rc);
        return;
      }
    }
  }
  if (!handshake_done_ || !plain_) return;
  std::byte buffer[16384];
  for (;;) {
    ERR_clear_error();
    int n = SSL_read(ssl_, buffer, sizeof buffer);
    if (n > 0) {
      plain_->insert(plain_->end(), buffer, buffer + n);
      continue;
    }
    int e = SSL_get_error(ssl_, n);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return;
    if (e == SSL_ERROR_ZERO_RETURN) {
      peer_closed_ = true;
      return;
    }
    set_error(e, n);
    return;
  }
}

void Channel::flush_pending() {
  if (pending_.empty()) return;
  std::vector<std::byte> p;
  p.swap(pending_);
  write(p);
}

bool Channel::feed(std::span<const std::byte> raw, std::vector<std::byte>& plain) {
  if (failed()) return false;
  raw_received_ += raw.size();
  while (!raw.empty()) {
    int n = BIO_write(static_cast<BIO*>(in_), raw.data(), static_cast<int>(std::min<std::size_t>(raw.size(), 1 << 30)));
    if (n <= 0) {
      error_ = "cannot buffer TLS input";
      return false;
    }
    raw = raw.subspan(static_cast<std::size_t>(n));
  }
  plain_ = &plain;
  pump();
  plain_ = nullptr;
  return !failed();
}

void Channel::write(std::span<const std::byte> plain) {
  if (failed() || plain.empty()) return;
  if (!handshake_done_) {
    pending_.insert(pending_.end(), plain.begin(), plain.end());
    return;
  }
  while (!plain.empty()) {
    ERR_clear_error();
    int n = SSL_write(ssl_, plain.data(), static_cast<int>(std::min<std::size_t>(plain.size(), 1 << 20)));
    if (n <= 0) {
      set_error(SSL_get_error(ssl_, n), n);
      return;
    }
    plain = plain.subspan(static_cast<std::size_t>(n));
  }
}

void Channel::close() {
  if (!ssl_ || failed() || !handshake_done_) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);
  ERR_clear_error();
}

std::vector<std::byte> Channel::take_output() {
  std::vector<std::byte> out;
  if (!out_) return out;
  BIO* b = static_cast<BIO*>(out_);
  std::size_t pending = BIO_ctrl_pending(b);
  if (pending == 0) return out;
  out.resize(pending);
  int n = BIO_read(b, out.data(), static_cast<int>(pending));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

// ---- Session ------------------------------------------------------------------------

namespace {

// A write-only BIO that appends to a std::vector<std::byte> (BIO_get_data).
BIO_METHOD* output_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "gridmpi TLS output");
    if (!m) return m;
    BIO_meth_set_write_ex(m, [](BIO* b, const char* data, std::size_t length, std::size_t* written) -> int {
      auto* out = static_cast<std::vector<std::byte>*>(BIO_get_data(b));
      const auto* p = reinterpret_cast<const std::byte*>(data);
      out->insert(out->end(), p, p + length);
      *written = length;
      return 1;
    });
    BIO_meth_set_ctrl(m, [](BIO*, int command, long, void*) -> long { return command == BIO_CTRL_FLUSH ? 1 : 0; });
    BIO_meth_set_create(m, [](BIO* b) -> int {
      BIO_set_init(b, 1);
      return 1;
    });
    return m;
  }();
  return method;
}

}  // namespace

Session::Session(const std::shared_ptr<Context>& context, int fd, Role role) : context_(context), fd_(fd) {
  ssl_ = SSL_new(context_->native_handle());
  if (!ssl_) throw std::runtime_error("cannot create a TLS session: " + last_openssl_reason());
  BIO* in = BIO_new_socket(fd, BIO_NOCLOSE);
  BIO* out = output_method() ? BIO_new(output_method()) : nullptr;
  if (!in || !out) {
    if (in) BIO_free(in);
    if (out) BIO_free(out);
    SSL_free(ssl_);
    ssl_ = nullptr;
    throw std::runtime_error("cannot attach a TLS session to its socket: " + last_openssl_reason());
  }
  BIO_set_data(out, &out_);
  SSL_set_bio(ssl_, in, out);  // owned by ssl_ from here
  out_.reserve(output_batch + 2 * 16384);
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE);
  SSL_set_read_ahead(ssl_, 1);
  SSL_set_default_read_buffer_len(ssl_, read_buffer);
  if (role == Role::client)
    SSL_set_connect_state(ssl_);
  else
    SSL_set_accept_state(ssl_);
}

Session::~Session() {
  if (ssl_) SSL_free(ssl_);
}

Session::Result Session::outcome(int rc) {
  Result r;
  if (rc > 0) {
    r.bytes = static_cast<std::size_t>(rc);
    return r;
  }
  int saved_errno = errno;
  int e = SSL_get_error(ssl_, rc);
  switch (e) {
    case SSL_ERROR_WANT_READ:
      r.want = Want::read;
      break;
    case SSL_ERROR_WANT_WRITE:
      r.want = Want::write;
      break;
    case SSL_ERROR_ZERO_RETURN:
      r.error = boost::asio::error::eof;
      break;
    case SSL_ERROR_SYSCALL:
      // No OpenSSL error: the socket failed (errno) or ended mid-stream.
      r.error = saved_errno != 0 ? boost::system::error_code(saved_errno, boost::system::system_category())
                                 : boost::system::error_code(boost::asio::ssl::error::stream_truncated);
      break;
    default: {
      unsigned long error = ERR_peek_last_error();
      if (ERR_GET_REASON(error) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
        r.error = boost::asio::ssl::error::stream_truncated;
      else
        r.error = boost::system::error_code(static_cast<int>(error), boost::asio::error::get_ssl_category());
      break;
    }
  }
  ERR_clear_error();
  return r;
}

Session::Result Session::flush() {
  Result r;
  while (out_sent_ < out_.size()) {
    ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
    if (n > 0) {
      out_sent_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      r.want = Want::write;
      return r;
    }
    r.error = boost::system::error_code(n < 0 ? errno : EPIPE, boost::system::system_category());
    return r;
  }
  out_.clear();
  out_sent_ = 0;
  return r;
}

// The error queue is empty before every operation (outcome() clears it
// after a failure; nothing else in an MPI process leaves errors there), so
// SSL_get_error's answer is this operation's: no ERR_clear_error per
// record, which cost 2% of a 16 MiB transfer.
Session::Result Session::handshake() {
  errno = 0;
  int rc = SSL_do_handshake(ssl_);
  Result r = rc == 1 ? Result{} : outcome(rc);
  // What the handshake wrote goes before any wait for the peer's answer.
  Result f = flush();
  if (r.error) return r;
  if (f.error || f.want != Want::nothing) return f;
  return r;
}

Session::Result Session::read(std::span<std::byte> plain) {
  errno = 0;
  Result r = outcome(SSL_read(ssl_, plain.data(), static_cast<int>(std::min<std::size_t>(plain.size(), 1 << 30))));
  if (output_pending()) {
    // A record OpenSSL had to answer (an alert, a key update).
    Result f = flush();
    if (f.error && !r.error) return f;
    if (r.want == Want::read && f.want == Want::write) return f;
  }
  return r;
}

Session::Result Session::write(std::span<const std::byte> plain) {
  Result r;
  if (output_pending()) {
    Result f = flush();
    if (f.error || f.want != Want::nothing) return f;
  }
  while (r.bytes < plain.size() && out_.size() < output_batch) {
    errno = 0;
    std::span<const std::byte> rest = plain.subspan(r.bytes);
    Result w = outcome(SSL_write(ssl_, rest.data(), static_cast<int>(std::min<std::size_t>(rest.size(), 1 << 30))));
    if (w.error) return w;
    if (w.want != Want::nothing) {
      // Never for want of room (the output takes everything); the caller
      // waits as told and calls again.
      if (r.bytes == 0) r.want = w.want;
      break;
    }
    r.bytes += w.bytes;
    if (r.bytes == w.bytes) {
      // The first record goes at once: the peer decrypts it while the rest
      // of the batch is encrypted here.
      Result f = flush();
      if (f.error) return f;
    }
  }
  Result f = flush();
  if (f.error) return f;
  return r;
}

}  // namespace gridmpi::impi::tls
