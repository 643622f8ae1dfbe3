// Datatypes: predefined table, constructors (bounds, extents, markers,
// padding), the pack engine against hand-computed layouts, element counts,
// reference counting, MPI_Pack/Unpack and external32.  No MPI_Init needed.
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <catch2/catch.hpp>
#include <complex>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/datatype.hpp"

namespace core = gridmpi::core;

namespace {

// The error class thrown by f, or MPI_SUCCESS.
template <class F>
int error_of(F&& f) {
  try {
    f();
  } catch (const gridmpi::MpiError& e) {
    return e.error_class();
  }
  return MPI_SUCCESS;
}

std::vector<int> iota_ints(int n, int first = 0) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// Packs count elements through MPI_Pack and returns the bytes.
std::vector<std::byte> pack(const void* buf, int count, MPI_Datatype t) {
  int size = 0;
  REQUIRE(MPI_Pack_size(count, t, MPI_COMM_WORLD, &size) == MPI_SUCCESS);
  std::vector<std::byte> out(size);
  int position = 0;
  REQUIRE(MPI_Pack(buf, count, t, out.data(), size, &position, MPI_COMM_WORLD) == MPI_SUCCESS);
  REQUIRE(position == size);
  return out;
}

template <class T>
std::vector<T> as(const std::vector<std::byte>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

MPI_Datatype committed(MPI_Datatype t) {
  REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
  return t;
}

void free_type(MPI_Datatype t) { REQUIRE(MPI_Type_free(&t) == MPI_SUCCESS); }

struct Extent {
  MPI_Aint lb, extent, true_lb, true_extent;
  int size;
};
Extent extent_of(MPI_Datatype t) {
  Extent e{};
  REQUIRE(MPI_Type_get_extent(t, &e.lb, &e.extent) == MPI_SUCCESS);
  REQUIRE(MPI_Type_get_true_extent(t, &e.true_lb, &e.true_extent) == MPI_SUCCESS);
  REQUIRE(MPI_Type_size(t, &e.size) == MPI_SUCCESS);
  return e;
}

}  // namespace

TEST_CASE("predefined datatypes have the C sizes and extents", "[datatype]") {
  struct LongDoubleInt {
    long double value;
    int index;
  };
  struct Expect {
    MPI_Datatype t;
    int size;
    MPI_Aint extent;
    const char* name;
  };
  const Expect expected[] = {
      {MPI_CHAR, 1, 1, "MPI_CHAR"},
      {MPI_WCHAR, sizeof(wchar_t), sizeof(wchar_t), "MPI_WCHAR"},
      {MPI_INT, 4, 4, "MPI_INT"},
      {MPI_LONG, 8, 8, "MPI_LONG"},
      {MPI_LONG_DOUBLE, 16, 16, "MPI_LONG_DOUBLE"},
      {MPI_C_BOOL, 1, 1, "MPI_C_BOOL"},
      {MPI_INT64_T, 8, 8, "MPI_INT64_T"},
      {MPI_UINT16_T, 2, 2, "MPI_UINT16_T"},
      {MPI_C_FLOAT_COMPLEX, 8, 8, "MPI_C_COMPLEX"},
      {MPI_C_DOUBLE_COMPLEX, 16, 16, "MPI_C_DOUBLE_COMPLEX"},
      {MPI_C_LONG_DOUBLE_COMPLEX, 32, 32, "MPI_C_LONG_DOUBLE_COMPLEX"},
      {MPI_AINT, 8, 8, "MPI_AINT"},
      {MPI_OFFSET, 8, 8, "MPI_OFFSET"},
      {MPI_COUNT, 8, 8, "MPI_COUNT"},
      {MPI_PACKED, 1, 1, "MPI_PACKED"},
      {MPI_LB, 0, 0, "MPI_LB"},
      {MPI_UB, 0, 0, "MPI_UB"},
      {MPI_FLOAT_INT, 8, 8, "MPI_FLOAT_INT"},
      {MPI_DOUBLE_INT, 12, 16, "MPI_DOUBLE_INT"},
      {MPI_LONG_INT, 12, 16, "MPI_LONG_INT"},
      {MPI_2INT, 8, 8, "MPI_2INT"},
      {MPI_SHORT_INT, 6, 8, "MPI_SHORT_INT"},
      // 32 on x86-64, 24 where long double is 8-byte aligned (s390x)
      {MPI_LONG_DOUBLE_INT, 20, static_cast<MPI_Aint>(sizeof(LongDoubleInt)), "MPI_LONG_DOUBLE_INT"},
      {MPI_CHARACTER, 1, 1, "MPI_CHARACTER"},
      {MPI_LOGICAL, 4, 4, "MPI_LOGICAL"},
      {MPI_INTEGER, 4, 4, "MPI_INTEGER"},
      {MPI_REAL, 4, 4, "MPI_REAL"},
      {MPI_DOUBLE_PRECISION, 8, 8, "MPI_DOUBLE_PRECISION"},
      {MPI_COMPLEX, 8, 8, "MPI_COMPLEX"},
      {MPI_DOUBLE_COMPLEX, 16, 16, "MPI_DOUBLE_COMPLEX"},
      {MPI_2REAL, 8, 8, "MPI_2REAL"},
      {MPI_2DOUBLE_PRECISION, 16, 16, "MPI_2DOUBLE_PRECISION"},
      {MPI_2INTEGER, 8, 8, "MPI_2INTEGER"},
      {MPI_INTEGER1, 1, 1, "MPI_INTEGER1"},
      {MPI_INTEGER8, 8, 8, "MPI_INTEGER8"},
      {GRIDMPI_INTEGER16, 16, 16, "MPI_INTEGER16"},
      {MPI_REAL16, 16, 16, "MPI_REAL16"},
      {MPI_COMPLEX32, 32, 32, "MPI_COMPLEX32"},
      {MPI_CXX_BOOL, 1, 1, "MPI_CXX_BOOL"},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, 32, 32, "MPI_CXX_LONG_DOUBLE_COMPLEX"},
  };
  for (const Expect& e : expected) {
    INFO(e.name);
    Extent x = extent_of(e.t);
    CHECK(x.size == e.size);
    CHECK(x.extent == e.extent);
    CHECK(x.lb == 0);
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    REQUIRE(MPI_Type_get_name(e.t, name, &len) == MPI_SUCCESS);
    CHECK(std::string(name) == e.name);
    CHECK(len == static_cast<int>(std::strlen(e.name)));
  }
  // Every handle below the count is a named, committed type.
  for (MPI_Datatype t = 1; t < GRIDMPI_PREDEFINED_DATATYPE_COUNT; ++t) {
    const core::Datatype& d = core::datatype(t);
    CHECK(d.handle == t);
    CHECK(d.predefined);
    CHECK(d.committed);
    CHECK(d.name.rfind("MPI_", 0) == 0);
    int ni, na, nd, combiner;
    REQUIRE(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS);
    CHECK(combiner == MPI_COMBINER_NAMED);
    CHECK(ni + na + nd == 0);
  }
  // The pair types are struct-like: two basic elements each.
  CHECK(core::datatype(MPI_DOUBLE_INT).basic_elements == 2);
  CHECK(core::datatype(MPI_2INT).basic_elements == 2);
  CHECK(core::datatype(MPI_SHORT_INT).true_extent() == 6);
  // The lookup rejects the null handle and unknown handles.
  CHECK(error_of([] { core::datatype(MPI_DATATYPE_NULL); }) == MPI_ERR_TYPE);
  CHECK(error_of([] { core::datatype(123456); }) == MPI_ERR_TYPE);
}

