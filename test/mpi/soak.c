/*
 * soak: creates and frees windows of every flavor by the thousand, then runs random
 * RMA for a while, and checks that nothing accumulates: resident memory, open file
 * descriptors and osc/fabric's live memory registrations stay flat.
 *
 *   soak [-n WINDOWS] [-t SECONDS] [-w WARMUP] [-r MIB] [-s SEED]
 *
 * -n windows per flavor (default 10000): MPI_Win_create, MPI_Win_allocate,
 *    MPI_Win_allocate_shared (only when every rank is on one node) and
 *    MPI_Win_create_dynamic with an attach and a detach. Each window is really used
 *    (a put to the next rank, checked at the target after a fence or read back by the
 *    origin after a flush, alternately) before it is freed.
 * -t seconds of random RMA after the windows (default 0): puts, gets, accumulates,
 *    get_accumulates, fetch-and-ops and compare-and-swaps on an MPI_Win_allocate and a
 *    dynamic window, in fence epochs and lock_all epochs with flushes, all checked
 *    against a model of each origin's own part of every target.
 * -w windows of each flavor created before the measurements start (default 100).
 * -r allowed growth of resident memory after warm-up, in MiB (default 16).
 * -s seed of the random RMA (default 1).
 *
 * Samples (this rank: VmRSS from /proc/self/status, entries of /proc/self/fd, and the
 * MPI_T performance variables osc_fabric_registered_regions and _bytes) are taken
 * before anything, after the warm-up, at every quarter of every flavor, and every
 * second of the random RMA; rank 0 prints its own as a table (with windows per second,
 * or its operations per second in random RMA) and the largest growth seen on any rank.
 * Regions registered for local descriptors (FI_MR_LOCAL: osc_fabric_local_bytes), which
 * the registration cache keeps after use, are counted apart and may grow by at most -r.
 * Failures: registrations differing from the baseline at any sample, any sample with
 * more descriptors than the baseline, resident memory at the end more than -r above
 * the baseline. Under osc/fabric (OMPI_MCA_osc names it, as contrib/mpirun-fabric
 * sets) the two variables must exist and must count the windows that are alive.
 */
#include "check.h"

#include <dirent.h>
#include <stdlib.h>

#define DEFAULT_WINDOWS 10000
#define DEFAULT_WARMUP 100
/* Resident-memory allowance after warm-up. Memory that is not leaked still becomes
 * resident in steps: glibc keeps freed chunks, Open MPI's free lists grow in blocks and
 * never shrink, and preallocated buffers become resident page by page as first used.
 * The largest such step measured here: tcp;ofi_rxm opens its message CQ with (rx + tx
 * size) x FI_UNIVERSE_SIZE entries, a 12 MiB ring that completions walk through, so
 * RSS over tcp climbed about 450 bytes per window until the ring had gone round once
 * (about 27,000 windows, +12 MiB) and then stayed flat for 90,000 more. A leak grows
 * without end: a window's bookkeeping (module, communicator duplicate, peer tables,
 * registrations) is several KiB, so leaking a fifth of it per window over the default
 * 40,000 windows exceeds 16 MiB. */
#define DEFAULT_RSS_MIB 16
#define WIN_MIN_BYTES 4096
#define RAND_SLOTS 32 /* uint64 elements each origin owns at each target (random RMA) */
#define RAND_OPS 16   /* operations per rank per epoch (random RMA) */
#define RAND_MAXLEN 4 /* elements per operation at most */

enum { FL_CREATE, FL_ALLOCATE, FL_SHARED, FL_DYNAMIC, FL_N };
static const char *const fl_name[FL_N] = {"create", "allocate", "allocate_shared", "create_dynamic"};

static int rank, np;
static MPI_Comm comm;      /* MPI_COMM_WORLD's duplicate, errors returned */
static bool expect_fabric; /* osc/fabric serves the windows: its pvars must exist */

/* MUST and EXPECT record only failures: a soak makes millions of calls and checks, and
 * the passes counted are the summaries (per flavor, per sample, per final read-back). */
