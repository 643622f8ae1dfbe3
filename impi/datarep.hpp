// The representation of user data between IMPI clients: which one each pair
// of clients uses, decided in one place (representation_between) from what
// every gridmpi client announces in its label_gridmpi_datarep (impi/wire.hpp).
//
//   both gridmpi, identical native representation    native bytes, no conversion
//   both gridmpi, both LP64 with a 4-byte wchar_t    external64 (core/external_format.hpp)
//   anything else (a third-party client, an ILP32    external32, IMPI's representation;
//   one, a server that dropped the label)            a value it cannot hold is an error
//
// "Identical" compares byte order, the long double format and the size,
// extent and alignment of every predefined type (core::native_representation,
// carried as its length and a 64-bit FNV-1a hash).  Every process derives the
// choice from the same collated labels, so both ends of a pair agree.
//
// The label (client scope, 24 bytes per contributing client, big-endian):
//   "GDR1" | long_size:u8 | wchar_size:u8 | big_endian:u8 | 0:u8 |
//   description_size:u32 | description_hash:u64 | 0:u32
// A rank announces its own record in its LocalHost; mpirun contributes the
// label only when every local rank announced the same one (a rank with
// impi.datarep = external32 announces none, and so does its cluster).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "p2p/transport.hpp"

namespace gridmpi::impi {

struct Datarep {
  std::uint8_t long_size = 0;
  std::uint8_t wchar_size = 0;
  bool big_endian = false;
  std::uint32_t description_size = 0;
  std::uint64_t description_hash = 0;

  static constexpr std::size_t size = 24;
  std::array<std::byte, size> encode() const;
  // nullopt for anything that is not a version-1 record (another version's
  // record then means "no agreement": external32).
  static std::optional<Datarep> decode(std::span<const std::byte> bytes);
  // This process's record; `native_description` is the datatype engine's
  // account of its predefined types (core::native_representation()), which
  // the start-up hands down (boot::StartOptions).
  static Datarep of_this_process(std::string_view native_description);
  bool operator==(const Datarep&) const = default;
};

// What this process announces: its record, or none when impi.datarep is
// "external32" (behave like a third-party client).  Throws conf::ConfigError
// for another value of impi.datarep.
std::optional<Datarep> announced_datarep(std::string_view native_description);

// The choice for one pair of clients (nullopt: the client announced nothing).
p2p::DataRepresentation representation_between(const std::optional<Datarep>& mine,
                                               const std::optional<Datarep>& theirs);

const char* representation_name(p2p::DataRepresentation r) noexcept;

}  // namespace gridmpi::impi
