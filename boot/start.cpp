// The start-up layer (boot/start.hpp).
#include "boot/start.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "base/error.hpp"
#include "boot/control_client.hpp"
#include "conf/log.hpp"
#include "conf/checked.hpp"
#include "conf/registry.hpp"
#include "impi/datarep.hpp"
#include "impi/params.hpp"
#include "p2p/vendor/vendor_library.hpp"

namespace gridmpi::boot {

namespace {

// The control connection: set while start() runs, kept when it fails (so
// that the fatal error reaches mpirun), dropped by release().
std::unique_ptr<ControlClient> the_control;
// finish() ran: the process reached MPI_Finalize.
bool finished = false;

const conf::Param<std::string> fake_clients_param{
    "impi.fake_clients", "", "",
    "developer testing: ranks per pretended IMPI client in a single-cluster job (\"2,2\"; must sum to the "
    "number of processes), so that the multi-client communicator and collective code runs over one cluster",
    conf::Level::developer, {}};

// impi.fake_clients -> a layout of several clients over one real cluster.
JobLayout fake_layout(const std::string& text, int world_rank, int world_size) {
  JobLayout layout;
  layout.fake = true;
  layout.nclients = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || n < 1 || n > world_size)
      throw MpiError(MPI_ERR_OTHER, fmt::format("impi.fake_clients is \"{}\": give positive rank counts "
                                                "separated by commas, summing to {}", text, world_size));
    for (long i = 0; i < n; ++i) layout.client_of.push_back(layout.nclients);
    ++layout.nclients;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (static_cast<int>(layout.client_of.size()) != world_size || layout.nclients > 32)
    throw MpiError(MPI_ERR_OTHER, fmt::format("impi.fake_clients is \"{}\": the counts must sum to the {} "
                                              "processes of the job (at most 32 clients)", text, world_size));
  layout.my_client = layout.client_of[static_cast<std::size_t>(world_rank)];
  return layout;
}

// impi.lam_clients (IMPI_LAM_CLIENTS) -> JobLayout::lam_client; a client
// out of the job's range, or this cluster's own, is a configuration error.
std::vector<bool> lam_clients(const JobLayout& layout) {
  std::vector<int> clients = conf::checked([] { return impi::params::lam_clients(); });
  if (clients.empty()) return {};
  std::vector<bool> lam(static_cast<std::size_t>(layout.nclients), false);
  for (int c : clients) {
    if (c >= layout.nclients)
      throw MpiError(MPI_ERR_OTHER, fmt::format("IMPI_LAM_CLIENTS names client {}, but the job has {} clients "
                                                "(0..{})", c, layout.nclients, layout.nclients - 1));
    if (c == layout.my_client && !layout.fake)
      throw MpiError(MPI_ERR_OTHER, fmt::format("IMPI_LAM_CLIENTS names client {}, this gridmpi cluster: list "
                                                "only the clients that run LAM/MPI", c));
    lam[static_cast<std::size_t>(c)] = true;
  }
  return lam;
}

// LAM/MPI announces no representation, and its processes put their native
// bytes on the wire (impi/README.md, "LAM/MPI 7.1.4"): a LAM client counts as
// one whose representation is this machine's, so that the collectives'
// streams are native when every other client holds data alike.  Point-to-
// point with LAM's ranks is native in any case (JobMap::lam_client: the
// IMPI transport's representation is native_unmarked), also when this cluster announced no representation
// (impi.datarep = external32, or a server that drops gridmpi's label).
void assume_lam_native(impi::JobMap& map, const std::vector<bool>& lam_client,
                       const std::string& native_description) {
  for (std::size_t c = 0; c < lam_client.size() && c < map.client_datarep.size(); ++c)
    if (lam_client[c]) map.client_datarep[c] = impi::Datarep::of_this_process(native_description);
}

// LAM/MPI's IMPI daemon names a host that connects to it by the connection's
// source address: the first host of the job with that address
// (otb/sys/impid/dance.c, do_accept), and it ends its job when that host's
// index is not the one the connection announces.  Every host with a higher
// index than a LAM host connects to it, so such a host must be the first
// of the job with its address.  gridmpi makes every process its own IMPI
// host: refuse, here and clearly, a job in which LAM would fail later.
void check_addresses_for_lam(const impi::JobMap& map, const std::vector<bool>& lam_client) {
  int first_lam_host = -1;
  for (std::size_t h = 0; h < map.hosts.size() && first_lam_host < 0; ++h)
    if (lam_client[static_cast<std::size_t>(map.hosts[h].client)]) first_lam_host = static_cast<int>(h);
  if (first_lam_host < 0) return;
  for (std::size_t j = static_cast<std::size_t>(first_lam_host) + 1; j < map.hosts.size(); ++j) {
    const impi::HostEntry& hj = map.hosts[j];
    if (lam_client[static_cast<std::size_t>(hj.client)]) continue;
    for (std::size_t i = 0; i < j; ++i) {
      if (map.hosts[i].address != hj.address) continue;
      throw MpiError(MPI_ERR_OTHER,
                     fmt::format("LAM/MPI (client {}) tells IMPI hosts apart by address, and rank {} (client {}) "
                                 "shares {} with rank {}: LAM would refuse its connection.  Run one rank per "
                                 "address in the clients numbered after a LAM client, or number the LAM client "
                                 "after this one",
                                 map.hosts[static_cast<std::size_t>(first_lam_host)].client, hj.first_rank, hj.client,
                                 impi::to_string(hj.address), map.hosts[i].first_rank));
    }
  }
}

std::string local_host_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// A multi-cluster job: this process's IMPI host and its place in the job.
std::shared_ptr<impi::Startup> join_impi(ControlClient& control, int local_rank,
                                         const std::string& native_description) {
  auto startup = impi::open_host(native_description);
  startup->take_job(control.exchange_with_agent(impi::key_local_host, startup->self.encode()), local_rank,
                    control.size());
  return startup;
}

// The job layout of a multi-cluster job, from the server's job map.
JobLayout impi_layout(impi::Startup& start, const std::string& native_description) {
  impi::JobMap& map = start.map;
  JobLayout layout;
  layout.nclients = map.nclients;
  layout.my_client = map.my_client;
  layout.client_of = map.proc_client;
  layout.coll_xsize = map.coll_xsize;
  layout.coll_maxlinear = map.coll_maxlinear;
  layout.wan_bandwidth = conf::checked([] { return impi::params::link_bandwidth(); });
  layout.wan_datalen = map.datalen;
  if (layout.multi_client()) layout.lam_client = lam_clients(layout);
  if (!layout.lam_client.empty()) {
    map.lam_client = layout.lam_client;
    assume_lam_native(map, layout.lam_client, native_description);
    check_addresses_for_lam(map, layout.lam_client);
  }
  layout.coll_representation = map.common_representation();
  return layout;
}

// impi.fake_clients: a layout of several clients over one real cluster.
JobLayout fake_clients_layout(const std::string& text, int world_rank, int world_size) {
  JobLayout layout = fake_layout(text, world_rank, world_size);
  std::int32_t xsize = conf::checked([] { return impi::params::coll_xsize(); });
  std::int32_t maxlinear = conf::checked([] { return impi::params::coll_maxlinear(); });
  if (xsize >= 0) layout.coll_xsize = xsize;
  if (maxlinear >= 1) layout.coll_maxlinear = maxlinear;
  layout.wan_bandwidth = conf::checked([] { return impi::params::link_bandwidth(); });
  layout.wan_datalen = conf::checked([] { return impi::params::c_datalen(); });
  if (layout.multi_client()) layout.lam_client = lam_clients(layout);
  return layout;
}

}  // namespace

