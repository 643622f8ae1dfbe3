// Group set operations and rank translation (core/group.cpp), without a job.
#include <catch2/catch.hpp>

#include <numeric>

#include "core/group.hpp"

using gridmpi::MpiError;
using namespace gridmpi::core;

namespace {

Group world(int n, int me) {
  std::vector<int> m(n);
  std::iota(m.begin(), m.end(), 0);
  return make_group(std::move(m), me);
}

int error_class_of_call(const std::function<void()>& f) {
  try {
    f();
  } catch (const MpiError& e) {
    return e.error_class();
  }
  return MPI_SUCCESS;
}

}  // namespace

TEST_CASE("group rank_of_world and my_rank", "[group]") {
  Group g = make_group({5, 3, 9}, 3);
  CHECK(g.size() == 3);
  CHECK(g.my_rank == 1);
  CHECK(g.rank_of_world(9) == 2);
  CHECK(g.rank_of_world(5) == 0);
  CHECK(g.rank_of_world(4) == MPI_UNDEFINED);
  CHECK(g.world_rank(2) == 9);
  CHECK(make_group({5, 3, 9}, 4).my_rank == MPI_UNDEFINED);
  // The identity fast path must not give a false hit.
  Group shuffled = make_group({1, 0, 2}, 0);
  CHECK(shuffled.rank_of_world(0) == 1);
  CHECK(shuffled.rank_of_world(2) == 2);
}

TEST_CASE("union keeps the first group's order, then the second's new members", "[group]") {
  Group a = make_group({4, 1, 7}, 7);
  Group b = make_group({2, 7, 1, 0}, 7);
  Group u = group_union(a, b, 7);
  CHECK(u.members == std::vector<int>{4, 1, 7, 2, 0});
  CHECK(u.my_rank == 2);
  CHECK(group_union(b, a, 7).members == std::vector<int>{2, 7, 1, 0, 4});
  CHECK(group_union(a, Group{}, 0).members == a.members);
}

TEST_CASE("intersection and difference keep the first group's order", "[group]") {
  Group a = make_group({4, 1, 7, 3}, 3);
  Group b = make_group({3, 7, 9}, 3);
  Group i = group_intersection(a, b, 3);
  CHECK(i.members == std::vector<int>{7, 3});
  CHECK(i.my_rank == 1);
  Group d = group_difference(a, b, 3);
  CHECK(d.members == std::vector<int>{4, 1});
  CHECK(d.my_rank == MPI_UNDEFINED);
  CHECK(group_intersection(a, make_group({8}, 0), 0).members.empty());
  CHECK(group_difference(a, a, 0).members.empty());
}

TEST_CASE("incl and excl", "[group]") {
  Group w = world(6, 4);
  int ranks[] = {5, 0, 4};
  Group in = group_incl(w, ranks, 4);
  CHECK(in.members == std::vector<int>{5, 0, 4});
  CHECK(in.my_rank == 2);
  Group ex = group_excl(w, ranks, 4);
  CHECK(ex.members == std::vector<int>{1, 2, 3});
  CHECK(ex.my_rank == MPI_UNDEFINED);
  CHECK(group_incl(w, std::span<const int>(), 4).members.empty());
  CHECK(group_excl(w, std::span<const int>(), 4).members == w.members);

  // Incl of a non-world group maps through its members.
  int sub[] = {2, 0};
  CHECK(group_incl(in, sub, 4).members == std::vector<int>{4, 5});

  int duplicate[] = {1, 1};
  int out_of_range[] = {6};
  int negative[] = {-1};
  CHECK(error_class_of_call([&] { group_incl(w, duplicate, 0); }) == MPI_ERR_RANK);
  CHECK(error_class_of_call([&] { group_incl(w, out_of_range, 0); }) == MPI_ERR_RANK);
  CHECK(error_class_of_call([&] { group_excl(w, negative, 0); }) == MPI_ERR_RANK);
  CHECK(error_class_of_call([&] { group_excl(w, duplicate, 0); }) == MPI_ERR_RANK);
}

