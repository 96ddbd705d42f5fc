/*
 * MPI_THREAD_MULTIPLE: several threads per process issue RMA at once, on one shared
 * window inside one lock_all epoch (puts, accumulates, fetch-and-ops, flushes) and on
 * a window of their own with their own lock/unlock epochs. Every update must land.
 */
#include <mpi.h>
#include <pthread.h>

#include "check.h"

enum { THREADS = 4, OPS = 200 };

static MPI_Win shared_win, own_win[THREADS];
static long *own_mem[THREADS];
static int rank, size;

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    const int right = (rank + 1) % size;
    long one = 1, old;
    for (int i = 0; i < OPS; i++) {
        long v = (long)rank * 1000000 + t * 10000 + i;
        MPI_Put(&v, 1, MPI_LONG, right, t, 1, MPI_LONG, shared_win);
        MPI_Accumulate(&one, 1, MPI_LONG, right, THREADS, 1, MPI_LONG, MPI_SUM, shared_win);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, right, THREADS + 1, MPI_SUM, shared_win);
        if (0 == i % 16) MPI_Win_flush(right, shared_win);
        /* Own window: a complete passive epoch per iteration. */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, own_win[t]);
        MPI_Accumulate(&one, 1, MPI_LONG, right, 0, 1, MPI_LONG, MPI_SUM, own_win[t]);
        MPI_Win_unlock(right, own_win[t]);
    }
    MPI_Win_flush(right, shared_win);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        CHECK(0, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
        return check_finish();
    }
    long *mem;
    MPI_Win_allocate((THREADS + 2) * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &shared_win);
    for (int i = 0; i < THREADS + 2; i++) mem[i] = 0;
    for (int t = 0; t < THREADS; t++) {
        MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &own_mem[t], &own_win[t]);
        *own_mem[t] = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock_all(0, shared_win);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    MPI_Win_unlock_all(shared_win);
    MPI_Barrier(MPI_COMM_WORLD);

    const int left = (rank + size - 1) % size;
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, shared_win);
    for (int t = 0; t < THREADS; t++)
        CHECK(mem[t] == (long)left * 1000000 + t * 10000 + OPS - 1, "thread %d's last put: %ld", t, mem[t]);
    CHECK(mem[THREADS] == THREADS * OPS, "accumulates: %ld of %d", mem[THREADS], THREADS * OPS);
    CHECK(mem[THREADS + 1] == THREADS * OPS, "fetch-and-ops: %ld of %d", mem[THREADS + 1], THREADS * OPS);
    MPI_Win_unlock(rank, shared_win);
    for (int t = 0; t < THREADS; t++) {
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, own_win[t]);
        CHECK(*own_mem[t] == OPS, "own window %d: %ld of %d", t, *own_mem[t], OPS);
        MPI_Win_unlock(rank, own_win[t]);
        MPI_Win_free(&own_win[t]);
    }
    MPI_Win_free(&shared_win);
    return check_finish();
}
