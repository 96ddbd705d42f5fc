/*
 * win_lock_stress: mixed shared / exclusive passive-target locking under
 * contention must never lose an update or expose a half-written record.
 *
 * A record is RECORD_WORDS int64 words that always all hold the same value.
 * Writers take MPI_LOCK_EXCLUSIVE, get the record, flush, and write value+1
 * back in two halves with a flush in between: a reader that overlapped a
 * writer would see the halves differ.  Readers take MPI_LOCK_SHARED or
 * MPI_Win_lock_all, get the record and check that it is whole, that its
 * value never goes backwards across this rank's own observations, and that
 * it does not exceed the number of writes planned.
 *
 * Phase 0: every rank hammers the record on rank 0.
 * Phase 1: every rank hammers the record on its right neighbour and reads
 *          its own record under lock_all (contending with its left
 *          neighbour's exclusive locks).
 * Which operation each rank does at each step is a fixed pseudo-random
 * schedule, so every rank knows the exact final value of every record.
 * Runs once per window flavor (create, allocate).  (Open MPI 4.1.4's
 * osc/rdma cannot MPI_Win_create on one process: np 1 reports that.)
 */
#include "check.h"

#include <stdlib.h>

#define RECORD_WORDS 16
#define HALF (RECORD_WORDS / 2)
#define ITERS 100 /* operations per rank per phase */
#define NPHASES 2

enum flavor { FLAVOR_CREATE, FLAVOR_ALLOCATE, NFLAVORS };
static const char *const flavor_names[] = {"create", "allocate"};

enum op { OP_WRITE, OP_READ_LOCK, OP_READ_LOCK_ALL, NOPS };

typedef struct {
    const char *flavor;
    MPI_Win win;
    int64_t *base; /* one record per phase */
    void *mem;
    int rank, n;
    int64_t *last_seen; /* per target: highest value this rank observed */
} stress;

static enum op schedule(int phase, int rank, int iter)
{
    return (enum op)(pattern_seed((uint32_t)phase, (uint32_t)rank, (uint32_t)iter, 0x5eed) % NOPS);
}

static int64_t planned_writes(int phase, int rank)
{
    int64_t count = 0;
    for (int i = 0; i < ITERS; i++) count += schedule(phase, rank, i) == OP_WRITE;
    return count;
}

/* Where a rank's writes go in a phase. */
static int write_target(const stress *s, int phase, int rank)
{
    return phase == 0 ? 0 : (rank + 1) % s->n;
}

/* Exact final value of the phase's record on rank t. */
static int64_t final_value(const stress *s, int phase, int t)
{
    int64_t total = 0;
    for (int r = 0; r < s->n; r++)
        if (write_target(s, phase, r) == t) total += planned_writes(phase, r);
    return total;
}

static MPI_Aint record_disp(int phase)
{
    return (MPI_Aint)phase * RECORD_WORDS;
}

/* Index of the first word differing from word 0, or RECORD_WORDS. */
static int torn_at(const int64_t *rec)
{
    for (int i = 1; i < RECORD_WORDS; i++)
        if (rec[i] != rec[0]) return i;
    return RECORD_WORDS;
}

/*
 * Gets the phase's record from t (the caller holds a lock covering t) and
 * checks it is whole and consistent with what this rank saw before.
 * `pending` is 1 for a writer (its own write is still to come, so the
 * value must be below the final one) and 0 for a reader.
 */
static int64_t observe(stress *s, int phase, int t, int pending, const char *how)
{
    int64_t rec[RECORD_WORDS];
    memset(rec, 0xEE, sizeof rec);
    CHECK_MPI(
        MPI_Get(rec, RECORD_WORDS, MPI_INT64_T, t, record_disp(phase), RECORD_WORDS, MPI_INT64_T, s->win));
    CHECK_MPI(MPI_Win_flush(t, s->win));
    int torn = torn_at(rec);
    CHECK(torn == RECORD_WORDS, "%s phase %d: record on %d torn under %s: word 0 = %lld, word %d = %lld",
          s->flavor, phase, t, how, (long long)rec[0], torn, (long long)rec[torn % RECORD_WORDS]);
    int64_t max = final_value(s, phase, t) - pending;
    CHECK(rec[0] >= s->last_seen[t] && rec[0] <= max,
          "%s phase %d: record on %d read %lld under %s, earlier saw %lld, max %lld", s->flavor, phase, t,
          (long long)rec[0], how, (long long)s->last_seen[t], (long long)max);
    if (rec[0] > s->last_seen[t]) s->last_seen[t] = rec[0];
    return rec[0];
}

