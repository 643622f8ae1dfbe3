// Helpers shared by the algorithms: address arithmetic that is valid for
// MPI_BOTTOM, temporary buffers laid out like a user buffer, packing to a
// byte stream, local typed copies and local reductions.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/group.hpp"

namespace gridmpi::request { struct Request; }

namespace gridmpi::coll {

// Fixed tags on the collective context, one per collective, so that a trace
// shows which collective a message belongs to.  Blocking collectives on one
// communicator are called in the same order everywhere and messages between
// two ranks do not overtake each other, so one tag per collective suffices.
namespace tag {
inline constexpr int barrier = 1, bcast = 2, gather = 3, gatherv = 4, scatter = 5, scatterv = 6,
                     allgather = 7, allgatherv = 8, alltoall = 9, alltoallv = 10,
                     alltoallw = 11, reduce = 12, allreduce = 13, reduce_scatter = 14,
                     scan = 15, exscan = 16;
}

// buf + bytes, computed on integers: MPI_BOTTOM is a null pointer and user
// datatypes may carry absolute addresses.
inline void* at_bytes(void* buf, MPI_Aint bytes) noexcept {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(buf) +
                                 static_cast<std::uintptr_t>(bytes));
}
inline const void* at_bytes(const void* buf, MPI_Aint bytes) noexcept {
  return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(buf) +
                                       static_cast<std::uintptr_t>(bytes));
}

// What the algorithms need to know of a datatype.
struct Shape {
  std::size_t size = 0;  // bytes of data in one element
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  bool contiguous = false;  // count elements are size*count bytes at buf + true_lb
};
Shape shape(MPI_Datatype type);

// Element `index` of a buffer of elements of the given extent.
inline void* element(void* buf, MPI_Aint index, MPI_Aint extent) noexcept {
  return at_bytes(buf, index * extent);
}
inline const void* element(const void* buf, MPI_Aint index, MPI_Aint extent) noexcept {
  return at_bytes(buf, index * extent);
}

// Uninitialised bytes (large temporaries need no zeroing).  Blocks of
// scratch_min bytes and more come from, and go back to, a per-thread cache
// of recently freed ones (at most scratch_blocks, scratch_bytes in all): a
// fresh block of a few hundred KiB is mapped by malloc (or the heap's top
// is trimmed when it is freed), and touching its pages cost more than the
// collective's own copies - a 256 KiB MPI_Reduce over shared memory took
// 142 us against 43 with the pages kept (npb/README.md).
class Bytes {
 public:
  static constexpr std::size_t scratch_min = 64 * 1024;
  static constexpr std::size_t scratch_blocks = 8;
  static constexpr std::size_t scratch_bytes = std::size_t{128} << 20;

  Bytes() = default;
  explicit Bytes(std::size_t n);
  Bytes(Bytes&& other) noexcept;
  Bytes& operator=(Bytes&& other) noexcept;
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  ~Bytes();
  // nullptr when empty.
  std::byte* data() const noexcept { return size_ > inline_size ? heap_.get() : size_ > 0 ? inline_ : nullptr; }
  std::size_t size() const noexcept { return size_; }

  // This thread's cached blocks and their bytes (tests).
  static std::size_t cached_blocks() noexcept;
  static std::size_t cached_bytes() noexcept;

 private:
  void release() noexcept;
  // Short temporaries (a small reduction's partner values) need no
  // allocation: a malloc and free were a tenth of an 8-byte Allreduce's work.
  static constexpr std::size_t inline_size = 64;
  alignas(16) mutable std::byte inline_[inline_size];
  std::unique_ptr<std::byte[]> heap_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // of heap_
};

// A temporary that holds `count` elements of `type` with the user's layout:
// true_extent + (count-1)*extent bytes, get() shifted by -true_lb so that
// (get(), count, type) addresses exactly the allocation.
class TypedBuffer {
 public:
  TypedBuffer() = default;
  TypedBuffer(int count, MPI_Datatype type);
  void* get() const noexcept { return at_bytes(static_cast<void*>(bytes_.data()), -true_lb_); }
  void* at(MPI_Aint index) const noexcept { return element(get(), index, extent_); }

