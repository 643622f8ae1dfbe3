// The portable data representations user data takes between processes that
// do not share a native one (core/datatype_external32.cpp):
//
//   external32  MPI-3.1 §13.5.2, IMPI's representation: big-endian, IEEE,
//               long and unsigned long in 4 bytes, wchar_t in 2, long double
//               as binary128.  A value that does not fit its external size
//               is an MPI_ERR_CONVERSION error, never cut.
//   external64  gridmpi's own variant, negotiated between gridmpi clients
//               that are both LP64 with a 4-byte wchar_t (impi/datarep.hpp):
//               external32 with long and unsigned long in 8 bytes and wchar_t
//               in 4, so that no value changes (the idea of the MPI Forum's
//               "external64" proposal).
#pragma once
#include <cstdint>

namespace gridmpi::core {

enum class ExternalFormat : std::uint8_t { external32, external64 };

inline const char* external_format_name(ExternalFormat f) noexcept {
  return f == ExternalFormat::external64 ? "external64" : "external32";
}

}  // namespace gridmpi::core