/* Read-modify-write under an exclusive lock, written in two halves. */
static void do_write(stress *s, int phase, int t)
{
    int64_t next[RECORD_WORDS];
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, s->win));
    int64_t v = observe(s, phase, t, 1, "an exclusive lock");
    for (int i = 0; i < RECORD_WORDS; i++) next[i] = v + 1;
    CHECK_MPI(MPI_Put(next, HALF, MPI_INT64_T, t, record_disp(phase), HALF, MPI_INT64_T, s->win));
    CHECK_MPI(MPI_Win_flush(t, s->win));
    CHECK_MPI(
        MPI_Put(next + HALF, HALF, MPI_INT64_T, t, record_disp(phase) + HALF, HALF, MPI_INT64_T, s->win));
    CHECK_MPI(MPI_Win_unlock(t, s->win));
    s->last_seen[t] = v + 1; /* our own write: nothing older may show up */
}

static void do_read(stress *s, int phase, int t, bool lock_all)
{
    if (lock_all) {
        CHECK_MPI(MPI_Win_lock_all(0, s->win));
        observe(s, phase, t, 0, "lock_all");
        CHECK_MPI(MPI_Win_unlock_all(s->win));
    } else {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, s->win));
        observe(s, phase, t, 0, "a shared lock");
        CHECK_MPI(MPI_Win_unlock(t, s->win));
    }
}

/* After everyone is done, every record holds exactly the planned count,
 * seen both remotely (get) and in the owner's local memory. */
static void check_final(stress *s, int phase)
{
    int t = write_target(s, phase, s->rank);
    int64_t rec[RECORD_WORDS];
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, s->win));
    CHECK_MPI(
        MPI_Get(rec, RECORD_WORDS, MPI_INT64_T, t, record_disp(phase), RECORD_WORDS, MPI_INT64_T, s->win));
    CHECK_MPI(MPI_Win_unlock(t, s->win));
    int64_t want = final_value(s, phase, t);
    CHECK(torn_at(rec) == RECORD_WORDS && rec[0] == want,
          "%s phase %d: final record on %d is %lld..%lld, expected %lld", s->flavor, phase, t,
          (long long)rec[0], (long long)rec[RECORD_WORDS - 1], (long long)want);

    want = final_value(s, phase, s->rank);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, s->rank, 0, s->win));
    const int64_t *mine = s->base + record_disp(phase);
    CHECK(torn_at(mine) == RECORD_WORDS && mine[0] == want,
          "%s phase %d: own record in local memory is %lld..%lld, expected %lld", s->flavor, phase,
          (long long)mine[0], (long long)mine[RECORD_WORDS - 1], (long long)want);
    CHECK_MPI(MPI_Win_unlock(s->rank, s->win));
}

static void run_phase(stress *s, int phase)
{
    int t = write_target(s, phase, s->rank);
    for (int i = 0; i < s->n; i++) s->last_seen[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < ITERS; i++) {
        switch (schedule(phase, s->rank, i)) {
        case OP_WRITE: do_write(s, phase, t); break;
        case OP_READ_LOCK: do_read(s, phase, t, false); break;
        default:
            /* Phase 1 reads its own record here, against the left's writes. */
            do_read(s, phase, phase == 0 ? t : s->rank, true);
            break;
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    check_final(s, phase);
}

static void stress_flavor(int flavor)
{
    stress s = {.flavor = flavor_names[flavor]};
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.n);
    MPI_Aint bytes = NPHASES * RECORD_WORDS * (MPI_Aint)sizeof(int64_t);
    int rc;
    if (flavor == FLAVOR_CREATE) {
        s.mem = calloc(1, (size_t)bytes);
        s.base = s.mem;
        rc = MPI_Win_create(s.base, bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &s.win);
    } else {
        rc = MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &s.base, &s.win);
        if (rc == MPI_SUCCESS) memset(s.base, 0, (size_t)bytes);
    }
    if (!CHECK(rc == MPI_SUCCESS, "%s: window creation failed, class %s", s.flavor,
               check_class_name(check_error_class(rc)))) {
        free(s.mem);
        return;
    }
    MPI_Win_set_errhandler(s.win, MPI_ERRORS_RETURN);
    s.last_seen = calloc((size_t)s.n, sizeof *s.last_seen);

    for (int phase = 0; phase < NPHASES; phase++) run_phase(&s, phase);

    CHECK_MPI(MPI_Win_free(&s.win));
    free(s.last_seen);
    free(s.mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    /* A window that cannot be created is a reported failure, not an abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int f = 0; f < NFLAVORS; f++) stress_flavor(f);
    return check_finish();
}
