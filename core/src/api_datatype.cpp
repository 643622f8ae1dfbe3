// C API: datatype constructors and queries, MPI_Pack/Unpack (native and
// external32), status element counts.  None of these needs MPI_Init: the
// datatype table exists from the first call.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/api.hpp"
#include "core/datatype.hpp"
#include "core/job_layout.hpp"

using gridmpi::MpiError;
using gridmpi::require;
namespace core = gridmpi::core;
using gridmpi::core::require_out;

namespace {

// Where an int result cannot hold a value the standard asks for MPI_UNDEFINED.
int to_int_or_undefined(long long value) {
  return value > INT_MAX || value < INT_MIN ? MPI_UNDEFINED : static_cast<int>(value);
}

// A type whose size or bounds overflowed (Datatype::too_large) answers
// MPI_UNDEFINED to every size and extent query.
template <class T>
T undefined_if_too_large(const core::Datatype& t, T value) {
  return t.too_large ? static_cast<T>(MPI_UNDEFINED) : value;
}

void require_external32(const char* datarep) {
  require_out(datarep, "datarep");
  if (std::strcmp(datarep, "external32") != 0)
    throw MpiError(MPI_ERR_UNSUPPORTED_DATAREP,
                   std::string("data representation \"") + datarep +
                       "\" is not supported (only \"external32\")");
}

}  // namespace

// ---- constructors ----

extern "C" int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_contiguous", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_contiguous(count, oldtype);
  });
}
GRIDMPI_WEAK(Type_contiguous)

extern "C" int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_vector", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_vector(count, blocklength, stride, oldtype);
  });
}
GRIDMPI_WEAK(Type_vector)

extern "C" int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                        MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_hvector", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_hvector(count, blocklength, stride, oldtype);
  });
}
GRIDMPI_WEAK(Type_create_hvector)

extern "C" int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
                                 MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_hvector", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_hvector(count, blocklength, stride, oldtype);
  });
}
GRIDMPI_WEAK(Type_hvector)

extern "C" int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                                 const int array_of_displacements[], MPI_Datatype oldtype,
                                 MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_indexed", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_indexed(count, array_of_blocklengths, array_of_displacements, oldtype);
  });
}
GRIDMPI_WEAK(Type_indexed)

extern "C" int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                         const MPI_Aint array_of_displacements[],
                                         MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_hindexed", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype);
  });
}
GRIDMPI_WEAK(Type_create_hindexed)

extern "C" int PMPI_Type_hindexed(int count, int array_of_blocklengths[],
                                  MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_hindexed", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype);
  });
}
GRIDMPI_WEAK(Type_hindexed)

extern "C" int PMPI_Type_create_indexed_block(int count, int blocklength,
                                              const int array_of_displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_indexed_block", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_indexed_block(count, blocklength, array_of_displacements, oldtype);
  });
}
GRIDMPI_WEAK(Type_create_indexed_block)

extern "C" int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                               const MPI_Aint array_of_displacements[],
                                               MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_hindexed_block", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_hindexed_block(count, blocklength, array_of_displacements, oldtype);
  });
}
GRIDMPI_WEAK(Type_create_hindexed_block)

extern "C" int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                       const MPI_Aint array_of_displacements[],
                                       const MPI_Datatype array_of_types[],
                                       MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_struct", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_struct(count, array_of_blocklengths, array_of_displacements,
                                 array_of_types);
  });
}
GRIDMPI_WEAK(Type_create_struct)

extern "C" int PMPI_Type_struct(int count, int array_of_blocklengths[],
                                MPI_Aint array_of_displacements[],
                                MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_struct", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_struct(count, array_of_blocklengths, array_of_displacements,
                                 array_of_types);
  });
}
GRIDMPI_WEAK(Type_struct)

extern "C" int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                                         const int array_of_subsizes[],
                                         const int array_of_starts[], int order,
                                         MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_subarray", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts,
                                   order, oldtype);
  });
}
GRIDMPI_WEAK(Type_create_subarray)

