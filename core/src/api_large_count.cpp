// C API: MPI-4.0's large-count ("_c") functions, over the int ones.
//
// A count that fits in an int goes straight to the int function.  Above
// INT_MAX:
//  * point-to-point and the collectives with one count per process send one
//    element of a type holding `count` elements (big_type below: pieces of
//    2^30 elements, with count x extent as its extent), so the transports and the
//    receive's status (bytes) see the real size; MPI_Get_count_c divides
//    the bytes by the caller's type as usual;
//  * blocking reductions (MPI_Reduce_c, MPI_Allreduce_c, MPI_Scan_c,
//    MPI_Exscan_c, MPI_Reduce_local_c) run in slices of 2^30 elements, so a
//    user op still sees the caller's datatype;
//  * datatype constructors take block lengths above INT_MAX (such a block
//    becomes one element of a big type; indexed ones are then built as a
//    struct resized to the bounds the indexed type has);
//  * v/w collectives, nonblocking reductions, Pack/Unpack, the buffer
//    functions and vector counts above INT_MAX fail with MPI_ERR_COUNT and
//    a message saying so.
// Errors inside the int function are reported under its name (MPI_Send
// for MPI_Send_c): the message and class are the same.
#include <climits>
#include <cstddef>
#include <vector>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/op.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

constexpr MPI_Count slice = MPI_Count{1} << 30;

bool fits(MPI_Count v) noexcept { return v >= INT_MIN && v <= INT_MAX; }
// A negative count stays negative, so that the int function reports it.
int narrow(MPI_Count v) noexcept { return v < 0 ? (v < INT_MIN ? -1 : static_cast<int>(v)) : static_cast<int>(v); }

[[noreturn]] void too_large(const char* what, MPI_Count value) {
  throw MpiError(MPI_ERR_COUNT, fmt::format("{} {} is above INT_MAX ({}), which gridmpi supports here only for "
                                            "one count per process and block lengths",
                                            what, value, INT_MAX));
}

// Reports an error found here (not by the int function) through comm's handler.
template <class Body>
int checked(MPI_Comm comm, const char* function, Body&& body) noexcept {
  return api_call(comm, function, [&] { body(); });
}

// *out = t if t's bounds are (lb, extent), else t resized to them; t is
// consumed either way.
int exact_bounds(MPI_Datatype t, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* out) {
  MPI_Aint has_lb = 0, has_extent = 0;
  int rc = PMPI_Type_get_extent(t, &has_lb, &has_extent);
  if (rc == MPI_SUCCESS && has_lb == lb && has_extent == extent) {
    *out = t;
    return MPI_SUCCESS;
  }
  if (rc == MPI_SUCCESS) rc = PMPI_Type_create_resized(t, lb, extent, out);
  PMPI_Type_free(&t);
  return rc;
}

// `count` elements of `type` as one element of a new committed type.
int big_type(MPI_Count count, MPI_Datatype type, MPI_Datatype* out) {
  MPI_Aint lb = 0, extent = 0;
  int rc = PMPI_Type_get_extent(type, &lb, &extent);
  if (rc != MPI_SUCCESS) return rc;
  const MPI_Count pieces = count / slice, rest = count % slice;
  if (pieces > INT_MAX)
    return checked(MPI_COMM_WORLD, "MPI_Type_contiguous_c", [&] { too_large("the count", count); });
  MPI_Datatype piece = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL, tail = MPI_DATATYPE_NULL,
               whole = MPI_DATATYPE_NULL;
  if ((rc = PMPI_Type_contiguous(static_cast<int>(slice), type, &piece)) != MPI_SUCCESS) return rc;
  rc = PMPI_Type_contiguous(static_cast<int>(pieces), piece, &body);
  PMPI_Type_free(&piece);
  if (rc != MPI_SUCCESS) return rc;
  if (rest > 0) {
    if ((rc = PMPI_Type_contiguous(static_cast<int>(rest), type, &tail)) != MPI_SUCCESS) {
      PMPI_Type_free(&body);
      return rc;
    }
    int lengths[2] = {1, 1};
    MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>((count - rest) * extent)};
    MPI_Datatype types[2] = {body, tail};
    rc = PMPI_Type_create_struct(2, lengths, displacements, types, &whole);
    PMPI_Type_free(&tail);
    PMPI_Type_free(&body);
  } else {
    whole = body;
  }
  if (rc != MPI_SUCCESS) return rc;
  // The bounds a contiguous type of `count` elements has: the struct's
  // already unless it padded its extent to an alignment the element's
  // extent is not a multiple of (resizing sets sticky bounds, which a
  // struct built from the result would then take: only when needed).
  if ((rc = exact_bounds(whole, lb, static_cast<MPI_Aint>(count * extent), out)) != MPI_SUCCESS) return rc;
  return PMPI_Type_commit(out);
}

// A (count, type) argument as the int functions take it.
class Arg {
 public:
  Arg(MPI_Count count, MPI_Datatype type) {
    if (count <= INT_MAX) {
      count_ = narrow(count);
      type_ = type;
    } else {
      rc_ = big_type(count, type, &owned_);
      count_ = 1;
      type_ = owned_;
    }
  }
  Arg(const Arg&) = delete;
  Arg& operator=(const Arg&) = delete;
  ~Arg() {
    // A pending nonblocking operation keeps its own reference.
    if (owned_ != MPI_DATATYPE_NULL) PMPI_Type_free(&owned_);
  }
  int count() const noexcept { return count_; }
  MPI_Datatype type() const noexcept { return type_; }
  int rc() const noexcept { return rc_; }

