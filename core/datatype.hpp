// Datatypes: predefined and derived, their type maps, and the pack/unpack
// engine used by point-to-point (to build frames), collectives (local copies,
// reductions) and MPI_Pack.  Owner: core/datatype*.cpp.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/external_format.hpp"
#include "core/handle_table.hpp"

namespace gridmpi::core {

// The compact pack program of one element (nested loops of runs of basic
// elements); defined in core/datatype_layout.hpp, private to the datatype code.
struct Layout;

// One run of identical basic elements at a byte displacement, in type-map order.
struct TypeBlock {
  MPI_Aint displacement;   // bytes from the buffer start
  MPI_Datatype basic;      // a predefined, non-pair basic type (MPI_INT, MPI_DOUBLE, ...)
  std::size_t count;       // number of consecutive basic elements
};

struct Datatype {
  MPI_Datatype handle = MPI_DATATYPE_NULL;
  std::size_t size = 0;          // bytes of data in one element (MPI_Type_size)
  MPI_Aint lb = 0, ub = 0;       // extent = ub - lb (after MPI_LB/UB markers and resize)
  MPI_Aint true_lb = 0, true_ub = 0;
  bool committed = false;
  bool predefined = false;
  // True when one element is size bytes with no holes starting at true_lb and
  // extent == size: then count elements are one memcpy.
  bool contiguous = false;
  std::vector<TypeBlock> blocks;  // flattened type map of ONE element (merged runs)
  std::size_t basic_elements = 0; // basic elements in one element (MPI_Get_elements)
  // When every basic element of the type map is the same predefined type (or
  // the type is a predefined pair type used by MINLOC/MAXLOC), that type;
  // otherwise MPI_DATATYPE_NULL.  Reductions use this.
  MPI_Datatype reduction_basic = MPI_DATATYPE_NULL;
  std::string name;
  int combiner = MPI_COMBINER_NAMED;
  // Constructor arguments for MPI_Type_get_contents (issue 4).
  std::vector<int> contents_integers;
  std::vector<MPI_Aint> contents_addresses;
  std::vector<MPI_Datatype> contents_types;
  int refcount = 1;  // derived types stay alive while used by pending operations

  // ---- additions of the datatype implementation ----
  // Largest alignment of the basic elements: the struct constructor pads the
  // extent to a multiple of it (the standard's epsilon).
  std::size_t alignment = 1;
  // "Sticky" lower/upper bound markers (MPI_LB / MPI_UB entries or
  // MPI_Type_create_resized): they override the data bounds in every type
  // built from this one.
  bool explicit_lb = false, explicit_ub = false;
  // The pack program; `blocks` is its full expansion.  For types whose type
  // map has more than max_flattened_blocks runs `blocks` is left empty and
  // blocks_complete is false: use pack/unpack or for_each_block instead.
  std::shared_ptr<const Layout> layout;
  bool blocks_complete = true;
  static constexpr std::size_t max_flattened_blocks = std::size_t{1} << 18;
  // Bytes of one element in the "external32" and "external64" representations.
  std::size_t external32_size = 0;
  std::size_t external64_size = 0;
  std::size_t external_size(ExternalFormat f) const noexcept {
    return f == ExternalFormat::external64 ? external64_size : external32_size;
  }
  // The size, bounds or element count overflowed while the type was built
  // (e.g. contiguous(INT_MAX, contiguous(INT_MAX, MPI_DOUBLE))): queries
  // answer MPI_UNDEFINED and communication with it fails with MPI_ERR_TYPE.
  bool too_large = false;

  // Bytes of the packed stream that hold the first `elements` basic elements
  // of a stream of this type (MPI_Status_set_elements).
  std::size_t bytes_for_elements(MPI_Count elements) const;
  // Calls fn(displacement, basic, count) for every run of the flattened type
  // map of `count` elements (element i displaced by i * extent), in type-map
  // order.  Works for types of any length.
  void for_each_block(std::size_t count,
                      const std::function<void(MPI_Aint, MPI_Datatype, std::size_t)>& fn) const;

