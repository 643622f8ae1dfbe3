/* Fake vendor plug-ins for the loader's error messages
 * (tests/unit/test_vendor_library.cpp): built three times, as
 *   FAKE_KIND 0: a shared object without the entry point (not a plug-in),
 *   FAKE_KIND 1: a plug-in of another ABI version,
 *   FAKE_KIND 2: a plug-in whose vendor MPI_Init fails. */
#include <stdio.h>

#include "p2p/vendor/vendor_abi.h"

#if FAKE_KIND == 0
int gridmpi_fake_something(void) { return 42; }
#else
static int fake_init(int asked, int* granted, int* rank, int* size) {
  (void)asked;
  *granted = 0;
  *rank = 0;
  *size = 1;
  return 17;
}
static void fake_error_string(int code, char* buf, int len) { snprintf(buf, (size_t)len, "simulated failure %d", code); }
static struct gridmpi_vendor_ops ops = {
    .abi_version = FAKE_KIND == 1 ? GRIDMPI_VENDOR_ABI + 998 : GRIDMPI_VENDOR_ABI,
    .struct_size = (int)sizeof(struct gridmpi_vendor_ops),
    .name = "fake",
    .init = fake_init,
    .error_string = fake_error_string,
};
const struct gridmpi_vendor_ops* gridmpi_vendor_plugin_v1(void) { return &ops; }
#endif