extern "C" int PMPI_Type_create_darray(int size, int rank, int ndims,
                                       const int array_of_gsizes[],
                                       const int array_of_distribs[],
                                       const int array_of_dargs[],
                                       const int array_of_psizes[], int order,
                                       MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_darray", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_darray(size, rank, ndims, array_of_gsizes, array_of_distribs,
                                 array_of_dargs, array_of_psizes, order, oldtype);
  });
}
GRIDMPI_WEAK(Type_create_darray)

extern "C" int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                        MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_resized", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_resized(oldtype, lb, extent);
  });
}
GRIDMPI_WEAK(Type_create_resized)

extern "C" int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_dup", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_dup(oldtype);
  });
}
GRIDMPI_WEAK(Type_dup)

extern "C" int PMPI_Type_commit(MPI_Datatype* datatype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_commit", [&] {
    require_out(datatype, "datatype");
    core::type_commit(*datatype);
  });
}
GRIDMPI_WEAK(Type_commit)

extern "C" int PMPI_Type_free(MPI_Datatype* datatype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_free", [&] {
    require_out(datatype, "datatype");
    core::type_free(*datatype);
    *datatype = MPI_DATATYPE_NULL;
  });
}
GRIDMPI_WEAK(Type_free)

// ---- queries ----

extern "C" int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_size", [&] {
    require_out(size, "size");
    const core::Datatype& t = core::datatype(datatype);
    *size = undefined_if_too_large(t, to_int_or_undefined(static_cast<long long>(t.size)));
  });
}
GRIDMPI_WEAK(Type_size)

extern "C" int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_size_x", [&] {
    require_out(size, "size");
    const core::Datatype& t = core::datatype(datatype);
    *size = undefined_if_too_large(t, static_cast<MPI_Count>(t.size));
  });
}
GRIDMPI_WEAK(Type_size_x)

extern "C" int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_extent", [&] {
    require_out(extent, "extent");
    const core::Datatype& t = core::datatype(datatype);
    *extent = undefined_if_too_large(t, t.extent());
  });
}
GRIDMPI_WEAK(Type_extent)

extern "C" int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_lb", [&] {
    require_out(displacement, "displacement");
    const core::Datatype& t = core::datatype(datatype);
    *displacement = undefined_if_too_large(t, t.lb);
  });
}
GRIDMPI_WEAK(Type_lb)

extern "C" int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_ub", [&] {
    require_out(displacement, "displacement");
    const core::Datatype& t = core::datatype(datatype);
    *displacement = undefined_if_too_large(t, t.ub);
  });
}
GRIDMPI_WEAK(Type_ub)

extern "C" int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_get_extent", [&] {
    require_out(lb, "lb");
    require_out(extent, "extent");
    const core::Datatype& t = core::datatype(datatype);
    *lb = undefined_if_too_large(t, t.lb);
    *extent = undefined_if_too_large(t, t.extent());
  });
}
GRIDMPI_WEAK(Type_get_extent)

extern "C" int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_get_extent_x", [&] {
    require_out(lb, "lb");
    require_out(extent, "extent");
    const core::Datatype& t = core::datatype(datatype);
    *lb = undefined_if_too_large(t, t.lb);
    *extent = undefined_if_too_large(t, t.extent());
  });
}
GRIDMPI_WEAK(Type_get_extent_x)

extern "C" int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb,
                                         MPI_Aint* true_extent) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_get_true_extent", [&] {
    require_out(true_lb, "true_lb");
    require_out(true_extent, "true_extent");
    const core::Datatype& t = core::datatype(datatype);
    *true_lb = undefined_if_too_large(t, t.true_lb);
    *true_extent = undefined_if_too_large(t, t.true_extent());
  });
}
GRIDMPI_WEAK(Type_get_true_extent)

