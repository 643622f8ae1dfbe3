// The receiving side of a byte-stream connection (p2p/tcp, impi/): a
// buffer the socket fills, frames parsed from its front, and a frame's
// payload read straight into the place the FrameSink names for it
// (p2p/transport.hpp, on_frame_begin).  What a connection decodes (tcp's
// frame prefix, IMPI's packet header) and what it does with control frames
// stay the transport's; this is the part they share.
//
// Use: read into read_target(), then received(n) (true: a payload is
// complete, end_payload()); parse frames from buffered() and consume() them;
// after a frame header, begin_payload() with the sink's placement.
// Inline: it is on the path of every message.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "base/error.hpp"
#include "p2p/transport.hpp"

namespace gridmpi::p2p {

class StreamReader {
 public:
  // `buffer_size`: bytes of the read buffer (frames' headers, small payloads);
  // `kept_payload`: a payload buffer of the reader's own up to twice this is
  // kept for the next payload, a larger one is given back.
  StreamReader(std::size_t buffer_size, std::size_t kept_payload)
      : buffer_(buffer_size), kept_payload_(kept_payload) {}

  // Where the next read from the stream goes: the rest of the payload in
  // progress, or the buffer's free end (what is left unparsed is moved to
  // the front first).
  std::span<std::byte> read_target() {
    if (in_payload_) return payload_target_.subspan(payload_filled_);
    if (head_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + head_, tail_ - head_);
      tail_ -= head_;
      head_ = 0;
    }
    return std::span<std::byte>(buffer_).subspan(tail_);
  }
  // `n` bytes were read into read_target().  True when they completed the
  // payload in progress: call end_payload().
  bool received(std::size_t n) noexcept {
    if (!in_payload_) {
      tail_ += n;
      return false;
    }
    payload_filled_ += n;
    return payload_filled_ == payload_target_.size();
  }

  bool in_payload() const noexcept { return in_payload_; }
  // Payload bytes still to read into the payload in progress.
  std::size_t payload_left() const noexcept { return payload_target_.size() - payload_filled_; }
  // The bytes received and not parsed yet.
  std::span<const std::byte> buffered() const noexcept { return {buffer_.data() + head_, tail_ - head_}; }
  void consume(std::size_t n) noexcept { head_ += n; }

  // A frame of `peer` whose header was consumed, with a payload of `size`
  // bytes next in the stream, placed as the sink said.  Delivers it at once
  // (on_frame_end) when it has no payload, or when the sink named no
  // destination and the payload is all buffered (the sink reads it there);
  // else copies what is buffered into the destination (or the reader's own
  // memory) and reads the rest straight there: in_payload() until
  // received() says it is complete.  `who` names the transport in the
  // internal error of a destination of the wrong size.
  void begin_payload(FrameSink& sink, int peer, const Placement& placement, std::size_t size, const char* who) {
    if (size == 0) {
      sink.on_frame_end(peer, placement.token, {});
      return;
    }
    if (!placement.destination.empty() && placement.destination.size() != size) [[unlikely]]
      wrong_destination(who);
    const std::size_t avail = tail_ - head_;
    if (placement.destination.empty() && avail >= size) {
      sink.on_frame_end(peer, placement.token, std::span<const std::byte>(buffer_.data() + head_, size));
      head_ += size;
      return;
    }
    std::span<std::byte> target = placement.destination;
    if (target.empty()) {
      payload_owned_.resize(size);
      target = payload_owned_;
    }
    const std::size_t take = std::min(avail, size);
    if (take) std::memcpy(target.data(), buffer_.data() + head_, take);
    head_ += take;
    payload_target_ = target;
    payload_filled_ = take;
    payload_peer_ = peer;
    payload_token_ = placement.token;
    in_payload_ = true;
    if (take == size) end_payload(sink);
  }

  // The payload in progress is complete: hands it to the sink.
  void end_payload(FrameSink& sink) {
    in_payload_ = false;
    std::span<const std::byte> payload = payload_target_;
    payload_target_ = {};
    sink.on_frame_end(payload_peer_, payload_token_, payload);
    // Kept for the next payload of its size; an outsized one is given back.
    if (payload_owned_.capacity() > 2 * kept_payload_) {
      payload_owned_.clear();
      payload_owned_.shrink_to_fit();
    }
  }

 private:
  [[noreturn]] static void wrong_destination(const char* who) {
    throw MpiError(MPI_ERR_INTERN, std::string(who) + ": the request layer named a destination of the wrong size");
  }

  std::vector<std::byte> buffer_;
  std::size_t head_ = 0;  // first unparsed byte
  std::size_t tail_ = 0;  // end of received bytes
  std::size_t kept_payload_;
  bool in_payload_ = false;
  std::span<std::byte> payload_target_;
  std::size_t payload_filled_ = 0;
  int payload_peer_ = -1;
  std::uint64_t payload_token_ = 0;
  std::vector<std::byte> payload_owned_;
};

}  // namespace gridmpi::p2p
