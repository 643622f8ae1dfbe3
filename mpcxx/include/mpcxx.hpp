// mpcxx: MPC++'s Multi-Thread Template Library over MPI (remote invocation,
// Sync, global pointers), for any MPI's mpic++: `#include <mpcxx.hpp>`.
// The layer, its design and a tutorial: mpcxx/README.md.
#pragma once
#include "mpcxx/api.hpp"