TEST_CASE("contiguous and vector types pack the hand-computed elements", "[datatype]") {
  std::vector<int> data = iota_ints(32);
  MPI_Datatype v;
  REQUIRE(MPI_Type_vector(3, 2, 4, MPI_INT, &v) == MPI_SUCCESS);
  v = committed(v);
  Extent e = extent_of(v);
  CHECK(e.size == 24);
  CHECK(e.lb == 0);
  CHECK(e.extent == (2 * 4 + 2) * 4);  // (count-1)*stride + blocklength ints
  CHECK(e.true_extent == 40);
  CHECK_FALSE(core::datatype(v).contiguous);
  // A vector of ints is one strided run, not six elements.
  CHECK(core::datatype(v).blocks.size() == 3);
  CHECK(core::datatype(v).blocks[1].displacement == 16);
  CHECK(core::datatype(v).blocks[1].count == 2);

  CHECK(as<int>(pack(data.data(), 1, v)) == std::vector<int>{0, 1, 4, 5, 8, 9});
  // Two elements: the second starts one extent (10 ints) later.
  CHECK(as<int>(pack(data.data(), 2, v)) ==
        std::vector<int>{0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19});

  // Unpack writes only the type map and leaves the holes alone.
  std::vector<int> packed{100, 101, 102, 103, 104, 105};
  std::vector<int> target(10, -1);
  int position = 0;
  REQUIRE(MPI_Unpack(packed.data(), 24, &position, target.data(), 1, v, MPI_COMM_WORLD) ==
          MPI_SUCCESS);
  CHECK(position == 24);
  CHECK(target == std::vector<int>{100, 101, -1, -1, 102, 103, -1, -1, 104, 105});

  // A contiguous type of contiguous data is flagged contiguous (one memcpy).
  MPI_Datatype c;
  REQUIRE(MPI_Type_contiguous(5, MPI_INT, &c) == MPI_SUCCESS);
  CHECK(core::datatype(c).contiguous);
  CHECK(core::datatype(c).blocks.size() == 1);
  CHECK(extent_of(c).extent == 20);
  // A vector whose stride equals its block length is contiguous too.
  MPI_Datatype dense;
  REQUIRE(MPI_Type_vector(4, 3, 3, MPI_DOUBLE, &dense) == MPI_SUCCESS);
  CHECK(core::datatype(dense).contiguous);
  // Negative stride: the type map runs backwards, lb is negative.
  MPI_Datatype backwards;
  REQUIRE(MPI_Type_vector(3, 1, -2, MPI_INT, &backwards) == MPI_SUCCESS);
  backwards = committed(backwards);
  Extent b = extent_of(backwards);
  CHECK(b.lb == -16);
  CHECK(b.extent == 20);
  CHECK(as<int>(pack(data.data() + 10, 1, backwards)) == std::vector<int>{10, 8, 6});
  // hvector strides in bytes.
  MPI_Datatype hv;
  REQUIRE(MPI_Type_create_hvector(2, 1, 12, MPI_INT, &hv) == MPI_SUCCESS);
  hv = committed(hv);
  CHECK(extent_of(hv).extent == 16);
  CHECK(as<int>(pack(data.data(), 2, hv)) == std::vector<int>{0, 3, 4, 7});
  // Zero counts give empty types.
  MPI_Datatype empty;
  REQUIRE(MPI_Type_contiguous(0, MPI_INT, &empty) == MPI_SUCCESS);
  Extent z = extent_of(empty);
  CHECK(z.size == 0);
  CHECK(z.extent == 0);
  for (MPI_Datatype t : {v, c, dense, backwards, hv, empty}) free_type(t);
}

TEST_CASE("indexed, hindexed and block-indexed types", "[datatype]") {
  std::vector<int> data = iota_ints(16);
  const int lengths[] = {3, 1, 2};
  const int displacements[] = {4, 0, 10};
  MPI_Datatype ix;
  REQUIRE(MPI_Type_indexed(3, lengths, displacements, MPI_INT, &ix) == MPI_SUCCESS);
  ix = committed(ix);
  Extent e = extent_of(ix);
  CHECK(e.size == 24);
  CHECK(e.lb == 0);
  CHECK(e.extent == 48);
  CHECK(as<int>(pack(data.data(), 1, ix)) == std::vector<int>{4, 5, 6, 0, 10, 11});

  const MPI_Aint byte_displacements[] = {8, 0, 40};
  MPI_Datatype hix;
  REQUIRE(MPI_Type_create_hindexed(3, lengths, byte_displacements, MPI_INT, &hix) == MPI_SUCCESS);
  hix = committed(hix);
  CHECK(as<int>(pack(data.data(), 1, hix)) == std::vector<int>{2, 3, 4, 0, 10, 11});

  const int block_displacements[] = {6, 1, 3};
  MPI_Datatype ib;
  REQUIRE(MPI_Type_create_indexed_block(3, 2, block_displacements, MPI_INT, &ib) == MPI_SUCCESS);
  ib = committed(ib);
  CHECK(extent_of(ib).extent == 28);
  CHECK(extent_of(ib).lb == 4);
  CHECK(as<int>(pack(data.data(), 1, ib)) == std::vector<int>{6, 7, 1, 2, 3, 4});

  const MPI_Aint hblock_displacements[] = {0, 20};
  MPI_Datatype hib;
  REQUIRE(MPI_Type_create_hindexed_block(2, 2, hblock_displacements, MPI_INT, &hib) ==
          MPI_SUCCESS);
  hib = committed(hib);
  CHECK(as<int>(pack(data.data(), 1, hib)) == std::vector<int>{0, 1, 5, 6});
  // Zero-length blocks take no part in the bounds.
  const int with_empty[] = {0, 2};
  const int far[] = {100, 1};
  MPI_Datatype sparse;
  REQUIRE(MPI_Type_indexed(2, with_empty, far, MPI_INT, &sparse) == MPI_SUCCESS);
  CHECK(extent_of(sparse).lb == 4);
  CHECK(extent_of(sparse).extent == 8);
  for (MPI_Datatype t : {ix, hix, ib, hib, sparse}) free_type(t);
}

