// The IMPI wire formats: client <-> impi-server commands (section 3 of
// docs/impi-protocol.md) and the 128-byte host-to-host packet header
// (section 6).  Plain encode/decode, every integer big-endian, no sockets.
// Round-trip and byte-image tests: tests/unit/test_impi_wire.cpp.
//
// Decoders never read past the bytes they are given; malformed input throws
// WireError with a message naming the field (callers add who sent it).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gridmpi::impi {

class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- big-endian helpers ----------------------------------------------------
void put_u32(std::byte* p, std::uint32_t v) noexcept;
void put_u64(std::byte* p, std::uint64_t v) noexcept;
std::uint32_t get_u32(const std::byte* p) noexcept;
std::uint64_t get_u64(const std::byte* p) noexcept;
void append_u32(std::vector<std::byte>& out, std::uint32_t v);
void append_u64(std::vector<std::byte>& out, std::uint64_t v);

// ---- client <-> server commands (section 3.2) ------------------------------
enum class Command : std::uint32_t {
  auth = 0x41555448,  // "AUTH"
  impi = 0x494D5049,  // "IMPI"
  coll = 0x434F4C4C,  // "COLL"
  done = 0x444F4E45,  // "DONE"
  fini = 0x46494E49,  // "FINI"
};
// Printable name ("AUTH"), or "0x........" for an unknown code.
std::string command_name(std::uint32_t code);
bool is_known_command(std::uint32_t code) noexcept;

struct CommandHeader {
  std::uint32_t command = 0;  // a Command value (unknown codes are kept for error messages)
  std::uint32_t length = 0;   // payload bytes after the header
  static constexpr std::size_t size = 8;
  void encode(std::byte* out) const noexcept;
  static CommandHeader decode(std::span<const std::byte> in);  // needs >= 8 bytes
};

// Authentication methods (section 3.3): method numbers and mask bits.
constexpr std::int32_t auth_none = 0;
constexpr std::int32_t auth_key = 1;
constexpr std::uint32_t auth_bit(std::int32_t method) noexcept { return 1u << method; }

// Whole messages, header included.
std::vector<std::byte> encode_auth(std::uint32_t mask);                 // C->S {AUTH,4} mask
std::vector<std::byte> encode_auth_choice(std::int32_t method);         // S->C 8 raw bytes: method, len 0
std::vector<std::byte> encode_auth_key(std::uint64_t key);              // C->S 8 raw bytes
std::vector<std::byte> encode_impi(std::int32_t value);                 // {IMPI,4} rank (C->S) / size (S->C)
std::vector<std::byte> encode_coll_contribution(std::int32_t label, std::span<const std::byte> data);
std::vector<std::byte> encode_coll_result(std::int32_t label, std::uint32_t mask, std::span<const std::byte> data);
std::vector<std::byte> encode_done();
std::vector<std::byte> encode_fini();

// ---- labels (section 3.6) ----------------------------------------------------
enum class Scope : std::uint8_t { client, host, proc };
struct LabelInfo {
  std::int32_t code;
  const char* name;       // "IMPI_C_VERSION"
  Scope scope;
  std::size_t element;    // bytes per element (C_VERSION: 8 per version pair)
};
constexpr std::int32_t label_c_version = 0x1000;
constexpr std::int32_t label_c_nhosts = 0x1100;
constexpr std::int32_t label_c_nprocs = 0x1200;
constexpr std::int32_t label_c_datalen = 0x1300;
constexpr std::int32_t label_c_tagub = 0x1400;
constexpr std::int32_t label_c_coll_xsize = 0x1500;
constexpr std::int32_t label_c_coll_maxlinear = 0x1600;
constexpr std::int32_t label_h_ipv6 = 0x2000;
constexpr std::int32_t label_h_port = 0x2100;
constexpr std::int32_t label_h_nprocs = 0x2200;
constexpr std::int32_t label_h_ackmark = 0x2300;
constexpr std::int32_t label_h_hiwater = 0x2400;
constexpr std::int32_t label_p_ipv6 = 0x3000;
constexpr std::int32_t label_p_pid = 0x3100;
// gridmpi's own label (impi/datarep.hpp): each gridmpi client's native data
// representation, so that two clients can agree on one without conversion
// or with 64-bit long.  It comes after the standard labels; servers of other
// implementations drop it (the IU server does), and a client that gets no
// answer for it uses external32.
constexpr std::int32_t label_gridmpi_datarep = 0x47440100;
// The 14 standard labels in canonical order.
const std::array<LabelInfo, 14>& standard_labels() noexcept;
// The labels gridmpi's impi-server collates, in canonical order: the 14
// standard ones, then label_gridmpi_datarep.
const std::array<LabelInfo, 15>& known_labels() noexcept;
// Index in known_labels() (= canonical order), or -1 for a label this
// version does not know.
int label_index(std::int32_t code) noexcept;
// "IMPI_H_PORT", or "label 0x7777".
std::string label_name(std::int32_t code);

// ---- host and proc identifiers (sections 2, 6.1) ------------------------------
using HostId = std::array<std::byte, 16>;
// IPv4 address (host byte order, 127.0.0.1 = 0x7f000001) as an
// IPv4-compatible id (12 zero bytes, then the address).
HostId host_id_from_ipv4(std::uint32_t address) noexcept;
// The IPv4 address of an IPv4-compatible (::a.b.c.d) or IPv4-mapped
// (::ffff:a.b.c.d) id; nullopt for anything else.
std::optional<std::uint32_t> ipv4_from_host_id(const HostId& id) noexcept;
// "127.0.0.1" for IPv4 ids, else the 32 hex digits.
std::string to_string(const HostId& id);

struct Proc {
  HostId host{};
  std::int64_t pid = 0;
  static constexpr std::size_t size = 24;
  bool operator==(const Proc&) const = default;
};

// ---- packets (section 6) -------------------------------------------------------
enum class PacketType : std::uint32_t {
  data = 0, datasync = 1, protoack = 2, syncack = 3, cancel = 4, cancelyes = 5, cancelno = 6, fini = 7,
};
const char* packet_type_name(PacketType type) noexcept;
// Packets that count for flow control (section 8): all but PROTOACK and FINI.
constexpr bool counts_for_flow_control(PacketType t) noexcept {
  return t != PacketType::protoack && t != PacketType::fini;
}
// Only DATA and DATASYNC carry pk_len payload bytes after the header (LAM
// writes pk_len = 128 in control packets and no payload: ignore it there).
constexpr bool carries_payload(PacketType t) noexcept {
  return t == PacketType::data || t == PacketType::datasync;
}

struct PacketHeader {
  PacketType type = PacketType::data;
  std::uint32_t len = 0;
  Proc src;
  Proc dest;
  std::uint64_t srqid = 0;
  std::uint64_t drqid = 0;
  std::uint64_t msglen = 0;
  std::int32_t lsrank = 0;
  std::int32_t tag = 0;
  std::uint64_t cid = 0;
  std::uint64_t seqnum = 0;
  std::int64_t count = 0;
  std::uint64_t dtype = 0;
  std::uint64_t reserved = 0;
  static constexpr std::size_t size = 128;
  void encode(std::byte* out) const noexcept;  // exactly 128 bytes
  // Throws WireError for fewer than 128 bytes or an unknown pk_type.
  static PacketHeader decode(std::span<const std::byte> in);
  bool operator==(const PacketHeader&) const = default;
};

}  // namespace gridmpi::impi
