#include "boot/control_protocol.hpp"

#include <cstring>

namespace gridmpi::boot {

namespace {

class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(std::byte{v}); }
  void u32(std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) u8(static_cast<std::uint8_t>(v >> shift));
  }
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void u64(std::uint64_t v) {
    u32(static_cast<std::uint32_t>(v >> 32));
    u32(static_cast<std::uint32_t>(v));
  }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out_.insert(out_.end(), p, p + s.size());
  }

 private:
  std::vector<std::byte>& out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  std::uint8_t u8() {
    need(1);
    return std::to_integer<std::uint8_t>(in_[pos_++]);
  }
  std::uint32_t u32() {
    need(4);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | std::to_integer<std::uint32_t>(in_[pos_++]);
    return v;
  }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  std::uint64_t u64() {
    std::uint64_t high = u32();
    return (high << 32) | u32();
  }
  std::string str() {
    std::uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  bool done() const noexcept { return pos_ == in_.size(); }

 private:
  void need(std::size_t n) const {
    if (in_.size() - pos_ < n) throw ProtocolError("control frame truncated inside a field");
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

void write_fields(const Message& m, Writer& w) {
  switch (m.type) {
    case MessageType::hello:
    case MessageType::proxy_hello:
      w.u64(m.cookie);
      w.i32(m.rank);
      w.i32(m.pid);
      w.str(m.host);
      break;
    case MessageType::put_fence:
      w.str(m.key);
      w.str(m.value);
      break;
    case MessageType::abort:
      w.i32(m.code);
      w.str(m.text);
      w.str(m.key);
      break;
    case MessageType::welcome:
      w.i32(m.size);
      break;
    case MessageType::refuse:
    case MessageType::proxy_failed:
      w.str(m.text);
      break;
    case MessageType::values:
      w.str(m.key);
      w.u32(static_cast<std::uint32_t>(m.values.size()));
      for (const auto& v : m.values) w.str(v);
      break;
    case MessageType::proxy_started:
      w.i32(m.pid);
      break;
    case MessageType::proxy_exit:
    case MessageType::proxy_signal:
      w.i32(m.code);
      break;
    case MessageType::finalize:
    case MessageType::abort_ack:
    case MessageType::finalize_ack:
      break;
  }
}

Message read_message(std::span<const std::byte> payload) {
  Reader r(payload);
  Message m;
  std::uint8_t type = r.u8();
  m.type = static_cast<MessageType>(type);
  switch (m.type) {
    case MessageType::hello:
    case MessageType::proxy_hello:
      m.cookie = r.u64();
      m.rank = r.i32();
      m.pid = r.i32();
      m.host = r.str();
      break;
    case MessageType::put_fence:
      m.key = r.str();
      m.value = r.str();
      break;
    case MessageType::abort:
      m.code = r.i32();
      m.text = r.str();
      m.key = r.str();
      break;
    case MessageType::welcome:
      m.size = r.i32();
      break;
    case MessageType::refuse:
    case MessageType::proxy_failed:
      m.text = r.str();
      break;
    case MessageType::values: {
      m.key = r.str();
      std::uint32_t n = r.u32();
      // Every value needs at least its 4-byte length: bounds n before reserving.
      if (n > payload.size() / 4) throw ProtocolError("control frame: value count exceeds the frame");
      m.values.reserve(n);
      for (std::uint32_t i = 0; i < n; ++i) m.values.push_back(r.str());
      break;
    }
    case MessageType::proxy_started:
      m.pid = r.i32();
      break;
    case MessageType::proxy_exit:
    case MessageType::proxy_signal:
      m.code = r.i32();
      break;
    case MessageType::finalize:
    case MessageType::abort_ack:
    case MessageType::finalize_ack:
      break;
    default:
      throw ProtocolError("control frame of unknown type " + std::to_string(type));
  }
  if (!r.done()) throw ProtocolError(std::string("control frame '") + message_type_name(m.type) +
                                     "' has trailing bytes");
  return m;
}

}  // namespace

const char* message_type_name(MessageType type) noexcept {
  switch (type) {
    case MessageType::hello: return "hello";
    case MessageType::put_fence: return "put_fence";
    case MessageType::abort: return "abort";
    case MessageType::finalize: return "finalize";
    case MessageType::welcome: return "welcome";
    case MessageType::refuse: return "refuse";
    case MessageType::values: return "values";
    case MessageType::abort_ack: return "abort_ack";
    case MessageType::finalize_ack: return "finalize_ack";
    case MessageType::proxy_hello: return "proxy_hello";
    case MessageType::proxy_started: return "proxy_started";
    case MessageType::proxy_failed: return "proxy_failed";
    case MessageType::proxy_exit: return "proxy_exit";
    case MessageType::proxy_signal: return "proxy_signal";
  }
  return "unknown";
}

void encode(const Message& message, std::vector<std::byte>& out) {
  std::size_t length_at = out.size();
  out.resize(out.size() + 4);
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(message.type));
  write_fields(message, w);
  auto length = static_cast<std::uint32_t>(out.size() - length_at - 4);
  for (int i = 0; i < 4; ++i)
    out[length_at + i] = std::byte{static_cast<std::uint8_t>(length >> (24 - 8 * i))};
}

std::vector<std::byte> encode(const Message& message) {
  std::vector<std::byte> out;
  encode(message, out);
  return out;
}

void FrameDecoder::feed(std::span<const std::byte> bytes) {
  // Compact lazily so that a stream of small frames costs no quadratic moves.
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  } else if (start_ > 4096 && start_ > buffer_.size() / 2) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::optional<Message> FrameDecoder::next() {
  std::size_t available = buffer_.size() - start_;
  if (available < 4) return std::nullopt;
  std::uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length = (length << 8) | std::to_integer<std::uint32_t>(buffer_[start_ + i]);
  if (length == 0) throw ProtocolError("control frame of length 0");
  if (length > max_frame_)
    throw ProtocolError("control frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                        std::to_string(max_frame_));
  if (available - 4 < length) return std::nullopt;
  std::span<const std::byte> payload(buffer_.data() + start_ + 4, length);
  start_ += 4 + length;
  return read_message(payload);
}

}  // namespace gridmpi::boot
