// mpcxx: what programs use (see ../../README.md): remote functions,
// invoke / ainvoke, Future, Sync, GlobalPtr, global arrays, barrier and
// reductions, and the two program styles.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "mpcxx/runtime.hpp"
#include "mpcxx/serial.hpp"

namespace mpcxx {

inline int node() { return Runtime::get().node(); }
inline int nodes() { return Runtime::get().nodes(); }
// Lets the other fibers of this node run (MTTL's threads are not preemptive).
inline void yield() { Runtime::get().yield(); }
// Serves other nodes' requests without waiting (for a long computation).
inline void progress() { Runtime::get().poll(); }

namespace detail {

template <class R, class... P>
Call make_call(R (*f)(P...)) {
  return [f](Reader& in, Writer& out) {
    std::tuple<std::decay_t<P>...> args;
    std::apply([&in](auto&... a) { (in.load(a), ...); }, args);
    if constexpr (std::is_void_v<R>) {
      std::apply(f, std::move(args));
    } else {
      out.save(std::apply(f, std::move(args)));
    }
  };
}

template <class C, class R, class... P>
MemberCall make_member(R (C::*m)(P...)) {
  return [m](void* object, Reader& in, Writer& out) {
    std::tuple<std::decay_t<P>...> args;
    std::apply([&in](auto&... a) { (in.load(a), ...); }, args);
    C* self = static_cast<C*>(object);
    if constexpr (std::is_void_v<R>) {
      std::apply([&](auto&&... a) { (self->*m)(std::move(a)...); }, std::move(args));
    } else {
      out.save(std::apply([&](auto&&... a) { return (self->*m)(std::move(a)...); }, std::move(args)));
    }
  };
}

struct Registrar {
  template <class R, class... P>
  Registrar(const char* name, R (*f)(P...)) {
    auto& registry = Registry::get();
    registry.add(name, Entry{name, make_call(f), nullptr, 0});
    registry.function_ids[reinterpret_cast<const void*>(f)] = name_id(name);
  }
  template <class C, class R, class... P>
  Registrar(const char* name, R (C::*m)(P...)) {
    auto& registry = Registry::get();
    registry.add(name, Entry{name, nullptr, make_member(m), type_code<C>()});
    registry.member_ids[member_key(m)] = name_id(name);
  }
};

template <class F>
std::uint64_t function_id(F f, const char* what) {
  const auto& ids = Registry::get().function_ids;
  auto it = ids.find(reinterpret_cast<const void*>(f));
  if (it == ids.end())
    throw Error(std::string("mpcxx: ") + what +
                " of a function that is not registered: add MPCXX_REMOTE(its name) at namespace scope");
  return it->second;
}

template <class M>
std::uint64_t member_id(M m) {
  const auto& ids = Registry::get().member_ids;
  auto it = ids.find(member_key(m));
  if (it == ids.end())
    throw Error("mpcxx: remote call of a member function that is not registered: add MPCXX_REMOTE_MEMBER(Class, "
                "name) at namespace scope");
  return it->second;
}

template <class... P, class... A>
Writer pack_arguments(A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "mpcxx: invoke: the number of arguments differs from the function's");
  Writer w;
  std::tuple<std::decay_t<P>...> converted(std::forward<A>(args)...);
  std::apply([&w](const auto&... a) { (w.save(a), ...); }, converted);
  return w;
}

template <class R>
R unpack_result(CallState& s) {
  if constexpr (!std::is_void_v<R>) {
    Reader in(s.result.data(), s.result.size(), s.foreign);
    R r{};
    in.load(r);
    return r;
  }
}

inline Header invoke_header(std::uint64_t function) {
  Header h;
  h.kind = Kind::invoke;
  h.a = function;
  return h;
}

#define MPCXX_CAT2(a, b) a##b
#define MPCXX_CAT(a, b) MPCXX_CAT2(a, b)

}  // namespace detail

