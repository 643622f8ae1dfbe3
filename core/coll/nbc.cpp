// The coroutine machinery of non-blocking collective schedules (nbc.hpp).
#include "core/coll/nbc.hpp"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "core/coll/impi.hpp"
#include "base/error.hpp"
#include "core/runtime.hpp"
#include "request/request.hpp"

namespace gridmpi::coll::nb {

namespace {

request::Engine& engine() {
  core::Runtime& rt = core::runtime();
  if (!rt.engine) throw MpiError(MPI_ERR_INTERN, "the request engine is not running");
  return *rt.engine;
}

bool all_complete(const std::vector<request::Request*>& requests) noexcept {
  for (request::Request* r : requests)
    if (r && !r->complete) return false;
  return true;
}

// The MPI request of a running schedule.  It holds its communicator (the
// schedule keeps core::Comm references): MPI_Comm_free meanwhile only
// destroys it when this request goes (core::comm_hold).
struct CommHold {
  // By handle: at process exit the communicator table may be gone first.
  MPI_Comm comm = MPI_COMM_NULL;
  CommHold() = default;
  CommHold(const CommHold&) = delete;
  CommHold& operator=(const CommHold&) = delete;
  ~CommHold() {
    if (comm != MPI_COMM_NULL && core::state() == core::State::initialized) core::comm_unhold(comm);
  }
};
struct TaskRequest final : request::Request {
  CommHold hold;  // declared first: destroyed after the task's frame
  Task task;
  std::shared_ptr<const MPI_Status> result;  // the status the task fills in, if any
  std::function<void()> cancel;              // MPI_Cancel, when the task can withdraw
};

}  // namespace

Task& Task::operator=(Task&& other) noexcept {
  if (this != &other) {
    abandon();
    if (handle_) handle_.destroy();
    handle_ = other.handle_;
    other.handle_ = {};
  }
  return *this;
}

Task::~Task() {
  abandon();
  if (handle_) handle_.destroy();
}

void Task::abandon() noexcept {
  if (!handle_ || handle_.done()) return;
  // A schedule destroyed before it finished (its request was never waited
  // for at Finalize, or an exception unwound past it): give its pending
  // point-to-point requests back to the engine.
  auto& p = handle_.promise();
  if (p.waiting.empty()) return;
  // After MPI_Finalize (requests never completed by the program) the engine
  // is gone with its requests: nothing to give back.
  if (core::state() != core::State::initialized) return;
  core::Runtime& rt = core::runtime();
  if (!rt.engine) return;
  for (request::Request* r : p.waiting) {
    if (!r) continue;
    // Receives are withdrawn; a send is left to complete (cancelling it
    // would start the wire cancel protocol for an internal message).
    if (r->complete || (r->kind == request::RequestKind::recv && rt.engine->cancel(r))) rt.engine->release(r);
    else r->freed = true;  // still in flight: the engine frees it when it completes
  }
  p.waiting.clear();
}

bool Task::step() {
  if (!handle_) return true;
  for (;;) {
    if (handle_.done()) {
      auto& p = handle_.promise();
      if (p.error) std::rethrow_exception(std::exchange(p.error, nullptr));
      return true;
    }
    auto& p = handle_.promise();
    if (p.child) {
      try {
        if (!p.child->step()) return false;
      } catch (...) {
        p.child_error = std::current_exception();  // rethrown by the parent's co_await
      }
      p.child = nullptr;
    }
    if (!p.waiting.empty()) {
      if (!all_complete(p.waiting)) return false;
      p.waiting.clear();  // the awaiter releases them as the task resumes
    }
    handle_.resume();
  }
}

bool WaitAll::await_ready() noexcept { return all_complete(requests); }

void WaitAll::await_suspend(std::coroutine_handle<Task::promise_type> h) noexcept {
  h.promise().waiting = requests;
}

void WaitAll::await_resume() {
  request::Engine& e = engine();
  int first_error = MPI_SUCCESS;
  MPI_Status first_status{};
  for (request::Request* r : requests) {
    if (!r) continue;
    if (r->error != MPI_SUCCESS && first_error == MPI_SUCCESS) {
      first_error = r->error;
      first_status = r->status;
    }
    e.release(r);
  }
  requests.clear();
  if (first_error != MPI_SUCCESS)
    throw MpiError(first_error,
                   fmt::format("collective message from rank {} (internal tag {}) failed with error class {}",
                               first_status.MPI_SOURCE, first_status.MPI_TAG, first_error));
}

WaitAll wait(std::vector<request::Request*> requests) { return WaitAll{std::move(requests)}; }

namespace {

// Called by the engine's progress loop (and once by start): advances the
// schedule, turning a failure into the request's error.
bool poll_task(TaskRequest* r) {
  try {
    if (!r->task.step()) return false;
    if (r->result) r->status = *r->result;
    r->status.MPI_ERROR = MPI_SUCCESS;
    return true;
  } catch (const MpiError& e) {
    r->error = e.error_class();
  } catch (...) {
    r->error = MPI_ERR_INTERN;
  }
  if (r->result) r->status = *r->result;
  r->status.MPI_ERROR = r->error;
  return true;
}

}  // namespace

request::Request* start(Task task, core::Comm& comm, std::shared_ptr<const MPI_Status> result,
                        std::function<void()> cancel) {
  auto owned = std::make_unique<TaskRequest>();
  TaskRequest* r = owned.get();
  r->kind = request::RequestKind::collective;
  r->comm = comm.handle;
  r->status.MPI_SOURCE = MPI_ANY_SOURCE;
  r->status.MPI_TAG = MPI_ANY_TAG;
  r->status.MPI_ERROR = MPI_SUCCESS;
  r->task = std::move(task);
  r->result = std::move(result);
  r->cancel = std::move(cancel);
  core::comm_hold(comm);
  r->hold.comm = comm.handle;
  r->complete = poll_task(r);
  if (!r->complete) r->poll = [r] { return poll_task(r); };
  return engine().adopt(std::move(owned));
}

bool cancel(request::Request* request) {
  auto* r = dynamic_cast<TaskRequest*>(request);
  if (r == nullptr || !r->cancel) return false;
  if (!r->complete) {
    r->cancel();
    r->complete = poll_task(r);  // finishes now if the withdrawal took
  }
  return true;
}

void run(Task task) {
  request::Engine& e = engine();
  if (task.step()) return;
  // Progress until it finishes; step() rethrows its failure.
  bool finished = false;
  std::exception_ptr failure;
  e.wait_until([&] {
    if (finished) return true;
    try {
      finished = task.step();
    } catch (...) {
      failure = std::current_exception();
      finished = true;
    }
    return finished;
  });
  if (failure) std::rethrow_exception(failure);
}

int next_tag(core::Comm& comm) {
  constexpr std::uint32_t span = 1u << 24;
  if (comm.clients) {
    // A communicator spanning IMPI clients: its blocking collectives use the
    // IMPI tags 110..230 on the same context (impi.hpp); stay above them and
    // below first_tag + span (inter_local.hpp's local_tag relies on that).
    constexpr std::uint32_t impi_span = span - (impi::first_tag_after_impi - first_tag);
    return impi::first_tag_after_impi + static_cast<int>(comm.nb_sequence++ % impi_span);
  }
  return first_tag + static_cast<int>(comm.nb_sequence++ % span);
}

}  // namespace gridmpi::coll::nb
