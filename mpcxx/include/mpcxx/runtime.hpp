// mpcxx: the runtime: the layer's messages over MPI, the function registry,
// global objects, and the progress that serves other nodes' requests while
// this one waits (see ../../README.md, "How it works").
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mpcxx/fiber.hpp"
#include "mpcxx/serial.hpp"

namespace mpcxx {

namespace detail {

// The wire: every message starts with this header (canonical form, 56
// bytes); its payload follows in the same MPI message up to the inline
// limit, else in a second message (tag_data) from the same sender, which
// MPI keeps in order.
enum class Kind : std::uint8_t { invoke = 1, reply, put, get, sync_write, member, exit };
enum Flag : std::uint8_t {
  flag_big_endian = 1,   // the sender's byte order (raw values are refused across orders)
  flag_raw = 2,          // the payload holds values with no canonical form
  flag_data_follows = 4, // the payload is the next tag_data message
  flag_error = 8,        // a reply carrying an error text
};
struct Header {
  Kind kind{};
  std::uint8_t flags = 0;
  std::uint64_t id = 0;  // the call or acknowledgement it answers or asks for (0: none)
  std::uint64_t a = 0;   // function id, or global object id
  std::uint64_t b = 0;   // element index (put, get, member)
  std::uint64_t c = 0;   // element type code (put, get, sync_write), or member function id
  std::uint64_t d = 0;   // element count (put, get)
  std::uint64_t size = 0;  // payload bytes
  static constexpr std::size_t bytes = 56;
  void encode(std::byte* out) const {
    Writer w;
    const std::uint8_t k = static_cast<std::uint8_t>(kind);
    const std::uint16_t pad16 = 0;
    const std::uint32_t pad32 = 0;
    w(k, flags, pad16, pad32, id, a, b, c, d, size);
    std::memcpy(out, w.bytes.data(), bytes);
  }
  static Header decode(const std::byte* in) {
    Reader r(in, bytes);
    Header h;
    std::uint8_t k = 0;
    std::uint16_t pad16 = 0;
    std::uint32_t pad32 = 0;
    r(k, h.flags, pad16, pad32, h.id, h.a, h.b, h.c, h.d, h.size);
    h.kind = static_cast<Kind>(k);
    return h;
  }
};
constexpr int tag_header = 1;
constexpr int tag_data = 2;

constexpr std::uint8_t native_order_flag() {
  return std::endian::native == std::endian::big ? flag_big_endian : 0;
}

inline std::uint64_t name_id(std::string_view name) {  // FNV-1a, the same on every node
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h ? h : 1;
}

// A code for an element type, checked by the node that holds the object:
// the category and size of an arithmetic type, the size of another.
template <class T>
constexpr std::uint64_t type_code() {
  std::uint64_t category = std::is_same_v<T, bool>        ? 1
                           : std::is_floating_point_v<T>  ? 2
                           : std::is_enum_v<T>            ? 3
                           : std::is_signed_v<T> && std::is_integral_v<T> ? 4
                           : std::is_integral_v<T>        ? 5
                                                          : 6;
  return category << 56 | static_cast<std::uint64_t>(sizeof(T));
}

// Functions callable from other nodes, by the id of their name.
using Call = std::function<void(Reader&, Writer&)>;
using MemberCall = std::function<void(void* object, Reader&, Writer&)>;
struct Entry {
  std::string name;
  Call call;
  MemberCall member;
  std::uint64_t object_type = 0;  // members: the type_code of their class
};
struct Registry {
  std::unordered_map<std::uint64_t, Entry> by_id;
  std::unordered_map<const void*, std::uint64_t> function_ids;   // free functions, by address
  std::map<std::string, std::uint64_t> member_ids;                // member pointers, by their bytes
  std::string conflict;                                           // a registration error, reported at start
  static Registry& get() {
    static Registry r;
    return r;
  }
  void add(std::string name, Entry e) {
    const std::uint64_t id = name_id(name);
    auto [it, fresh] = by_id.try_emplace(id, std::move(e));
    if (!fresh && it->second.name != name && conflict.empty())
      conflict = "mpcxx: the remote functions " + it->second.name + " and " + name +
                 " have the same id: rename one of them";
    if (fresh) it->second.name = std::move(name);
  }
};

template <class T>
std::string member_key(T pointer) {
  return std::string(reinterpret_cast<const char*>(&pointer), sizeof pointer);
}

// A global object: local memory other nodes may read, write and call.
struct Object {
  virtual ~Object() = default;
  std::uint64_t type = 0;
  std::size_t count = 0;
  void* base = nullptr;
  // Elements [index, index + n) into / out of the wire form.
  virtual void load(Reader& r, std::size_t index, std::size_t n) = 0;
  virtual void save(Writer& w, std::size_t index, std::size_t n) const = 0;
  virtual std::size_t element_bytes() const = 0;
  virtual bool memory_is_canonical() const = 0;
  virtual void sync_write(Reader&) { throw Error("not a Sync"); }
};

template <class T>
struct ObjectOf final : Object {
  ObjectOf(T* p, std::size_t n) {
    type = type_code<T>();
    count = n;
    base = p;
  }
  T* data() const { return static_cast<T*>(base); }
  void load(Reader& r, std::size_t index, std::size_t n) override { r.load_elements(data() + index, n); }
  void save(Writer& w, std::size_t index, std::size_t n) const override { w.save_elements(data() + index, n); }
  std::size_t element_bytes() const override { return sizeof(T); }
  bool memory_is_canonical() const override { return memory_is_canonical_v<T>; }
};

struct CallState {
  bool done = false;
  bool error = false;
  bool foreign = false;  // the reply came from a node of the other byte order
  std::string error_text;
  std::vector<std::byte> result;
  std::span<std::byte> direct;               // a get: where a large reply lands
  std::function<void(CallState&)> on_done;   // ainvoke into a Sync
};

}  // namespace detail

template <class T>
class GlobalPtr;

// The layer's state on this node: one per process, between MPI_Init and
// MPI_Finalize.  Creates MPI if it is not initialised (and finalises it
// then); its destructor waits until every node has nothing outstanding.
class Runtime {
 public:
  Runtime(int* argc = nullptr, char*** argv = nullptr) {
    if (instance_) throw Error("mpcxx: a second mpcxx::Runtime in one process");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
      own_mpi_ = true;
    }
    const auto& registry = detail::Registry::get();
    if (!registry.conflict.empty()) throw Error(registry.conflict);
    MPI_Comm_dup(MPI_COMM_WORLD, &am_);
    MPI_Comm_dup(MPI_COMM_WORLD, &coll_);
    MPI_Comm_rank(am_, &rank_);
    MPI_Comm_size(am_, &size_);
    if (const char* s = std::getenv("MPCXX_INLINE")) inline_max_ = static_cast<std::size_t>(std::strtoull(s, nullptr, 10));
    header_buffer_.resize(detail::Header::bytes + inline_max_);
    instance_ = this;
    post_header_receive();
  }
  ~Runtime() {
    if (std::uncaught_exceptions() > 0) {
      // Leaving by an exception: no final barrier (the other nodes would
      // wait for this one forever); whoever catches it aborts the job.
      instance_ = nullptr;
      return;
    }
    try {
      quiesce();
      barrier_raw();
      drain_sends();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mpcxx: at the end on node %d: %s\n", rank_, e.what());
    }
    for (MPI_Request& r : requests_) {  // the receive of the next header
      MPI_Cancel(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&am_);
    MPI_Comm_free(&coll_);
    instance_ = nullptr;
    if (own_mpi_) MPI_Finalize();
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  static Runtime& get() {
    if (!instance_)
      throw Error("mpcxx: no mpcxx::Runtime on this node: create one (SPMD style) or use MPCXX_MAIN (mpc_main style)");
    return *instance_;
  }

  // The runtime, or null outside one (for destructors that may outlive it).
  static Runtime* current() noexcept { return instance_; }

  int node() const noexcept { return rank_; }
  int nodes() const noexcept { return size_; }
  MPI_Comm collective_comm() const noexcept { return coll_; }

  void check_node(int node, const char* what) const {
    if (node < 0 || node >= size_)
      throw Error(std::string("mpcxx: ") + what + ": node " + std::to_string(node) + " is out of range (the job has " +
                  std::to_string(size_) + " nodes, 0.." + std::to_string(size_ - 1) + ")");
  }

  // Waits until `until` holds, serving other nodes meanwhile.
  void wait(const std::function<bool()>& until) {
    scheduler_.wait(until, [this] { return poll(); }, [this] { wait_for_messages(); });
  }
  void yield() {
    poll();
    scheduler_.yield();
  }
  bool poll();

  // A request to `node` (h: its kind and fields; the id is set here), its
  // payload and an optional big part sent from the caller's memory (valid
  // until *sent); the reply's state (`direct`: where a large reply lands).
  struct Outgoing {
    std::shared_ptr<detail::CallState> state;
    std::shared_ptr<bool> sent;
  };
  Outgoing call(int node, detail::Header h, Writer&& payload, std::span<std::byte> direct = {},
                std::span<const std::byte> big = {}) {
    auto state = std::make_shared<detail::CallState>();
    state->direct = direct;
    h.id = next_id_++;
    calls_.emplace(h.id, state);
    auto sent = send(node, h, std::move(payload), big);
    return {std::move(state), std::move(sent)};
  }
  // Blocks until a call's reply; throws its error.
  void finish(detail::CallState& s, std::string_view what) {
    wait([&s] { return s.done; });
    if (s.error) throw Error(std::string(what) + ": " + s.error_text);
  }

  // Writes without waiting for their acknowledgement (nwrite); fence()
  // waits for them all.
  void count_unacknowledged(std::shared_ptr<detail::CallState> s) { unacknowledged_.push_back(std::move(s)); }
  void fence() {
    wait([this] {
      std::erase_if(unacknowledged_, [](const auto& s) { return s->done && !s->error; });
      for (const auto& s : unacknowledged_)
        if (s->done) return true;  // an error: thrown below
      return unacknowledged_.empty();
    });
    for (const auto& s : unacknowledged_)
      if (s->error) {
        std::string text = s->error_text;
        unacknowledged_.clear();
        throw Error("mpcxx: an nwrite failed: " + text);
      }
  }

  // Sends a header and payload; the big part (user memory that stays valid
  // until the returned flag is set) goes as a second message.
  std::shared_ptr<bool> send(int node, detail::Header h, Writer&& payload, std::span<const std::byte> big);

  // Global objects.
  std::uint64_t add_object(std::unique_ptr<detail::Object> o) {
    const std::uint64_t id = next_object_++;
    objects_.emplace(id, std::move(o));
    return id;
  }
  void remove_object(std::uint64_t id) { objects_.erase(id); }
  detail::Object* object(std::uint64_t id) {
    auto it = objects_.find(id);
    return it == objects_.end() ? nullptr : it->second.get();
  }

  // A new fiber running body (a call from another node, or mpcxx::spawn).
  void spawn(std::function<void()> body) {
    ++running_;
    scheduler_.spawn([this, body = std::move(body)] {
      body();
      --running_;
    });
  }

  // Every call answered, every write acknowledged, every fiber ended and
  // every send gone (the state before the final barrier).
  void quiesce() {
    fence();
    wait([this] { return calls_.empty() && running_ == 0 && sends_in_flight_ == 0; });
  }
  void barrier_raw() {
    MPI_Request r;
    MPI_Ibarrier(coll_, &r);
    wait_request(r);
  }
  // Waits for a request of the caller's (a collective), serving meanwhile.
  void wait_request(MPI_Request& r) {
    bool done = false;
    track(r, [&done](const MPI_Status&) { done = true; });
    wait([&done] { return done; });
  }

  bool exiting = false;  // mpc_main style: node 0 said so

 private:
  void post_header_receive() {
    MPI_Request r;
    MPI_Irecv(header_buffer_.data(), static_cast<int>(header_buffer_.size()), MPI_BYTE, MPI_ANY_SOURCE,
              detail::tag_header, am_, &r);
    track(r, [this](const MPI_Status& st) { on_header(st); });
  }
  void track(MPI_Request r, std::function<void(const MPI_Status&)> done) {
    requests_.push_back(r);
    handlers_.push_back(std::move(done));
  }
  void wait_for_messages();
  void on_header(const MPI_Status& st);
  void dispatch(int source, const detail::Header& h, std::vector<std::byte> payload, bool in_place);
  std::string check_object(const detail::Header& h, detail::Object*& o) const;
  void reply(int node, std::uint64_t id, Writer&& payload, const std::string* error = nullptr,
             std::span<const std::byte> big = {}) {
    if (id == 0) return;
    detail::Header h;
    h.kind = detail::Kind::reply;
    h.id = id;
    if (error) {
      h.flags |= detail::flag_error;
      payload = Writer{};
      payload.save(*error);
    }
    send(node, h, std::move(payload), big);
  }
  void drain_sends() {
    while (sends_in_flight_ > 0) wait_for_messages();
  }

  inline static Runtime* instance_ = nullptr;
  bool own_mpi_ = false;
  MPI_Comm am_ = MPI_COMM_NULL, coll_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::size_t inline_max_ = 16384;
  std::vector<std::byte> header_buffer_;
  std::vector<MPI_Request> requests_;
  std::vector<std::function<void(const MPI_Status&)>> handlers_;
  std::vector<int> which_;          // poll()'s MPI_Testsome arrays
  std::vector<MPI_Status> statuses_;
  std::unordered_map<std::uint64_t, std::shared_ptr<detail::CallState>> calls_;
  std::vector<std::shared_ptr<detail::CallState>> unacknowledged_;
  std::unordered_map<std::uint64_t, std::unique_ptr<detail::Object>> objects_;
  std::uint64_t next_id_ = 1, next_object_ = 1;
  int running_ = 0;
  int sends_in_flight_ = 0;
  detail::Scheduler scheduler_;
};

inline std::shared_ptr<bool> Runtime::send(int node, detail::Header h, Writer&& payload,
                                           std::span<const std::byte> big) {
  h.flags |= detail::native_order_flag() | (payload.raw ? detail::flag_raw : 0);
  auto sent = std::make_shared<bool>(false);
  const std::size_t total = payload.bytes.size() + big.size();
  h.size = total;
  if (total <= inline_max_) {
    auto buffer = std::make_shared<std::vector<std::byte>>(detail::Header::bytes + total);
    h.encode(buffer->data());
    std::copy(payload.bytes.begin(), payload.bytes.end(), buffer->begin() + detail::Header::bytes);
    if (!big.empty())
      std::copy(big.begin(), big.end(), buffer->begin() + detail::Header::bytes + payload.bytes.size());
    MPI_Request r;
    MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_BYTE, node, detail::tag_header, am_, &r);
    ++sends_in_flight_;
    track(r, [this, buffer, sent](const MPI_Status&) {
      *sent = true;
      --sends_in_flight_;
    });
    return sent;
  }
  // Header, then the payload: the serialised part and the big part as one
  // message (the big part alone when there is no serialised part).
  h.flags |= detail::flag_data_follows;
  auto head = std::make_shared<std::vector<std::byte>>(detail::Header::bytes);
  h.encode(head->data());
  MPI_Request r;
  MPI_Isend(head->data(), static_cast<int>(head->size()), MPI_BYTE, node, detail::tag_header, am_, &r);
  ++sends_in_flight_;
  track(r, [this, head](const MPI_Status&) { --sends_in_flight_; });
  std::shared_ptr<std::vector<std::byte>> body;
  const std::byte* data = big.data();
  if (!payload.bytes.empty()) {
    body = std::make_shared<std::vector<std::byte>>(std::move(payload.bytes));
    body->insert(body->end(), big.begin(), big.end());
    data = body->data();
  }
  if (total > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Error("mpcxx: a message of " + std::to_string(total) + " bytes is more than one MPI message can carry");
  MPI_Isend(data, static_cast<int>(total), MPI_BYTE, node, detail::tag_data, am_, &r);
  ++sends_in_flight_;
  track(r, [this, body, sent](const MPI_Status&) {
    *sent = true;
    --sends_in_flight_;
  });
  return sent;
}

inline bool Runtime::poll() {
  if (requests_.empty()) return false;
  int count = 0;
  // Every wait calls this: its arrays are kept, not allocated per call.
  which_.resize(requests_.size());
  statuses_.resize(requests_.size());
  MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, which_.data(), statuses_.data());
  if (count <= 0) return false;
  // Handlers may add requests: take the finished ones out first.
  std::vector<std::pair<std::function<void(const MPI_Status&)>, MPI_Status>> finished;
  finished.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    finished.emplace_back(std::move(handlers_[static_cast<std::size_t>(which_[i])]), statuses_[i]);
  std::size_t keep = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    requests_[keep] = requests_[i];
    handlers_[keep] = std::move(handlers_[i]);
    ++keep;
  }
  requests_.resize(keep);
  handlers_.resize(keep);
  for (auto& [handler, status] : finished) handler(status);
  return true;
}

