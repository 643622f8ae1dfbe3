// The predefined datatypes, at the fixed handles of mpi.h (the numbering is
// the ABI: this list must follow mpi.h), and the process-wide table that
// holds them.  The table is built on first use, so type constructors and
// MPI_Pack work before MPI_Init.
#include <bit>
#include <cfloat>
#include <complex>
#include <cstring>
#include <cwchar>
#include <memory>
#include <string>

#include "core/datatype.hpp"
#include "core/datatype_layout.hpp"

namespace gridmpi::core {

namespace {

// Fortran REAL*16 is IEEE binary128 (gfortran), not the x87 long double.
// Where long double is already binary128 (s390x, aarch64) g++ has no
// __float128; elsewhere (x86-64) it is the x87 80-bit type.
#if __LDBL_MANT_DIG__ == 113
using quad = long double;
#else
using quad = __float128;
#endif
struct quad_complex {
  quad re, im;
};
// Fortran INTEGER(KIND=16).
__extension__ typedef __int128 int128;

enum class Shape { basic, pair, marker };

struct Predefined {
  MPI_Datatype handle;
  const char* name;
  Shape shape;
  std::size_t size;       // basic: sizeof; pair: size of the data (no padding)
  std::size_t extent;     // sizeof the C type (pairs: with padding)
  std::size_t alignment;
  std::size_t external32; // basic types only
  // Pair types: the two components and where the second one is.
  MPI_Datatype first = MPI_DATATYPE_NULL, second = MPI_DATATYPE_NULL;
  MPI_Aint second_displacement = 0;
};

template <class T>
constexpr Predefined basic(MPI_Datatype handle, const char* name, std::size_t external32) {
  return {handle, name, Shape::basic, sizeof(T), sizeof(T), alignof(T), external32};
}

template <class First, class Second>
struct Pair {
  First first;
  Second second;
};

template <class First, class Second>
constexpr Predefined pair(MPI_Datatype handle, const char* name, MPI_Datatype first,
                          MPI_Datatype second) {
  using P = Pair<First, Second>;
  return {handle,
          name,
          Shape::pair,
          sizeof(First) + sizeof(Second),
          sizeof(P),
          alignof(P),
          0,
          first,
          second,
          static_cast<MPI_Aint>(offsetof(P, second))};
}

// Same order as mpi.h.
constexpr Predefined predefined_types[] = {
    basic<char>(MPI_CHAR, "MPI_CHAR", 1),
    basic<signed char>(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1),
    basic<unsigned char>(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1),
    basic<unsigned char>(MPI_BYTE, "MPI_BYTE", 1),
    basic<wchar_t>(MPI_WCHAR, "MPI_WCHAR", 2),
    basic<short>(MPI_SHORT, "MPI_SHORT", 2),
    basic<unsigned short>(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2),
    basic<int>(MPI_INT, "MPI_INT", 4),
    basic<unsigned>(MPI_UNSIGNED, "MPI_UNSIGNED", 4),
    basic<long>(MPI_LONG, "MPI_LONG", 4),
    basic<unsigned long>(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 4),
    basic<long long>(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8),
    basic<unsigned long long>(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8),
    basic<float>(MPI_FLOAT, "MPI_FLOAT", 4),
    basic<double>(MPI_DOUBLE, "MPI_DOUBLE", 8),
    basic<long double>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16),
    basic<bool>(MPI_C_BOOL, "MPI_C_BOOL", 1),
    basic<std::int8_t>(MPI_INT8_T, "MPI_INT8_T", 1),
    basic<std::int16_t>(MPI_INT16_T, "MPI_INT16_T", 2),
    basic<std::int32_t>(MPI_INT32_T, "MPI_INT32_T", 4),
    basic<std::int64_t>(MPI_INT64_T, "MPI_INT64_T", 8),
    basic<std::uint8_t>(MPI_UINT8_T, "MPI_UINT8_T", 1),
    basic<std::uint16_t>(MPI_UINT16_T, "MPI_UINT16_T", 2),
    basic<std::uint32_t>(MPI_UINT32_T, "MPI_UINT32_T", 4),
    basic<std::uint64_t>(MPI_UINT64_T, "MPI_UINT64_T", 8),
    // MPI_C_FLOAT_COMPLEX is a synonym (one handle).  The name is the
    // standard's first spelling, which MPICH's typename test requires for
    // MPI_C_COMPLEX and accepts for MPI_C_FLOAT_COMPLEX.
    basic<std::complex<float>>(MPI_C_COMPLEX, "MPI_C_COMPLEX", 8),
    basic<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16),
    basic<std::complex<long double>>(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32),
    basic<MPI_Aint>(MPI_AINT, "MPI_AINT", 8),
    basic<MPI_Offset>(MPI_OFFSET, "MPI_OFFSET", 8),
    basic<MPI_Count>(MPI_COUNT, "MPI_COUNT", 8),
    basic<unsigned char>(MPI_PACKED, "MPI_PACKED", 1),
    {MPI_UB, "MPI_UB", Shape::marker, 0, 0, 1, 0},
    {MPI_LB, "MPI_LB", Shape::marker, 0, 0, 1, 0},
    pair<float, int>(MPI_FLOAT_INT, "MPI_FLOAT_INT", MPI_FLOAT, MPI_INT),
    pair<double, int>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", MPI_DOUBLE, MPI_INT),
    pair<long, int>(MPI_LONG_INT, "MPI_LONG_INT", MPI_LONG, MPI_INT),
    pair<int, int>(MPI_2INT, "MPI_2INT", MPI_INT, MPI_INT),
    pair<short, int>(MPI_SHORT_INT, "MPI_SHORT_INT", MPI_SHORT, MPI_INT),
    pair<long double, int>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE, MPI_INT),
    basic<char>(MPI_CHARACTER, "MPI_CHARACTER", 1),
    basic<int>(MPI_LOGICAL, "MPI_LOGICAL", 4),
    basic<int>(MPI_INTEGER, "MPI_INTEGER", 4),
    basic<float>(MPI_REAL, "MPI_REAL", 4),
    basic<double>(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8),
    basic<std::complex<float>>(MPI_COMPLEX, "MPI_COMPLEX", 8),
    basic<std::complex<double>>(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16),
    pair<float, float>(MPI_2REAL, "MPI_2REAL", MPI_REAL, MPI_REAL),
    pair<double, double>(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", MPI_DOUBLE_PRECISION,
                         MPI_DOUBLE_PRECISION),
    pair<int, int>(MPI_2INTEGER, "MPI_2INTEGER", MPI_INTEGER, MPI_INTEGER),
    basic<std::int8_t>(MPI_INTEGER1, "MPI_INTEGER1", 1),
    basic<std::int16_t>(MPI_INTEGER2, "MPI_INTEGER2", 2),
    basic<std::int32_t>(MPI_INTEGER4, "MPI_INTEGER4", 4),
    basic<std::int64_t>(MPI_INTEGER8, "MPI_INTEGER8", 8),
    basic<float>(MPI_REAL4, "MPI_REAL4", 4),
    basic<double>(MPI_REAL8, "MPI_REAL8", 8),
    basic<quad>(MPI_REAL16, "MPI_REAL16", 16),
    basic<std::complex<float>>(MPI_COMPLEX8, "MPI_COMPLEX8", 8),
    basic<std::complex<double>>(MPI_COMPLEX16, "MPI_COMPLEX16", 16),
    basic<quad_complex>(MPI_COMPLEX32, "MPI_COMPLEX32", 32),
    basic<bool>(MPI_CXX_BOOL, "MPI_CXX_BOOL", 1),
    basic<std::complex<float>>(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8),
    basic<std::complex<double>>(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16),
    basic<std::complex<long double>>(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX",
                                     32),
    basic<int128>(GRIDMPI_INTEGER16, "MPI_INTEGER16", 16),
};

