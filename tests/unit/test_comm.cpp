// Communicator pieces that need no job: context-id agreement, comparison,
// attribute caching with callbacks (core/comm.cpp, core/attr.cpp).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/attr.hpp"
#include "core/group.hpp"

using gridmpi::MpiError;
using namespace gridmpi::core;

namespace {

int error_class_of_call(const std::function<void()>& f) {
  try {
    f();
  } catch (const MpiError& e) {
    return e.error_class();
  }
  return MPI_SUCCESS;
}

ContextPool::Mask band(const ContextPool::Mask& a, const ContextPool::Mask& b) {
  ContextPool::Mask out{};
  for (int i = 0; i < ContextPool::words; ++i) out[i] = a[i] & b[i];
  return out;
}

Comm make_test_comm(MPI_Comm handle, std::vector<int> members, int me) {
  Comm c;
  c.handle = handle;
  c.group = std::make_shared<Group>(make_group(std::move(members), me));
  c.rank = c.group->my_rank;
  c.size = c.group->size();
  return c;
}

// Records callback activity for the attribute tests.
std::vector<std::string> events;

int record_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  events.push_back("delete " + std::to_string(comm) + " " + std::to_string(*static_cast<int*>(value)) +
                   (extra ? " extra" : ""));
  (void)keyval;
  return MPI_SUCCESS;
}

int failing_delete(MPI_Comm, int, void*, void*) { return MPI_ERR_OTHER; }
int failing_copy(MPI_Comm, int, void*, void*, void*, int*) { return MPI_ERR_ARG; }

}  // namespace

TEST_CASE("context pool: lowest pair free in every process, even ids only", "[comm]") {
  ContextPool a, b;
  a.reserve(0);
  a.reserve(2);
  b.reserve(0);
  b.reserve(2);
  b.reserve(4);  // b already uses pair 2 for a communicator a does not belong to
  ContextPool::Mask agreed = band(a.free_mask(), b.free_mask());
  std::uint32_t ca = a.take_lowest(agreed, true);
  std::uint32_t cb = b.take_lowest(agreed, true);
  CHECK(ca == 6);
  CHECK(cb == 6);
  CHECK_FALSE(a.is_free(6));
  CHECK(a.is_free(4));
  // A non-member takes part in the agreement but reserves nothing.
  ContextPool c;
  CHECK(c.take_lowest(band(agreed, c.free_mask()), false) == 6);
  CHECK(c.is_free(6));
  a.release(6);
  CHECK(a.is_free(6));
  CHECK(a.take_lowest(a.free_mask(), false) == 4);
}

TEST_CASE("context pool: ids beyond the first word, and exhaustion", "[comm]") {
  ContextPool p;
  for (int pair = 0; pair < 64; ++pair) p.reserve(2 * pair);
  CHECK(p.take_lowest(p.free_mask(), true) == 128);
  for (int pair = 65; pair < ContextPool::words * 64; ++pair) p.reserve(2 * pair);
  CHECK(error_class_of_call([&] { p.take_lowest(p.free_mask(), true); }) == MPI_ERR_INTERN);
  p.release(40);
  CHECK(p.take_lowest(p.free_mask(), true) == 40);
}

TEST_CASE("comm_compare", "[comm]") {
  Comm a = make_test_comm(100, {0, 1, 2}, 0);
  Comm same_group = make_test_comm(101, {0, 1, 2}, 0);
  Comm reordered = make_test_comm(102, {2, 0, 1}, 0);
  Comm other = make_test_comm(103, {0, 1}, 0);
  CHECK(comm_compare(a, a) == MPI_IDENT);
  CHECK(comm_compare(a, same_group) == MPI_CONGRUENT);
  CHECK(comm_compare(a, reordered) == MPI_SIMILAR);
  CHECK(comm_compare(a, other) == MPI_UNEQUAL);
}

TEST_CASE("communicator attributes: set, replace, get, delete run the callbacks", "[comm][attr]") {
  events.clear();
  int extra = 0;
  int keyval = create_comm_keyval(MPI_COMM_DUP_FN, record_delete, &extra);
  CHECK(keyval >= GRIDMPI_PREDEFINED_KEYVAL_COUNT);
  Comm c = make_test_comm(200, {0}, 0);
  int v1 = 1, v2 = 2;
  void* out = nullptr;
  CHECK_FALSE(get_comm_attr(c, keyval, &out));
  set_comm_attr(c, keyval, &v1);
  REQUIRE(get_comm_attr(c, keyval, &out));
  CHECK(out == &v1);
  set_comm_attr(c, keyval, &v2);  // replacing deletes the old value first
  CHECK(events == std::vector<std::string>{"delete 200 1 extra"});
  REQUIRE(get_comm_attr(c, keyval, &out));
  CHECK(out == &v2);
  delete_comm_attr(c, keyval);
  CHECK(events.back() == "delete 200 2 extra");
  CHECK_FALSE(get_comm_attr(c, keyval, &out));
  CHECK(error_class_of_call([&] { delete_comm_attr(c, keyval); }) == MPI_ERR_KEYVAL);
  free_keyval(&keyval, KeyvalKind::comm);
  CHECK(keyval == MPI_KEYVAL_INVALID);
}

