// TEMPORARY stubs so that the tree links while core/datatype*.cpp is written.
// The datatype owner deletes this file.
#include "core/datatype.hpp"
#include "core/op.hpp"
namespace gridmpi::core {
HandleTable<Datatype>& datatype_table() { static HandleTable<Datatype> t(MPI_ERR_TYPE); return t; }
Datatype& datatype(MPI_Datatype h) { return datatype_table().get(h); }
Datatype& committed_datatype(MPI_Datatype h) { return datatype_table().get(h); }
void retain_datatype(MPI_Datatype) {}
void release_datatype(MPI_Datatype) {}
void copy_typed(const void*, int, MPI_Datatype, void*, int, MPI_Datatype) { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
void Datatype::pack(const void*, std::size_t, std::byte*) const { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
void Datatype::unpack(const std::byte*, std::size_t, void*) const { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
void Datatype::pack_range(const void*, std::size_t, std::size_t, std::span<std::byte>) const { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
void Datatype::unpack_range(std::span<const std::byte>, std::size_t, std::size_t, void*) const { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
MPI_Count Datatype::elements_in(std::size_t) const { return 0; }
HandleTable<Op>& op_table() { static HandleTable<Op> t(MPI_ERR_OP); return t; }
Op& op(MPI_Op h) { return op_table().get(h); }
void Op::apply(const void*, void*, int, MPI_Datatype) const { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
}
