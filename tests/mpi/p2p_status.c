/* MPI_Status contents: SOURCE and TAG; MPI_ERROR left alone by calls that
 * return a single status; Get_count (incl. MPI_UNDEFINED) and Get_elements /
 * Get_elements_x on derived types, including a partial receive;
 * MPI_PROC_NULL as destination and source in every form (status: source
 * MPI_PROC_NULL, tag MPI_ANY_TAG, count 0); Status_set_elements and
 * Status_set_cancelled.  Pairs; odd size: self. */
#include "mpitest.h"

struct id {
    int i;
    double d;
};

static int partner;

static void check_proc_null_status(const char *what, MPI_Status *st)
{
    int count = -1;
    char w[160];
    snprintf(w, sizeof w, "%s: status.MPI_SOURCE", what);
    CHECK_INT(w, MPI_PROC_NULL, st->MPI_SOURCE);
    snprintf(w, sizeof w, "%s: status.MPI_TAG", what);
    CHECK_INT(w, MPI_ANY_TAG, st->MPI_TAG);
    E(MPI_Get_count(st, MPI_INT, &count));
    snprintf(w, sizeof w, "%s: Get_count", what);
    CHECK_INT(w, 0, count);
}

static void exchange(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int tag, MPI_Status *st)
{
    E(MPI_Sendrecv(sbuf, scount, stype, partner, tag, rbuf, rcount, rtype, partner, tag, MPI_COMM_WORLD, st));
}