static bool must_at(int rc, const char *what, const char *file, int line)
{
    return rc == MPI_SUCCESS || check_rc_at(rc, what, file, line);
}
#define MUST(call) must_at((call), #call, __FILE__, __LINE__)
static bool expect_at(bool ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool expect_at(bool ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) return true;
    va_list ap;
    va_start(ap, fmt);
    check_vrecord(false, file, line, fmt, ap);
    va_end(ap);
    return false;
}
#define EXPECT(cond, ...) expect_at((cond), __FILE__, __LINE__, __VA_ARGS__)

/* ---- measurements ---------------------------------------------------------------- */

typedef struct {
    long rss_kib;
    long fds;
    unsigned long long regions, bytes;
    unsigned long long local_bytes; /* regions for local descriptors (FI_MR_LOCAL) */
} sample;

static struct {
    bool tool, session_ok, ok; /* MPI_T initialized, session created, both found */
    bool local_ok;             /* osc_fabric_local_bytes found too */
    MPI_T_pvar_session session;
    MPI_T_pvar_handle regions, bytes, local_bytes;
} pv;

/* Where the provider demands FI_MR_LOCAL, the registration cache keeps regions of user
 * memory after use; they may grow only with memory the process has: by at most the
 * resident-memory allowance (-r). */
static long long local_bound_bytes;

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

/* Open descriptors, not counting the one that reads the directory. */
static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    long n = 0;
    const struct dirent *e;
    char self[32];
    snprintf(self, sizeof self, "%d", dirfd(d));
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strcmp(e->d_name, self) != 0) n++;
    closedir(d);
    return n;
}

/* Finds one of the engine's level variables; false if absent or not as registered. */
static bool pvar_open(const char *name, MPI_T_pvar_handle *h)
{
    int idx, count;
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_LEVEL, &idx) != MPI_SUCCESS) return false;
    char got[128], desc[256];
    int name_len = sizeof got, desc_len = sizeof desc;
    int verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (MPI_T_pvar_get_info(idx, got, &name_len, &verbosity, &var_class, &type, &enumtype, desc, &desc_len,
                            &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS)
        return false;
    if (!CHECK(type == MPI_UNSIGNED_LONG_LONG && readonly && continuous && bind == MPI_T_BIND_NO_OBJECT,
               "MPI_T variable %s: not a read-only continuous unsigned long long", name))
        return false;
    return MPI_T_pvar_handle_alloc(pv.session, idx, NULL, h, &count) == MPI_SUCCESS && count == 1;
}

static void pvars_init(void)
{
    int provided;
    pv.tool = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS;
    pv.session_ok = pv.tool && MPI_T_pvar_session_create(&pv.session) == MPI_SUCCESS;
    pv.ok = pv.session_ok && pvar_open("osc_fabric_registered_regions", &pv.regions) &&
            pvar_open("osc_fabric_registered_bytes", &pv.bytes);
    pv.local_ok = pv.ok && pvar_open("osc_fabric_local_bytes", &pv.local_bytes);
}

static void pvars_fini(void)
{
    if (pv.ok) {
        MPI_T_pvar_handle_free(pv.session, &pv.regions);
        MPI_T_pvar_handle_free(pv.session, &pv.bytes);
    }
    if (pv.local_ok) MPI_T_pvar_handle_free(pv.session, &pv.local_bytes);
    if (pv.session_ok) MPI_T_pvar_session_free(&pv.session);
    if (pv.tool) MPI_T_finalize();
}

static sample take_sample(void)
{
    sample s = {rss_kib(), open_fds(), 0, 0, 0};
    if (pv.ok) {
        MUST(MPI_T_pvar_read(pv.session, pv.regions, &s.regions));
        MUST(MPI_T_pvar_read(pv.session, pv.bytes, &s.bytes));
    }
    if (pv.local_ok) MUST(MPI_T_pvar_read(pv.session, pv.local_bytes, &s.local_bytes));
    return s;
}

static void print_header(void)
{
    if (rank != 0) return;
    printf("%-26s %10s %10s %6s %9s %12s %12s\n", "soak: rank 0 at", "per s", "RSS KiB", "fds", "regions",
           "reg bytes", "local bytes");
}

static void print_row(const char *label, double x, const sample *s)
{
    if (rank != 0) return;
    printf("%-26s %10.0f %10ld %6ld %9llu %12llu %12llu\n", label, x, s->rss_kib, s->fds, s->regions,
           s->bytes, s->local_bytes);
    fflush(stdout);
}

