/* The tests of coll_alltoall.c on the non-blocking collectives (nbc_coll.h). */
#include "nbc_coll.h"
#include "coll_alltoall.c"