 private:
  int count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  MPI_Datatype owned_ = MPI_DATATYPE_NULL;
  int rc_ = MPI_SUCCESS;
};

// The number of entries of a v/w collective's arrays: the remote group's
// size on an intercommunicator, else the communicator's (local: the local
// group's always, as MPI_Reduce_scatter's recvcounts).
int array_length(MPI_Comm comm, bool local = false) {
  int inter = 0, n = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return -1;
  if (inter && !local) {
    if (PMPI_Comm_remote_size(comm, &n) != MPI_SUCCESS) return -1;
  } else if (PMPI_Comm_size(comm, &n) != MPI_SUCCESS) {
    return -1;
  }
  return n;
}

// Narrows an array of counts or displacements (null stays null: an
// argument that is not significant at this process).
template <class T>
const int* ints(const T* in, int n, std::vector<int>& out, const char* what) {
  if (!in || n < 0) return nullptr;
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (!fits(in[i])) too_large(fmt::format("{}[{}]", what, i).c_str(), in[i]);
    out[static_cast<std::size_t>(i)] = static_cast<int>(in[i]);
  }
  return out.data();
}

// buf + bytes (MPI_IN_PLACE and null, as insignificant buffers are, stay).
const void* at(const void* p, MPI_Aint bytes) {
  if (!p || p == MPI_IN_PLACE) return p;
  return static_cast<const std::byte*>(p) + bytes;
}
void* at(void* p, MPI_Aint bytes) { return const_cast<void*>(at(static_cast<const void*>(p), bytes)); }

// A blocking reduction of `count` elements in slices of 2^30: elementwise,
// so the result is the same, and a user op sees the caller's datatype.
template <class Call>
int in_slices(MPI_Count count, MPI_Datatype type, Call&& call) {
  if (count <= INT_MAX) return call(0, narrow(count));
  MPI_Aint lb = 0, extent = 0;
  int rc = PMPI_Type_get_extent(type, &lb, &extent);
  for (MPI_Count done = 0; rc == MPI_SUCCESS && done < count; done += slice)
    rc = call(done * extent, static_cast<int>(std::min(slice, count - done)));
  return rc;
}

}  // namespace

// ---- point-to-point ------------------------------------------------------

#define GRIDMPI_SEND_C(Name)                                                                                  \
  extern "C" int PMPI_##Name##_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,  \
                                 MPI_Comm comm) {                                                             \
    Arg a(count, datatype);                                                                                   \
    return a.rc() != MPI_SUCCESS ? a.rc() : PMPI_##Name(buf, a.count(), a.type(), dest, tag, comm);           \
  }                                                                                                           \
  GRIDMPI_WEAK(Name##_c)
GRIDMPI_SEND_C(Send)
GRIDMPI_SEND_C(Bsend)
GRIDMPI_SEND_C(Ssend)
GRIDMPI_SEND_C(Rsend)

#define GRIDMPI_ISEND_C(Name)                                                                                 \
  extern "C" int PMPI_##Name##_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,  \
                                 MPI_Comm comm, MPI_Request* request) {                                       \
    Arg a(count, datatype);                                                                                   \
    return a.rc() != MPI_SUCCESS ? a.rc() : PMPI_##Name(buf, a.count(), a.type(), dest, tag, comm, request);  \
  }                                                                                                           \
  GRIDMPI_WEAK(Name##_c)
GRIDMPI_ISEND_C(Isend)
GRIDMPI_ISEND_C(Ibsend)
GRIDMPI_ISEND_C(Issend)
GRIDMPI_ISEND_C(Irsend)
GRIDMPI_ISEND_C(Send_init)
GRIDMPI_ISEND_C(Bsend_init)
GRIDMPI_ISEND_C(Ssend_init)
GRIDMPI_ISEND_C(Rsend_init)

extern "C" int PMPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                           MPI_Status* status) {
  Arg a(count, datatype);
  return a.rc() != MPI_SUCCESS ? a.rc() : PMPI_Recv(buf, a.count(), a.type(), source, tag, comm, status);
}
GRIDMPI_WEAK(Recv_c)

#define GRIDMPI_IRECV_C(Name)                                                                                 \
  extern "C" int PMPI_##Name##_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,       \
                                 MPI_Comm comm, MPI_Request* request) {                                       \
    Arg a(count, datatype);                                                                                   \
    return a.rc() != MPI_SUCCESS ? a.rc() : PMPI_##Name(buf, a.count(), a.type(), source, tag, comm, request); \
  }                                                                                                           \
  GRIDMPI_WEAK(Name##_c)
GRIDMPI_IRECV_C(Irecv)
GRIDMPI_IRECV_C(Recv_init)

extern "C" int PMPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                               int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source,
                               int recvtag, MPI_Comm comm, MPI_Status* status) {
  Arg s(sendcount, sendtype), r(recvcount, recvtype);
  if (s.rc() != MPI_SUCCESS) return s.rc();
  if (r.rc() != MPI_SUCCESS) return r.rc();
  return PMPI_Sendrecv(sendbuf, s.count(), s.type(), dest, sendtag, recvbuf, r.count(), r.type(), source, recvtag,
                       comm, status);
}
GRIDMPI_WEAK(Sendrecv_c)