/* Flatness since base: registrations exactly, descriptors never above. */
static void check_flat(const char *label, const sample *base, const sample *s)
{
    CHECK(s->fds <= base->fds, "%s: %ld open descriptors, %ld after warm-up", label, s->fds, base->fds);
    CHECK(s->regions == base->regions && s->bytes == base->bytes,
          "%s: %llu registrations of %llu bytes, %llu of %llu after warm-up", label, s->regions, s->bytes,
          base->regions, base->bytes);
    CHECK((long long)s->local_bytes - (long long)base->local_bytes <= local_bound_bytes,
          "%s: %llu bytes registered for local descriptors, %llu after warm-up (allowed growth: %lld)", label,
          s->local_bytes, base->local_bytes, local_bound_bytes);
}

static void check_rss(const char *label, const sample *base, const sample *end, long bound_kib)
{
    CHECK(end->rss_kib >= 0 && end->rss_kib - base->rss_kib <= bound_kib,
          "%s: resident memory grew from %ld to %ld KiB (allowed: %ld KiB)", label, base->rss_kib,
          end->rss_kib, bound_kib);
}

/* Rank 0 prints the largest growth any rank saw between base and end. */
static void report_growth(const char *label, const sample *base, const sample *end)
{
    long long g[4] = {end->rss_kib - base->rss_kib, end->fds - base->fds,
                      (long long)end->regions - (long long)base->regions,
                      (long long)end->bytes - (long long)base->bytes};
    long long worst[4];
    MPI_Reduce(g, worst, 4, MPI_LONG_LONG, MPI_MAX, 0, comm);
    if (rank == 0) {
        printf(
            "soak: %s, largest growth on any rank: RSS %+lld KiB, fds %+lld, regions %+lld, "
            "registered bytes %+lld\n",
            label, worst[0], worst[1], worst[2], worst[3]);
        fflush(stdout);
    }
}

/* ---- windows by the thousand ----------------------------------------------------- */

static uint64_t tag(long i, int r)
{
    return ((uint64_t)(i + 1) << 24) ^ ((uint64_t)(r + 1) * 0x9e3779b97f4a7c15ull);
}

/* One window of the flavor, used and freed. With base, also checks that the window's
 * registrations show while it exists. Returns false when creation failed (agreed by
 * every rank, so nobody waits in a collective of a window that does not exist). The
 * window memory needs no initial contents: each check reads what this window's put
 * wrote. */
