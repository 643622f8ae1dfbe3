// Groups: the handle table and the set operations of MPI-3.1 section 6.3.
// Members are world ranks; membership tests use a bitmap over world ranks
// (world sizes are small next to the cost of building any communicator).
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "core/group.hpp"

namespace gridmpi::core {

namespace {

// Set of world ranks with O(1) membership.
class RankSet {
 public:
  explicit RankSet(const std::vector<int>& ranks) {
    int max_rank = ranks.empty() ? -1 : *std::max_element(ranks.begin(), ranks.end());
    present_.assign(static_cast<size_t>(max_rank + 1), false);
    for (int r : ranks) present_[r] = true;
  }
  bool contains(int world) const noexcept {
    return world >= 0 && static_cast<size_t>(world) < present_.size() && present_[world];
  }

 private:
  std::vector<bool> present_;
};

void check_rank(const Group& g, int rank, const char* what) {
  if (rank < 0 || rank >= g.size())
    throw MpiError(MPI_ERR_RANK, fmt::format("{} {} is not a rank of the group (size {})", what, rank, g.size()));
}

// Marks rank as used; throws when it already was (MPI requires distinct ranks).
void mark_distinct(std::vector<bool>& seen, int rank, const char* what) {
  if (seen[rank]) throw MpiError(MPI_ERR_RANK, fmt::format("{} {} appears more than once", what, rank));
  seen[rank] = true;
}

// Expands (first, last, stride) triplets into group ranks, checking them.
std::vector<int> expand_ranges(const Group& g, std::span<const int[3]> ranges) {
  std::vector<int> out;
  std::vector<bool> seen(g.size(), false);
  for (size_t i = 0; i < ranges.size(); ++i) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) throw MpiError(MPI_ERR_ARG, fmt::format("range {} has stride 0", i));
    check_rank(g, first, "range first");
    check_rank(g, last, "range last");
    if ((stride > 0 && first > last) || (stride < 0 && first < last))
      throw MpiError(MPI_ERR_ARG, fmt::format("range {} ({}, {}, {}) runs against its stride", i, first,
                                              last, stride));
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      mark_distinct(seen, static_cast<int>(r), "range rank");
      out.push_back(static_cast<int>(r));
    }
  }
  return out;
}

}  // namespace

int Group::rank_of_world(int world) const noexcept {
  // Most groups are prefixes of the world group (or the world group itself).
  if (world >= 0 && world < size() && members[world] == world) return world;
  auto it = std::find(members.begin(), members.end(), world);
  return it == members.end() ? MPI_UNDEFINED : static_cast<int>(it - members.begin());
}

HandleTable<Group>& group_table() {
  static HandleTable<Group>& table = []() -> HandleTable<Group>& {
    static HandleTable<Group> t(MPI_ERR_GROUP);
    auto empty = std::make_unique<Group>();
    empty->handle = MPI_GROUP_EMPTY;
    t.put_at(MPI_GROUP_EMPTY, std::move(empty));
    return t;
  }();
  return table;
}

Group& group(MPI_Group handle) {
  Group* g = group_table().find(handle);
  if (!g) throw MpiError(MPI_ERR_GROUP, fmt::format("invalid group {}", handle));
  return *g;
}

MPI_Group add_group(Group g) {
  auto obj = std::make_unique<Group>(std::move(g));
  Group* raw = obj.get();
  raw->handle = group_table().add(std::move(obj));
  return raw->handle;
}

Group make_group(std::vector<int> members, int my_world_rank) {
  Group g;
  g.members = std::move(members);
  g.my_rank = g.rank_of_world(my_world_rank);
  return g;
}

Group group_union(const Group& a, const Group& b, int my_world_rank) {
  std::vector<int> members = a.members;
  RankSet in_a(a.members);
  for (int w : b.members)
    if (!in_a.contains(w)) members.push_back(w);
  return make_group(std::move(members), my_world_rank);
}

Group group_intersection(const Group& a, const Group& b, int my_world_rank) {
  std::vector<int> members;
  RankSet in_b(b.members);
  for (int w : a.members)
    if (in_b.contains(w)) members.push_back(w);
  return make_group(std::move(members), my_world_rank);
}

