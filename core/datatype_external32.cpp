// The "external32" data representation (MPI-3.1 §13.5.2): big-endian two's
// complement integers and IEEE floats, no padding, the standard's sizes
// (long and unsigned long are 4 bytes, wchar_t 2, long double a 16-byte
// IEEE binary128), and its LP64 variant "external64" (long 8 bytes, wchar_t
// 4; core/external_format.hpp).  Used by MPI_Pack_external and by the IMPI
// transport, which carries user data between clusters in this form; the
// windowed variants let it convert one packet at a time.
//
// A value that does not fit its external size (a long beyond 32 bits in
// external32) is an MPI_ERR_CONVERSION error when it is packed: the
// representation has no room for it, and a silently changed value is worse
// than a failed call.  Unpacking only narrows where no rule of
// impi/datarep.cpp leads (external64 into a 4-byte long).
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

#include "core/datatype.hpp"
#include "core/datatype_layout.hpp"

namespace gridmpi::core {

namespace {

enum class Conversion {
  copy,             // one-byte types
  integer,          // same size: byte order only (integers, IEEE floats)
  resize_signed,    // sizes may differ: sign-extended when widening, range-checked when narrowing
  resize_unsigned,  // sizes may differ: zero-extended when widening, range-checked when narrowing
  quad,             // __float128: binary128 in host byte order
  long_double,      // the platform's long double
};

struct Rule {
  Conversion conversion;
  std::size_t native_part;    // bytes of one part in memory
  std::size_t external_part;  // bytes of one part in external32
  int parts;                  // 2 for complex types
};

Rule rule_for(MPI_Datatype basic, ExternalFormat format) {
  const bool wide = format == ExternalFormat::external64;
  switch (basic) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_PACKED:
    case MPI_CHARACTER:
    case MPI_C_BOOL:
    case MPI_CXX_BOOL:
    case MPI_INT8_T:
    case MPI_UINT8_T:
    case MPI_INTEGER1:
      return {Conversion::copy, 1, 1, 1};
    case MPI_WCHAR:
      return {Conversion::resize_unsigned, sizeof(wchar_t), wide ? 4u : 2u, 1};
    case MPI_LONG:
      return {Conversion::resize_signed, sizeof(long), wide ? 8u : 4u, 1};
    case MPI_UNSIGNED_LONG:
      return {Conversion::resize_unsigned, sizeof(unsigned long), wide ? 8u : 4u, 1};
    case MPI_SHORT:
    case MPI_UNSIGNED_SHORT:
    case MPI_INT16_T:
    case MPI_UINT16_T:
    case MPI_INTEGER2:
      return {Conversion::integer, 2, 2, 1};
    case MPI_INT:
    case MPI_UNSIGNED:
    case MPI_INT32_T:
    case MPI_UINT32_T:
    case MPI_FLOAT:
    case MPI_LOGICAL:
    case MPI_INTEGER:
    case MPI_REAL:
    case MPI_INTEGER4:
    case MPI_REAL4:
      return {Conversion::integer, 4, 4, 1};
    case MPI_LONG_LONG_INT:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT64_T:
    case MPI_UINT64_T:
    case MPI_DOUBLE:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
    case MPI_DOUBLE_PRECISION:
    case MPI_INTEGER8:
    case MPI_REAL8:
      return {Conversion::integer, 8, 8, 1};
    case MPI_C_COMPLEX:
    case MPI_COMPLEX:
    case MPI_COMPLEX8:
    case MPI_CXX_FLOAT_COMPLEX:
      return {Conversion::integer, 4, 4, 2};
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16:
    case MPI_CXX_DOUBLE_COMPLEX:
      return {Conversion::integer, 8, 8, 2};
    case MPI_REAL16:
    case GRIDMPI_INTEGER16:  // a 128-bit value in host byte order, as binary128
      return {Conversion::quad, 16, 16, 1};
    case MPI_COMPLEX32:
      return {Conversion::quad, 16, 16, 2};
    case MPI_LONG_DOUBLE:
      return {Conversion::long_double, sizeof(long double), 16, 1};
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
      return {Conversion::long_double, sizeof(long double), 16, 2};
  }
  throw MpiError(MPI_ERR_INTERN, "no external32 rule for basic datatype " + std::to_string(basic));
}

using u128 = unsigned __int128;

// Native integers of n bytes, read and written in host byte order.
std::uint64_t load_native(const std::byte* p, std::size_t n) {
  switch (n) {
    case 1: { std::uint8_t v; std::memcpy(&v, p, 1); return v; }
    case 2: { std::uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { std::uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}
void store_native(std::uint64_t value, std::byte* p, std::size_t n) {
  switch (n) {
    case 1: { auto v = static_cast<std::uint8_t>(value); std::memcpy(p, &v, 1); break; }
    case 2: { auto v = static_cast<std::uint16_t>(value); std::memcpy(p, &v, 2); break; }
    case 4: { auto v = static_cast<std::uint32_t>(value); std::memcpy(p, &v, 4); break; }
    default: std::memcpy(p, &value, 8); break;
  }
}
void store_big(u128 value, std::byte* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    p[i] = static_cast<std::byte>(static_cast<std::uint8_t>(value >> (8 * (n - 1 - i))));
}
u128 load_big(const std::byte* p, std::size_t n) {
  u128 value = 0;
  for (std::size_t i = 0; i < n; ++i) value = value << 8 | static_cast<std::uint8_t>(p[i]);
  return value;
}
u128 load_u128(const std::byte* p) {
  u128 v;
  std::memcpy(&v, p, 16);
  return v;
}
void store_u128(u128 v, std::byte* p) { std::memcpy(p, &v, 16); }

constexpr int binary128_bias = 16383;
constexpr u128 binary128_fraction_mask = (u128{1} << 112) - 1;

// long double <-> binary128 bits.
u128 long_double_to_binary128(const std::byte* p) {
  if constexpr (LDBL_MANT_DIG == 64 && std::endian::native == std::endian::little) {
    // x87 extended: 64-bit significand with an explicit integer bit, then
    // sign and a 15-bit exponent with the same bias as binary128.  Copying
    // bits (no arithmetic) keeps NaN payloads and lets a partially received
    // element survive a round trip.
    std::uint64_t significand;
    std::uint16_t sign_exponent;
    std::memcpy(&significand, p, 8);
    std::memcpy(&sign_exponent, p + 8, 2);
    return u128{sign_exponent} << 112 | u128{significand & 0x7fffffffffffffffULL} << 49;
  } else if constexpr (LDBL_MANT_DIG == 113) {
    return load_u128(p);
  } else {
    long double x;
    std::memcpy(&x, p, sizeof x);
    u128 sign = std::signbit(x) ? u128{1} << 127 : 0;
    if (std::isnan(x)) return sign | u128{0x7fff} << 112 | u128{1} << 111;
    if (std::isinf(x)) return sign | u128{0x7fff} << 112;
    if (x == 0) return sign;
    int e;
    long double m = std::frexp(std::fabs(x), &e);  // [0.5, 1)
    long double f = 2 * m - 1;                      // fraction of 1.f
    u128 fraction = 0;
    for (int i = 0; i < 4; ++i) {  // 4 x 28 = 112 bits
      f = std::ldexp(f, 28);
      long double whole = std::floor(f);
      fraction = fraction << 28 | static_cast<u128>(static_cast<std::uint64_t>(whole));
      f -= whole;
    }
    return sign | static_cast<u128>(e - 1 + binary128_bias) << 112 | fraction;
  }
}

void binary128_to_long_double(u128 bits, std::byte* p) {
  if constexpr (LDBL_MANT_DIG == 64 && std::endian::native == std::endian::little) {
    // 112 fraction bits to 63, rounded to nearest, ties to even (a carry
    // out of the fraction raises the exponent: up to infinity, and a
    // subnormal becomes the smallest normal).  NaNs stay NaNs.
    auto sign_exponent = static_cast<std::uint16_t>(bits >> 112);
    const u128 fraction = bits & binary128_fraction_mask;
    auto significand = static_cast<std::uint64_t>(fraction >> 49);
    if ((sign_exponent & 0x7fff) == 0x7fff) {
      if (fraction != 0 && significand == 0) significand = 1ULL << 62;
    } else {
      const auto rest = static_cast<std::uint64_t>(fraction & ((u128{1} << 49) - 1));
      constexpr std::uint64_t half = std::uint64_t{1} << 48;
      if (rest > half || (rest == half && (significand & 1))) {
        ++significand;
        if (significand >> 63) {
          significand = 0;
          ++sign_exponent;
        }
      }
    }
    if ((sign_exponent & 0x7fff) != 0) significand |= 1ULL << 63;  // explicit integer bit
    std::memset(p, 0, sizeof(long double));
    std::memcpy(p, &significand, 8);
    std::memcpy(p + 8, &sign_exponent, 2);
  } else if constexpr (LDBL_MANT_DIG == 113) {
    store_u128(bits, p);
  } else {
    bool negative = (bits >> 127) != 0;
    int exponent = static_cast<int>((bits >> 112) & 0x7fff);
    u128 fraction = bits & binary128_fraction_mask;
    long double x;
    if (exponent == 0x7fff) {
      x = fraction != 0 ? NAN : INFINITY;
    } else {
      long double f = std::ldexp(static_cast<long double>(static_cast<std::uint64_t>(fraction >> 48)), -64);
      x = std::ldexp(exponent != 0 ? 1 + f : f, (exponent != 0 ? exponent : 1) - binary128_bias);
    }
    if (negative) x = -x;
    std::memcpy(p, &x, sizeof x);
  }
}

// An integer of `from` bytes (its bits in the low end of `value`) made
// `to` bytes wide: sign-extended for signed types when widening.
std::uint64_t widen(std::uint64_t value, std::size_t from, std::size_t to, bool is_signed) {
  if (!is_signed || to <= from || from >= 8) return value;
  const unsigned bits = static_cast<unsigned>(8 * from);
  if (value >> (bits - 1) & 1) value |= ~std::uint64_t{0} << bits;
  return value;
}

// Whether the integer `value` (already extended to 64 bits) keeps its value
// in `to` bytes.
bool fits(std::uint64_t value, std::size_t to, bool is_signed) {
  if (to >= 8) return true;
  const unsigned bits = static_cast<unsigned>(8 * to);
  if (!is_signed) return value >> bits == 0;
  const auto v = static_cast<std::int64_t>(value);
  const std::int64_t limit = std::int64_t{1} << (bits - 1);
  return v >= -limit && v < limit;
}

[[noreturn]] void does_not_fit(MPI_Datatype basic, std::uint64_t value, const Rule& r, bool is_signed,
                               ExternalFormat format) {
  std::string shown = is_signed ? std::to_string(static_cast<std::int64_t>(value)) : std::to_string(value);
  throw MpiError(MPI_ERR_CONVERSION,
                 datatype(basic).name + " value " + shown + " does not fit the " + std::to_string(r.external_part) +
                     " bytes " + external_format_name(format) + " gives it (the native type has " +
                     std::to_string(r.native_part) + "): no silent truncation; send it as MPI_INT64_T or " +
                     "MPI_LONG_LONG to carry 64 bits");
}

// `checked`: a value that does not fit is an error (packing user data);
// false when only some bytes of the element are wanted (a window merging a
// partly received element), where the element may hold anything.
void to_external(const Rule& r, const std::byte* native, std::byte* external, MPI_Datatype basic,
                 ExternalFormat format, bool checked) {
  for (int part = 0; part < r.parts; ++part) {
    const std::byte* in = native + part * r.native_part;
    std::byte* out = external + part * r.external_part;
    switch (r.conversion) {
      case Conversion::copy:
        *out = *in;
        break;
      case Conversion::integer:
        store_big(load_native(in, r.native_part), out, r.external_part);
        break;
      case Conversion::resize_signed:
      case Conversion::resize_unsigned: {
        const bool is_signed = r.conversion == Conversion::resize_signed;
        std::uint64_t value = widen(load_native(in, r.native_part), r.native_part, r.external_part, is_signed);
        if (checked && r.native_part > r.external_part && !fits(value, r.external_part, is_signed))
          does_not_fit(basic, value, r, is_signed, format);
        store_big(value, out, r.external_part);
        break;
      }
      case Conversion::quad:
        store_big(load_u128(in), out, 16);
        break;
      case Conversion::long_double:
        store_big(long_double_to_binary128(in), out, 16);
        break;
    }
  }
}

void from_external(const Rule& r, const std::byte* external, std::byte* native) {
  for (int part = 0; part < r.parts; ++part) {
    const std::byte* in = external + part * r.external_part;
    std::byte* out = native + part * r.native_part;
    switch (r.conversion) {
      case Conversion::copy:
        *out = *in;
        break;
      case Conversion::integer:
        store_native(static_cast<std::uint64_t>(load_big(in, r.external_part)), out, r.native_part);
        break;
      case Conversion::resize_signed:
      case Conversion::resize_unsigned: {
        const bool is_signed = r.conversion == Conversion::resize_signed;
        auto value = static_cast<std::uint64_t>(load_big(in, r.external_part));
        store_native(widen(value, r.external_part, r.native_part, is_signed), out, r.native_part);
        break;
      }
      case Conversion::quad:
        store_u128(load_big(in, 16), out);
        break;
      case Conversion::long_double:
        binary128_to_long_double(load_big(in, 16), out);
        break;
    }
  }
}

// Converts the external bytes [within, within + length) of the run of
// `count` elements of `basic` at address `at`, advancing stream.
void convert_leaf(std::uintptr_t at, MPI_Datatype basic, std::size_t count,
                  std::size_t native_size, std::size_t within, std::size_t& length,
                  std::byte*& stream, bool pack, ExternalFormat format) {
  Rule rule = rule_for(basic, format);
  std::size_t e = rule.external_part * static_cast<std::size_t>(rule.parts);
  std::size_t k = within / e;
  std::size_t offset = within % e;
  while (length > 0 && k < count) {
    auto* native = reinterpret_cast<std::byte*>(at + k * native_size);
    if (offset == 0 && length >= e) {
      std::size_t n = std::min(count - k, length / e);
      for (std::size_t j = 0; j < n; ++j) {
        if (pack)
          to_external(rule, native + j * native_size, stream + j * e, basic, format, true);
        else
          from_external(rule, stream + j * e, native + j * native_size);
      }
      stream += n * e;
      length -= n * e;
      k += n;
      continue;
    }
    // An element cut by the window: convert all of it, take (or merge) the
    // bytes that belong to this window.
    std::byte element[32];
    std::size_t piece = std::min(e - offset, length);
    to_external(rule, native, element, basic, format, pack);
    if (pack) {
      std::memcpy(stream, element + offset, piece);
    } else {
      std::memcpy(element + offset, stream, piece);
      from_external(rule, element, native);
    }
    stream += piece;
    length -= piece;
    offset = 0;
    ++k;
  }
}

void walk_external(const Layout& layout, std::uintptr_t base, std::size_t& skip,
                   std::size_t& length, std::byte*& stream, bool pack, ExternalFormat format) {
  for (const LayoutItem& item : layout.items) {
    if (length == 0) return;
    std::size_t run = item.run_in(format);
    std::size_t bytes = run * item.repeat;
    if (skip >= bytes) {
      skip -= bytes;
      continue;
    }
    std::uintptr_t at = base + static_cast<std::uintptr_t>(item.displacement);
    std::size_t i = skip / run;
    if (item.is_leaf()) {
      std::size_t within = skip % run;
      skip = 0;
      for (; i < item.repeat && length > 0; ++i) {
        convert_leaf(at + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(i) * item.stride),
                     item.basic, item.count, item.basic_size, within, length, stream, pack, format);
        within = 0;
      }
    } else {
      skip %= run;
      for (; i < item.repeat && length > 0; ++i)
        walk_external(*item.body,
                      at + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(i) * item.stride),
                      skip, length, stream, pack, format);
    }
  }
}

void external_window(const void* buf, std::size_t count, MPI_Datatype type, std::size_t offset,
                     std::size_t length, std::byte* stream, bool pack, ExternalFormat format) {
  const Datatype& t = datatype(type);
  const std::size_t each = t.external_size(format);
  std::size_t total = count * each;
  if (offset + length > total)
    throw MpiError(pack ? MPI_ERR_INTERN : MPI_ERR_TRUNCATE,
                   std::string(external_format_name(format)) + " window [" + std::to_string(offset) + ", " +
                       std::to_string(offset + length) + ") outside the " + std::to_string(total) +
                       "-byte stream");
  if (length == 0) return;
  std::size_t i = offset / each;
  std::size_t skip = offset % each;
  auto base = reinterpret_cast<std::uintptr_t>(buf);
  for (; i < count && length > 0; ++i)
    walk_external(*t.layout, base + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(i) * t.extent()),
                  skip, length, stream, pack, format);
}

}  // namespace