inline void Runtime::wait_for_messages() {
  if (requests_.empty())
    throw Error("mpcxx: node " + std::to_string(rank_) +
                " waits for something no message can bring (a Sync read that nothing will write?)");
  int index = MPI_UNDEFINED;
  MPI_Status st;
  MPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &index, &st);
  if (index == MPI_UNDEFINED) return;
  auto handler = std::move(handlers_[static_cast<std::size_t>(index)]);
  requests_.erase(requests_.begin() + index);
  handlers_.erase(handlers_.begin() + index);
  handler(st);
}

inline std::string Runtime::check_object(const detail::Header& h, detail::Object*& o) const {
  auto it = objects_.find(h.a);
  const std::string here = "node " + std::to_string(rank_);
  if (it == objects_.end())
    return here + ": global object " + std::to_string(h.a) + " does not exist (freed, or never made global here)";
  o = it->second.get();
  if (h.kind != detail::Kind::member && o->type != h.c)
    return here + ": global object " + std::to_string(h.a) + " holds elements of another type than the pointer's";
  const std::uint64_t n = h.kind == detail::Kind::member || h.kind == detail::Kind::sync_write ? 1 : h.d;
  if (h.b > o->count || n > o->count - h.b)
    return here + ": elements " + std::to_string(h.b) + ".." + std::to_string(h.b + n) +
           " are out of range: global object " + std::to_string(h.a) + " has " + std::to_string(o->count);
  return {};
}

