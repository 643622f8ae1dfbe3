// The data representation between IMPI clients (impi/datarep.hpp).
#include "impi/datarep.hpp"

#include <bit>
#include <cstring>
#include <string>

#include "conf/registry.hpp"
#include "core/datatype.hpp"
#include "impi/wire.hpp"

namespace gridmpi::impi {

namespace {

const conf::Param<std::string> datarep_param{
    "impi.datarep", "auto", "",
    "representation of user data towards other gridmpi clusters: auto (native bytes when both sides hold data "
    "alike, else external32 with 64-bit long between LP64 clusters, else external32) or external32 (IMPI's "
    "representation only, as a third-party client would)",
    conf::Level::tuner};

constexpr std::byte magic[4] = {std::byte{'G'}, std::byte{'D'}, std::byte{'R'}, std::byte{'1'}};

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

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
  Datarep d;
  d.long_size = std::to_integer<std::uint8_t>(bytes[4]);
  d.wchar_size = std::to_integer<std::uint8_t>(bytes[5]);
  d.big_endian = bytes[6] != std::byte{0};
  d.description_size = get_u32(bytes.data() + 8);
  d.description_hash = get_u64(bytes.data() + 12);
  return d;
}

Datarep Datarep::of_this_process() {
  const std::string description = core::native_representation();
  Datarep d;
  d.long_size = sizeof(long);
  d.wchar_size = sizeof(wchar_t);
  d.big_endian = std::endian::native == std::endian::big;
  d.description_size = static_cast<std::uint32_t>(description.size());
  d.description_hash = fnv1a(description);
  return d;
}

std::optional<Datarep> announced_datarep() {
  const std::string value = datarep_param.get();
  if (value == "auto") return Datarep::of_this_process();
  if (value == "external32") return std::nullopt;
  throw conf::ConfigError("impi.datarep is \"" + value + "\": use auto or external32");
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
  }
  return "?";
}

}  // namespace gridmpi::impi
