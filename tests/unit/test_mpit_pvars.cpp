// MPI_T performance variables (core/mpit.cpp) with pvars of the test's own
// (core/mpit_pvars.hpp): a timer, a counter that wraps around, and a pvar
// registered while MPI_T is initialized.  tests/mpi/mpit_pvar.c checks
// request.messages_received in MPI programs.
#include <catch2/catch.hpp>
#include <mpi.h>

#include <climits>

#include "core/mpit_pvars.hpp"

namespace {

namespace pvars = gridmpi::core::pvars;

unsigned long long unit_count = 0;
double unit_seconds = 0.0;

// Registered once per process, by the first test that needs them.
void register_unit_pvars() {
  static bool done = false;
  if (done) return;
  done = true;
  pvars::register_pvar({"unittest.count", "a counter the unit test sets", pvars::Kind::counter,
                        MPI_T_VERBOSITY_MPIDEV_ALL, [] { return unit_count; }, nullptr});
  pvars::register_pvar({"unittest.seconds", "a timer the unit test sets (seconds)", pvars::Kind::timer,
                        MPI_T_VERBOSITY_MPIDEV_ALL, nullptr, [] { return unit_seconds; }});
}

int index_of(const char* name, int var_class) {
  int index = -1;
  int rc = MPI_T_pvar_get_index(name, var_class, &index);
  return rc == MPI_SUCCESS ? index : -rc;
}

// MPI_T initialized for one test (the outermost init reads the registrations).
struct MpitInit {
  MpitInit() {
    int provided = -1;
    REQUIRE(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
  }
  ~MpitInit() { CHECK(MPI_T_finalize() == MPI_SUCCESS); }
};

}  // namespace

TEST_CASE("a pvar registered while MPI_T is initialized appears at the next outermost MPI_T_init_thread",
          "[mpit]") {
  int provided = -1, before = -1, num = -1, stamp_before = -1, stamp = -1;
  REQUIRE(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
  REQUIRE(MPI_T_pvar_get_num(&before) == MPI_SUCCESS);
  REQUIRE(MPI_T_category_changed(&stamp_before) == MPI_SUCCESS);
  static bool registered = false;
  REQUIRE_FALSE(registered);  // the test is about the first registration
  registered = true;
  pvars::register_pvar({"unittestlate.count", "registered late", pvars::Kind::counter, MPI_T_VERBOSITY_USER_BASIC,
                        [] { return 42ULL; }, nullptr});

  // A nested init/finalize does not refresh the tables.
  REQUIRE(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
  REQUIRE(MPI_T_finalize() == MPI_SUCCESS);
  REQUIRE(MPI_T_pvar_get_num(&num) == MPI_SUCCESS);
  CHECK(num == before);
  CHECK(index_of("unittestlate.count", MPI_T_PVAR_CLASS_COUNTER) == -MPI_T_ERR_INVALID_NAME);
  REQUIRE(MPI_T_category_changed(&stamp) == MPI_SUCCESS);
  CHECK(stamp == stamp_before);
  REQUIRE(MPI_T_finalize() == MPI_SUCCESS);

  MpitInit init;
  REQUIRE(MPI_T_pvar_get_num(&num) == MPI_SUCCESS);
  CHECK(num == before + 1);
  CHECK(index_of("unittestlate.count", MPI_T_PVAR_CLASS_COUNTER) == before);  // appended: old indices stay
  REQUIRE(MPI_T_category_changed(&stamp) == MPI_SUCCESS);
  CHECK(stamp != stamp_before);
  // Its own category, with no cvar.
  int cat = -1, num_cvars = -1, num_pvars = -1, listed = -1;
  REQUIRE(MPI_T_category_get_index("unittestlate", &cat) == MPI_SUCCESS);
  REQUIRE(MPI_T_category_get_info(cat, nullptr, nullptr, nullptr, nullptr, &num_cvars, &num_pvars, nullptr) ==
          MPI_SUCCESS);
  CHECK(num_cvars == 0);
  CHECK(num_pvars == 1);
  REQUIRE(MPI_T_category_get_pvars(cat, 1, &listed) == MPI_SUCCESS);
  CHECK(listed == before);
}

TEST_CASE("a timer pvar counts the seconds of its started intervals", "[mpit]") {
  register_unit_pvars();
  MpitInit init;
  int index = index_of("unittest.seconds", MPI_T_PVAR_CLASS_TIMER);
  REQUIRE(index >= 0);
  CHECK(index_of("unittest.seconds", MPI_T_PVAR_CLASS_COUNTER) == -MPI_T_ERR_INVALID_NAME);
  int var_class = -1, readonly = -1, continuous = -1, atomic = -1;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  REQUIRE(MPI_T_pvar_get_info(index, nullptr, nullptr, nullptr, &var_class, &datatype, nullptr, nullptr, nullptr,
                              nullptr, &readonly, &continuous, &atomic) == MPI_SUCCESS);
  CHECK(var_class == MPI_T_PVAR_CLASS_TIMER);
  CHECK(datatype == MPI_DOUBLE);
  CHECK(readonly == 0);
  CHECK(continuous == 0);
  CHECK(atomic == 0);

  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  int count = -1;
  REQUIRE(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  REQUIRE(MPI_T_pvar_handle_alloc(session, index, nullptr, &handle, &count) == MPI_SUCCESS);
  CHECK(count == 1);
  auto read = [&] {
    double v = -1.0;
    REQUIRE(MPI_T_pvar_read(session, handle, &v) == MPI_SUCCESS);
    return v;
  };
  // Binary fractions: the sums are exact.
  unit_seconds = 10.0;
  CHECK(read() == 0.0);
  REQUIRE(MPI_T_pvar_start(session, handle) == MPI_SUCCESS);
  unit_seconds = 11.5;
  CHECK(read() == 1.5);
  REQUIRE(MPI_T_pvar_stop(session, handle) == MPI_SUCCESS);
  unit_seconds = 20.0;
  CHECK(read() == 1.5);
  REQUIRE(MPI_T_pvar_start(session, handle) == MPI_SUCCESS);
  unit_seconds = 20.25;
  CHECK(read() == 1.75);
  REQUIRE(MPI_T_pvar_reset(session, handle) == MPI_SUCCESS);
  CHECK(read() == 0.0);
  unit_seconds = 21.0;
  CHECK(read() == 0.75);
  double v = 5.0;
  CHECK(MPI_T_pvar_write(session, handle, &v) == MPI_T_ERR_PVAR_NO_WRITE);
  CHECK(MPI_T_pvar_readreset(session, handle, &v) == MPI_T_ERR_PVAR_NO_ATOMIC);
  CHECK(read() == 0.75);
  REQUIRE(MPI_T_pvar_session_free(&session) == MPI_SUCCESS);
}

TEST_CASE("a counter pvar that wraps around still reads its growth", "[mpit]") {
  register_unit_pvars();
  MpitInit init;
  int index = index_of("unittest.count", MPI_T_PVAR_CLASS_COUNTER);
  REQUIRE(index >= 0);
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  int count = -1;
  REQUIRE(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  REQUIRE(MPI_T_pvar_handle_alloc(session, index, nullptr, &handle, &count) == MPI_SUCCESS);
  unit_count = ULLONG_MAX - 1;
  REQUIRE(MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS);
  unit_count = 1;  // three more
  unsigned long long v = 0;
  REQUIRE(MPI_T_pvar_read(session, handle, &v) == MPI_SUCCESS);
  CHECK(v == 3);
  // MPI_T_finalize frees the session and its handle.
}