inline void Runtime::on_header(const MPI_Status& st) {
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  const int source = st.MPI_SOURCE;
  if (count < static_cast<int>(detail::Header::bytes))
    throw Error("mpcxx: node " + std::to_string(rank_) + ": a message of " + std::to_string(count) +
                " bytes from node " + std::to_string(source) + " is shorter than a header");
  const detail::Header h = detail::Header::decode(header_buffer_.data());
  if (!(h.flags & detail::flag_data_follows)) {
    std::vector<std::byte> payload(header_buffer_.begin() + detail::Header::bytes, header_buffer_.begin() + count);
    post_header_receive();
    dispatch(source, h, std::move(payload), false);
    return;
  }
  // The payload is the next data message from `source`: straight into its
  // destination when that is memory whose form is the wire's (a put into a
  // global object, a get's reply into the reader's buffer), else a buffer.
  std::byte* into = nullptr;
  const bool foreign = (h.flags & detail::flag_big_endian) != detail::native_order_flag();
  if (h.kind == detail::Kind::put && !foreign && !(h.flags & detail::flag_raw)) {
    detail::Object* o = nullptr;
    if (check_object(h, o).empty() && o->memory_is_canonical() && h.size == h.d * o->element_bytes())
      into = static_cast<std::byte*>(o->base) + h.b * o->element_bytes();
  } else if (h.kind == detail::Kind::reply && !(h.flags & detail::flag_error)) {
    auto it = calls_.find(h.id);
    if (it != calls_.end() && it->second->direct.size() == h.size) into = it->second->direct.data();
  }
  auto buffer = std::make_shared<std::vector<std::byte>>();
  if (!into) {
    buffer->resize(h.size);
    into = buffer->data();
  }
  const bool in_place = buffer->empty() && h.size > 0;
  MPI_Request r;
  MPI_Irecv(into, static_cast<int>(h.size), MPI_BYTE, source, detail::tag_data, am_, &r);
  track(r, [this, source, h, buffer, in_place](const MPI_Status&) {
    dispatch(source, h, std::move(*buffer), in_place);
  });
  post_header_receive();
}

