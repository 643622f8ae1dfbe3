// Datatypes: predefined and derived, their type maps, and the pack/unpack
// engine used by point-to-point (to build frames), collectives (local copies,
// reductions) and MPI_Pack.  Owner: core/datatype*.cpp.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/handle_table.hpp"

namespace gridmpi::core {

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
// Looks up a handle; throws MpiError(MPI_ERR_TYPE) when invalid.
Datatype& datatype(MPI_Datatype handle);
// Like datatype(), but also requires the type to be committed (or predefined).
Datatype& committed_datatype(MPI_Datatype handle);
// Reference counting of derived types held by pending requests.
void retain_datatype(MPI_Datatype handle);
void release_datatype(MPI_Datatype handle);

// Copies (scount, stype) at src into (rcount, rtype) at dst, as if sent and
// received locally.  Throws MPI_ERR_TRUNCATE when the receive is too small.
void copy_typed(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount,
                MPI_Datatype rtype);

}  // namespace gridmpi::core
