#include "request/request_types.hpp"

#include <new>

namespace gridmpi::request {

namespace {

// Freed PointRequests of this thread, ready for the next one.  Bounded: a
// burst of many requests gives its memory back to malloc.  Initial-exec TLS
// (no __tls_get_addr call); small enough for the static TLS surplus that a
// dlopen()ed libmpi draws from.
struct FreeList {
  static constexpr int capacity = 16;
  void* slots[capacity];
  int count = 0;
  ~FreeList() {
    while (count > 0) ::operator delete(slots[--count]);
  }
};

__attribute__((tls_model("initial-exec"))) thread_local FreeList free_list;

}  // namespace

void* PointRequest::operator new(std::size_t size) {
  FreeList& f = free_list;
  if (size == sizeof(PointRequest) && f.count > 0) return f.slots[--f.count];
  return ::operator new(size);
}

void PointRequest::operator delete(void* p, std::size_t size) noexcept {
  FreeList& f = free_list;
  if (size == sizeof(PointRequest) && f.count < FreeList::capacity) {
    f.slots[f.count++] = p;
    return;
  }
  ::operator delete(p);
}

}  // namespace gridmpi::request