std::size_t external32_size(MPI_Datatype type, std::size_t count) {
  return count * datatype(type).external32_size;
}

std::size_t external_size(MPI_Datatype type, std::size_t count, ExternalFormat format) {
  return count * datatype(type).external_size(format);
}

void pack_external32(const void* buf, std::size_t count, MPI_Datatype type, std::byte* out, ExternalFormat format) {
  external_window(buf, count, type, 0, external_size(type, count, format), out, true, format);
}

void unpack_external32(const std::byte* in, std::size_t count, MPI_Datatype type, void* buf,
                       ExternalFormat format) {
  external_window(buf, count, type, 0, external_size(type, count, format), const_cast<std::byte*>(in), false,
                  format);
}

void pack_external32_range(const void* buf, std::size_t count, MPI_Datatype type,
                           std::size_t offset, std::span<std::byte> out, ExternalFormat format) {
  external_window(buf, count, type, offset, out.size(), out.data(), true, format);
}

void unpack_external32_range(std::span<const std::byte> in, std::size_t count, MPI_Datatype type,
                             std::size_t offset, void* buf, ExternalFormat format) {
  // The stream is only read when unpacking.
  external_window(buf, count, type, offset, in.size(), const_cast<std::byte*>(in.data()), false, format);
}

namespace {
bool basic_is_native(MPI_Datatype basic, ExternalFormat format) {
  Rule r = rule_for(basic, format);
  switch (r.conversion) {
    case Conversion::copy: return true;
    case Conversion::integer: return std::endian::native == std::endian::big;
    case Conversion::resize_signed:
    case Conversion::resize_unsigned:
      return std::endian::native == std::endian::big && r.native_part == r.external_part;
    case Conversion::quad: return std::endian::native == std::endian::big;
    case Conversion::long_double:
      return std::endian::native == std::endian::big && sizeof(long double) == 16 && LDBL_MANT_DIG == 113;
  }
  return false;
}
}  // namespace

