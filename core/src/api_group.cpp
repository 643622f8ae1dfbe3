// C API: groups (MPI-3.1 section 6.3).
#include <fmt/format.h>

#include "core/api.hpp"
#include "core/group.hpp"
#include "core/runtime.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

int my_world_rank() { return runtime().world_rank; }

void check_count(int n, const char* what) {
  if (n < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative {} {}", what, n));
}

// Empty results are MPI_GROUP_EMPTY (as the standard says for MPI_Group_incl
// with n = 0); MPI_Group_free accepts it.
MPI_Group store(Group g) {
  if (g.members.empty()) return MPI_GROUP_EMPTY;
  return add_group(std::move(g));
}

template <class Body>
int group_call(const char* function, MPI_Group* out, Body&& body) {
  return api_call(MPI_COMM_WORLD, function, [&] {
    require_initialized(function);
    require(out != nullptr, MPI_ERR_ARG, "newgroup is a null pointer");
    *out = store(body());
  });
}

}  // namespace

extern "C" int PMPI_Group_size(MPI_Group g, int* size) {
  return api_call(MPI_COMM_WORLD, "MPI_Group_size", [&] {
    require_initialized("MPI_Group_size");
    require(size != nullptr, MPI_ERR_ARG, "size is a null pointer");
    *size = group(g).size();
  });
}
GRIDMPI_WEAK(Group_size)

extern "C" int PMPI_Group_rank(MPI_Group g, int* rank) {
  return api_call(MPI_COMM_WORLD, "MPI_Group_rank", [&] {
    require_initialized("MPI_Group_rank");
    require(rank != nullptr, MPI_ERR_ARG, "rank is a null pointer");
    *rank = group(g).my_rank;
  });
}
GRIDMPI_WEAK(Group_rank)

extern "C" int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                          int ranks2[]) {
  return api_call(MPI_COMM_WORLD, "MPI_Group_translate_ranks", [&] {
    require_initialized("MPI_Group_translate_ranks");
    check_count(n, "rank count");
    Group& a = group(group1);
    Group& b = group(group2);
    if (n == 0) return;
    require(ranks1 != nullptr && ranks2 != nullptr, MPI_ERR_ARG, "ranks1 or ranks2 is a null pointer");
    group_translate_ranks(a, std::span<const int>(ranks1, n), b, std::span<int>(ranks2, n));
  });
}
GRIDMPI_WEAK(Group_translate_ranks)

extern "C" int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  return api_call(MPI_COMM_WORLD, "MPI_Group_compare", [&] {
    require_initialized("MPI_Group_compare");
    require(result != nullptr, MPI_ERR_ARG, "result is a null pointer");
    *result = group_compare(group(group1), group(group2));
  });
}
GRIDMPI_WEAK(Group_compare)

extern "C" int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return group_call("MPI_Group_union", newgroup,
                    [&] { return group_union(group(group1), group(group2), my_world_rank()); });
}
GRIDMPI_WEAK(Group_union)

extern "C" int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return group_call("MPI_Group_intersection", newgroup,
                    [&] { return group_intersection(group(group1), group(group2), my_world_rank()); });
}
GRIDMPI_WEAK(Group_intersection)

extern "C" int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return group_call("MPI_Group_difference", newgroup,
                    [&] { return group_difference(group(group1), group(group2), my_world_rank()); });
}
GRIDMPI_WEAK(Group_difference)

extern "C" int PMPI_Group_incl(MPI_Group g, int n, const int ranks[], MPI_Group* newgroup) {
  return group_call("MPI_Group_incl", newgroup, [&] {
    check_count(n, "rank count");
    Group& in = group(g);
    if (n > 0) require(ranks != nullptr, MPI_ERR_ARG, "ranks is a null pointer");
    return group_incl(in, std::span<const int>(ranks, n > 0 ? n : 0), my_world_rank());
  });
}
GRIDMPI_WEAK(Group_incl)

extern "C" int PMPI_Group_excl(MPI_Group g, int n, const int ranks[], MPI_Group* newgroup) {
  return group_call("MPI_Group_excl", newgroup, [&] {
    check_count(n, "rank count");
    Group& in = group(g);
    if (n > 0) require(ranks != nullptr, MPI_ERR_ARG, "ranks is a null pointer");
    return group_excl(in, std::span<const int>(ranks, n > 0 ? n : 0), my_world_rank());
  });
}
GRIDMPI_WEAK(Group_excl)

extern "C" int PMPI_Group_range_incl(MPI_Group g, int n, int ranges[][3], MPI_Group* newgroup) {
  return group_call("MPI_Group_range_incl", newgroup, [&] {
    check_count(n, "range count");
    Group& in = group(g);
    if (n > 0) require(ranges != nullptr, MPI_ERR_ARG, "ranges is a null pointer");
    return group_range_incl(in, std::span<const int[3]>(ranges, n > 0 ? n : 0), my_world_rank());
  });
}
GRIDMPI_WEAK(Group_range_incl)

extern "C" int PMPI_Group_range_excl(MPI_Group g, int n, int ranges[][3], MPI_Group* newgroup) {
  return group_call("MPI_Group_range_excl", newgroup, [&] {
    check_count(n, "range count");
    Group& in = group(g);
    if (n > 0) require(ranges != nullptr, MPI_ERR_ARG, "ranges is a null pointer");
    return group_range_excl(in, std::span<const int[3]>(ranges, n > 0 ? n : 0), my_world_rank());
  });
}
GRIDMPI_WEAK(Group_range_excl)

extern "C" int PMPI_Group_free(MPI_Group* g) {
  return api_call(MPI_COMM_WORLD, "MPI_Group_free", [&] {
    require_initialized("MPI_Group_free");
    require(g != nullptr, MPI_ERR_ARG, "group is a null pointer");
    group(*g);  // validates (MPI_GROUP_NULL is an error)
    if (!group_table().is_predefined(*g)) group_table().release(*g);
    *g = MPI_GROUP_NULL;
  });
}
GRIDMPI_WEAK(Group_free)

extern "C" int PMPI_Comm_group(MPI_Comm comm_handle, MPI_Group* g) {
  return api_call(comm_handle, "MPI_Comm_group", [&] {
    require_initialized("MPI_Comm_group");
    require(g != nullptr, MPI_ERR_ARG, "group is a null pointer");
    Comm& c = comm_local(comm_handle);
    // A fresh handle each time: the caller frees it with MPI_Group_free.
    *g = store(*c.group);
  });
}
GRIDMPI_WEAK(Comm_group)