extern "C" int PMPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag,
                                       int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  Arg a(count, datatype);
  return a.rc() != MPI_SUCCESS
             ? a.rc()
             : PMPI_Sendrecv_replace(buf, a.count(), a.type(), dest, sendtag, source, recvtag, comm, status);
}
GRIDMPI_WEAK(Sendrecv_replace_c)

extern "C" int PMPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                            MPI_Status* status) {
  Arg a(count, datatype);
  return a.rc() != MPI_SUCCESS ? a.rc() : PMPI_Mrecv(buf, a.count(), a.type(), message, status);
}
GRIDMPI_WEAK(Mrecv_c)

extern "C" int PMPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                             MPI_Request* request) {
  Arg a(count, datatype);
  return a.rc() != MPI_SUCCESS ? a.rc() : PMPI_Imrecv(buf, a.count(), a.type(), message, request);
}
GRIDMPI_WEAK(Imrecv_c)

extern "C" int PMPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return PMPI_Get_elements_x(status, datatype, count);
}
GRIDMPI_WEAK(Get_elements_c)

extern "C" int PMPI_Buffer_attach_c(void* buffer, MPI_Count size) {
  int rc = checked(MPI_COMM_WORLD, "MPI_Buffer_attach_c", [&] {
    if (size > INT_MAX) too_large("the buffer size", size);
  });
  return rc != MPI_SUCCESS ? rc : PMPI_Buffer_attach(buffer, narrow(size));
}
GRIDMPI_WEAK(Buffer_attach_c)

extern "C" int PMPI_Buffer_detach_c(void* buffer_addr, MPI_Count* size) {
  int n = 0;
  int rc = PMPI_Buffer_detach(buffer_addr, &n);
  if (rc == MPI_SUCCESS && size) *size = n;
  return rc;
}
GRIDMPI_WEAK(Buffer_detach_c)

// ---- datatypes -----------------------------------------------------------

extern "C" int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (count <= INT_MAX) return PMPI_Type_contiguous(narrow(count), oldtype, newtype);
  return big_type(count, oldtype, newtype);
}
GRIDMPI_WEAK(Type_contiguous_c)

namespace {

// vector / hvector with a block length above INT_MAX: blocks of one big element.
int vector_c(const char* function, MPI_Count count, MPI_Count blocklength, MPI_Aint stride_bytes,
             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  int rc = checked(MPI_COMM_WORLD, function, [&] {
    if (count > INT_MAX) too_large("count", count);
  });
  if (rc != MPI_SUCCESS) return rc;
  MPI_Datatype block = MPI_DATATYPE_NULL;
  if ((rc = big_type(blocklength, oldtype, &block)) != MPI_SUCCESS) return rc;
  rc = PMPI_Type_create_hvector(narrow(count), 1, stride_bytes, block, newtype);
  PMPI_Type_free(&block);
  return rc;
}

// The indexed family with some block above INT_MAX elements: a struct of
// (length, oldtype) blocks and (1, big type) blocks at the same byte
// displacements, resized to the bounds the indexed type has when the
// struct's differ (a struct pads its extent to the alignment).
int blocks_c(const char* function, MPI_Count count, const MPI_Count lengths[], const MPI_Count displacements[],
             MPI_Count displacement_unit, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  int rc = checked(MPI_COMM_WORLD, function, [&] {
    if (count > INT_MAX) too_large("count", count);
    if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
  });
  if (rc != MPI_SUCCESS) return rc;
  MPI_Aint lb = 0, extent = 0;
  if ((rc = PMPI_Type_get_extent(oldtype, &lb, &extent)) != MPI_SUCCESS) return rc;
  const int n = static_cast<int>(count);
  std::vector<int> one(static_cast<std::size_t>(n));
  std::vector<MPI_Aint> bytes(static_cast<std::size_t>(n));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(n), oldtype);
  std::vector<MPI_Datatype> owned;
  MPI_Aint low = 0, high = 0;
  bool any = false;
  for (int i = 0; i < n && rc == MPI_SUCCESS; ++i) {
    const MPI_Count length = lengths[i];
    bytes[static_cast<std::size_t>(i)] = static_cast<MPI_Aint>(displacements[i] * displacement_unit);
    if (length > INT_MAX) {
      MPI_Datatype big = MPI_DATATYPE_NULL;
      rc = big_type(length, oldtype, &big);
      owned.push_back(big);
      types[static_cast<std::size_t>(i)] = big;
      one[static_cast<std::size_t>(i)] = 1;
    } else {
      one[static_cast<std::size_t>(i)] = narrow(length);
    }
    if (length > 0) {
      MPI_Aint from = bytes[static_cast<std::size_t>(i)] + lb;
      MPI_Aint to = from + static_cast<MPI_Aint>(length * extent);
      low = any ? std::min(low, from) : from;
      high = any ? std::max(high, to) : to;
      any = true;
    }
  }
  MPI_Datatype joined = MPI_DATATYPE_NULL;
  if (rc == MPI_SUCCESS) rc = PMPI_Type_create_struct(n, one.data(), bytes.data(), types.data(), &joined);
  for (MPI_Datatype& t : owned)
    if (t != MPI_DATATYPE_NULL) PMPI_Type_free(&t);
  if (rc != MPI_SUCCESS) return rc;
  return exact_bounds(joined, low, high - low, newtype);
}

