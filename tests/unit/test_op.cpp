// Reduction operations: every predefined op on a sample of types, the
// MINLOC/MAXLOC tie rule, derived types, ops undefined on a type, user ops
// and MPI_Reduce_local.  No MPI_Init needed.
#include <mpi.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <complex>
#include <cstdint>
#include <vector>

#include "core/datatype.hpp"
#include "core/op.hpp"

namespace core = gridmpi::core;

namespace {

template <class F>
int error_of(F&& f) {
  try {
    f();
  } catch (const gridmpi::MpiError& e) {
    return e.error_class();
  }
  return MPI_SUCCESS;
}

// inout = in op inout through the C API.
template <class T>
std::vector<T> reduce(MPI_Op op, MPI_Datatype type, std::vector<T> in, std::vector<T> inout) {
  REQUIRE(MPI_Reduce_local(in.data(), inout.data(), static_cast<int>(in.size()), type, op) ==
          MPI_SUCCESS);
  return inout;
}

}  // namespace

TEST_CASE("arithmetic ops on integer and floating types", "[op]") {
  std::vector<int> a{3, -7, 10, 0}, b{5, -2, 10, -1};
  CHECK(reduce(MPI_MAX, MPI_INT, a, b) == std::vector<int>{5, -2, 10, 0});
  CHECK(reduce(MPI_MIN, MPI_INT, a, b) == std::vector<int>{3, -7, 10, -1});
  CHECK(reduce(MPI_SUM, MPI_INT, a, b) == std::vector<int>{8, -9, 20, -1});
  CHECK(reduce(MPI_PROD, MPI_INT, a, b) == std::vector<int>{15, 14, 100, 0});
  // Unsigned arithmetic wraps.
  std::vector<unsigned char> ua{200, 1}, ub{100, 255};
  CHECK(reduce(MPI_SUM, MPI_UNSIGNED_CHAR, ua, ub) == std::vector<unsigned char>{44, 0});
  CHECK(reduce(MPI_MAX, MPI_UNSIGNED_CHAR, ua, ub) == std::vector<unsigned char>{200, 255});
  std::vector<std::int64_t> la{1LL << 40, -5}, lb{3, 7};
  CHECK(reduce(MPI_PROD, MPI_INT64_T, la, lb) == std::vector<std::int64_t>{3LL << 40, -35});
  CHECK(reduce(MPI_SUM, MPI_LONG_LONG, la, lb) == std::vector<std::int64_t>{(1LL << 40) + 3, 2});
  std::vector<double> da{1.5, -2.0, 8.0}, db{2.0, -3.0, 0.5};
  CHECK(reduce(MPI_SUM, MPI_DOUBLE, da, db) == std::vector<double>{3.5, -5.0, 8.5});
  CHECK(reduce(MPI_PROD, MPI_DOUBLE, da, db) == std::vector<double>{3.0, 6.0, 4.0});
  CHECK(reduce(MPI_MAX, MPI_DOUBLE_PRECISION, da, db) == std::vector<double>{2.0, -2.0, 8.0});
  std::vector<float> fa{1.0f, 4.0f}, fb{2.0f, 3.0f};
  CHECK(reduce(MPI_MIN, MPI_FLOAT, fa, fb) == std::vector<float>{1.0f, 3.0f});
  std::vector<long double> ea{1.25L}, eb{0.5L};
  CHECK(reduce(MPI_SUM, MPI_LONG_DOUBLE, ea, eb) == std::vector<long double>{1.75L});
  std::vector<short> sa{300, -4}, sb{2, 2};
  CHECK(reduce(MPI_PROD, MPI_SHORT, sa, sb) == std::vector<short>{600, -8});
  std::vector<MPI_Aint> aa{1000}, ab{24};
  CHECK(reduce(MPI_SUM, MPI_AINT, aa, ab) == std::vector<MPI_Aint>{1024});
  std::vector<int> ia{7}, ib{-3};
  CHECK(reduce(MPI_MAX, MPI_INTEGER, ia, ib) == std::vector<int>{7});
}

