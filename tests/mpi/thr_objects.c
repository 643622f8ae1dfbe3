/* MPI_THREAD_MULTIPLE: threads create and free objects at the same time,
 * each on its own parent communicator: MPI_Comm_dup (used at once: an
 * allreduce and a message that must stay on the new communicator — two
 * threads getting the same context id would cross their messages),
 * MPI_Comm_split, keyvals and attributes, derived datatypes (create,
 * commit, use, free), names.  Threads per process: THR_THREADS. */
#include "thr.h"

#define ROUNDS 6

static MPI_Comm parents[8];
static int deleted[8];

static int delete_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)value;
    deleted[(intptr_t)extra]++;
    return MPI_SUCCESS;
}

static void *work(int t)
{
    int round;
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    for (round = 0; round < ROUNDS; ++round) {
        MPI_Comm c, half;
        MPI_Datatype vec, dup;
        int result = -1, sum = -1, size = -1, keyval, flag = 0, *value = NULL, j, len;
        int out[12], in[12], mark = t * 1000 + round, got = -1;
        char name[MPI_MAX_OBJECT_NAME];
        MPI_Status st;

        TE(MPI_Comm_dup(parents[t], &c));
        TE(MPI_Comm_compare(c, parents[t], &result));
        TCHECK(result == MPI_CONGRUENT, "thread %d: compare dup with parent, expected %d got %d", t, MPI_CONGRUENT,
               result);
        TE(MPI_Allreduce(&mark, &sum, 1, MPI_INT, MPI_SUM, c));
        TCHECK(sum == mark * mt_size, "thread %d: allreduce on the new communicator, expected %d got %d", t,
               mark * mt_size, sum);
        TE(MPI_Sendrecv(&mark, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, c, &st));
        TCHECK(got == mark, "thread %d: message on the new communicator, expected %d got %d (another thread's?)", t,
               mark, got);

        TE(MPI_Comm_split(c, mt_rank % 2, -mt_rank, &half));
        TE(MPI_Comm_size(half, &size));
        TCHECK(size == (mt_size + 1 - mt_rank % 2) / 2, "thread %d: split size, expected %d got %d", t,
               (mt_size + 1 - mt_rank % 2) / 2, size);
        TE(MPI_Comm_free(&half));

        TE(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, (void *)(intptr_t)t));
        TE(MPI_Comm_set_attr(c, keyval, &parents[t]));
        TE(MPI_Comm_get_attr(c, keyval, &value, &flag));
        TCHECK(flag && value == (int *)&parents[t], "thread %d: attribute, expected it set got flag %d", t, flag);
        TE(MPI_Comm_free_keyval(&keyval));
        snprintf(name, sizeof name, "thread %d round %d", t, round);
        TE(MPI_Comm_set_name(c, name));

        TE(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
        TE(MPI_Type_commit(&vec));
        TE(MPI_Type_dup(vec, &dup));
        TE(MPI_Type_set_name(dup, name));
        for (j = 0; j < 12; ++j) {
            out[j] = mark * 100 + j;
            in[j] = -1;
        }
        TE(MPI_Sendrecv(out, 1, dup, mt_rank, 2, in, 1, vec, mt_rank, 2, c, &st));
        for (j = 0; j < 12; ++j) {
            int want = j % 4 < 2 && j < 10 ? mark * 100 + j : -1;
            if (in[j] != want) {
                TCHECK(0, "thread %d: vector element %d, expected %d got %d", t, j, want, in[j]);
                break;
            }
        }
        TE(MPI_Type_free(&vec));
        TE(MPI_Type_get_name(dup, name, &len));
        TE(MPI_Type_free(&dup));

        TE(MPI_Comm_get_name(c, name, &len));
        snprintf((char *)out, sizeof out, "thread %d round %d", t, round);
        TCHECK(strcmp(name, (char *)out) == 0, "thread %d: communicator name, expected '%s' got '%s'", t,
               (char *)out, name);
        TE(MPI_Comm_free(&c));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n, t;
    thr_init(&argc, &argv);
    n = thr_threads();
    for (t = 0; t < n; ++t)
        E(MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]));
    thr_run(n, work);
    for (t = 0; t < n; ++t) {
        CHECK(deleted[t] == ROUNDS, "thread %d: attribute delete callbacks, expected %d got %d", t, ROUNDS,
              deleted[t]);
        E(MPI_Comm_free(&parents[t]));
    }
    return mt_finish();
}
