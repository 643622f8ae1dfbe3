/* The tests of coll_gather.c on the non-blocking collectives (nbc_coll.h). */
#include "nbc_coll.h"
#include "coll_gather.c"
