// IMPI wire formats (impi/wire.hpp).
#include "impi/wire.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace gridmpi::impi {

void put_u32(std::byte* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(v >> (24 - 8 * i));
}
void put_u64(std::byte* p, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::byte>(v >> (56 - 8 * i));
}
std::uint32_t get_u32(const std::byte* p) noexcept {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | std::to_integer<std::uint32_t>(p[i]);
  return v;
}
std::uint64_t get_u64(const std::byte* p) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
  return v;
}
void append_u32(std::vector<std::byte>& out, std::uint32_t v) {
  const std::size_t n = out.size();
  out.resize(n + 4);
  put_u32(out.data() + n, v);
}
void append_u64(std::vector<std::byte>& out, std::uint64_t v) {
  const std::size_t n = out.size();
  out.resize(n + 8);
  put_u64(out.data() + n, v);
}

// ---- commands ----------------------------------------------------------------

bool is_known_command(std::uint32_t code) noexcept {
  switch (static_cast<Command>(code)) {
    case Command::auth: case Command::impi: case Command::coll: case Command::done: case Command::fini:
      return true;
  }
  return false;
}

std::string command_name(std::uint32_t code) {
  if (!is_known_command(code)) return fmt::format("0x{:08x}", code);
  std::string s(4, ' ');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(code >> (24 - 8 * i));
  return s;
}

void CommandHeader::encode(std::byte* out) const noexcept {
  put_u32(out, command);
  put_u32(out + 4, length);
}

CommandHeader CommandHeader::decode(std::span<const std::byte> in) {
  if (in.size() < size) throw WireError(fmt::format("command header of {} bytes (needs 8)", in.size()));
  return {get_u32(in.data()), get_u32(in.data() + 4)};
}

namespace {
std::vector<std::byte> command(Command c, std::uint32_t length) {
  std::vector<std::byte> out(CommandHeader::size);
  CommandHeader{static_cast<std::uint32_t>(c), length}.encode(out.data());
  return out;
}
}  // namespace

std::vector<std::byte> encode_auth(std::uint32_t mask) {
  auto out = command(Command::auth, 4);
  append_u32(out, mask);
  return out;
}
std::vector<std::byte> encode_auth_choice(std::int32_t method) {
  std::vector<std::byte> out;
  append_u32(out, static_cast<std::uint32_t>(method));
  append_u32(out, 0);
  return out;
}
std::vector<std::byte> encode_auth_key(std::uint64_t key) {
  std::vector<std::byte> out;
  append_u64(out, key);
  return out;
}
std::vector<std::byte> encode_impi(std::int32_t value) {
  auto out = command(Command::impi, 4);
  append_u32(out, static_cast<std::uint32_t>(value));
  return out;
}
std::vector<std::byte> encode_coll_contribution(std::int32_t label, std::span<const std::byte> data) {
  auto out = command(Command::coll, static_cast<std::uint32_t>(4 + data.size()));
  append_u32(out, static_cast<std::uint32_t>(label));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}
std::vector<std::byte> encode_coll_result(std::int32_t label, std::uint32_t mask, std::span<const std::byte> data) {
  auto out = command(Command::coll, static_cast<std::uint32_t>(8 + data.size()));
  append_u32(out, static_cast<std::uint32_t>(label));
  append_u32(out, mask);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}
std::vector<std::byte> encode_done() { return command(Command::done, 0); }
std::vector<std::byte> encode_fini() { return command(Command::fini, 0); }

// ---- labels ------------------------------------------------------------------

const std::array<LabelInfo, 14>& standard_labels() noexcept {
  static const std::array<LabelInfo, 14> labels{{
      {label_c_version, "IMPI_C_VERSION", Scope::client, 8},
      {label_c_nhosts, "IMPI_C_NHOSTS", Scope::client, 4},
      {label_c_nprocs, "IMPI_C_NPROCS", Scope::client, 4},
      {label_c_datalen, "IMPI_C_DATALEN", Scope::client, 4},
      {label_c_tagub, "IMPI_C_TAGUB", Scope::client, 4},
      {label_c_coll_xsize, "IMPI_C_COLL_XSIZE", Scope::client, 4},
      {label_c_coll_maxlinear, "IMPI_C_COLL_MAXLINEAR", Scope::client, 4},
      {label_h_ipv6, "IMPI_H_IPV6", Scope::host, 16},
      {label_h_port, "IMPI_H_PORT", Scope::host, 4},
      {label_h_nprocs, "IMPI_H_NPROCS", Scope::host, 4},
      {label_h_ackmark, "IMPI_H_ACKMARK", Scope::host, 4},
      {label_h_hiwater, "IMPI_H_HIWATER", Scope::host, 4},
      {label_p_ipv6, "IMPI_P_IPV6", Scope::proc, 16},
      {label_p_pid, "IMPI_P_PID", Scope::proc, 8},
  }};
  return labels;
}

