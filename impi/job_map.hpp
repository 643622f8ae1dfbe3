// What every participant of a multi-cluster job knows after the server's
// DONE (docs/impi-protocol.md section 4), and how it travels from mpirun (the
// IMPI client agent) to the MPI processes of its cluster.
//
// The start-up, process side (impi/startup.hpp, driven by boot/start.cpp):
//   1. each process opens its IMPI listening socket (impi/startup.hpp, open_host) and
//      publishes a LocalHost through mpirun's control service
//      (boot::ControlClient::exchange_with_agent(key_local_host, LocalHost::encode()));
//   2. mpirun collects the LocalHost of every local rank, runs the client
//      side of the server protocol (impi/client.hpp), and answers the
//      exchange with ONE value: the CollatedLabels it received, encoded;
//   3. each process decodes them into a JobMap (JobMap::from_labels), which
//      gives its MPI_COMM_WORLD rank and size, every proc's identity and
//      every host's address, and the job-wide parameters.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impi/datarep.hpp"
#include "impi/wire.hpp"

namespace gridmpi::impi {

// The control-service key of step 1.
inline constexpr const char* key_local_host = "impi-host";

// One MPI process as an IMPI host (GridMPI makes every process its own host,
// serving exactly one proc: itself).
struct LocalHost {
  HostId address{};       // IMPI_H_IPV6 and IMPI_P_IPV6
  std::uint16_t port = 0; // IMPI_H_PORT
  std::int64_t pid = 0;   // IMPI_P_PID
  std::int32_t ackmark = 10;  // IMPI_H_ACKMARK of this host
  std::int32_t hiwater = 20;  // IMPI_H_HIWATER of this host
  std::optional<Datarep> datarep;  // its data representation (impi/datarep.hpp), none: external32 only
  // Where the other clusters connect, when not `address`:`port` (behind an
  // impi-relay, the relay's public port forwarding to this listener).  Set
  // by mpirun, not published by the rank (not in encode()).
  HostId reach_address{};
  std::uint16_t reach_port = 0;
  std::string encode() const;
  static LocalHost decode(std::string_view text);  // throws WireError
  bool operator==(const LocalHost&) const = default;
};

// The server's answers, label by label: what a client holds after DONE.
struct CollatedLabel {
  std::uint32_t mask = 0;          // bit i: client i contributed
  std::vector<std::byte> data;     // the contributions, ascending client rank
  bool operator==(const CollatedLabel&) const = default;
};
struct CollatedLabels {
  int nclients = 0;   // the server's IMPI answer
  int my_client = 0;  // this cluster's client rank
  std::map<std::int32_t, CollatedLabel> labels;  // every label broadcast by the server
  std::string encode() const;
  static CollatedLabels decode(std::string_view text);  // throws WireError
  bool operator==(const CollatedLabels&) const = default;
};

struct HostEntry {
  HostId address{};
  std::uint16_t port = 0;
  std::int32_t nprocs = 1;
  int client = 0;
  int first_rank = 0;  // world rank of its first proc
};

struct JobMap {
  int nclients = 1;
  int my_client = 0;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> versions;  // per client, ascending
  std::vector<int> client_nhosts;   // per client
  std::vector<int> client_nprocs;   // per client
  std::vector<int> client_first_rank;  // per client: its first world rank
  std::vector<HostEntry> hosts;     // global host order
  std::vector<Proc> procs;          // index = MPI_COMM_WORLD rank
  std::vector<int> proc_host;       // global host index of each proc
  std::vector<int> proc_client;     // client of each proc
  // Job-wide values (section 4): minima, defaults substituted.
  std::int32_t datalen = 65536;     // min IMPI_C_DATALEN
  std::int32_t tagub = 0x7fffffff;  // min IMPI_C_TAGUB
  std::int32_t coll_xsize = 1024;
  std::int32_t coll_maxlinear = 4;
  std::int32_t ackmark = 10;        // min IMPI_H_ACKMARK
  std::int32_t hiwater = 20;        // min IMPI_H_HIWATER
  // Per client: its label_gridmpi_datarep record (none for a third-party
  // client, or when the server dropped the label).
  std::vector<std::optional<Datarep>> client_datarep;

  // How user data travels between this cluster and `client` (impi/datarep.hpp).
  p2p::DataRepresentation representation_with(int client) const {
    auto of = [this](int c) {
      return c >= 0 && static_cast<std::size_t>(c) < client_datarep.size() ? client_datarep[static_cast<std::size_t>(c)]
                                                                           : std::nullopt;
    };
    return representation_between(of(my_client), of(client));
  }

  // The one representation every pair of clients can use (the IMPI
  // collectives relay streams between clients): native when all clients
  // hold data alike, external64 when all are LP64 gridmpi clients, else
  // external32.
  p2p::DataRepresentation common_representation() const {
    auto all = [this](auto pred) {
      return !client_datarep.empty() &&
             std::all_of(client_datarep.begin(), client_datarep.end(), [&](const auto& d) { return d && pred(*d); });
    };
    if (all([this](const Datarep& d) { return d == *client_datarep.front(); })) return p2p::DataRepresentation::native;
    if (all([](const Datarep& d) { return d.long_size == 8 && d.wchar_size == 4; }))
      return p2p::DataRepresentation::external64;
    return p2p::DataRepresentation::external32;
  }

  // By client: LAM/MPI 7.1.4 (impi.lam_clients, set by boot/start.cpp; empty:
  // none).  Point-to-point with its procs is native_unmarked.
  std::vector<bool> lam_client;

  int world_size() const noexcept { return static_cast<int>(procs.size()); }
  // World rank of the proc with this identity (byte-wise), or -1.
  int rank_of(const Proc& proc) const noexcept;

  // Derives everything from the collated labels.  Throws WireError with a
  // message naming the label and the clients involved when the data is
  // inconsistent: a missing mandatory label (C_NHOSTS, C_NPROCS, H_IPV6,
  // H_PORT, H_NPROCS, P_IPV6, P_PID), lengths that do not match the counts,
  // H_NPROCS not summing to C_NPROCS, no common version 0.0,
  // COLL_XSIZE / COLL_MAXLINEAR that differ after the -1 -> default
  // substitution ("client 0 uses IMPI_COLL_XSIZE 1024, client 1 uses 4096:
  // set the same value on every cluster"), values out of the protocol's
  // ranges (datalen >= 1, 32767 <= tagub, 1 <= ackmark <= hiwater), more
  // than 32 clients.  Optional labels that every client skipped take their
  // defaults.  label_gridmpi_datarep is never an error: data that is not a
  // whole number of records, or a record of another version, leaves those
  // clients without one (external32).
  static JobMap from_labels(const CollatedLabels& labels);
};

}  // namespace gridmpi::impi