extern "C" int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb,
                                           MPI_Count* true_extent) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_get_true_extent_x", [&] {
    require_out(true_lb, "true_lb");
    require_out(true_extent, "true_extent");
    const core::Datatype& t = core::datatype(datatype);
    *true_lb = undefined_if_too_large(t, t.true_lb);
    *true_extent = undefined_if_too_large(t, t.true_extent());
  });
}
GRIDMPI_WEAK(Type_get_true_extent_x)

extern "C" int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers,
                                      int* num_addresses, int* num_datatypes, int* combiner) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_get_envelope", [&] {
    require_out(num_integers, "num_integers");
    require_out(num_addresses, "num_addresses");
    require_out(num_datatypes, "num_datatypes");
    require_out(combiner, "combiner");
    const core::Datatype& t = core::datatype(datatype);
    *combiner = t.combiner;
    *num_integers = static_cast<int>(t.contents_integers.size());
    *num_addresses = static_cast<int>(t.contents_addresses.size());
    *num_datatypes = static_cast<int>(t.contents_types.size());
  });
}
GRIDMPI_WEAK(Type_get_envelope)

extern "C" int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                                      int max_addresses, int max_datatypes,
                                      int array_of_integers[], MPI_Aint array_of_addresses[],
                                      MPI_Datatype array_of_datatypes[]) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_get_contents", [&] {
    const core::Datatype& t = core::datatype(datatype);
    if (t.combiner == MPI_COMBINER_NAMED)
      throw MpiError(MPI_ERR_TYPE, "MPI_Type_get_contents on the predefined datatype " + t.name);
    auto fits = [](std::size_t n, int max, const void* array, const char* what) {
      if (static_cast<long long>(n) > max)
        throw MpiError(MPI_ERR_ARG, std::string(what) + ": " + std::to_string(n) +
                                        " entries needed, room for " + std::to_string(max));
      if (n > 0 && !array) throw MpiError(MPI_ERR_ARG, std::string(what) + " is a null pointer");
    };
    fits(t.contents_integers.size(), max_integers, array_of_integers, "array_of_integers");
    fits(t.contents_addresses.size(), max_addresses, array_of_addresses, "array_of_addresses");
    fits(t.contents_types.size(), max_datatypes, array_of_datatypes, "array_of_datatypes");
    std::copy(t.contents_integers.begin(), t.contents_integers.end(), array_of_integers);
    std::copy(t.contents_addresses.begin(), t.contents_addresses.end(), array_of_addresses);
    // Derived types handed out are new references the caller must free.
    for (std::size_t i = 0; i < t.contents_types.size(); ++i) {
      array_of_datatypes[i] = t.contents_types[i];
      core::retain_datatype(t.contents_types[i]);
    }
  });
}
GRIDMPI_WEAK(Type_get_contents)

extern "C" int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_set_name", [&] {
    require_out(type_name, "type_name");
    std::string name(type_name);
    if (name.size() > MPI_MAX_OBJECT_NAME - 1) name.resize(MPI_MAX_OBJECT_NAME - 1);
    core::datatype(datatype).name = std::move(name);
  });
}
GRIDMPI_WEAK(Type_set_name)

extern "C" int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_get_name", [&] {
    require_out(type_name, "type_name");
    require_out(resultlen, "resultlen");
    const std::string& name = core::datatype(datatype).name;
    std::size_t n = std::min<std::size_t>(name.size(), MPI_MAX_OBJECT_NAME - 1);
    std::memcpy(type_name, name.data(), n);
    type_name[n] = '\0';
    *resultlen = static_cast<int>(n);
  });
}
GRIDMPI_WEAK(Type_get_name)

extern "C" int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_match_size", [&] {
    require_out(datatype, "datatype");
    *datatype = core::type_match_size(typeclass, size);
  });
}
GRIDMPI_WEAK(Type_match_size)

extern "C" int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_f90_real", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_create_f90(MPI_COMBINER_F90_REAL, p, r);
  });
}
GRIDMPI_WEAK(Type_create_f90_real)