const std::array<LabelInfo, 15>& known_labels() noexcept {
  static const std::array<LabelInfo, 15> labels = [] {
    std::array<LabelInfo, 15> all{};
    std::copy(standard_labels().begin(), standard_labels().end(), all.begin());
    all[14] = {label_gridmpi_datarep, "GRIDMPI_DATAREP", Scope::client, 24};
    return all;
  }();
  return labels;
}

int label_index(std::int32_t code) noexcept {
  const auto& labels = known_labels();
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i].code == code) return static_cast<int>(i);
  return -1;
}

std::string label_name(std::int32_t code) {
  int i = label_index(code);
  if (i >= 0) return known_labels()[static_cast<std::size_t>(i)].name;
  return fmt::format("label 0x{:x}", static_cast<std::uint32_t>(code));
}

// ---- identifiers -------------------------------------------------------------

HostId host_id_from_ipv4(std::uint32_t address) noexcept {
  HostId id{};
  put_u32(id.data() + 12, address);
  return id;
}

std::optional<std::uint32_t> ipv4_from_host_id(const HostId& id) noexcept {
  for (int i = 0; i < 10; ++i)
    if (id[i] != std::byte{0}) return std::nullopt;
  bool compatible = id[10] == std::byte{0} && id[11] == std::byte{0};
  bool mapped = id[10] == std::byte{0xff} && id[11] == std::byte{0xff};
  if (!compatible && !mapped) return std::nullopt;
  return get_u32(id.data() + 12);
}

std::string to_string(const HostId& id) {
  if (auto v4 = ipv4_from_host_id(id))
    return fmt::format("{}.{}.{}.{}", *v4 >> 24, (*v4 >> 16) & 0xff, (*v4 >> 8) & 0xff, *v4 & 0xff);
  std::string s;
  for (std::byte b : id) s += fmt::format("{:02x}", std::to_integer<unsigned>(b));
  return s;
}

// ---- packets -------------------------------------------------------------------

const char* packet_type_name(PacketType type) noexcept {
  switch (type) {
    case PacketType::data: return "DATA";
    case PacketType::datasync: return "DATASYNC";
    case PacketType::protoack: return "PROTOACK";
    case PacketType::syncack: return "SYNCACK";
    case PacketType::cancel: return "CANCEL";
    case PacketType::cancelyes: return "CANCELYES";
    case PacketType::cancelno: return "CANCELNO";
    case PacketType::fini: return "FINI";
  }
  return "unknown";
}

namespace {
void put_proc(std::byte* p, const Proc& proc) noexcept {
  std::memcpy(p, proc.host.data(), 16);
  put_u64(p + 16, static_cast<std::uint64_t>(proc.pid));
}
Proc get_proc(const std::byte* p) noexcept {
  Proc proc;
  std::memcpy(proc.host.data(), p, 16);
  proc.pid = static_cast<std::int64_t>(get_u64(p + 16));
  return proc;
}
}  // namespace

void PacketHeader::encode(std::byte* out) const noexcept {
  put_u32(out + 0, static_cast<std::uint32_t>(type));
  put_u32(out + 4, len);
  put_proc(out + 8, src);
  put_proc(out + 32, dest);
  put_u64(out + 56, srqid);
  put_u64(out + 64, drqid);
  put_u64(out + 72, msglen);
  put_u32(out + 80, static_cast<std::uint32_t>(lsrank));
  put_u32(out + 84, static_cast<std::uint32_t>(tag));
  put_u64(out + 88, cid);
  put_u64(out + 96, seqnum);
  put_u64(out + 104, static_cast<std::uint64_t>(count));
  put_u64(out + 112, dtype);
  put_u64(out + 120, reserved);
}

PacketHeader PacketHeader::decode(std::span<const std::byte> in) {
  if (in.size() < size) throw WireError(fmt::format("packet header of {} bytes (needs 128)", in.size()));
  const std::byte* p = in.data();
  std::uint32_t type = get_u32(p);
  if (type > static_cast<std::uint32_t>(PacketType::fini))
    throw WireError(fmt::format("unknown packet type {} (pk_type must be 0..7)", type));
  PacketHeader h;
  h.type = static_cast<PacketType>(type);
  h.len = get_u32(p + 4);
  h.src = get_proc(p + 8);
  h.dest = get_proc(p + 32);
  h.srqid = get_u64(p + 56);
  h.drqid = get_u64(p + 64);
  h.msglen = get_u64(p + 72);
  h.lsrank = static_cast<std::int32_t>(get_u32(p + 80));
  h.tag = static_cast<std::int32_t>(get_u32(p + 84));
  h.cid = get_u64(p + 88);
  h.seqnum = get_u64(p + 96);
  h.count = static_cast<std::int64_t>(get_u64(p + 104));
  h.dtype = get_u64(p + 112);
  h.reserved = get_u64(p + 120);
  return h;
}

}  // namespace gridmpi::impi