TEST_CASE("complex sums and products", "[op]") {
  using C = std::complex<double>;
  std::vector<C> a{{1, 2}, {0, 1}}, b{{3, -1}, {0, 1}};
  CHECK(reduce(MPI_SUM, MPI_C_DOUBLE_COMPLEX, a, b) == std::vector<C>{{4, 1}, {0, 2}});
  CHECK(reduce(MPI_PROD, MPI_DOUBLE_COMPLEX, a, b) == std::vector<C>{{5, 5}, {-1, 0}});
  using F = std::complex<float>;
  std::vector<F> fa{{1, 1}}, fb{{1, -1}};
  CHECK(reduce(MPI_PROD, MPI_C_FLOAT_COMPLEX, fa, fb) == std::vector<F>{{2, 0}});
  CHECK(error_of([] { core::check_op(MPI_MAX, MPI_C_DOUBLE_COMPLEX); }) == MPI_ERR_OP);
}

TEST_CASE("logical and bitwise ops", "[op]") {
  std::vector<int> a{0, 0, 5, 5}, b{0, 3, 0, -1};
  CHECK(reduce(MPI_LAND, MPI_INT, a, b) == std::vector<int>{0, 0, 0, 1});
  CHECK(reduce(MPI_LOR, MPI_INT, a, b) == std::vector<int>{0, 1, 1, 1});
  CHECK(reduce(MPI_LXOR, MPI_INT, a, b) == std::vector<int>{0, 1, 1, 0});
  bool ba[4] = {false, false, true, true}, bb[4] = {false, true, false, true};
  REQUIRE(MPI_Reduce_local(ba, bb, 4, MPI_C_BOOL, MPI_LXOR) == MPI_SUCCESS);
  CHECK((bb[0] == false && bb[1] == true && bb[2] == true && bb[3] == false));
  std::vector<int> la{1, 0}, lb{1, 1};
  CHECK(reduce(MPI_LAND, MPI_LOGICAL, la, lb) == std::vector<int>{1, 0});
  std::vector<unsigned> ua{0xf0f0u, 0x1u}, ub{0xff00u, 0x3u};
  CHECK(reduce(MPI_BAND, MPI_UNSIGNED, ua, ub) == std::vector<unsigned>{0xf000u, 0x1u});
  CHECK(reduce(MPI_BOR, MPI_UNSIGNED, ua, ub) == std::vector<unsigned>{0xfff0u, 0x3u});
  CHECK(reduce(MPI_BXOR, MPI_UNSIGNED, ua, ub) == std::vector<unsigned>{0x0ff0u, 0x2u});
  std::vector<unsigned char> bytes_a{0x0f}, bytes_b{0x3c};
  CHECK(reduce(MPI_BXOR, MPI_BYTE, bytes_a, bytes_b) == std::vector<unsigned char>{0x33});
  // Undefined pairs.
  CHECK(error_of([] { core::check_op(MPI_BAND, MPI_FLOAT); }) == MPI_ERR_OP);
  CHECK(error_of([] { core::check_op(MPI_LAND, MPI_DOUBLE); }) == MPI_ERR_OP);
  CHECK(error_of([] { core::check_op(MPI_SUM, MPI_BYTE); }) == MPI_ERR_OP);
  CHECK(error_of([] { core::check_op(MPI_MAX, MPI_C_BOOL); }) == MPI_ERR_OP);
  CHECK(error_of([] { core::check_op(MPI_SUM, MPI_2INT); }) == MPI_ERR_OP);
  CHECK(error_of([] { core::check_op(MPI_MINLOC, MPI_INT); }) == MPI_ERR_OP);
  int x = 1, y = 2;
  CHECK(error_of([&] { core::op(MPI_BAND).apply(&x, &y, 1, MPI_FLOAT); }) == MPI_ERR_OP);
}

