// The job map of a multi-cluster run (impi/job_map.hpp): the two records
// that travel between mpirun and its ranks, and the derivation of section 4
// of docs/impi-protocol.md from the server's collated labels.
//
// Both records are plain binary strings, every integer big-endian, every
// length checked, so that a rank of another build or a corrupted value is a
// one-line error instead of a misread map:
//   LocalHost       address[16] port:u16 pid:i64 ackmark:i32 hiwater:i32 has_datarep:u8
//                   datarep[24] (zeros without one; 59 bytes)
//   CollatedLabels  magic:u32 nclients:u32 my_client:u32 count:u32, then count times
//                   label:i32 mask:u32 length:u32 data[length]
#include "impi/job_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

namespace gridmpi::impi {

namespace {

constexpr std::size_t local_host_size = 16 + 2 + 8 + 4 + 4 + 1 + Datarep::size;
constexpr std::uint32_t labels_magic = 0x494d4a4d;  // "IMJM": catches a value of another key or version
constexpr int max_clients = 32;

const std::byte* bytes_of(std::string_view text) { return reinterpret_cast<const std::byte*>(text.data()); }

void append_bytes(std::string& out, const std::byte* p, std::size_t n) {
  out.append(reinterpret_cast<const char*>(p), n);
}
void append_u32(std::string& out, std::uint32_t v) {
  std::byte b[4];
  put_u32(b, v);
  append_bytes(out, b, 4);
}

std::int32_t get_i32(const std::byte* p) { return static_cast<std::int32_t>(get_u32(p)); }

// A reader that never runs past its text and names what was cut short.
class Reader {
 public:
  Reader(std::string_view text, const char* what) : text_(text), what_(what) {}
  const std::byte* take(std::size_t n, const char* field) {
    if (text_.size() - offset_ < n)
      throw WireError(fmt::format("{} truncated: {} needs {} bytes at offset {}, only {} left", what_, field, n,
                                  offset_, text_.size() - offset_));
    const std::byte* p = bytes_of(text_) + offset_;
    offset_ += n;
    return p;
  }
  std::uint32_t u32(const char* field) { return get_u32(take(4, field)); }
  std::size_t left() const { return text_.size() - offset_; }

 private:
  std::string_view text_;
  const char* what_;
  std::size_t offset_ = 0;
};

std::string client_list(std::uint32_t mask) {
  std::string out;
  for (int c = 0; c < max_clients; ++c)
    if (mask & (1u << c)) {
      if (!out.empty()) out += ',';
      out += std::to_string(c);
    }
  return out.empty() ? "none" : out;
}

// One label's data cut into the contributions of the clients in its mask.
class Contributions {
 public:
  Contributions(const CollatedLabels& labels, std::int32_t code) : code_(code) {
    if (auto it = labels.labels.find(code); it != labels.labels.end()) label_ = &it->second;
  }
  bool present() const { return label_ != nullptr && label_->mask != 0; }
  bool from(int client) const { return label_ != nullptr && (label_->mask & (1u << client)) != 0; }
  std::uint32_t mask() const { return label_ ? label_->mask : 0; }

  // Every client must have contributed (mandatory labels).
  void require_all(int nclients) const {
    std::uint32_t all = nclients == 32 ? 0xffffffffu : (1u << nclients) - 1;
    if (!label_)
      throw WireError(fmt::format("the server sent no {} (mandatory): every client must send it; is a client of "
                                  "another IMPI implementation skipping it?",
                                  label_name(code_)));
    if ((label_->mask & all) != all)
      throw WireError(fmt::format("client(s) {} did not send {} (mandatory): they cannot take part in the job",
                                  client_list(all & ~label_->mask), label_name(code_)));
  }

  // Splits the data: client c contributes counts[c] elements of `element`
  // bytes.  Returns, per client, the offset of its first byte (or npos).
  std::vector<std::size_t> split(const std::vector<int>& counts, std::size_t element) {
    std::vector<std::size_t> offsets(counts.size(), std::string::npos);
    if (!label_) return offsets;
    std::size_t expected = 0;
    for (std::size_t c = 0; c < counts.size(); ++c) {
      if (!from(static_cast<int>(c))) continue;
      offsets[c] = expected;
      expected += static_cast<std::size_t>(counts[c]) * element;
    }
    if (label_->data.size() != expected)
      throw WireError(fmt::format("{} carries {} bytes, but the contributing clients {} need {} ({} bytes per "
                                  "element): a client's counts and its data disagree",
                                  label_name(code_), label_->data.size(), client_list(label_->mask), expected,
                                  element));
    return offsets;
  }
  const std::byte* at(std::size_t offset) const { return label_->data.data() + offset; }
  const CollatedLabel* label() const { return label_; }

