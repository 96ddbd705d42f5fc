/*
 * MPI_T performance variables: what a user tunes on. How many operations took each
 * route (fabric RMA, active messages, batches, the layout form, direct on-node), how
 * often the provider pushed back (-FI_EAGAIN), how long lock acquisitions and grants
 * waited, how often the progress thread found work, and the memory registered. Each is
 * a process-wide counter over every window, freed ones included (the engine's totals,
 * oscf_engine_get_stats); 0 until the first window opens the engine.
 * examples/pvars.c reads them around a loop of RMA calls.
 */
#include "osc_fabric.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/base/mca_base_pvar.h"

/* One counter of oscf_engine_stats. */
typedef struct pvar_field {
    const char *name, *description;
    size_t offset;
} pvar_field;

#define WIN(field) offsetof(oscf_engine_stats, windows) + offsetof(oscf_win_stats, field)
static const pvar_field fields[] = {
    {"rma_writes", "fi_write operations posted for puts (after chunking)", WIN(puts)},
    {"rma_reads", "fi_read operations posted for gets (after chunking)", WIN(gets)},
    {"rma_injected", "writes posted with FI_INJECT (the origin buffer free at once)", WIN(injected)},
    {"puts_batched", "small puts sent as records of active-message batches", WIN(puts_batched)},
    {"gets_as_messages", "small gets answered by the target's engine instead of fi_read",
     WIN(gets_as_messages)},
    {"gather_messages", "messages carrying the small pieces of many-piece gets", WIN(gather_messages)},
    {"layout_messages",
     "messages of derived-datatype puts, gets and accumulates sent as the target's layout "
     "and packed bytes (including rendezvous chunks)",
     WIN(layout_messages)},
    {"native_atomics", "fi_atomic, fi_fetch_atomic and fi_compare_atomic operations posted",
     WIN(native_atomics)},
    {"am_accumulates", "accumulate chunks sent as active messages applied by the target's engine",
     WIN(am_requests)},
    {"am_batches", "messages that carried batched accumulates and small puts", WIN(am_batches)},
    {"am_local", "emulated accumulates applied to the calling process's own window", WIN(am_local)},
    {"direct_rma", "puts and gets to on-node peers done as memory copies", WIN(direct_rma)},
    {"cross_memory_rma",
     "of those, puts and gets to MPI_Win_create and dynamic windows copied by cross-memory attach "
     "(process_vm_writev/readv)",
     WIN(cross_rma)},
    {"direct_atomics", "accumulates and compare-and-swaps applied directly under the accumulate locks",
     WIN(direct_atomics)},
    {"direct_sync_words", "lock and synchronization words changed directly in shared memory",
     WIN(direct_words)},
    {"lock_attempts", "remote atomics or messages sent to acquire or release locks", WIN(lock_attempts)},
    {"lock_waits", "lock acquisitions and lock grants that had to wait", WIN(lock_waits)},
    {"lock_wait_ns", "nanoseconds those lock acquisitions and grants waited", WIN(lock_wait_ns)},
    {"lock_retries", "lock requests held at this target (a lock holder in the way) tried again",
     WIN(lock_retries)},
    {"ordering_waits", "accumulates that waited for earlier ones (accumulate_ordering)", WIN(ordering_waits)},
    {"fence_waits_skipped", "fences that trusted MPI_MODE_NOPRECEDE", WIN(fence_waits_skipped)},
    {"rma_bytes", "bytes of puts and gets moved by fi_write and fi_read", WIN(rma_bytes)},
    {"direct_bytes", "bytes of puts, gets and accumulates done directly to on-node peers", WIN(direct_bytes)},
    {"layout_bytes", "bytes of derived-datatype puts, gets and accumulates sent in the layout form",
     WIN(layout_bytes)},
    {"message_bytes", "payload bytes of active-message requests sent (accumulates, batches, layouts, locks)",
     offsetof(oscf_engine_stats, message_bytes)},
    {"eagain_retries", "posts the provider refused with -FI_EAGAIN and retried later",
     offsetof(oscf_engine_stats, eagain_retries)},
    {"local_own_regions", "local buffers (FI_MR_LOCAL) described by osc/fabric's own registered regions",
     offsetof(oscf_engine_stats, local_own_regions)},
    {"local_acquired", "local buffers (FI_MR_LOCAL) described through the registration cache",
     offsetof(oscf_engine_stats, local_acquired)},
    {"local_registered", "regions registered for the registration cache: its misses (FI_MR_LOCAL)",
     offsetof(oscf_engine_stats, local_registered)},
    {"progress_thread_wakeups", "progress-thread rounds that found work (osc_fabric_progress_thread)",
     offsetof(oscf_engine_stats, thread_wakeups)},
};
#undef WIN

static int counter_value(const mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void)obj;
    const pvar_field *f = pvar->ctx;
    oscf_engine_stats st = {0};
    if (NULL != mca_osc_fabric_component.engine)
        (void)oscf_engine_get_stats(mca_osc_fabric_component.engine, &st);
    uint64_t v;
    memcpy(&v, (const char *)&st + f->offset, sizeof v);
    *(unsigned long long *)value = v;
    return OPAL_SUCCESS;
}

/* Live memory registrations of the whole process: flat across window create/free when
 * nothing leaks (test/mpi/soak.c checks that). The local ones (FI_MR_LOCAL), which the
 * registration cache keeps, apart. ctx: bit 0 bytes, bit 1 local. */
static int registered_value(const mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void)obj;
    const uintptr_t what = (uintptr_t)pvar->ctx;
    uint64_t count = 0, bytes = 0;
    if (what & 2) {
        (void)oscf_engine_local_registration_stats(&count, &bytes);
    } else {
        (void)oscf_engine_registration_stats(&count, &bytes);
    }
    *(unsigned long long *)value = (what & 1) ? bytes : count;
    return OPAL_SUCCESS;
}

void ompi_osc_fabric_register_pvars(const mca_base_component_t *v)
{
    /* A variable that fails to register is only missing from MPI_T. */
    const int flags = MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        (void)mca_base_component_pvar_register(
            v, fields[i].name, fields[i].description, OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_COUNTER,
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT, flags, counter_value,
            NULL, NULL, (void *)&fields[i]);
    }
    (void)mca_base_component_pvar_register(
        v, "registered_regions",
        "Memory regions osc/fabric currently has registered with libfabric (all windows)", OPAL_INFO_LVL_4,
        MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
        flags, registered_value, NULL, NULL, NULL);
    (void)mca_base_component_pvar_register(
        v, "registered_bytes", "Bytes osc/fabric currently has registered with libfabric (all windows)",
        OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL,
        MCA_BASE_VAR_BIND_NO_OBJECT, flags, registered_value, NULL, NULL, (void *)1);
    (void)mca_base_component_pvar_register(
        v, "local_regions",
        "Memory regions registered for local descriptors (FI_MR_LOCAL), most kept by the registration "
        "cache",
        OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL,
        MCA_BASE_VAR_BIND_NO_OBJECT, flags, registered_value, NULL, NULL, (void *)2);
    (void)mca_base_component_pvar_register(
        v, "local_bytes", "Bytes of the memory regions registered for local descriptors (FI_MR_LOCAL)",
        OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL,
        MCA_BASE_VAR_BIND_NO_OBJECT, flags, registered_value, NULL, NULL, (void *)3);
}