TEST_CASE("MINLOC and MAXLOC: the lower index wins ties", "[op]") {
  struct IntPair {
    int value, index;
  };
  IntPair a[3] = {{5, 3}, {5, 1}, {2, 0}};
  IntPair b[3] = {{5, 2}, {5, 4}, {9, 7}};
  IntPair minloc[3], maxloc[3];
  std::copy(b, b + 3, minloc);
  std::copy(b, b + 3, maxloc);
  REQUIRE(MPI_Reduce_local(a, minloc, 3, MPI_2INT, MPI_MINLOC) == MPI_SUCCESS);
  REQUIRE(MPI_Reduce_local(a, maxloc, 3, MPI_2INT, MPI_MAXLOC) == MPI_SUCCESS);
  CHECK(minloc[0].value == 5);
  CHECK(minloc[0].index == 2);  // tie: min(3, 2)
  CHECK(minloc[1].index == 1);  // tie: min(1, 4)
  CHECK(minloc[2].value == 2);
  CHECK(minloc[2].index == 0);
  CHECK(maxloc[0].index == 2);
  CHECK(maxloc[2].value == 9);
  CHECK(maxloc[2].index == 7);

  // DOUBLE_INT has 4 bytes of padding per pair (extent 16).
  struct DoubleInt {
    double value;
    int index;
  };
  static_assert(sizeof(DoubleInt) == 16);
  DoubleInt da[2] = {{1.5, 10}, {-3.0, 4}};
  DoubleInt db[2] = {{1.5, 6}, {-1.0, 2}};
  REQUIRE(MPI_Reduce_local(da, db, 2, MPI_DOUBLE_INT, MPI_MINLOC) == MPI_SUCCESS);
  CHECK(db[0].value == 1.5);
  CHECK(db[0].index == 6);
  CHECK(db[1].value == -3.0);
  CHECK(db[1].index == 4);
  // SHORT_INT: the index sits at offset 4.
  struct ShortInt {
    short value;
    int index;
  };
  ShortInt sa[1] = {{7, 1}}, sb[1] = {{3, 0}};
  REQUIRE(MPI_Reduce_local(sa, sb, 1, MPI_SHORT_INT, MPI_MAXLOC) == MPI_SUCCESS);
  CHECK(sb[0].value == 7);
  CHECK(sb[0].index == 1);
  // 2REAL: value and index are both REAL.
  float ra[2] = {2.0f, 5.0f}, rb[2] = {2.0f, 3.0f};
  REQUIRE(MPI_Reduce_local(ra, rb, 1, MPI_2REAL, MPI_MAXLOC) == MPI_SUCCESS);
  CHECK(rb[1] == 3.0f);

  // A derived type made of pairs goes through the staged (packed) path.
  MPI_Datatype pairs;
  REQUIRE(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &pairs) == MPI_SUCCESS);
  REQUIRE(MPI_Type_commit(&pairs) == MPI_SUCCESS);
  CHECK(core::datatype(pairs).reduction_basic == MPI_DOUBLE_INT);
  DoubleInt pa[2] = {{4.0, 9}, {0.5, 3}};
  DoubleInt pb[2] = {{4.0, 8}, {7.0, 1}};
  REQUIRE(MPI_Reduce_local(pa, pb, 1, pairs, MPI_MAXLOC) == MPI_SUCCESS);
  CHECK(pb[0].index == 8);
  CHECK(pb[1].value == 7.0);
  CHECK(pb[1].index == 1);
  REQUIRE(MPI_Type_free(&pairs) == MPI_SUCCESS);
}

TEST_CASE("ops on derived types of one basic type", "[op]") {
  // Every other int of 8: the holes must stay untouched.
  MPI_Datatype v;
  REQUIRE(MPI_Type_vector(4, 1, 2, MPI_INT, &v) == MPI_SUCCESS);
  REQUIRE(MPI_Type_commit(&v) == MPI_SUCCESS);
  CHECK(core::datatype(v).reduction_basic == MPI_INT);
  std::vector<int> in{1, 100, 2, 100, 3, 100, 4};
  std::vector<int> inout{10, -1, 20, -1, 30, -1, 40};
  REQUIRE(MPI_Reduce_local(in.data(), inout.data(), 1, v, MPI_SUM) == MPI_SUCCESS);
  CHECK(inout == std::vector<int>{11, -1, 22, -1, 33, -1, 44});
  // A contiguous derived type takes the direct path.
  MPI_Datatype c;
  REQUIRE(MPI_Type_contiguous(3, MPI_DOUBLE, &c) == MPI_SUCCESS);
  REQUIRE(MPI_Type_commit(&c) == MPI_SUCCESS);
  std::vector<double> x{1, 2, 3, 4, 5, 6}, y{1, 1, 1, 1, 1, 1};
  REQUIRE(MPI_Reduce_local(x.data(), y.data(), 2, c, MPI_PROD) == MPI_SUCCESS);
  CHECK(y == std::vector<double>{1, 2, 3, 4, 5, 6});
  // A struct mixing int and double has no reduction type.
  const int lengths[] = {1, 1};
  const MPI_Aint displacements[] = {0, 8};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype mixed;
  REQUIRE(MPI_Type_create_struct(2, lengths, displacements, types, &mixed) == MPI_SUCCESS);
  CHECK(core::datatype(mixed).reduction_basic == MPI_DATATYPE_NULL);
  CHECK(error_of([&] { core::check_op(MPI_SUM, mixed); }) == MPI_ERR_OP);
  // ...but MPI_REPLACE and MPI_NO_OP work on any type.
  struct {
    int i;
    double d;
  } from = {4, 2.5}, to = {0, 0.0};
  REQUIRE(MPI_Type_commit(&mixed) == MPI_SUCCESS);
  core::op(MPI_REPLACE).apply(&from, &to, 1, mixed);
  CHECK(to.i == 4);
  CHECK(to.d == 2.5);
  from.i = 99;
  core::op(MPI_NO_OP).apply(&from, &to, 1, mixed);
  CHECK(to.i == 4);
  for (MPI_Datatype t : {v, c, mixed}) REQUIRE(MPI_Type_free(&t) == MPI_SUCCESS);
}

