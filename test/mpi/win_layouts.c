/*
 * win_layouts: puts and gets whose target datatype has a shape the layout walk must
 * follow exactly (nested loops, negative strides and lower bounds, structs with holes,
 * pair types, contiguous loops, a vector large enough for the rendezvous, tiles of an
 * indexed type, long blocks with small gaps, and a vector of whole cache lines and a
 * block each larger than the cache, which on one node are written round it), each rank
 * to its right neighbour inside a fence epoch. Over the network the target's layout
 * travels as runs built from Open MPI's description of the datatype
 * (mpi/osc_fabric_datatype.c); on one node it is a datatype copy
 * (ompi_osc_fabric_copy_layout). Either way
 * every byte of the target window must equal what MPI_Unpack of the same bytes with
 * the same datatype gives (gaps untouched), and a get with the datatype must bring back
 * exactly the bytes put.
 *
 * Then each shape describes the origin's buffer and the target is plain bytes (over
 * the network the origin packs, and from 64 KiB moves the block by RMA itself), in a
 * fence, a lock (request-based for every other shape) and a PSCW epoch: the window must hold
 * MPI_Pack's bytes, and a get must leave the origin's buffer as MPI_Unpack would.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { WIN_BYTES = 16 << 20, FILL = 0xEE, AT = 96 /* where the plain bytes go */ };

typedef struct {
    const char *name;
    MPI_Datatype type;
    int count;
    MPI_Aint disp; /* bytes into the window of the type's origin (room for a negative lb) */
} shape;

