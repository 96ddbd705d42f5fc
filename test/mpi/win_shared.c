/*
 * Shared windows: MPI_Win_allocate_shared (contiguous by default, page-aligned slices
 * with alloc_shared_noncontig=true), MPI_Win_shared_query (including MPI_PROC_NULL
 * and a rank with no memory), load/store through the shared mapping, RMA on the same
 * window. And MPI-4.0's MPI_Win_shared_query on MPI_Win_allocate and MPI_Win_create
 * windows: every process its own memory; an on-node peer's MPI_Win_allocate memory
 * where osc/fabric maps it (node_direct, the default), with loads and stores through
 * it agreeing with MPI_Put and MPI_Get; size 0 and NULL for every other peer.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void run(int noncontig)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Info info;
    MPI_Info_create(&info);
    if (noncontig) MPI_Info_set(info, "alloc_shared_noncontig", "true");
    /* Rank 1 exposes nothing; the others (rank + 1) * 24 bytes of longs. */
    const MPI_Aint mine = 1 == rank ? 0 : (MPI_Aint)((rank + 1) * 3 * sizeof(long));
    long *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate_shared(mine, sizeof(long), info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    MPI_Win_lock_all(0, win);
    for (MPI_Aint i = 0; i < mine / (MPI_Aint)sizeof(long); i++) base[i] = rank * 100 + i;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);

    char *prev_end = NULL;
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int du = 0;
        long *p = NULL;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
        MPI_Aint want = 1 == r ? 0 : (MPI_Aint)((r + 1) * 3 * sizeof(long));
        CHECK(sz == want && du == (int)sizeof(long), "query of rank %d: size %ld unit %d", r, (long)sz, du);
        for (MPI_Aint i = 0; sz > 0 && i < sz / (MPI_Aint)sizeof(long); i++)
            CHECK(p[i] == r * 100 + i, "load of rank %d element %ld: %ld", r, (long)i, p[i]);
        if (sz > 0) {
            if (noncontig)
                CHECK(((uintptr_t)p & 4095) == 0, "noncontig slice of rank %d not page aligned", r);
            else if (prev_end)
                CHECK((char *)p == prev_end, "contiguous slices: rank %d does not follow its predecessor", r);
            prev_end = (char *)p + sz;
        }
    }
    MPI_Aint sz;
    int du;
    long *first;
    CHECK_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &first));
    CHECK(sz == (MPI_Aint)(3 * sizeof(long)) && first && first[0] == 0,
          "MPI_PROC_NULL query gives rank 0's slice");

    /* RMA into the same memory: every rank adds 1 to element 0 of every slice. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        if (1 == r) continue;
        long one = 1;
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, r, 0, 1, MPI_LONG, MPI_SUM, win));
    }
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    if (mine) CHECK(base[0] == rank * 100 + size, "after %d accumulates element 0 is %ld", size, base[0]);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

/* Whether world rank r shares this process's node (MPI_COMM_TYPE_SHARED). */
static int *on_node_table(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Group world_group, node_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(node, &node_group);
    int *ranks = malloc(sizeof(int) * (size_t)size), *in_node = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) ranks[r] = r;
    MPI_Group_translate_ranks(world_group, size, ranks, node_group, in_node);
    for (int r = 0; r < size; r++) in_node[r] = MPI_UNDEFINED != in_node[r];
    free(ranks);
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
    MPI_Comm_free(&node);
    return in_node;
}

static void query_allocated(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *on_node = on_node_table();
    const char *nd = getenv("OMPI_MCA_osc_fabric_node_direct");
    const int mapped_peers = NULL == nd || 0 != strcmp(nd, "0");
    /* Element q of rank r's window is written by rank q. */
    long *mem;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate((MPI_Aint)(size * sizeof(long)), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &mem, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < size; i++) mem[i] = -1;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);

    long **peer = calloc((size_t)size, sizeof(long *));
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int du = 0;
        long *p = (long *)&sz;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
        CHECK(du == (int)sizeof(long), "allocate: query of rank %d gave disp_unit %d", r, du);
        if (r == rank) {
            CHECK(sz == (MPI_Aint)(size * sizeof(long)) && p == mem,
                  "allocate: own query gave size %ld base %p (allocated %p)", (long)sz, (void *)p,
                  (void *)mem);
        } else if (on_node[r] && mapped_peers) {
            CHECK(sz == (MPI_Aint)(size * sizeof(long)) && NULL != p,
                  "allocate: on-node rank %d gave size %ld base %p", r, (long)sz, (void *)p);
        } else {
            CHECK(0 == sz && NULL == p, "allocate: rank %d (off node or not mapped) gave size %ld base %p", r,
                  (long)sz, (void *)p);
        }
        peer[r] = 0 == sz ? NULL : p;
    }
    /* MPI_PROC_NULL: the lowest rank whose memory this process reaches. */
    int lowest = rank;
    for (int r = 0; r < rank; r++) {
        if (NULL != peer[r]) {
            lowest = r;
            break;
        }
    }
    MPI_Aint sz = -1;
    int du = 0;
    long *p = NULL;
    CHECK_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
    CHECK(p == peer[lowest], "allocate: MPI_PROC_NULL gave %p, rank %d's memory is at %p", (void *)p, lowest,
          (void *)peer[lowest]);

    /* Each rank writes its element of every window: stores where it has the pointer,
     * MPI_Put elsewhere. Then loads and MPI_Get must see every writer's value. */
    for (int r = 0; r < size; r++) {
        long v = 1000L * rank + r;
        if (NULL != peer[r])
            peer[r][rank] = v;
        else
            CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, r, rank, 1, MPI_LONG, win));
    }
    MPI_Win_flush_all(win);
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int q = 0; q < size; q++)
        CHECK(mem[q] == 1000L * q + rank, "allocate: element %d of my window is %ld after its writer stored",
              q, mem[q]);
    for (int r = 0; r < size; r++) {
        long got = -2;
        CHECK_MPI(MPI_Get(&got, 1, MPI_LONG, r, (r + 1) % size, 1, MPI_LONG, win));
        MPI_Win_flush(r, win);
        const long want = 1000L * ((r + 1) % size) + r;
        CHECK(got == want, "allocate: MPI_Get of rank %d's element %d gave %ld, want %ld", r, (r + 1) % size,
              got, want);
        if (NULL != peer[r])
            CHECK(peer[r][(r + 1) % size] == want, "allocate: load from rank %d's memory gave %ld, want %ld",
                  r, peer[r][(r + 1) % size], want);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    free(peer);
    free(on_node);
}

/* MPI_Win_create over private memory: a process reaches its own, no peer's. Dynamic
 * windows expose no memory at creation: size 0 for every rank. */
static void query_created(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long mine[4];
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(mine, sizeof mine, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int du = 0;
        long *p = (long *)&sz;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
        if (r == rank)
            CHECK(sz == (MPI_Aint)sizeof mine && p == mine && du == (int)sizeof(long),
                  "create: own query gave size %ld base %p unit %d", (long)sz, (void *)p, du);
        else
            CHECK(0 == sz && NULL == p, "create: rank %d's private memory gave size %ld base %p", r, (long)sz,
                  (void *)p);
    }
    MPI_Win_free(&win);
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int du = 0;
        long *p = (long *)&sz;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
        CHECK(0 == sz && NULL == p, "dynamic: rank %d gave size %ld base %p", r, (long)sz, (void *)p);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    run(0);
    run(1);

    query_allocated();
    query_created();
    return check_finish();
}