bool all_fit(MPI_Count count, const MPI_Count* a, const MPI_Count* b = nullptr) {
  if (count > INT_MAX) return false;
  for (MPI_Count i = 0; i < count; ++i)
    if ((a && !fits(a[i])) || (b && !fits(b[i]))) return false;
  return true;
}

std::vector<int> as_ints(MPI_Count count, const MPI_Count* a) {
  std::vector<int> out;
  for (MPI_Count i = 0; a && i < count; ++i) out.push_back(static_cast<int>(a[i]));
  return out;
}

std::vector<MPI_Aint> as_aints(MPI_Count count, const MPI_Count* a) {
  std::vector<MPI_Aint> out;
  for (MPI_Count i = 0; a && i < count; ++i) out.push_back(static_cast<MPI_Aint>(a[i]));
  return out;
}

}  // namespace

extern "C" int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                                  MPI_Datatype* newtype) {
  if (fits(count) && fits(blocklength) && fits(stride))
    return PMPI_Type_vector(narrow(count), narrow(blocklength), narrow(stride), oldtype, newtype);
  MPI_Aint lb = 0, extent = 0;
  int rc = PMPI_Type_get_extent(oldtype, &lb, &extent);
  return rc != MPI_SUCCESS ? rc
                           : vector_c("MPI_Type_vector_c", count, blocklength, static_cast<MPI_Aint>(stride * extent),
                                      oldtype, newtype);
}
GRIDMPI_WEAK(Type_vector_c)

extern "C" int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                          MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (fits(count) && fits(blocklength))
    return PMPI_Type_create_hvector(narrow(count), narrow(blocklength), static_cast<MPI_Aint>(stride), oldtype,
                                    newtype);
  return vector_c("MPI_Type_create_hvector_c", count, blocklength, static_cast<MPI_Aint>(stride), oldtype, newtype);
}
GRIDMPI_WEAK(Type_create_hvector_c)

extern "C" int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                   const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  if (count < 0 || all_fit(count, array_of_blocklengths, array_of_displacements)) {
    std::vector<int> lengths = as_ints(count, array_of_blocklengths), displs = as_ints(count, array_of_displacements);
    return PMPI_Type_indexed(narrow(count), lengths.data(), displs.data(), oldtype, newtype);
  }
  MPI_Aint lb = 0, extent = 0;
  int rc = PMPI_Type_get_extent(oldtype, &lb, &extent);
  return rc != MPI_SUCCESS ? rc
                           : blocks_c("MPI_Type_indexed_c", count, array_of_blocklengths, array_of_displacements,
                                      extent, oldtype, newtype);
}
GRIDMPI_WEAK(Type_indexed_c)

extern "C" int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                           const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                           MPI_Datatype* newtype) {
  if (count < 0 || all_fit(count, array_of_blocklengths)) {
    std::vector<int> lengths = as_ints(count, array_of_blocklengths);
    std::vector<MPI_Aint> displs = as_aints(count, array_of_displacements);
    return PMPI_Type_create_hindexed(narrow(count), lengths.data(), displs.data(), oldtype, newtype);
  }
  return blocks_c("MPI_Type_create_hindexed_c", count, array_of_blocklengths, array_of_displacements, 1, oldtype,
                  newtype);
}
GRIDMPI_WEAK(Type_create_hindexed_c)

extern "C" int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                                MPI_Datatype* newtype) {
  if (count < 0 || (fits(blocklength) && all_fit(count, array_of_displacements))) {
    std::vector<int> displs = as_ints(count, array_of_displacements);
    return PMPI_Type_create_indexed_block(narrow(count), narrow(blocklength), displs.data(), oldtype, newtype);
  }
  std::vector<MPI_Count> lengths(count > INT_MAX ? 0 : static_cast<std::size_t>(count), blocklength);
  MPI_Aint lb = 0, extent = 0;
  int rc = PMPI_Type_get_extent(oldtype, &lb, &extent);
  return rc != MPI_SUCCESS ? rc
                           : blocks_c("MPI_Type_create_indexed_block_c", count, lengths.data(), array_of_displacements,
                                      extent, oldtype, newtype);
}
GRIDMPI_WEAK(Type_create_indexed_block_c)

extern "C" int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                                 const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                                 MPI_Datatype* newtype) {
  if (count < 0 || (fits(blocklength) && count <= INT_MAX)) {
    std::vector<MPI_Aint> displs = as_aints(count, array_of_displacements);
    return PMPI_Type_create_hindexed_block(narrow(count), narrow(blocklength), displs.data(), oldtype, newtype);
  }
  std::vector<MPI_Count> lengths(count > INT_MAX ? 0 : static_cast<std::size_t>(count), blocklength);
  return blocks_c("MPI_Type_create_hindexed_block_c", count, lengths.data(), array_of_displacements, 1, oldtype,
                  newtype);
}
GRIDMPI_WEAK(Type_create_hindexed_block_c)

