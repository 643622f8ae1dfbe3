// The wide-area collectives' cost model (wan.hpp): the measurements at
// MPI_Init, the estimates, and the choice per call.
//
// Levels: inside a cluster a message costs local_latency + bytes x
// local_byte; between clusters wan_latency + bytes x path_byte on one
// connection, with all the connections between two clusters sharing the
// link (link_byte per byte).  path_byte is what one TCP connection carries
// over the measured round trip: its send buffer grows to the kernel's
// tcp_wmem maximum, of which about 0.65 is in flight per round trip
// (measured through the emulator: 4 MiB gives 266 MB/s at a 10 ms and
// 138 MB/s at a 20 ms round trip).  That is why several connections at once
// beat one on a long link, and what the "split" algorithms exploit.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/impi_util.hpp"
#include "core/coll/util.hpp"
#include "core/coll/wan.hpp"
#include "core/job_layout.hpp"
#include "base/error.hpp"

namespace gridmpi::coll::wan {

namespace {

const conf::ChoiceParam wan_param{
    "coll.wan", "auto", {"auto", "impi", "leaders", "split"},
    "collectives across clusters when every cluster runs gridmpi: auto = the cost model's choice per call; "
    "impi = the IMPI two-tier algorithms; leaders = one message per pair of clusters, crossing once; split = "
    "the data cut over every path between the clusters (a collective without the variant uses the model); "
    "give every process the same value",
    conf::Level::tuner, {"GRIDMPI_COLL_WAN"}};

constexpr int calibrate_tag = 46;
constexpr double in_flight_share = 0.65;  // of tcp_wmem's maximum, per round trip (see above)
constexpr int probe_bytes = 65536;
constexpr int local_rounds = 8;
constexpr double impi_margin = 0.9;  // a wide-area variant must beat IMPI's estimate by this factor

Model the_model;
bool active = false;            // calibrate() ran: the job's clusters all run gridmpi
std::string forced = "auto";    // coll.wan, read once by calibrate()

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The kernel's ceiling for a TCP send buffer (tcp_wmem's third field).
double tcp_wmem_max() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_wmem");
  double lo = 0, def = 0, hi = 0;
  if (in >> lo >> def >> hi && hi > 0) return hi;
  return 4194304;
}

// The shortest of `rounds` round trips of `bytes` with `peer` (after one
// untimed); the peer answers with echo().
double round_trip(int peer, std::vector<std::byte>& buf, int rounds, core::Comm& c) {
  double best = 1e30;
  for (int i = 0; i <= rounds; ++i) {
    double t0 = now();
    coll::send(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, peer, calibrate_tag, c);
    coll::recv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, peer, calibrate_tag, c);
    if (i > 0) best = std::min(best, now() - t0);
  }
  return best;
}

void echo(int peer, std::vector<std::byte>& buf, int rounds, core::Comm& c) {
  for (int i = 0; i <= rounds; ++i) {
    coll::recv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, peer, calibrate_tag, c);
    coll::send(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, peer, calibrate_tag, c);
  }
}


}  // namespace

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::impi: return "impi";
    case Variant::leaders: return "leaders";
    case Variant::split: return "split";
  }
  return "?";
}

const Model& model() { return the_model; }

void set_model_for_tests(const Model& m) { the_model = m; }

bool enabled() { return active; }