TEST_CASE("struct types: alignment padding and MPI_LB/MPI_UB markers", "[datatype]") {
  struct Record {
    char c;
    double d;
    int i;
  };
  static_assert(sizeof(Record) == 24);
  const int lengths[] = {1, 1, 1};
  const MPI_Aint displacements[] = {offsetof(Record, c), offsetof(Record, d), offsetof(Record, i)};
  const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  MPI_Datatype rec;
  REQUIRE(MPI_Type_create_struct(3, lengths, displacements, types, &rec) == MPI_SUCCESS);
  rec = committed(rec);
  Extent e = extent_of(rec);
  CHECK(e.size == 13);
  CHECK(e.lb == 0);
  CHECK(e.extent == 24);  // 20 bytes of data rounded up to the double's alignment
  CHECK(e.true_extent == 20);

  Record records[2] = {{'a', 1.5, 7}, {'b', -2.25, 9}};
  std::vector<std::byte> bytes = pack(records, 2, rec);
  REQUIRE(bytes.size() == 26);
  CHECK(static_cast<char>(bytes[0]) == 'a');
  double d;
  int i;
  std::memcpy(&d, bytes.data() + 1, 8);
  std::memcpy(&i, bytes.data() + 9, 4);
  CHECK(d == 1.5);
  CHECK(i == 7);
  CHECK(static_cast<char>(bytes[13]) == 'b');
  std::memcpy(&d, bytes.data() + 14, 8);
  CHECK(d == -2.25);
  Record back[2] = {};
  int position = 0;
  REQUIRE(MPI_Unpack(bytes.data(), 26, &position, back, 2, rec, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(back[1].c == 'b');
  CHECK(back[1].d == -2.25);
  CHECK(back[1].i == 9);

  // {int, char}: 5 bytes of data, extent 8.
  const int two[] = {1, 1};
  const MPI_Aint int_char[] = {0, 4};
  const MPI_Datatype int_char_types[] = {MPI_INT, MPI_CHAR};
  MPI_Datatype ic;
  REQUIRE(MPI_Type_create_struct(2, two, int_char, int_char_types, &ic) == MPI_SUCCESS);
  CHECK(extent_of(ic).extent == 8);
  CHECK(extent_of(ic).size == 5);

  // Explicit markers: lb and ub come from MPI_LB / MPI_UB, no padding.
  const int three[] = {1, 1, 1};
  const MPI_Aint marked[] = {-4, 0, 9};
  const MPI_Datatype marked_types[] = {MPI_LB, MPI_DOUBLE, MPI_UB};
  MPI_Datatype m;
  REQUIRE(MPI_Type_struct(3, const_cast<int*>(three), const_cast<MPI_Aint*>(marked),
                          const_cast<MPI_Datatype*>(marked_types), &m) == MPI_SUCCESS);
  Extent me = extent_of(m);
  CHECK(me.lb == -4);
  CHECK(me.extent == 13);
  CHECK(me.true_lb == 0);
  CHECK(me.true_extent == 8);
  MPI_Aint lb, ub;
  REQUIRE(MPI_Type_lb(m, &lb) == MPI_SUCCESS);
  REQUIRE(MPI_Type_ub(m, &ub) == MPI_SUCCESS);
  CHECK(lb == -4);
  CHECK(ub == 9);
  // Markers are sticky: a contiguous of m keeps them, a struct of m too.
  MPI_Datatype mm;
  REQUIRE(MPI_Type_contiguous(2, m, &mm) == MPI_SUCCESS);
  CHECK(extent_of(mm).lb == -4);
  CHECK(extent_of(mm).extent == 26);
  const int one[] = {1, 1};
  const MPI_Aint wrap_displacements[] = {100, 0};
  const MPI_Datatype wrap_types[] = {m, MPI_CHAR};
  MPI_Datatype wrap;
  REQUIRE(MPI_Type_create_struct(2, one, wrap_displacements, wrap_types, &wrap) == MPI_SUCCESS);
  // lb comes only from the marker (96), ub from the marker (109).
  CHECK(extent_of(wrap).lb == 96);
  CHECK(extent_of(wrap).extent == 13);
  for (MPI_Datatype t : {rec, ic, m, mm, wrap}) free_type(t);
}

TEST_CASE("resized, dup and nested types", "[datatype]") {
  std::vector<int> data = iota_ints(40);
  MPI_Datatype r;
  REQUIRE(MPI_Type_create_resized(MPI_INT, -4, 12, &r) == MPI_SUCCESS);
  Extent e = extent_of(r);
  CHECK(e.lb == -4);
  CHECK(e.extent == 12);
  CHECK(e.true_lb == 0);
  CHECK(e.true_extent == 4);
  MPI_Datatype rr;
  REQUIRE(MPI_Type_contiguous(3, r, &rr) == MPI_SUCCESS);
  rr = committed(rr);
  CHECK(as<int>(pack(data.data(), 1, rr)) == std::vector<int>{0, 3, 6});
  CHECK(extent_of(rr).extent == 36);
  CHECK(extent_of(rr).lb == -4);

  // A resized vector used with count > 1 (the classic column type).
  MPI_Datatype column, column_type;
  REQUIRE(MPI_Type_vector(4, 1, 5, MPI_INT, &column) == MPI_SUCCESS);
  REQUIRE(MPI_Type_create_resized(column, 0, sizeof(int), &column_type) == MPI_SUCCESS);
  column_type = committed(column_type);
  CHECK(as<int>(pack(data.data(), 2, column_type)) ==
        std::vector<int>{0, 5, 10, 15, 1, 6, 11, 16});

  // A vector of structs with padding: struct {int; double} (extent 16).
  struct S {
    int i;
    double d;
  };
  const int lengths[] = {1, 1};
  const MPI_Aint displacements[] = {offsetof(S, i), offsetof(S, d)};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype s, vs;
  REQUIRE(MPI_Type_create_struct(2, lengths, displacements, types, &s) == MPI_SUCCESS);
  REQUIRE(MPI_Type_vector(2, 1, 2, s, &vs) == MPI_SUCCESS);
  vs = committed(vs);
  S items[4] = {{1, 1.5}, {2, 2.5}, {3, 3.5}, {4, 4.5}};
  std::vector<std::byte> bytes = pack(items, 1, vs);
  REQUIRE(bytes.size() == 24);
  int i;
  double d;
  std::memcpy(&i, bytes.data() + 12, 4);
  std::memcpy(&d, bytes.data() + 16, 8);
  CHECK(i == 3);
  CHECK(d == 3.5);
  CHECK(extent_of(vs).extent == 48);
  CHECK(core::datatype(vs).basic_elements == 4);

  // An hvector of a vector (2-d block of a 2-d array).
  MPI_Datatype row, block;
  REQUIRE(MPI_Type_vector(2, 1, 2, MPI_INT, &row) == MPI_SUCCESS);
  REQUIRE(MPI_Type_create_hvector(3, 1, 10 * sizeof(int), row, &block) == MPI_SUCCESS);
  block = committed(block);
  CHECK(as<int>(pack(data.data(), 1, block)) == std::vector<int>{0, 2, 10, 12, 20, 22});

  // Dup: same type map, same committed state, combiner DUP.
  MPI_Datatype dup;
  REQUIRE(MPI_Type_dup(block, &dup) == MPI_SUCCESS);
  CHECK(core::datatype(dup).committed);
  CHECK(as<int>(pack(data.data(), 1, dup)) == std::vector<int>{0, 2, 10, 12, 20, 22});
  int ni, na, nd, combiner;
  REQUIRE(MPI_Type_get_envelope(dup, &ni, &na, &nd, &combiner) == MPI_SUCCESS);
  CHECK(combiner == MPI_COMBINER_DUP);
  CHECK(nd == 1);
  for (MPI_Datatype t : {r, rr, column, column_type, s, vs, row, block, dup}) free_type(t);
}

TEST_CASE("subarray and darray types", "[datatype]") {
  std::vector<int> data = iota_ints(64);
  const int sizes[] = {4, 5}, subsizes[] = {2, 3}, starts[] = {1, 2};
  MPI_Datatype c_order, f_order;
  REQUIRE(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &c_order) ==
          MPI_SUCCESS);
  c_order = committed(c_order);
  CHECK(as<int>(pack(data.data(), 1, c_order)) == std::vector<int>{7, 8, 9, 12, 13, 14});
  Extent e = extent_of(c_order);
  CHECK(e.lb == 0);
  CHECK(e.extent == 80);
  CHECK(e.true_lb == 28);
  CHECK(e.true_extent == 32);
  REQUIRE(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT,
                                   &f_order) == MPI_SUCCESS);
  f_order = committed(f_order);
  // (i, j) at i + 4 j, i in 1..2, j in 2..4.
  CHECK(as<int>(pack(data.data(), 1, f_order)) == std::vector<int>{9, 10, 13, 14, 17, 18});
  int ni, na, nd, combiner;
  REQUIRE(MPI_Type_get_envelope(c_order, &ni, &na, &nd, &combiner) == MPI_SUCCESS);
  CHECK(combiner == MPI_COMBINER_SUBARRAY);
  CHECK(ni == 3 * 2 + 2);
  // 3-d: a 2x2x2 cube of a 4x4x4 array.
  const int cube_sizes[] = {4, 4, 4}, cube_subsizes[] = {2, 2, 2}, cube_starts[] = {1, 0, 2};
  MPI_Datatype cube;
  REQUIRE(MPI_Type_create_subarray(3, cube_sizes, cube_subsizes, cube_starts, MPI_ORDER_C, MPI_INT,
                                   &cube) == MPI_SUCCESS);
  cube = committed(cube);
  CHECK(as<int>(pack(data.data(), 1, cube)) ==
        std::vector<int>{18, 19, 22, 23, 34, 35, 38, 39});
  CHECK(extent_of(cube).extent == 256);

  // darray, 1-d: 10 elements over 3 processes.
  const int gsize[] = {10}, psize[] = {3}, dflt[] = {MPI_DISTRIBUTE_DFLT_DARG}, two[] = {2};
  const int block[] = {MPI_DISTRIBUTE_BLOCK}, cyclic[] = {MPI_DISTRIBUTE_CYCLIC};
  MPI_Datatype b1, c0, c2;
  REQUIRE(MPI_Type_create_darray(3, 1, 1, gsize, block, dflt, psize, MPI_ORDER_C, MPI_INT, &b1) ==
          MPI_SUCCESS);
  b1 = committed(b1);
  CHECK(as<int>(pack(data.data(), 1, b1)) == std::vector<int>{4, 5, 6, 7});
  CHECK(extent_of(b1).extent == 40);
  CHECK(extent_of(b1).lb == 0);
  REQUIRE(MPI_Type_create_darray(3, 0, 1, gsize, cyclic, two, psize, MPI_ORDER_C, MPI_INT, &c0) ==
          MPI_SUCCESS);
  c0 = committed(c0);
  CHECK(as<int>(pack(data.data(), 1, c0)) == std::vector<int>{0, 1, 6, 7});
  REQUIRE(MPI_Type_create_darray(3, 2, 1, gsize, cyclic, two, psize, MPI_ORDER_C, MPI_INT, &c2) ==
          MPI_SUCCESS);
  c2 = committed(c2);
  CHECK(as<int>(pack(data.data(), 1, c2)) == std::vector<int>{4, 5});
  // darray, 2-d block x block on a 2x2 grid, C order: rank 1 is row 0, column 1.
  const int g2[] = {4, 6}, p2[] = {2, 2}, d2[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
  const int a2[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
  MPI_Datatype grid;
  REQUIRE(MPI_Type_create_darray(4, 1, 2, g2, d2, a2, p2, MPI_ORDER_C, MPI_INT, &grid) ==
          MPI_SUCCESS);
  grid = committed(grid);
  CHECK(as<int>(pack(data.data(), 1, grid)) == std::vector<int>{3, 4, 5, 9, 10, 11});
  CHECK(extent_of(grid).extent == 96);

  CHECK(error_of([&] { core::type_subarray(2, sizes, subsizes, starts, 99, MPI_INT); }) ==
        MPI_ERR_ARG);
  const int bad_starts[] = {3, 0};
  CHECK(error_of([&] { core::type_subarray(2, sizes, subsizes, bad_starts, MPI_ORDER_C, MPI_INT); }) ==
        MPI_ERR_ARG);
  for (MPI_Datatype t : {c_order, f_order, cube, b1, c0, c2, grid}) free_type(t);
}

TEST_CASE("pack windows: any byte range of the packed stream", "[datatype]") {
  // An irregular nested type: 3 x {char, vector of 2 doubles with a hole}.
  MPI_Datatype v, s;
  REQUIRE(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &v) == MPI_SUCCESS);
  const int lengths[] = {1, 1};
  const MPI_Aint displacements[] = {0, 8};
  const MPI_Datatype types[] = {MPI_CHAR, v};
  REQUIRE(MPI_Type_create_struct(2, lengths, displacements, types, &s) == MPI_SUCCESS);
  s = committed(s);
  const core::Datatype& t = core::datatype(s);
  REQUIRE(t.size == 17);
  std::vector<unsigned char> source(4 * static_cast<std::size_t>(t.extent()));
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 7 + 1);
  const std::size_t count = 4;
  std::vector<std::byte> whole(count * t.size);
  t.pack(source.data(), count, whole.data());
  // Every window equals the matching slice of the whole stream...
  for (std::size_t offset = 0; offset < whole.size(); offset += 5) {
    for (std::size_t len : {std::size_t{1}, std::size_t{3}, std::size_t{11}, std::size_t{30}}) {
      if (offset + len > whole.size()) continue;
      std::vector<std::byte> part(len);
      t.pack_range(source.data(), count, offset, part);
      CHECK(std::memcmp(part.data(), whole.data() + offset, len) == 0);
    }
  }
  // ...and unpacking the stream in odd-sized fragments, out of order,
  // rebuilds exactly the data bytes.
  std::vector<unsigned char> target(source.size(), 0);
  std::vector<std::pair<std::size_t, std::size_t>> fragments;
  for (std::size_t offset = 0; offset < whole.size(); offset += 7)
    fragments.push_back({offset, std::min<std::size_t>(7, whole.size() - offset)});
  std::reverse(fragments.begin(), fragments.end());
  for (auto [offset, len] : fragments)
    t.unpack_range({whole.data() + offset, len}, count, offset, target.data());
  std::vector<unsigned char> expected(source.size(), 0);
  t.unpack(whole.data(), count, expected.data());
  CHECK(target == expected);
  // The data bytes are where the type map says: the char of element 1.
  CHECK(target[static_cast<std::size_t>(t.extent())] == source[static_cast<std::size_t>(t.extent())]);
  CHECK(target[1] == 0);  // a hole stays untouched
  CHECK(error_of([&] {
          std::vector<std::byte> too_far(2);
          t.pack_range(source.data(), count, whole.size() - 1, too_far);
        }) != MPI_SUCCESS);
  free_type(s);
  free_type(v);
}

