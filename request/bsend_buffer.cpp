#include "request/bsend_buffer.hpp"

#include <mpi.h>

#include <cstdint>
#include <fmt/format.h>

#include "base/error.hpp"

namespace gridmpi::request {

namespace {
constexpr std::size_t alignment = 16;
static_assert(MPI_BSEND_OVERHEAD >= alignment, "the overhead must absorb the alignment padding");
}  // namespace

void BsendBuffer::attach(void* buffer, std::size_t size) {
  if (attached())
    throw MpiError(MPI_ERR_BUFFER, fmt::format("a buffer of {} bytes is already attached; detach it first", size_));
  base_ = static_cast<std::byte*>(buffer);
  size_ = size;
  // A null buffer of size 0 is legal; remember it as attached all the same.
  if (!base_) base_ = reinterpret_cast<std::byte*>(alignof(std::max_align_t));
  blocks_.clear();
}

std::pair<void*, std::size_t> BsendBuffer::detach() {
  std::pair<void*, std::size_t> r{base_, size_};
  if (size_ == 0 && base_ == reinterpret_cast<std::byte*>(alignof(std::max_align_t))) r.first = nullptr;
  base_ = nullptr;
  size_ = 0;
  blocks_.clear();
  return r;
}

std::optional<BsendBuffer::Block> BsendBuffer::allocate(std::size_t bytes) {
  if (!attached()) return std::nullopt;
  const std::size_t need = bytes + MPI_BSEND_OVERHEAD;
  std::size_t gap_start = 0;
  auto try_gap = [&](std::size_t gap_end) -> std::optional<Block> {
    if (gap_end < gap_start || gap_end - gap_start < need) return std::nullopt;
    auto address = reinterpret_cast<std::uintptr_t>(base_ + gap_start);
    std::size_t pad = (alignment - address % alignment) % alignment;
    blocks_.emplace(gap_start, need);
    return Block{gap_start, std::span<std::byte>(base_ + gap_start + pad, bytes)};
  };
  for (const auto& [offset, length] : blocks_) {
    if (auto b = try_gap(offset)) return b;
    gap_start = offset + length;
  }
  return try_gap(size_);
}

void BsendBuffer::release(std::size_t offset) { blocks_.erase(offset); }

}  // namespace gridmpi::request