extern "C" int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_f90_complex", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_create_f90(MPI_COMBINER_F90_COMPLEX, p, r);
  });
}
GRIDMPI_WEAK(Type_create_f90_complex)

extern "C" int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Type_create_f90_integer", [&] {
    require_out(newtype, "newtype");
    *newtype = core::type_create_f90(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r);
  });
}
GRIDMPI_WEAK(Type_create_f90_integer)

// ---- addresses ----

extern "C" int PMPI_Get_address(const void* location, MPI_Aint* address) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Get_address", [&] {
    require_out(address, "address");
    *address = static_cast<MPI_Aint>(reinterpret_cast<std::uintptr_t>(location));
  });
}
GRIDMPI_WEAK(Get_address)

extern "C" int PMPI_Address(void* location, MPI_Aint* address) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Address", [&] {
    require_out(address, "address");
    *address = static_cast<MPI_Aint>(reinterpret_cast<std::uintptr_t>(location));
  });
}
GRIDMPI_WEAK(Address)

// Address arithmetic on absolute addresses: unsigned, so that it wraps like
// the hardware instead of overflowing a signed type.
extern "C" MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) +
                               static_cast<std::uintptr_t>(disp));
}
GRIDMPI_WEAK(Aint_add)

extern "C" MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) -
                               static_cast<std::uintptr_t>(addr2));
}
GRIDMPI_WEAK(Aint_diff)

// ---- pack / unpack ----

extern "C" int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                         int outsize, int* position, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Pack", [&] {
    require(incount >= 0, MPI_ERR_COUNT, "incount is negative");
    require_out(position, "position");
    const core::Datatype& t = core::committed_datatype(datatype);
    // On a communicator spanning clusters the packed form is external32
    // (IMPI), so that it can be sent as MPI_PACKED to any of them.
    const bool external = core::spans_clients(comm);
    long long need = external ? static_cast<long long>(core::external32_size(datatype, static_cast<std::size_t>(incount)))
                              : static_cast<long long>(incount) * static_cast<long long>(t.size);
    if (*position < 0 || *position + need > outsize)
      throw MpiError(MPI_ERR_TRUNCATE, std::to_string(need) + " packed bytes do not fit at position " +
                                           std::to_string(*position) + " of a " +
                                           std::to_string(outsize) + "-byte buffer");
    if (need == 0) return;
    require_out(outbuf, "outbuf");
    if (external)
      core::pack_external32(inbuf, static_cast<std::size_t>(incount), datatype, static_cast<std::byte*>(outbuf) + *position);
    else
      t.pack(inbuf, static_cast<std::size_t>(incount), static_cast<std::byte*>(outbuf) + *position);
    *position += static_cast<int>(need);
  });
}
GRIDMPI_WEAK(Pack)

extern "C" int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                           int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Unpack", [&] {
    require(outcount >= 0, MPI_ERR_COUNT, "outcount is negative");
    require_out(position, "position");
    const core::Datatype& t = core::committed_datatype(datatype);
    const bool external = core::spans_clients(comm);
    long long need = external ? static_cast<long long>(core::external32_size(datatype, static_cast<std::size_t>(outcount)))
                              : static_cast<long long>(outcount) * static_cast<long long>(t.size);
    if (*position < 0 || *position + need > insize)
      throw MpiError(MPI_ERR_TRUNCATE, "unpacking " + std::to_string(need) + " bytes at position " +
                                           std::to_string(*position) + " runs past the end of a " +
                                           std::to_string(insize) + "-byte buffer");
    if (need == 0) return;
    require_out(inbuf, "inbuf");
    if (external)
      core::unpack_external32(static_cast<const std::byte*>(inbuf) + *position, static_cast<std::size_t>(outcount),
                              datatype, outbuf);
    else
      t.unpack(static_cast<const std::byte*>(inbuf) + *position, static_cast<std::size_t>(outcount), outbuf);
    *position += static_cast<int>(need);
  });
}
GRIDMPI_WEAK(Unpack)

