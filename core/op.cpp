// Reduction operations: kernels for every (predefined op, predefined type)
// pair the standard defines, MINLOC/MAXLOC on the pair types, user ops, and
// Op::apply, which runs a kernel over any datatype whose basic elements are
// all of one type (derived types are staged through packed buffers).
#include "core/op.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>

#include "core/datatype.hpp"

namespace gridmpi::core {

namespace {

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

// inout[i] = in[i] op inout[i] for n packed elements (loads through memcpy:
// user buffers need not be aligned).
using Kernel = void (*)(const std::byte* in, std::byte* inout, std::size_t n);
// The same for pairs; `packed` selects the packed layout (value, index back
// to back) instead of the C struct layout with padding.
using PairKernel = void (*)(const std::byte* in, std::byte* inout, std::size_t n, bool packed);

template <class T, class F>
void elementwise(const std::byte* in, std::byte* inout, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, in + i * sizeof(T), sizeof(T));
    std::memcpy(&b, inout + i * sizeof(T), sizeof(T));
    b = f(a, b);
    std::memcpy(inout + i * sizeof(T), &b, sizeof(T));
  }
}

// Integer arithmetic wraps (as the hardware does) instead of being undefined
// on signed overflow: computed in an unsigned type at least as wide as int.
template <class T>
struct wide_unsigned_of {
  using type = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
};
// Fortran INTEGER(KIND=16); std::make_unsigned does not know it in strict C++.
__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;
template <>
struct wide_unsigned_of<int128> {
  using type = uint128;
};
template <class T>
using wide_unsigned = typename wide_unsigned_of<T>::type;

template <class T>
Kernel integer_kernel(MPI_Op op) {
  using U = wide_unsigned<T>;
  switch (op) {
    case MPI_MAX:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return x > y ? x : y; });
      };
    case MPI_MIN:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return x < y ? x : y; });
      };
    case MPI_SUM:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return static_cast<T>(static_cast<U>(x) + static_cast<U>(y)); });
      };
    case MPI_PROD:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return static_cast<T>(static_cast<U>(x) * static_cast<U>(y)); });
      };
    case MPI_LAND:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return static_cast<T>(x != 0 && y != 0); });
      };
    case MPI_LOR:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return static_cast<T>(x != 0 || y != 0); });
      };
    case MPI_LXOR:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return static_cast<T>((x != 0) != (y != 0)); });
      };
    case MPI_BAND:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return static_cast<T>(x & y); });
      };
    case MPI_BOR:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return static_cast<T>(x | y); });
      };
    case MPI_BXOR:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return static_cast<T>(x ^ y); });
      };
  }
  return nullptr;
}

template <class T>
Kernel floating_kernel(MPI_Op op) {
  switch (op) {
    case MPI_MAX:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return x > y ? x : y; });
      };
    case MPI_MIN:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return x < y ? x : y; });
      };
    case MPI_SUM:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return x + y; });
      };
    case MPI_PROD:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return x * y; });
      };
  }
  return nullptr;
}

template <class T>
Kernel complex_kernel(MPI_Op op) {
  switch (op) {
    case MPI_SUM:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return x + y; });
      };
    case MPI_PROD:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return x * y; });
      };
  }
  return nullptr;
}

template <>
Kernel complex_kernel<quad_complex>(MPI_Op op) {
  using T = quad_complex;
  switch (op) {
    case MPI_SUM:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) { return T{x.re + y.re, x.im + y.im}; });
      };
    case MPI_PROD:
      return [](const std::byte* a, std::byte* b, std::size_t n) {
        elementwise<T>(a, b, n, [](T x, T y) {
          return T{x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re};
        });
      };
  }
  return nullptr;
}

// C _Bool / C++ bool: one byte, any non-zero value is true, results are 0/1.
Kernel bool_kernel(MPI_Op op) {
  using T = unsigned char;
  switch (op) {
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR:
      return integer_kernel<T>(op);
  }
  return nullptr;
}

// Fortran LOGICAL: an INTEGER-sized value, 0 is false.
Kernel logical_kernel(MPI_Op op) {
  switch (op) {
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR:
      return integer_kernel<int>(op);
  }
  return nullptr;
}

Kernel byte_kernel(MPI_Op op) {
  switch (op) {
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR:
      return integer_kernel<unsigned char>(op);
  }
  return nullptr;
}