extern "C" int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                         const MPI_Count array_of_displacements[],
                                         const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  int rc = checked(MPI_COMM_WORLD, "MPI_Type_create_struct_c", [&] {
    if (count > INT_MAX) too_large("count", count);
  });
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> lengths;
  std::vector<MPI_Datatype> types, owned;
  std::vector<MPI_Aint> displs = as_aints(count, array_of_displacements);
  for (MPI_Count i = 0; i < count && rc == MPI_SUCCESS; ++i) {
    if (array_of_blocklengths[i] > INT_MAX) {
      // One element of a big type has the bounds and alignment the block has.
      MPI_Datatype big = MPI_DATATYPE_NULL;
      rc = big_type(array_of_blocklengths[i], array_of_types[i], &big);
      owned.push_back(big);
      lengths.push_back(1);
      types.push_back(big);
    } else {
      lengths.push_back(narrow(array_of_blocklengths[i]));
      types.push_back(array_of_types ? array_of_types[i] : MPI_DATATYPE_NULL);
    }
  }
  if (rc == MPI_SUCCESS)
    rc = PMPI_Type_create_struct(narrow(count), lengths.data(), displs.data(), types.data(), newtype);
  for (MPI_Datatype& t : owned)
    if (t != MPI_DATATYPE_NULL) PMPI_Type_free(&t);
  return rc;
}
GRIDMPI_WEAK(Type_create_struct_c)

extern "C" int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                                          MPI_Datatype* newtype) {
  return PMPI_Type_create_resized(oldtype, static_cast<MPI_Aint>(lb), static_cast<MPI_Aint>(extent), newtype);
}
GRIDMPI_WEAK(Type_create_resized_c)

extern "C" int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) { return PMPI_Type_size_x(datatype, size); }
GRIDMPI_WEAK(Type_size_c)

extern "C" int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  return PMPI_Type_get_extent_x(datatype, lb, extent);
}
GRIDMPI_WEAK(Type_get_extent_c)

extern "C" int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  return PMPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}
GRIDMPI_WEAK(Type_get_true_extent_c)

// The envelope and contents as the int functions give them (no large
// counts: a type built with counts above INT_MAX reports the struct and
// resized types it was built from).
extern "C" int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers, MPI_Count* num_addresses,
                                        MPI_Count* num_large_counts, MPI_Count* num_datatypes, int* combiner) {
  int ni = 0, na = 0, nd = 0;
  int rc = PMPI_Type_get_envelope(datatype, &ni, &na, &nd, combiner);
  if (rc != MPI_SUCCESS) return rc;
  if (num_integers) *num_integers = ni;
  if (num_addresses) *num_addresses = na;
  if (num_large_counts) *num_large_counts = 0;
  if (num_datatypes) *num_datatypes = nd;
  return MPI_SUCCESS;
}
GRIDMPI_WEAK(Type_get_envelope_c)

extern "C" int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                                        MPI_Count max_large_counts, MPI_Count max_datatypes,
                                        int array_of_integers[], MPI_Aint array_of_addresses[],
                                        MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]) {
  (void)max_large_counts;
  (void)array_of_large_counts;
  return PMPI_Type_get_contents(datatype, narrow(std::min<MPI_Count>(max_integers, INT_MAX)),
                                narrow(std::min<MPI_Count>(max_addresses, INT_MAX)),
                                narrow(std::min<MPI_Count>(max_datatypes, INT_MAX)), array_of_integers,
                                array_of_addresses, array_of_datatypes);
}
GRIDMPI_WEAK(Type_get_contents_c)

extern "C" int PMPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
                           MPI_Count outsize, MPI_Count* position, MPI_Comm comm) {
  int rc = checked(comm, "MPI_Pack_c", [&] {
    require_out(position, "position");
    if (incount > INT_MAX) too_large("incount", incount);
    if (outsize > INT_MAX) too_large("outsize", outsize);
    if (*position > INT_MAX) too_large("position", *position);
  });
  if (rc != MPI_SUCCESS) return rc;
  int pos = narrow(*position);
  rc = PMPI_Pack(inbuf, narrow(incount), datatype, outbuf, narrow(outsize), &pos, comm);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}
GRIDMPI_WEAK(Pack_c)

extern "C" int PMPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                             MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm) {
  int rc = checked(comm, "MPI_Unpack_c", [&] {
    require_out(position, "position");
    if (insize > INT_MAX) too_large("insize", insize);
    if (outcount > INT_MAX) too_large("outcount", outcount);
    if (*position > INT_MAX) too_large("position", *position);
  });
  if (rc != MPI_SUCCESS) return rc;
  int pos = narrow(*position);
  rc = PMPI_Unpack(inbuf, narrow(insize), &pos, outbuf, narrow(outcount), datatype, comm);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}
GRIDMPI_WEAK(Unpack_c)

extern "C" int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size) {
  int rc = checked(comm, "MPI_Pack_size_c", [&] {
    require_out(size, "size");
    if (incount > INT_MAX) too_large("incount", incount);
  });
  if (rc != MPI_SUCCESS) return rc;
  int n = 0;
  rc = PMPI_Pack_size(narrow(incount), datatype, comm, &n);
  if (rc == MPI_SUCCESS) *size = n;
  return rc;
}
GRIDMPI_WEAK(Pack_size_c)

extern "C" int PMPI_Pack_external_c(const char datarep[], const void* inbuf, MPI_Count incount,
                                    MPI_Datatype datatype, void* outbuf, MPI_Count outsize, MPI_Count* position) {
  int rc = checked(MPI_COMM_WORLD, "MPI_Pack_external_c", [&] {
    require_out(position, "position");
    if (incount > INT_MAX) too_large("incount", incount);
  });
  if (rc != MPI_SUCCESS) return rc;
  MPI_Aint pos = static_cast<MPI_Aint>(*position);
  rc = PMPI_Pack_external(datarep, inbuf, narrow(incount), datatype, outbuf, static_cast<MPI_Aint>(outsize), &pos);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}
