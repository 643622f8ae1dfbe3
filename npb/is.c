/* IS: parallel integer sort (NPB specification §2.2.4, bucket variant).
 *
 * N keys in [0, max_key) are generated with the NPB generator (seed
 * 314159265, a = 5^13): key i = (int)(max_key/4 * (r_{4i+1} + ... + r_{4i+4})).
 * Each of the 10 timed iterations first changes two keys (key[it] = it,
 * key[it+10] = max_key - it), then ranks all keys: every rank holds a
 * contiguous slice of the keys; the key range is cut into 1024 buckets,
 * whose global sizes (MPI_Allreduce) assign each rank a run of buckets with
 * about N/np keys; keys travel to their bucket's rank (MPI_Alltoall of the
 * counts, MPI_Alltoallv of the keys) and are counted there.
 *
 * Verification is the specification's: in every iteration, the rank of five
 * keys found at fixed indices is compared with the official values (partial
 * verification), and after the last one the keys are checked sorted across
 * all ranks (full verification). */
#include "npb_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { iterations = 10, tests = 5, buckets_log2 = 10, buckets = 1 << buckets_log2 };

typedef struct {
    int keys_log2, max_key_log2;
    long test_index[tests], test_rank[tests];
} is_class;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        npb_die("is", "out of memory");
    return p;
}

/* Official rank of test key i in iteration `it`: the reference rank shifted
 * by the iteration, in the per-class pattern of the specification. */
static long expected_rank(char cls, const is_class *c, int i, int it)
{
    switch (cls) {
    case 'S': return i <= 2 ? c->test_rank[i] + it : c->test_rank[i] - it;
    case 'W': return i < 2 ? c->test_rank[i] + (it - 2) : c->test_rank[i] - it;
    case 'A': return i <= 2 ? c->test_rank[i] + (it - 1) : c->test_rank[i] - (it - 1);
    default: return i == 1 || i == 2 || i == 4 ? c->test_rank[i] + it : c->test_rank[i] - it;
    }
}

typedef struct {
    const is_class *c;
    char cls;
    int rank, np, shift, max_key;
    long total_keys, first, nkeys;
    int *keys, *sendbuf, *recvbuf, *bucket_owner;
    int *send_count, *send_displ, *recv_count, *recv_displ;
    long *bucket_size, *bucket_total, *bucket_ptr, *count;
    long my_keys, keys_below;
    int key_lo, key_hi;
} is_state;

/* One ranking pass; returns how many of the five partial-verification tests
 * this rank passed. */
