// What this process announces as its data representation (impi/datarep.hpp):
// apart from datarep.cpp because it reads a parameter (impi.datarep), which
// the IMPI parsers and their fuzz targets do without.
#include <bit>
#include <string>
#include <string_view>

#include "conf/registry.hpp"
#include "impi/datarep.hpp"

namespace gridmpi::impi {

namespace {

const conf::Param<std::string> datarep_param{
    "impi.datarep", "auto", "",
    "representation of user data towards other gridmpi clusters: auto (native bytes when both sides hold data "
    "alike, else external32 with 64-bit long between LP64 clusters, else external32) or external32 (IMPI's "
    "representation only, as a third-party client would)",
    conf::Level::tuner};

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

Datarep Datarep::of_this_process(std::string_view description) {
  Datarep d;
  d.long_size = sizeof(long);
  d.wchar_size = sizeof(wchar_t);
  d.big_endian = std::endian::native == std::endian::big;
  d.description_size = static_cast<std::uint32_t>(description.size());
  d.description_hash = fnv1a(description);
  return d;
}

std::optional<Datarep> announced_datarep(std::string_view native_description) {
  const std::string value = datarep_param.get();
  if (value == "auto") return Datarep::of_this_process(native_description);
  if (value == "external32") return std::nullopt;
  throw conf::ConfigError("impi.datarep is \"" + value + "\": use auto or external32");
}

}  // namespace gridmpi::impi