static_assert(std::size(predefined_types) == GRIDMPI_PREDEFINED_DATATYPE_COUNT - 1,
              "every predefined datatype of mpi.h needs an entry");

constexpr bool table_follows_mpi_h() {
  for (std::size_t i = 0; i < std::size(predefined_types); ++i)
    if (predefined_types[i].handle != static_cast<MPI_Datatype>(i + 1)) return false;
  return true;
}
static_assert(table_follows_mpi_h(), "predefined_types must list the handles in mpi.h order");

const Predefined& entry(MPI_Datatype handle) { return predefined_types[handle - 1]; }

std::unique_ptr<Datatype> make_predefined(const Predefined& p) {
  auto t = std::make_unique<Datatype>();
  t->handle = p.handle;
  t->name = p.name;
  t->predefined = true;
  t->committed = true;
  t->combiner = MPI_COMBINER_NAMED;
  t->size = p.size;
  t->lb = 0;
  t->ub = static_cast<MPI_Aint>(p.extent);
  t->true_lb = 0;
  t->true_ub = static_cast<MPI_Aint>(p.size);
  t->alignment = p.alignment;
  switch (p.shape) {
    case Shape::basic:
      t->layout = leaf_layout(p.handle, p.size, 1);
      t->reduction_basic = p.handle;
      break;
    case Shape::pair: {
      const Predefined& first = entry(p.first);
      const Predefined& second = entry(p.second);
      t->layout = pair_layout(p.first, first.size, p.second, second.size, p.second_displacement);
      t->reduction_basic = p.handle;
      break;
    }
    case Shape::marker:
      t->layout = std::make_shared<const Layout>();
      t->explicit_lb = p.handle == MPI_LB;
      t->explicit_ub = p.handle == MPI_UB;
      break;
  }
  t->basic_elements = t->layout->elements;
  t->external32_size = t->layout->external_size;
  t->external64_size = t->layout->external64_size;
  t->contiguous = t->layout->dense && t->extent() == static_cast<MPI_Aint>(t->size);
  for (const LayoutItem& item : t->layout->items)
    t->blocks.push_back({item.displacement, item.basic, item.count});
  return t;
}