namespace {

int calls = 0;
int seen_len = 0;
MPI_Datatype seen_type = MPI_DATATYPE_NULL;

// Non-commutative: inout = in * 10 + inout (order matters).
void concat_digits(void* in, void* inout, int* len, MPI_Datatype* type) {
  ++calls;
  seen_len = *len;
  seen_type = *type;
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] * 10 + b[i];
}

}  // namespace

TEST_CASE("user ops get the user's datatype and count", "[op]") {
  MPI_Op op;
  REQUIRE(MPI_Op_create(concat_digits, 0, &op) == MPI_SUCCESS);
  int commute = -1;
  REQUIRE(MPI_Op_commutative(op, &commute) == MPI_SUCCESS);
  CHECK(commute == 0);
  REQUIRE(MPI_Op_commutative(MPI_SUM, &commute) == MPI_SUCCESS);
  CHECK(commute == 1);
  MPI_Datatype pair;
  REQUIRE(MPI_Type_contiguous(2, MPI_INT, &pair) == MPI_SUCCESS);
  REQUIRE(MPI_Type_commit(&pair) == MPI_SUCCESS);
  int in[4] = {1, 2, 3, 4}, inout[4] = {5, 6, 7, 8};
  calls = 0;
  REQUIRE(MPI_Reduce_local(in, inout, 2, pair, op) == MPI_SUCCESS);
  CHECK(calls == 1);
  CHECK(seen_len == 2);
  CHECK(seen_type == pair);
  // The function interprets the type itself: here 2 "elements" of 2 ints,
  // it only touches what it chooses to.
  CHECK(inout[0] == 15);
  CHECK(inout[1] == 26);
  CHECK(core::op(op).commutative == false);
  MPI_Op freed = op;
  REQUIRE(MPI_Op_free(&op) == MPI_SUCCESS);
  CHECK(op == MPI_OP_NULL);
  CHECK(error_of([&] { core::op(freed); }) == MPI_ERR_OP);
  CHECK(error_of([] { core::op_free(MPI_SUM); }) == MPI_ERR_OP);
  CHECK(error_of([] { core::op(MPI_OP_NULL); }) == MPI_ERR_OP);
  CHECK(core::op_name(MPI_MAXLOC) == "MPI_MAXLOC");
  REQUIRE(MPI_Type_free(&pair) == MPI_SUCCESS);
}

TEST_CASE("a user op freed while in use lives until released", "[op]") {
  MPI_Op op;
  REQUIRE(MPI_Op_create(concat_digits, 1, &op) == MPI_SUCCESS);
  MPI_Op pending = op;
  core::retain_op(pending);  // as a nonblocking collective does
  REQUIRE(MPI_Op_free(&op) == MPI_SUCCESS);
  int in[1] = {4}, inout[1] = {2};
  core::op(pending).apply(in, inout, 1, MPI_INT);
  CHECK(inout[0] == 42);
  core::release_op(pending);
  CHECK(error_of([&] { core::op(pending); }) == MPI_ERR_OP);
  // Predefined ops ignore reference counts.
  core::retain_op(MPI_SUM);
  core::release_op(MPI_SUM);
  core::release_op(MPI_SUM);
  CHECK(core::op(MPI_SUM).predefined);
}
