/* The tests of coll_bcast_roots.c (every root, counts 0..262147, derived
 * types) on MPI_Ibcast (nbc_coll.h): its cost-model choices (ring, hybrid d
 * on the packed stream) and its binomial tree. */
#include "nbc_coll.h"
#include "coll_bcast_roots.c"