TEST_CASE("element counts on complete and partial data", "[datatype]") {
  // {int, double}: 12 bytes of data, 2 basic elements.
  const int lengths[] = {1, 1};
  const MPI_Aint displacements[] = {0, 8};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype s;
  REQUIRE(MPI_Type_create_struct(2, lengths, displacements, types, &s) == MPI_SUCCESS);
  s = committed(s);
  MPI_Status status{};
  int count = -1, elements = -1;
  status.gridmpi_count = 36;  // three whole elements
  REQUIRE(MPI_Get_count(&status, s, &count) == MPI_SUCCESS);
  REQUIRE(MPI_Get_elements(&status, s, &elements) == MPI_SUCCESS);
  CHECK(count == 3);
  CHECK(elements == 6);
  status.gridmpi_count = 28;  // two elements and an int
  REQUIRE(MPI_Get_count(&status, s, &count) == MPI_SUCCESS);
  REQUIRE(MPI_Get_elements(&status, s, &elements) == MPI_SUCCESS);
  CHECK(count == MPI_UNDEFINED);
  CHECK(elements == 5);
  MPI_Count elements_x = -1;
  REQUIRE(MPI_Get_elements_x(&status, s, &elements_x) == MPI_SUCCESS);
  CHECK(elements_x == 5);
  status.gridmpi_count = 30;  // ends inside the double
  REQUIRE(MPI_Get_elements(&status, s, &elements) == MPI_SUCCESS);
  CHECK(elements == MPI_UNDEFINED);
  // On a vector: partial data counts the ints received.
  MPI_Datatype v;
  REQUIRE(MPI_Type_vector(3, 2, 5, MPI_INT, &v) == MPI_SUCCESS);
  status.gridmpi_count = 4 * 8;  // one vector (6 ints) and 2 more ints
  REQUIRE(MPI_Get_elements(&status, v, &elements) == MPI_SUCCESS);
  CHECK(elements == 8);
  REQUIRE(MPI_Get_count(&status, MPI_INT, &count) == MPI_SUCCESS);
  CHECK(count == 8);
  // Status_set_elements is the inverse.
  REQUIRE(MPI_Status_set_elements(&status, s, 5) == MPI_SUCCESS);
  CHECK(status.gridmpi_count == 28);
  REQUIRE(MPI_Status_set_elements_x(&status, v, 7) == MPI_SUCCESS);
  CHECK(status.gridmpi_count == 28);
  // Zero-size types count zero.
  MPI_Datatype empty;
  REQUIRE(MPI_Type_contiguous(0, MPI_INT, &empty) == MPI_SUCCESS);
  status.gridmpi_count = 0;
  REQUIRE(MPI_Get_count(&status, empty, &count) == MPI_SUCCESS);
  CHECK(count == 0);
  // The cancelled flag.
  int flag = -1;
  REQUIRE(MPI_Status_set_cancelled(&status, 1) == MPI_SUCCESS);
  REQUIRE(MPI_Test_cancelled(&status, &flag) == MPI_SUCCESS);
  CHECK(flag == 1);
  REQUIRE(MPI_Status_set_cancelled(&status, 0) == MPI_SUCCESS);
  REQUIRE(MPI_Test_cancelled(&status, &flag) == MPI_SUCCESS);
  CHECK(flag == 0);
  for (MPI_Datatype t : {s, v, empty}) free_type(t);
}