// A function other nodes may call: at namespace scope, in every program of
// the job (the id is its name, so executables of different builds and
// architectures agree).
#define MPCXX_REMOTE(f) \
  static const ::mpcxx::detail::Registrar MPCXX_CAT(mpcxx_remote_, __COUNTER__) { #f, &f }
// A member function callable through a GlobalPtr<Class>.
#define MPCXX_REMOTE_MEMBER(C, m) \
  static const ::mpcxx::detail::Registrar MPCXX_CAT(mpcxx_remote_member_, __COUNTER__) { #C "::" #m, &C::m }

// The result of an ainvoke: get() waits (serving meanwhile) and returns it,
// or throws the remote error.
template <class R>
class Future {
 public:
  Future() = default;
  explicit Future(std::shared_ptr<detail::CallState> s, std::string what) : s_(std::move(s)), what_(std::move(what)) {}
  bool ready() const { return !s_ || s_->done; }
  R get() {
    if (!s_) throw Error("mpcxx: get() of an empty Future");
    Runtime::get().finish(*s_, what_);
    return detail::unpack_result<R>(*s_);
  }
  void wait() { Runtime::get().wait([s = s_] { return !s || s->done; }); }

 private:
  std::shared_ptr<detail::CallState> s_;
  std::string what_;
};

// invoke(node, f, args...): f(args...) on node, returning its result (the
// calling fiber waits; the node serves requests meanwhile).  On this node,
// a plain call.
template <class R, class... P, class... A>
R invoke(int node, R (*f)(P...), A&&... args) {
  Runtime& rt = Runtime::get();
  rt.check_node(node, "invoke");
  const std::uint64_t id = detail::function_id(f, "invoke");  // registered, wherever it runs
  if (node == rt.node()) {
    // A plain call, its errors reported as a remote call's are.
    try {
      return f(std::forward<A>(args)...);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error("mpcxx: invoke on node " + std::to_string(node) + ": node " + std::to_string(node) + ": " +
                  detail::Registry::get().by_id.at(id).name + " threw: " + e.what());
    }
  }
  auto s = rt.call(node, detail::invoke_header(id),
                   detail::pack_arguments<P...>(std::forward<A>(args)...)).state;
  rt.finish(*s, "mpcxx: invoke on node " + std::to_string(node));
  return detail::unpack_result<R>(*s);
}
// The paper's form: invoke(result, node, f, args...).
template <class R, class... P, class... A>
  requires(!std::is_void_v<R>)
void invoke(R& result, int node, R (*f)(P...), A&&... args) {
  result = invoke(node, f, std::forward<A>(args)...);
}

// ainvoke(node, f, args...): the call without waiting (on this node too: a
// new fiber runs it).
template <class R, class... P, class... A>
Future<R> ainvoke(int node, R (*f)(P...), A&&... args) {
  Runtime& rt = Runtime::get();
  rt.check_node(node, "ainvoke");
  // On this node too through the message path (a fiber runs it): the same
  // semantics everywhere.
  auto s = rt.call(node, detail::invoke_header(detail::function_id(f, "ainvoke")),
                   detail::pack_arguments<P...>(std::forward<A>(args)...)).state;
  return Future<R>(s, "mpcxx: ainvoke on node " + std::to_string(node));
}

template <class T>
class GlobalPtr;

// Sync<T>: MTTL's synchronisation structure, a FIFO for many writers and
// readers: read() takes the oldest value, waiting while there is none;
// peek() the same without taking it; queueLength().  global() lets other
// nodes write to it (GlobalPtr<Sync<T>>::write); ainvoke can deliver its
// result into one.  A value that is an error (a failed ainvoke) throws at
// read().
template <class T>
class Sync {
 public:
  Sync() = default;
  Sync(const Sync&) = delete;
  Sync& operator=(const Sync&) = delete;
  ~Sync() {
    if (Runtime* rt = Runtime::current(); rt && global_) rt->remove_object(global_);
  }

  void write(T value) { q_.push_back(Item{std::move(value), {}}); }
  T read() {
    wait_nonempty();
    Item it = std::move(q_.front());
    q_.pop_front();
    if (it.value) return std::move(*it.value);
    throw Error(it.error);
  }
  T peek() {
    wait_nonempty();
    if (q_.front().value) return *q_.front().value;
    throw Error(q_.front().error);
  }
  std::size_t queueLength() const noexcept { return q_.size(); }

  GlobalPtr<Sync<T>> global();
  // (The layer's) an error in place of a value.
  void write_error(std::string text) { q_.push_back(Item{std::nullopt, std::move(text)}); }

 private:
  struct Item {
    std::optional<T> value;
    std::string error;
  };
  struct Object final : detail::Object {
    explicit Object(Sync* s) {
      type = detail::type_code<Sync<T>>();
      count = 1;
      base = s;
    }
    void load(Reader&, std::size_t, std::size_t) override { throw Error("a Sync is written, not put"); }
    void save(Writer&, std::size_t, std::size_t) const override { throw Error("a Sync is read locally"); }
    std::size_t element_bytes() const override { return sizeof(Sync<T>); }
    bool memory_is_canonical() const override { return false; }
    void sync_write(Reader& in) override {
      T v{};
      in.load(v);
      static_cast<Sync*>(base)->write(std::move(v));
    }
  };
  void wait_nonempty() {
    Runtime::get().wait([this] { return !q_.empty(); });
  }
  std::deque<Item> q_;
  std::uint64_t global_ = 0;
};

// ainvoke whose result goes into a Sync of this node.
template <class R, class... P, class... A>
void ainvoke(Sync<R>& into, int node, R (*f)(P...), A&&... args) {
  Runtime& rt = Runtime::get();
  rt.check_node(node, "ainvoke");
  auto s = rt.call(node, detail::invoke_header(detail::function_id(f, "ainvoke")),
                   detail::pack_arguments<P...>(std::forward<A>(args)...)).state;
  const std::string what = "mpcxx: ainvoke on node " + std::to_string(node);
  s->on_done = [&into, what](detail::CallState& st) {
    if (st.error)
      into.write_error(what + ": " + st.error_text);
    else
      into.write(detail::unpack_result<R>(st));
  };
}

// GlobalPtr<T>: a pointer to an element of a global object (GlobalArray,
// global(), Sync::global()) on some node: read, write, nwrite, arithmetic
// within the object, remote member calls.  Checked where the object lives:
// a freed object, an index out of range or another element type is an
// Error at the caller.  Serialisable: it can be passed to invoke, written
// through another GlobalPtr, or exchanged with allgather.
template <class T>
class GlobalPtr {
 public:
  GlobalPtr() = default;
  GlobalPtr(int node, std::uint64_t object, std::uint64_t index) : node_(node), object_(object), index_(index) {}

  int node() const noexcept { return node_; }
  std::uint64_t object() const noexcept { return object_; }
  std::uint64_t index() const noexcept { return index_; }
  explicit operator bool() const noexcept { return object_ != 0; }
  bool operator==(const GlobalPtr&) const = default;

  GlobalPtr operator+(std::int64_t k) const { return GlobalPtr(node_, object_, index_ + static_cast<std::uint64_t>(k)); }
  GlobalPtr operator-(std::int64_t k) const { return GlobalPtr(node_, object_, index_ - static_cast<std::uint64_t>(k)); }
  GlobalPtr& operator+=(std::int64_t k) { return *this = *this + k; }
  GlobalPtr& operator++() { return *this = *this + 1; }
  GlobalPtr operator[](std::int64_t k) const = delete;  // use (p + k).read()
  std::int64_t operator-(const GlobalPtr& o) const { return static_cast<std::int64_t>(index_ - o.index_); }

  // n elements from the object into out (the caller waits).
  void read(T* out, std::size_t n) const {
    Runtime& rt = check("read");
    std::span<std::byte> direct;
    if constexpr (detail::memory_is_canonical_v<T>) direct = {reinterpret_cast<std::byte*>(out), n * sizeof(T)};
    auto s = rt.call(node_, header(detail::Kind::get, n), Writer{}, direct).state;
    rt.finish(*s, "mpcxx: GlobalPtr read from node " + std::to_string(node_));
    if (direct.empty() || !s->result.empty() || n * sizeof(T) == 0) {
      Reader in(s->result.data(), s->result.size(), s->foreign);
      in.load_elements(out, n);
    }
  }
  T read() const {
    T v{};
    read(&v, 1);
    return v;
  }
  T operator*() const { return read(); }

  // n elements from data into the object; returns once they are there.
  void write(const T* data, std::size_t n) const {
    auto s = start_write(data, n).state;
    Runtime::get().finish(*s, "mpcxx: GlobalPtr write to node " + std::to_string(node_));
  }
  void write(const T& v) const { write(&v, 1); }
  // The same without waiting for them to arrive: data may be reused when it
  // returns; mpcxx::fence() or barrier() waits for all of them.
  void nwrite(const T* data, std::size_t n) const {
    auto out = start_write(data, n);
    Runtime& rt = Runtime::get();
    rt.wait([sent = out.sent] { return *sent; });  // the buffer is free
    rt.count_unacknowledged(std::move(out.state));
  }

  // A remote member call on the object (MPCXX_REMOTE_MEMBER).
  template <class C, class R, class... P, class... A>
    requires std::is_same_v<C, T>
  R invoke(R (C::*m)(P...), A&&... args) const {
    Runtime& rt = check("member call");
    detail::Header h = header(detail::Kind::member, 1);
    h.c = detail::member_id(m);
    auto s = rt.call(node_, h, detail::pack_arguments<P...>(std::forward<A>(args)...)).state;
    rt.finish(*s, "mpcxx: member call on node " + std::to_string(node_));
    return detail::unpack_result<R>(*s);
  }

  // Through a GlobalPtr<Sync<U>>: writes a value into the remote Sync.
  template <class U>
    requires std::is_same_v<T, Sync<U>>
  void write(const U& v) const {
    Runtime& rt = check("Sync write");
    Writer w;
    w.save(v);
    auto s = rt.call(node_, header(detail::Kind::sync_write, 1), std::move(w)).state;
    rt.finish(*s, "mpcxx: Sync write to node " + std::to_string(node_));
  }

  template <class A>
  void serialize(A& a) {
    a(node_, object_, index_);
  }

 private:
  Runtime& check(const char* what) const {
    Runtime& rt = Runtime::get();
    if (!object_) throw Error(std::string("mpcxx: ") + what + " through a null GlobalPtr");
    rt.check_node(node_, what);
    return rt;
  }
  detail::Header header(detail::Kind kind, std::size_t n) const {
    detail::Header h;
    h.kind = kind;
    h.a = object_;
    h.b = index_;
    h.c = detail::type_code<T>();
    h.d = n;
    return h;
  }
  Runtime::Outgoing start_write(const T* data, std::size_t n) const {
    Runtime& rt = check("write");
    Writer w;
    std::span<const std::byte> big;
    if constexpr (detail::memory_is_canonical_v<T>)
      big = {reinterpret_cast<const std::byte*>(data), n * sizeof(T)};
    else
      w.save_elements(data, n);
    return rt.call(node_, header(detail::Kind::put, n), std::move(w), {}, big);
  }

  int node_ = -1;
  std::uint64_t object_ = 0;
  std::uint64_t index_ = 0;
};

template <class T>
GlobalPtr<Sync<T>> Sync<T>::global() {
  Runtime& rt = Runtime::get();
  if (!global_) global_ = rt.add_object(std::make_unique<Object>(this));
  return GlobalPtr<Sync<T>>(rt.node(), global_, 0);
}

// Memory of this node made global for as long as this object lives: a
// GlobalArray owns its n elements (operator[], data(), size() here; ptr()
// for the others), a Global registers memory the program owns.
template <class T>
class Global {
 public:
  Global(T* data, std::size_t n) : data_(data), n_(n) {
    id_ = Runtime::get().add_object(std::make_unique<detail::ObjectOf<T>>(data, n));
  }
  explicit Global(T& object) : Global(&object, 1) {}
  ~Global() {
    if (Runtime* rt = Runtime::current(); rt && id_) rt->remove_object(id_);
  }
  Global(const Global&) = delete;
  Global& operator=(const Global&) = delete;
  GlobalPtr<T> ptr(std::size_t index = 0) const { return GlobalPtr<T>(Runtime::get().node(), id_, index); }
  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return n_; }

 private:
  T* data_;
  std::size_t n_;
  std::uint64_t id_ = 0;
};

template <class T>
class GlobalArray {
 public:
  explicit GlobalArray(std::size_t n, const T& value = T{}) : storage_(n, value), global_(storage_.data(), n) {}
  T& operator[](std::size_t i) { return storage_[i]; }
  const T& operator[](std::size_t i) const { return storage_[i]; }
  T* data() noexcept { return storage_.data(); }
  std::size_t size() const noexcept { return storage_.size(); }
  GlobalPtr<T> ptr(std::size_t index = 0) const { return global_.ptr(index); }

 private:
  std::vector<T> storage_;
  Global<T> global_;
};

// Waits until every nwrite of this node has arrived.
inline void fence() { Runtime::get().fence(); }

// Collectives: called by one fiber of every node, in the same order (as
// MPI's); each serves other requests while it waits.  barrier() also waits
// for this node's nwrites first.
inline void barrier() {
  Runtime& rt = Runtime::get();
  rt.fence();
  rt.barrier_raw();
}

struct min {};
struct max {};

namespace detail {
template <class T>
MPI_Datatype datatype() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, long double>) return MPI_LONG_DOUBLE;
  else if constexpr (std::is_same_v<T, char>) return MPI_CHAR;
  else if constexpr (std::is_same_v<T, signed char>) return MPI_SIGNED_CHAR;
  else if constexpr (std::is_same_v<T, unsigned char>) return MPI_UNSIGNED_CHAR;
  else if constexpr (std::is_same_v<T, short>) return MPI_SHORT;
  else if constexpr (std::is_same_v<T, unsigned short>) return MPI_UNSIGNED_SHORT;
  else if constexpr (std::is_same_v<T, int>) return MPI_INT;
  else if constexpr (std::is_same_v<T, unsigned>) return MPI_UNSIGNED;
  else if constexpr (std::is_same_v<T, long>) return MPI_LONG;
  else if constexpr (std::is_same_v<T, unsigned long>) return MPI_UNSIGNED_LONG;
  else if constexpr (std::is_same_v<T, long long>) return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<T, unsigned long long>) return MPI_UNSIGNED_LONG_LONG;
  else static_assert(sizeof(T) == 0, "mpcxx: reductions take arithmetic types");
}
template <class Op>
MPI_Op op() {
  if constexpr (std::is_same_v<Op, std::plus<>>) return MPI_SUM;
  else if constexpr (std::is_same_v<Op, std::multiplies<>>) return MPI_PROD;
  else if constexpr (std::is_same_v<Op, mpcxx::min>) return MPI_MIN;
  else if constexpr (std::is_same_v<Op, mpcxx::max>) return MPI_MAX;
  else static_assert(sizeof(Op) == 0, "mpcxx: the reductions are std::plus<>, std::multiplies<>, mpcxx::min, mpcxx::max");
}
}  // namespace detail

