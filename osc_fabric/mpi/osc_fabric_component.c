/*
 * The MCA component: parameters, init/query/select/finalize, and the opal_progress
 * hook. Opening libfabric is deferred to the first window so that MPI jobs that never
 * use RMA pay nothing; it then happens once per process.
 */
#include "osc_fabric.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "ompi/group/group.h"
#include "ompi/mca/osc/base/base.h"
#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

static int component_register(void);
static int component_open(void);
static int component_close(void);
static int component_init(bool enable_progress_threads, bool enable_mpi_threads);
static int component_finalize(void);
static int component_query(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                           struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor);
static int component_select(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                            struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor,
                            int *model);

ompi_osc_fabric_component_t mca_osc_fabric_component = {
    .super =
        {
            .osc_version =
                {
                    OMPI_OSC_BASE_VERSION_3_0_0,
                    .mca_component_name = "fabric",
                    MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
                    .mca_register_component_params = component_register,
                    .mca_open_component = component_open,
                    .mca_close_component = component_close,
                },
            .osc_data =
                {
                    MCA_BASE_METADATA_PARAM_CHECKPOINT,
                },
            .osc_init = component_init,
            .osc_query = component_query,
            .osc_select = component_select,
            .osc_finalize = component_finalize,
        },
    .output = -1,
};

static void engine_log(int level, const char *msg)
{
    if (level <= 1) ompi_osc_fabric_help_note(msg); /* a reason the help message may quote */
    if (0 == level) {
        opal_output(0, "osc/fabric: %s", msg);
    } else {
        opal_output_verbose(level, mca_osc_fabric_component.output, "osc/fabric: %s", msg);
    }
}