int main(int argc, char **argv)
{
    MPI_Status st;
    MPI_Request req;
    int buf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rbuf[64], count = -1, i;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;

    /* --- MPI_PROC_NULL ---------------------------------------------------- */
    E(MPI_Send(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    E(MPI_Ssend(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    E(MPI_Rsend(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    E(MPI_Bsend(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD)); /* no buffer needed */
    memset(rbuf, 0x11, sizeof rbuf);
    E(MPI_Recv(rbuf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_proc_null_status("MPI_Recv from MPI_PROC_NULL", &st);
    CHECK_INT("MPI_Recv from MPI_PROC_NULL leaves the buffer alone", 0x11111111, rbuf[0]);
    E(MPI_Irecv(rbuf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    E(MPI_Wait(&req, &st));
    /* MPICH 4.0.2 returns source 0, tag 0 here (bug). */
    if (!MT_IS_MPICH)
        check_proc_null_status("MPI_Irecv from MPI_PROC_NULL", &st);
    E(MPI_Isend(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    E(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Isend to MPI_PROC_NULL then Wait, expected MPI_REQUEST_NULL got %d", MT_H(req));
    E(MPI_Sendrecv(buf, 8, MPI_INT, MPI_PROC_NULL, 1, rbuf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_proc_null_status("MPI_Sendrecv with MPI_PROC_NULL", &st);
    E(MPI_Sendrecv_replace(rbuf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_proc_null_status("MPI_Sendrecv_replace with MPI_PROC_NULL", &st);
    E(MPI_Recv_init(rbuf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    E(MPI_Start(&req));
    E(MPI_Wait(&req, &st));
    /* MPICH 4.0.2 returns an empty status (source MPI_ANY_SOURCE) here (bug). */
    if (!MT_IS_MPICH)
        check_proc_null_status("persistent receive from MPI_PROC_NULL", &st);
    E(MPI_Request_free(&req));
    /* Half PROC_NULL: send to the partner, receive from nobody, and back.
     * (With itself as partner, the message is sent non-blocking so that
     * no blocking send waits for a receive that comes later.) */
    {
        int v = 31 + mt_rank, w = -1;
        MPI_Request sr = MPI_REQUEST_NULL;
        if (mt_rank % 2 == 0 || partner == mt_rank) {
            if (partner == mt_rank)
                E(MPI_Isend(&v, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, &sr));
            else
                E(MPI_Sendrecv(&v, 1, MPI_INT, partner, 2, rbuf, 1, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &st));
            if (partner != mt_rank)
                check_proc_null_status("MPI_Sendrecv(dest partner, source MPI_PROC_NULL)", &st);
        }
        if (mt_rank % 2 == 1 || partner == mt_rank) {
            E(MPI_Sendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 2, &w, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, &st));
            CHECK_INT("MPI_Sendrecv(dest MPI_PROC_NULL, source partner): data", 31 + partner, w);
            CHECK_INT("MPI_Sendrecv(dest MPI_PROC_NULL, source partner): MPI_SOURCE", partner, st.MPI_SOURCE);
            CHECK_INT("MPI_Sendrecv(dest MPI_PROC_NULL, source partner): MPI_TAG", 2, st.MPI_TAG);
        }
        E(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }

    /* --- MPI_ERROR is not touched by single-status calls ------------------- */
    st.MPI_ERROR = 4242;
    exchange(buf, 8, MPI_INT, rbuf, 8, MPI_INT, 3, &st);
    CHECK_INT("status.MPI_ERROR after a successful MPI_Sendrecv (unchanged)", 4242, st.MPI_ERROR);
    CHECK_INT("status.MPI_SOURCE", partner, st.MPI_SOURCE);
    CHECK_INT("status.MPI_TAG", 3, st.MPI_TAG);
    {
        MPI_Request r2;
        E(MPI_Irecv(rbuf, 8, MPI_INT, partner, 4, MPI_COMM_WORLD, &req));
        E(MPI_Isend(buf, 8, MPI_INT, partner, 4, MPI_COMM_WORLD, &r2));
        st.MPI_ERROR = 4243;
        E(MPI_Wait(&req, &st));
        CHECK_INT("status.MPI_ERROR after a successful MPI_Wait (unchanged)", 4243, st.MPI_ERROR);
        E(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    }

    /* --- the largest tag, MPI_TAG_UB, is usable ----------------------------- */
    {
        int *ub, flag = 0, v = 123 + mt_rank, w = -1;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
        if (flag) {
            E(MPI_Sendrecv(&v, 1, MPI_INT, partner, *ub, &w, 1, MPI_INT, partner, *ub, MPI_COMM_WORLD, &st));
            CHECK_INT("message with tag MPI_TAG_UB: data", 123 + partner, w);
            CHECK_INT("message with tag MPI_TAG_UB: status.MPI_TAG", *ub, st.MPI_TAG);
        }
    }

    /* --- Get_count / Get_elements on derived types ------------------------- */
    {
        MPI_Datatype t3;
        MPI_Count cx = -1;
        E(MPI_Type_contiguous(3, MPI_INT, &t3));
        E(MPI_Type_commit(&t3));
        /* 5 ints received as up to 2 x (3 ints): not a whole number of t3. */
        exchange(buf, 5, MPI_INT, rbuf, 2, t3, 5, &st);
        E(MPI_Get_count(&st, t3, &count));
        CHECK_INT("Get_count(contiguous(3,int)) of 5 ints", MPI_UNDEFINED, count);
        E(MPI_Get_elements(&st, t3, &count));
        CHECK_INT("Get_elements(contiguous(3,int)) of 5 ints", 5, count);
        E(MPI_Get_elements_x(&st, t3, &cx));
        CHECK_INT("Get_elements_x(contiguous(3,int)) of 5 ints", 5, cx);
        E(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT("Get_count(MPI_INT) of 5 ints", 5, count);
        E(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECK_INT("Get_count(MPI_BYTE) of 5 ints", 5 * (int)sizeof(int), count);
        for (i = 0; i < 5; ++i)
            CHECK_INT("data of 5 ints received as contiguous(3,int)", buf[i], rbuf[i]);
        /* 6 ints: exactly 2 x t3. */
        exchange(buf, 6, MPI_INT, rbuf, 2, t3, 6, &st);
        E(MPI_Get_count(&st, t3, &count));
        CHECK_INT("Get_count(contiguous(3,int)) of 6 ints", 2, count);
        E(MPI_Get_elements(&st, t3, &count));
        CHECK_INT("Get_elements(contiguous(3,int)) of 6 ints", 6, count);
        /* 0 ints. */
        exchange(buf, 0, MPI_INT, rbuf, 2, t3, 7, &st);
        E(MPI_Get_count(&st, t3, &count));
        CHECK_INT("Get_count(contiguous(3,int)) of 0 ints", 0, count);
        E(MPI_Get_elements(&st, t3, &count));
        CHECK_INT("Get_elements(contiguous(3,int)) of 0 ints", 0, count);
        E(MPI_Type_free(&t3));
    }
    {
        /* struct {int; double}: elements count the basic items. */
        struct id s_out[3], s_in[3];
        MPI_Datatype sid, sidi;
        int bl[3] = {1, 1, 1};
        MPI_Aint disp[3];
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
        disp[0] = offsetof(struct id, i);
        disp[1] = offsetof(struct id, d);
        E(MPI_Type_create_struct(2, bl, disp, types, &sid));
        E(MPI_Type_commit(&sid));
        for (i = 0; i < 3; ++i) {
            s_out[i].i = 10 * mt_rank + i;
            s_out[i].d = 0.5 + mt_rank + i;
        }
        memset(s_in, 0, sizeof s_in);
        exchange(s_out, 2, sid, s_in, 3, sid, 8, &st);
        E(MPI_Get_count(&st, sid, &count));
        CHECK_INT("Get_count(struct{int,double}) of 2 structs", 2, count);
        E(MPI_Get_elements(&st, sid, &count));
        CHECK_INT("Get_elements(struct{int,double}) of 2 structs", 4, count);
        for (i = 0; i < 2; ++i) {
            CHECK_INT("struct.i", 10 * partner + i, s_in[i].i);
            CHECK(s_in[i].d == 0.5 + partner + i, "struct.d, expected %g got %g", 0.5 + partner + i, s_in[i].d);
        }
        /* Partial: send (int, double, int) and receive as 2 x struct{int,double}:
         * one whole struct plus one int. */
        disp[0] = offsetof(struct id, i);
        disp[1] = offsetof(struct id, d);
        disp[2] = (MPI_Aint)sizeof(struct id) + offsetof(struct id, i);
        E(MPI_Type_create_struct(3, bl, disp, types, &sidi));
        E(MPI_Type_commit(&sidi));
        memset(s_in, 0, sizeof s_in);
        exchange(s_out, 1, sidi, s_in, 2, sid, 9, &st);
        E(MPI_Get_count(&st, sid, &count));
        CHECK_INT("Get_count(struct{int,double}) of a partial receive (int,double,int)", MPI_UNDEFINED, count);
        E(MPI_Get_elements(&st, sid, &count));
        CHECK_INT("Get_elements(struct{int,double}) of a partial receive (int,double,int)", 3, count);
        CHECK_INT("partial receive: second struct's int", 10 * partner + 1, s_in[1].i);
        E(MPI_Type_free(&sid));
        E(MPI_Type_free(&sidi));
    }

    /* --- Status_set_elements / Status_set_cancelled ------------------------ */
    {
        MPI_Status s2;
        int flag = -1;
        E(MPI_Status_set_elements(&s2, MPI_INT, 3));
        E(MPI_Get_count(&s2, MPI_INT, &count));
        CHECK_INT("Get_count after Status_set_elements(MPI_INT, 3)", 3, count);
        E(MPI_Get_elements(&s2, MPI_INT, &count));
        CHECK_INT("Get_elements after Status_set_elements(MPI_INT, 3)", 3, count);
        E(MPI_Status_set_cancelled(&s2, 1));
        E(MPI_Test_cancelled(&s2, &flag));
        CHECK_INT("Test_cancelled after Status_set_cancelled(1)", 1, flag);
        E(MPI_Status_set_cancelled(&s2, 0));
        E(MPI_Test_cancelled(&s2, &flag));
        CHECK_INT("Test_cancelled after Status_set_cancelled(0)", 0, flag);
    }
    return mt_finish();
}