TEST_CASE("local typed copies and truncation", "[datatype]") {
  std::vector<int> data = iota_ints(20);
  MPI_Datatype v;
  REQUIRE(MPI_Type_vector(3, 1, 3, MPI_INT, &v) == MPI_SUCCESS);
  v = committed(v);
  std::vector<int> out(6, -1);
  core::copy_typed(data.data(), 2, v, out.data(), 6, MPI_INT);
  CHECK(out == std::vector<int>{0, 3, 6, 7, 10, 13});
  // Scattered to scattered.
  std::vector<int> scattered(20, -1);
  core::copy_typed(data.data(), 1, v, scattered.data(), 1, v);
  CHECK(scattered[0] == 0);
  CHECK(scattered[3] == 3);
  CHECK(scattered[6] == 6);
  CHECK(scattered[1] == -1);
  // A receive too small: the prefix is copied, then MPI_ERR_TRUNCATE.
  std::vector<int> small(2, -1);
  CHECK(error_of([&] { core::copy_typed(data.data(), 1, v, small.data(), 2, MPI_INT); }) ==
        MPI_ERR_TRUNCATE);
  CHECK(small == std::vector<int>{0, 3});
  free_type(v);
}

TEST_CASE("reference counting keeps freed types alive for their users", "[datatype]") {
  MPI_Datatype base, derived;
  REQUIRE(MPI_Type_vector(2, 1, 2, MPI_INT, &base) == MPI_SUCCESS);
  REQUIRE(MPI_Type_contiguous(2, base, &derived) == MPI_SUCCESS);
  MPI_Datatype base_handle = base;
  free_type(base);
  // The derived type still names it in its contents.
  int ni, na, nd, combiner;
  REQUIRE(MPI_Type_get_envelope(derived, &ni, &na, &nd, &combiner) == MPI_SUCCESS);
  CHECK(combiner == MPI_COMBINER_CONTIGUOUS);
  REQUIRE(ni == 1);
  REQUIRE(nd == 1);
  int integers[1];
  MPI_Datatype inner[1];
  REQUIRE(MPI_Type_get_contents(derived, 1, 0, 1, integers, nullptr, inner) == MPI_SUCCESS);
  CHECK(integers[0] == 2);
  CHECK(inner[0] == base_handle);
  int inner_ni, inner_na, inner_nd;
  REQUIRE(MPI_Type_get_envelope(inner[0], &inner_ni, &inner_na, &inner_nd, &combiner) ==
          MPI_SUCCESS);
  CHECK(combiner == MPI_COMBINER_VECTOR);
  int vector_args[3];
  MPI_Datatype vector_type[1];
  REQUIRE(MPI_Type_get_contents(inner[0], 3, 0, 1, vector_args, nullptr, vector_type) ==
          MPI_SUCCESS);
  CHECK(vector_args[0] == 2);
  CHECK(vector_args[1] == 1);
  CHECK(vector_args[2] == 2);
  CHECK(vector_type[0] == MPI_INT);
  free_type(inner[0]);  // the reference get_contents handed out

  // A pending operation keeps a freed type usable.
  derived = committed(derived);
  MPI_Datatype pending = derived;
  core::retain_datatype(pending);
  free_type(derived);
  std::vector<int> data = iota_ints(8);
  std::vector<std::byte> out(16);
  core::datatype(pending).pack(data.data(), 1, out.data());
  // Two vectors of ints {0, 2}, the second one extent (3 ints) later.
  CHECK(as<int>(out) == std::vector<int>{0, 2, 3, 5});
  std::size_t live = core::datatype_table().live_user_objects();
  core::release_datatype(pending);
  // Both the derived type and the base it held are gone now.
  CHECK(core::datatype_table().live_user_objects() == live - 2);
  CHECK(error_of([&] { core::datatype(pending); }) == MPI_ERR_TYPE);
  CHECK(error_of([&] { core::datatype(base_handle); }) == MPI_ERR_TYPE);
  // Predefined types cannot be freed.
  CHECK(error_of([] { core::type_free(MPI_INT); }) == MPI_ERR_TYPE);
}

