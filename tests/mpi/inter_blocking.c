/* inter_blocking.c — every blocking collective on intercommunicators
 * (MPI-3.1 5.2.2) with exact checks; the cases are in inter_common.h. */
#define INTER_NB 0
#include "inter_common.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size < 2) {
        printf("inter_blocking: needs at least 2 ranks, skipped\n");
        return mt_finish();
    }
    inter_setup();
    run_every_split();
    inter_teardown();
    return mt_finish();
}
