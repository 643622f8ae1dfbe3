// One single-producer single-consumer ring of the shm transport: the memory
// layout and the two ends, free of any system call so that the unit tests
// drive them on plain memory (tests/unit/test_transport_shm_ring.cpp).
//
// A ring is an array of 64-byte lines ("cells") in the receiver's segment,
// preceded by a control page.  A record occupies whole consecutive lines and
// never wraps: when it does not fit before the end of the array, a padding
// record fills the rest.  The first line of a record starts with a stamp,
// the record's position (in lines, counted from the ring's creation) plus
// one, written last with release order; the receiver polls the stamp of the
// line at its head, so one cache line carries both "there is a message" and
// a small message itself.  Before giving consumed lines back the receiver
// zeroes the first word of each: stale payload bytes can never look like
// a stamp, and nobody has to clear a ring in advance.  See p2p/shm/README.md.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace gridmpi::p2p::shm {

inline constexpr std::size_t cache_line = 64;
inline constexpr std::size_t page_size = 4096;

// The control page in front of each ring.  Fields written by different
// processes sit on different cache lines.
struct RingControl {
  // Receiver writes, sender reads: lines consumed, and single-copy messages
  // read (the sender completes them in order).
  alignas(cache_line) std::atomic<std::uint64_t> head{0};
  std::atomic<std::uint64_t> acked{0};
  // The sender sets it when it finds the ring full; the receiver clears it
  // when it frees lines and then rings the sender's doorbell.
  alignas(cache_line) std::atomic<std::uint32_t> space_wanted{0};
  // Receiver writes once it has tried process_vm_readv on the sender
  // (SingleCopy); the sender reads it before each large send.
  alignas(cache_line) std::atomic<std::uint32_t> single_copy{0};
};
static_assert(sizeof(RingControl) <= page_size);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
              "the rings need address-free atomics");

enum class SingleCopy : std::uint32_t { unknown = 0, permitted = 1, not_permitted = 2 };

enum class RecordKind : std::uint8_t {
  message = 1,       // header + the whole payload (eager sizes)
  single_copy = 2,   // header + extras {payload size, sender's address}: the receiver reads it with process_vm_readv
  stream_begin = 3,  // header + extras {payload size} + the first part of a payload sent through the ring
  stream_chunk = 4,  // the next part of that payload
  padding = 5,       // fills the lines up to the end of the array
};

// The first 16 bytes of a record.
struct RecordPrefix {
  std::uint64_t stamp;  // position + 1; written last (release)
  std::uint8_t kind;
  std::uint8_t header_size;
  std::uint8_t extra_words;  // 64-bit words after the header (8-byte aligned)
  std::uint8_t reserved;
  std::uint32_t bytes;  // payload bytes carried by this record
};
static_assert(sizeof(RecordPrefix) == 16);

inline constexpr std::size_t max_extra_words = 2;

// Bytes a record takes before rounding to lines.
constexpr std::size_t record_bytes(std::size_t header_size, std::size_t extra_words, std::size_t bytes) {
  return sizeof(RecordPrefix) + ((header_size + 7) & ~std::size_t{7}) + 8 * extra_words + bytes;
}
constexpr std::uint64_t lines_for(std::size_t size) { return (size + cache_line - 1) / cache_line; }

struct RingView {
  RingControl* control = nullptr;
  std::byte* lines = nullptr;  // count * cache_line bytes, 64-byte aligned
  std::uint64_t count = 0;     // lines; a power of two is not required
};

// The sending end.  Not thread-safe (one sender per ring by construction).
class RingWriter {
 public:
  RingWriter() = default;
  explicit RingWriter(RingView view) : view_(view) {}

  bool attached() const noexcept { return view_.lines != nullptr; }
  // The largest record (prefix included) accepted: a quarter of the ring, so
  // that a streamed payload keeps several parts in flight.
  std::size_t max_record() const noexcept { return view_.count * cache_line / 4; }
  // Appends one record, or returns false without writing it when the ring
  // has no room; then the receiver has been asked (space_wanted) to ring
  // the sender's doorbell once it frees lines.  A padding record may have
  // been published even when false is returned.
  bool write(RecordKind kind, std::span<const std::byte> header, std::span<const std::uint64_t> extras,
             std::span<const std::byte> data);
  std::uint64_t tail() const noexcept { return tail_; }

 private:
  bool room(std::uint64_t lines) {
    return view_.count - (tail_ - cached_head_) >= lines || refresh_room(lines);
  }
  bool refresh_room(std::uint64_t lines);
  [[noreturn]] void too_large(std::size_t size, std::size_t header_size) const;
  bool pad_to_end();
  void publish(std::byte* line, const RecordPrefix& prefix);

