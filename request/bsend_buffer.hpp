// The buffer of MPI_Buffer_attach and its accounting.  A buffered message of
// n packed bytes takes n + MPI_BSEND_OVERHEAD bytes of the user's buffer, as
// the standard's examples compute it; our bookkeeping lives outside the
// buffer, so the overhead only absorbs alignment padding.  First fit over the
// gaps between live blocks.  Tested in tests/unit/test_request_bsend.cpp.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <span>

namespace gridmpi::request {

class BsendBuffer {
 public:
  bool attached() const noexcept { return base_ != nullptr; }
  void attach(void* buffer, std::size_t size);  // throws MpiError(MPI_ERR_BUFFER) if attached
  // Forgets the buffer; the caller has waited until empty().
  std::pair<void*, std::size_t> detach();

  struct Block {
    std::size_t offset;        // key for release()
    std::span<std::byte> data; // bytes bytes, aligned
  };
  // A block for `bytes` packed bytes, or nullopt when it does not fit now.
  std::optional<Block> allocate(std::size_t bytes);
  void release(std::size_t offset);
  bool empty() const noexcept { return blocks_.empty(); }
  std::size_t live_blocks() const noexcept { return blocks_.size(); }

 private:
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  std::map<std::size_t, std::size_t> blocks_;  // offset -> length (bytes + overhead)
};

}  // namespace gridmpi::request