static bool one_window(int flavor, long i, const sample *base, MPI_Aint *addrs)
{
    const size_t bytes = (size_t)np * 8 > WIN_MIN_BYTES ? (size_t)np * 8 : WIN_MIN_BYTES;
    const int right = (rank + 1) % np, left = (rank + np - 1) % np;
    const bool fence = i % 2 == 0;
    MPI_Win win = MPI_WIN_NULL;
    uint64_t *mem = NULL;
    int rc;
    switch (flavor) {
    case FL_CREATE:
        mem = calloc(1, bytes);
        rc = MPI_Win_create(mem, (MPI_Aint)bytes, 8, MPI_INFO_NULL, comm, &win);
        break;
    case FL_ALLOCATE: rc = MPI_Win_allocate((MPI_Aint)bytes, 8, MPI_INFO_NULL, comm, &mem, &win); break;
    case FL_SHARED: rc = MPI_Win_allocate_shared((MPI_Aint)bytes, 8, MPI_INFO_NULL, comm, &mem, &win); break;
    default:
        rc = MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win);
        mem = calloc(1, bytes);
        if (rc == MPI_SUCCESS) {
            MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
            rc = MPI_Win_attach(win, mem, (MPI_Aint)bytes);
        }
        break;
    }
    int ok = rc == MPI_SUCCESS;
    if (!ok) check_rc_at(rc, fl_name[flavor], __FILE__, __LINE__);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        if (win != MPI_WIN_NULL) MPI_Win_free(&win);
        if (flavor == FL_CREATE || flavor == FL_DYNAMIC) free(mem);
        return false;
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    MPI_Aint disp = rank; /* the origin's slot, in units of 8 bytes */
    if (flavor == FL_DYNAMIC) {
        MPI_Aint mine;
        MPI_Get_address(mem, &mine);
        MUST(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, comm));
        disp = MPI_Aint_add(addrs[right], rank * 8);
    }
    if (base) {
        sample live = take_sample();
        CHECK(!expect_fabric || live.regions > base->regions,
              "%s: %llu registrations while a window is alive, %llu without", fl_name[flavor], live.regions,
              base->regions);
    }

    const uint64_t val = tag(i, rank);
    if (fence) {
        MUST(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        MUST(MPI_Put(&val, 1, MPI_UINT64_T, right, disp, 1, MPI_UINT64_T, win));
        MUST(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        EXPECT(mem[left] == tag(i, left),
               "%s window %ld: slot of rank %d holds %#llx, expected %#llx after the fence", fl_name[flavor],
               i, left, (unsigned long long)mem[left], (unsigned long long)tag(i, left));
        if (flavor == FL_SHARED) {
            MPI_Aint qsize;
            int qdu;
            uint64_t *q = NULL;
            MUST(MPI_Win_shared_query(win, right, &qsize, &qdu, &q));
            EXPECT(q && q[rank] == val,
                   "allocate_shared window %ld: rank %d's memory through "
                   "MPI_Win_shared_query does not hold the put",
                   i, right);
        }
    } else {
        uint64_t back = 0;
        MUST(MPI_Win_lock_all(0, win));
        MUST(MPI_Put(&val, 1, MPI_UINT64_T, right, disp, 1, MPI_UINT64_T, win));
        MUST(MPI_Win_flush(right, win));
        MUST(MPI_Get(&back, 1, MPI_UINT64_T, right, disp, 1, MPI_UINT64_T, win));
        MUST(MPI_Win_flush(right, win));
        MUST(MPI_Win_unlock_all(win));
        EXPECT(back == val, "%s window %ld: read back %#llx from rank %d, put %#llx", fl_name[flavor], i,
               (unsigned long long)back, right, (unsigned long long)val);
        /* Nobody detaches memory another rank may still be reading. */
        if (flavor == FL_DYNAMIC) MPI_Barrier(comm);
    }
    if (flavor == FL_DYNAMIC) MUST(MPI_Win_detach(win, mem));
    MUST(MPI_Win_free(&win));
    if (flavor == FL_CREATE || flavor == FL_DYNAMIC) free(mem);
    return true;
}

/* Returns how many windows were created and freed. */
static long run_flavor(int flavor, long n, const sample *base, MPI_Aint *addrs, long rss_bound_kib)
{
    char label[64];
    const double t0 = MPI_Wtime();
    const long failed_before = check_nfailed;
    long done = 0;
    for (int q = 1; q <= 4; q++) {
        long upto = n * q / 4;
        for (; done < upto; done++)
            if (!one_window(flavor, done, done == 0 ? base : NULL, addrs)) goto stop;
        sample s = take_sample();
        snprintf(label, sizeof label, "%s %ld", fl_name[flavor], done);
        print_row(label, done / (MPI_Wtime() - t0), &s);
        check_flat(label, base, &s);
        if (q == 4) check_rss(label, base, &s, rss_bound_kib);
    }
stop:
    CHECK(done == n && check_nfailed == failed_before,
          "%s: %ld of %ld windows created, used and freed, %ld failures on this rank", fl_name[flavor], done,
          n, check_nfailed - failed_before);
    return done;
}

/* ---- random RMA ------------------------------------------------------------------ */

static uint64_t rnd_state;
static uint64_t rnd(void)
{
    /* xorshift64* */
    rnd_state ^= rnd_state >> 12;
    rnd_state ^= rnd_state << 25;
    rnd_state ^= rnd_state >> 27;
    return rnd_state * 0x2545f4914f6cdd1dull;
}

enum { OP_PUT, OP_GET, OP_ACC, OP_GACC, OP_FOP, OP_CAS, OP_N };
static const char *const op_name[OP_N] = {
    "put", "get", "accumulate", "get_accumulate", "fetch_and_op", "compare_and_swap"};

/* Each target's window: RAND_SLOTS elements per origin, written only by that origin
 * (which therefore knows their values: the model), then one counter that every origin
 * increments. */
typedef struct {
    MPI_Win win;
    uint64_t *mem;
    bool dynamic;
    MPI_Aint *addrs;    /* dynamic: every rank's attached memory */
    uint64_t *model;    /* [target][RAND_SLOTS]: this origin's slots everywhere */
    uint64_t *counts;   /* [target]: counter increments this origin made */
    unsigned char *use; /* [target][RAND_SLOTS]: what a fence epoch did to a slot */
} rwin;

typedef struct {
    int op, target, k, len;
    uint64_t buf[RAND_MAXLEN], result[RAND_MAXLEN], expect[RAND_MAXLEN];
} rop;

static MPI_Aint elem_disp(const rwin *w, int t, long e)
{
    return w->dynamic ? MPI_Aint_add(w->addrs[t], e * 8) : e;
}

static long counter_elem(void)
{
    return (long)np * RAND_SLOTS;
}

static void rwin_create(rwin *w, bool dynamic)
{
    const size_t bytes = ((size_t)np * RAND_SLOTS + 1) * 8;
    const size_t slots = (size_t)np * RAND_SLOTS;
    memset(w, 0, sizeof *w);
    w->dynamic = dynamic;
    w->model = calloc(slots, 8);
    w->counts = calloc((size_t)np, 8);
    w->use = calloc(slots, 1);
    w->addrs = calloc((size_t)np, sizeof(MPI_Aint));
    /* Two long-lived windows: without them there is nothing to soak, so stop. */
    bool ok;
    if (dynamic) {
        w->mem = calloc(1, bytes);
        ok = MUST(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w->win)) &&
             MUST(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN)) &&
             MUST(MPI_Win_attach(w->win, w->mem, (MPI_Aint)bytes));
        MPI_Aint mine;
        MPI_Get_address(w->mem, &mine);
        MUST(MPI_Allgather(&mine, 1, MPI_AINT, w->addrs, 1, MPI_AINT, comm));
    } else {
        ok = MUST(MPI_Win_allocate((MPI_Aint)bytes, 8, MPI_INFO_NULL, comm, &w->mem, &w->win)) &&
             MUST(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
        if (ok) memset(w->mem, 0, bytes);
    }
    if (!ok) MPI_Abort(MPI_COMM_WORLD, 1);
    /* The zeroing above happens before anyone's first operation. */
    MPI_Barrier(comm);
}