inline void Runtime::dispatch(int source, const detail::Header& h, std::vector<std::byte> payload, bool in_place) {
  using detail::Kind;
  const bool foreign = (h.flags & detail::flag_big_endian) != detail::native_order_flag();
  switch (h.kind) {
    case Kind::invoke:
    case Kind::member:
      spawn([this, source, h, payload = std::move(payload), foreign] {
        Writer out;
        std::string error;
        const auto& registry = detail::Registry::get();
        const std::uint64_t fid = h.kind == Kind::invoke ? h.a : h.c;
        auto it = registry.by_id.find(fid);
        detail::Object* o = nullptr;
        if (it == registry.by_id.end() || (h.kind == Kind::invoke ? !it->second.call : !it->second.member)) {
          error = "node " + std::to_string(rank_) + " has no remote " +
                  (h.kind == Kind::invoke ? "function" : "member function") + " with id " + std::to_string(fid) +
                  " (is it registered there, with the same name?)";
        } else if (h.kind == Kind::member && !(error = check_object(h, o)).empty()) {
        } else if (h.kind == Kind::member && o->type != it->second.object_type) {
          error = "node " + std::to_string(rank_) + ": " + it->second.name + " called on an object of another type";
        } else {
          try {
            Reader in(payload.data(), payload.size(), foreign);
            if (h.kind == Kind::invoke)
              it->second.call(in, out);
            else
              it->second.member(static_cast<std::byte*>(o->base) + h.b * o->element_bytes(), in, out);
          } catch (const std::exception& e) {
            error = "node " + std::to_string(rank_) + ": " + it->second.name + " threw: " + e.what();
          } catch (...) {
            error = "node " + std::to_string(rank_) + ": " + it->second.name + " threw a non-standard exception";
          }
        }
        reply(source, h.id, std::move(out), error.empty() ? nullptr : &error);
      });
      return;
    case Kind::reply: {
      auto it = calls_.find(h.id);
      if (it == calls_.end()) return;  // cannot happen: ids are ours
      auto state = it->second;
      calls_.erase(it);
      state->foreign = foreign;
      if (h.flags & detail::flag_error) {
        state->error = true;
        Reader in(payload.data(), payload.size(), foreign);
        in.load(state->error_text);
      } else if (!in_place) {
        state->result = std::move(payload);
      }
      state->done = true;
      if (state->on_done) state->on_done(*state);
      return;
    }
    case Kind::put:
    case Kind::get:
    case Kind::sync_write: {
      detail::Object* o = nullptr;
      std::string error = check_object(h, o);
      Writer out;
      std::span<const std::byte> big;
      if (error.empty()) {
        try {
          Reader in(payload.data(), payload.size(), foreign);
          if (h.kind == Kind::put && !in_place) {
            if ((h.flags & detail::flag_raw) && foreign)
              throw Error("a value with no canonical form came from a node of the other byte order");
            o->load(in, h.b, h.d);
          } else if (h.kind == Kind::sync_write) {
            o->sync_write(in);
          } else if (h.kind == Kind::get) {
            if (o->memory_is_canonical())
              big = {static_cast<const std::byte*>(o->base) + h.b * o->element_bytes(), h.d * o->element_bytes()};
            else
              o->save(out, h.b, h.d);
          }
        } catch (const std::exception& e) {
          error = "node " + std::to_string(rank_) + ": " + e.what();
        }
      }
      reply(source, h.id, std::move(out), error.empty() ? nullptr : &error, big);
      return;
    }
    case Kind::exit:
      exiting = true;
      return;
  }
  throw Error("mpcxx: node " + std::to_string(rank_) + ": a message of unknown kind " +
              std::to_string(static_cast<int>(h.kind)) + " from node " + std::to_string(source));
}

}  // namespace mpcxx
