// impi-server's protocol logic as a socket-free state machine
// (docs/impi-protocol.md section 3; user documentation: docs/impi-server.md).
//
// The I/O adapter (impi/tools/impi_server.cpp) owns the sockets; it feeds this
// object events (a connection opened, bytes arrived, a connection closed, a
// signal arrived) and carries out the actions it returns (send bytes, close a
// connection, print a line on stderr, finish with an exit status).  Tests
// drive it with scripted byte streams (tests/unit/test_impi_server.cpp).
//
// What it decides:
//  * per connection: AUTH (KEY when both sides enable it, else NONE), then
//    IMPI (client rank 0..M-1, each once; the reply {IMPI,M} goes out at once);
//  * collation of COLL contributions: the 14 standard labels in canonical
//    order; label k is broadcast to every client once all M clients have
//    joined and each has submitted k, gone past it, or sent DONE; unknown
//    labels are read and dropped; DONE to everyone once all sent DONE and
//    every label is out; then exit status 0 when all M clients sent FINI;
//  * refusal: a connection that has not yet been accepted as client K (by its
//    IMPI command) is not part of the job.  When it fails authentication,
//    asks for a client rank out of range or already taken, sends bytes that
//    are not the IMPI protocol or disconnects, only that connection is closed,
//    with one line naming it and the cause; the job goes on.  A mistyped
//    mpirun -client or a stranger who can reach the port cannot end a job.
//  * failure: a client (accepted as client K) that breaks the protocol or
//    disconnects before FINI ends the job.  ONE line names the client and the
//    cause, every other connection is closed (so every mpirun learns the job
//    is over instead of waiting) and the exit status is 1.
//  * A first byte that starts a TLS record (a client with impi.tls on, this
//    server without) refuses that connection with a line saying so.  TLS
//    itself is the adapter's: with impi.tls on, this object sees the
//    decrypted stream.
//  * A connection that closes without sending a single byte is a port probe
//    (nc -z, a scanner), not a client: it is ignored (logged with -verbose).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace gridmpi::impi {

using ConnectionId = std::uint64_t;

struct ServerSettings {
  int clients = 1;                         // M, 1..32 (impi-server -server M)
  bool auth_none = false;                  // IMPI_AUTH_NONE is set
  std::optional<std::uint64_t> auth_key;   // IMPI_AUTH_KEY
  bool verbose = false;                    // one line per event
  // Longest command payload accepted; longer is a protocol error (a real
  // contribution is a few KiB: one 16-byte address per process).
  std::uint32_t max_command_length = 16u << 20;
};

namespace server_action {
struct Send {
  ConnectionId connection;
  std::vector<std::byte> bytes;
};
// Close after the bytes already queued for this connection have been sent.
struct Close {
  ConnectionId connection;
};
// One line for stderr, without the trailing newline.
struct Print {
  std::string line;
};
// Stop accepting, flush what is queued, exit with this status.
struct Finish {
  int exit_status;
};
}  // namespace server_action

using ServerAction =
    std::variant<server_action::Send, server_action::Close, server_action::Print, server_action::Finish>;

class ServerState {
 public:
  // Throws std::invalid_argument for clients outside 1..32 or no auth method.
  explicit ServerState(ServerSettings settings);

  void connection_opened(ConnectionId connection, std::string peer);
  void received(ConnectionId connection, std::span<const std::byte> bytes);
  // The peer closed (or the connection failed); not called for connections
  // this object closed itself.
  void connection_closed(ConnectionId connection);
  // The connection failed below the protocol (its TLS handshake, say): refuses
  // it ("client from PEER: <why>: refused ..."; before IMPI it is not a client
  // yet), or ends the job if it was client K.  The adapter closes it.
  void connection_failed(ConnectionId connection, const std::string& why);
  // SIGINT / SIGTERM: close every client, exit status 1.
  void interrupted(int signo);

  std::vector<ServerAction> take_actions();

  bool finished() const noexcept { return exit_status_.has_value(); }
  std::optional<int> exit_status() const noexcept { return exit_status_; }
  int clients_joined() const noexcept { return joined_; }
  int clients_finished() const noexcept { return finis_; }
  // Labels broadcast so far, in order (codes).
  const std::vector<std::int32_t>& broadcast_labels() const noexcept { return broadcast_; }

 private:
  enum class Phase {
    auth,      // waiting for {AUTH,4} mask
    key,       // waiting for the 8 raw bytes of the key
    identify,  // waiting for {IMPI,4} rank
    collate,   // COLL ... then DONE
    done,      // sent DONE; only FINI may follow (after the server's DONE)
  };
  struct Connection {
    std::string peer;
    Phase phase = Phase::auth;
    int rank = -1;
    std::vector<std::byte> input;  // bytes not yet consumed
    std::uint64_t bytes_received = 0;
  };
  struct Client {
    std::optional<ConnectionId> connection;
    std::string peer;
    int progress = -1;  // canonical index of the last label submitted
    bool done = false;
    bool fini = false;
  };

  // Consumes one command from the front of `in`; 0 = needs more bytes (or
  // the job ended: check exit_status_).
  std::size_t step(ConnectionId id, Connection& c, std::span<const std::byte> in);
  void on_auth(ConnectionId id, Connection& c, std::uint32_t mask);
  void on_key(ConnectionId id, Connection& c, std::uint64_t key);
  void on_impi(ConnectionId id, Connection& c, std::int32_t rank);
  void on_coll(Connection& c, std::int32_t label, std::span<const std::byte> data);
  void on_done(Connection& c);
  void on_fini(ConnectionId id, Connection& c);
  void flush();
  void broadcast(const std::vector<std::byte>& bytes);
  // Ends the job: one line ("impi-server: <what>: the job is over..."),
  // every connection closed, exit status 1.  `connection_gone`: the client
  // at fault has already been removed from connections_.
  void fail(const std::string& what, bool connection_gone = false);
  // Drops one connection that is not (yet) a client of the job: one line
  // ("impi-server: <what>: refused, ...; the job goes on"), that connection
  // closed (nullopt: the adapter closes it), nothing else changes.
  void refuse(std::optional<ConnectionId> id, const std::string& what);
  // A protocol error of `c`: refuse() before it joined as client K, else fail().
  void misbehaved(ConnectionId id, const Connection& c, const std::string& what);
  // " (1 of 3 clients joined)" while the job waits for clients, else "".
  std::string waiting_for() const;
  void stop(const std::string& line, int exit_status);
  void send(ConnectionId id, std::vector<std::byte> bytes);
  void close(ConnectionId id);
  void print(std::string line);
  void verbose(const std::string& line);
  std::string who(const Connection& c) const;
  std::uint32_t server_mask() const noexcept;

  ServerSettings settings_;
  std::map<ConnectionId, Connection> connections_;
  std::vector<Client> clients_;  // index = client rank
  // contributions_[label index][client rank]
  std::vector<std::vector<std::optional<std::vector<std::byte>>>> contributions_;
  std::size_t next_label_ = 0;  // canonical index of the next label to broadcast
  std::vector<std::int32_t> broadcast_;
  int joined_ = 0;
  int dones_ = 0;
  int finis_ = 0;
  bool done_sent_ = false;
  std::optional<int> exit_status_;
  std::vector<ServerAction> actions_;
};

// "0x3 = NONE+KEY", "0x0 = none": an authentication mask for messages.
std::string describe_auth_mask(std::uint32_t mask);

}  // namespace gridmpi::impi
