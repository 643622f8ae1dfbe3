// The IMPI parameters, under the names GridMPI users set (IMPI_C_DATALEN,
// IMPI_H_ACKMARK, ...).  Declared once here; read by mpirun (the client
// agent: client-level labels), by impi-server (authentication, port range)
// and by every MPI process (host-level labels, sockets).  Each getter
// validates its value and throws conf::ConfigError naming the variable, the
// value and what is expected.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>


namespace gridmpi::impi::params {

std::int32_t c_datalen();        // IMPI_C_DATALEN, >= 1, default 1048576 (1 MiB)
std::int32_t coll_xsize();       // IMPI_COLL_XSIZE, -1 (default 1024) or >= 0
std::int32_t coll_maxlinear();   // IMPI_COLL_MAXLINEAR, -1 (default 4) or >= 1
std::int32_t h_ackmark();        // IMPI_H_ACKMARK, >= 1, default 10
std::int32_t h_hiwater();        // IMPI_H_HIWATER, >= IMPI_H_ACKMARK, default 64
bool hiwater_set();              // IMPI_H_HIWATER given (not the default): the window is exactly the job's
double link_bandwidth();         // impi.link_bandwidth, bytes/s the window is sized for (> 0)
std::int64_t socbuf();           // IMPI_SOCBUF bytes (falls back to a set _YAMPI_SOCBUF, else 0); 0 = kernel autotuning
std::string port_range();        // IMPI_PORT_RANGE "a:b" or "" (host listeners)
std::string server_port_range(); // IMPI_SERVER_PORT_RANGE "a:b" or ""
std::string network();           // IMPI_NETWORK "a.b.c.d" or "" (interface for IMPI traffic)
// IMPI_LAM_CLIENTS "1" or "0,2": the clients that are LAM/MPI 7.1.4 (see
// core/job_layout.hpp, JobLayout::lam_client); syntax checked here, ranks
// against the job where the number of clients is known.
std::vector<int> lam_clients();

// Authentication as the environment enables it: IMPI_AUTH_NONE (any value,
// presence enables NONE) and IMPI_AUTH_KEY=<decimal 64-bit> (enables KEY).
struct Auth {
  bool none = false;
  std::optional<std::uint64_t> key;
  std::uint32_t mask() const noexcept;  // bit 0: NONE, bit 1: KEY
};
// Throws conf::ConfigError for a malformed IMPI_AUTH_KEY, and, when
// `required`, for neither variable set ("set IMPI_AUTH_NONE=1 or
// IMPI_AUTH_KEY=<number> on the server and on every mpirun -client").
Auth auth(bool required);

}  // namespace gridmpi::impi::params
