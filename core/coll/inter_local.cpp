// The intra-group phases of the intercommunicator collectives
// (inter_local.hpp): binomial broadcast, rank-ordered binomial reduction and
// fan-in to local rank 0, and a linear scatterv from it, all as non-blocking
// sub-schedules.  Owner: core/coll/ (inter).
#include "core/coll/inter_local.hpp"

#include <utility>
#include <vector>

#include "core/coll/coll.hpp"
#include "base/error.hpp"

namespace gridmpi::coll::inter {

namespace {

// Lowest set bit of rank r of a tree of p ranks rooted at 0 (p for the root):
// r's children are r + m for m < lowbit, its parent r - lowbit.
int lowbit_of(int r, int p) {
  if (r == 0) {
    int m = 1;
    while (m < p) m <<= 1;
    return m;
  }
  return r & -r;
}

}  // namespace

core::Comm& local_comm(core::Comm& intercomm) {
  if (intercomm.local_comm == MPI_COMM_NULL)
    throw MpiError(MPI_ERR_INTERN, "intercommunicator has no local communicator for its collectives");
  return core::comm(intercomm.local_comm);
}

nb::WaitAll wait_for(request::Request* a, request::Request* b) {
  return nb::wait(std::vector<request::Request*>{a, b});
}

int local_tag(int tag, int phase) { return tag + phase * (1 << 24); }

nb::Task local_bcast(void* buf, int count, MPI_Datatype type, core::Comm& lc, int tag) {
  const int p = lc.size, r = lc.rank;
  if (p == 1) co_return;
  const int low = lowbit_of(r, p);
  if (r != 0) co_await wait_for(coll::irecv(buf, count, type, r - low, tag, lc));
  std::vector<request::Request*> sends;
  for (int m = low >> 1; m >= 1; m >>= 1)
    if (r + m < p) sends.push_back(coll::isend(buf, count, type, r + m, tag, lc));
  co_await nb::wait(std::move(sends));
}

nb::Task local_reduce(const void* sendbuf, TypedBuffer& result, int count, MPI_Datatype type,
                      MPI_Op op, core::Comm& lc, int tag) {
  const int p = lc.size, r = lc.rank;
  copy(sendbuf, result.get(), count, type);
  if (p == 1) co_return;
  const int low = lowbit_of(r, p);
  // Children r+1, r+2, r+4, ... hold the reductions of ranks [r+m, r+2m),
  // each following the previous: combine them in that order, mine first.
  // Reserved: a receive is posted into each element as it is added (a
  // short buffer's bytes are inline and would move with a reallocation).
  std::vector<TypedBuffer> partial;
  std::vector<request::Request*> recvs;
  int children = 0;
  for (int m = 1; m < low && r + m < p; m <<= 1) ++children;
  partial.reserve(static_cast<std::size_t>(children));
  for (int m = 1; m < low && r + m < p; m <<= 1) {
    partial.emplace_back(count, type);
    recvs.push_back(coll::irecv(partial.back().get(), count, type, r + m, tag, lc));
  }
  co_await nb::wait(std::move(recvs));
  for (TypedBuffer& child : partial) {
    // child = result op child (result holds the lower ranks), then keep it.
    reduce_local(result.get(), child.get(), count, type, op);
    std::swap(result, child);
  }
  if (r != 0) co_await wait_for(coll::isend(result.get(), count, type, r - low, tag, lc));
}

nb::Task local_fanin(core::Comm& lc, int tag) {
  const int p = lc.size, r = lc.rank;
  if (p == 1) co_return;
  const int low = lowbit_of(r, p);
  std::vector<request::Request*> recvs;
  for (int m = 1; m < low && r + m < p; m <<= 1)
    recvs.push_back(coll::irecv(nullptr, 0, MPI_BYTE, r + m, tag, lc));
  co_await nb::wait(std::move(recvs));
  if (r != 0) co_await wait_for(coll::isend(nullptr, 0, MPI_BYTE, r - low, tag, lc));
}

nb::Task local_scatterv(const void* sendbuf, const int* counts, const int* displs,
                        MPI_Datatype type, void* recvbuf, core::Comm& lc, int tag) {
  const int p = lc.size, r = lc.rank;
  if (r != 0) {
    co_await wait_for(coll::irecv(recvbuf, counts[r], type, 0, tag, lc));
    co_return;
  }
  const MPI_Aint extent = shape(type).extent;
  std::vector<request::Request*> sends;
  for (int i = 1; i < p; ++i)
    sends.push_back(coll::isend(element(sendbuf, displs[i], extent), counts[i], type, i, tag, lc));
  copy(element(sendbuf, displs[0], extent), recvbuf, counts[0], type);
  co_await nb::wait(std::move(sends));
}

}  // namespace gridmpi::coll::inter
