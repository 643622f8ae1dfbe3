// Schedules for non-blocking collectives (and the collectives built on them:
// intercommunicator and neighbourhood collectives).  Owner: core/coll/.
//
// A schedule is a C++20 coroutine returning nb::Task.  It posts
// point-to-point requests on the communicator's collective context
// (coll::isend / coll::irecv) and `co_await nb::wait(...)`s them; local work
// (copies, reductions) is plain code between the waits.  nb::start() turns a
// task into an MPI request that the engine's progress loop advances, so
// MPI_Test on it (or any other MPI call) moves the collective on; nb::run()
// is the blocking form (start + wait), used by collectives that have no
// separate blocking algorithm.
//
//   nb::Task ibarrier_dissemination(core::Comm& comm, int tag) {
//     for (int d = 1; d < comm.size; d *= 2) {
//       auto r = coll::irecv(nullptr, 0, MPI_BYTE, (comm.rank - d + comm.size) % comm.size, tag, comm);
//       auto s = coll::isend(nullptr, 0, MPI_BYTE, (comm.rank + d) % comm.size, tag, comm);
//       co_await nb::wait(r, s);
//     }
//   }
//
// Rules for schedule code:
// * Never block (no coll::send/recv/wait_all, no blocking collective): a task
//   runs inside the engine's progress loop.  Only co_await.
// * Arguments are copied into the coroutine frame: take them by value (the
//   argument structs of algorithm.hpp hold pointers to the user's arrays,
//   which MPI forbids the user to touch until completion).  Take core::Comm
//   by reference.
// * Every message of one non-blocking collective uses the tag given by
//   nb::next_tag(comm) when it was started; all members start non-blocking
//   collectives on a communicator in the same order (MPI-3.1 5.12), so the
//   tags agree, and pairs of ranks never overtake, so one tag per operation
//   suffices.  Tags of blocking collectives (util.hpp, 1..63) never collide;
//   on a communicator that spans IMPI clients next_tag starts at 256, above
//   the IMPI tags (110..230) of its blocking collectives (impi.hpp).
// * Temporaries live in the coroutine frame (locals), so they survive waits.
// * A task may co_await another task (a sub-schedule, e.g. an intra-group
//   phase of an intercommunicator collective): `co_await std::move(sub);`.
// * An exception thrown in a task completes its request with the error class
//   of the MpiError (MPI_ERR_INTERN otherwise); nb::run rethrows it.
#pragma once
#include <mpi.h>

#include <coroutine>
#include <exception>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/group.hpp"

namespace gridmpi::request { struct Request; }

namespace gridmpi::coll::nb {

class Task {
 public:
  struct promise_type {
    std::vector<request::Request*> waiting;  // awaited, not yet all complete
    Task* child = nullptr;                   // awaited sub-task
    std::exception_ptr child_error;          // its failure, rethrown by the co_await
    std::exception_ptr error;
    Task get_return_object() noexcept {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
  };

  Task() = default;
  explicit Task(std::coroutine_handle<promise_type> h) noexcept : handle_(h) {}
  Task(Task&& other) noexcept : handle_(other.handle_) { other.handle_ = {}; }
  Task& operator=(Task&& other) noexcept;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task();

  // Runs the schedule as far as it can go without blocking.  Returns true
  // when it has finished; rethrows the exception it ended with.
  bool step();
  bool done() const noexcept { return !handle_ || handle_.done(); }

  // co_await of a sub-task.  Its failure is rethrown by the co_await, in
  // the parent's frame (so the parent can catch it or unwind normally).
  struct Awaiter {
    Task& task;
    std::coroutine_handle<promise_type> parent{};
    bool await_ready() { return task.step(); }
    void await_suspend(std::coroutine_handle<promise_type> h) noexcept {
      parent = h;
      h.promise().child = &task;
    }
    void await_resume() {
      if (parent && parent.promise().child_error)
        std::rethrow_exception(std::exchange(parent.promise().child_error, nullptr));
    }
  };
  Awaiter operator co_await() && noexcept { return Awaiter{*this}; }

 private:
  // Frees the awaited requests of an abandoned schedule.
  void abandon() noexcept;
  std::coroutine_handle<promise_type> handle_{};
};

// co_await nb::wait(r1, r2) or nb::wait(vector): resumes when every request
// has completed (null entries are ignored), then releases them all and
// throws MpiError with the first failure (e.g. MPI_ERR_TRUNCATE).  (No
// braced-list form: gcc 12 rejects an initializer_list inside a co_await
// expression, "array used as initializer".)
struct WaitAll {
  std::vector<request::Request*> requests;
  bool await_ready() noexcept;
  void await_suspend(std::coroutine_handle<Task::promise_type> h) noexcept;
  void await_resume();
};
WaitAll wait(std::vector<request::Request*> requests);
template <class... More>
WaitAll wait(request::Request* first, More*... more) {
  return WaitAll{std::vector<request::Request*>{first, more...}};
}

// Makes `task` an MPI request of kind collective on comm, adopted by the
// engine, and runs its first step now (so a schedule that needs no message
// completes at once).  Returns the request (its handle is the MPI_Request).
// `result`, when given, is the request's status once the task has finished
// (a schedule that receives, as the dynamic multicast's, fills it in).
// `cancel`, when given, is what MPI_Cancel of the request does (a schedule
// that can still withdraw, as a multicast receive whose header has not come;
// it completes the task's wait on what it withdrew and the task finishes
// with its status marked cancelled); without it MPI_Cancel is an error.
request::Request* start(Task task, core::Comm& comm, std::shared_ptr<const MPI_Status> result = nullptr,
                        std::function<void()> cancel = {});
// MPI_Cancel of a collective request: false when it cannot be cancelled.
bool cancel(request::Request* request);
// Runs `task` to completion (blocking); rethrows its failure.
void run(Task task);

// The tag for the next non-blocking collective started on comm (see above).
inline constexpr int first_tag = 64;
int next_tag(core::Comm& comm);

}  // namespace gridmpi::coll::nb
