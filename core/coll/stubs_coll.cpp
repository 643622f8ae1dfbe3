// TEMPORARY stubs so that the tree links while core/coll/ is written.
// The collectives owner deletes this file.
#include "core/coll/coll.hpp"
#include "core/error.hpp"
namespace gridmpi::coll {
void send(const void*, int, MPI_Datatype, int, int, core::Comm&) { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
void recv(void*, int, MPI_Datatype, int, int, core::Comm&, MPI_Status*) { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
void sendrecv(const void*, int, MPI_Datatype, int, int, void*, int, MPI_Datatype, int, int, core::Comm&, MPI_Status*) { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
request::Request* isend(const void*, int, MPI_Datatype, int, int, core::Comm&) { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
request::Request* irecv(void*, int, MPI_Datatype, int, int, core::Comm&) { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
void wait_all(std::span<request::Request*>) { throw MpiError(MPI_ERR_INTERN, "not implemented"); }
}
