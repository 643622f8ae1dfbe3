/* The tests of coll_barrier.c on the non-blocking collectives (nbc_coll.h). */
#include "nbc_coll.h"
#include "coll_barrier.c"