GRIDMPI_WEAK(Pack_external_c)

extern "C" int PMPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize,
                                      MPI_Count* position, void* outbuf, MPI_Count outcount,
                                      MPI_Datatype datatype) {
  int rc = checked(MPI_COMM_WORLD, "MPI_Unpack_external_c", [&] {
    require_out(position, "position");
    if (outcount > INT_MAX) too_large("outcount", outcount);
  });
  if (rc != MPI_SUCCESS) return rc;
  MPI_Aint pos = static_cast<MPI_Aint>(*position);
  rc = PMPI_Unpack_external(datarep, inbuf, static_cast<MPI_Aint>(insize), &pos, outbuf, narrow(outcount),
                            datatype);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}
GRIDMPI_WEAK(Unpack_external_c)

extern "C" int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                                         MPI_Count* size) {
  int rc = checked(MPI_COMM_WORLD, "MPI_Pack_external_size_c", [&] {
    require_out(size, "size");
    if (incount > INT_MAX) too_large("incount", incount);
  });
  if (rc != MPI_SUCCESS) return rc;
  MPI_Aint n = 0;
  rc = PMPI_Pack_external_size(datarep, narrow(incount), datatype, &n);
  if (rc == MPI_SUCCESS) *size = n;
  return rc;
}
GRIDMPI_WEAK(Pack_external_size_c)

// ---- reduction operations --------------------------------------------------

extern "C" int PMPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
  return api_call(MPI_COMM_WORLD, "MPI_Op_create_c", [&] {
    require_out(op, "op");
    *op = op_create_c(user_fn, commute != 0);
  });
}
GRIDMPI_WEAK(Op_create_c)

extern "C" int PMPI_Reduce_local_c(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype,
                                   MPI_Op op) {
  return in_slices(count, datatype, [&](MPI_Aint at_byte, int n) {
    return PMPI_Reduce_local(at(inbuf, at_byte), at(inoutbuf, at_byte), n, datatype, op);
  });
}
GRIDMPI_WEAK(Reduce_local_c)

// ---- collectives ---------------------------------------------------------

extern "C" int PMPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  Arg a(count, datatype);
  return a.rc() != MPI_SUCCESS ? a.rc() : PMPI_Bcast(buffer, a.count(), a.type(), root, comm);
}
GRIDMPI_WEAK(Bcast_c)

extern "C" int PMPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                             MPI_Request* request) {
  Arg a(count, datatype);
  return a.rc() != MPI_SUCCESS ? a.rc() : PMPI_Ibcast(buffer, a.count(), a.type(), root, comm, request);
}
GRIDMPI_WEAK(Ibcast_c)

// Send and receive arguments of the collectives with one count per process
// (the send side's is ignored with MPI_IN_PLACE).
#define GRIDMPI_PAIR_ARGS                                                           \
  Arg s(sendbuf == MPI_IN_PLACE ? 0 : sendcount, sendtype), r(recvcount, recvtype); \
  if (s.rc() != MPI_SUCCESS) return s.rc();                                         \
  if (r.rc() != MPI_SUCCESS) return r.rc();

#define GRIDMPI_ROOTED_C(Name, IName)                                                                                  \
  extern "C" int PMPI_##Name##_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, \
                                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {         \
    GRIDMPI_PAIR_ARGS                                                                                           \
    return PMPI_##Name(sendbuf, s.count(), s.type(), recvbuf, r.count(), r.type(), root, comm);                 \
  }                                                                                                             \
  GRIDMPI_WEAK(Name##_c)                                                                                        \
  extern "C" int PMPI_##IName##_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,             \
                                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,          \
                                  MPI_Comm comm, MPI_Request* request) {                                        \
    GRIDMPI_PAIR_ARGS                                                                                           \
    return PMPI_##IName(sendbuf, s.count(), s.type(), recvbuf, r.count(), r.type(), root, comm, request);       \
  }                                                                                                             \
  GRIDMPI_WEAK(IName##_c)
GRIDMPI_ROOTED_C(Gather, Igather)
GRIDMPI_ROOTED_C(Scatter, Iscatter)

#define GRIDMPI_ALL_C(Name, IName)                                                                                     \
  extern "C" int PMPI_##Name##_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, \
                                 MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {                   \
    GRIDMPI_PAIR_ARGS                                                                                           \
    return PMPI_##Name(sendbuf, s.count(), s.type(), recvbuf, r.count(), r.type(), comm);                       \
  }                                                                                                             \
  GRIDMPI_WEAK(Name##_c)                                                                                        \
  extern "C" int PMPI_##IName##_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,             \
                                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,     \
                                  MPI_Request* request) {                                                       \
    GRIDMPI_PAIR_ARGS                                                                                           \
    return PMPI_##IName(sendbuf, s.count(), s.type(), recvbuf, r.count(), r.type(), comm, request);             \
  }                                                                                                             \
  GRIDMPI_WEAK(IName##_c)
GRIDMPI_ALL_C(Allgather, Iallgather)
GRIDMPI_ALL_C(Alltoall, Ialltoall)

// The v collectives: counts and displacements narrowed to int.
struct VArrays {
  std::vector<int> c1, d1, c2, d2;
};

extern "C" int PMPI_Gatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                              MPI_Comm comm) {
  VArrays v;
  const int *rc_ = nullptr, *d_ = nullptr;
  int rc = checked(comm, "MPI_Gatherv_c", [&] {
    if (sendcount > INT_MAX) too_large("sendcount", sendcount);
    int n = array_length(comm);
    rc_ = ints(recvcounts, n, v.c1, "recvcounts");
    d_ = ints(displs, n, v.d1, "displs");
  });
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Gatherv(sendbuf, narrow(sendcount), sendtype, recvbuf, rc_, d_, recvtype, root, comm);
}
GRIDMPI_WEAK(Gatherv_c)

extern "C" int PMPI_Igatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Request* request) {
  VArrays v;
  const int *rc_ = nullptr, *d_ = nullptr;
  int rc = checked(comm, "MPI_Igatherv_c", [&] {
    if (sendcount > INT_MAX) too_large("sendcount", sendcount);
    int n = array_length(comm);
    rc_ = ints(recvcounts, n, v.c1, "recvcounts");
    d_ = ints(displs, n, v.d1, "displs");
  });
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Igatherv(sendbuf, narrow(sendcount), sendtype, recvbuf, rc_, d_, recvtype, root, comm,
                                           request);
}
GRIDMPI_WEAK(Igatherv_c)

