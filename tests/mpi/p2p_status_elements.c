/* MPI_Status_set_elements / _x and MPI_Status_set_cancelled on derived
 * datatypes (set_elements counts basic elements, Get_count then answers in
 * whole datatype elements or MPI_UNDEFINED), counts beyond an int
 * (Get_elements / Get_count give MPI_UNDEFINED, the _x form the value), and
 * Get_elements / Get_count of partial receives of derived types, small and
 * large (the list also runs it with the rendezvous protocol).  Pairs; odd
 * size: self. */
#include "mpitest.h"

struct pair {
    int i;
    double d;
};

static int partner;

static void expect_counts(const char *what, MPI_Status *st, MPI_Datatype t, int count, int elements)
{
    int got = -2;
    MPI_Count gx = -2;
    char w[200];
    E(MPI_Get_count(st, t, &got));
    snprintf(w, sizeof w, "%s: Get_count", what);
    CHECK_INT(w, count, got);
    E(MPI_Get_elements(st, t, &got));
    snprintf(w, sizeof w, "%s: Get_elements", what);
    CHECK_INT(w, elements, got);
    E(MPI_Get_elements_x(st, t, &gx));
    snprintf(w, sizeof w, "%s: Get_elements_x", what);
    CHECK(gx == (MPI_Count)elements, "%s, expected %d got %lld", w, elements, (long long)gx);
}

int main(int argc, char **argv)
{
    MPI_Datatype pair_t, vec_t, block_t;
    MPI_Status st;
    int flag = -1, i;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    {
        struct pair p;
        int lens[2] = {1, 1};
        MPI_Aint disps[2];
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Get_address(&p.i, &disps[0]);
        MPI_Get_address(&p.d, &disps[1]);
        disps[1] -= disps[0];
        disps[0] = 0;
        E(MPI_Type_create_struct(2, lens, disps, types, &pair_t));
        E(MPI_Type_commit(&pair_t));
    }
    E(MPI_Type_vector(3, 2, 4, MPI_INT, &vec_t)); /* 6 ints per element */
    E(MPI_Type_commit(&vec_t));
    E(MPI_Type_contiguous(1000, MPI_INT, &block_t));
    E(MPI_Type_commit(&block_t));

    /* --- Status_set_elements on derived types ---
     * (MPICH 4.0.2 takes the count as whole datatype elements: skipped.) */
    memset(&st, 0, sizeof st);
    if (!MT_IS_MPICH) {
        E(MPI_Status_set_elements(&st, pair_t, 3));
        expect_counts("set_elements(struct{int,double}, 3)", &st, pair_t, MPI_UNDEFINED, 3);
        E(MPI_Status_set_elements(&st, pair_t, 4));
        expect_counts("set_elements(struct{int,double}, 4)", &st, pair_t, 2, 4);
        E(MPI_Status_set_elements(&st, vec_t, 8));
        expect_counts("set_elements(vector 3x2 int, 8)", &st, vec_t, MPI_UNDEFINED, 8);
        expect_counts("set_elements(vector 3x2 int, 8) read as MPI_INT", &st, MPI_INT, 8, 8);
        E(MPI_Status_set_elements_x(&st, vec_t, 12));
        expect_counts("set_elements_x(vector 3x2 int, 12)", &st, vec_t, 2, 12);
        E(MPI_Status_set_elements(&st, pair_t, 0));
        expect_counts("set_elements(struct{int,double}, 0)", &st, pair_t, 0, 0);
    }

    /* Cancelled and the count are independent. */
    E(MPI_Status_set_cancelled(&st, 1));
    E(MPI_Status_set_elements(&st, MPI_INT, 5));
    E(MPI_Test_cancelled(&st, &flag));
    CHECK_INT("Test_cancelled after set_cancelled(1) then set_elements", 1, flag);
    expect_counts("set_elements(MPI_INT, 5) after set_cancelled", &st, MPI_INT, 5, 5);
    E(MPI_Status_set_cancelled(&st, 0));
    E(MPI_Test_cancelled(&st, &flag));
    CHECK_INT("Test_cancelled after set_cancelled(0)", 0, flag);
    expect_counts("set_elements(MPI_INT, 5) after set_cancelled(0)", &st, MPI_INT, 5, 5);

    /* Beyond an int: only the _x form can tell. */
    {
        MPI_Count big = (MPI_Count)3 << 30, gx = 0; /* 3 Gi elements */
        int got = 0;
        E(MPI_Status_set_elements_x(&st, MPI_CHAR, big));
        E(MPI_Get_elements_x(&st, MPI_CHAR, &gx));
        CHECK(gx == big, "Get_elements_x after set_elements_x(MPI_CHAR, 3 Gi), expected %lld got %lld",
              (long long)big, (long long)gx);
        E(MPI_Get_elements(&st, MPI_CHAR, &got));
        CHECK_INT("Get_elements of 3 Gi chars", MPI_UNDEFINED, got);
        E(MPI_Get_count(&st, MPI_CHAR, &got));
        CHECK_INT("Get_count of 3 Gi chars", MPI_UNDEFINED, got);
        E(MPI_Get_elements_x(&st, MPI_SHORT, &gx));
        CHECK(gx == big / 2, "Get_elements_x(MPI_SHORT) of 3 Gi chars, expected %lld got %lld",
              (long long)(big / 2), (long long)gx);
    }

    /* --- partial receives of derived types --- */
    {
        int out[7], in[12];
        for (i = 0; i < 7; ++i)
            out[i] = 100 * mt_rank + i;
        for (i = 0; i < 12; ++i)
            in[i] = -1;
        E(MPI_Sendrecv(out, 7, MPI_INT, partner, 1, in, 2, vec_t, partner, 1, MPI_COMM_WORLD, &st));
        expect_counts("7 ints into 2 x vector(3x2 int)", &st, vec_t, MPI_UNDEFINED, 7);
        /* vector layout: ints 0,1 at 0,1; 2,3 at 4,5; 4,5 at 8,9; the 7th at 12 (element 2). */
        CHECK_INT("partial vector receive: int 4 lands at index 8", 100 * partner + 4, in[8]);
        CHECK_INT("partial vector receive: index 2 untouched", -1, in[2]);
    }
    {
        int n = 100001, *out = malloc(n * sizeof(int)), *in = malloc(101000 * sizeof(int));
        for (i = 0; i < n; ++i)
            out[i] = i ^ mt_rank;
        E(MPI_Sendrecv(out, n, MPI_INT, partner, 2, in, 101, block_t, partner, 2, MPI_COMM_WORLD, &st));
        expect_counts("100001 ints into 101 x contiguous(1000 int)", &st, block_t, MPI_UNDEFINED, n);
        expect_counts("100001 ints read as MPI_INT", &st, MPI_INT, n, n);
        CHECK_INT("large partial receive: last int", (n - 1) ^ partner, in[n - 1]);
        free(out);
        free(in);
    }
    {
        struct pair out[2], in[3];
        out[0].i = 1 + mt_rank;
        out[0].d = 2.5;
        out[1].i = 3;
        out[1].d = 4.5;
        E(MPI_Sendrecv(out, 2, pair_t, partner, 3, in, 3, pair_t, partner, 3, MPI_COMM_WORLD, &st));
        expect_counts("2 structs into 3", &st, pair_t, 2, 4);
        CHECK_INT("struct receive: first int", 1 + partner, in[0].i);
    }

    E(MPI_Type_free(&pair_t));
    E(MPI_Type_free(&vec_t));
    E(MPI_Type_free(&block_t));
    return mt_finish();
}
