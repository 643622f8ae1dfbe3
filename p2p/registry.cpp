// The transports the engine chooses from.  Adding a transport: one line here.
#include "impi/transport.hpp"
#include "p2p/self/self_transport.hpp"
#include "p2p/shm/shm_transport.hpp"
#include "p2p/tcp/tcp_transport.hpp"
#include "p2p/transport.hpp"
#include "p2p/vendor/vendor_library.hpp"
#include "p2p/vendor/vendor_transport.hpp"

namespace gridmpi::p2p {

const std::vector<TransportFactory>& transport_factories() {
  static const std::vector<TransportFactory> factories{
      {"self", [](const TransportContext& c) -> std::unique_ptr<Transport> { return std::make_unique<SelfTransport>(c); }},
      // Processes of this host (cheaper than tcp in capabilities(), so the
      // engine picks it for them); off with shm.enable=false or mpirun
      // -nounix, and in a vendor job, where the site's MPI serves the whole
      // cluster (its own shared memory included).
      {"shm",
       [](const TransportContext& c) -> std::unique_ptr<Transport> {
         if (c.world_size < 2 || !shm::enabled_by_configuration() || vendor::process_library()) return nullptr;
         return std::make_unique<shm::ShmTransport>(c, shm::ShmOptions::from_configuration());
       }},
      // Before tcp, and cheaper in capabilities(): the engine picks it for
      // every peer of our cluster (the vendor job); tcp/impi reach the rest.
      {"vendor",
       [](const TransportContext& c) -> std::unique_ptr<Transport> {
         vendor::Library* library = vendor::process_library();
         if (!library || c.world_size < 2) return nullptr;  // not started with mpirun -vendor
         return std::make_unique<vendor::VendorTransport>(c, *library, vendor::VendorOptions::from_configuration());
       }},
      {"tcp",
       [](const TransportContext& c) -> std::unique_ptr<Transport> {
         if (c.world_size < 2) return nullptr;  // a singleton talks only to itself
         return std::make_unique<tcp::TcpTransport>(c, tcp::TcpOptions::from_configuration());
       }},
      {"impi", [](const TransportContext& c) { return impi::make_transport(c); }},
  };
  return factories;
}

DeclaredLink declared_link(std::string_view transport) {
  if (transport == "shm") return {shm::declared_latency_us, shm::declared_bandwidth};
  if (transport == "tcp") return {tcp::declared_latency_us, tcp::declared_bandwidth};
  if (transport == "impi") return {impi::declared_latency_us, impi::declared_bandwidth};
  return {};
}

}  // namespace gridmpi::p2p