extern "C" int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return core::api_call(comm, "MPI_Pack_size", [&] {
    require(incount >= 0, MPI_ERR_COUNT, "incount is negative");
    require_out(size, "size");
    const core::Datatype& t = core::datatype(datatype);
    long long bytes = 0;
    if (t.too_large || __builtin_mul_overflow(static_cast<long long>(incount),
                                              static_cast<long long>(t.size), &bytes) ||
        bytes > INT_MAX)
      throw MpiError(MPI_ERR_ARG, "the packed size of " + std::to_string(incount) +
                                      " elements does not fit in an int");
    *size = static_cast<int>(bytes);
  });
}
GRIDMPI_WEAK(Pack_size)

extern "C" int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount,
                                  MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
                                  MPI_Aint* position) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Pack_external", [&] {
    require_external32(datarep);
    require(incount >= 0, MPI_ERR_COUNT, "incount is negative");
    require_out(position, "position");
    core::committed_datatype(datatype);
    auto need = static_cast<MPI_Aint>(core::external32_size(datatype, incount));
    if (*position < 0 || *position + need > outsize)
      throw MpiError(MPI_ERR_TRUNCATE, std::to_string(need) +
                                           " external32 bytes do not fit at position " +
                                           std::to_string(*position) + " of a " +
                                           std::to_string(outsize) + "-byte buffer");
    if (need == 0) return;
    require_out(outbuf, "outbuf");
    core::pack_external32(inbuf, static_cast<std::size_t>(incount), datatype,
                          static_cast<std::byte*>(outbuf) + *position);
    *position += need;
  });
}
GRIDMPI_WEAK(Pack_external)

extern "C" int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                                    MPI_Aint* position, void* outbuf, int outcount,
                                    MPI_Datatype datatype) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Unpack_external", [&] {
    require_external32(datarep);
    require(outcount >= 0, MPI_ERR_COUNT, "outcount is negative");
    require_out(position, "position");
    core::committed_datatype(datatype);
    auto need = static_cast<MPI_Aint>(core::external32_size(datatype, outcount));
    if (*position < 0 || *position + need > insize)
      throw MpiError(MPI_ERR_TRUNCATE, "unpacking " + std::to_string(need) +
                                           " external32 bytes at position " +
                                           std::to_string(*position) + " runs past the end of a " +
                                           std::to_string(insize) + "-byte buffer");
    if (need == 0) return;
    require_out(inbuf, "inbuf");
    core::unpack_external32(static_cast<const std::byte*>(inbuf) + *position,
                            static_cast<std::size_t>(outcount), datatype, outbuf);
    *position += need;
  });
}
GRIDMPI_WEAK(Unpack_external)

extern "C" int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                                       MPI_Aint* size) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Pack_external_size", [&] {
    require_external32(datarep);
    require(incount >= 0, MPI_ERR_COUNT, "incount is negative");
    require_out(size, "size");
    *size = static_cast<MPI_Aint>(core::external32_size(datatype, incount));
  });
}
GRIDMPI_WEAK(Pack_external_size)

// ---- status ----

namespace {

// The external representation a status's byte count is in.
core::ExternalFormat status_format(const MPI_Status* status) {
  return (status->gridmpi_cancelled & core::status_external64) ? core::ExternalFormat::external64
                                                               : core::ExternalFormat::external32;
}

// The status's byte count in this type's native packed bytes.  A probed
// message of another cluster counts external32 (or external64) bytes (bit
// core::status_external32 of gridmpi_cancelled): whole basic elements are
// converted, a trailing part of one is dropped.
long long native_status_bytes(const MPI_Status* status, MPI_Datatype type) {
  long long bytes = status->gridmpi_count;
  if (bytes <= 0 || !(status->gridmpi_cancelled & core::status_external32)) return bytes;
  const core::Datatype& t = core::datatype(type);
  const core::ExternalFormat format = status_format(status);
  std::size_t each = core::external_size(type, 1, format);
  if (each == 0 || t.size == 0) return 0;
  auto ext = static_cast<std::size_t>(bytes);
  if (ext % each == 0) return static_cast<long long>(ext / each * t.size);
  return static_cast<long long>(core::native_bytes_of_external32(type, ext / each + 1, ext, format));
}

// Get_count of external bytes: whole elements of the type, or undefined.
bool external32_partial(const MPI_Status* status, MPI_Datatype type) {
  if (!(status->gridmpi_cancelled & core::status_external32) || status->gridmpi_count <= 0) return false;
  std::size_t each = core::external_size(type, 1, status_format(status));
  return each != 0 && static_cast<std::size_t>(status->gridmpi_count) % each != 0;
}

}  // namespace

