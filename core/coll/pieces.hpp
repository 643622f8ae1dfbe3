// Building blocks shared by several algorithms: phases that work on a packed
// byte stream split into one piece per (relative) rank.  Working on bytes
// rather than on the user's (count, datatype) lets an algorithm cut a message
// anywhere even when ranks describe the same data with different datatypes
// (which MPI allows as long as the type signatures match).
#pragma once
#include <cstddef>

#include "core/coll/util.hpp"
#include "core/group.hpp"

namespace gridmpi::coll {

// Binomial scatter from `root` of `data` (split.n bytes, piece i belongs to
// relative rank i = (rank - root) mod p): afterwards every rank holds at
// least its own piece at its place in `data`.  The root only reads `data`.
void binomial_scatter_bytes(std::byte* data, const Split& split, int root, int tag,
                            core::Comm& comm);

// Ring allgather of the pieces (relative rank i holds piece i at its place in
// `data`).  A rank that already holds everything (the root of a broadcast)
// passes `sink`, a scratch of at least the largest piece, so that its `data`
// is only read.
void ring_allgather_bytes(std::byte* data, const Split& split, int root, int tag,
                          core::Comm& comm, std::byte* sink = nullptr);

// Recursive-doubling allgather of the pieces; p must be a power of two.
// `sink` as above, of at least split.n bytes.
void recursive_doubling_allgather_bytes(std::byte* data, const Split& split, int root, int tag,
                                        core::Comm& comm, std::byte* sink = nullptr);

}  // namespace gridmpi::coll
