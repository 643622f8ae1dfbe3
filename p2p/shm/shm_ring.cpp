#include "p2p/shm/shm_ring.hpp"

#include <cstring>
#include <fmt/format.h>

#include "base/error.hpp"
#include "p2p/copy_bytes.hpp"

namespace gridmpi::p2p::shm {

namespace {

std::atomic_ref<std::uint64_t> stamp_of(std::byte* line) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(line));
}

}  // namespace

void RingWriter::publish(std::byte* line, const RecordPrefix& prefix) {
  // Everything but the stamp first; the stamp's release store makes the
  // whole record visible.
  std::memcpy(line + sizeof(std::uint64_t), reinterpret_cast<const std::byte*>(&prefix) + sizeof(std::uint64_t),
              sizeof(RecordPrefix) - sizeof(std::uint64_t));
  stamp_of(line).store(prefix.stamp, std::memory_order_release);
}

bool RingWriter::refresh_room(std::uint64_t lines) {
  cached_head_ = view_.control->head.load(std::memory_order_acquire);
  if (view_.count - (tail_ - cached_head_) >= lines) return true;
  // Full: ask for a doorbell, then look once more, so that a receiver that
  // freed lines between our two reads is not waited for in vain (the
  // receiver publishes its head before it looks at space_wanted; both sides
  // use sequentially consistent operations, so one of them sees the other).
  view_.control->space_wanted.store(1, std::memory_order_seq_cst);
  cached_head_ = view_.control->head.load(std::memory_order_seq_cst);
  return view_.count - (tail_ - cached_head_) >= lines;
}

void RingWriter::too_large(std::size_t size, std::size_t header_size) const {
  throw MpiError(MPI_ERR_INTERN, fmt::format("shm: record of {} bytes (header {}) above the ring's limit of {}", size,
                                             header_size, max_record()));
}

bool RingWriter::pad_to_end() {
  const std::uint64_t pad = view_.count - tail_index_;
  if (!room(pad)) return false;
  RecordPrefix prefix{tail_ + 1, static_cast<std::uint8_t>(RecordKind::padding), 0, 0, 0, 0};
  publish(view_.lines + tail_index_ * cache_line, prefix);
  tail_ += pad;
  tail_index_ = 0;
  return true;
}

bool RingWriter::write(RecordKind kind, std::span<const std::byte> header, std::span<const std::uint64_t> extras,
                       std::span<const std::byte> data) {
  const std::size_t size = record_bytes(header.size(), extras.size(), data.size());
  if (header.size() > 255 || extras.size() > max_extra_words || size > max_record()) [[unlikely]]
    too_large(size, header.size());
  const std::uint64_t lines = lines_for(size);
  // Does not fit before the end of the array: pad to the end first.
  if (tail_index_ + lines > view_.count) [[unlikely]]
    if (!pad_to_end()) return false;
  if (!room(lines)) return false;
  const std::uint64_t index = tail_index_;
  std::byte* line = view_.lines + index * cache_line;
  std::byte* p = line + sizeof(RecordPrefix);
  copy_bytes(p, header.data(), header.size());
  p += (header.size() + 7) & ~std::size_t{7};
  if (!extras.empty()) std::memcpy(p, extras.data(), extras.size_bytes());
  p += extras.size_bytes();
  copy_bytes(p, data.data(), data.size());
  RecordPrefix prefix{tail_ + 1, static_cast<std::uint8_t>(kind), static_cast<std::uint8_t>(header.size()),
                      static_cast<std::uint8_t>(extras.size()), 0, static_cast<std::uint32_t>(data.size())};
  publish(line, prefix);
  tail_ += lines;
  tail_index_ = index + lines == view_.count ? 0 : index + lines;
  return true;
}

std::uint64_t Record::extra(std::size_t i) const {
  std::uint64_t v = 0;
  if (i < extra_words) std::memcpy(&v, extras + 8 * i, sizeof v);
  return v;
}

bool RingReader::peek_slow(Record* record) {
  for (;;) {
    // Every line consumed and none given back yet (after a padding record):
    // the line at the head still holds its old stamp, and nothing new.
    if (head_ - published_ >= view_.count) return false;
    const std::uint64_t index = head_index_;
    std::byte* line = view_.lines + index * cache_line;
    const std::uint64_t stamp = stamp_of(line).load(std::memory_order_acquire);
    if (stamp == 0) return false;
    RecordPrefix prefix;
    std::memcpy(&prefix, line, sizeof prefix);
    const auto kind = static_cast<RecordKind>(prefix.kind);
    if (stamp != head_ + 1 || kind < RecordKind::message || kind > RecordKind::padding)
      throw MpiError(MPI_ERR_INTERN, fmt::format("shm: corrupted ring: line {} holds stamp {} kind {}, expected stamp {}",
                                                 index, stamp, prefix.kind, head_ + 1));
    if (kind == RecordKind::padding) {
      head_ += view_.count - index;
      head_index_ = 0;
      continue;
    }
    const std::size_t size = record_bytes(prefix.header_size, prefix.extra_words, prefix.bytes);
    const std::uint64_t lines = lines_for(size);
    if (prefix.extra_words > max_extra_words || index + lines > view_.count)
      throw MpiError(MPI_ERR_INTERN, fmt::format("shm: corrupted ring: record of {} lines at line {} of {}", lines,
                                                 index, view_.count));
    fill_record(record, line, prefix, lines);
    return true;
  }
}

bool RingReader::publish() {
  if (head_ == published_) return false;
  // The stamps of the lines given back are cleared here, not when they are
  // consumed: a store to the line just read (which the sender still holds)
  // would go out before the stores of our answer, and delay it.
  for (std::uint64_t n = head_ - published_; n > 0; --n) {
    stamp_of(view_.lines + published_index_ * cache_line).store(0, std::memory_order_relaxed);
    if (++published_index_ == view_.count) published_index_ = 0;
  }
  published_ = head_;
  // Sequentially consistent against the sender's space_wanted store and head
  // load (RingWriter::room): either it sees our head or we see its request.
  view_.control->head.store(head_, std::memory_order_seq_cst);
  if (view_.control->space_wanted.load(std::memory_order_seq_cst) == 0) return false;
  return view_.control->space_wanted.exchange(0, std::memory_order_seq_cst) != 0;
}

}  // namespace gridmpi::p2p::shm
