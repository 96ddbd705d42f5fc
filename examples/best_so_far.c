/*
 * best_so_far: the shared "best so far" of a branch-and-bound search, kept with one
 * MPIX_Rmw2 call per improvement (include/mpix_fabric.h).
 *
 * Rank 0 exposes one double, the best (lowest) cost found so far by anyone. Every rank
 * evaluates its own candidates; a candidate no better than the best this rank knows of
 * is pruned without communication. A better one is offered with
 *
 *   MPIX_Rmw2(&cost, 1, MPI_DOUBLE, &cost, &old, 0, 0,
 *             MPIX_MODE_PASSIVE_EPOCH_IMPLICIT, MPIX_RMW2_COMP_SWAP_LT, win)
 *
 * which stores cost where cost < the global value, atomically, and returns the global
 * value as it was: one round trip, no epoch to open, no compare-and-swap retry loop.
 * `old` also tells the rank what the others found, so it prunes better from then on.
 *
 * At the end the global value must be the minimum over every candidate of every rank.
 * Works under any osc component (other than osc/fabric the call falls back to standard
 * MPI):   mpirun -np 4 --mca osc fabric ./best_so_far [candidates per rank]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "mpix_fabric.h"

/* The cost of candidate i of `rank`: any deterministic function will do. */
static double cost(int rank, long i)
{
    uint64_t h = ((uint64_t)rank << 40 | (uint64_t)i) + 0x9e3779b97f4a7c15u; /* splitmix64 */
    h = (h ^ h >> 30) * 0xbf58476d1ce4e5b9u;
    h = (h ^ h >> 27) * 0x94d049bb133111ebu;
    h ^= h >> 31;
    return (double)(h % 100000000u) / 16.0; /* exact in a double */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 100000;

    /* the global best: one double at rank 0, +inf until someone finds anything */
    double *best;
    MPI_Win win;
    MPI_Win_allocate(rank == 0 ? sizeof(double) : 0, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &best,
                     &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        *best = INFINITY;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    double known = INFINITY; /* the best this rank knows of: a bound, never too low */
    double mine = INFINITY;  /* this rank's own minimum, only to check the result */
    long offers = 0;
    for (long i = 0; i < n; i++) {
        double c = cost(rank, i);
        mine = c < mine ? c : mine;
        if (c >= known) continue; /* pruned: cannot improve the global best */
        double old;
        MPIX_Rmw2(&c, 1, MPI_DOUBLE, &c, &old, 0, 0, MPIX_MODE_PASSIVE_EPOCH_IMPLICIT, MPIX_RMW2_COMP_SWAP_LT,
                  win);
        offers++;
        /* c was stored if it beat old; either way the global best is now <= both */
        known = c < old ? c : old;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every offer is complete when its call returns */

    double expect, global = 0;
    long all_offers;
    MPI_Allreduce(&mine, &expect, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Reduce(&offers, &all_offers, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        global = *best;
        MPI_Win_unlock(0, win);
    }
    int native = 0, ok = global == expect;
    MPIX_Rmw_native(win, &native);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(
            "best_so_far on %d ranks (%s): best %.4f of %ld candidates, %ld offered, "
            "expected %.4f: %s\n",
            size, native ? "native" : "fallback", global, n * size, all_offers, expect, ok ? "ok" : "WRONG");
    MPI_Win_free(&win);
    MPI_Finalize();
    return ok ? 0 : 1;
}