 private:
  Bytes bytes_;
  MPI_Aint true_lb_ = 0;
  MPI_Aint extent_ = 0;
};

// What an Alltoall sends from: its send buffer, or with MPI_IN_PLACE a copy
// of the receive buffer (p blocks of recvcount recvtype).  Not movable: buf
// may point into `saved`'s inline bytes.
class AlltoallSource {
 public:
  AlltoallSource(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int p);
  AlltoallSource(const AlltoallSource&) = delete;
  AlltoallSource& operator=(const AlltoallSource&) = delete;
  const void* buf;
  int count;
  MPI_Datatype type;
  MPI_Aint block;  // bytes between two destinations' blocks
  bool in_place;

 private:
  TypedBuffer saved_;
};

// Local copy "as if sent and received"; nothing for an empty or self copy.
void copy(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount,
          MPI_Datatype rtype);
inline void copy(const void* src, void* dst, int count, MPI_Datatype type) {
  copy(src, count, type, dst, count, type);
}

// Packed byte stream of (buf, count, type).
std::size_t packed_size(int count, MPI_Datatype type);
void pack(const void* buf, int count, MPI_Datatype type, std::byte* out);
void unpack(const std::byte* in, int count, MPI_Datatype type, void* buf);

// Read-only packed image of (buf, count, type): the user's memory when the
// type is contiguous, else a packed copy.
class PackedInput {
 public:
  PackedInput(const void* buf, int count, MPI_Datatype type);
  PackedInput(const PackedInput&) = delete;  // data() may point into copy_'s inline bytes
  PackedInput& operator=(const PackedInput&) = delete;
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  Bytes copy_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// Writable packed image of (buf, count, type): the user's memory when the
// type is contiguous, else a scratch area that finish() unpacks into buf.
// With `initialise`, the scratch starts as the packed current contents.
class PackedOutput {
 public:
  PackedOutput(void* buf, int count, MPI_Datatype type, bool initialise = false);
  PackedOutput(const PackedOutput&) = delete;  // data() may point into scratch_'s inline bytes
  PackedOutput& operator=(const PackedOutput&) = delete;
  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  void finish();

 private:
  Bytes scratch_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  void* buf_;
  int count_;
  MPI_Datatype type_;
};

// inout = in op inout on count elements (the MPI order: in is the left operand).
void reduce_local(const void* in, void* inout, int count, MPI_Datatype type, MPI_Op op);
bool is_commutative(MPI_Op op);

// Powers of two.
inline bool is_power_of_two(int n) noexcept { return n > 0 && (n & (n - 1)) == 0; }
inline int floor_power_of_two(int n) noexcept {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Splitting n items into `parts` nearly equal pieces: piece i has
// n/parts (+1 for the first n%parts pieces) items, starting at offset(i).
struct Split {
  std::size_t n;
  int parts;
  std::size_t count(int i) const noexcept {
    return n / parts + (static_cast<std::size_t>(i) < n % parts ? 1 : 0);
  }
  std::size_t offset(int i) const noexcept {
    std::size_t extra = n % parts;
    std::size_t ui = static_cast<std::size_t>(i);
    return ui * (n / parts) + (ui < extra ? ui : extra);
  }
};

// Requests of one step; waits for and releases them all.
class Requests {
 public:
  void send(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm);
  void recv(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm);
  // On another context of comm (see coll::recv_in).
  void recv_in(std::uint32_t context, void* buf, int count, MPI_Datatype type, int source, int tag,
               core::Comm& comm);
  void wait();
  ~Requests();

 private:
  std::vector<request::Request*> pending_;
};

// Point-to-point on packed bytes (counts in bytes may exceed INT_MAX in
// theory; collectives here keep them below by construction).
int byte_count(std::size_t n);

}  // namespace gridmpi::coll
