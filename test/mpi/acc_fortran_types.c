/*
 * acc_fortran_types: accumulates on Fortran's predefined datatypes, called from C as a
 * Fortran program's calls arrive. Every rank adds into rank 0 inside one fence epoch and
 * the result must be exact: MPI_COMPLEX and MPI_DOUBLE_COMPLEX sums (a complex once
 * went as one real of its width: silently wrong), MPI_LOGICAL's LOR and LAND,
 * MPI_CHARACTER's REPLACE, MPI_2INTEGER's MINLOC, MAXLOC on MPI_2REAL (ties to the
 * smaller index, also through a vector of it) and MINLOC on MPI_2DOUBLE_PRECISION, a
 * compare-and-swap on MPI_LOGICAL, and REPLACE / NO_OP on the pair types of reals and
 * complexes.
 */
#include "check.h"

typedef struct {
    float re, im;
} fcomplex;
typedef struct {
    double re, im;
} dcomplex;

/* Rank 0's window: one slot of each kind. */
typedef struct {
    fcomplex c;
    dcomplex z;
    int32_t lor, land; /* MPI_LOGICAL is a default INTEGER's width here */
    char ch;
    char pad[3];
    int32_t loc[2]; /* MPI_2INTEGER: value, index */
    int32_t cas;
    float two_real[2];
    dcomplex two_complex[2]; /* two MPI_2COMPLEX: four Fortran COMPLEX */
    float maxloc[2][2];      /* two MPI_2REAL: (value, index) */
    float every_other[3][2]; /* MPI_2REAL elements 0 and 2, through a vector */
    double minloc[2];        /* one MPI_2DOUBLE_PRECISION */
} slots;

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 120, &rank, &size); /* MPI_Init, then a watchdog (check.h) */
    int logical_size = 0;
    MPI_Type_size(MPI_LOGICAL, &logical_size);
    if (logical_size != 4) {
        if (rank == 0) printf("MPI_LOGICAL is %d bytes here, not 4: nothing to check\n", logical_size);
        MPI_Finalize();
        return 0;
    }

    slots *mem;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(sizeof(slots), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(mem, 0, sizeof *mem);
    mem->land = 1;
    mem->loc[0] = 1000;
    mem->loc[1] = -1;
    for (int e = 0; e < 2; e++) mem->maxloc[e][0] = -1e30f, mem->maxloc[e][1] = -1;
    for (int e = 0; e < 3; e++) mem->every_other[e][0] = -1e30f, mem->every_other[e][1] = -1;
    mem->minloc[0] = 1e300;
    mem->minloc[1] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    const MPI_Aint at_c = offsetof(slots, c), at_z = offsetof(slots, z), at_lor = offsetof(slots, lor),
                   at_land = offsetof(slots, land), at_ch = offsetof(slots, ch),
                   at_loc = offsetof(slots, loc), at_cas = offsetof(slots, cas),
                   at_2r = offsetof(slots, two_real), at_2z = offsetof(slots, two_complex),
                   at_maxloc = offsetof(slots, maxloc), at_every = offsetof(slots, every_other),
                   at_minloc = offsetof(slots, minloc);
    /* Element 0: the largest rank wins; element 1: a tie, the smallest index wins. */
    const float maxloc[2][2] = {{(float)rank, (float)rank}, {7.0f, (float)rank}};
    const double minloc[2] = {100.0 - rank, rank};
    MPI_Datatype every_other;
    MPI_Type_vector(2, 1, 2, MPI_2REAL, &every_other);
    MPI_Type_commit(&every_other);
    const fcomplex c = {(float)rank + 1, 2.0f * (float)rank};
    const dcomplex z = {0.5 * rank, -(double)rank};
    const int32_t t = rank == size - 1, f = 1 - (rank == 0 && size > 1), value = 500 - rank;
    const int32_t pair[2] = {value, rank};
    const char ch = (char)('a' + rank);
    const float two_real[2] = {1.5f, 2.5f};
    const dcomplex two_complex[2] = {{1, 2}, {3, 4}};
    dcomplex old_two_complex[2] = {{-1, -1}, {-1, -1}};

    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Accumulate(&c, 1, MPI_COMPLEX, 0, at_c, 1, MPI_COMPLEX, MPI_SUM, win));
    CHECK_MPI(MPI_Accumulate(&z, 1, MPI_DOUBLE_COMPLEX, 0, at_z, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, win));
    CHECK_MPI(MPI_Accumulate(&t, 1, MPI_LOGICAL, 0, at_lor, 1, MPI_LOGICAL, MPI_LOR, win));
    CHECK_MPI(MPI_Accumulate(&f, 1, MPI_LOGICAL, 0, at_land, 1, MPI_LOGICAL, MPI_LAND, win));
    if (rank == size - 1)
        CHECK_MPI(MPI_Accumulate(&ch, 1, MPI_CHARACTER, 0, at_ch, 1, MPI_CHARACTER, MPI_REPLACE, win));
    CHECK_MPI(MPI_Accumulate(pair, 1, MPI_2INTEGER, 0, at_loc, 1, MPI_2INTEGER, MPI_MINLOC, win));
    CHECK_MPI(MPI_Accumulate(maxloc, 2, MPI_2REAL, 0, at_maxloc, 2, MPI_2REAL, MPI_MAXLOC, win));
    CHECK_MPI(MPI_Accumulate(maxloc, 2, MPI_2REAL, 0, at_every, 1, every_other, MPI_MAXLOC, win));
    CHECK_MPI(MPI_Accumulate(minloc, 1, MPI_2DOUBLE_PRECISION, 0, at_minloc, 1, MPI_2DOUBLE_PRECISION,
                             MPI_MINLOC, win));
    if (rank == 0) {
        CHECK_MPI(MPI_Accumulate(two_real, 1, MPI_2REAL, 0, at_2r, 1, MPI_2REAL, MPI_REPLACE, win));
        CHECK_MPI(MPI_Get_accumulate(two_complex, 2, MPI_2COMPLEX, old_two_complex, 2, MPI_2COMPLEX, 0, at_2z,
                                     2, MPI_2COMPLEX, MPI_REPLACE, win));
    }
    CHECK_MPI(MPI_Win_fence(0, win));
    /* Then every rank in turn swaps .FALSE. for .TRUE.: only the first succeeds. */
    int32_t yes = 1, no = 0, found = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Compare_and_swap(&yes, &no, &found, MPI_LOGICAL, 0, at_cas, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    int winners = 0, won = found == 0;
    MPI_Reduce(&won, &winners, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    CHECK(found == 0 || found == 1, "compare-and-swap on MPI_LOGICAL found %d", found);
    if (rank == 0) {
        for (int i = 0; i < 2; i++)
            CHECK(old_two_complex[i].re == 0 && old_two_complex[i].im == 0, "MPI_2COMPLEX old value %d", i);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        const double n = size;
        CHECK(mem->c.re == (float)(n * (n + 1) / 2) && mem->c.im == (float)(n * (n - 1)),
              "MPI_COMPLEX sum (%g, %g), expected (%g, %g)", mem->c.re, mem->c.im, n * (n + 1) / 2,
              n * (n - 1));
        CHECK(mem->z.re == 0.25 * n * (n - 1) && mem->z.im == -n * (n - 1) / 2,
              "MPI_DOUBLE_COMPLEX sum (%g, %g)", mem->z.re, mem->z.im);
        CHECK(mem->lor == 1, "MPI_LOGICAL LOR gave %d", mem->lor);
        CHECK(mem->land == (size == 1), "MPI_LOGICAL LAND gave %d", mem->land);
        CHECK(mem->ch == (char)('a' + size - 1), "MPI_CHARACTER REPLACE left '%c'", mem->ch);
        CHECK(mem->loc[0] == 500 - (size - 1) && mem->loc[1] == size - 1, "MPI_2INTEGER MINLOC gave (%d, %d)",
              mem->loc[0], mem->loc[1]);
        CHECK(mem->cas == 1, "MPI_LOGICAL after the swaps: %d", mem->cas);
        CHECK(winners == 1, "%d compare-and-swaps on MPI_LOGICAL succeeded", winners);
        CHECK(mem->two_real[0] == 1.5f && mem->two_real[1] == 2.5f, "MPI_2REAL REPLACE");
        CHECK(mem->two_complex[1].re == 3 && mem->two_complex[1].im == 4, "MPI_2COMPLEX REPLACE");
        const float last = (float)(size - 1);
        CHECK(mem->maxloc[0][0] == last && mem->maxloc[0][1] == last, "MPI_2REAL MAXLOC gave (%g, %g)",
              mem->maxloc[0][0], mem->maxloc[0][1]);
        CHECK(mem->maxloc[1][0] == 7.0f && mem->maxloc[1][1] == 0.0f, "MPI_2REAL MAXLOC tie gave (%g, %g)",
              mem->maxloc[1][0], mem->maxloc[1][1]);
        CHECK(mem->every_other[0][0] == last && mem->every_other[0][1] == last &&
                  mem->every_other[1][0] == -1e30f && mem->every_other[1][1] == -1 &&
                  mem->every_other[2][0] == 7.0f && mem->every_other[2][1] == 0.0f,
              "MPI_2REAL MAXLOC through a vector gave (%g, %g) (%g, %g) (%g, %g)", mem->every_other[0][0],
              mem->every_other[0][1], mem->every_other[1][0], mem->every_other[1][1], mem->every_other[2][0],
              mem->every_other[2][1]);
        CHECK(mem->minloc[0] == 100.0 - (size - 1) && mem->minloc[1] == size - 1,
              "MPI_2DOUBLE_PRECISION MINLOC gave (%g, %g)", mem->minloc[0], mem->minloc[1]);
    }
    MPI_Type_free(&every_other);
    MPI_Win_free(&win);
    return check_finish();
}
