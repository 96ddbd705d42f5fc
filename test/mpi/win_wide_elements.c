/*
 * Derived datatypes of elements wider than 8 bytes (long double, double complex,
 * MPI_DOUBLE_INT) in irregular pieces on both sides, small and large: over the network
 * such a put or get travels packed, in messages (or rendezvous chunks, from 64 KiB)
 * cut where the target's pieces and the room say, which can fall inside one of the
 * origin's elements (mpi/osc_fabric_datatype.c, pack_next). Each rank puts to its
 * right neighbour, which checks every element it received, then gets it back.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct {
    double d;
    int i;
} double_int;

enum { KINDS = 3 };
static const char *const kind_name[KINDS] = {"long double", "double complex", "MPI_DOUBLE_INT"};

static MPI_Datatype kind_type(int kind)
{
    return kind == 0 ? MPI_LONG_DOUBLE : kind == 1 ? MPI_C_DOUBLE_COMPLEX : MPI_DOUBLE_INT;
}

/* Element k of what rank r sends, stored at p. */
static void put_value(int kind, void *p, long k, int r)
{
    if (kind == 0) {
        long double v = (long double)k + 1e6L * r;
        memcpy(p, &v, sizeof v);
    } else if (kind == 1) {
        double v[2] = {(double)k + 1e6 * r, -(double)k};
        memcpy(p, v, sizeof v);
    } else {
        double_int v = {0.5 * (double)k + r, (int)k};
        memcpy(p, &v, sizeof v);
    }
}

static int same_value(int kind, const void *p, long k, int r)
{
    if (kind == 0) {
        long double v;
        memcpy(&v, p, sizeof v);
        return v == (long double)k + 1e6L * r;
    }
    if (kind == 1) {
        double v[2];
        memcpy(v, p, sizeof v);
        return v[0] == (double)k + 1e6 * r && v[1] == -(double)k;
    }
    double_int v;
    memcpy(&v, p, sizeof v);
    return v.d == 0.5 * (double)k + r && v.i == (int)k;
}

/* n elements in blocks of 1-3 with gaps of 0-2 elements, from seed; *span: elements
 * from the first to past the last. disp and len are filled for walking it. */
static MPI_Datatype irregular(int kind, long n, unsigned seed, int *len, int *disp, int *blocks, long *span)
{
    long at = 0;
    int b = 0;
    for (long left = n; left > 0; b++) {
        seed = seed * 1103515245u + 12345u;
        long l = 1 + (long)((seed >> 16) % 3);
        if (l > left) l = left;
        disp[b] = (int)at;
        len[b] = (int)l;
        at += l + (long)((seed >> 24) % 3);
        left -= l;
    }
    *blocks = b;
    *span = at;
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_indexed(b, len, disp, kind_type(kind), &t));
    CHECK_MPI(MPI_Type_commit(&t));
    return t;
}

static void one_case(int kind, long n, int rank, int size)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Aint lb, extent;
    MPI_Type_get_extent(kind_type(kind), &lb, &extent);
    int *olen = malloc(n * sizeof(int)), *odisp = malloc(n * sizeof(int));
    int *tlen = malloc(n * sizeof(int)), *tdisp = malloc(n * sizeof(int));
    int oblocks, tblocks;
    long ospan, tspan;
    MPI_Datatype otype = irregular(kind, n, 7u, olen, odisp, &oblocks, &ospan);
    MPI_Datatype ttype = irregular(kind, n, 99u, tlen, tdisp, &tblocks, &tspan);

    char *mem;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate((MPI_Aint)tspan * extent, (int)extent, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(mem, 0, (size_t)(tspan * extent));
    char *src = calloc((size_t)ospan, (size_t)extent), *back = calloc((size_t)ospan, (size_t)extent);
    long k = 0;
    for (int b = 0; b < oblocks; b++)
        for (int j = 0; j < olen[b]; j++, k++) put_value(kind, src + (odisp[b] + j) * extent, k, rank);

    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(src, 1, otype, right, 0, 1, ttype, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    long wrong = 0;
    k = 0;
    for (int b = 0; b < tblocks; b++)
        for (int j = 0; j < tlen[b]; j++, k++)
            wrong += !same_value(kind, mem + (tdisp[b] + j) * extent, k, left);
    CHECK(wrong == 0, "%s, %ld elements: %ld put from rank %d arrived wrong", kind_name[kind], n, wrong,
          left);

    CHECK_MPI(MPI_Get(back, 1, otype, right, 0, 1, ttype, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    wrong = 0;
    k = 0;
    for (int b = 0; b < oblocks; b++)
        for (int j = 0; j < olen[b]; j++, k++)
            wrong += !same_value(kind, back + (odisp[b] + j) * extent, k, rank);
    CHECK(wrong == 0, "%s, %ld elements: %ld came back wrong from rank %d", kind_name[kind], n, wrong, right);

    CHECK_MPI(MPI_Win_free(&win));
    MPI_Type_free(&otype);
    MPI_Type_free(&ttype);
    free(src);
    free(back);
    free(olen);
    free(odisp);
    free(tlen);
    free(tdisp);
}

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 120, &rank, &size); /* MPI_Init, then a watchdog (check.h) */
    /* 3000 elements travel in messages, 40000 by rendezvous. */
    const long counts[] = {3000, 40000};
    for (int kind = 0; kind < KINDS; kind++)
        for (int c = 0; c < 2; c++) one_case(kind, counts[c], rank, size);
    return check_finish();
}
