// The wire format of mpirun's control service, shared by mpirun, the remote
// start agent (gridmpi-proxy) and every MPI process (ControlClient).
//
// A frame is a 4-byte big-endian payload length, then the payload: one type
// byte and the fields of that type, integers big-endian, strings as a 4-byte
// length and the bytes.  Plain and explicit, so that a frame can be checked
// by eye in a packet dump and a decoder can never read past a frame.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gridmpi::boot {

enum class MessageType : std::uint8_t {
  // rank -> mpirun
  hello = 1,          // cookie, rank, pid, host: first frame of a rank's connection
  put_fence = 2,      // key, value: publish and wait for everyone's value of key
  abort = 3,          // code, text: MPI_Abort
  finalize = 4,       // this rank reached MPI_Finalize
  // mpirun -> rank
  welcome = 20,       // size: the rank is accepted
  refuse = 21,        // text: the connection is refused (then closed)
  values = 22,        // key, values: everyone's value of key, index = rank
  abort_ack = 23,
  finalize_ack = 24,
  // gridmpi-proxy (remote start agent) -> mpirun
  proxy_hello = 40,   // cookie, rank, pid (of the agent), host
  proxy_started = 41, // pid: the rank's process is running
  proxy_failed = 42,  // text: the rank's process could not be started
  proxy_exit = 43,    // code = exit status, or -signal when killed by a signal
  // mpirun -> gridmpi-proxy
  proxy_signal = 60,  // code = signal to send to the rank's process group
};

const char* message_type_name(MessageType type) noexcept;

// One message; only the fields of its type are meaningful (see MessageType).
// Message::key of an abort sent by an error handler (MPI_ERRORS_ARE_FATAL):
// code is the error class.  Empty: the program called MPI_Abort.
inline constexpr const char* abort_key_error = "error";

struct Message {
  MessageType type = MessageType::hello;
  std::uint64_t cookie = 0;
  std::int32_t rank = -1;
  std::int32_t pid = 0;
  std::int32_t code = 0;
  std::int32_t size = 0;
  std::string host;
  std::string key;
  std::string value;
  std::string text;
  std::vector<std::string> values;

  bool operator==(const Message&) const = default;
};

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Appends the frame of `message` to `out`.
void encode(const Message& message, std::vector<std::byte>& out);
std::vector<std::byte> encode(const Message& message);

// Reassembles frames from a byte stream.  feed() any amount of bytes, then
// next() until it returns nothing.  A malformed frame, or one longer than
// max_frame, throws ProtocolError.
class FrameDecoder {
 public:
  explicit FrameDecoder(std::size_t max_frame = 1u << 20) : max_frame_(max_frame) {}
  void feed(std::span<const std::byte> bytes);
  std::optional<Message> next();
  std::size_t buffered() const noexcept { return buffer_.size() - start_; }

 private:
  std::size_t max_frame_;
  std::vector<std::byte> buffer_;
  std::size_t start_ = 0;
};

}  // namespace gridmpi::boot
