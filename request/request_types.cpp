#include "request/request_types.hpp"

#include <new>

namespace gridmpi::request {

namespace {

// Freed objects of one class and this thread, ready for the next one.
// Bounded: a burst of many gives its memory back to malloc.  Initial-exec
// TLS, and trivially destructible so that no guard variable (which would be
// general-dynamic TLS: a __tls_get_addr call on every use) comes with it;
// small enough for the static TLS surplus that a dlopen()ed libmpi draws
// from.  A thread's lists are emptied when it ends by Drain, a thread_local
// touched once per thread, when the lists first keep something.
template <class T, int Capacity>
struct FreeList {
  static constexpr int capacity = Capacity;
  void* slots[capacity];
  int count;
  void drain() noexcept {
    while (count > 0) ::operator delete(slots[--count]);
  }
};

__attribute__((tls_model("initial-exec"))) thread_local FreeList<PointRequest, 16> free_requests;
__attribute__((tls_model("initial-exec"))) thread_local FreeList<UnexpectedMessage, 8> free_messages;
__attribute__((tls_model("initial-exec"))) thread_local bool drain_armed;

void arm_drain() {
  struct Drain {
    ~Drain() {
      free_requests.drain();
      free_messages.drain();
    }
  };
  thread_local Drain drain;
  (void)&drain;
  drain_armed = true;
}

template <class T, int N>
void* take(FreeList<T, N>& f, std::size_t size) {
  if (size == sizeof(T) && f.count > 0) return f.slots[--f.count];
  return ::operator new(size);
}

template <class T, int N>
void give(FreeList<T, N>& f, void* p, std::size_t size) noexcept {
  if (size == sizeof(T) && f.count < N) {
    if (!drain_armed) {
      try {
        arm_drain();
      } catch (...) {
        ::operator delete(p);
        return;
      }
    }
    f.slots[f.count++] = p;
    return;
  }
  ::operator delete(p);
}

}  // namespace

void* PointRequest::operator new(std::size_t size) { return take(free_requests, size); }
void PointRequest::operator delete(void* p, std::size_t size) noexcept { give(free_requests, p, size); }

void* UnexpectedMessage::operator new(std::size_t size) { return take(free_messages, size); }
void UnexpectedMessage::operator delete(void* p, std::size_t size) noexcept { give(free_messages, p, size); }

}  // namespace gridmpi::request