// The kernel of a predefined op on a basic (non-pair) type, or nullptr when
// the standard does not define the op on the type.  MPI_CHAR and MPI_WCHAR
// count as C integers, and logical ops are accepted on Fortran integers, as
// other implementations do.
Kernel kernel_for(MPI_Op op, MPI_Datatype type) {
  switch (type) {
    case MPI_CHAR: return integer_kernel<char>(op);
    case MPI_SIGNED_CHAR: return integer_kernel<signed char>(op);
    case MPI_UNSIGNED_CHAR: return integer_kernel<unsigned char>(op);
    case MPI_WCHAR: return integer_kernel<wchar_t>(op);
    case MPI_SHORT: return integer_kernel<short>(op);
    case MPI_UNSIGNED_SHORT: return integer_kernel<unsigned short>(op);
    case MPI_INT: return integer_kernel<int>(op);
    case MPI_UNSIGNED: return integer_kernel<unsigned>(op);
    case MPI_LONG: return integer_kernel<long>(op);
    case MPI_UNSIGNED_LONG: return integer_kernel<unsigned long>(op);
    case MPI_LONG_LONG_INT: return integer_kernel<long long>(op);
    case MPI_UNSIGNED_LONG_LONG: return integer_kernel<unsigned long long>(op);
    case MPI_INT8_T:
    case MPI_INTEGER1: return integer_kernel<std::int8_t>(op);
    case MPI_INT16_T:
    case MPI_INTEGER2: return integer_kernel<std::int16_t>(op);
    case MPI_INT32_T:
    case MPI_INTEGER:
    case MPI_INTEGER4: return integer_kernel<std::int32_t>(op);
    case MPI_INT64_T:
    case MPI_INTEGER8:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT: return integer_kernel<std::int64_t>(op);
    case GRIDMPI_INTEGER16: return integer_kernel<int128>(op);
    case MPI_UINT8_T: return integer_kernel<std::uint8_t>(op);
    case MPI_UINT16_T: return integer_kernel<std::uint16_t>(op);
    case MPI_UINT32_T: return integer_kernel<std::uint32_t>(op);
    case MPI_UINT64_T: return integer_kernel<std::uint64_t>(op);
    case MPI_FLOAT:
    case MPI_REAL:
    case MPI_REAL4: return floating_kernel<float>(op);
    case MPI_DOUBLE:
    case MPI_DOUBLE_PRECISION:
    case MPI_REAL8: return floating_kernel<double>(op);
    case MPI_LONG_DOUBLE: return floating_kernel<long double>(op);
    case MPI_REAL16: return floating_kernel<quad>(op);
    case MPI_C_COMPLEX:
    case MPI_COMPLEX:
    case MPI_COMPLEX8:
    case MPI_CXX_FLOAT_COMPLEX: return complex_kernel<std::complex<float>>(op);
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16:
    case MPI_CXX_DOUBLE_COMPLEX: return complex_kernel<std::complex<double>>(op);
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX: return complex_kernel<std::complex<long double>>(op);
    case MPI_COMPLEX32: return complex_kernel<quad_complex>(op);
    case MPI_C_BOOL:
    case MPI_CXX_BOOL: return bool_kernel(op);
    case MPI_LOGICAL: return logical_kernel(op);
    case MPI_BYTE: return byte_kernel(op);
  }
  return nullptr;
}

template <class V, class I>
struct LocPair {
  V value;
  I index;
};

// MINLOC/MAXLOC: the better value wins; on a tie the lower index wins.
template <class V, class I, bool Max>
void loc_kernel(const std::byte* in, std::byte* inout, std::size_t n, bool packed) {
  using P = LocPair<V, I>;
  std::size_t stride = packed ? sizeof(V) + sizeof(I) : sizeof(P);
  std::size_t index_offset = packed ? sizeof(V) : offsetof(P, index);
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* a = in + i * stride;
    std::byte* b = inout + i * stride;
    V va, vb;
    I ia, ib;
    std::memcpy(&va, a, sizeof(V));
    std::memcpy(&vb, b, sizeof(V));
    std::memcpy(&ia, a + index_offset, sizeof(I));
    std::memcpy(&ib, b + index_offset, sizeof(I));
    bool better = Max ? va > vb : va < vb;
    if (better) {
      std::memcpy(b, &va, sizeof(V));
      std::memcpy(b + index_offset, &ia, sizeof(I));
    } else if (va == vb && ia < ib) {
      std::memcpy(b + index_offset, &ia, sizeof(I));
    }
  }
}