void calibrate(core::Comm& c) {
  const core::JobLayout& layout = core::job_layout();
  const bool third_party = std::find(layout.lam_client.begin(), layout.lam_client.end(), true) != layout.lam_client.end();
  if (!c.clients || third_party) return;
  std::string mine_forced;
  try {
    mine_forced = wan_param.get();
  } catch (const conf::ConfigError& e) {
    throw MpiError(MPI_ERR_ARG, e.what());
  }
  // Every process measures (also with coll.wan=impi), so that a value set
  // in one cluster only cannot leave the others waiting here; the job takes
  // world rank 0's value, sent with the model.
  static constexpr std::array<std::string_view, 4> names{"auto", "impi", "leaders", "split"};
  double mine_code = 0;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == mine_forced) mine_code = static_cast<double>(i);
  const core::ClientMap& map = *c.clients;
  const int n = map.num_masters(), me = map.master_of[static_cast<std::size_t>(c.rank)];
  const std::vector<int>& mine = map.members[static_cast<std::size_t>(me)];
  const bool master = map.masters[static_cast<std::size_t>(me)] == c.rank;
  std::vector<std::byte> zero, probe(probe_bytes);
  // Inside each cluster: the master and its second member.
  std::array<double, 3> local{0, 0, tcp_wmem_max()};  // latency, per byte, wmem
  if (mine.size() > 1) {
    if (master) {
      // The shortest of several: with more processes than cores the peer's
      // turn on a core dominates (tens of us), and a single sample can make
      // the 64 KiB trip look faster than the empty one; then the bound the
      // 64 KiB trip gives by itself stands in.
      double rtt0 = round_trip(mine[1], zero, local_rounds, c);
      double rtt1 = round_trip(mine[1], probe, local_rounds, c);
      local[0] = rtt0 / 2;
      local[1] = rtt1 > rtt0 ? (rtt1 - rtt0) / 2 / probe_bytes : rtt1 / 2 / probe_bytes;
    } else if (mine[1] == c.rank) {
      echo(mine[0], zero, local_rounds, c);
      echo(mine[0], probe, local_rounds, c);
    }
  }
  // Between clusters: master 0 and each other master in turn.
  std::array<double, 6> out{};  // the model, then coll.wan's index in names
  if (master) {
    if (me == 0) {
      double wan_rtt = 0, lat = local[0], byte = local[1], wmem = local[2];
      for (int m = 1; m < n; ++m) {
        wan_rtt = std::max(wan_rtt, round_trip(map.masters[static_cast<std::size_t>(m)], zero, 2, c));
        std::array<double, 3> theirs{};
        coll::recv(theirs.data(), 3, MPI_DOUBLE, map.masters[static_cast<std::size_t>(m)], calibrate_tag, c);
        lat = std::max(lat, theirs[0]);
        byte = std::max(byte, theirs[1]);
        wmem = std::min(wmem, theirs[2]);
      }
      const double link = layout.wan_bandwidth > 0 ? layout.wan_bandwidth : 1.25e9;
      double path = wan_rtt > 0 ? std::min(link, in_flight_share * wmem / wan_rtt) : link;
      out = {lat, byte, wan_rtt / 2, 1 / path, 1 / link, mine_code};
      for (int m = 1; m < n; ++m)
        coll::send(out.data(), 6, MPI_DOUBLE, map.masters[static_cast<std::size_t>(m)], calibrate_tag, c);
    } else {
      echo(map.masters[0], zero, 2, c);
      coll::send(local.data(), 3, MPI_DOUBLE, map.masters[0], calibrate_tag, c);
      coll::recv(out.data(), 6, MPI_DOUBLE, map.masters[0], calibrate_tag, c);
    }
  }
  if (mine.size() > 1) coll::bcast(out.data(), 6, MPI_DOUBLE, 0, core::comm(c.client_comm));
  the_model = Model{out[0], out[1], out[2], out[3], out[4]};
  const auto code = static_cast<std::size_t>(std::clamp(out[5], 0.0, 3.0));
  forced = std::string(names[code]);
  if (forced != mine_forced)
    log().warn("coll.wan (GRIDMPI_COLL_WAN) is {} here but {} at world rank 0; the job uses {}", mine_forced,
               forced, forced);
  active = true;
  log().debug("coll: wide-area model: local {:.1f} us + {:.3f} ns/byte, between clusters {:.3f} ms + "
              "{:.3f} ns/byte per connection, {:.3f} ns/byte per link{}",
              the_model.local_latency * 1e6, the_model.local_byte * 1e9, the_model.wan_latency * 1e3,
              the_model.path_byte * 1e9, the_model.link_byte * 1e9,
              forced == "auto" ? "" : " (coll.wan=" + forced + ")");
}