TEST_CASE("predefined attributes are pointers to ints and cannot be changed", "[comm][attr]") {
  set_predefined_attribute(MPI_TAG_UB, 0x7fffffff);
  Comm c = make_test_comm(201, {0}, 0);
  void* out = nullptr;
  REQUIRE(get_comm_attr(c, MPI_TAG_UB, &out));
  CHECK(*static_cast<int*>(out) == 0x7fffffff);
  int v = 0;
  CHECK(error_class_of_call([&] { set_comm_attr(c, MPI_TAG_UB, &v); }) == MPI_ERR_KEYVAL);
  CHECK(error_class_of_call([&] { delete_comm_attr(c, MPI_TAG_UB); }) == MPI_ERR_KEYVAL);
  int predefined = MPI_TAG_UB;
  CHECK(error_class_of_call([&] { free_keyval(&predefined, KeyvalKind::comm); }) == MPI_ERR_KEYVAL);
  CHECK(error_class_of_call([&] { get_comm_attr(c, 9999, &out); }) == MPI_ERR_KEYVAL);
}

TEST_CASE("dup copies through the copy callbacks; free deletes newest first", "[comm][attr]") {
  events.clear();
  int copied_key = create_comm_keyval(MPI_COMM_DUP_FN, record_delete, nullptr);
  int not_copied_key = create_comm_keyval(MPI_COMM_NULL_COPY_FN, record_delete, nullptr);
  int third_key = create_comm_keyval(MPI_COMM_DUP_FN, record_delete, nullptr);
  Comm from = make_test_comm(300, {0, 1}, 0);
  Comm to = make_test_comm(301, {0, 1}, 0);
  int a = 10, b = 20, c = 30;
  set_comm_attr(from, third_key, &c);
  set_comm_attr(from, copied_key, &a);
  set_comm_attr(from, not_copied_key, &b);
  copy_comm_attributes(from, to);
  void* out = nullptr;
  REQUIRE(get_comm_attr(to, copied_key, &out));
  CHECK(out == &a);
  CHECK_FALSE(get_comm_attr(to, not_copied_key, &out));
  CHECK(to.attribute_order == std::vector<int>{third_key, copied_key});

  delete_all_comm_attributes(from);
  CHECK(events == std::vector<std::string>{"delete 300 20", "delete 300 10", "delete 300 30"});
  CHECK(from.attributes.empty());

  // A freed keyval stays usable for the attributes still stored with it.
  free_keyval(&copied_key, KeyvalKind::comm);
  events.clear();
  delete_all_comm_attributes(to);
  CHECK(events == std::vector<std::string>{"delete 301 10", "delete 301 30"});
  free_keyval(&not_copied_key, KeyvalKind::comm);
  free_keyval(&third_key, KeyvalKind::comm);
}

TEST_CASE("failing callbacks surface their error code", "[comm][attr]") {
  int copy_fails = create_comm_keyval(failing_copy, nullptr, nullptr);
  int delete_fails = create_comm_keyval(nullptr, failing_delete, nullptr);
  Comm from = make_test_comm(400, {0}, 0);
  Comm to = make_test_comm(401, {0}, 0);
  int v = 1;
  set_comm_attr(from, copy_fails, &v);
  CHECK(error_class_of_call([&] { copy_comm_attributes(from, to); }) == MPI_ERR_ARG);
  CHECK(to.attributes.empty());
  set_comm_attr(from, delete_fails, &v);
  CHECK(error_class_of_call([&] { delete_comm_attr(from, delete_fails); }) == MPI_ERR_OTHER);
  void* out = nullptr;
  CHECK(get_comm_attr(from, delete_fails, &out));  // still there after the failure
  CHECK(error_class_of_call([&] { delete_all_comm_attributes(from); }) == MPI_ERR_OTHER);
  CHECK(from.attributes.size() == 1);  // only the failing one stays
}

TEST_CASE("keyvals of one kind are refused for another", "[comm][attr]") {
  int type_key = create_type_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, nullptr);
  Comm c = make_test_comm(500, {0}, 0);
  int v = 0;
  CHECK(error_class_of_call([&] { set_comm_attr(c, type_key, &v); }) == MPI_ERR_KEYVAL);
  CHECK(error_class_of_call([&] { free_keyval(&type_key, KeyvalKind::comm); }) == MPI_ERR_KEYVAL);
  free_keyval(&type_key, KeyvalKind::type);
}
