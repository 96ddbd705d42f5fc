/*
 * The registrar the engine asks for descriptors of user buffers where the provider
 * returned FI_MR_LOCAL (osc_fabric/engine/local_memory.h): Open MPI's registration cache,
 * the rcache framework's grdma component, as btl/ofi uses it. grdma keeps a region
 * registered after its last use (mpi_leave_pinned, on by default where Open MPI's memory
 * hooks work) and Open MPI's memory hooks mark it invalid when the application frees or
 * unmaps the memory, so a later buffer at the same address gets a fresh registration;
 * the invalid ones are closed at grdma's next register or deregister call, which come
 * only from inside the engine, under its lock, as the engine's registrar calls must. The
 * engine owns the cache from then on and closes it after its endpoint (close_cache).
 * Without memory hooks grdma closes each region when its last operation completes.
 */
#include "osc_fabric.h"

#include <rdma/fi_errno.h>

#include "opal/mca/rcache/base/base.h"
#include "opal/mca/rcache/rcache.h"

/* grdma allocates registrations of this size; the engine's handle and descriptor follow
 * its own fields. */
typedef struct oscf_registration {
    mca_rcache_base_registration_t base;
    void *handle;
    void *desc;
} oscf_registration;

static int register_mem(void *reg_data, void *base, size_t size, mca_rcache_base_registration_t *reg)
{
    oscf_registration *r = (oscf_registration *)reg;
    if (OSCF_OK != oscf_engine_register_local((oscf_engine *)reg_data, base, size, &r->handle, &r->desc)) {
        /* grdma then closes an unused cached region and tries again (pinned memory is
         * finite on a NIC); the engine logged libfabric's reason. */
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

static int deregister_mem(void *reg_data, mca_rcache_base_registration_t *reg)
{
    oscf_registration *r = (oscf_registration *)reg;
    const int rc = oscf_engine_deregister_local((oscf_engine *)reg_data, r->handle);
    r->handle = NULL;
    return OSCF_OK == rc ? OPAL_SUCCESS : OPAL_ERROR;
}

static int acquire(void *ctx, void *buf, size_t len, void **desc, void **token)
{
    mca_rcache_base_module_t *rc_module = ctx;
    mca_rcache_base_registration_t *reg = NULL;
    const int rc = rc_module->rcache_register(rc_module, buf, len, 0, MCA_RCACHE_ACCESS_LOCAL_WRITE, &reg);
    if (OPAL_SUCCESS != rc || NULL == reg) return -FI_ENOMEM;
    *desc = ((oscf_registration *)reg)->desc;
    *token = reg;
    return 0;
}

static void release(void *ctx, void *token)
{
    mca_rcache_base_module_t *rc_module = ctx;
    (void)rc_module->rcache_deregister(rc_module, (mca_rcache_base_registration_t *)token);
}

/* The engine is closing (its endpoint is closed, every token given back): the cache
 * closes what it kept, through deregister_mem, while the domain is still open. */
static void close_cache(void *ctx)
{
    (void)mca_rcache_base_module_destroy((mca_rcache_base_module_t *)ctx);
}

void ompi_osc_fabric_registration_init(oscf_engine *engine)
{
    if (!oscf_engine_local_descriptors(engine)) return;
    mca_rcache_base_resources_t resources = {
        .cache_name = "osc_fabric",
        .reg_data = engine,
        .sizeof_reg = sizeof(oscf_registration),
        .register_mem = register_mem,
        .deregister_mem = deregister_mem,
    };
    mca_rcache_base_module_t *cache = mca_rcache_base_module_create("grdma", engine, &resources);
    if (NULL == cache) {
        /* The engine's own registrar serves: a registration per operation, still right. */
        opal_output_verbose(1, mca_osc_fabric_component.output,
                            "osc/fabric: no grdma registration cache; registering each buffer per operation");
        return;
    }
    const oscf_local_registrar registrar = {
        .ctx = cache, .acquire = acquire, .release = release, .close = close_cache};
    if (OSCF_OK != oscf_engine_set_local_registrar(engine, &registrar))
        (void)mca_rcache_base_module_destroy(cache);
}