extern "C" int PMPI_Scatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                               MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               int root, MPI_Comm comm) {
  VArrays v;
  const int *sc_ = nullptr, *d_ = nullptr;
  int rc = checked(comm, "MPI_Scatterv_c", [&] {
    if (recvcount > INT_MAX) too_large("recvcount", recvcount);
    int n = array_length(comm);
    sc_ = ints(sendcounts, n, v.c1, "sendcounts");
    d_ = ints(displs, n, v.d1, "displs");
  });
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Scatterv(sendbuf, sc_, d_, sendtype, recvbuf, narrow(recvcount), recvtype, root, comm);
}
GRIDMPI_WEAK(Scatterv_c)

extern "C" int PMPI_Iscatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                int root, MPI_Comm comm, MPI_Request* request) {
  VArrays v;
  const int *sc_ = nullptr, *d_ = nullptr;
  int rc = checked(comm, "MPI_Iscatterv_c", [&] {
    if (recvcount > INT_MAX) too_large("recvcount", recvcount);
    int n = array_length(comm);
    sc_ = ints(sendcounts, n, v.c1, "sendcounts");
    d_ = ints(displs, n, v.d1, "displs");
  });
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Iscatterv(sendbuf, sc_, d_, sendtype, recvbuf, narrow(recvcount), recvtype, root,
                                            comm, request);
}
GRIDMPI_WEAK(Iscatterv_c)

extern "C" int PMPI_Allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                 MPI_Comm comm) {
  VArrays v;
  const int *rc_ = nullptr, *d_ = nullptr;
  int rc = checked(comm, "MPI_Allgatherv_c", [&] {
    if (sendbuf != MPI_IN_PLACE && sendcount > INT_MAX) too_large("sendcount", sendcount);
    int n = array_length(comm);
    rc_ = ints(recvcounts, n, v.c1, "recvcounts");
    d_ = ints(displs, n, v.d1, "displs");
  });
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Allgatherv(sendbuf, narrow(sendcount), sendtype, recvbuf, rc_, d_, recvtype, comm);
}
GRIDMPI_WEAK(Allgatherv_c)

extern "C" int PMPI_Iallgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Request* request) {
  VArrays v;
  const int *rc_ = nullptr, *d_ = nullptr;
  int rc = checked(comm, "MPI_Iallgatherv_c", [&] {
    if (sendbuf != MPI_IN_PLACE && sendcount > INT_MAX) too_large("sendcount", sendcount);
    int n = array_length(comm);
    rc_ = ints(recvcounts, n, v.c1, "recvcounts");
    d_ = ints(displs, n, v.d1, "displs");
  });
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Iallgatherv(sendbuf, narrow(sendcount), sendtype, recvbuf, rc_, d_, recvtype, comm,
                                              request);
}
GRIDMPI_WEAK(Iallgatherv_c)

namespace {

// Alltoallv's and alltoallw's four arrays.
int alltoall_arrays(MPI_Comm comm, const char* function, const void* sendbuf, const MPI_Count sendcounts[],
                    const MPI_Aint sdispls[], const MPI_Count recvcounts[], const MPI_Aint rdispls[], VArrays& v,
                    const int* out[4]) {
  return checked(comm, function, [&] {
    int n = array_length(comm);
    bool in_place = sendbuf == MPI_IN_PLACE;
    out[0] = in_place ? nullptr : ints(sendcounts, n, v.c1, "sendcounts");
    out[1] = in_place ? nullptr : ints(sdispls, n, v.d1, "sdispls");
    out[2] = ints(recvcounts, n, v.c2, "recvcounts");
    out[3] = ints(rdispls, n, v.d2, "rdispls");
  });
}

}  // namespace

extern "C" int PMPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  VArrays v;
  const int* a[4] = {};
  int rc = alltoall_arrays(comm, "MPI_Alltoallv_c", sendbuf, sendcounts, sdispls, recvcounts, rdispls, v, a);
  return rc != MPI_SUCCESS ? rc : PMPI_Alltoallv(sendbuf, a[0], a[1], sendtype, recvbuf, a[2], a[3], recvtype, comm);
}
GRIDMPI_WEAK(Alltoallv_c)