template <class V, class I>
PairKernel loc(MPI_Op op) {
  if (op == MPI_MAXLOC) return loc_kernel<V, I, true>;
  if (op == MPI_MINLOC) return loc_kernel<V, I, false>;
  return nullptr;
}

PairKernel pair_kernel_for(MPI_Op op, MPI_Datatype type) {
  switch (type) {
    case MPI_FLOAT_INT: return loc<float, int>(op);
    case MPI_DOUBLE_INT: return loc<double, int>(op);
    case MPI_LONG_INT: return loc<long, int>(op);
    case MPI_2INT: return loc<int, int>(op);
    case MPI_SHORT_INT: return loc<short, int>(op);
    case MPI_LONG_DOUBLE_INT: return loc<long double, int>(op);
    case MPI_2REAL: return loc<float, float>(op);
    case MPI_2DOUBLE_PRECISION: return loc<double, double>(op);
    case MPI_2INTEGER: return loc<int, int>(op);
  }
  return nullptr;
}

const char* const predefined_op_names[GRIDMPI_PREDEFINED_OP_COUNT] = {
    "MPI_OP_NULL", "MPI_MAX",  "MPI_MIN", "MPI_SUM",    "MPI_PROD",    "MPI_LAND",
    "MPI_BAND",    "MPI_LOR",  "MPI_BOR", "MPI_LXOR",   "MPI_BXOR",    "MPI_MINLOC",
    "MPI_MAXLOC",  "MPI_REPLACE", "MPI_NO_OP"};

HandleTable<Op> build_table() {
  HandleTable<Op> table(MPI_ERR_OP);
  for (MPI_Op h = 1; h < GRIDMPI_PREDEFINED_OP_COUNT; ++h) {
    auto op = std::make_unique<Op>();
    op->handle = h;
    op->predefined = true;
    op->commutative = true;
    predefined_ops[h] = op.get();
    table.put_at(h, std::move(op));
  }
  return table;
}

std::string type_description(const Datatype& t) {
  if (t.predefined) return t.name;
  std::string d = "derived datatype " + std::to_string(t.handle);
  if (!t.name.empty()) d += " (" + t.name + ")";
  return d;
}

[[noreturn]] void undefined(MPI_Op op, const Datatype& t) {
  std::string message = op_name(op) + " is not defined for " + type_description(t);
  if (!t.predefined && t.reduction_basic == MPI_DATATYPE_NULL)
    message += ", whose basic elements are not all of one predefined type";
  else if (!t.predefined)
    message += " of " + datatype(t.reduction_basic).name;
  throw MpiError(MPI_ERR_OP, message);
}

// Runs a kernel over a non-contiguous type: packs both operands a window at
// a time, combines, unpacks the result.  `unit` is the packed size of one
// reduction element, so windows never split one.
template <class Combine>
void staged(const Datatype& t, const void* in, void* inout, int count, std::size_t unit,
            Combine combine) {
  std::size_t total = static_cast<std::size_t>(count) * t.size;
  std::size_t window = std::max<std::size_t>(1, (64 * 1024) / unit) * unit;
  window = std::min(window, total);
  auto a = std::make_unique<std::byte[]>(window);
  auto b = std::make_unique<std::byte[]>(window);
  for (std::size_t offset = 0; offset < total; offset += window) {
    std::size_t len = std::min(window, total - offset);
    t.pack_range(in, count, offset, {a.get(), len});
    t.pack_range(inout, count, offset, {b.get(), len});
    combine(a.get(), b.get(), len / unit);
    t.unpack_range({b.get(), len}, count, offset, inout);
  }
}

// Guards creation and reference counts: a progress thread may end a
// nonblocking collective (and release its op) while the application
// creates another.
std::mutex& op_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

Op* predefined_ops[GRIDMPI_PREDEFINED_OP_COUNT] = {};

HandleTable<Op>& op_table() {
  static HandleTable<Op> table = build_table();
  return table;
}

