/*
 * pvars.c - reads osc/fabric's MPI_T performance variables around a loop of RMA calls
 * and prints how much each changed: which routes the calls took (fabric RMA, active
 * messages, batches, direct on-node), how often the provider pushed back, how long
 * locks waited.
 *
 *   mpicc -o pvars examples/pvars.c
 *   mpirun -np 2 --mca osc fabric ./pvars [ITERATIONS [create]]
 *
 * With "create" the window is MPI_Win_create's over malloc'd memory instead of
 * MPI_Win_allocate's: on one node its puts and gets take another direct route.
 *
 * Rank 0 prints one line per variable: its name, the change over the loop (a level,
 * such as the registered bytes, its value), and its description. Works with any osc component; with another one the variables are
 * simply not there.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VARS 64

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "pvars: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    check(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init_thread");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long iters = argc > 1 ? atol(argv[1]) : 1000;
    const int create = argc > 2 && 0 == strcmp(argv[2], "create");

    /* The window first: osc/fabric opens its engine (and its counters) with it. */
    long *mem;
    MPI_Win win;
    const MPI_Aint bytes = 4096 * sizeof(long);
    if (create) {
        mem = malloc((size_t)bytes);
        if (mem == NULL) check(MPI_ERR_NO_MEM, "malloc");
        check(MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win),
              "MPI_Win_create");
    } else {
        check(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win),
              "MPI_Win_allocate");
    }
    memset(mem, 0, 4096 * sizeof(long));

    MPI_T_pvar_session session;
    check(MPI_T_pvar_session_create(&session), "MPI_T_pvar_session_create");
    int nvars, found = 0, level[MAX_VARS];
    char names[MAX_VARS][128], descs[MAX_VARS][256];
    MPI_T_pvar_handle handle[MAX_VARS];
    unsigned long long before[MAX_VARS], after[MAX_VARS];
    check(MPI_T_pvar_get_num(&nvars), "MPI_T_pvar_get_num");
    for (int i = 0; i < nvars && found < MAX_VARS; i++) {
        int name_len = sizeof names[0], desc_len = sizeof descs[0], verbosity, var_class, bind, readonly,
            continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_SUCCESS != MPI_T_pvar_get_info(i, names[found], &name_len, &verbosity, &var_class, &type,
                                               &enumtype, descs[found], &desc_len, &bind, &readonly,
                                               &continuous, &atomic))
            continue;
        if (strncmp(names[found], "osc_fabric_", 11) != 0 || type != MPI_UNSIGNED_LONG_LONG) continue;
        int count;
        if (MPI_SUCCESS != MPI_T_pvar_handle_alloc(session, i, NULL, &handle[found], &count) || count != 1)
            continue;
        level[found++] = var_class == MPI_T_PVAR_CLASS_LEVEL;
    }
    for (int v = 0; v < found; v++) check(MPI_T_pvar_read(session, handle[v], &before[v]), "MPI_T_pvar_read");

    /* The loop: puts, gets, accumulates and fetch-and-adds to the next rank, each
     * iteration one lock epoch. */
    const int target = (rank + 1) % size;
    long one = 1, got;
    for (long i = 0; i < iters; i++) {
        check(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win), "MPI_Win_lock");
        MPI_Put(&i, 1, MPI_LONG, target, i % 1024, 1, MPI_LONG, win);
        MPI_Get(&got, 1, MPI_LONG, target, 1024 + i % 1024, 1, MPI_LONG, win);
        MPI_Accumulate(&one, 1, MPI_LONG, target, 2048, 1, MPI_LONG, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &got, MPI_LONG, target, 2049, MPI_SUM, win);
        check(MPI_Win_unlock(target, win), "MPI_Win_unlock");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    for (int v = 0; v < found; v++) check(MPI_T_pvar_read(session, handle[v], &after[v]), "MPI_T_pvar_read");
    if (rank == 0) {
        printf(
            "# %ld lock epochs of put + get + accumulate + fetch_and_op to rank %d; change of each\n"
            "# osc/fabric MPI_T counter on rank 0, the value of each level (%d found)\n",
            iters, target, found);
        for (int v = 0; v < found; v++)
            printf("%-36s %12llu  %s\n", names[v], level[v] ? after[v] : after[v] - before[v], descs[v]);
    }
    for (int v = 0; v < found; v++) MPI_T_pvar_handle_free(session, &handle[v]);
    MPI_T_pvar_session_free(&session);
    MPI_Win_free(&win);
    if (create) free(mem);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