 private:
  std::int32_t code_;
  const CollatedLabel* label_ = nullptr;
};

// Per-client Int4 values of a client-scope label (nullopt for a client that skipped it).
std::vector<std::optional<std::int32_t>> client_values(const CollatedLabels& labels, std::int32_t code) {
  Contributions c(labels, code);
  std::vector<int> ones(static_cast<std::size_t>(labels.nclients), 1);
  auto offsets = c.split(ones, 4);
  std::vector<std::optional<std::int32_t>> out(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] != std::string::npos) out[i] = get_i32(c.at(offsets[i]));
  return out;
}

// The -1 -> default substitution of COLL_XSIZE / COLL_MAXLINEAR, and the
// rule that every client must then agree.
std::int32_t agreed_value(const CollatedLabels& labels, std::int32_t code, std::int32_t fallback,
                          std::int32_t minimum, const char* variable) {
  auto values = client_values(labels, code);
  std::optional<std::int32_t> agreed;
  int first_client = -1;
  for (std::size_t c = 0; c < values.size(); ++c) {
    if (!values[c]) continue;
    std::int32_t v = *values[c];
    if (v == -1) v = fallback;
    if (v < minimum)
      throw WireError(fmt::format("client {} sent {} {}: use -1 (the default, {}) or a value of at least {} ({})", c,
                                  label_name(code), *values[c], fallback, minimum, variable));
    if (!agreed) {
      agreed = v;
      first_client = static_cast<int>(c);
    } else if (*agreed != v) {
      throw WireError(fmt::format("client {} uses {} {}, client {} uses {}: set the same value on every cluster",
                                  first_client, variable, *agreed, c, v));
    }
  }
  return agreed.value_or(fallback);
}

}  // namespace

// ---- LocalHost ----------------------------------------------------------------

std::string LocalHost::encode() const {
  std::string out;
  out.reserve(local_host_size);
  append_bytes(out, address.data(), address.size());
  std::byte p[2] = {static_cast<std::byte>(port >> 8), static_cast<std::byte>(port & 0xff)};
  append_bytes(out, p, 2);
  std::byte b[8];
  put_u64(b, static_cast<std::uint64_t>(pid));
  append_bytes(out, b, 8);
  append_u32(out, static_cast<std::uint32_t>(ackmark));
  append_u32(out, static_cast<std::uint32_t>(hiwater));
  std::byte has = datarep ? std::byte{1} : std::byte{0};
  append_bytes(out, &has, 1);
  std::array<std::byte, Datarep::size> record{};
  if (datarep) record = datarep->encode();
  append_bytes(out, record.data(), record.size());
  return out;
}

LocalHost LocalHost::decode(std::string_view text) {
  if (text.size() != local_host_size)
    throw WireError(fmt::format("IMPI host record of {} bytes (needs {}): a rank of another gridmpi version?",
                                text.size(), local_host_size));
  const std::byte* p = bytes_of(text);
  LocalHost h;
  std::memcpy(h.address.data(), p, 16);
  h.port = static_cast<std::uint16_t>((std::to_integer<unsigned>(p[16]) << 8) | std::to_integer<unsigned>(p[17]));
  h.pid = static_cast<std::int64_t>(get_u64(p + 18));
  h.ackmark = get_i32(p + 26);
  h.hiwater = get_i32(p + 30);
  if (p[34] == std::byte{1}) {
    h.datarep = Datarep::decode(std::span(p + 35, Datarep::size));
    if (!h.datarep) throw WireError("IMPI host record with an unreadable data representation: a rank of another "
                                    "gridmpi version?");
  } else if (p[34] != std::byte{0} ||
             std::any_of(p + 35, p + 35 + Datarep::size, [](std::byte b) { return b != std::byte{0}; })) {
    throw WireError("IMPI host record with a malformed data representation field: a rank of another gridmpi "
                    "version?");
  }
  return h;
}

// ---- CollatedLabels -------------------------------------------------------------

std::string CollatedLabels::encode() const {
  std::string out;
  append_u32(out, labels_magic);
  append_u32(out, static_cast<std::uint32_t>(nclients));
  append_u32(out, static_cast<std::uint32_t>(my_client));
  append_u32(out, static_cast<std::uint32_t>(labels.size()));
  for (const auto& [code, label] : labels) {
    append_u32(out, static_cast<std::uint32_t>(code));
    append_u32(out, label.mask);
    append_u32(out, static_cast<std::uint32_t>(label.data.size()));
    append_bytes(out, label.data.data(), label.data.size());
  }
  return out;
}