static int component_register(void)
{
    ompi_osc_fabric_component_t *c = &mca_osc_fabric_component;
    const mca_base_component_t *v = &c->super.osc_version;

    c->priority = 10;
    (void)mca_base_component_var_register(
        v, "priority",
        "Priority of osc/fabric among the osc components (select it explicitly with --mca osc fabric)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_READONLY, &c->priority);

    c->provider_include = "";
    (void)mca_base_component_var_register(
        v, "provider_include",
        "Comma-separated libfabric providers to use, in order of preference (e.g. \"shm\", \"tcp\", "
        "\"tcp;ofi_rxm\"). Empty: shm when the whole job is on one node, else the best network "
        "provider offering FI_EP_RDM with FI_RMA|FI_ATOMIC; FI_PROVIDER is honoured; udp;ofi_rxd is "
        "never used (not supported)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_READONLY,
        &c->provider_include);

    c->progress_thread = false;
    (void)mca_base_component_var_register(
        v, "progress_thread",
        "Run an engine progress thread so passive targets are served while the application "
        "computes outside MPI. Off by default: the thread competes with the application for "
        "the engine lock and the CPU, which raises small-message latency when the target "
        "does call MPI (README.md, progress, has the measured cost)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &c->progress_thread);

    c->node_direct = true;
    (void)mca_base_component_var_register(
        v, "node_direct",
        "Reach peers on the same node directly: MPI_Win_allocate and MPI_Win_allocate_shared "
        "memory and every window's lock and synchronization words live in shared memory, and "
        "puts, gets, accumulates and locks to on-node peers are loads and stores under shared locks "
        "with no message. Off: on-node peers go through libfabric like any other, for "
        "comparison (perf/README.md has both)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY, &c->node_direct);

    c->cross_memory = true;
    (void)mca_base_component_var_register(
        v, "cross_memory",
        "With node_direct: puts and gets to on-node peers' MPI_Win_create and dynamic windows (user "
        "memory, not shared) are copied between the two processes by the kernel (process_vm_writev / "
        "process_vm_readv), needing no help from the target. Where the kernel refuses it (ptrace "
        "restrictions, seccomp) or off, they go through libfabric (perf/README.md has both)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY, &c->cross_memory);

    c->mr_local = true;
    (void)mca_base_component_var_register(
        v, "mr_local",
        "Offer providers to describe every local buffer with a registered region (FI_MR_LOCAL), "
        "user buffers through Open MPI's registration cache (rcache grdma, mpi_leave_pinned). Needed "
        "by efa-direct; spares rxm over verbs a registration per RMA call. Off: those providers "
        "register for themselves, or are not used (docs/FABRICS.md)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY, &c->mr_local);

    c->accumulate_path = "auto";
    (void)mca_base_component_var_register(
        v, "accumulate_path",
        "How accumulates travel: \"auto\" (native libfabric atomics where the provider executes "
        "them in hardware, for every type it supports for all MPI-allowed reductions; active "
        "messages for the rest and wherever the provider's atomics are software anyway: shm, "
        "tcp;ofi_rxm, sockets), \"am\" (active messages for every type) or \"native\" (native "
        "atomics wherever the provider has them, for comparison; lock words stay messages where "
        "the provider's atomics are software). Must be the same on all processes",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &c->accumulate_path);

    c->verbose = 0;
    (void)mca_base_component_var_register(
        v, "verbose",
        "Verbosity: 0 shows only provider failures, 1 adds why calls fail and why the component "
        "declines, 5 adds provider choice, 10 everything",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL, &c->verbose);

    ompi_osc_fabric_register_pvars(v);
    return OMPI_SUCCESS;
}

/* The component was compiled against one Open MPI; the loader checks only the MCA
 * framework version, so make sure the running library is the same release. */
static bool running_version_matches(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, major = 0, minor = 0, release = 0;
    if (MPI_SUCCESS != MPI_Get_library_version(lib, &len)) return false;
    if (3 != sscanf(lib, "Open MPI v%d.%d.%d", &major, &minor, &release)) return false;
    if (major == OMPI_MAJOR_VERSION && minor == OMPI_MINOR_VERSION && release == OMPI_RELEASE_VERSION) {
        return true;
    }
    opal_output_verbose(1, mca_osc_fabric_component.output,
                        "osc/fabric: built for Open MPI %d.%d.%d but running %d.%d.%d; declining",
                        OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION, major, minor, release);
    return false;
}

/* libfabric's own start (oscf_engine_warm_up) on a thread of its own, begun when MPI_Init
 * opens the osc framework, before its modex and the selection of the other frameworks,
 * if the job names osc/fabric, so that the first window does not wait for it; joined
 * before the engine opens. A job that did not name it starts nothing. */
static pthread_t warm_up_thread;
static bool warm_up_running;

static void *warm_up(void *arg)
{
    (void)arg;
    (void)oscf_engine_warm_up(); /* a failure is met again, and reported, by the open */
    return NULL;
}

static void warm_up_start(void)
{
    oscf_engine_set_environment();
    warm_up_running = 0 == pthread_create(&warm_up_thread, NULL, warm_up, NULL);
}

static void warm_up_join(void)
{
    if (!warm_up_running) return;
    (void)pthread_join(warm_up_thread, NULL);
    warm_up_running = false;
}

static int component_init(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    ompi_osc_fabric_component_t *c = &mca_osc_fabric_component;
    c->output = opal_output_open(NULL);
    opal_output_set_verbosity(c->output, c->verbose);
    oscf_set_log(engine_log, c->verbose);
    c->version_ok = running_version_matches();
    c->engine = NULL;
    c->engine_status = OSCF_OK;
    c->live_windows = 0;
    ompi_osc_fabric_accumulate_init();
    return OMPI_SUCCESS;
}

/* Only when named (--mca osc fabric): a priority may come from a site-wide parameter
 * file, and the jobs it covers that never create a window should not load libfabric. */
static int component_open(void)
{
    const char *list;
    if (ompi_osc_fabric_named(&list) && running_version_matches()) warm_up_start();
    return OMPI_SUCCESS;
}

static int component_close(void)
{
    warm_up_join();
    return OMPI_SUCCESS;
}

static int component_finalize(void)
{
    ompi_osc_fabric_component_t *c = &mca_osc_fabric_component;
    warm_up_join();
    if (c->live_windows > 0) {
        opal_progress_unregister(ompi_osc_fabric_progress);
        c->live_windows = 0;
    }
    if (NULL != c->engine) {
        (void)oscf_engine_close(c->engine);
        c->engine = NULL;
    }
    if (c->output >= 0) {
        opal_output_close(c->output);
        c->output = -1;
    }
    oscf_set_log(NULL, 0);
    ompi_osc_fabric_runs_fini();
    return OMPI_SUCCESS;
}

/* More processes of this job on this node than CPUs to run them: Open MPI's own
 * verdict (mpirun sets mpi_yield_when_idle when it places more processes than slots),
 * or the local size mpirun exports against the node's online CPUs, for jobs it did not
 * count as oversubscribed. Not this process's affinity mask: mpirun binds each of two
 * processes to a core of its own, and one CPU each is not oversubscription. */
static bool node_oversubscribed(void)
{
    if (opal_progress_yield_when_idle) return true;
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return NULL != local && cpus > 0 && atol(local) > cpus;
}

/* MPI_THREAD_MULTIPLE: threads may call MPI at once, so they may meet in the engine. */
static bool calls_from_many_threads(void)
{
    int provided = MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS != MPI_Query_thread(&provided) || MPI_THREAD_MULTIPLE == provided;
}

/* Opens the engine once; a failure is remembered so every later query declines fast. */
static int ensure_engine(void)
{
    ompi_osc_fabric_component_t *c = &mca_osc_fabric_component;
    if (NULL != c->engine || OSCF_OK != c->engine_status) return c->engine_status;
    oscf_engine_config cfg = {
        .provider_include = c->provider_include,
        .job_is_node_local = !ompi_group_have_remote_peers(ompi_mpi_comm_world.comm.c_local_group),
        .progress_thread = c->progress_thread,
        .oversubscribed = node_oversubscribed(),
        .node_direct = c->node_direct,
        .calls_serialized = !calls_from_many_threads(),
        .cross_memory = c->cross_memory,
        .no_mr_local = !c->mr_local,
    };
    const char *path = NULL != c->accumulate_path ? c->accumulate_path : "auto";
    if (0 == strcmp(path, "am")) {
        cfg.accumulate_path = OSCF_ACC_AM;
    } else if (0 == strcmp(path, "native")) {
        cfg.accumulate_path = OSCF_ACC_NATIVE;
    } else if (0 != strcmp(path, "auto")) {
        opal_output(0,
                    "osc/fabric: osc_fabric_accumulate_path must be \"auto\", \"am\" or "
                    "\"native\", not \"%s\"",
                    path);
        c->engine_status = OSCF_ERR_ARG;
        return c->engine_status;
    }
    ompi_osc_fabric_help_note("");
    warm_up_join();
    c->engine_status = oscf_engine_open(&cfg, &c->engine);
    if (OSCF_OK == c->engine_status) {
        ompi_osc_fabric_registration_init(c->engine);
        opal_output_verbose(5, c->output, "osc/fabric: using libfabric provider %s%s",
                            oscf_engine_provider(c->engine),
                            cfg.oversubscribed ? " on an oversubscribed node" : "");
    }
    return c->engine_status;
}

/* Whether the user asked for osc/fabric: named in the osc selection (--mca osc fabric)
 * or given a priority of its own choosing. */
static bool asked_for(void)
{
    const char *list;
    if (ompi_osc_fabric_named(&list)) return true;
    int idx = mca_base_var_find("ompi", "osc", "fabric", "priority");
    mca_base_var_source_t source = MCA_BASE_VAR_SOURCE_DEFAULT;
    const int *value = NULL;
    return idx >= 0 && OPAL_SUCCESS == mca_base_var_get_value(idx, &value, &source, NULL) &&
           MCA_BASE_VAR_SOURCE_DEFAULT != source;
}

/* Why the engine cannot serve a window on comm, opening it first if need be (for a job
 * that did not ask for osc/fabric, component_select opens it); NULL when it can.
 * *status: the engine's, when it is the reason. */
static const char *engine_unusable(struct ompi_communicator_t *comm, int *status)
{
    *status = ensure_engine();
    if (OSCF_OK != *status) return oscf_status_str(*status);
    if (oscf_engine_node_local_only(mca_osc_fabric_component.engine) &&
        ompi_group_have_remote_peers(comm->c_local_group)) {
        return "the provider reaches only this node and the communicator spans nodes";
    }
    return NULL;
}

/* status: the engine's, when it is the reason (the help message differs by it). */
static int decline(struct ompi_communicator_t *comm, int status, const char *why)
{
    opal_output_verbose(1, mca_osc_fabric_component.output, "osc/fabric: declining window: %s", why);
    ompi_osc_fabric_cannot_serve(status, why, ompi_comm_rank(comm));
    return -1;
}

static int component_query(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                           struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor)
{
    (void)win;
    (void)base;
    (void)size;
    (void)disp_unit;
    (void)info;
    ompi_osc_fabric_component_t *c = &mca_osc_fabric_component;
    if (!c->version_ok) return decline(comm, OSCF_OK, "running Open MPI differs from the build");
    static const char shared_across[] = "MPI_Win_allocate_shared needs every process on one node";
    const bool across = MPI_WIN_FLAVOR_SHARED == flavor && ompi_group_have_remote_peers(comm->c_local_group);
    if (NULL == c->engine && OSCF_OK == c->engine_status && !asked_for()) {
        /* Open MPI queries every installed osc component for every window and most
         * often picks another: opening the engine (libfabric, a provider, endpoints)
         * would cost the first window of every such job a large fraction of a second
         * (perf/README.md). So unasked we answer from what is known without it, and
         * component_select opens it if we are picked. */
        return across ? decline(comm, OSCF_OK, shared_across) : c->priority;
    }
    int status;
    const char *why = engine_unusable(comm, &status);
    if (NULL != why) return decline(comm, status, why);
    if (across) return decline(comm, OSCF_OK, shared_across);
    return c->priority;
}

int ompi_osc_fabric_progress(void)
{
    int n = oscf_engine_progress(mca_osc_fabric_component.engine);
    return n > 0 ? n : 0;
}

void ompi_osc_fabric_window_added(void)
{
    if (0 == mca_osc_fabric_component.live_windows++) {
        opal_progress_register(ompi_osc_fabric_progress);
    }
}

void ompi_osc_fabric_window_removed(void)
{
    if (0 == --mca_osc_fabric_component.live_windows) {
        opal_progress_unregister(ompi_osc_fabric_progress);
    }
}

static int component_select(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                            struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor,
                            int *model)
{
    ompi_osc_fabric_component_t *c = &mca_osc_fabric_component;
    ompi_osc_fabric_module_t *module = calloc(1, sizeof(*module));
    if (NULL == module) return OMPI_ERR_OUT_OF_RESOURCE;
    module->super = ompi_osc_fabric_module_template;
    /* Attached early: from here on every failure goes through module_destroy. */
    win->w_osc_module = &module->super;

    int rc = ompi_comm_dup(comm, &module->comm);
    if (OMPI_SUCCESS != rc) {
        win->w_osc_module = NULL;
        free(module);
        return rc;
    }

    oscf_win_params params = {
        .flavor = MPI_WIN_FLAVOR_ALLOCATE == flavor  ? OSCF_FLAVOR_ALLOCATE
                  : MPI_WIN_FLAVOR_DYNAMIC == flavor ? OSCF_FLAVOR_DYNAMIC
                  : MPI_WIN_FLAVOR_SHARED == flavor  ? OSCF_FLAVOR_SHARED
                                                     : OSCF_FLAVOR_CREATE,
        .base = MPI_WIN_FLAVOR_CREATE == flavor ? *base : NULL,
        .size = size,
        .disp_unit = disp_unit,
        .comm_rank = ompi_comm_rank(module->comm),
        .comm_size = ompi_comm_size(module->comm),
    };
    void *local_base = NULL;
    rc = ompi_osc_fabric_read_info(info, module, &params.accumulate_ordering);
    if (OMPI_SUCCESS == rc) { /* the agreements below share a failure */
        int status;
        const char *why = engine_unusable(comm, &status);
        if (NULL != why) {
            opal_output_verbose(1, c->output, "osc/fabric: cannot serve the window: %s", why);
            rc = OSCF_OK != status ? ompi_osc_fabric_status(status) : OMPI_ERR_NOT_AVAILABLE;
        }
    }
    if (MPI_WIN_FLAVOR_SHARED == flavor) {
        /* Collective inside: every rank enters it, or none. */
        rc = ompi_osc_fabric_agree(module->comm, rc);
        if (OMPI_SUCCESS == rc) rc = ompi_osc_fabric_shared_create(module, &params, &local_base);
    } else if (c->node_direct) {
        rc = ompi_osc_fabric_agree(module->comm, rc);
        if (OMPI_SUCCESS == rc) rc = ompi_osc_fabric_node_create(module, &params, &local_base);
    } else if (OMPI_SUCCESS == rc) {
        rc = ompi_osc_fabric_status(oscf_win_create(c->engine, &params, &module->win, &local_base));
    }
    rc = ompi_osc_fabric_agree(module->comm, rc);
    if (OMPI_SUCCESS != rc) goto fail;

    /* Everyone publishes where its memory and lock word are; peers need nothing else. */
    size_t blob = oscf_win_blob_size(module->win);
    char *blobs = malloc(blob * (size_t)params.comm_size);
    rc = NULL == blobs ? OMPI_ERR_OUT_OF_RESOURCE
                       : ompi_osc_fabric_status(
                             oscf_win_local_blob(module->win, blobs + blob * (size_t)params.comm_rank));
    rc = ompi_osc_fabric_agree(module->comm, rc);
    if (OMPI_SUCCESS == rc) {
        rc = module->comm->c_coll->coll_allgather(MPI_IN_PLACE, (int)blob, MPI_BYTE, blobs, (int)blob,
                                                  MPI_BYTE, module->comm,
                                                  module->comm->c_coll->coll_allgather_module);
        if (OMPI_SUCCESS == rc) rc = ompi_osc_fabric_status(oscf_win_connect(module->win, blobs));
        if (OMPI_SUCCESS == rc && oscf_win_has_direct_memory(module->win))
            module->direct = oscf_win_direct_view(module->win);
        rc = ompi_osc_fabric_agree(module->comm, rc);
    }
    free(blobs);
    if (OMPI_SUCCESS != rc) goto fail;

    if (MPI_WIN_FLAVOR_ALLOCATE == flavor || MPI_WIN_FLAVOR_SHARED == flavor) *(void **)base = local_base;
    *model = MPI_WIN_UNIFIED;
    /* Named as Open MPI's own components name theirs, so a user (and test/mpi/run-help)
     * sees who serves a window; MPI_Win_set_name overrides it. */
    static unsigned windows_named = 0;
    snprintf(win->w_name, sizeof win->w_name, "osc/fabric window %u", windows_named++);
    ompi_osc_fabric_subscribe_info(win, module);
    ompi_osc_fabric_window_added();
    opal_output_verbose(10, c->output, "osc/fabric: window of %zu bytes on %d ranks over %s", size,
                        params.comm_size, oscf_engine_provider(c->engine));
    return OMPI_SUCCESS;

fail:
    win->w_osc_module = NULL;
    ompi_osc_fabric_module_destroy(module);
    return rc;
}
