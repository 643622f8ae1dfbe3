// The IMPI transport: MPI processes of other clusters (IMPI clients),
// reached over IMPI host connections (docs/impi-protocol.md sections 5-8,
// 12).  Every MPI process is its own IMPI host.
//
// To the request layer it is a transport like the others, with two declared
// differences: user data travels in the representation negotiated with each
// client (Transport::representation: external32 unless both sides recorded
// theirs, impi/datarep.hpp), and long messages follow IMPI's protocol
// (p2p::Rendezvous::native).  The
// translation of frames to IMPI packets and back, with the state IMPI's
// long and synchronous messages need, is impi/translate.hpp (socket-free);
// this file adds what belongs to connections: sequence numbers, PROTOACK
// (flow control) and FINI (shut-down).
//
// Flow control per process pair (section 8): a sender holds counted packets
// beyond IMPI_H_HIWATER unacknowledged ones in a FIFO per destination and
// keeps reading meanwhile; the receiver acknowledges every IMPI_H_ACKMARK.
//
// TLS (impi.tls, impi/tls.hpp): every host connection is then a
// tls::Session on its socket (OpenSSL reads and writes the socket itself).  The connecting side (higher host
// index) is the TLS client, the accepting side the server; both present a
// certificate and check the peer's against impi.tls_ca.  After the
// handshake (bounded by impi.tls_handshake_timeout) the host index and the
// packets flow as in plain IMPI.  The accepting side refuses a connection
// whose first byte is not a TLS handshake (sending a TLS alert), and a plain
// side recognizes a TLS peer by its first bytes; either way one line says to
// set impi.tls everywhere.  Under TLS the direct write_some fast path is off
// (a packet completes in a later handler, never inside the send() that
// queued it), small pieces are gathered into one record, and the session
// sends its records in batches (tls::Session).
//
// Start-up (impi/startup.hpp, driven by boot/start.cpp): open_host() opens
// the listening socket, boot publishes this host through mpirun (the IMPI
// client agent) and Startup::take_job() places it in the job; the transport
// then makes the host connections
// ("higher index connects to lower, sends its index") while MPI_Init waits
// for ready().
//
// Files: transport.cpp (the transport object), connection.cpp (one host
// connection), flow_control.cpp (section 8), translate.cpp (frames <->
// packets); impi/transport_internal.hpp declares what they share.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "impi/startup.hpp"
#include "p2p/transport.hpp"

namespace gridmpi::impi {

// What the transport's capabilities() declares (the collectives' cost model
// 1 uses them).
inline constexpr double declared_latency_us = 50;
inline constexpr double declared_bandwidth = 1e9;  // bytes per second

// The transport factory's entry: nullptr unless context.impi is set.
std::unique_ptr<p2p::Transport> make_transport(const p2p::TransportContext& context);

}  // namespace gridmpi::impi