  RingView view_;
  std::uint64_t tail_ = 0;
  std::uint64_t tail_index_ = 0;   // tail_ % count, kept without a division
  std::uint64_t cached_head_ = 0;  // the receiver's head as last read
};

struct Record {
  RecordKind kind{};
  std::span<const std::byte> header;
  const std::byte* extras = nullptr;
  std::size_t extra_words = 0;
  std::span<const std::byte> data;
  std::uint64_t lines = 0;
  std::uint64_t extra(std::size_t i) const;
};

// The receiving end.
class RingReader {
 public:
  RingReader() = default;
  explicit RingReader(RingView view) : view_(view) {}

  bool attached() const noexcept { return view_.lines != nullptr; }
  // True when a record is published at the head (cheap: one load).
  bool ready() const noexcept { return head_word() == head_ + 1; }
  // The line at the head holds something (a record, or what peek() reports
  // as corruption): peek() is worth calling.  One load.
  bool written() const noexcept { return head_word() != 0; }
  // The record at the head, skipping padding; false when none is published.
  // Throws MpiError when the line holds something that cannot be a record
  // (a corrupted ring).
  bool peek(Record* record);  // inline: once per message
  // Moves past the record; its lines go back to the sender at publish().
  void consume(const Record& record) {
    head_ += record.lines;
    head_index_ = head_index_ + record.lines == view_.count ? 0 : head_index_ + record.lines;
  }
  // Zeroes the stamps of the consumed lines and makes them visible to the
  // sender; true when the sender asked to be woken for room (the caller
  // rings its doorbell).
  bool publish();
  std::uint64_t unpublished() const noexcept { return head_ - published_; }
  // The first word of the line at the head, and the stamp that means a
  // record is published there (ready() compares the two): for callers that
  // poll many rings from one compact array.
  std::uint64_t* head_stamp() const noexcept {
    return reinterpret_cast<std::uint64_t*>(view_.lines + head_index_ * cache_line);
  }
  std::uint64_t ready_stamp() const noexcept { return head_ + 1; }
  std::uint64_t head_word() const noexcept {
    return std::atomic_ref<std::uint64_t>(*head_stamp()).load(std::memory_order_acquire);
  }
  std::uint64_t capacity() const noexcept { return view_.count; }

 private:
  // peek() at a line that is not a message, single-copy or stream record
  // published at the head: padding (skipped), nothing, or corruption.
  bool peek_slow(Record* record);
  // The record whose first line (prefix checked) is `line`.
  static void fill_record(Record* record, const std::byte* line, const RecordPrefix& prefix, std::uint64_t lines) {
    const std::byte* p = line + sizeof(RecordPrefix);
    record->kind = static_cast<RecordKind>(prefix.kind);
    record->header = {p, prefix.header_size};
    p += (prefix.header_size + 7u) & ~7u;
    record->extras = p;
    record->extra_words = prefix.extra_words;
    p += 8 * prefix.extra_words;
    record->data = {p, prefix.bytes};
    record->lines = lines;
  }

  RingView view_;
  std::uint64_t head_ = 0;
  std::uint64_t head_index_ = 0;  // head_ % count, kept without a division
  std::uint64_t published_ = 0;
  std::uint64_t published_index_ = 0;  // published_ % count
};

inline bool RingReader::peek(Record* record) {
  // Every line consumed and none given back yet (after a padding record):
  // the line at the head still holds its old stamp, and nothing new.
  if (head_ - published_ >= view_.count) [[unlikely]]
    return false;
  const std::uint64_t index = head_index_;
  const std::byte* line = view_.lines + index * cache_line;
  const std::uint64_t stamp = head_word();
  RecordPrefix prefix;
  std::memcpy(&prefix, line, sizeof prefix);
  const auto kind = static_cast<RecordKind>(prefix.kind);
  if (stamp != head_ + 1 || kind < RecordKind::message || kind > RecordKind::stream_chunk) [[unlikely]]
    return peek_slow(record);
  const std::size_t size = record_bytes(prefix.header_size, prefix.extra_words, prefix.bytes);
  const std::uint64_t lines = lines_for(size);
  if (prefix.extra_words > max_extra_words || index + lines > view_.count) [[unlikely]]
    return peek_slow(record);
  fill_record(record, line, prefix, lines);
  return true;
}

}  // namespace gridmpi::p2p::shm
