#include "core/coll/util.hpp"

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/datatype.hpp"
#include "base/error.hpp"
#include "core/op.hpp"

namespace gridmpi::coll {

Shape shape(MPI_Datatype type) {
  const core::Datatype& t = core::datatype(type);
  return Shape{t.size, t.extent(), t.true_lb, t.true_extent(), t.contiguous};
}

namespace {

// Bytes' per-thread cache of large blocks, least recently freed first.
struct ScratchCache {
  struct Block {
    std::unique_ptr<std::byte[]> data;
    std::size_t capacity;
  };
  std::vector<Block> blocks;
  std::size_t bytes = 0;
  ~ScratchCache();
};
// Set when this thread's cache is gone (a Bytes destroyed later, in a static
// destructor, frees its block itself); trivially destructible, so readable
// until the thread ends.
thread_local bool scratch_gone = false;
thread_local ScratchCache scratch;
ScratchCache::~ScratchCache() { scratch_gone = true; }

}  // namespace

Bytes::Bytes(std::size_t n) : size_(n) {
  if (n <= inline_size) return;
  if (n >= scratch_min && !scratch_gone) {
    // The smallest cached block that holds n without wasting more than 3n.
    auto& blocks = scratch.blocks;
    auto best = blocks.end();
    for (auto it = blocks.begin(); it != blocks.end(); ++it)
      if (it->capacity >= n && it->capacity / 4 <= n && (best == blocks.end() || it->capacity < best->capacity))
        best = it;
    if (best != blocks.end()) {
      heap_ = std::move(best->data);
      capacity_ = best->capacity;
      scratch.bytes -= capacity_;
      blocks.erase(best);
      return;
    }
  }
  heap_ = std::make_unique_for_overwrite<std::byte[]>(n);
  capacity_ = n;
}

void Bytes::release() noexcept {
  if (!heap_) return;
  if (capacity_ >= scratch_min && capacity_ <= scratch_bytes && !scratch_gone) {
    try {
      auto& blocks = scratch.blocks;
      blocks.push_back({std::move(heap_), capacity_});
      scratch.bytes += capacity_;
      while (blocks.size() > scratch_blocks || scratch.bytes > scratch_bytes) {
        scratch.bytes -= blocks.front().capacity;
        blocks.erase(blocks.begin());
      }
    } catch (...) {
      // No room to remember it: heap_ (if not moved) frees it.
    }
  }
  heap_.reset();
  capacity_ = 0;
}

Bytes::Bytes(Bytes&& other) noexcept
    : heap_(std::move(other.heap_)), size_(other.size_), capacity_(other.capacity_) {
  if (size_ > 0 && size_ <= inline_size) std::memcpy(inline_, other.inline_, size_);
  other.size_ = other.capacity_ = 0;
}

Bytes& Bytes::operator=(Bytes&& other) noexcept {
  if (this == &other) return *this;
  release();
  heap_ = std::move(other.heap_);
  size_ = other.size_;
  capacity_ = other.capacity_;
  if (size_ > 0 && size_ <= inline_size) std::memcpy(inline_, other.inline_, size_);
  other.size_ = other.capacity_ = 0;
  return *this;
}

Bytes::~Bytes() { release(); }

std::size_t Bytes::cached_blocks() noexcept { return scratch_gone ? 0 : scratch.blocks.size(); }
std::size_t Bytes::cached_bytes() noexcept { return scratch_gone ? 0 : scratch.bytes; }

TypedBuffer::TypedBuffer(int count, MPI_Datatype type) {
  if (count <= 0) return;
  Shape s = shape(type);
  true_lb_ = s.true_lb;
  extent_ = s.extent;
  // A negative extent (resized types) spreads elements below the first one;
  // cover both directions.
  MPI_Aint span = s.true_extent + static_cast<MPI_Aint>(count - 1) * (s.extent < 0 ? -s.extent : s.extent);
  if (s.extent < 0) true_lb_ += static_cast<MPI_Aint>(count - 1) * s.extent;
  bytes_ = Bytes(static_cast<std::size_t>(span > 0 ? span : 0));
}

AlltoallSource::AlltoallSource(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, int p)
    : buf(sendbuf), count(sendcount), type(sendtype), in_place(sendbuf == MPI_IN_PLACE) {
  if (in_place) {
    long long total = static_cast<long long>(p) * recvcount;
    require(total <= INT_MAX, MPI_ERR_COUNT, "alltoall: too many elements for one buffer");
    saved_ = TypedBuffer(static_cast<int>(total), recvtype);
    copy(recvbuf, saved_.get(), static_cast<int>(total), recvtype);
    buf = saved_.get();
    count = recvcount;
    type = recvtype;
  }
  block = static_cast<MPI_Aint>(count) * shape(type).extent;
}

void copy(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount,
          MPI_Datatype rtype) {
  if (scount == 0) return;
  if (src == dst && scount == rcount && stype == rtype) return;
  core::copy_typed(src, scount, stype, dst, rcount, rtype);
}

std::size_t packed_size(int count, MPI_Datatype type) {
  return count <= 0 ? 0 : static_cast<std::size_t>(count) * core::datatype(type).size;
}

void pack(const void* buf, int count, MPI_Datatype type, std::byte* out) {
  if (count <= 0) return;
  const core::Datatype& t = core::datatype(type);
  if (t.contiguous) {
    std::memcpy(out, at_bytes(buf, t.true_lb), static_cast<std::size_t>(count) * t.size);
  } else {
    t.pack(buf, static_cast<std::size_t>(count), out);
  }
}

void unpack(const std::byte* in, int count, MPI_Datatype type, void* buf) {
  if (count <= 0) return;
  const core::Datatype& t = core::datatype(type);
  if (t.contiguous) {
    std::memcpy(at_bytes(buf, t.true_lb), in, static_cast<std::size_t>(count) * t.size);
  } else {
    t.unpack(in, static_cast<std::size_t>(count), buf);
  }
}

PackedInput::PackedInput(const void* buf, int count, MPI_Datatype type)
    : size_(packed_size(count, type)) {
  if (size_ == 0) return;
  const core::Datatype& t = core::datatype(type);
  if (t.contiguous) {
    data_ = static_cast<const std::byte*>(at_bytes(buf, t.true_lb));
  } else {
    copy_ = Bytes(size_);
    pack(buf, count, type, copy_.data());
    data_ = copy_.data();
  }
}

PackedOutput::PackedOutput(void* buf, int count, MPI_Datatype type, bool initialise)
    : size_(packed_size(count, type)), buf_(buf), count_(count), type_(type) {
  if (size_ == 0) return;
  const core::Datatype& t = core::datatype(type);
  if (t.contiguous) {
    data_ = static_cast<std::byte*>(at_bytes(buf, t.true_lb));
  } else {
    scratch_ = Bytes(size_);
    data_ = scratch_.data();
    if (initialise) pack(buf, count, type, data_);
  }
}

void PackedOutput::finish() {
  if (scratch_.data() != nullptr) unpack(scratch_.data(), count_, type_, buf_);
}

void reduce_local(const void* in, void* inout, int count, MPI_Datatype type, MPI_Op op) {
  if (count <= 0) return;
  core::op(op).apply(in, inout, count, type);
}

bool is_commutative(MPI_Op op) { return core::op(op).commutative; }

void Requests::send(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                    core::Comm& comm) {
  pending_.reserve(pending_.size() + 1);  // so that push_back cannot lose the request
  pending_.push_back(coll::isend(buf, count, type, dest, tag, comm));
}

void Requests::recv(void* buf, int count, MPI_Datatype type, int source, int tag,
                    core::Comm& comm) {
  recv_in(comm.coll_context(), buf, count, type, source, tag, comm);
}

void Requests::recv_in(std::uint32_t context, void* buf, int count, MPI_Datatype type, int source, int tag,
                       core::Comm& comm) {
  pending_.reserve(pending_.size() + 1);
  pending_.push_back(coll::irecv_in(context, buf, count, type, source, tag, comm));
}

void Requests::wait() {
  std::vector<request::Request*> requests;
  requests.swap(pending_);
  wait_all(requests);
}

Requests::~Requests() {
  // Only reached with pending requests when a post failed: the others still
  // point into buffers about to be freed, so let them finish first.
  if (pending_.empty()) return;
  try {
    wait();
  } catch (...) {
  }
}

int byte_count(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX)) {
    throw MpiError(MPI_ERR_COUNT, "collective message of " + std::to_string(n) +
                                      " bytes is larger than INT_MAX; split the operation");
  }
  return static_cast<int>(n);
}

}  // namespace gridmpi::coll
