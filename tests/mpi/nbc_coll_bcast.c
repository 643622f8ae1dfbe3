/* The tests of coll_bcast.c on the non-blocking collectives (nbc_coll.h). */
#include "nbc_coll.h"
#include "coll_bcast.c"