Op& op_lookup(MPI_Op handle) {
  if (handle == MPI_OP_NULL) throw MpiError(MPI_ERR_OP, "op is MPI_OP_NULL");
  Op* o = op_table().find(handle);
  if (!o) throw MpiError(MPI_ERR_OP, "invalid op handle " + std::to_string(handle));
  return *o;
}

std::string op_name(MPI_Op handle) {
  if (handle >= 0 && handle < GRIDMPI_PREDEFINED_OP_COUNT) return predefined_op_names[handle];
  return "user op " + std::to_string(handle);
}

namespace {

template <class Function>
MPI_Op add_user_op(Function* function, Function* Op::*field, bool commutative) {
  if (!function) throw MpiError(MPI_ERR_ARG, "the user function is a null pointer");
  auto o = std::make_unique<Op>();
  (*o).*field = function;
  o->commutative = commutative;
  o->predefined = false;
  std::lock_guard lock(op_mutex());
  Op* raw = o.get();
  raw->handle = op_table().add(std::move(o));
  return raw->handle;
}

}  // namespace

MPI_Op op_create(MPI_User_function* function, bool commutative) {
  return add_user_op(function, &Op::user_function, commutative);
}

MPI_Op op_create_c(MPI_User_function_c* function, bool commutative) {
  return add_user_op(function, &Op::user_function_c, commutative);
}

void op_free(MPI_Op handle) {
  Op& o = op(handle);
  if (o.predefined) throw MpiError(MPI_ERR_OP, "cannot free the predefined op " + op_name(handle));
  release_op(handle);
}

void retain_op(MPI_Op handle) {
  std::lock_guard lock(op_mutex());
  Op& o = op(handle);
  if (!o.predefined) ++o.refcount;
}

void release_op(MPI_Op handle) {
  std::lock_guard lock(op_mutex());
  Op& o = op(handle);
  if (o.predefined) return;
  if (--o.refcount == 0) op_table().release(handle);
}

void check_op(MPI_Op handle, MPI_Datatype type) {
  const Op& o = op(handle);
  const Datatype& t = datatype(type);
  if (o.is_user() || handle == MPI_REPLACE || handle == MPI_NO_OP || t.size == 0) return;
  MPI_Datatype basic = t.reduction_basic;
  if (basic == MPI_DATATYPE_NULL) undefined(handle, t);
  bool defined = is_pair_type(basic) ? pair_kernel_for(handle, basic) != nullptr
                                     : kernel_for(handle, basic) != nullptr;
  if (!defined) undefined(handle, t);
}

void Op::apply(const void* in, void* inout, int count, MPI_Datatype type) const {
  if (user_function) {
    int len = count;
    MPI_Datatype user_type = type;
    // The user function's signature takes non-const input (MPI-1 heritage).
    user_function(const_cast<void*>(in), inout, &len, &user_type);
    return;
  }
  if (user_function_c) {
    MPI_Count len = count;
    MPI_Datatype user_type = type;
    user_function_c(const_cast<void*>(in), inout, &len, &user_type);
    return;
  }
  const Datatype& t = datatype(type);
  if (handle == MPI_NO_OP) return;
  if (handle == MPI_REPLACE) {
    copy_typed(in, count, type, inout, count, type);
    return;
  }
  if (t.size == 0) return;
  // check_op's verdict from the one kernel lookup the call needs.
  MPI_Datatype basic = t.reduction_basic;
  if (basic == MPI_DATATYPE_NULL) undefined(handle, t);
  auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  if (is_pair_type(basic)) {
    PairKernel k = pair_kernel_for(handle, basic);
    if (!k) undefined(handle, t);
    if (count <= 0) return;
    if (t.handle == basic) return k(a, b, static_cast<std::size_t>(count), false);
    staged(t, in, inout, count, datatype(basic).size,
           [k](const std::byte* x, std::byte* y, std::size_t n) { k(x, y, n, true); });
    return;
  }
  Kernel k = kernel_for(handle, basic);
  if (!k) undefined(handle, t);
  if (count <= 0) return;
  // A predefined type is its own basic type.
  std::size_t basic_size = t.handle == basic ? t.size : datatype(basic).size;
  if (t.contiguous) {
    std::size_t n = static_cast<std::size_t>(count) * t.size / basic_size;
    return k(a + t.true_lb, b + t.true_lb, n);
  }
  staged(t, in, inout, count, basic_size, k);
}

}  // namespace gridmpi::core
