/*
 * linked_list: a distributed linked list on a dynamic window, the way MPI RMA
 * tutorials and suites build one. Every process appends ELEMS elements it owns
 * (attached to the window one by one) to one shared list whose head is on
 * rank 0. An append is
 *     MPI_Win_lock(SHARED, tail owner, MPI_MODE_NOCHECK)
 *     MPI_Compare_and_swap on the tail's next pointer (nil -> new element)
 *     MPI_Win_unlock
 * and a process that loses the race follows the winner's pointer, polling it
 * with MPI_Fetch_and_op(MPI_NO_OP) in lock/unlock rounds until the winner's
 * element is visible there. Each append also adds one to a counter on rank 0,
 * and every process polls that counter (lock, fetch-and-op NO_OP, unlock) until
 * all appends are in. Rank 0 then walks the list and checks every element of
 * every process appears exactly once.
 *
 * Every round trip needs the target process to run its progress, so with more
 * processes than cores the waiting processes must give the CPU away. The
 * program prints its time; contrib/oversubscribe compares it across process
 * counts, and the watchdog (check.h) reports a stall.
 *
 *   linked_list [ELEMS]   (default 32)
 */
#include "check.h"

#include <stdlib.h>
#include <time.h>

/* A pointer into the list: (owner rank + 1) << 32 | element index; 0 is nil. */
typedef int64_t llptr;
#define NIL ((llptr)0)
static llptr make_ptr(int rank, int idx)
{
    return ((int64_t)(rank + 1) << 32) | (uint32_t)idx;
}
static int ptr_rank(llptr p)
{
    return (int)(p >> 32) - 1;
}
static int ptr_idx(llptr p)
{
    return (int)(uint32_t)p;
}

typedef struct {
    int64_t value; /* rank * ELEMS + index, +1 so no element is 0 */
    llptr next;
} elem;

static int rank, nranks, nelems;
static MPI_Win win;
static elem **mine;         /* this rank's elements, attached one by one */
static MPI_Aint *elem_addr; /* [rank * nelems + idx]: every element's address */

static MPI_Aint next_disp(llptr p)
{
    return elem_addr[(size_t)ptr_rank(p) * (size_t)nelems + (size_t)ptr_idx(p)] +
           (MPI_Aint)offsetof(elem, next);
}