static void rwin_free(rwin *w)
{
    if (w->dynamic) MUST(MPI_Win_detach(w->win, w->mem));
    MUST(MPI_Win_free(&w->win));
    if (w->dynamic) free(w->mem);
    free(w->model);
    free(w->counts);
    free(w->use);
    free(w->addrs);
}

/* Posts one operation on this origin's slots at o->target and updates the model as if
 * it completed; fetched values are checked after the epoch or a flush (rop_check). */
static void post_op(rwin *w, rop *o)
{
    uint64_t *m = w->model + (size_t)o->target * RAND_SLOTS + o->k;
    const MPI_Aint d = elem_disp(w, o->target, (long)rank * RAND_SLOTS + o->k);
    const int t = o->target, n = o->len;
    for (int j = 0; j < n; j++) {
        o->buf[j] = rnd();
        o->expect[j] = m[j];
        o->result[j] = ~m[j];
    }
    switch (o->op) {
    case OP_PUT:
        MUST(MPI_Put(o->buf, n, MPI_UINT64_T, t, d, n, MPI_UINT64_T, w->win));
        for (int j = 0; j < n; j++) m[j] = o->buf[j];
        break;
    case OP_GET: MUST(MPI_Get(o->result, n, MPI_UINT64_T, t, d, n, MPI_UINT64_T, w->win)); break;
    case OP_ACC:
        MUST(MPI_Accumulate(o->buf, n, MPI_UINT64_T, t, d, n, MPI_UINT64_T, MPI_SUM, w->win));
        for (int j = 0; j < n; j++) m[j] += o->buf[j];
        break;
    case OP_GACC:
        MUST(MPI_Get_accumulate(o->buf, n, MPI_UINT64_T, o->result, n, MPI_UINT64_T, t, d, n, MPI_UINT64_T,
                                MPI_BXOR, w->win));
        for (int j = 0; j < n; j++) m[j] ^= o->buf[j];
        break;
    case OP_FOP:
        MUST(MPI_Fetch_and_op(o->buf, o->result, MPI_UINT64_T, t, d, MPI_SUM, w->win));
        m[0] += o->buf[0];
        break;
    default: {
        /* Compare with the current value half the time, so both outcomes happen. */
        const uint64_t cmp = rnd() & 1 ? m[0] : m[0] + 1;
        MUST(MPI_Compare_and_swap(o->buf, &cmp, o->result, MPI_UINT64_T, t, d, w->win));
        if (cmp == m[0]) m[0] = o->buf[0];
        break;
    }
    }
}

