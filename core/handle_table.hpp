// Maps the int handles of mpi.h to objects.  Predefined objects occupy fixed
// slots (their handle values are compile-time constants in mpi.h); user
// objects take the lowest free slot above them.  O(1) lookup and release.
#pragma once
#include <memory>
#include <vector>

#include "base/error.hpp"

namespace gridmpi::core {

template <class T>
class HandleTable {
 public:
  explicit HandleTable(int error_class) : error_class_(error_class) {}

  // Puts obj at a fixed slot (predefined handles).
  void put_at(int handle, std::unique_ptr<T> obj) {
    if (static_cast<size_t>(handle) >= slots_.size()) slots_.resize(handle + 1);
    slots_[handle] = std::move(obj);
    if (first_user_ <= handle) first_user_ = handle + 1;
  }
  // Stores a user object and returns its handle.
  int add(std::unique_ptr<T> obj) {
    int h;
    if (!free_.empty()) {
      h = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() < static_cast<size_t>(first_user_)) slots_.resize(first_user_);
      h = static_cast<int>(slots_.size());
      slots_.emplace_back();
    }
    slots_[h] = std::move(obj);
    return h;
  }
  // Returns the object or nullptr (invalid or freed handle).
  T* find(int handle) const noexcept {
    if (handle <= 0 || static_cast<size_t>(handle) >= slots_.size()) return nullptr;
    return slots_[handle].get();
  }
  // Returns the object or throws MpiError with this table's error class.
  T& get(int handle) const {
    T* p = find(handle);
    if (!p) throw MpiError(error_class_, "invalid handle " + std::to_string(handle));
    return *p;
  }
  void release(int handle) {
    if (handle < first_user_) throw MpiError(error_class_, "cannot free a predefined object");
    if (!find(handle)) throw MpiError(error_class_, "invalid handle " + std::to_string(handle));
    slots_[handle].reset();
    free_.push_back(handle);
  }
  bool is_predefined(int handle) const noexcept { return handle > 0 && handle < first_user_; }
  size_t live_user_objects() const noexcept {
    size_t n = 0;
    for (size_t i = first_user_; i < slots_.size(); ++i) n += slots_[i] != nullptr;
    return n;
  }

 private:
  std::vector<std::unique_ptr<T>> slots_{1};  // slot 0 is the null handle
  std::vector<int> free_;
  int first_user_ = 1;
  int error_class_;
};

}  // namespace gridmpi::core