/* Reads p's next pointer in its own lock/unlock round. */
static llptr read_next(llptr p)
{
    llptr got = NIL, dummy = NIL;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, ptr_rank(p), MPI_MODE_NOCHECK, win));
    CHECK_MPI(MPI_Fetch_and_op(&dummy, &got, MPI_INT64_T, ptr_rank(p), next_disp(p), MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_unlock(ptr_rank(p), win));
    return got;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    check_watchdog(30); /* a stalled rank says where (check.h) */
    nelems = argc > 1 ? atoi(argv[1]) : 32;
    if (nelems < 1) nelems = 1;

    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    /* Rank 0's extra element 0 is the list's head (a sentinel) and its counter. */
    mine = calloc((size_t)nelems + 1, sizeof(elem *));
    for (int i = 0; i <= nelems; i++) {
        mine[i] = calloc(1, sizeof(elem));
        CHECK_MPI(MPI_Win_attach(win, mine[i], sizeof(elem)));
    }
    MPI_Aint *local = malloc(sizeof(MPI_Aint) * ((size_t)nelems + 1));
    for (int i = 0; i <= nelems; i++) MPI_Get_address(mine[i], &local[i]);
    /* elem_addr[r * nelems + i]: element i (1-based in mine[]) of rank r; the head
     * and counter live in rank 0's mine[0], found through head_addr. */
    elem_addr = malloc(sizeof(MPI_Aint) * (size_t)nranks * (size_t)nelems);
    MPI_Allgather(local + 1, nelems, MPI_AINT, elem_addr, nelems, MPI_AINT, MPI_COMM_WORLD);
    MPI_Aint head_addr = local[0];
    MPI_Bcast(&head_addr, 1, MPI_AINT, 0, MPI_COMM_WORLD);
    free(local);
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = MPI_Wtime();
    /* The head is pointer "rank 0, index -1": its next word is mine[0]->next on rank 0. */
    const MPI_Aint head_next = head_addr + (MPI_Aint)offsetof(elem, next);
    const MPI_Aint counter = head_addr + (MPI_Aint)offsetof(elem, value);
    llptr tail = NIL; /* NIL: the head */
    long lost = 0, polls = 0;
    for (int i = 0; i < nelems; i++) {
        check_where("append %d", i);
        mine[i + 1]->value = (int64_t)rank * nelems + i + 1;
        mine[i + 1]->next = NIL;
        const llptr me = make_ptr(rank, i);
        for (;;) {
            const int owner = tail == NIL ? 0 : ptr_rank(tail);
            const MPI_Aint at = tail == NIL ? head_next : next_disp(tail);
            llptr nil = NIL, result = NIL;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, owner, MPI_MODE_NOCHECK, win));
            CHECK_MPI(MPI_Compare_and_swap(&me, &nil, &result, MPI_INT64_T, owner, at, win));
            CHECK_MPI(MPI_Win_unlock(owner, win));
            if (result == NIL) {
                tail = me;
                break;
            }
            /* Lost: the winner's element is the new tail. Follow it, then poll its
             * next pointer until it is the end or someone's later element. */
            ++lost;
            tail = result;
            llptr n;
            while ((n = read_next(tail)) != NIL) {
                tail = n;
                ++polls;
            }
        }
        static const int64_t one = 1;
        int64_t old = 0;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
        CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, counter, MPI_SUM, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    /* Poll rank 0's counter until every append is in. */
    const int64_t total = (int64_t)nranks * nelems;
    for (int64_t seen = 0; seen < total; ++polls) {
        check_where("poll the counter (%lld of %lld)", (long long)seen, (long long)total);
        int64_t dummy = 0;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
        CHECK_MPI(MPI_Fetch_and_op(&dummy, &seen, MPI_INT64_T, 0, counter, MPI_NO_OP, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    double elapsed = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        /* Walk the list: every element once. */
        check_where("walk the list");
        char *seen = calloc((size_t)total, 1);
        long length = 0;
        llptr p = mine[0]->next;
        while (p != NIL && length <= total) {
            elem e;
            const int owner = ptr_rank(p);
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, owner, 0, win));
            CHECK_MPI(MPI_Get(&e, sizeof e, MPI_BYTE, owner,
                              elem_addr[(size_t)owner * (size_t)nelems + (size_t)ptr_idx(p)], sizeof e,
                              MPI_BYTE, win));
            CHECK_MPI(MPI_Win_unlock(owner, win));
            const int64_t expect = (int64_t)owner * nelems + ptr_idx(p) + 1;
            if (CHECK(e.value == expect, "element (%d, %d) holds %lld, expected %lld", owner, ptr_idx(p),
                      (long long)e.value, (long long)expect) &&
                CHECK(!seen[expect - 1], "element (%d, %d) is in the list twice", owner, ptr_idx(p)))
                seen[expect - 1] = 1;
            ++length;
            p = e.next;
        }
        CHECK(length == total, "the list has %ld elements, expected %lld", length, (long long)total);
        CHECK(mine[0]->value == total, "the counter is %lld, expected %lld", (long long)mine[0]->value,
              (long long)total);
        free(seen);
    }
    double slowest = 0;
    long all_lost = 0, all_polls = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&lost, &all_lost, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&polls, &all_polls, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("linked_list: %d processes x %d elements in %.4f s (%ld lost races, %ld polls)\n", nranks,
               nelems, slowest, all_lost, all_polls);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i <= nelems; i++) {
        MPI_Win_detach(win, mine[i]);
    }
    MPI_Win_free(&win);
    for (int i = 0; i <= nelems; i++) free(mine[i]);
    free(mine);
    free(elem_addr);
    return check_finish();
}