static int make_shapes(shape *s)
{
    int n = 0;
    MPI_Datatype t, inner;

    int sizes[3] = {10, 12, 14}, subs[3] = {3, 4, 5}, starts[3] = {1, 2, 3};
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    s[n++] = (shape){"subarray of double", t, 2, 0};

    MPI_Type_create_hvector(200, 3, -40, MPI_INT, &t); /* blocks going down in memory */
    s[n++] = (shape){"vector, negative stride", t, 2, 200 * 40};

    const int sb[3] = {1, 2, 5};
    const MPI_Aint sd[3] = {0, 8, 24};
    const MPI_Datatype st[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, sb, sd, st, &t); /* holes after the int and the chars */
    s[n++] = (shape){"struct with holes", t, 9, 0};

    const int hb[3] = {2, 1, 3};
    const MPI_Aint hd[3] = {0, 40, 100};
    MPI_Type_create_hindexed(3, hb, hd, MPI_SHORT_INT, &t);
    s[n++] = (shape){"hindexed of MPI_SHORT_INT", t, 4, 0};

    const int ib[3] = {2, 1, 3}, id[3] = {0, 5, 9};
    MPI_Type_indexed(3, ib, id, MPI_DOUBLE, &inner);
    MPI_Type_create_resized(inner, -16, 200, &t); /* a lower bound below the first byte */
    MPI_Type_free(&inner);
    s[n++] = (shape){"resized, negative lb", t, 3, 64};

    MPI_Type_contiguous(5, MPI_DOUBLE, &inner);
    MPI_Type_vector(100, 1, 3, inner, &t); /* a loop whose body is contiguous */
    MPI_Type_free(&inner);
    s[n++] = (shape){"vector of contiguous blocks", t, 1, 0};

    MPI_Type_vector(16384, 16, 32, MPI_INT, &t); /* 1 MiB of data: the rendezvous */
    s[n++] = (shape){"large vector", t, 1, 0};

    /* osc_ddt_random's kind: tiles of an indexed type, resized to leave gaps. */
    int tb[64], td[64], at = 0;
    for (int b = 0; b < 64; b++) {
        tb[b] = 1 + (b * 7) % 5;
        td[b] = at;
        at += tb[b] + (b % 3);
    }
    MPI_Type_indexed(64, tb, td, MPI_INT, &inner);
    MPI_Datatype tile;
    MPI_Type_create_resized(inner, 0, (MPI_Aint)(at + 4) * 4, &tile);
    MPI_Type_free(&inner);
    MPI_Type_contiguous(300, tile, &t);
    MPI_Type_free(&tile);
    s[n++] = (shape){"tiles of an indexed type", t, 2, 0};

    /* Ten loops inside each other, each stride its own: more than the walk's inline
     * frames (ompi_osc_fabric_walk), and 128 KiB of data, so over the network the runs
     * are handed to the rendezvous a batch at a time (oscf_win_put_streamed and
     * oscf_win_get_streamed). */
    MPI_Type_dup(MPI_INT, &t);
    MPI_Aint span = 4;
    for (int level = 0; level < 10; level++) {
        MPI_Type_create_hvector(2, 1, span + 4 + 4 * level, t, &inner);
        span = 2 * span + 4 + 4 * level;
        MPI_Type_free(&t);
        t = inner;
    }
    s[n++] = (shape){"ten nested vectors", t, 32, 0};

    /* Two long blocks a few bytes apart (rma_random seed 110 at 3 ranks): Open MPI 4.1.4's
     * ompi_datatype_sndrcv stopped copying such a layout after its first 64 KiB. */
    MPI_Type_vector(1, 4702, 4704, MPI_UNSIGNED_LONG, &inner);
    MPI_Type_create_resized(inner, 0, 37640, &t);
    MPI_Type_free(&inner);
    s[n++] = (shape){"two blocks of a resized vector", t, 2, 0};

    /* Past OSCF_UNCACHED_COPY_BYTES (engine.h): 64-byte pieces a line apart, on the
     * window's lines, and a block starting and ending off a line. Over the network the
     * vector's 7 MiB are more rendezvous chunks than a put holds slots at once
     * (kSlotsInFlight, engine/staging_pool.h), so it waits for answers to reuse them. */
    MPI_Type_vector(7 << 14, 16, 32, MPI_INT, &t);
    s[n++] = (shape){"vector of lines past the cache", t, 1, 0};
    MPI_Type_contiguous((5 << 20) + 3, MPI_BYTE, &t);
    s[n++] = (shape){"block past the cache", t, 1, 5};

    for (int i = 0; i < n; i++) MPI_Type_commit(&s[i].type);
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 120, &rank, &size); /* MPI_Init, then a watchdog (check.h) */
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    unsigned char *mem;
    MPI_Win win;
    MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    /* On cache lines, as the window is, so that gets into them can be written round the
     * cache too. */
    unsigned char *data = aligned_alloc(64, WIN_BYTES), *want = aligned_alloc(64, WIN_BYTES),
                  *back = aligned_alloc(64, WIN_BYTES);
    CHECK(data && want && back, "out of memory");

    shape shapes[16];
    const int nshapes = make_shapes(shapes);
    for (int round = 0; round < nshapes; round++) {
        const shape *sh = &shapes[round];
        int type_size;
        MPI_Aint lb, extent, true_lb, true_extent;
        MPI_Type_size(sh->type, &type_size);
        MPI_Type_get_extent(sh->type, &lb, &extent);
        MPI_Type_get_true_extent(sh->type, &true_lb, &true_extent);
        const long bytes = (long)type_size * sh->count;
        const MPI_Aint span_end = sh->disp + true_lb + (sh->count - 1) * extent + true_extent;
        CHECK(sh->disp + true_lb >= 0 && span_end <= WIN_BYTES, "%s: the layout does not fit the window",
              sh->name);

        /* What the left neighbour puts here, and what the window must then hold. */
        pattern_fill(data, (size_t)bytes, pattern_seed((uint32_t)round, (uint32_t)left, 0, 0));
        memset(want, FILL, WIN_BYTES);
        int pos = 0;
        MPI_Unpack(data, (int)bytes, &pos, want + sh->disp, sh->count, sh->type, MPI_COMM_SELF);
        /* And what this rank puts to the right. */
        pattern_fill(data, (size_t)bytes, pattern_seed((uint32_t)round, (uint32_t)rank, 0, 0));

        memset(mem, FILL, WIN_BYTES);
        CHECK_MPI(MPI_Win_fence(0, win));
        check_where("%s: put", sh->name);
        CHECK_MPI(MPI_Put(data, (int)bytes, MPI_BYTE, right, sh->disp, sh->count, sh->type, win));
        CHECK_MPI(MPI_Win_fence(0, win));
        long wrong = 0, first = -1;
        for (long k = 0; k < WIN_BYTES; k++)
            if (mem[k] != want[k] && wrong++ == 0) first = k;
        CHECK(wrong == 0, "%s: %ld window bytes differ from MPI_Unpack's, the first at %ld (%d, want %d)",
              sh->name, wrong, first, first >= 0 ? mem[first] : 0, first >= 0 ? want[first] : 0);

        /* Every rank's window now holds its left neighbour's data: get it back. */
        memset(back, 0, (size_t)bytes);
        check_where("%s: get", sh->name);
        CHECK_MPI(MPI_Get(back, (int)bytes, MPI_BYTE, right, sh->disp, sh->count, sh->type, win));
        CHECK_MPI(MPI_Win_fence(0, win));
        wrong = 0;
        for (long k = 0; k < bytes; k++) wrong += back[k] != data[k];
        CHECK(wrong == 0, "%s: %ld of %ld bytes got back differ from those put", sh->name, wrong, bytes);
    }

    MPI_Group world, left_group, right_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &left_group);
    MPI_Group_incl(world, 1, &right, &right_group);
    const char *sync_names[3] = {"fence", "lock", "pscw"};
    for (int step = 0; step < 3 * nshapes; step++) {
        const int round = step / 3, sync = step % 3;
        const shape *sh = &shapes[round];
        const bool requests = sync == 1 && round % 2 == 1;
        int type_size;
        MPI_Type_size(sh->type, &type_size);
        const long bytes = (long)type_size * sh->count;
        CHECK(AT + bytes <= WIN_BYTES, "%s: the bytes do not fit the window", sh->name);

        /* This rank's origin buffer, and what its right neighbour's window must hold. */
        pattern_fill(data, WIN_BYTES, pattern_seed((uint32_t)round, (uint32_t)rank, 1, 0));
        int pos = 0;
        MPI_Pack(data + sh->disp, sh->count, sh->type, want, WIN_BYTES, &pos, MPI_COMM_SELF);
        CHECK(pos == bytes, "%s: MPI_Pack gave %d bytes, want %ld", sh->name, pos, bytes);

        memset(mem, FILL, WIN_BYTES);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int get = 0; get < 2; get++) {
            check_where("%s: %s from a scattered origin, %s%s", sh->name, get ? "get" : "put",
                        sync_names[sync], requests ? ", request-based" : "");
            MPI_Request req = MPI_REQUEST_NULL;
            if (sync == 0) CHECK_MPI(MPI_Win_fence(0, win));
            if (sync == 1) CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
            if (sync == 2) {
                CHECK_MPI(MPI_Win_post(left_group, 0, win));
                CHECK_MPI(MPI_Win_start(right_group, 0, win));
            }
            if (get) {
                memset(back, FILL, WIN_BYTES);
                if (requests)
                    CHECK_MPI(MPI_Rget(back + sh->disp, sh->count, sh->type, right, AT, (int)bytes, MPI_BYTE,
                                       win, &req));
                else
                    CHECK_MPI(
                        MPI_Get(back + sh->disp, sh->count, sh->type, right, AT, (int)bytes, MPI_BYTE, win));
            } else if (requests) {
                CHECK_MPI(MPI_Rput(data + sh->disp, sh->count, sh->type, right, AT, (int)bytes, MPI_BYTE, win,
                                   &req));
            } else {
                CHECK_MPI(
                    MPI_Put(data + sh->disp, sh->count, sh->type, right, AT, (int)bytes, MPI_BYTE, win));
            }
            if (requests) CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            if (sync == 0) CHECK_MPI(MPI_Win_fence(0, win));
            if (sync == 1) CHECK_MPI(MPI_Win_unlock(right, win));
            if (sync == 2) {
                CHECK_MPI(MPI_Win_complete(win));
                CHECK_MPI(MPI_Win_wait(win));
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (!get) {
                /* The left neighbour's packed bytes, at AT, and nothing else touched. */
                unsigned char *theirs = back;
                pattern_fill(theirs, WIN_BYTES, pattern_seed((uint32_t)round, (uint32_t)left, 1, 0));
                unsigned char *packed = malloc((size_t)bytes);
                CHECK(packed, "out of memory");
                pos = 0;
                MPI_Pack(theirs + sh->disp, sh->count, sh->type, packed, (int)bytes, &pos, MPI_COMM_SELF);
                const size_t after = (size_t)(WIN_BYTES - AT - bytes);
                long wrong = (fill_mismatch(mem, AT, FILL) != AT) +
                             (fill_mismatch(mem + AT + bytes, after, FILL) != after);
                for (long k = 0; k < bytes; k++) wrong += mem[AT + k] != packed[k];
                CHECK(wrong == 0, "%s, %s: %ld window bytes differ from MPI_Pack's of the origin", sh->name,
                      sync_names[sync], wrong);
                free(packed);
            } else {
                /* Our own packed bytes, back in our layout over FILL. */
                memset(data, FILL, WIN_BYTES);
                pos = 0;
                MPI_Unpack(want, (int)bytes, &pos, data + sh->disp, sh->count, sh->type, MPI_COMM_SELF);
                long wrong = 0;
                for (long k = 0; k < WIN_BYTES; k++) wrong += back[k] != data[k];
                CHECK(wrong == 0, "%s, %s: %ld origin bytes differ from MPI_Unpack's after the get", sh->name,
                      sync_names[sync], wrong);
            }
        }
    }
    MPI_Group_free(&left_group);
    MPI_Group_free(&right_group);
    MPI_Group_free(&world);

    for (int i = 0; i < nshapes; i++) MPI_Type_free(&shapes[i].type);
    free(data);
    free(want);
    free(back);
    MPI_Win_free(&win);
    return check_finish();
}