HandleTable<Datatype> build_table() {
  HandleTable<Datatype> table(MPI_ERR_TYPE);
  for (const Predefined& p : predefined_types) {
    auto t = make_predefined(p);
    if (p.handle > 0 && p.handle < GRIDMPI_PREDEFINED_DATATYPE_COUNT) predefined_datatypes[p.handle] = t.get();
    table.put_at(p.handle, std::move(t));
  }
  return table;
}

}  // namespace

Datatype* predefined_datatypes[GRIDMPI_PREDEFINED_DATATYPE_COUNT] = {};

HandleTable<Datatype>& datatype_table() {
  static HandleTable<Datatype> table = build_table();
  return table;
}

std::size_t external32_basic_size(MPI_Datatype basic) noexcept {
  if (basic <= 0 || basic >= GRIDMPI_PREDEFINED_DATATYPE_COUNT) return 0;
  return entry(basic).external32;
}

std::size_t external64_basic_size(MPI_Datatype basic) noexcept {
  switch (basic) {
    case MPI_LONG:
    case MPI_UNSIGNED_LONG: return 8;
    case MPI_WCHAR: return 4;
    default: return external32_basic_size(basic);
  }
}

std::string native_representation() {
  // Version 1: byte order, long double's significand and exponent range,
  // then (handle, size, extent, alignment) of every predefined type.
  std::string out;
  auto put = [&out](std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  put(1, 1);
  put(std::endian::native == std::endian::big ? 1 : 0, 1);
  put(static_cast<std::uint64_t>(LDBL_MANT_DIG), 2);
  put(static_cast<std::uint64_t>(LDBL_MAX_EXP), 4);
  for (const Predefined& p : predefined_types) {
    put(static_cast<std::uint64_t>(p.handle), 4);
    put(p.size, 2);
    put(p.extent, 2);
    put(p.alignment, 1);
  }
  return out;
}

bool is_pair_type(MPI_Datatype handle) noexcept {
  return handle > 0 && handle < GRIDMPI_PREDEFINED_DATATYPE_COUNT &&
         entry(handle).shape == Shape::pair;
}

MPI_Datatype type_match_size(int typeclass, int size) {
  switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
      switch (size) {
        case 1: return MPI_INTEGER1;
        case 2: return MPI_INTEGER2;
        case 4: return MPI_INTEGER4;
        case 8: return MPI_INTEGER8;
        case 16: return GRIDMPI_INTEGER16;
      }
      break;
    case MPI_TYPECLASS_REAL:
      switch (size) {
        case 4: return MPI_REAL4;
        case 8: return MPI_REAL8;
        case 16: return MPI_REAL16;
      }
      break;
    case MPI_TYPECLASS_COMPLEX:
      switch (size) {
        case 8: return MPI_COMPLEX8;
        case 16: return MPI_COMPLEX16;
        case 32: return MPI_COMPLEX32;
      }
      break;
    default:
      throw MpiError(MPI_ERR_ARG, "invalid type class " + std::to_string(typeclass) +
                                      " (use MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX)");
  }
  throw MpiError(MPI_ERR_ARG,
                 "no predefined type of type class " + std::to_string(typeclass) + " has size " +
                     std::to_string(size));
}

}  // namespace gridmpi::core