  MPI_Aint extent() const noexcept { return ub - lb; }
  MPI_Aint true_extent() const noexcept { return true_ub - true_lb; }

  // Packs count elements starting at buf into out (out.size() >= count*size).
  void pack(const void* buf, std::size_t count, std::byte* out) const;
  // Unpacks count elements from in into buf.
  void unpack(const std::byte* in, std::size_t count, void* buf) const;
  // Streaming variants: bytes [offset, offset+out.size()) of the packed image
  // of count elements.  Used by rendezvous fragments.
  void pack_range(const void* buf, std::size_t count, std::size_t offset,
                  std::span<std::byte> out) const;
  void unpack_range(std::span<const std::byte> in, std::size_t count, std::size_t offset,
                    void* buf) const;
  // Number of basic elements contained in the first `bytes` bytes of a packed
  // stream of this type (MPI_Get_elements); MPI_UNDEFINED if bytes ends inside
  // a basic element.
  MPI_Count elements_in(std::size_t bytes) const;
};

// The process-wide datatype table (predefined types are present before MPI_Init).
HandleTable<Datatype>& datatype_table();
// The predefined types by handle (filled when datatype_table() is built;
// null before, and for handles no predefined type has): the message path's
// lookup without the table's checks.
extern Datatype* predefined_datatypes[GRIDMPI_PREDEFINED_DATATYPE_COUNT];
// Looks up a handle; throws MpiError(MPI_ERR_TYPE) when invalid.
Datatype& datatype_lookup(MPI_Datatype handle);
inline Datatype& datatype(MPI_Datatype handle) {
  if (handle > 0 && handle < GRIDMPI_PREDEFINED_DATATYPE_COUNT) [[likely]]
    if (Datatype* t = predefined_datatypes[handle]) return *t;
  return datatype_lookup(handle);
}
// Like datatype(), but also requires the type to be committed (or predefined).
Datatype& committed_datatype_lookup(MPI_Datatype handle);
inline Datatype& committed_datatype(MPI_Datatype handle) {
  if (handle > 0 && handle < GRIDMPI_PREDEFINED_DATATYPE_COUNT) [[likely]]
    if (Datatype* t = predefined_datatypes[handle]) return *t;
  return committed_datatype_lookup(handle);
}
// Reference counting of derived types held by pending requests.
void retain_datatype(MPI_Datatype handle);
void release_datatype(MPI_Datatype handle);

// Copies (scount, stype) at src into (rcount, rtype) at dst, as if sent and
// received locally.  Throws MPI_ERR_TRUNCATE when the receive is too small.
void copy_typed(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount,
                MPI_Datatype rtype);

// ---- additions of the datatype implementation ----

// Type constructors with the standard's semantics (the C API calls these;
// they work before MPI_Init).  Displacements and strides of the h-variants
// are in bytes, the others in extents of oldtype.  Throw MpiError
// (MPI_ERR_COUNT, MPI_ERR_ARG, MPI_ERR_TYPE) on bad arguments.  The new type
// is not committed.
MPI_Datatype type_contiguous(int count, MPI_Datatype oldtype);
MPI_Datatype type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype);
MPI_Datatype type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype);
MPI_Datatype type_indexed(int count, const int blocklengths[], const int displacements[],
                          MPI_Datatype oldtype);
MPI_Datatype type_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[],
                           MPI_Datatype oldtype);
MPI_Datatype type_indexed_block(int count, int blocklength, const int displacements[],
                                MPI_Datatype oldtype);
MPI_Datatype type_hindexed_block(int count, int blocklength, const MPI_Aint displacements[],
                                 MPI_Datatype oldtype);
