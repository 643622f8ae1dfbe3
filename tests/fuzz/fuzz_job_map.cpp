// Fuzz target: the records of impi/job_map.hpp and the derivation of the
// job map from collated labels.  Each must succeed or throw WireError (any
// other exception, a crash, a hang or a huge allocation is a bug), and what
// succeeds must hold together:
//  * LocalHost::decode: encodes back to the same bytes;
//  * CollatedLabels::decode: survives encode/decode;
//  * JobMap::from_labels: per-client tables of nclients entries, hosts and
//    procs that add up, every proc's host of its client, rank_of(proc r) == r,
//    the job-wide values in the protocol's ranges.
//
// Input: mode:u8, then by mode % 3
//   0: a CollatedLabels record (the bytes mpirun hands its ranks), then from_labels
//   1: a LocalHost record
//   2: nclients:u8 my_client:u8 then labels {label:u8 [code:u32 when label > 14]
//      mask:u32 blob}... (label < 14: the standard label of that index, 14:
//      0x7777), then from_labels: reaches deeper than random records.
#include <cstdint>
#include <string>
#include <string_view>

#include "impi/job_map.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gridmpi::impi;
using gridmpi::fuzz::Bytes;
using gridmpi::fuzz::Input;

namespace {

std::string_view text_of(const Bytes& b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

void check_map(const CollatedLabels& labels, const JobMap& map) {
  const int n = map.nclients;
  FUZZ_CHECK(n == labels.nclients && n >= 1 && n <= 32, "nclients");
  FUZZ_CHECK(map.my_client == labels.my_client && map.my_client >= 0 && map.my_client < n, "my_client");
  auto size = static_cast<std::size_t>(n);
  FUZZ_CHECK(map.versions.size() == size && map.client_nhosts.size() == size && map.client_nprocs.size() == size &&
                 map.client_first_rank.size() == size,
             "per-client tables of the wrong size");
  std::size_t hosts = 0, procs = 0;
  for (std::size_t c = 0; c < size; ++c) {
    FUZZ_CHECK(!map.versions[c].empty(), "client without versions");
    for (std::size_t i = 1; i < map.versions[c].size(); ++i)
      FUZZ_CHECK(map.versions[c][i - 1] < map.versions[c][i], "versions not ascending");
    FUZZ_CHECK(map.client_nhosts[c] >= 1 && map.client_nprocs[c] >= 1, "a client without hosts or procs");
    FUZZ_CHECK(map.client_first_rank[c] == static_cast<int>(procs), "client_first_rank");
    hosts += static_cast<std::size_t>(map.client_nhosts[c]);
    procs += static_cast<std::size_t>(map.client_nprocs[c]);
  }
  FUZZ_CHECK(map.hosts.size() == hosts, "hosts do not add up");
  FUZZ_CHECK(map.procs.size() == procs && map.proc_host.size() == procs && map.proc_client.size() == procs,
             "procs do not add up");
  int first = 0;
  for (const auto& h : map.hosts) {
    FUZZ_CHECK(h.port >= 1, "port 0");
    FUZZ_CHECK(h.client >= 0 && h.client < n, "host of no client");
    FUZZ_CHECK(h.first_rank == first && h.nprocs >= 0, "host first_rank / nprocs");
    first += h.nprocs;
  }
  for (std::size_t r = 0; r < procs; ++r) {
    int host = map.proc_host[r];
    FUZZ_CHECK(host >= 0 && static_cast<std::size_t>(host) < hosts, "proc_host out of range");
    const auto& h = map.hosts[static_cast<std::size_t>(host)];
    FUZZ_CHECK(h.client == map.proc_client[r], "a proc's host belongs to another client");
    FUZZ_CHECK(static_cast<int>(r) >= h.first_rank && static_cast<int>(r) < h.first_rank + h.nprocs,
               "a proc outside its host's ranks");
    FUZZ_CHECK(map.rank_of(map.procs[r]) == static_cast<int>(r), "rank_of(procs[r]) != r");
  }
  FUZZ_CHECK(map.world_size() == static_cast<int>(procs), "world_size");
  FUZZ_CHECK(map.datalen >= 1 && map.tagub >= 32767, "datalen / tagub");
  FUZZ_CHECK(map.coll_xsize >= 0 && map.coll_maxlinear >= 1, "coll_xsize / coll_maxlinear");
  FUZZ_CHECK(map.ackmark >= 1 && map.ackmark <= map.hiwater, "ackmark / hiwater");
}

void derive(const CollatedLabels& labels) {
  JobMap map;
  try {
    map = JobMap::from_labels(labels);
  } catch (const WireError& e) {
    FUZZ_CHECK(std::string_view(e.what()).find('\n') == std::string_view::npos, "a multi-line message");
    return;
  }
  check_map(labels, map);
}

void collated_record(const Bytes& record) {
  CollatedLabels labels;
  try {
    labels = CollatedLabels::decode(text_of(record));
  } catch (const WireError&) {
    return;
  }
  std::string again = labels.encode();
  FUZZ_CHECK(CollatedLabels::decode(again) == labels, "CollatedLabels encode/decode");
  derive(labels);
}

void local_host_record(const Bytes& record) {
  LocalHost host;
  try {
    host = LocalHost::decode(text_of(record));
  } catch (const WireError&) {
    return;
  }
  FUZZ_CHECK(host.encode() == text_of(record), "LocalHost encode(decode(x)) != x");
}

void built_labels(Input& in) {
  CollatedLabels labels;
  labels.nclients = in.u8();
  labels.my_client = in.u8();
  while (!in.empty()) {
    std::uint8_t label = in.u8();
    std::int32_t code = label < 14 ? standard_labels()[label].code
                        : label == 14 ? 0x7777
                                      : static_cast<std::int32_t>(in.u32());
    CollatedLabel value;
    value.mask = in.u32();
    value.data = in.blob();
    labels.labels[code] = std::move(value);
  }
  FUZZ_CHECK(CollatedLabels::decode(labels.encode()) == labels, "CollatedLabels encode/decode");
  derive(labels);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  switch (in.u8() % 3) {
    case 0: collated_record(in.rest()); break;
    case 1: local_host_record(in.rest()); break;
    case 2: built_labels(in); break;
  }
  return 0;
}
