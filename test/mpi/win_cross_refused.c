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
 *
 * "late" refuses only after the window exists, as a process that drops privileges
 * once set up does. The engine chose its roads while the kernel still allowed the
 * copies, and libfabric's shm (1.17) then reports its refused copy as a failure that
 * names no operation. Each call must then either move the right bytes or return an
 * error (the window's handler is MPI_ERRORS_RETURN), the request-based put's MPI_Wait
 * included; none may wait for ever (the watchdog), and the window must still be freed.
 *   win_cross_refused [create|dynamic] [late]
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

/* "late": after the first error this rank makes no more RMA calls but those that close
 * what it opened (CLOSE) and MPI_Win_free, since what an error leaves behind is
 * unspecified; the class of each error is told. Otherwise every call must succeed. */
static int late, failed;

static int rma_ok(int rc, const char *call)
{
    if (rc == MPI_SUCCESS) return !failed;
    if (!late) return CHECK(0, "%s: %s", call, check_class_name(check_error_class(rc)));
    printf("rank %d: %s returned %s\n", check_world_rank(), call, check_class_name(check_error_class(rc)));
    failed = 1;
    return 0;
}
#define CLOSE(call) (check_entering(#call, __FILE__, __LINE__), rma_ok((call), #call))
#define RMA(call) (!failed && CLOSE(call))

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int dynamic = argc > 1 && 0 == strcmp(argv[1], "dynamic");
    late = argc > 2 && 0 == strcmp(argv[2], "late");
    if (!late) refuse_ptrace();

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
    if (late) {
        CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        refuse_ptrace();
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
        /* One block at 0 (by request: its wait must end too), the strided pieces from
         * PIECE on. */
        MPI_Request req;
        int lock_ok = RMA(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win));
        int put_ok = lock_ok && RMA(MPI_Rput(src, PIECE, MPI_BYTE, to, at[to], PIECE, MPI_BYTE, win, &req)) &&
                     RMA(MPI_Wait(&req, MPI_STATUS_IGNORE));
        put_ok = put_ok &&
                 RMA(MPI_Put(src + PIECE, PIECES * PIECE, MPI_BYTE, to, at[to] + PIECE, 1, strided, win));
        if (lock_ok) put_ok = CLOSE(MPI_Win_unlock(to, win)) && put_ok;
        /* Whether `from` got its bytes here. */
        int from_ok = 0;
        MPI_Sendrecv(&put_ok, 1, MPI_INT, to, 0, &from_ok, 1, MPI_INT, from, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);

        /* What `from` put here. */
        unsigned char *want = malloc(BYTES);
        pattern_fill(want, BYTES, pattern_seed(1, (uint32_t)from, (uint32_t)shift, 0));
        if (from_ok) CHECK(0 == memcmp(mem, want, PIECE), "the block from rank %d", from);
        for (int k = 0; from_ok && k < PIECES; k++) {
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
        lock_ok = RMA(MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win));
        int get_ok =
            lock_ok && RMA(MPI_Get(back, PIECE, MPI_BYTE, to, at[to], PIECE, MPI_BYTE, win)) &&
            RMA(MPI_Get(back + PIECE, PIECES * PIECE, MPI_BYTE, to, at[to] + PIECE, 1, strided, win));
        if (lock_ok) get_ok = CLOSE(MPI_Win_unlock(to, win)) && get_ok;
        if (get_ok)
            CHECK(0 == memcmp(back, src, PIECE + (size_t)PIECES * PIECE), "read back from rank %d", to);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    const long long crossed = cross_counter_close(&counter);
    CHECK(crossed >= 0, "no MPI_T counter osc_fabric_cross_memory_rma (is osc/fabric serving the window?)");
    if (crossed >= 0 && !late)
        CHECK(crossed == 0, "%lld cross-memory copies although the kernel refuses them", crossed);
    MPI_Type_free(&strided);
    if (dynamic) CLOSE(MPI_Win_detach(win, mem));
    /* Freed even after a failure, which it may report again; Open MPI then keeps the
     * handle, whose module is gone. */
    if (CLOSE(MPI_Win_free(&win))) CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");
    free(at);
    free(mem);
    free(src);
    free(back);
    MPI_T_finalize();
    return check_finish();
}