MPI_Datatype type_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                         const MPI_Datatype types[]);
MPI_Datatype type_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                           int order, MPI_Datatype oldtype);
MPI_Datatype type_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                         const int dargs[], const int psizes[], int order, MPI_Datatype oldtype);
MPI_Datatype type_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent);
MPI_Datatype type_dup(MPI_Datatype oldtype);
void type_commit(MPI_Datatype handle);
// MPI_Type_free: drops the user's reference (the object lives on while
// pending operations or derived types' contents hold it).
void type_free(MPI_Datatype handle);
// Predefined type of a type class (MPI_TYPECLASS_*) and size, or MPI_ERR_ARG.
MPI_Datatype type_match_size(int typeclass, int size);
// MPI_Type_create_f90_real/_complex/_integer: combiner is MPI_COMBINER_F90_*,
// r alone is used for integers.  Returns a predefined type (one handle per
// argument set) with that combiner and the layout of the matching
// MPI_REALn / MPI_COMPLEXn / MPI_INTEGERn; MPI_ERR_ARG when no kind fits.
MPI_Datatype type_create_f90(int combiner, int p, int r);
// True for the predefined pair types of MINLOC/MAXLOC.
bool is_pair_type(MPI_Datatype handle) noexcept;

// "external32" (big-endian, the standard's sizes; long double as binary128,
// long as 4 bytes): MPI_Pack_external and the IMPI transport; "external64"
// (core/external_format.hpp) between gridmpi clients that negotiated it.
// Packing a value that does not fit its external size (a long beyond 32 bits
// in external32, a wchar_t beyond 16) throws MpiError(MPI_ERR_CONVERSION)
// naming the type, the value and the representation.
std::size_t external32_size(MPI_Datatype type, std::size_t count);
std::size_t external_size(MPI_Datatype type, std::size_t count, ExternalFormat format);
void pack_external32(const void* buf, std::size_t count, MPI_Datatype type, std::byte* out,
                     ExternalFormat format = ExternalFormat::external32);
void unpack_external32(const std::byte* in, std::size_t count, MPI_Datatype type, void* buf,
                       ExternalFormat format = ExternalFormat::external32);
// Byte windows [offset, offset + window size) of the external stream, for
// packets.  A window may start or end inside an element: unpack_range then
// merges the bytes into the element already in buf, so the windows of one
// stream can be unpacked in any order as long as they are disjoint.
void pack_external32_range(const void* buf, std::size_t count, MPI_Datatype type,
                           std::size_t offset, std::span<std::byte> out,
                           ExternalFormat format = ExternalFormat::external32);
void unpack_external32_range(std::span<const std::byte> in, std::size_t count, MPI_Datatype type,
                             std::size_t offset, void* buf, ExternalFormat format = ExternalFormat::external32);
// True when the memory image of a contiguous type is byte for byte its
// external image on this host (one-byte types everywhere; on a big-endian
// host also the integers and IEEE floats of external size): the IMPI
// transport then sends from and receives into the user's buffer directly.
bool external32_is_native(MPI_Datatype type, ExternalFormat format = ExternalFormat::external32);
// The native packed bytes (what MPI_Get_count counts) of the whole basic
// elements in the first ext_bytes bytes of an external stream of (count, type).
std::size_t native_bytes_of_external32(MPI_Datatype type, std::size_t count, std::size_t ext_bytes,
                                       ExternalFormat format = ExternalFormat::external32);
// This build's native representation as an opaque byte string (byte order,
// long double format, size, extent and alignment of every predefined type):
// two processes with equal strings exchange native bytes unconverted.
std::string native_representation();

// Bits of MPI_Status::gridmpi_cancelled: the cancelled flag, and "gridmpi_count
// is external32 bytes" (MPI_Probe of a message that travels in external32).
inline constexpr int status_cancelled = 1;
inline constexpr int status_external32 = 2;
inline constexpr int status_external64 = 4;  // with status_external32: the bytes are external64

}  // namespace gridmpi::core