TEST_CASE("constructor argument errors", "[datatype]") {
  CHECK(error_of([] { core::type_contiguous(-1, MPI_INT); }) == MPI_ERR_COUNT);
  CHECK(error_of([] { core::type_vector(2, -1, 1, MPI_INT); }) == MPI_ERR_ARG);
  CHECK(error_of([] { core::type_vector(2, 1, 1, MPI_DATATYPE_NULL); }) == MPI_ERR_TYPE);
  CHECK(error_of([] { core::type_indexed(2, nullptr, nullptr, MPI_INT); }) == MPI_ERR_ARG);
  CHECK(error_of([] { core::type_match_size(MPI_TYPECLASS_REAL, 3); }) == MPI_ERR_ARG);
  // An uncommitted type is refused for communication.
  MPI_Datatype t;
  REQUIRE(MPI_Type_contiguous(2, MPI_INT, &t) == MPI_SUCCESS);
  CHECK(error_of([&] { core::committed_datatype(t); }) == MPI_ERR_TYPE);
  free_type(t);
}

TEST_CASE("names, match_size, addresses", "[datatype]") {
  MPI_Datatype t;
  REQUIRE(MPI_Type_contiguous(2, MPI_INT, &t) == MPI_SUCCESS);
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  REQUIRE(MPI_Type_get_name(t, name, &len) == MPI_SUCCESS);
  CHECK(len == 0);
  REQUIRE(MPI_Type_set_name(t, "pair of ints") == MPI_SUCCESS);
  REQUIRE(MPI_Type_get_name(t, name, &len) == MPI_SUCCESS);
  CHECK(std::string(name) == "pair of ints");
  free_type(t);

  MPI_Datatype m;
  REQUIRE(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m) == MPI_SUCCESS);
  CHECK(core::datatype(m).size == 8);
  REQUIRE(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m) == MPI_SUCCESS);
  CHECK(core::datatype(m).size == 4);
  REQUIRE(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m) == MPI_SUCCESS);
  CHECK(core::datatype(m).size == 16);

  int array[4];
  MPI_Aint a0, a2;
  REQUIRE(MPI_Get_address(&array[0], &a0) == MPI_SUCCESS);
  REQUIRE(MPI_Get_address(&array[2], &a2) == MPI_SUCCESS);
  CHECK(MPI_Aint_diff(a2, a0) == 8);
  CHECK(MPI_Aint_add(a0, 8) == a2);
  MPI_Aint old_style;
  REQUIRE(MPI_Address(&array[2], &old_style) == MPI_SUCCESS);
  CHECK(old_style == a2);
  MPI_Count lb, extent;
  REQUIRE(MPI_Type_get_extent_x(MPI_DOUBLE_INT, &lb, &extent) == MPI_SUCCESS);
  CHECK(extent == 16);
  MPI_Count size;
  REQUIRE(MPI_Type_size_x(MPI_LONG_DOUBLE_INT, &size) == MPI_SUCCESS);
  CHECK(size == 20);
}