// on_exit handler of a process whose vendor MPI is open (mpirun -vendor):
// ending without MPI_Finalize must not finalize the vendor on the way out
// (the library's destructor would: a collective the other ranks never join,
// which hangs in Open MPI and aborts in MPICH), so such a process leaves at
// once with its status and mpirun reports "exited without MPI_Finalize".
// Registered after the vendor's own exit handlers, so it runs before them.
extern "C" void leave_without_vendor_finalize(int status, void*) {
  if (finished) return;
  std::fflush(nullptr);
  _exit(status);
}

std::vector<std::string> Process::exchange(const std::string& key, const std::string& value,
                                           const std::string& other) const {
  if (!the_control) return {value};
  std::vector<std::string> local = the_control->exchange(key, value);
  if (!impi) return local;
  // Values exchanged inside this cluster, placed at their world ranks.
  const int first_local = world_rank - local_rank;
  std::vector<std::string> all(static_cast<std::size_t>(world_size), other);
  for (std::size_t i = 0; i < local.size(); ++i) all[static_cast<std::size_t>(first_local) + i] = local[i];
  return all;
}

Process start(const StartOptions& options) {
  Process p;
  // Started by a vendor MPI's mpiexec (mpirun -vendor): that MPI is
  // initialised first, because the rank is its MPI_COMM_WORLD rank.  In poll
  // mode the big lock already serialises every vendor call.
  std::optional<ControlClient::VendorPlace> vendor_place;
  if (const char* plugin = std::getenv("GRIDMPI_VENDOR_PLUGIN");
      plugin && *plugin && !std::getenv("_YAMPI_MYRANK") && std::getenv("_YAMPI_PHOST")) {
    try {
      p2p::vendor::open_process_library(plugin, options.vendor_thread_level);
    } catch (const std::exception& e) {
      throw MpiError(MPI_ERR_OTHER, e.what());
    }
    ::on_exit(leave_without_vendor_finalize, nullptr);
    if (p2p::vendor::Library* vendor = p2p::vendor::process_library())
      vendor_place = ControlClient::VendorPlace{vendor->rank(), vendor->size()};
  }
  try {
    the_control = ControlClient::from_environment(vendor_place);
  } catch (const std::exception& e) {
    throw MpiError(MPI_ERR_OTHER, fmt::format("cannot reach mpirun's control service: {}", e.what()));
  }
  // A failure from here on ends the process (MPI_Init's errors are fatal):
  // its cause goes to mpirun first, with what was opened still open.
  struct KeepOnFailure {
    std::shared_ptr<impi::Startup>& impi;  // its listening socket
    int uncaught = std::uncaught_exceptions();
    ~KeepOnFailure() {
      if (std::uncaught_exceptions() > uncaught && impi)
        (void)new (std::nothrow) std::shared_ptr<impi::Startup>(impi);
    }
  } keep_on_failure{p.impi};
  ControlClient* control = the_control.get();
  if (control) {
    p.world_rank = p.local_rank = control->rank();
    p.world_size = control->size();
    p.cookie = control->job_cookie();
  }
  // A multi-cluster job (mpirun -client): the IMPI start-up gives the
  // MPI_COMM_WORLD rank and size; the control service still numbers ranks
  // inside this cluster.
  if (control && impi::started_as_client()) {
    p.impi = join_impi(*control, p.local_rank, options.native_description);
    p.world_rank = p.impi->my_rank;
    p.world_size = p.impi->map.world_size();
  }
  set_log_rank(p.world_rank);
  p.processor_name = local_host_name();
  p.host_names = p.exchange("host", p.processor_name);
  if (p.impi) {
    p.layout = impi_layout(*p.impi, options.native_description);
    const impi::JobMap& map = p.impi->map;
    for (int r = 0; r < p.world_size; ++r)
      if (map.proc_client[static_cast<std::size_t>(r)] != map.my_client)
        p.host_names[static_cast<std::size_t>(r)] =
            "impi:" + impi::to_string(map.hosts[static_cast<std::size_t>(map.proc_host[static_cast<std::size_t>(r)])].address);
  } else if (std::string fake = fake_clients_param.get(); !fake.empty()) {
    p.layout = fake_clients_layout(fake, p.world_rank, p.world_size);
  }
  return p;
}

ControlClient* control() noexcept { return the_control.get(); }

void finish() {
  if (the_control) the_control->finalize();
  finished = true;
}

void release() {
  the_control.reset();
  // The vendor MPI (mpirun -vendor) ends last: the engine and its vendor
  // transport are gone now.
  p2p::vendor::close_process_library();
}

}  // namespace gridmpi::boot