namespace {

// MPI_Get_count's answer in full (MPI_UNDEFINED when not a whole number of elements).
MPI_Count count_of(const MPI_Status* status, MPI_Datatype datatype) {
  require_out(status, "status");
  const core::Datatype& t = core::datatype(datatype);
  long long bytes = native_status_bytes(status, datatype);
  if (t.size == 0) return 0;
  if (external32_partial(status, datatype) || bytes % static_cast<long long>(t.size) != 0) return MPI_UNDEFINED;
  return bytes / static_cast<long long>(t.size);
}

}  // namespace

extern "C" int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Get_count", [&] {
    require_out(count, "count");
    *count = to_int_or_undefined(count_of(status, datatype));
  });
}
GRIDMPI_WEAK(Get_count)

extern "C" int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Get_count_c", [&] {
    require_out(count, "count");
    *count = count_of(status, datatype);
  });
}
GRIDMPI_WEAK(Get_count_c)

extern "C" int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype,
                                   MPI_Count* count) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Get_elements_x", [&] {
    require_out(status, "status");
    require_out(count, "count");
    long long bytes = native_status_bytes(status, datatype);
    *count = bytes < 0 ? MPI_UNDEFINED
                       : core::datatype(datatype).elements_in(static_cast<std::size_t>(bytes));
  });
}
GRIDMPI_WEAK(Get_elements_x)

extern "C" int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Get_elements", [&] {
    require_out(status, "status");
    require_out(count, "count");
    long long bytes = native_status_bytes(status, datatype);
    MPI_Count n = bytes < 0 ? MPI_UNDEFINED
                            : core::datatype(datatype).elements_in(static_cast<std::size_t>(bytes));
    *count = to_int_or_undefined(n);
  });
}
GRIDMPI_WEAK(Get_elements)

extern "C" int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype,
                                          MPI_Count count) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Status_set_elements_x", [&] {
    require_out(status, "status");
    require(count >= 0, MPI_ERR_COUNT, "count is negative");
    status->gridmpi_count =
        static_cast<long long>(core::datatype(datatype).bytes_for_elements(count));
    status->gridmpi_cancelled &= core::status_cancelled;  // native bytes now
  });
}
GRIDMPI_WEAK(Status_set_elements_x)

extern "C" int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Status_set_elements", [&] {
    require_out(status, "status");
    require(count >= 0, MPI_ERR_COUNT, "count is negative");
    status->gridmpi_count =
        static_cast<long long>(core::datatype(datatype).bytes_for_elements(count));
    status->gridmpi_cancelled &= core::status_cancelled;  // native bytes now
  });
}
GRIDMPI_WEAK(Status_set_elements)

extern "C" int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Status_set_cancelled", [&] {
    require_out(status, "status");
    status->gridmpi_cancelled = (status->gridmpi_cancelled & ~core::status_cancelled) |
                                (flag ? core::status_cancelled : 0);
  });
}
GRIDMPI_WEAK(Status_set_cancelled)

extern "C" int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Test_cancelled", [&] {
    require_out(status, "status");
    require_out(flag, "flag");
    *flag = (status->gridmpi_cancelled & core::status_cancelled) != 0;
  });
}
GRIDMPI_WEAK(Test_cancelled)
