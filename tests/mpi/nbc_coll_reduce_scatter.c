/* The tests of coll_reduce_scatter.c on the non-blocking collectives (nbc_coll.h). */
#include "nbc_coll.h"
#include "coll_reduce_scatter.c"