bool external32_is_native(MPI_Datatype type, ExternalFormat format) {
  const Datatype& t = datatype(type);
  if (!t.contiguous || t.external_size(format) != t.size || !t.blocks_complete) return false;
  return std::all_of(t.blocks.begin(), t.blocks.end(),
                     [format](const TypeBlock& b) { return basic_is_native(b.basic, format); });
}

std::size_t native_bytes_of_external32(MPI_Datatype type, std::size_t count, std::size_t ext_bytes,
                                       ExternalFormat format) {
  const Datatype& t = datatype(type);
  if (t.external_size(format) == t.size && t.blocks_complete &&
      std::all_of(t.blocks.begin(), t.blocks.end(), [format](const TypeBlock& b) {
        Rule r = rule_for(b.basic, format);
        return r.native_part == r.external_part;
      }))
    return ext_bytes;
  // Walk the type map, counting the basic elements the external bytes hold.
  std::size_t left = ext_bytes;
  MPI_Count elements = 0;
  bool stop = false;
  t.for_each_block(count, [&](MPI_Aint, MPI_Datatype basic, std::size_t n) {
    if (stop) return;
    Rule r = rule_for(basic, format);
    std::size_t each = r.external_part * static_cast<std::size_t>(r.parts);
    std::size_t whole = std::min(n, left / each);
    elements += static_cast<MPI_Count>(whole);
    left -= whole * each;
    if (whole < n) stop = true;
  });
  return t.bytes_for_elements(elements);
}

}  // namespace gridmpi::core
