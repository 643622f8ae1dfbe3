// mpcxx: the layer's threads (MTTL's user-level threads) as fibers: each
// remote invocation runs on a stack of its own, switched with ucontext
// (glibc: no library to link, so this header works with any MPI's mpic++),
// non-preemptive as MTTL's: a fiber runs until it waits, yields or ends.
//
// A context (the program's own, or a fiber) that must wait gives the
// scheduler a condition; while it is false the waiting context runs the
// scheduler's loop itself: the layer's progress (its MPI requests), then any
// other context whose condition holds.  When none can run, only a message
// can change anything: the loop waits in MPI (Runtime::wait_for_messages).
// So a handler blocked in a nested invoke never stops the node: its
// condition is simply false while other handlers and the program run.
#pragma once
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mpcxx/serial.hpp"

namespace mpcxx::detail {

class Scheduler;

struct Context {
  ucontext_t uc{};
  std::function<bool()> until;  // empty: runnable
  std::function<void()> body;   // fibers only
  void* stack = nullptr;        // fibers only (mmap'ed, a guard page below)
  std::size_t stack_bytes = 0;
  bool done = false;
};

class Scheduler {
 public:
  Scheduler() {
    if (const char* s = std::getenv("MPCXX_STACK")) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(s, &end, 10);
      if (end == s || *end != '\0' || v < 16384)
        throw Error(std::string("mpcxx: MPCXX_STACK=") + s + " is not a stack size in bytes of at least 16384");
      stack_bytes_ = static_cast<std::size_t>(v);
    }
    current_ = &main_;
  }
  ~Scheduler() {
    for (auto& c : fibers_) release_stack(*c);
    for (auto& c : free_) release_stack(*c);
  }
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // A new fiber running `body`, runnable (it starts at the next switch).
  void spawn(std::function<void()> body) {
    std::unique_ptr<Context> c;
    if (!free_.empty()) {
      c = std::move(free_.back());
      free_.pop_back();
      c->done = false;
    } else {
      c = std::make_unique<Context>();
      const long page = sysconf(_SC_PAGESIZE);
      c->stack_bytes = (stack_bytes_ + static_cast<std::size_t>(page) - 1) / page * page + page;
      c->stack = mmap(nullptr, c->stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
      if (c->stack == MAP_FAILED)
        throw Error("mpcxx: cannot map a fiber stack of " + std::to_string(c->stack_bytes) + " bytes");
      mprotect(c->stack, static_cast<std::size_t>(page), PROT_NONE);  // overflow faults instead of corrupting
    }
    c->body = std::move(body);
    c->until = nullptr;
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = c->stack;
    c->uc.uc_stack.ss_size = c->stack_bytes;
    c->uc.uc_link = nullptr;
    Context* raw = c.get();
    const auto bits = reinterpret_cast<std::uintptr_t>(raw);
    makecontext(&c->uc, reinterpret_cast<void (*)()>(&Scheduler::trampoline), 2,
                static_cast<unsigned>(bits >> 32), static_cast<unsigned>(bits & 0xffffffffu));
    fibers_.push_back(std::move(c));
  }

  // Waits until `until()` holds: runs the progress `poll` (true when it did
  // something), other contexts whose conditions hold, and, when none can,
  // `block` (a wait for the next message).
  template <class Poll, class Block>
  void wait(const std::function<bool()>& until, Poll&& poll, Block&& block) {
    while (!until()) {
      bool worked = poll();
      if (until()) break;
      Context* next = pick_other();
      if (next) {
        current_->until = until;
        switch_to(next);
        current_->until = nullptr;
        continue;
      }
      if (!worked) block();
    }
  }

  // Gives the other runnable contexts a turn (mpcxx::yield()).
  void yield() {
    Context* next = pick_other();
    if (!next) return;
    current_->until = [] { return true; };
    switch_to(next);
    current_->until = nullptr;
  }

  std::size_t fibers() const noexcept { return fibers_.size(); }
  bool in_fiber() const noexcept { return current_ != &main_; }

 private:
  static void trampoline(unsigned hi, unsigned lo) {
    auto* c = reinterpret_cast<Context*>(static_cast<std::uintptr_t>(hi) << 32 | lo);
    Scheduler& s = *instance_;
    try {
      c->body();
    } catch (const std::exception& e) {
      // Bodies catch what they run (Runtime); this is the layer's own bug.
      std::fprintf(stderr, "mpcxx: a fiber ended with an exception: %s\n", e.what());
      std::abort();
    }
    c->body = nullptr;
    c->done = true;
    // Off this stack for good: to any context that can run, else to the
    // program's (which runs the loop when its condition is false).
    Context* next = s.pick_other();
    s.switch_to(next ? next : &s.main_);
  }

  // The next context other than the current one whose condition holds
  // (round robin over the fibers, the program's context last).
  Context* pick_other() {
    const std::size_t n = fibers_.size();
    for (std::size_t k = 0; k < n; ++k) {
      Context* c = fibers_[(cursor_ + k) % n].get();
      if (c == current_ || c->done) continue;
      if (!c->until || c->until()) {
        cursor_ = (cursor_ + k + 1) % n;
        return c;
      }
    }
    if (current_ != &main_ && (!main_.until || main_.until())) return &main_;
    return nullptr;
  }

  void switch_to(Context* next) {
    Context* from = current_;
    current_ = next;
    instance_ = this;
    swapcontext(&from->uc, &next->uc);
    // Back on `from`: recycle the fibers that ended (never the running one).
    reap();
  }

  void reap() {
    for (std::size_t i = 0; i < fibers_.size();) {
      if (fibers_[i]->done && fibers_[i].get() != current_) {
        free_.push_back(std::move(fibers_[i]));
        fibers_[i] = std::move(fibers_.back());
        fibers_.pop_back();
      } else {
        ++i;
      }
    }
    while (free_.size() > 16) {
      release_stack(*free_.back());
      free_.pop_back();
    }
  }

  static void release_stack(Context& c) {
    if (c.stack) munmap(c.stack, c.stack_bytes);
    c.stack = nullptr;
  }

  inline static Scheduler* instance_ = nullptr;
  Context main_;
  Context* current_ = nullptr;
  std::vector<std::unique_ptr<Context>> fibers_;
  std::vector<std::unique_ptr<Context>> free_;
  std::size_t cursor_ = 0;
  std::size_t stack_bytes_ = 256 * 1024;
};

}  // namespace mpcxx::detail
