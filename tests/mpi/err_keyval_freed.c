/* A keyval freed while attributes still hold it (MPI-3.1 6.7.2): the
 * attributes stay readable and deletable with the old value of the handle,
 * and the delete callback runs once per attribute.  (Freeing it again from
 * the callback is accepted by MPICH and gridmpi but not by Open MPI, so it
 * is not tested here; the MPICH suite's keyval_double_free covers it.) */
#include "mpitest.h"

static int deletes = 0;

static int delete_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    (void)extra;
    (void)keyval;
    ++deletes;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int keyval, saved, flag = 0;
    int value = 42;
    void *got = NULL;
    MPI_Comm a, b;

    mt_init(&argc, &argv);
    E(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    E(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    E(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL));
    saved = keyval;
    E(MPI_Comm_set_attr(a, keyval, &value));
    E(MPI_Comm_set_attr(b, keyval, &value));
    E(MPI_Comm_free_keyval(&keyval));
    CHECK_INT("keyval after MPI_Comm_free_keyval", MPI_KEYVAL_INVALID, keyval);

    E(MPI_Comm_get_attr(a, saved, &got, &flag));
    CHECK(flag && got == &value, "attribute of a freed keyval is not readable (flag %d)", flag);
    E(MPI_Comm_free(&a));
    CHECK_INT("delete callbacks after freeing the first communicator", 1, deletes);
    E(MPI_Comm_delete_attr(b, saved));
    CHECK_INT("delete callbacks after deleting the second attribute", 2, deletes);
    E(MPI_Comm_free(&b));
    CHECK_INT("delete callbacks at the end", 2, deletes);
    return mt_finish();
}
