// mpcxx: arguments, results and global data as bytes (see ../../README.md,
// "Serialisation").  Arithmetic types and enums travel in one canonical
// form (little-endian, fixed width), so that nodes of different byte order
// understand each other; std::string, std::vector, std::array, std::pair,
// std::tuple and std::optional recursively; a user type by its hook,
//
//     struct Point { double x, y; template <class A> void serialize(A& a) { a(x, y); } };
//
// (or a free function `template <class A> void serialize(A&, Point&)` found
// by argument-dependent lookup).  Any other trivially copyable type goes as
// its bytes, and the message says so: a node of the other byte order
// refuses it with an error naming the fix (give the type a hook).
#pragma once
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace mpcxx {

// Every error the layer reports: bad use, a failed remote call, a message it
// cannot read.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

template <class T>
T byteswapped(T v) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  std::array<std::byte, sizeof(T)> b = std::bit_cast<std::array<std::byte, sizeof(T)>>(v);
  for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  return std::bit_cast<T>(b);
}

template <class T>
inline constexpr bool canonical_v = std::is_arithmetic_v<T> || std::is_enum_v<T>;

// Whether T's canonical form is its memory (so that arrays of it move with
// no conversion): arithmetic on a little-endian node, bool excepted.
template <class T>
inline constexpr bool memory_is_canonical_v =
    canonical_v<T> && !std::is_same_v<T, bool> && std::endian::native == std::endian::little;

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

}  // namespace detail

class Writer;
class Reader;

template <class A, class T>
concept member_hook = requires(A& a, T& t) { t.serialize(a); };
template <class A, class T>
concept free_hook = requires(A& a, T& t) { serialize(a, t); };

// Appends values to a byte buffer.
class Writer {
 public:
  std::vector<std::byte> bytes;
  bool raw = false;  // a value went as its bytes (no canonical form)

  void put(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  template <class... T>
  void operator()(const T&... values) {
    (save(values), ...);
  }
  template <class T>
  Writer& operator&(const T& value) {
    save(value);
    return *this;
  }

  template <class T>
  void save(const T& v) {
    if constexpr (detail::canonical_v<T>) {
      if constexpr (std::is_same_v<T, bool>) {
        const std::uint8_t b = v ? 1 : 0;
        put(&b, 1);
      } else if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
        const T w = detail::byteswapped(v);
        put(&w, sizeof w);
      } else {
        put(&v, sizeof v);
      }
    } else if constexpr (std::is_same_v<T, std::string>) {
      save(static_cast<std::uint64_t>(v.size()));
      put(v.data(), v.size());
    } else if constexpr (detail::is_vector<T>::value) {
      save(static_cast<std::uint64_t>(v.size()));
      save_elements(v.data(), v.size());
    } else if constexpr (member_hook<Writer, T>) {
      const_cast<T&>(v).serialize(*this);
    } else if constexpr (free_hook<Writer, T>) {
      serialize(*this, const_cast<T&>(v));
    } else if constexpr (requires { std::tuple_size<T>::value; }) {
      std::apply([this](const auto&... e) { (save(e), ...); }, v);
    } else if constexpr (requires { typename T::value_type; v.has_value(); *v; }) {  // std::optional
      save(v.has_value());
      if (v) save(*v);
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      raw = true;
      put(&v, sizeof v);
    } else {
      static_assert(std::is_trivially_copyable_v<T>,
                    "mpcxx cannot send this type: give it a serialize(A&) member or a free serialize(A&, T&) "
                    "(mpcxx/README.md, Serialisation)");
    }
  }

  // n elements from p: one copy when their memory is their canonical form.
  template <class T>
  void save_elements(const T* p, std::size_t n) {
    if constexpr (detail::memory_is_canonical_v<T>) {
      put(p, n * sizeof(T));
    } else {
      for (std::size_t i = 0; i < n; ++i) save(p[i]);
    }
  }
};

// Reads values back; `foreign_raw` is set when the bytes came from a node of
// the other byte order (raw values are then refused).
class Reader {
 public:
  Reader(const std::byte* data, std::size_t size, bool foreign_order = false)
      : p_(data), end_(data + size), foreign_(foreign_order) {}

  std::size_t left() const noexcept { return static_cast<std::size_t>(end_ - p_); }
  void get(void* out, std::size_t n) {
    if (n > left())
      throw Error("mpcxx: a message is shorter than what it should hold (the sender and the receiver disagree on "
                  "a type: are both built from the same source?)");
    std::memcpy(out, p_, n);
    p_ += n;
  }
  template <class... T>
  void operator()(T&... values) {
    (load(values), ...);
  }
  template <class T>
  Reader& operator&(T& value) {
    load(value);
    return *this;
  }

  template <class T>
  void load(T& v) {
    if constexpr (detail::canonical_v<T>) {
      if constexpr (std::is_same_v<T, bool>) {
        std::uint8_t b = 0;
        get(&b, 1);
        v = b != 0;
      } else {
        get(&v, sizeof v);
        if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) v = detail::byteswapped(v);
      }
    } else if constexpr (std::is_same_v<T, std::string>) {
      const std::uint64_t n = length();
      v.resize(n);
      get(v.data(), n);
    } else if constexpr (detail::is_vector<T>::value) {
      const std::uint64_t n = length();
      v.resize(n);
      load_elements(v.data(), n);
    } else if constexpr (member_hook<Reader, T>) {
      v.serialize(*this);
    } else if constexpr (free_hook<Reader, T>) {
      serialize(*this, v);
    } else if constexpr (requires { std::tuple_size<T>::value; }) {
      std::apply([this](auto&... e) { (load(e), ...); }, v);
    } else if constexpr (requires { typename T::value_type; v.has_value(); *v; }) {
      bool has = false;
      load(has);
      if (has) {
        typename T::value_type x{};
        load(x);
        v = std::move(x);
      } else {
        v.reset();
      }
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      if (foreign_)
        throw Error("mpcxx: a value of a type with no serialize() came from a node of the other byte order: its "
                    "bytes would be wrong here; give the type a serialize(A&) member (mpcxx/README.md)");
      get(&v, sizeof v);
    } else {
      static_assert(std::is_trivially_copyable_v<T>,
                    "mpcxx cannot receive this type: give it a serialize(A&) member or a free serialize(A&, T&)");
    }
  }

  template <class T>
  void load_elements(T* p, std::size_t n) {
    if constexpr (detail::memory_is_canonical_v<T>) {
      if (n > left() / sizeof(T)) get(p, left() + 1);  // the short-message error
      get(p, n * sizeof(T));
    } else {
      for (std::size_t i = 0; i < n; ++i) load(p[i]);
    }
  }

 private:
  std::uint64_t length() {
    std::uint64_t n = 0;
    load(n);
    if (n > left())
      throw Error("mpcxx: a message announces more elements than it holds (a type mismatch between nodes?)");
    return n;
  }
  const std::byte* p_;
  const std::byte* end_;
  bool foreign_;
};

}  // namespace mpcxx