static void rop_check(const rop *o, const char *epoch)
{
    if (o->op == OP_PUT || o->op == OP_ACC) return;
    for (int j = 0; j < o->len; j++)
        if (!EXPECT(o->result[j] == o->expect[j],
                    "random RMA, %s epoch: %s of %d elements at rank %d slot %d fetched %#llx, "
                    "expected %#llx",
                    epoch, op_name[o->op], o->len, o->target, o->k + j, (unsigned long long)o->result[j],
                    (unsigned long long)o->expect[j]))
            return;
}

/* A random target and range of this origin's slots; one element for the atomics. */
static void pick(rop *o, int op)
{
    o->op = op;
    o->target = (int)(rnd() % (uint64_t)np);
    o->k = (int)(rnd() % RAND_SLOTS);
    const int most = RAND_SLOTS - o->k < RAND_MAXLEN ? RAND_SLOTS - o->k : RAND_MAXLEN;
    o->len = op == OP_FOP || op == OP_CAS ? 1 : 1 + (int)(rnd() % (uint64_t)most);
}

/* Fence epoch: operations in it must not conflict, so a slot takes one put, or any
 * number of accumulates, or any number of gets; the counter takes increments from
 * everyone. Returns the operations posted. */
static long fence_epoch(rwin *w, rop *ops)
{
    enum { FREE, PUT, ACC, GOT };
    static const uint64_t one = 1;
    memset(w->use, FREE, (size_t)np * RAND_SLOTS);
    int nops = 0;
    long posted = 0;
    MUST(MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win));
    for (int i = 0; i < RAND_OPS; i++) {
        const int kind = (int)(rnd() % 4);
        if (kind == 3) {
            const int t = (int)(rnd() % (uint64_t)np);
            MUST(MPI_Accumulate(&one, 1, MPI_UINT64_T, t, elem_disp(w, t, counter_elem()), 1, MPI_UINT64_T,
                                MPI_SUM, w->win));
            w->counts[t]++;
            posted++;
            continue;
        }
        rop *o = &ops[nops];
        pick(o, kind == 0 ? OP_PUT : kind == 1 ? OP_GET : OP_ACC);
        const unsigned char want = o->op == OP_PUT ? PUT : o->op == OP_GET ? GOT : ACC;
        unsigned char *u = w->use + (size_t)o->target * RAND_SLOTS + o->k;
        bool allowed = true;
        for (int j = 0; j < o->len; j++)
            if (u[j] != FREE && (u[j] != want || want == PUT)) allowed = false;
        if (!allowed) continue;
        for (int j = 0; j < o->len; j++) u[j] = want;
        post_op(w, o);
        nops++;
        posted++;
    }
    MUST(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));
    for (int i = 0; i < nops; i++) rop_check(&ops[i], "fence");
    return posted;
}

/* lock_all epoch: each operation is flushed before the next, so any may follow any. */
static long lock_all_epoch(rwin *w, rop *o)
{
    MUST(MPI_Win_lock_all(0, w->win));
    for (int i = 0; i < RAND_OPS; i++) {
        pick(o, (int)(rnd() % OP_N));
        post_op(w, o);
        MUST(MPI_Win_flush(o->target, w->win));
        rop_check(o, "lock_all");
    }
    MUST(MPI_Win_unlock_all(w->win));
    return RAND_OPS;
}

/* Every origin reads back all its slots everywhere; each target checks its counter
 * against the increments everyone made. */