CollatedLabels CollatedLabels::decode(std::string_view text) {
  Reader in(text, "IMPI start-up record");
  if (in.u32("the header") != labels_magic)
    throw WireError("not an IMPI start-up record (wrong magic): mpirun and this program are of different gridmpi "
                    "versions?");
  CollatedLabels out;
  out.nclients = static_cast<int>(in.u32("nclients"));
  out.my_client = static_cast<int>(in.u32("my_client"));
  std::uint32_t count = in.u32("the label count");
  for (std::uint32_t i = 0; i < count; ++i) {
    auto code = static_cast<std::int32_t>(in.u32("a label code"));
    CollatedLabel label;
    label.mask = in.u32("a label mask");
    std::uint32_t length = in.u32("a label length");
    const std::byte* data = in.take(length, "a label's data");
    label.data.assign(data, data + length);
    if (!out.labels.emplace(code, std::move(label)).second)
      throw WireError(fmt::format("IMPI start-up record lists {} twice", label_name(code)));
  }
  if (in.left() != 0) throw WireError(fmt::format("IMPI start-up record has {} bytes after its end", in.left()));
  return out;
}

// ---- JobMap ---------------------------------------------------------------------

int JobMap::rank_of(const Proc& proc) const noexcept {
  // Byte-wise, as receivers must compare IMPI_Proc values (section 4): a
  // peer may put anything in the 16 bytes, and equal bytes are the identity.
  for (std::size_t r = 0; r < procs.size(); ++r)
    if (procs[r].pid == proc.pid && std::memcmp(procs[r].host.data(), proc.host.data(), 16) == 0)
      return static_cast<int>(r);
  return -1;
}

