/* The tests of coll_scan.c on the non-blocking collectives (nbc_coll.h). */
#include "nbc_coll.h"
#include "coll_scan.c"
