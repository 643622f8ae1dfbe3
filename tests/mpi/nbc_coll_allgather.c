/* The tests of coll_allgather.c on the non-blocking collectives (nbc_coll.h). */
#include "nbc_coll.h"
#include "coll_allgather.c"