static void rwin_verify(rwin *w)
{
    const char *name = w->dynamic ? "dynamic" : "allocate";
    const size_t slots = (size_t)np * RAND_SLOTS;
    uint64_t *got = malloc(slots * 8), *total = malloc((size_t)np * 8), counter = 0;
    MPI_Barrier(comm); /* every epoch has ended everywhere */
    MUST(MPI_Win_lock_all(0, w->win));
    for (int t = 0; t < np; t++)
        MUST(MPI_Get(got + (size_t)t * RAND_SLOTS, RAND_SLOTS, MPI_UINT64_T, t,
                     elem_disp(w, t, (long)rank * RAND_SLOTS), RAND_SLOTS, MPI_UINT64_T, w->win));
    MUST(MPI_Get(&counter, 1, MPI_UINT64_T, rank, elem_disp(w, rank, counter_elem()), 1, MPI_UINT64_T,
                 w->win));
    MUST(MPI_Win_unlock_all(w->win));
    long bad = 0;
    for (size_t e = 0; e < slots; e++)
        if (got[e] != w->model[e]) bad++;
    CHECK(bad == 0,
          "random RMA on the %s window: %ld of this rank's %zu slots differ from the "
          "model at the end",
          name, bad, slots);
    MPI_Allreduce(w->counts, total, np, MPI_UINT64_T, MPI_SUM, comm);
    CHECK(counter == total[rank],
          "random RMA on the %s window: counter is %llu after %llu "
          "increments",
          name, (unsigned long long)counter, (unsigned long long)total[rank]);
    free(total);
    free(got);
}

/* Random RMA for `seconds` after one second of warm-up, sampling every second; flat
 * since the warm-up, with the two windows alive throughout. Returns the first sample. */
static sample random_rma(double seconds, long seed, long rss_bound_kib)
{
    rwin w[2];
    rwin_create(&w[0], false);
    rwin_create(&w[1], true);
    rop *ops = calloc(RAND_OPS, sizeof *ops);
    rnd_state = (uint64_t)seed * 0x9e3779b97f4a7c15ull + (uint64_t)rank + 1;
    uint64_t schedule = (uint64_t)seed + 0x1234567; /* the same on every rank */

    const double t0 = MPI_Wtime();
    double next = t0 + 1;
    sample base = {0, 0, 0, 0, 0}, s = base;
    long ops_done = 0, epochs = 0;
    int sampled = 0;
    char label[64];
    for (;;) {
        schedule = schedule * 6364136223846793005ull + 1442695040888963407ull;
        rwin *cur = &w[(schedule >> 40) & 1];
        ops_done += (schedule >> 33) & 1 ? fence_epoch(cur, ops) : lock_all_epoch(cur, ops);
        epochs++;
        /* Rank 0's clock decides for everyone: 0 go on, 1 sample, 2 sample and stop. */
        int what = 0;
        if (rank == 0 && MPI_Wtime() >= next) {
            what = MPI_Wtime() - t0 >= seconds + 1 ? 2 : 1;
            next += 1;
        }
        MPI_Bcast(&what, 1, MPI_INT, 0, comm);
        if (!what) continue;
        s = take_sample();
        const double now = MPI_Wtime() - t0;
        if (sampled++ == 0) {
            base = s;
            print_row("random RMA warm-up", ops_done / now, &s);
        } else {
            snprintf(label, sizeof label, "random RMA %.0f s", now - 1);
            print_row(label, ops_done / now, &s);
            check_flat(label, &base, &s);
        }
        if (what == 2) break;
    }
    check_rss("random RMA", &base, &s, rss_bound_kib);
    report_growth("random RMA", &base, &s);
    rwin_verify(&w[0]);
    rwin_verify(&w[1]);
    long total_ops = 0;
    MPI_Reduce(&ops_done, &total_ops, 1, MPI_LONG, MPI_SUM, 0, comm);
    if (rank == 0) {
        printf("soak: random RMA: %ld epochs, %ld operations on %d ranks in %.1f s (seed %ld)\n", epochs,
               total_ops, np, MPI_Wtime() - t0, seed);
        fflush(stdout);
    }
    rwin_free(&w[0]);
    rwin_free(&w[1]);
    free(ops);
    return base;
}

/* ---- main ------------------------------------------------------------------------ */