static long rank_keys(is_state *s, int it)
{
    const is_class *c = s->c;
    int np = s->np;
    if (it >= s->first && it < s->first + s->nkeys)
        s->keys[it - s->first] = it;
    if (it + iterations >= s->first && it + iterations < s->first + s->nkeys)
        s->keys[it + iterations - s->first] = s->max_key - it;
    int probe[tests];
    for (int i = 0; i < tests; i++) {
        long g = c->test_index[i];
        probe[i] = g >= s->first && g < s->first + s->nkeys ? s->keys[g - s->first] : -1;
    }
    /* Bucket the local keys and agree on the global bucket sizes. */
    memset(s->bucket_size, 0, sizeof(long) * buckets);
    for (long i = 0; i < s->nkeys; i++)
        s->bucket_size[s->keys[i] >> s->shift]++;
    MPI_Allreduce(s->bucket_size, s->bucket_total, buckets, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* Rank r's run of buckets starts where the cumulative count reaches r*N/np. */
    long cumulative = 0;
    int owner = 0;
    for (int b = 0; b < buckets; b++) {
        while (owner < np - 1 && cumulative >= s->total_keys * (owner + 1) / np)
            owner++;
        s->bucket_owner[b] = owner;
        cumulative += s->bucket_total[b];
    }
    memset(s->send_count, 0, sizeof(int) * np);
    long offset = 0;
    for (int b = 0; b < buckets; b++) {
        s->send_count[s->bucket_owner[b]] += (int)s->bucket_size[b];
        s->bucket_ptr[b] = offset;
        offset += s->bucket_size[b];
    }
    for (long i = 0; i < s->nkeys; i++)
        s->sendbuf[s->bucket_ptr[s->keys[i] >> s->shift]++] = s->keys[i];
    MPI_Alltoall(s->send_count, 1, MPI_INT, s->recv_count, 1, MPI_INT, MPI_COMM_WORLD);
    s->send_displ[0] = s->recv_displ[0] = 0;
    for (int r = 1; r < np; r++) {
        s->send_displ[r] = s->send_displ[r - 1] + s->send_count[r - 1];
        s->recv_displ[r] = s->recv_displ[r - 1] + s->recv_count[r - 1];
    }
    s->my_keys = (long)s->recv_displ[np - 1] + s->recv_count[np - 1];
    MPI_Alltoallv(s->sendbuf, s->send_count, s->send_displ, MPI_INT, s->recvbuf, s->recv_count, s->recv_displ,
                  MPI_INT, MPI_COMM_WORLD);
    /* This rank's key range [key_lo, key_hi) and the number of keys below it. */
    s->key_lo = s->max_key;
    s->key_hi = 0;
    s->keys_below = 0;
    for (int b = 0; b < buckets; b++) {
        if (s->bucket_owner[b] < s->rank)
            s->keys_below += s->bucket_total[b];
        if (s->bucket_owner[b] == s->rank) {
            if ((b << s->shift) < s->key_lo)
                s->key_lo = b << s->shift;
            s->key_hi = (b + 1) << s->shift;
        }
    }
    if (s->key_hi < s->key_lo)
        s->key_hi = s->key_lo;
    /* count[k - key_lo] = number of local keys <= k. */
    long width = s->key_hi - s->key_lo;
    memset(s->count, 0, sizeof(long) * (width + 1));
    for (long i = 0; i < s->my_keys; i++)
        s->count[s->recvbuf[i] - s->key_lo]++;
    for (long k = 1; k < width; k++)
        s->count[k] += s->count[k - 1];
    /* Partial verification: the rank of test key k (the number of keys below
     * k) is known to the rank that owns the value k - 1. */
    int probe_all[tests];
    MPI_Allreduce(probe, probe_all, tests, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    long passed = 0;
    for (int i = 0; i < tests; i++) {
        int k = probe_all[i];
        if (k <= 0 || k > s->total_keys - 1 || k - 1 < s->key_lo || k - 1 >= s->key_hi)
            continue;
        long key_rank = s->keys_below + s->count[k - 1 - s->key_lo];
        long want = expected_rank(s->cls, c, i, it);
        if (key_rank == want)
            passed++;
        else
            printf("# iteration %d test %d: rank of key %d is %ld, expected %ld\n", it, i, k, key_rank, want);
    }
    return passed;
}

/* Full verification: place the local keys by their counts (as the
 * specification does), check them sorted, inside this rank's range, and the
 * ranges ascending from rank to rank with every key accounted for. */
static int full_verify(is_state *s)
{
    int *sorted = xmalloc(sizeof(int) * (size_t)(s->my_keys ? s->my_keys : 1));
    for (long i = 0; i < s->my_keys; i++) {
        int k = s->recvbuf[i];
        sorted[--s->count[k - s->key_lo]] = k;
    }
    long bad = 0;
    for (long i = 0; i < s->my_keys; i++)
        if ((i > 0 && sorted[i - 1] > sorted[i]) || sorted[i] < s->key_lo || sorted[i] >= s->key_hi)
            bad++;
    long mine[4] = {bad, s->my_keys, s->my_keys ? sorted[0] : -1, s->my_keys ? sorted[s->my_keys - 1] : -1};
    long *all = xmalloc(sizeof(long) * 4 * s->np);
    MPI_Allgather(mine, 4, MPI_LONG, all, 4, MPI_LONG, MPI_COMM_WORLD);
    long total = 0, last = -1;
    for (int r = 0; r < s->np; r++) {
        bad += r == s->rank ? 0 : all[4 * r];
        total += all[4 * r + 1];
        if (all[4 * r + 1] > 0) {
            if (all[4 * r + 2] < last)
                bad++;
            last = all[4 * r + 3];
        }
    }
    if (total != s->total_keys)
        bad++;
    if (s->rank == 0)
        printf("# full verification: %ld keys, %ld out of order\n", total, bad);
    free(sorted);
    free(all);
    return bad == 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char cls = npb_class(argc, argv, "is", "SWAB");
    is_class c;
    switch (cls) {
    case 'S':
        c = (is_class){16, 11, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}};
        break;
    case 'W':
        c = (is_class){20, 16, {357773, 934767, 875723, 898999, 404505}, {1249, 11698, 1039987, 1043896, 1048018}};
        break;
    case 'A':
        c = (is_class){23, 19, {2112377, 662041, 5336171, 3642833, 4250760}, {104, 17523, 123928, 8288932, 8388264}};
        break;
    default:
        c = (is_class){25, 21, {41869, 812306, 5102857, 18232239, 26860214}, {33422937, 10244, 59149, 33135281, 99}};
        break;
    }
    is_state s = {.c = &c, .cls = cls, .rank = rank, .np = np};
    s.total_keys = 1L << c.keys_log2;
    s.max_key = 1 << c.max_key_log2;
    s.shift = c.max_key_log2 - buckets_log2;
    if (!npb_is_pow2(np) || np > buckets)
        npb_die("is", "the number of processes must be a power of two, at most 1024");
    s.first = s.total_keys * rank / np;
    s.nkeys = s.total_keys * (rank + 1) / np - s.first;
    s.keys = xmalloc(sizeof(int) * s.nkeys);
    s.sendbuf = xmalloc(sizeof(int) * s.nkeys);
    /* A rank may receive more than N/np keys (whole buckets); N always fits. */
    s.recvbuf = xmalloc(sizeof(int) * s.total_keys);
    s.bucket_owner = xmalloc(sizeof(int) * buckets);
    s.send_count = xmalloc(sizeof(int) * np);
    s.send_displ = xmalloc(sizeof(int) * np);
    s.recv_count = xmalloc(sizeof(int) * np);
    s.recv_displ = xmalloc(sizeof(int) * np);
    s.bucket_size = xmalloc(sizeof(long) * buckets);
    s.bucket_total = xmalloc(sizeof(long) * buckets);
    s.bucket_ptr = xmalloc(sizeof(long) * buckets);
    s.count = xmalloc(sizeof(long) * (s.max_key + 1));

    /* This rank's slice of the keys, from its jump-ahead seed. */
    double seed = 314159265.0;
    randlc(&seed, npb_power(NPB_A, 4 * s.first));
    double scale = s.max_key / 4;
    for (long i = 0; i < s.nkeys; i++) {
        double x = randlc(&seed, NPB_A);
        x += randlc(&seed, NPB_A);
        x += randlc(&seed, NPB_A);
        x += randlc(&seed, NPB_A);
        s.keys[i] = (int)(scale * x);
    }

    rank_keys(&s, 1); /* untimed warm-up, as in the specification */
    long passed = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 1; it <= iterations; it++)
        passed += rank_keys(&s, it);
    double seconds = MPI_Wtime() - t0, max_seconds;
    MPI_Allreduce(&seconds, &max_seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    long passed_total;
    MPI_Allreduce(&passed, &passed_total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int full = full_verify(&s);
    if (rank == 0)
        printf("# partial verification: %ld of %d tests passed\n", passed_total, tests * iterations);
    int ok = full && passed_total == tests * iterations;
    double mops = (double)iterations * s.total_keys / max_seconds / 1e6;
    int status = npb_report(rank, "IS", cls, np, max_seconds, mops, ok);
    free(s.keys); free(s.sendbuf); free(s.recvbuf); free(s.bucket_owner);
    free(s.send_count); free(s.send_displ); free(s.recv_count); free(s.recv_displ);
    free(s.bucket_size); free(s.bucket_total); free(s.bucket_ptr); free(s.count);
    MPI_Finalize();
    return status;
}