// n values of every node combined element by element; every node gets the
// result in inout.
template <class T, class Op = std::plus<>>
void allreduce(T* inout, std::size_t n, Op = {}) {
  Runtime& rt = Runtime::get();
  MPI_Request r;
  MPI_Iallreduce(MPI_IN_PLACE, inout, static_cast<int>(n), detail::datatype<T>(), detail::op<Op>(),
                 rt.collective_comm(), &r);
  rt.wait_request(r);
}
template <class T, class Op = std::plus<>>
T allreduce(T value, Op op = {}) {
  allreduce(&value, 1, op);
  return value;
}
// The same, the result on root only (the others' inout unchanged).
template <class T, class Op = std::plus<>>
void reduce(T* inout, std::size_t n, int root, Op = {}) {
  Runtime& rt = Runtime::get();
  rt.check_node(root, "reduce");
  std::vector<T> in(inout, inout + n);
  MPI_Request r;
  MPI_Ireduce(in.data(), inout, static_cast<int>(n), detail::datatype<T>(), detail::op<Op>(), root,
              rt.collective_comm(), &r);
  rt.wait_request(r);
}
// Root's value to every node (any serialisable type).
template <class T>
void broadcast(T& value, int root) {
  Runtime& rt = Runtime::get();
  rt.check_node(root, "broadcast");
  Writer w;
  if (rt.node() == root) w.save(value);
  std::uint64_t n = w.bytes.size();
  MPI_Request r;
  MPI_Ibcast(&n, 1, MPI_UINT64_T, root, rt.collective_comm(), &r);
  rt.wait_request(r);
  w.bytes.resize(n);
  MPI_Ibcast(w.bytes.data(), static_cast<int>(n), MPI_BYTE, root, rt.collective_comm(), &r);
  rt.wait_request(r);
  if (rt.node() != root) {
    Reader in(w.bytes.data(), w.bytes.size());
    in.load(value);
  }
}
// Every node's value, by node (any serialisable type: GlobalPtrs, say).
template <class T>
std::vector<T> allgather(const T& value) {
  Runtime& rt = Runtime::get();
  Writer w;
  w.save(value);
  const int p = rt.nodes();
  std::vector<int> sizes(static_cast<std::size_t>(p)), offsets(static_cast<std::size_t>(p));
  int mine = static_cast<int>(w.bytes.size());
  MPI_Request r;
  MPI_Iallgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, rt.collective_comm(), &r);
  rt.wait_request(r);
  int total = 0;
  for (int i = 0; i < p; ++i) {
    offsets[static_cast<std::size_t>(i)] = total;
    total += sizes[static_cast<std::size_t>(i)];
  }
  std::vector<std::byte> all(static_cast<std::size_t>(total));
  MPI_Iallgatherv(w.bytes.data(), mine, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE,
                  rt.collective_comm(), &r);
  rt.wait_request(r);
  std::vector<T> out(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    Reader in(all.data() + offsets[static_cast<std::size_t>(i)],
                      static_cast<std::size_t>(sizes[static_cast<std::size_t>(i)]));
    in.load(out[static_cast<std::size_t>(i)]);
  }
  return out;
}

// The mpc_main style: node 0 runs mpc_main, the others serve requests until
// it returns; its value is the program's exit status on node 0.
inline int run_main(int argc, char** argv, int (*mpc_main)(int, char**)) {
  int status = 0;
  try {
    Runtime rt(&argc, &argv);
    if (rt.node() == 0) {
      status = mpc_main(argc, argv);
      rt.quiesce();
      for (int n = 1; n < rt.nodes(); ++n) {
        detail::Header h;
        h.kind = detail::Kind::exit;
        rt.send(n, h, Writer{}, {});
      }
    } else {
      rt.wait([&rt] { return rt.exiting; });
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return status;
}

}  // namespace mpcxx

// int mpc_main(int argc, char** argv) { ... } and, once, MPCXX_MAIN.
#define MPCXX_MAIN \
  int mpc_main(int, char**); \
  int main(int argc, char** argv) { return ::mpcxx::run_main(argc, argv, mpc_main); }