TEST_CASE("MPI_Pack position semantics across calls", "[datatype]") {
  int ints[3] = {1, 2, 3};
  double value = 6.5;
  char buffer[64];
  int position = 0;
  REQUIRE(MPI_Pack(ints, 3, MPI_INT, buffer, sizeof buffer, &position, MPI_COMM_WORLD) ==
          MPI_SUCCESS);
  CHECK(position == 12);
  REQUIRE(MPI_Pack(&value, 1, MPI_DOUBLE, buffer, sizeof buffer, &position, MPI_COMM_WORLD) ==
          MPI_SUCCESS);
  CHECK(position == 20);
  int size;
  REQUIRE(MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &size) == MPI_SUCCESS);
  CHECK(size == 12);
  int back[3] = {};
  double back_value = 0;
  position = 0;
  REQUIRE(MPI_Unpack(buffer, 20, &position, back, 3, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  REQUIRE(MPI_Unpack(buffer, 20, &position, &back_value, 1, MPI_DOUBLE, MPI_COMM_WORLD) ==
          MPI_SUCCESS);
  CHECK(position == 20);
  CHECK(back[2] == 3);
  CHECK(back_value == 6.5);
}

TEST_CASE("external32: big-endian, standard sizes, windows", "[datatype]") {
  auto external = [](const void* buf, int count, MPI_Datatype t) {
    MPI_Aint size = 0;
    REQUIRE(MPI_Pack_external_size("external32", count, t, &size) == MPI_SUCCESS);
    std::vector<unsigned char> out(static_cast<std::size_t>(size));
    MPI_Aint position = 0;
    REQUIRE(MPI_Pack_external("external32", buf, count, t, out.data(), size, &position) ==
            MPI_SUCCESS);
    REQUIRE(position == size);
    return out;
  };
  int i = 0x01020304;
  CHECK(external(&i, 1, MPI_INT) == std::vector<unsigned char>{1, 2, 3, 4});
  long l = -2;
  CHECK(external(&l, 1, MPI_LONG) == std::vector<unsigned char>{0xff, 0xff, 0xff, 0xfe});
  double d = 1.0;
  CHECK(external(&d, 1, MPI_DOUBLE) == std::vector<unsigned char>{0x3f, 0xf0, 0, 0, 0, 0, 0, 0});
  long double ld = -1.5L;
  std::vector<unsigned char> quad = external(&ld, 1, MPI_LONG_DOUBLE);
  REQUIRE(quad.size() == 16);
  CHECK(quad[0] == 0xbf);  // sign, exponent 0x3fff
  CHECK(quad[1] == 0xff);
  CHECK(quad[2] == 0x80);  // fraction .1 (binary)
  CHECK(quad[3] == 0x00);
  wchar_t w = L'A';
  CHECK(external(&w, 1, MPI_WCHAR) == std::vector<unsigned char>{0, 'A'});
  // DOUBLE_INT has no padding in external32: 12 bytes.
  struct {
    double v;
    int k;
  } pair = {2.0, 7};
  std::vector<unsigned char> p = external(&pair, 1, MPI_DOUBLE_INT);
  REQUIRE(p.size() == 12);
  CHECK(p[0] == 0x40);
  CHECK(p[11] == 7);

  // Round trip of a derived type with every conversion kind.
  struct Mixed {
    short s;
    long l;
    long double ld;
    std::complex<float> c;
    wchar_t w;
  };
  const int lengths[] = {1, 1, 1, 1, 1};
  const MPI_Aint displacements[] = {offsetof(Mixed, s), offsetof(Mixed, l), offsetof(Mixed, ld),
                                    offsetof(Mixed, c), offsetof(Mixed, w)};
  const MPI_Datatype types[] = {MPI_SHORT, MPI_LONG, MPI_LONG_DOUBLE, MPI_C_COMPLEX, MPI_WCHAR};
  MPI_Datatype mixed;
  REQUIRE(MPI_Type_create_struct(5, lengths, displacements, types, &mixed) == MPI_SUCCESS);
  mixed = committed(mixed);
  Mixed in[2] = {{-3, -123456, 3.25L, {1.5f, -2.5f}, L'z'}, {7, 99, -0.1L, {0, 1}, L'q'}};
  std::vector<unsigned char> bytes = external(in, 2, mixed);
  CHECK(bytes.size() == 2 * (2 + 4 + 16 + 8 + 2));
  Mixed out[2] = {};
  MPI_Aint position = 0;
  REQUIRE(MPI_Unpack_external("external32", bytes.data(), static_cast<MPI_Aint>(bytes.size()),
                              &position, out, 2, mixed) == MPI_SUCCESS);
  CHECK(out[0].s == -3);
  CHECK(out[0].l == -123456);
  CHECK(out[0].ld == 3.25L);
  CHECK(out[0].c == std::complex<float>(1.5f, -2.5f));
  CHECK(out[0].w == L'z');
  CHECK(out[1].ld == -0.1L);  // 64 significant bits survive binary128 exactly
  // The same stream unpacked in 5-byte windows in reverse order.
  Mixed windows[2] = {};
  for (std::size_t offset = (bytes.size() - 1) / 5 * 5;; offset -= 5) {
    std::size_t len = std::min<std::size_t>(5, bytes.size() - offset);
    core::unpack_external32_range({reinterpret_cast<std::byte*>(bytes.data()) + offset, len}, 2,
                                  mixed, offset, windows);
    if (offset == 0) break;
  }
  CHECK(windows[1].l == 99);
  CHECK(windows[0].ld == 3.25L);
  CHECK(windows[1].ld == -0.1L);
  CHECK(windows[1].c == std::complex<float>(0, 1));
  // Packing windows match the whole stream.
  std::vector<std::byte> window(9);
  core::pack_external32_range(in, 2, mixed, 17, window);
  CHECK(std::memcmp(window.data(), bytes.data() + 17, 9) == 0);
  CHECK(error_of([&] { core::external32_size(MPI_DATATYPE_NULL, 1); }) == MPI_ERR_TYPE);
  free_type(mixed);
}

TEST_CASE("external32: a value beyond its external size is MPI_ERR_CONVERSION; external64 keeps it", "[datatype]") {
  const core::ExternalFormat e32 = core::ExternalFormat::external32, e64 = core::ExternalFormat::external64;
  std::vector<std::byte> out(64);
  if (sizeof(long) == 8) {
    for (long v : {LONG_MAX, LONG_MIN, long{1} << 31, -(long{1} << 31) - 1}) {
      CAPTURE(v);
      CHECK(error_of([&] { core::pack_external32(&v, 1, MPI_LONG, out.data()); }) == MPI_ERR_CONVERSION);
    }
    unsigned long u = 1ul << 32;
    CHECK(error_of([&] { core::pack_external32(&u, 1, MPI_UNSIGNED_LONG, out.data()); }) == MPI_ERR_CONVERSION);
    // The message names the type, the value and the representation.
    long big = LONG_MAX;
    try {
      core::pack_external32(&big, 1, MPI_LONG, out.data());
      FAIL("no error");
    } catch (const gridmpi::MpiError& e) {
      CHECK_THAT(e.what(), Catch::Contains("MPI_LONG value 9223372036854775807") && Catch::Contains("external32"));
    }
    // The edges of 32 bits still fit.
    for (long v : {long{INT32_MAX}, long{INT32_MIN}}) CHECK_NOTHROW(core::pack_external32(&v, 1, MPI_LONG, out.data()));
    u = UINT32_MAX;
    CHECK_NOTHROW(core::pack_external32(&u, 1, MPI_UNSIGNED_LONG, out.data()));
  }
  if (sizeof(wchar_t) == 4) {
    wchar_t w = static_cast<wchar_t>(0x1F600);
    CHECK(error_of([&] { core::pack_external32(&w, 1, MPI_WCHAR, out.data()); }) == MPI_ERR_CONVERSION);
    CHECK_NOTHROW(core::pack_external32(&w, 1, MPI_WCHAR, out.data(), e64));
  }
  // external64: 8-byte big-endian long, round trip of the extremes, in a
  // struct with an int (sizes per representation), and windows.
  CHECK(core::external_size(MPI_LONG, 3, e64) == 24);
  CHECK(core::external_size(MPI_LONG, 3, e32) == 12);
  CHECK(core::external_size(MPI_LONG_INT, 1, e64) == 12);
  long values[3] = {LONG_MIN, LONG_MAX, -2};
  core::pack_external32(values, 3, MPI_LONG, out.data(), e64);
  if (sizeof(long) == 8) {
    CHECK(std::to_integer<int>(out[0]) == 0x80);
    CHECK(std::to_integer<int>(out[8]) == 0x7f);
    CHECK(std::to_integer<int>(out[16 + 7]) == 0xfe);
    CHECK(std::to_integer<int>(out[16]) == 0xff);
  }
  long back[3] = {};
  core::unpack_external32(out.data(), 3, MPI_LONG, back, e64);
  CHECK(back[0] == LONG_MIN);
  CHECK(back[1] == LONG_MAX);
  CHECK(back[2] == -2);
  long windows[3] = {};
  for (std::size_t offset = 0; offset < 24; offset += 5)
    core::unpack_external32_range({out.data() + offset, std::min<std::size_t>(5, 24 - offset)}, 3, MPI_LONG, offset,
                                  windows, e64);
  CHECK(windows[0] == LONG_MIN);
  CHECK(windows[1] == LONG_MAX);
  // Unpacking external32 windows merges into whatever the buffer held: a
  // long beyond 32 bits there is no error (only packing user data checks).
  long small[2] = {-5, 6};
  core::pack_external32(small, 2, MPI_LONG, out.data());
  long junk[2] = {LONG_MAX, LONG_MIN};
  for (std::size_t offset = 0; offset < 8; offset += 3)
    CHECK_NOTHROW(core::unpack_external32_range({out.data() + offset, std::min<std::size_t>(3, 8 - offset)}, 2,
                                                MPI_LONG, offset, junk));
  CHECK(junk[0] == -5);
  CHECK(junk[1] == 6);
  // The description two processes compare: stable within one build.
  CHECK(core::native_representation() == core::native_representation());
  CHECK(core::native_representation().size() > 100);
}

TEST_CASE("sticky markers under replication, negative strides and extents", "[datatype]") {
  // {(LB,-3), 4 x (BYTE,0), (UB,6)}: size 4, lb -3, extent 9.
  int blocks[3] = {1, 4, 1};
  MPI_Aint forward[3] = {-3, 0, 6};
  MPI_Datatype types[3] = {MPI_LB, MPI_BYTE, MPI_UB};
  MPI_Datatype base;
  REQUIRE(MPI_Type_struct(3, blocks, forward, types, &base) == MPI_SUCCESS);
  struct Case {
    int count, blocklength, stride;
    MPI_Aint lb, extent, true_lb, true_extent;
  };
  // Markers of every copy count: lb is the lowest LB, ub the highest UB.
  const Case cases[] = {
      {3, 4, 1, -3, 54, 0, 49},
      {3, 4, 5, -3, 126, 0, 121},
      {3, 4, -5, -93, 126, -90, 121},
  };
  for (const Case& c : cases) {
    MPI_Datatype v;
    REQUIRE(MPI_Type_vector(c.count, c.blocklength, c.stride, base, &v) == MPI_SUCCESS);
    Extent e = extent_of(v);
    INFO("stride " << c.stride);
    CHECK(e.size == 48);
    CHECK(e.lb == c.lb);
    CHECK(e.extent == c.extent);
    CHECK(e.true_lb == c.true_lb);
    CHECK(e.true_extent == c.true_extent);
    free_type(v);
  }
  // A negative extent: {(LB,6), 4 x (BYTE,0), (UB,-3)}.
  MPI_Aint backward[3] = {6, 0, -3};
  MPI_Datatype negative, three;
  REQUIRE(MPI_Type_struct(3, blocks, backward, types, &negative) == MPI_SUCCESS);
  CHECK(extent_of(negative).extent == -9);
  CHECK(extent_of(negative).lb == 6);
  REQUIRE(MPI_Type_contiguous(3, negative, &three) == MPI_SUCCESS);
  Extent e = extent_of(three);
  CHECK(e.lb == -12);
  CHECK(e.extent == 9);
  CHECK(e.true_lb == -18);
  CHECK(e.true_extent == 22);
  // Packing follows the type map: copies at 0, -9, -18.
  three = committed(three);
  std::vector<unsigned char> bytes(40);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i);
  std::vector<std::byte> packed = pack(bytes.data() + 20, 1, three);
  REQUIRE(packed.size() == 12);
  CHECK(static_cast<int>(packed[0]) == 20);
  CHECK(static_cast<int>(packed[4]) == 11);
  CHECK(static_cast<int>(packed[8]) == 2);
  for (MPI_Datatype t : {base, negative, three}) free_type(t);
}