TEST_CASE("range_incl and range_excl", "[group]") {
  Group w = world(10, 0);
  int ranges[][3] = {{1, 7, 3}, {9, 8, -1}};
  Group in = group_range_incl(w, std::span<const int[3]>(ranges, 2), 9);
  CHECK(in.members == std::vector<int>{1, 4, 7, 9, 8});
  CHECK(in.my_rank == 3);
  Group ex = group_range_excl(w, std::span<const int[3]>(ranges, 2), 9);
  CHECK(ex.members == std::vector<int>{0, 2, 3, 5, 6});

  int single[][3] = {{3, 3, 1}};
  CHECK(group_range_incl(w, std::span<const int[3]>(single, 1), 0).members == std::vector<int>{3});
  // A stride larger than the range gives only the first rank.
  int wide[][3] = {{2, 5, 100}};
  CHECK(group_range_incl(w, std::span<const int[3]>(wide, 1), 0).members == std::vector<int>{2});

  int zero_stride[][3] = {{0, 3, 0}};
  int backwards[][3] = {{5, 2, 1}};
  int outside[][3] = {{0, 10, 1}};
  int overlapping[][3] = {{0, 4, 2}, {4, 6, 1}};
  auto incl = [&](int (*r)[3], int n) { group_range_incl(w, std::span<const int[3]>(r, n), 0); };
  CHECK(error_class_of_call([&] { incl(zero_stride, 1); }) == MPI_ERR_ARG);
  CHECK(error_class_of_call([&] { incl(backwards, 1); }) == MPI_ERR_ARG);
  CHECK(error_class_of_call([&] { incl(outside, 1); }) == MPI_ERR_RANK);
  CHECK(error_class_of_call([&] { incl(overlapping, 2); }) == MPI_ERR_RANK);
  CHECK(error_class_of_call([&] {
          group_range_excl(w, std::span<const int[3]>(overlapping, 2), 0);
        }) == MPI_ERR_RANK);
}

TEST_CASE("translate_ranks", "[group]") {
  Group a = make_group({0, 1, 2, 3, 4}, 0);
  Group b = make_group({4, 2, 0}, 0);
  int in[] = {0, 1, 2, 3, 4, MPI_PROC_NULL};
  int out[6] = {};
  group_translate_ranks(a, in, b, out);
  CHECK(std::vector<int>(out, out + 6) ==
        std::vector<int>{2, MPI_UNDEFINED, 1, MPI_UNDEFINED, 0, MPI_PROC_NULL});

  int bad[] = {5};
  int one[1];
  CHECK(error_class_of_call([&] { group_translate_ranks(a, bad, b, one); }) == MPI_ERR_RANK);

  // Many ranks take the indexed path; it must agree with the direct search.
  Group big = world(100, 0);
  std::vector<int> reversed_members(100);
  std::iota(reversed_members.rbegin(), reversed_members.rend(), 0);
  Group reversed = make_group(reversed_members, 0);
  std::vector<int> ranks(100), translated(100);
  std::iota(ranks.begin(), ranks.end(), 0);
  group_translate_ranks(big, ranks, reversed, translated);
  for (int i = 0; i < 100; ++i) CHECK(translated[i] == 99 - i);
}

TEST_CASE("compare", "[group]") {
  Group a = make_group({1, 2, 3}, 0);
  CHECK(group_compare(a, make_group({1, 2, 3}, 0)) == MPI_IDENT);
  CHECK(group_compare(a, make_group({3, 1, 2}, 0)) == MPI_SIMILAR);
  CHECK(group_compare(a, make_group({1, 2}, 0)) == MPI_UNEQUAL);
  CHECK(group_compare(a, make_group({1, 2, 4}, 0)) == MPI_UNEQUAL);
  CHECK(group_compare(Group{}, Group{}) == MPI_IDENT);
}

TEST_CASE("the group table has MPI_GROUP_EMPTY and hands out fresh handles", "[group]") {
  Group& empty = group(MPI_GROUP_EMPTY);
  CHECK(empty.size() == 0);
  CHECK(group_table().is_predefined(MPI_GROUP_EMPTY));
  MPI_Group h = add_group(make_group({0, 1}, 1));
  CHECK(h > MPI_GROUP_EMPTY);
  CHECK(group(h).handle == h);
  CHECK(group(h).my_rank == 1);
  group_table().release(h);
  CHECK(error_class_of_call([&] { group(h); }) == MPI_ERR_GROUP);
  CHECK(error_class_of_call([&] { group(MPI_GROUP_NULL); }) == MPI_ERR_GROUP);
}