Group group_difference(const Group& a, const Group& b, int my_world_rank) {
  std::vector<int> members;
  RankSet in_b(b.members);
  for (int w : a.members)
    if (!in_b.contains(w)) members.push_back(w);
  return make_group(std::move(members), my_world_rank);
}

Group group_incl(const Group& g, std::span<const int> ranks, int my_world_rank) {
  std::vector<bool> seen(g.size(), false);
  std::vector<int> members;
  members.reserve(ranks.size());
  for (int r : ranks) {
    check_rank(g, r, "rank");
    mark_distinct(seen, r, "rank");
    members.push_back(g.members[r]);
  }
  return make_group(std::move(members), my_world_rank);
}

Group group_excl(const Group& g, std::span<const int> ranks, int my_world_rank) {
  std::vector<bool> excluded(g.size(), false);
  for (int r : ranks) {
    check_rank(g, r, "rank");
    mark_distinct(excluded, r, "rank");
  }
  std::vector<int> members;
  for (int r = 0; r < g.size(); ++r)
    if (!excluded[r]) members.push_back(g.members[r]);
  return make_group(std::move(members), my_world_rank);
}

Group group_range_incl(const Group& g, std::span<const int[3]> ranges, int my_world_rank) {
  std::vector<int> ranks = expand_ranges(g, ranges);
  std::vector<int> members;
  members.reserve(ranks.size());
  for (int r : ranks) members.push_back(g.members[r]);
  return make_group(std::move(members), my_world_rank);
}

Group group_range_excl(const Group& g, std::span<const int[3]> ranges, int my_world_rank) {
  std::vector<int> ranks = expand_ranges(g, ranges);
  return group_excl(g, ranks, my_world_rank);
}

void group_translate_ranks(const Group& a, std::span<const int> ranks1, const Group& b,
                           std::span<int> ranks2) {
  if (ranks2.size() < ranks1.size())
    throw MpiError(MPI_ERR_ARG, "output rank array is shorter than the input");
  // Translating many ranks: index b once instead of searching it per rank.
  std::unordered_map<int, int> index_of_b;
  bool use_index = ranks1.size() > 8 && b.size() > 8;
  if (use_index)
    for (int i = 0; i < b.size(); ++i) index_of_b.emplace(b.members[i], i);
  for (size_t i = 0; i < ranks1.size(); ++i) {
    int r = ranks1[i];
    if (r == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    check_rank(a, r, "rank");
    int w = a.members[r];
    if (use_index) {
      auto it = index_of_b.find(w);
      ranks2[i] = it == index_of_b.end() ? MPI_UNDEFINED : it->second;
    } else {
      ranks2[i] = b.rank_of_world(w);
    }
  }
}

bool ClientMap::contiguous() const noexcept {
  for (const std::vector<int>& m : members)
    if (m.back() - m.front() + 1 != static_cast<int>(m.size())) return false;
  return true;
}

ClientMap client_map(const Group& g, const JobLayout& layout) {
  ClientMap map;
  const int n = g.size();
  map.master_of.resize(static_cast<size_t>(n));
  map.local_rank.resize(static_cast<size_t>(n));
  std::unordered_map<int, int> master_of_client;  // client -> master number
  for (int r = 0; r < n; ++r) {
    int client = layout.client(g.members[r]);
    auto [it, added] = master_of_client.emplace(client, map.num_masters());
    if (added) {
      map.masters.push_back(r);  // the first (lowest) comm rank of its client
      map.members.emplace_back();
    }
    std::vector<int>& mine = map.members[static_cast<size_t>(it->second)];
    map.master_of[r] = it->second;
    map.local_rank[r] = static_cast<int>(mine.size());
    mine.push_back(r);
  }
  return map;
}

int group_compare(const Group& a, const Group& b) {
  if (a.members == b.members) return MPI_IDENT;
  if (a.size() != b.size()) return MPI_UNEQUAL;
  std::vector<int> sa = a.members, sb = b.members;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
}

}  // namespace gridmpi::core