TEST_CASE("random nested types pack like their definition", "[datatype]") {
  std::mt19937 random(12345);
  auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  for (int round = 0; round < 40; ++round) {
    // V = vector(c, b, s) of ints; T = indexed(bl[], d[]) of V; 3 elements of T.
    int c = pick(1, 4), b = pick(1, 3), s = pick(b, 6);
    int blocks = pick(1, 4);
    std::vector<int> bl(blocks), d(blocks);
    for (int i = 0; i < blocks; ++i) {
      bl[i] = pick(0, 3);
      d[i] = pick(0, 8);
    }
    MPI_Datatype v, t;
    REQUIRE(MPI_Type_vector(c, b, s, MPI_INT, &v) == MPI_SUCCESS);
    REQUIRE(MPI_Type_indexed(blocks, bl.data(), d.data(), v, &t) == MPI_SUCCESS);
    t = committed(t);
    // The definition: int indices of the type map, in order.
    int v_extent = (c - 1) * s + b;
    std::vector<int> one;
    int low = 1 << 30, high = -(1 << 30);
    for (int i = 0; i < blocks; ++i) {
      if (bl[i] == 0) continue;
      low = std::min(low, d[i] * v_extent);
      high = std::max(high, (d[i] + bl[i]) * v_extent);
      for (int m = 0; m < bl[i]; ++m)
        for (int j = 0; j < c; ++j)
          for (int k = 0; k < b; ++k) one.push_back((d[i] + m) * v_extent + j * s + k);
    }
    int t_extent = one.empty() ? 0 : high - low;
    REQUIRE(extent_of(t).extent == t_extent * 4);
    const int count = 3;
    std::vector<int> expected;
    for (int e = 0; e < count; ++e)
      for (int index : one) expected.push_back(e * t_extent + index);
    int last = expected.empty() ? 0 : *std::max_element(expected.begin(), expected.end());
    std::vector<int> data = iota_ints(last + 1);
    const core::Datatype& type = core::datatype(t);
    REQUIRE(type.size == one.size() * 4);
    std::vector<std::byte> whole(count * type.size);
    type.pack(data.data(), count, whole.data());
    CHECK(as<int>(whole) == expected);
    // A random window, packed and unpacked on its own.
    if (!whole.empty()) {
      std::size_t offset = static_cast<std::size_t>(pick(0, static_cast<int>(whole.size()) - 1));
      std::size_t len = static_cast<std::size_t>(pick(1, static_cast<int>(whole.size() - offset)));
      std::vector<std::byte> part(len);
      type.pack_range(data.data(), count, offset, part);
      CHECK(std::memcmp(part.data(), whole.data() + offset, len) == 0);
      std::vector<int> target(data.size(), -1);
      type.unpack_range(part, count, offset, target.data());
      // Exactly the ints (or int bytes) of the window were written.
      std::vector<unsigned char> expect_bytes(target.size() * 4, 0xff);
      for (std::size_t byte = offset; byte < offset + len; ++byte) {
        int index = expected[byte / 4];
        expect_bytes[index * 4 + byte % 4] = static_cast<unsigned char>(whole[byte]);
      }
      CHECK(std::memcmp(target.data(), expect_bytes.data(), expect_bytes.size()) == 0);
    }
    free_type(t);
    free_type(v);
  }
}

TEST_CASE("external32: a binary128 long double becomes the nearest x87 value", "[datatype]") {
  if (LDBL_MANT_DIG != 64) return;  // long double is not the x87 format here (Catch2 v2 has no SKIP)
  // binary128 images (big-endian) of 1 + f, f given by the 112 fraction bits.
  auto one_plus = [](unsigned __int128 fraction) {
    unsigned __int128 bits = (static_cast<unsigned __int128>(0x3fff) << 112) | fraction;
    std::vector<unsigned char> image(16);
    for (int i = 0; i < 16; ++i) image[static_cast<std::size_t>(i)] = static_cast<unsigned char>(bits >> (120 - 8 * i));
    long double x = 0;
    MPI_Aint position = 0;
    REQUIRE(MPI_Unpack_external("external32", image.data(), 16, &position, &x, 1, MPI_LONG_DOUBLE) == MPI_SUCCESS);
    return x;
  };
  const unsigned __int128 ulp = static_cast<unsigned __int128>(1) << 49;  // 2^-63 in binary128 fraction bits
  CHECK(one_plus(ulp / 2) == 1.0L);                                      // a tie: to even
  CHECK(one_plus(ulp / 2 + 1) == 1.0L + 0x1p-63L);                       // above half: up
  CHECK(one_plus(ulp + ulp / 2) == 1.0L + 0x1p-62L);                     // a tie from an odd value: up to even
  CHECK(one_plus(ulp / 2 - 1) == 1.0L);                                  // below half: down
  const unsigned __int128 all = (static_cast<unsigned __int128>(1) << 112) - 1;
  CHECK(one_plus(all) == 2.0L);                                          // the carry raises the exponent
}
