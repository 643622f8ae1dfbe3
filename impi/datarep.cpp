// The data representation between IMPI clients (impi/datarep.hpp): the
// record and the choice; what this process announces is datarep_local.cpp.
#include "impi/datarep.hpp"

#include <cstring>

#include "impi/wire.hpp"

namespace gridmpi::impi {

namespace {

constexpr std::byte magic[4] = {std::byte{'G'}, std::byte{'D'}, std::byte{'R'}, std::byte{'1'}};


}  // namespace

std::array<std::byte, Datarep::size> Datarep::encode() const {
  std::array<std::byte, size> out{};
  std::memcpy(out.data(), magic, 4);
  out[4] = static_cast<std::byte>(long_size);
  out[5] = static_cast<std::byte>(wchar_size);
  out[6] = static_cast<std::byte>(big_endian ? 1 : 0);
  put_u32(out.data() + 8, description_size);
  put_u64(out.data() + 12, description_hash);
  return out;
}

std::optional<Datarep> Datarep::decode(std::span<const std::byte> bytes) {
  if (bytes.size() != size || std::memcmp(bytes.data(), magic, 4) != 0) return std::nullopt;
  // Only the one encoding of a version-1 record: a flag of 0 or 1, zeros
  // where the layout has them (anything else is another version's).
  if (bytes[6] > std::byte{1} || bytes[7] != std::byte{0} || get_u32(bytes.data() + 20) != 0) return std::nullopt;
  Datarep d;
  d.long_size = std::to_integer<std::uint8_t>(bytes[4]);
  d.wchar_size = std::to_integer<std::uint8_t>(bytes[5]);
  d.big_endian = bytes[6] != std::byte{0};
  d.description_size = get_u32(bytes.data() + 8);
  d.description_hash = get_u64(bytes.data() + 12);
  return d;
}

p2p::DataRepresentation representation_between(const std::optional<Datarep>& mine,
                                               const std::optional<Datarep>& theirs) {
  if (!mine || !theirs) return p2p::DataRepresentation::external32;
  if (*mine == *theirs) return p2p::DataRepresentation::native;
  auto lp64 = [](const Datarep& d) { return d.long_size == 8 && d.wchar_size == 4; };
  if (lp64(*mine) && lp64(*theirs)) return p2p::DataRepresentation::external64;
  return p2p::DataRepresentation::external32;
}

const char* representation_name(p2p::DataRepresentation r) noexcept {
  switch (r) {
    case p2p::DataRepresentation::native: return "native";
    case p2p::DataRepresentation::external32: return "external32";
    case p2p::DataRepresentation::external64: return "external64";
    case p2p::DataRepresentation::native_unmarked: return "native (LAM)";
  }
  return "?";
}

}  // namespace gridmpi::impi
