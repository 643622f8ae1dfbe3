// The coroutine machinery of non-blocking collective schedules
// (core/coll/nbc.hpp), without a job: a request completed by hand stands in
// for a message, and resuming after it fails because no engine is running,
// which gives a sub-task that fails after it has suspended.
#include <catch2/catch.hpp>

#include <vector>

#include "core/coll/nbc.hpp"
#include "base/error.hpp"
#include "request/request.hpp"

namespace nb = gridmpi::coll::nb;
using gridmpi::request::Request;

namespace {

nb::Task waits_then_fails(Request* r) {
  // Suspends until r completes; resuming releases r through the engine,
  // which throws MpiError here (MPI is not initialized).
  co_await nb::wait(std::vector<Request*>(1, r));
}

nb::Task parent(Request* r, bool* caught, bool* after) {
  try {
    co_await waits_then_fails(r);
  } catch (const gridmpi::MpiError&) {
    *caught = true;
  }
  *after = true;
}

}  // namespace

TEST_CASE("a sub-task's failure is rethrown at the parent's co_await", "[nbc]") {
  Request r;
  r.complete = false;
  bool caught = false, after = false;
  nb::Task t = parent(&r, &caught, &after);
  CHECK_FALSE(t.step());  // the sub-task waits for r
  CHECK_FALSE(caught);
  r.complete = true;
  CHECK(t.step());  // the sub-task fails; the parent catches it and runs to its end
  CHECK(caught);
  CHECK(after);
}

TEST_CASE("a schedule that never waits finishes on its first step", "[nbc]") {
  bool caught = false, after = false;
  Request r;
  r.complete = true;  // already complete: no suspension, the failure comes at once
  nb::Task t = parent(&r, &caught, &after);
  CHECK(t.step());
  CHECK(caught);
  CHECK(after);
}
