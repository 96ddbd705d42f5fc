/*
 * Derived datatypes on origin and target: vector, indexed and resized types for put,
 * get, accumulate and get_accumulate (built from one predefined type), checked element
 * by element, including the gaps that must stay untouched; an origin at MPI_BOTTOM
 * described by absolute addresses; and a signature mismatch, which must be an error
 * (MPI_ERR_ARG), not a partial transfer.
 */
#include <mpi.h>
#include <string.h>

#include "check.h"

enum { N = 64, WIN = 4 * N };

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 120, &rank, &size); /* MPI_Init, then a watchdog (check.h) */
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *mem;
    MPI_Win win;
    MPI_Win_allocate(WIN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    /* Target layout: every other int (stride 2), N of them. Origin layout: blocks of 3
     * ints out of every 5, indexed, so the two sides cut each other's pieces. */
    MPI_Datatype tvec, oidx;
    MPI_Type_vector(N, 1, 2, MPI_INT, &tvec);
    MPI_Type_commit(&tvec);
    int blen[N / 3 + 1], disp[N / 3 + 1], nb = 0, have = 0;
    for (int b = 0; have < N; b++) {
        blen[nb] = (N - have) < 3 ? (N - have) : 3;
        disp[nb] = 5 * b;
        have += blen[nb++];
    }
    MPI_Type_indexed(nb, blen, disp, MPI_INT, &oidx);
    MPI_Type_commit(&oidx);

    int origin[5 * N], back[5 * N];
    for (int i = 0; i < 5 * N; i++) origin[i] = rank * 10000 + i;

    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < WIN; i++) mem[i] = -1;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
        if (0 == round) {
            CHECK_MPI(MPI_Put(origin, 1, oidx, right, 1, 1, tvec, win));
        } else {
            /* Accumulate SUM onto the same layout: -1 + value. */
            CHECK_MPI(MPI_Accumulate(origin, 1, oidx, right, 1, 1, tvec, MPI_SUM, win));
        }
        CHECK_MPI(MPI_Win_flush(right, win));
        /* Read it back through the same types into a cleared buffer. */
        for (int i = 0; i < 5 * N; i++) back[i] = -7;
        CHECK_MPI(MPI_Get(back, 1, oidx, right, 1, 1, tvec, win));
        CHECK_MPI(MPI_Win_flush(right, win));
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);

        /* The k-th origin element went to target int 1 + 2k. */
        int k = 0;
        for (int b = 0; b < nb; b++) {
            for (int j = 0; j < blen[b]; j++, k++) {
                int want = left * 10000 + disp[b] + j + (round ? -1 : 0);
                CHECK(mem[1 + 2 * k] == want, "round %d: target int %d is %d, want %d", round, 1 + 2 * k,
                      mem[1 + 2 * k], want);
                CHECK(mem[2 + 2 * k] == -1, "round %d: gap int %d was written (%d)", round, 2 + 2 * k,
                      mem[2 + 2 * k]);
                int got_want = rank * 10000 + disp[b] + j + (round ? -1 : 0);
                CHECK(back[disp[b] + j] == got_want, "round %d: get element %d is %d, want %d", round, k,
                      back[disp[b] + j], got_want);
            }
            if (b + 1 < nb) CHECK(back[disp[b] + blen[b]] == -7, "get wrote into an origin gap");
        }
        CHECK(mem[0] == -1, "int before the target layout was written");
    }

    /* get_accumulate with a resized result type: fetch into every third int. */
    MPI_Datatype rvec;
    MPI_Type_vector(N, 1, 3, MPI_INT, &rvec);
    MPI_Type_commit(&rvec);
    int fetched[3 * N], ones[N];
    for (int i = 0; i < N; i++) ones[i] = 1;
    for (int i = 0; i < 3 * N; i++) fetched[i] = -9;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    CHECK_MPI(MPI_Get_accumulate(ones, N, MPI_INT, fetched, 1, rvec, right, 1, 1, tvec, MPI_SUM, win));
    MPI_Win_unlock(right, win);
    /* My right neighbour's target ints hold what my round-1 accumulate left there. */
    int origin_index[N], k = 0;
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < blen[b]; j++) origin_index[k++] = disp[b] + j;
    for (k = 0; k < N; k++) {
        int want = rank * 10000 + origin_index[k] - 1;
        CHECK(fetched[3 * k] == want, "get_accumulate element %d: %d, want %d", k, fetched[3 * k], want);
        CHECK(fetched[3 * k + 1] == -9 && fetched[3 * k + 2] == -9, "get_accumulate wrote a result gap");
    }

    /* The origin at MPI_BOTTOM: the indexed layout again, as absolute addresses. A put
     * of it, then a get of it back into another buffer the same way. */
    MPI_Aint abs_disp[N / 3 + 1], abs_back[N / 3 + 1];
    for (int b = 0; b < nb; b++) {
        MPI_Get_address(&origin[disp[b]], &abs_disp[b]);
        MPI_Get_address(&back[disp[b]], &abs_back[b]);
    }
    MPI_Datatype oabs, babs;
    MPI_Type_create_hindexed(nb, blen, abs_disp, MPI_INT, &oabs);
    MPI_Type_create_hindexed(nb, blen, abs_back, MPI_INT, &babs);
    MPI_Type_commit(&oabs);
    MPI_Type_commit(&babs);
    MPI_Barrier(MPI_COMM_WORLD); /* every get_accumulate above has read my window */
    for (int i = 0; i < WIN; i++) mem[i] = -1;
    for (int i = 0; i < 5 * N; i++) back[i] = -7;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    CHECK_MPI(MPI_Put(MPI_BOTTOM, 1, oabs, right, 1, 1, tvec, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Get(MPI_BOTTOM, 1, babs, right, 1, 1, tvec, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    k = 0;
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < blen[b]; j++, k++) {
            CHECK(mem[1 + 2 * k] == left * 10000 + disp[b] + j, "MPI_BOTTOM put: target int %d is %d",
                  1 + 2 * k, mem[1 + 2 * k]);
            CHECK(back[disp[b] + j] == rank * 10000 + disp[b] + j, "MPI_BOTTOM get: element %d is %d", k,
                  back[disp[b] + j]);
        }
    CHECK(back[disp[0] + blen[0]] == -7, "MPI_BOTTOM get wrote into an origin gap");
    MPI_Type_free(&oabs);
    MPI_Type_free(&babs);

    /* Signatures of different sizes: an error, and nothing moves. */
    MPI_Win_lock_all(0, win);
    int rc = MPI_Put(origin, N - 1, MPI_INT, right, 1, 1, tvec, win);
    CHECK(check_error_class(rc) == MPI_ERR_ARG, "put of %d ints into a %d-int type: class %s", N - 1, N,
          check_class_name(check_error_class(rc)));
    MPI_Win_unlock_all(win);

    MPI_Type_free(&tvec);
    MPI_Type_free(&oidx);
    MPI_Type_free(&rvec);
    MPI_Win_free(&win);
    return check_finish();
}
