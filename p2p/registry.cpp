// The transports the engine chooses from.  Adding a transport: one line here.
#include "impi/transport.hpp"
#include "p2p/self/self_transport.hpp"
#include "p2p/tcp/tcp_transport.hpp"
#include "p2p/transport.hpp"

namespace gridmpi::p2p {

const std::vector<TransportFactory>& transport_factories() {
  static const std::vector<TransportFactory> factories{
      {"self", [](const TransportContext& c) -> std::unique_ptr<Transport> { return std::make_unique<SelfTransport>(c); }},
      {"tcp",
       [](const TransportContext& c) -> std::unique_ptr<Transport> {
         if (c.world_size < 2) return nullptr;  // a singleton talks only to itself
         return std::make_unique<tcp::TcpTransport>(c, tcp::TcpOptions::from_configuration());
       }},
      {"impi", [](const TransportContext& c) { return impi::make_transport(c); }},
  };
  return factories;
}

}  // namespace gridmpi::p2p
