/* The tests of coll_reduce.c on the non-blocking collectives (nbc_coll.h). */
#include "nbc_coll.h"
#include "coll_reduce.c"
