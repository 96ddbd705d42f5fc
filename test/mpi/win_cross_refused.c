/*
 * win_cross_refused: puts and gets to on-node MPI_Win_create windows (with "dynamic":
 * dynamic windows, each rank's memory attached) where the kernel refuses cross-memory
 * attach (engine/route.cpp, cross_verify). Every process makes
 * itself non-dumpable and gives up CAP_SYS_PTRACE before creating the window, as a
 * hardened system's processes are, so process_vm_readv / process_vm_writev fail with
 * EPERM. The calls must then go through the provider and move the right bytes, one
 * block and a derived datatype of large pieces (the kind cross-memory attach would
 * take), to and from every other rank; and the osc_fabric_cross_memory_rma counter
 * must not have moved (read with MPI_T where the component has it).
 *
 * Without the refusal the same program would count cross-memory copies: the pvar
 * check is what tells that the fallback, not the road itself, moved the bytes.
 *   win_cross_refused [dynamic]
 */
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <stdlib.h>

#include "check.h"

enum { PIECE = 4096, PIECES = 16, BYTES = 3 * PIECE * PIECES };

/* No ptrace over us, and none by us: what makes the kernel refuse cross-memory attach
 * to a process of the same user, root included. */
static void refuse_ptrace(void)
{
    CHECK(0 == prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE, 0)");
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct caps[2];
    if (0 == syscall(SYS_capget, &hdr, caps)) {
        caps[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
        CHECK(0 == syscall(SYS_capset, &hdr, caps), "capset without CAP_SYS_PTRACE");
    }
}

/* The cross-memory counter, read through MPI_T. Open MPI reports a counter's change
 * since its handle was made, so the handle is made before the calls it counts. */
typedef struct {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    int found;
} cross_counter;

static void cross_counter_open(cross_counter *c)
{
    int idx, count;
    c->found =
        MPI_SUCCESS == MPI_T_pvar_get_index("osc_fabric_cross_memory_rma", MPI_T_PVAR_CLASS_COUNTER, &idx) &&
        MPI_SUCCESS == MPI_T_pvar_session_create(&c->session);
    if (c->found && MPI_SUCCESS != MPI_T_pvar_handle_alloc(c->session, idx, NULL, &c->handle, &count)) {
        MPI_T_pvar_session_free(&c->session);
        c->found = 0;
    }
}

/* Its change since cross_counter_open, or -1 without such a counter. */
static long long cross_counter_close(cross_counter *c)
{
    if (!c->found) return -1;
    unsigned long long value = 0;
    CHECK_MPI(MPI_T_pvar_read(c->session, c->handle, &value));
    MPI_T_pvar_handle_free(c->session, &c->handle);
    MPI_T_pvar_session_free(&c->session);
    return (long long)value;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    refuse_ptrace();
    const int dynamic = argc > 1 && 0 == strcmp(argv[1], "dynamic");

    unsigned char *mem = malloc(BYTES), *src = malloc(BYTES), *back = malloc(BYTES);
    MPI_Win win;
    MPI_Aint *at = calloc((size_t)size, sizeof *at); /* each rank's displacement 0 */
    if (dynamic) {
        CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        CHECK_MPI(MPI_Win_attach(win, mem, BYTES));
        MPI_Aint mine;
        MPI_Get_address(mem, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, at, 1, MPI_AINT, MPI_COMM_WORLD);
    } else {
        CHECK_MPI(MPI_Win_create(mem, BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    MPI_Datatype strided; /* PIECES pieces of PIECE bytes, every third one */
    MPI_Type_vector(PIECES, PIECE, 3 * PIECE, MPI_BYTE, &strided);
    MPI_Type_commit(&strided);
    cross_counter counter;
    cross_counter_open(&counter);

    for (int shift = 1; shift < size; shift++) {
        const int to = (rank + shift) % size, from = (rank + size - shift) % size;
        memset(mem, 0, BYTES);
        pattern_fill(src, BYTES, pattern_seed(1, (uint32_t)rank, (uint32_t)shift, 0));
        MPI_Barrier(MPI_COMM_WORLD);
        /* One block at 0, the strided pieces from PIECE on. */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win);
        CHECK_MPI(MPI_Put(src, PIECE, MPI_BYTE, to, at[to], PIECE, MPI_BYTE, win));
        CHECK_MPI(MPI_Put(src + PIECE, PIECES * PIECE, MPI_BYTE, to, at[to] + PIECE, 1, strided, win));
        MPI_Win_unlock(to, win);
        MPI_Barrier(MPI_COMM_WORLD);

        /* What `from` put here. */
        unsigned char *want = malloc(BYTES);
        pattern_fill(want, BYTES, pattern_seed(1, (uint32_t)from, (uint32_t)shift, 0));
        CHECK(0 == memcmp(mem, want, PIECE), "the block from rank %d", from);
        for (int k = 0; k < PIECES; k++) {
            const unsigned char *piece = mem + PIECE + 3 * PIECE * k;
            CHECK(0 == memcmp(piece, want + PIECE + (size_t)PIECE * k, PIECE), "piece %d from rank %d", k,
                  from);
            const size_t gap = k + 1 < PIECES ? 2 * PIECE : 0; /* the last piece ends the window */
            const size_t bad = fill_mismatch(piece + PIECE, gap, 0);
            CHECK(bad == gap, "the gap after piece %d from rank %d: byte %zu is not 0", k, from, bad);
        }
        free(want);

        /* And read back what we put at `to`, both ways. */
        memset(back, 0, BYTES);
        MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win);
        CHECK_MPI(MPI_Get(back, PIECE, MPI_BYTE, to, at[to], PIECE, MPI_BYTE, win));
        CHECK_MPI(MPI_Get(back + PIECE, PIECES * PIECE, MPI_BYTE, to, at[to] + PIECE, 1, strided, win));
        MPI_Win_unlock(to, win);
        CHECK(0 == memcmp(back, src, PIECE + (size_t)PIECES * PIECE), "read back from rank %d", to);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    const long long crossed = cross_counter_close(&counter);
    CHECK(crossed >= 0, "no MPI_T counter osc_fabric_cross_memory_rma (is osc/fabric serving the window?)");
    if (crossed >= 0)
        CHECK(crossed == 0, "%lld cross-memory copies although the kernel refuses them", crossed);
    MPI_Type_free(&strided);
    if (dynamic) CHECK_MPI(MPI_Win_detach(win, mem));
    MPI_Win_free(&win);
    free(at);
    free(mem);
    free(src);
    free(back);
    MPI_T_finalize();
    return check_finish();
}
