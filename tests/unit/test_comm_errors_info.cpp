// Error classes/strings (core/errhandler.cpp) and info objects (core/info.cpp),
// plus the C entry points that work without MPI_Init.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "core/attr.hpp"
#include "core/errhandler.hpp"
#include "core/info.hpp"

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

}  // namespace

TEST_CASE("every built-in error class has a name and a meaningful string", "[errors]") {
  for (int cls = 0; cls <= MPI_T_ERR_INVALID_HANDLE; ++cls) {
    INFO("class " << cls);
    CHECK(error_class_of(cls) == cls);
    CHECK(error_string(cls).size() > 5);
    CHECK(error_class_name(cls).rfind("MPI_", 0) == 0);
  }
  CHECK(error_class_name(MPI_ERR_RANK) == "MPI_ERR_RANK");
  CHECK(error_string(MPI_ERR_TRUNCATE) == "message truncated on receive");
  CHECK(error_class_of(MPI_ERR_LASTCODE) == MPI_ERR_LASTCODE);
  CHECK(error_class_of_call([] { error_class_of(-1); }) == MPI_ERR_ARG);
  CHECK(error_class_of_call([] { error_string(100000); }) == MPI_ERR_ARG);
}

TEST_CASE("added error classes and codes", "[errors]") {
  int before = last_used_code();
  CHECK(before >= MPI_ERR_LASTCODE);
  int cls = add_error_class();
  CHECK(cls > MPI_ERR_LASTCODE);
  CHECK(error_class_of(cls) == cls);
  CHECK(error_string(cls).empty());
  int code = add_error_code(cls);
  CHECK(code == cls + 1);
  CHECK(error_class_of(code) == cls);
  int builtin_based = add_error_code(MPI_ERR_TAG);
  CHECK(error_class_of(builtin_based) == MPI_ERR_TAG);
  CHECK(last_used_code() == builtin_based);
  CHECK(*predefined_attribute(MPI_LASTUSEDCODE) == builtin_based);
  add_error_string(code, "my library's error");
  CHECK(error_string(code) == "my library's error");
  CHECK(error_class_of_call([] { add_error_string(MPI_ERR_RANK, "x"); }) == MPI_ERR_ARG);
  // A code is not a class.
  CHECK(error_class_of_call([&] { add_error_code(code); }) == MPI_ERR_ARG);
}

TEST_CASE("error entry points that work before MPI_Init", "[errors]") {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  REQUIRE(MPI_Error_string(MPI_ERR_COMM, text, &len) == MPI_SUCCESS);
  CHECK(std::string(text) == "invalid communicator");
  CHECK(len == static_cast<int>(std::strlen(text)));
  int cls = -1;
  REQUIRE(MPI_Error_class(MPI_ERR_BUFFER, &cls) == MPI_SUCCESS);
  CHECK(cls == MPI_ERR_BUFFER);
  int version = 0, subversion = 0;
  REQUIRE(MPI_Get_version(&version, &subversion) == MPI_SUCCESS);
  CHECK(version == 3);
  CHECK(subversion == 1);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  REQUIRE(MPI_Get_library_version(library, &len) == MPI_SUCCESS);
  CHECK(std::string(library).rfind("gridmpi 0.1.0", 0) == 0);
  int flag = 1;
  REQUIRE(MPI_Initialized(&flag) == MPI_SUCCESS);
  CHECK(flag == 0);
  REQUIRE(MPI_Finalized(&flag) == MPI_SUCCESS);
  CHECK(flag == 0);
  double t0 = MPI_Wtime();
  CHECK(MPI_Wtime() >= t0);
  CHECK(MPI_Wtick() > 0);
  CHECK(MPI_Wtick() <= 1e-6);
  CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == MPI_COMM_WORLD);
  CHECK(MPI_Info_f2c(7) == 7);
}

TEST_CASE("info objects keep insertion order and check lengths", "[info]") {
  Info i;
  i.set("b", "2");
  i.set("a", "1");
  i.set("b", "3");  // replaces, keeps its place
  REQUIRE(i.entries.size() == 2);
  CHECK(i.entries[0] == std::pair<std::string, std::string>{"b", "3"});
  CHECK(i.entries[1].first == "a");
  CHECK(i.get("a") == std::optional<std::string>("1"));
  CHECK_FALSE(i.get("c").has_value());
  i.erase("b");
  CHECK(i.entries.size() == 1);
  CHECK(error_class_of_call([&] { i.erase("b"); }) == MPI_ERR_INFO_NOKEY);
  CHECK(error_class_of_call([&] { i.set(std::string(MPI_MAX_INFO_KEY + 1, 'k'), "v"); }) == MPI_ERR_INFO_KEY);
  CHECK(error_class_of_call([&] { i.set("", "v"); }) == MPI_ERR_INFO_KEY);
  CHECK(error_class_of_call([&] { i.set("k", std::string(MPI_MAX_INFO_VAL + 1, 'v')); }) ==
        MPI_ERR_INFO_VALUE);
  i.set(std::string(MPI_MAX_INFO_KEY, 'k'), std::string(MPI_MAX_INFO_VAL, 'v'));
  CHECK(i.entries.size() == 2);
}

TEST_CASE("MPI_INFO_ENV is predefined", "[info]") {
  CHECK(info_table().is_predefined(MPI_INFO_ENV));
  fill_info_env(nullptr, nullptr, 4, MPI_THREAD_SINGLE, "node07");
  Info& env = info(MPI_INFO_ENV);
  CHECK(env.get("maxprocs") == std::optional<std::string>("4"));
  CHECK(env.get("host") == std::optional<std::string>("node07"));
  CHECK(env.get("thread_level") == std::optional<std::string>("MPI_THREAD_SINGLE"));
  CHECK(env.get("command").has_value());  // from /proc/self/cmdline
  CHECK(error_class_of_call([] { info(MPI_INFO_NULL); }) == MPI_ERR_INFO);
}