extern "C" int PMPI_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Request* request) {
  VArrays v;
  const int* a[4] = {};
  int rc = alltoall_arrays(comm, "MPI_Ialltoallv_c", sendbuf, sendcounts, sdispls, recvcounts, rdispls, v, a);
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Ialltoallv(sendbuf, a[0], a[1], sendtype, recvbuf, a[2], a[3], recvtype, comm,
                                             request);
}
GRIDMPI_WEAK(Ialltoallv_c)

extern "C" int PMPI_Alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  VArrays v;
  const int* a[4] = {};
  int rc = alltoall_arrays(comm, "MPI_Alltoallw_c", sendbuf, sendcounts, sdispls, recvcounts, rdispls, v, a);
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Alltoallw(sendbuf, a[0], a[1], sendtypes, recvbuf, a[2], a[3], recvtypes, comm);
}
GRIDMPI_WEAK(Alltoallw_c)

extern "C" int PMPI_Ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Request* request) {
  VArrays v;
  const int* a[4] = {};
  int rc = alltoall_arrays(comm, "MPI_Ialltoallw_c", sendbuf, sendcounts, sdispls, recvcounts, rdispls, v, a);
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Ialltoallw(sendbuf, a[0], a[1], sendtypes, recvbuf, a[2], a[3], recvtypes, comm,
                                             request);
}
GRIDMPI_WEAK(Ialltoallw_c)

extern "C" int PMPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                             int root, MPI_Comm comm) {
  return in_slices(count, datatype, [&](MPI_Aint at_byte, int n) {
    return PMPI_Reduce(at(sendbuf, at_byte), at(recvbuf, at_byte), n, datatype, op, root, comm);
  });
}
GRIDMPI_WEAK(Reduce_c)

#define GRIDMPI_ALLREDUCE_LIKE_C(Name, IName)                                                                          \
  extern "C" int PMPI_##Name##_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,    \
                                 MPI_Op op, MPI_Comm comm) {                                                    \
    return in_slices(count, datatype, [&](MPI_Aint at_byte, int n) {                                            \
      return PMPI_##Name(at(sendbuf, at_byte), at(recvbuf, at_byte), n, datatype, op, comm);                    \
    });                                                                                                         \
  }                                                                                                             \
  GRIDMPI_WEAK(Name##_c)                                                                                        \
  extern "C" int PMPI_##IName##_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,   \
                                  MPI_Op op, MPI_Comm comm, MPI_Request* request) {                             \
    int rc = checked(comm, "MPI_" #IName "_c", [&] {                                                            \
      if (count > INT_MAX) too_large("count (of a nonblocking reduction)", count);                              \
    });                                                                                                         \
    return rc != MPI_SUCCESS ? rc : PMPI_##IName(sendbuf, recvbuf, narrow(count), datatype, op, comm, request); \
  }                                                                                                             \
  GRIDMPI_WEAK(IName##_c)
GRIDMPI_ALLREDUCE_LIKE_C(Allreduce, Iallreduce)
GRIDMPI_ALLREDUCE_LIKE_C(Scan, Iscan)
GRIDMPI_ALLREDUCE_LIKE_C(Exscan, Iexscan)

extern "C" int PMPI_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              int root, MPI_Comm comm, MPI_Request* request) {
  int rc = checked(comm, "MPI_Ireduce_c", [&] {
    if (count > INT_MAX) too_large("count (of a nonblocking reduction)", count);
  });
  return rc != MPI_SUCCESS ? rc : PMPI_Ireduce(sendbuf, recvbuf, narrow(count), datatype, op, root, comm, request);
}
GRIDMPI_WEAK(Ireduce_c)

extern "C" int PMPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  int rc = checked(comm, "MPI_Reduce_scatter_block_c", [&] {
    if (recvcount > INT_MAX) too_large("recvcount", recvcount);
  });
  return rc != MPI_SUCCESS ? rc : PMPI_Reduce_scatter_block(sendbuf, recvbuf, narrow(recvcount), datatype, op, comm);
}
GRIDMPI_WEAK(Reduce_scatter_block_c)

extern "C" int PMPI_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  int rc = checked(comm, "MPI_Ireduce_scatter_block_c", [&] {
    if (recvcount > INT_MAX) too_large("recvcount", recvcount);
  });
  return rc != MPI_SUCCESS ? rc
                           : PMPI_Ireduce_scatter_block(sendbuf, recvbuf, narrow(recvcount), datatype, op, comm,
                                                        request);
}
GRIDMPI_WEAK(Ireduce_scatter_block_c)

extern "C" int PMPI_Reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  VArrays v;
  const int* c = nullptr;
  int rc = checked(comm, "MPI_Reduce_scatter_c", [&] {
    c = ints(recvcounts, array_length(comm, true), v.c1, "recvcounts");
  });
  return rc != MPI_SUCCESS ? rc : PMPI_Reduce_scatter(sendbuf, recvbuf, c, datatype, op, comm);
}
GRIDMPI_WEAK(Reduce_scatter_c)

extern "C" int PMPI_Ireduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  VArrays v;
  const int* c = nullptr;
  int rc = checked(comm, "MPI_Ireduce_scatter_c", [&] {
    c = ints(recvcounts, array_length(comm, true), v.c1, "recvcounts");
  });
  return rc != MPI_SUCCESS ? rc : PMPI_Ireduce_scatter(sendbuf, recvbuf, c, datatype, op, comm, request);
}
GRIDMPI_WEAK(Ireduce_scatter_c)