double estimate(Kind kind, Variant variant, std::size_t bytes_in, const core::ClientMap& map, int root_client) {
  const Model& M = the_model;
  const double m = static_cast<double>(bytes_in);
  const int C = map.num_masters();
  int nmax = 1, nmin = INT32_MAX, p = 0;
  for (const auto& members : map.members) {
    const int s = static_cast<int>(members.size());
    nmax = std::max(nmax, s);
    nmin = std::min(nmin, s);
    p += s;
  }
  const int nroot = root_client >= 0 ? static_cast<int>(map.members[static_cast<std::size_t>(root_client)].size()) : nmax;
  auto hop = [&](double b) { return M.local_latency + b * M.local_byte; };
  auto lbcast = [&](int n, double b) {
    if (n <= 1) return 0.0;
    const int lg = impi::tree_dim(n);
    return std::min(lg * hop(b), 2 * lg * M.local_latency + 2 * b * M.local_byte);
  };
  // Reduce-scatter and gather inside a cluster: log2 n steps, the bytes once.
  auto lrs = [&](int n, double b) { return n <= 1 ? 0.0 : impi::tree_dim(n) * M.local_latency + b * M.local_byte; };
  auto lagv = [&](int n, double b) { return n <= 1 ? 0.0 : (n - 1) * M.local_latency + b * M.local_byte; };
  auto lbar = [&](int n) { return n <= 1 ? 0.0 : impi::tree_dim(n) * M.local_latency; };
  // One wide-area step: the busiest connection carries per_path bytes, the
  // busiest link between two clusters into_cluster bytes.
  auto W = [&](double per_path, double into_cluster) {
    return M.wan_latency + std::max(per_path * M.path_byte, into_cluster * M.link_byte);
  };
  // The IMPI algorithms send a message whole: beyond IMPI_C_DATALEN it
  // waits a round trip for SYNCACK (the wide-area ones send chunks).
  const double datalen = static_cast<double>(core::job_layout().wan_datalen);
  auto whole = [&](double b) { return b > datalen ? 2 * M.wan_latency : 0.0; };
  const double combine = M.local_byte;  // a reduction step costs about a local copy per byte
  switch (kind) {
    case Kind::barrier:
      if (variant == Variant::impi) return 2 * lbar(nmax) + 2 * M.wan_latency;
      if (variant == Variant::leaders) return 2 * lbar(nmax) + M.wan_latency;
      return -1;
    case Kind::bcast:
      if (variant == Variant::impi) return W(m, m) + whole(m) + lbcast(nmax, m);
      if (variant == Variant::split && nroot > 1)
        return hop(m) + W(m / nroot, m) + lagv(nmax, m);
      return -1;
    case Kind::reduce:
      if (variant == Variant::impi) return lbcast(nmax, m) + W(m, (C - 1) * m) + whole(m) + (C - 1) * m * combine;
      if (variant == Variant::split && nmin > 1)
        return lrs(nmax, m) + W(m / nmin, (C - 1) * m) + (C - 1) * (m / nmin) * combine + lrs(nroot, m);
      return -1;
    case Kind::allreduce:
      if (variant == Variant::impi)
        return lbcast(nmax, m) + W(m, (C - 1) * m) + (C - 1) * m * combine + W(m, m) + 2 * whole(m) + lbcast(nmax, m);
      if (variant == Variant::leaders)
        return lbcast(nmax, m) + W(m, (C - 1) * m) + (C - 1) * m * combine + lbcast(nmax, m);
      if (variant == Variant::split && nmin > 1)
        return lrs(nmax, m) + W(m / nmin, (C - 1) * m) + (C - 1) * (m / nmin) * combine + lagv(nmax, m);
      return -1;
    case Kind::allgather: {
      const double total = p * m;
      if (variant == Variant::impi)
        return lrs(nmax, nmax * m) + W(nmax * m, (C - 1) * nmax * m) + whole(nmax * m) + W(total, total) +
               whole(total) + lbcast(nmax, total);
      if (variant == Variant::split) {
        const double owned = std::ceil(static_cast<double>(p) / nmin);
        return W(m, (p - nmin) * m) + (nmax - 1) * M.local_latency +
               std::max(owned * (nmax - 1), static_cast<double>(p)) * m * M.local_byte;
      }
      return -1;
    }
    case Kind::alltoall: {
      const double cross = static_cast<double>(nmax) * (p - nmin) * m;  // out of the busiest cluster
      if (variant == Variant::impi)
        return 2 * lrs(nmax, cross) + W(nmax * nmax * m, cross) + whole(nmax * nmax * m) + (nmax - 1) * hop(m);
      if (variant == Variant::split) return W(m, cross) + (p - 1) * hop(m);
      return -1;
    }
    default:
      return -1;
  }
}

// The variant for one call: coll.wan when it exists for the kind, else the
// cheapest estimate.  The same in every process (the model, the map and
// the bytes are).
Variant choose(Kind kind, std::size_t bytes, const core::ClientMap& map, int root_client) {
  const std::array<Variant, 3> all{Variant::impi, Variant::leaders, Variant::split};
  std::array<double, 3> cost{};
  for (std::size_t i = 0; i < all.size(); ++i) cost[i] = estimate(kind, all[i], bytes, map, root_client);
  // IMPI's algorithm unless a wide-area one is clearly cheaper: within the
  // model's precision (a tenth) the protocol's own wins, e.g. a 64 KiB
  // Bcast, where the root's single send also pipelines best back to back
  // (npb/README.md, wan-bench --families).
  Variant best = Variant::impi;
  double best_cost = cost[0] * impi_margin;
  for (std::size_t i = 1; i < all.size(); ++i)
    if (cost[i] >= 0 && cost[i] < best_cost) best = all[i], best_cost = cost[i];
  bool was_forced = false;
  if (forced != "auto")
    for (std::size_t i = 0; i < all.size(); ++i)
      if (variant_name(all[i]) == forced && cost[i] >= 0) best = all[i], was_forced = true;
  // One line per change of choice or size, for the benchmarks that mark it.
  static std::array<std::pair<std::size_t, int>, 32> last{};
  auto& seen = last[static_cast<std::size_t>(kind) % last.size()];
  if (seen.first != bytes + 1 || seen.second != static_cast<int>(best)) {
    seen = {bytes + 1, static_cast<int>(best)};
    auto ms = [](double t) { return t < 0 ? std::string("-") : fmt::format("{:.3f} ms", t * 1e3); };
    log().debug("coll: {} of {} bytes over {} clusters: {}{} (model: impi {}, leaders {}, split {})",
                kind_name(kind), bytes, map.num_masters(), variant_name(best), was_forced ? ", forced" : "",
                ms(cost[0]), ms(cost[1]), ms(cost[2]));
  }
  return best;
}

}  // namespace gridmpi::coll::wan
