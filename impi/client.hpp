// The client side of the IMPI client <-> server protocol (section 3 of
// docs/impi-protocol.md), as a socket-free state machine: mpirun -client
// (launcher/mpirun.cpp) owns the socket and feeds it events; it answers with
// actions.  Tests drive it with scripted server byte streams
// (tests/unit/test_impi_client.cpp).
//
//   connected()       -> AUTH(mask of the enabled methods)
//   8-byte choice     -> the 8-byte key when KEY was chosen, then IMPI(K)
//   IMPI(size)        -> K < size checked
//   local_hosts(...)  -> the 14 standard labels, GRIDMPI_DATAREP when every
//                        local rank announced the same representation
//                        (impi/datarep.hpp), then DONE (as soon as the
//                        IMPI answer is in as well; the order of the two
//                        events does not matter)
//   COLL...           -> collected, every label (also those not sent here)
//   DONE              -> the labels are checked (JobMap::from_labels) and
//                        handed over: action StartupComplete
//   finish()          -> FINI, then Close
//
// With TLS (impi.tls): connected() starts the TLS handshake instead; every
// Send carries TLS records and received() takes them; the IMPI exchange
// inside is the same.  A server that closes during the handshake, answers
// with TLS to a plain client, or rejects a certificate is one Failed line
// naming the cause (tls::describe_openssl_error) and the fix.
//
// Every failure is one action Failed{line} (line without "mpirun: ") and
// the session is over; the adapter then ends the job.  After Failed or
// Close nothing more is produced.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "impi/job_map.hpp"
#include "impi/params.hpp"
#include "impi/tls.hpp"

namespace gridmpi::impi {

struct ClientSettings {
  int client = 0;                    // K of mpirun -client K
  params::Auth auth;                 // the methods this side enables
  std::int32_t datalen = 65536;      // IMPI_C_DATALEN
  std::int32_t coll_xsize = -1;      // IMPI_C_COLL_XSIZE, -1 = protocol default
  std::int32_t coll_maxlinear = -1;  // IMPI_C_COLL_MAXLINEAR, -1 = protocol default
  // Bound on the start-up, from connected() to the server's DONE; 0 = none.
  std::chrono::milliseconds startup_timeout{300000};
  std::string server = "impi-server";  // "ADDR:PORT", for messages
  // TLS on the server connection (impi/tls.hpp): this context, or when it is
  // null and tls_from_parameters is set, what impi.tls* say (read by the
  // constructor; a bad setting becomes the Failed action of connected()).
  std::shared_ptr<tls::Context> tls;
  bool tls_from_parameters = true;
};

namespace client_action {
struct Send {  // bytes for the server connection
  std::vector<std::byte> bytes;
};
struct StartupComplete {
  CollatedLabels labels;
};
struct Failed {  // one line, without the "mpirun: " prefix
  std::string line;
};
struct Close {};  // after FINI: close the connection
}  // namespace client_action

using ClientAction =
    std::variant<client_action::Send, client_action::StartupComplete, client_action::Failed, client_action::Close>;

class ClientSession {
 public:
  using Clock = std::chrono::steady_clock;
  enum class State {
    idle,          // not connected yet
    auth_choice,   // AUTH sent, waiting for the server's 8-byte choice
    joining,       // IMPI K sent, waiting for IMPI size
    exchanging,    // waiting for the local hosts and/or the server's DONE
    ready,         // DONE received: the job runs, the connection is idle
    finished,      // FINI sent
    failed,
  };

  explicit ClientSession(ClientSettings settings);

  // The TCP connection to the server is up: sends AUTH.
  void connected(Clock::time_point now);
  // The local ranks' hosts, in local rank order (at least one).
  void local_hosts(std::vector<LocalHost> hosts, Clock::time_point now);
  void received(std::span<const std::byte> bytes, Clock::time_point now);
  // The server closed the connection (os_error empty) or it broke.
  void connection_lost(const std::string& os_error, Clock::time_point now);
  // The local job ended successfully: FINI.  Only in state ready.
  void finish();

  void tick(Clock::time_point now);
  std::optional<Clock::time_point> next_deadline() const;
  std::vector<ClientAction> take_actions();

  State state() const noexcept { return state_; }
  // The server's IMPI answer (0 until then).
  int nclients() const noexcept { return labels_.nclients; }

  // Largest command payload accepted from the server: a COLL carries every
  // proc's 16-byte address, so this allows millions of processes while a
  // stray program's garbage length is still caught.
  static constexpr std::uint32_t max_payload = 64u << 20;

 private:
  void fail(std::string line);
  void parse();
  bool handle_command(std::uint32_t command, std::span<const std::byte> payload);
  void send(std::vector<std::byte> bytes);
  void send_labels();
  void complete();
  std::string methods(std::uint32_t mask) const;
  void flush_tls();

  ClientSettings settings_;
  State state_ = State::idle;
  std::int32_t auth_chosen_ = -1;
  std::optional<std::vector<LocalHost>> hosts_;
  bool labels_sent_ = false;
  std::vector<std::int32_t> sent_codes_;
  CollatedLabels labels_;
  std::vector<std::byte> input_;
  std::optional<Clock::time_point> deadline_;
  std::vector<ClientAction> actions_;
  std::string tls_config_error_;
  std::unique_ptr<tls::Channel> tls_;
};

const char* client_state_name(ClientSession::State state) noexcept;

}  // namespace gridmpi::impi