static void usage(void)
{
    if (rank == 0) fprintf(stderr, "usage: soak [-n WINDOWS] [-t SECONDS] [-w WARMUP] [-r MIB] [-s SEED]\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long nwin = DEFAULT_WINDOWS, warmup = DEFAULT_WARMUP, seed = 1, rss_mib = DEFAULT_RSS_MIB;
    double seconds = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v || strlen(a) != 2 || a[0] != '-') {
            usage();
            MPI_Finalize();
            return 2;
        }
        i++;
        switch (a[1]) {
        case 'n': nwin = atol(v); break;
        case 't': seconds = atof(v); break;
        case 'w': warmup = atol(v); break;
        case 'r': rss_mib = atol(v); break;
        case 's': seed = atol(v); break;
        default:
            usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (nwin < 0 || warmup < 0 || seconds < 0 || rss_mib < 0) {
        usage();
        MPI_Finalize();
        return 2;
    }
    const long rss_bound_kib = rss_mib * 1024;
    local_bound_bytes = (long long)rss_mib << 20;

    /* MPI_T first: its session and handles are allocated before the baseline. */
    pvars_init();
    sample start = take_sample();
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const char *osc = getenv("OMPI_MCA_osc");
    expect_fabric = osc && strstr(osc, "fabric") && osc[0] != '^';
    if (expect_fabric)
        CHECK(pv.ok,
              "MPI_T variables osc_fabric_registered_regions/_bytes not found under "
              "osc/fabric");
    else if (rank == 0 && !pv.ok)
        printf(
            "soak: osc/fabric's MPI_T variables not found (OMPI_MCA_osc=%s): registrations "
            "not measured\n",
            osc ? osc : "");

    /* allocate_shared only when every rank shares one node. */
    MPI_Comm node;
    int nodesize, shared_ok;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nodesize);
    MPI_Comm_free(&node);
    shared_ok = nodesize == np;
    MPI_Allreduce(MPI_IN_PLACE, &shared_ok, 1, MPI_INT, MPI_MIN, comm);

    MPI_Aint *addrs = calloc((size_t)np, sizeof(MPI_Aint));
    if (rank == 0) {
        printf(
            "soak: %d ranks, %ld windows per flavor after %ld of warm-up, %.0f s of random RMA, "
            "RSS allowance %ld MiB\n",
            np, nwin, warmup, seconds, rss_mib);
        if (!shared_ok) printf("soak: allocate_shared skipped: the ranks are not all on one node\n");
    }
    print_header();
    print_row("start", 0, &start);

    double t0 = MPI_Wtime();
    for (int f = 0; f < FL_N; f++)
        for (long i = 0; i < warmup && (f != FL_SHARED || shared_ok); i++)
            if (!one_window(f, i, NULL, addrs)) break;
    sample base = take_sample(), end = base;
    print_row("after warm-up", 0, &base);
    long total = 0;
    for (int f = 0; f < FL_N && nwin > 0; f++)
        if (f != FL_SHARED || shared_ok) total += run_flavor(f, nwin, &base, addrs, rss_bound_kib);
    if (nwin > 0) {
        end = take_sample();
        report_growth("windows", &base, &end);
        if (rank == 0)
            printf("soak: %ld windows created, used and freed in %.1f s\n", total, MPI_Wtime() - t0);
    }

    if (seconds > 0) {
        const sample rbase = random_rma(seconds, seed, rss_bound_kib);
        /* Its windows are gone: registrations are back where the window soak left them.
         * Descriptors are compared with the random RMA's own warm-up: with more than two
         * ranks it reaches peers the window soak's ring never did, and a provider may
         * connect to each of those once. */
        end = take_sample();
        print_row("after random RMA", 0, &end);
        CHECK(end.regions == base.regions && end.bytes == base.bytes,
              "after random RMA: %llu registrations of %llu bytes, %llu of %llu before", end.regions,
              end.bytes, base.regions, base.bytes);
        CHECK(end.fds <= rbase.fds, "after random RMA: %ld open descriptors, %ld during it", end.fds,
              rbase.fds);
    }
    free(addrs);
    MPI_Comm_free(&comm);
    pvars_fini();
    return check_finish();
}
