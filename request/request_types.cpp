#include "request/request_types.hpp"

#include <new>

namespace gridmpi::request {

namespace {

// Freed objects of one class and this thread, ready for the next one.
// Bounded: a burst of many gives its memory back to malloc.  Initial-exec
// TLS (no __tls_get_addr call); small enough for the static TLS surplus that
// a dlopen()ed libmpi draws from.
template <class T>
struct FreeList {
  static constexpr int capacity = 16;
  void* slots[capacity];
  int count = 0;
  ~FreeList() {
    while (count > 0) ::operator delete(slots[--count]);
  }
  void* take(std::size_t size) {
    if (size == sizeof(T) && count > 0) return slots[--count];
    return ::operator new(size);
  }
  void give(void* p, std::size_t size) noexcept {
    if (size == sizeof(T) && count < capacity) {
      slots[count++] = p;
      return;
    }
    ::operator delete(p);
  }
};

__attribute__((tls_model("initial-exec"))) thread_local FreeList<PointRequest> free_requests;
__attribute__((tls_model("initial-exec"))) thread_local FreeList<UnexpectedMessage> free_messages;

}  // namespace

void* PointRequest::operator new(std::size_t size) { return free_requests.take(size); }
void PointRequest::operator delete(void* p, std::size_t size) noexcept { free_requests.give(p, size); }

void* UnexpectedMessage::operator new(std::size_t size) { return free_messages.take(size); }
void UnexpectedMessage::operator delete(void* p, std::size_t size) noexcept { free_messages.give(p, size); }

}  // namespace gridmpi::request