JobMap JobMap::from_labels(const CollatedLabels& labels) {
  JobMap map;
  const int n = labels.nclients;
  if (n < 1 || n > max_clients)
    throw WireError(fmt::format("the server announced {} clients: IMPI allows 1 to {}", n, max_clients));
  if (labels.my_client < 0 || labels.my_client >= n)
    throw WireError(fmt::format("this cluster is client {}, outside 0..{} of the server's answer", labels.my_client,
                                n - 1));
  const std::uint32_t all = n == 32 ? 0xffffffffu : (1u << n) - 1;
  for (const auto& [code, label] : labels.labels)
    if (label.mask & ~all)
      throw WireError(fmt::format("{} names client(s) {}, but the job has only clients 0..{}", label_name(code),
                                  client_list(label.mask & ~all), n - 1));
  map.nclients = n;
  map.my_client = labels.my_client;

  // C_VERSION: per-client lengths are not sent; each client's list starts
  // with (0,0) (ascending, must contain 0.0), so cut at every (0,0).
  map.versions.assign(static_cast<std::size_t>(n), {});
  {
    Contributions c(labels, label_c_version);
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> groups;
    if (c.label()) {
      const auto& data = c.label()->data;
      if (data.size() % 8 != 0)
        throw WireError(fmt::format("IMPI_C_VERSION carries {} bytes, not a whole number of 8-byte version pairs",
                                    data.size()));
      for (std::size_t off = 0; off < data.size(); off += 8) {
        std::pair<std::uint32_t, std::uint32_t> v{get_u32(data.data() + off), get_u32(data.data() + off + 4)};
        if (v == std::pair<std::uint32_t, std::uint32_t>{0, 0}) groups.emplace_back();
        if (groups.empty())
          throw WireError(fmt::format("IMPI_C_VERSION of client {} does not start with version 0.0: no common "
                                      "version with this implementation (IMPI 0.0)",
                                      std::countr_zero(c.mask())));
        groups.back().push_back(v);
      }
    }
    if (groups.size() != static_cast<std::size_t>(std::popcount(c.mask())))
      throw WireError(fmt::format("IMPI_C_VERSION holds {} version lists for contributing clients {}: every client "
                                  "must list version 0.0 exactly once",
                                  groups.size(), client_list(c.mask())));
    std::size_t g = 0;
    for (int client = 0; client < n; ++client) {
      auto& list = map.versions[static_cast<std::size_t>(client)];
      if (!c.from(client)) {
        // A client that does not say speaks the only version there is.
        list = {{0, 0}};
        continue;
      }
      list = std::move(groups[g++]);
      for (std::size_t i = 1; i < list.size(); ++i)
        if (!(list[i - 1] < list[i]))
          throw WireError(fmt::format("IMPI_C_VERSION of client {} is not strictly ascending", client));
    }
  }

  // Counts: mandatory, one Int4 per client, at least 1.
  auto counts = [&](std::int32_t code) {
    Contributions(labels, code).require_all(n);
    std::vector<int> out;
    auto values = client_values(labels, code);
    for (int client = 0; client < n; ++client) {
      std::int32_t v = *values[static_cast<std::size_t>(client)];
      if (v < 1)
        throw WireError(fmt::format("client {} sent {} {}: it must be at least 1", client, label_name(code), v));
      out.push_back(v);
    }
    return out;
  };
  map.client_nhosts = counts(label_c_nhosts);
  map.client_nprocs = counts(label_c_nprocs);
  std::int64_t total_hosts = 0, total_procs = 0;
  for (int client = 0; client < n; ++client) {
    map.client_first_rank.push_back(static_cast<int>(total_procs));
    total_hosts += map.client_nhosts[static_cast<std::size_t>(client)];
    total_procs += map.client_nprocs[static_cast<std::size_t>(client)];
  }
  if (total_procs > std::numeric_limits<int>::max() / 2 || total_hosts > std::numeric_limits<int>::max() / 2)
    throw WireError(fmt::format("the clients announce {} hosts and {} processes: too many for one job", total_hosts,
                                total_procs));

  // Job-wide client values: minima, defaults when nobody sent one.
  auto minimum = [&](std::int32_t code, std::int32_t fallback, std::int32_t low, std::int32_t high,
                     const char* rule) {
    std::optional<std::int32_t> best;
    auto values = client_values(labels, code);
    for (int client = 0; client < n; ++client) {
      const auto& v = values[static_cast<std::size_t>(client)];
      if (!v) continue;
      if (*v < low || *v > high)
        throw WireError(fmt::format("client {} sent {} {}: {}", client, label_name(code), *v, rule));
      best = best ? std::min(*best, *v) : *v;
    }
    return best.value_or(fallback);
  };
  map.datalen = minimum(label_c_datalen, 65536, 1, std::numeric_limits<std::int32_t>::max(),
                        "it must be at least 1 (IMPI_C_DATALEN)");
  map.tagub = minimum(label_c_tagub, 0x7fffffff, 32767, std::numeric_limits<std::int32_t>::max(),
                      "the protocol requires 32767 to 2147483647");
  map.coll_xsize = agreed_value(labels, label_c_coll_xsize, 1024, 0, "IMPI_COLL_XSIZE");
  map.coll_maxlinear = agreed_value(labels, label_c_coll_maxlinear, 4, 1, "IMPI_COLL_MAXLINEAR");

  // The per-proc labels first: their lengths prove that C_NPROCS is real
  // data before any per-proc table is sized from it.
  Contributions p_ipv6(labels, label_p_ipv6), p_pid(labels, label_p_pid);
  p_ipv6.require_all(n);
  p_pid.require_all(n);
  auto pipv6_at = p_ipv6.split(map.client_nprocs, 16);
  auto pid_at = p_pid.split(map.client_nprocs, 8);

  // Hosts, in global order: client 0's hosts first.
  std::vector<int> host_counts = map.client_nhosts;
  Contributions h_ipv6(labels, label_h_ipv6), h_port(labels, label_h_port), h_nprocs(labels, label_h_nprocs);
  h_ipv6.require_all(n);
  h_port.require_all(n);
  h_nprocs.require_all(n);
  auto ipv6_at = h_ipv6.split(host_counts, 16);
  auto port_at = h_port.split(host_counts, 4);
  auto nprocs_at = h_nprocs.split(host_counts, 4);
  Contributions h_ackmark(labels, label_h_ackmark), h_hiwater(labels, label_h_hiwater);
  auto ackmark_at = h_ackmark.split(host_counts, 4);
  auto hiwater_at = h_hiwater.split(host_counts, 4);
  std::optional<std::int32_t> ackmark, hiwater;
  int ackmark_host = -1, hiwater_host = -1;
  int first_rank = 0;
  for (int client = 0; client < n; ++client) {
    auto c = static_cast<std::size_t>(client);
    // The sum first, so that a bad count never sizes the tables below.
    std::int64_t procs_of_client = 0;
    for (int h = 0; h < map.client_nhosts[c]; ++h) {
      std::int32_t v = get_i32(h_nprocs.at(nprocs_at[c] + 4 * static_cast<std::size_t>(h)));
      if (v < 0) throw WireError(fmt::format("client {} host {} sent IMPI_H_NPROCS {}", client, h, v));
      procs_of_client += v;
    }
    if (procs_of_client != map.client_nprocs[c])
      throw WireError(fmt::format("client {}: its IMPI_H_NPROCS sum to {} but its IMPI_C_NPROCS is {}", client,
                                  procs_of_client, map.client_nprocs[c]));
    for (int h = 0; h < map.client_nhosts[c]; ++h) {
      HostEntry e;
      std::memcpy(e.address.data(), h_ipv6.at(ipv6_at[c] + 16 * static_cast<std::size_t>(h)), 16);
      std::uint32_t port = get_u32(h_port.at(port_at[c] + 4 * static_cast<std::size_t>(h)));
      if (port == 0 || port > 65535)
        throw WireError(fmt::format("client {} host {} sent IMPI_H_PORT {}: not a TCP port", client, h, port));
      e.port = static_cast<std::uint16_t>(port);
      e.nprocs = get_i32(h_nprocs.at(nprocs_at[c] + 4 * static_cast<std::size_t>(h)));
      e.client = client;
      e.first_rank = first_rank;
      first_rank += e.nprocs;
      int global = static_cast<int>(map.hosts.size());
      if (h_ackmark.from(client)) {
        std::int32_t v = get_i32(h_ackmark.at(ackmark_at[c] + 4 * static_cast<std::size_t>(h)));
        if (!ackmark || v < *ackmark) ackmark = v, ackmark_host = global;
      }
      if (h_hiwater.from(client)) {
        std::int32_t v = get_i32(h_hiwater.at(hiwater_at[c] + 4 * static_cast<std::size_t>(h)));
        if (!hiwater || v < *hiwater) hiwater = v, hiwater_host = global;
      }
      for (int k = 0; k < e.nprocs; ++k) {
        map.proc_host.push_back(global);
        map.proc_client.push_back(client);
      }
      map.hosts.push_back(e);
    }
  }
  map.ackmark = ackmark.value_or(10);
  map.hiwater = hiwater.value_or(20);
  if (map.ackmark < 1)
    throw WireError(fmt::format("host {} (client {}) sent IMPI_H_ACKMARK {}: it must be at least 1", ackmark_host,
                                map.hosts[static_cast<std::size_t>(ackmark_host)].client, map.ackmark));
  if (map.hiwater < map.ackmark)
    throw WireError(fmt::format("the job-wide IMPI_H_HIWATER {} (host {}) is below the job-wide IMPI_H_ACKMARK {}: "
                                "the protocol needs 1 <= ackmark <= hiwater; raise IMPI_H_HIWATER",
                                map.hiwater, hiwater_host, map.ackmark));

  // gridmpi's data representations (impi/datarep.hpp): tolerant, as a
  // third-party client or server may leave them out.
  map.client_datarep.assign(static_cast<std::size_t>(n), std::nullopt);
  if (Contributions d(labels, label_gridmpi_datarep); d.present()) {
    const auto& data = d.label()->data;
    if (data.size() == Datarep::size * static_cast<std::size_t>(std::popcount(d.mask()))) {
      std::size_t offset = 0;
      for (int client = 0; client < n; ++client) {
        if (!d.from(client)) continue;
        map.client_datarep[static_cast<std::size_t>(client)] =
            Datarep::decode(std::span(data.data() + offset, Datarep::size));
        offset += Datarep::size;
      }
    }
  }

  // Procs: the identity of every world rank.
  map.procs.reserve(static_cast<std::size_t>(total_procs));
  for (int client = 0; client < n; ++client) {
    auto c = static_cast<std::size_t>(client);
    for (int k = 0; k < map.client_nprocs[c]; ++k) {
      Proc p;
      std::memcpy(p.host.data(), p_ipv6.at(pipv6_at[c] + 16 * static_cast<std::size_t>(k)), 16);
      p.pid = static_cast<std::int64_t>(get_u64(p_pid.at(pid_at[c] + 8 * static_cast<std::size_t>(k))));
      map.procs.push_back(p);
    }
  }
  // Receivers find the sender by identity: two equal identities would be
  // indistinguishable.
  std::set<std::pair<std::string, std::int64_t>> seen;
  for (std::size_t r = 0; r < map.procs.size(); ++r) {
    std::string host(reinterpret_cast<const char*>(map.procs[r].host.data()), 16);
    if (!seen.emplace(host, map.procs[r].pid).second)
      throw WireError(fmt::format("world rank {} (client {}) has the same IMPI identity as an earlier rank ({}, pid "
                                  "{}): every process needs a distinct (IMPI_P_IPV6, IMPI_P_PID)",
                                  r, map.proc_client[r], to_string(map.procs[r].host), map.procs[r].pid));
  }
  return map;
}

}  // namespace gridmpi::impi
