/*
 * MPIX_Rmw, MPIX_Rmw2 and their request versions (include/mpix_fabric.h): the checks
 * every call gets, then osc/fabric's engine where the window is its (the plugin's
 * table, include/osc_fabric/mpix_entry.h), standard MPI everywhere else.
 *
 *                      osc/fabric window               any other window
 *   Rmw in an epoch    MPI_(R)Get_accumulate (reaches the engine either way)
 *   Rmw2 in an epoch   engine: native, message, CPU    rmw_fallback.c (CAS loops)
 *   implicit epoch     engine: one message where it    MPI_Win_lock + the above +
 *                      can (implicit_epoch.cpp)        MPI_Win_unlock
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "mpix_fabric.h"

#include <dlfcn.h>
#include <pthread.h>

#include "osc_fabric/mpix_entry.h"
#include "rmw_fallback.h"
#include "rmw_types.h"

static const osc_fabric_mpix_entry *entry;
static pthread_once_t entry_once = PTHREAD_ONCE_INIT;

/* Open MPI loads its components with global symbols, so the plugin's table is found
 * by name once MPI is initialized (the first MPIX call needs a window, so it is). */
static void find_entry(void)
{
    const osc_fabric_mpix_entry *e = dlsym(RTLD_DEFAULT, OSC_FABRIC_MPIX_ENTRY_SYMBOL);
    if (e && OSC_FABRIC_MPIX_ENTRY_VERSION == e->version) entry = e;
}

static const osc_fabric_mpix_entry *native(MPI_Win win)
{
    pthread_once(&entry_once, find_entry);
    return entry && entry->serves(win) ? entry : NULL;
}

int MPIX_Rmw_native(MPI_Win win, int *flag)
{
    if (MPI_WIN_NULL == win || !flag) return MPI_ERR_ARG;
    *flag = NULL != native(win);
    return MPI_SUCCESS;
}

/* An error goes to the window's handler, as the MPI call it stands for would. */
static int fail(MPI_Win win, int rc)
{
    if (MPI_SUCCESS != rc && MPI_WIN_NULL != win) MPI_Win_call_errhandler(win, rc);
    return rc;
}

/* A request for work already complete (implicit epochs, and fallback swaps, complete
 * before the call returns). */
static int query_done(void *extra, MPI_Status *status)
{
    (void)extra;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int free_done(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int cancel_done(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}
static int completed_request(MPI_Request *request)
{
    int rc = MPI_Grequest_start(query_done, free_done, cancel_done, NULL, request);
    return MPI_SUCCESS == rc ? MPI_Grequest_complete(*request) : rc;
}

/* The checks of every call, in the order of the error classes MPI_Get_accumulate's
 * checks would give. */
static int check(int count, MPI_Datatype dt, int (*op_check)(int, const rmw_type *), int op, int assert_bits,
                 rmw_type *t)
{
    if (count < 0) return MPI_ERR_COUNT;
    int rc = rmw_type_of(dt, t);
    if (MPI_SUCCESS == rc) rc = op_check(op, t);
    if (MPI_SUCCESS == rc && (assert_bits & ~(MPI_MODE_NOCHECK | MPIX_MODE_PASSIVE_EPOCH_IMPLICIT)))
        rc = MPI_ERR_ASSERT;
    return rc;
}

static int implicit_lock(int target, int assert_bits, MPI_Win win)
{
    return MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, assert_bits & MPI_MODE_NOCHECK, win);
}

/* MPIX_Rmw through standard MPI (an osc/fabric window serves it natively from there). */
static int rmw_standard(const void *operand, int count, MPI_Datatype dt, void *result, int target,
                        MPI_Aint disp, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    if (result && request)
        return MPI_Rget_accumulate(operand, count, dt, result, count, dt, target, disp, count, dt, op, win,
                                   request);
    if (result)
        return MPI_Get_accumulate(operand, count, dt, result, count, dt, target, disp, count, dt, op, win);
    if (request) return MPI_Raccumulate(operand, count, dt, target, disp, count, dt, op, win, request);
    return MPI_Accumulate(operand, count, dt, target, disp, count, dt, op, win);
}

static int rmw(const void *operand, int count, MPI_Datatype dt, void *result, int target, MPI_Aint disp,
               int assert_bits, MPIX_Rmw_op op, MPI_Win win, MPI_Request *request)
{
    if (MPI_WIN_NULL == win) return MPI_ERR_WIN;
    rmw_type t;
    int rc = check(count, dt, rmw_op_check, op, assert_bits, &t);
    if (MPI_SUCCESS == rc && count > 0 && MPIX_RMW_INC != op && !operand) rc = MPI_ERR_BUFFER;
    if (MPI_SUCCESS == rc && count > 0 && MPIX_RMW_INC == op && !(operand = rmw_ones(&t, count)))
        rc = MPI_ERR_NO_MEM;
    if (MPI_SUCCESS != rc) return fail(win, rc);
    if (MPI_PROC_NULL == target) return request ? completed_request(request) : MPI_SUCCESS;
    const MPI_Op mop = rmw_mpi_op(op);
    const osc_fabric_mpix_entry *e;
    if (!(assert_bits & MPIX_MODE_PASSIVE_EPOCH_IMPLICIT)) {
        /* The MPI call reports its own errors through the window's handler, and reaches
         * osc/fabric's engine the usual way: no need to ask which component serves. */
        rc = rmw_standard(operand, count, dt, result, target, disp, mop, win, request);
    } else if ((e = native(win))) {
        const osc_fabric_mpix_call c = {.op = mop,
                                        .operand = operand,
                                        .result = result,
                                        .count = count,
                                        .datatype = dt,
                                        .target = target,
                                        .target_disp = disp,
                                        .implicit_epoch = 1,
                                        .nocheck = (assert_bits & MPI_MODE_NOCHECK) != 0};
        rc = fail(win, e->rmw(win, &c, NULL));
    } else if (MPI_SUCCESS == (rc = implicit_lock(target, assert_bits, win))) {
        rc = rmw_standard(operand, count, dt, result, target, disp, mop, win, NULL);
        const int urc = MPI_Win_unlock(target, win);
        if (MPI_SUCCESS == rc) rc = urc;
    }
    if (MPI_SUCCESS == rc && request && (assert_bits & MPIX_MODE_PASSIVE_EPOCH_IMPLICIT))
        rc = completed_request(request);
    return rc;
}

static int rmw2(const void *operand, int count, MPI_Datatype dt, const void *operand2, void *result,
                int target, MPI_Aint disp, int assert_bits, MPIX_Rmw2_op op, MPI_Win win,
                MPI_Request *request)
{
    if (MPI_WIN_NULL == win) return MPI_ERR_WIN;
    rmw_type t;
    int rc = check(count, dt, rmw2_op_check, op, assert_bits, &t);
    if (MPI_SUCCESS == rc && count > 0 && (!operand || !operand2)) rc = MPI_ERR_BUFFER;
    if (MPI_SUCCESS != rc) return fail(win, rc);
    if (MPI_PROC_NULL == target) return request ? completed_request(request) : MPI_SUCCESS;
    const int implicit = (assert_bits & MPIX_MODE_PASSIVE_EPOCH_IMPLICIT) != 0;
    const osc_fabric_mpix_entry *e = native(win);
    if (e) {
        const osc_fabric_mpix_call c = {.is_swap = 1,
                                        .swap_op = op,
                                        .operand = operand,
                                        .operand2 = operand2,
                                        .result = result,
                                        .count = count,
                                        .datatype = dt,
                                        .target = target,
                                        .target_disp = disp,
                                        .implicit_epoch = implicit,
                                        .nocheck = (assert_bits & MPI_MODE_NOCHECK) != 0};
        rc = fail(win, e->rmw(win, &c, implicit ? NULL : request));
        if (MPI_SUCCESS == rc && request && implicit) rc = completed_request(request);
        return rc;
    }
    rmw2_plan plan;
    if (MPI_SUCCESS != (rc = rmw2_fallback_plan(&t, count, win, &plan))) return fail(win, rc);
    if (implicit && MPI_SUCCESS != (rc = implicit_lock(target, assert_bits, win))) return rc;
    rc = rmw2_fallback(op, &t, &plan, operand, operand2, result, count, target, disp, win);
    if (implicit) {
        const int urc = MPI_Win_unlock(target, win);
        if (MPI_SUCCESS == rc) rc = urc;
    }
    if (MPI_SUCCESS == rc && request) rc = completed_request(request);
    return rc;
}

int MPIX_Rmw(const void *operand_addr, int count, MPI_Datatype datatype, void *result_addr, int target_rank,
             MPI_Aint target_disp, int assert, MPIX_Rmw_op op, MPI_Win win)
{
    return rmw(operand_addr, count, datatype, result_addr, target_rank, target_disp, assert, op, win, NULL);
}

int MPIX_Rrmw(const void *operand_addr, int count, MPI_Datatype datatype, void *result_addr, int target_rank,
              MPI_Aint target_disp, int assert, MPIX_Rmw_op op, MPI_Win win, MPI_Request *request)
{
    if (!request) return MPI_ERR_REQUEST;
    return rmw(operand_addr, count, datatype, result_addr, target_rank, target_disp, assert, op, win,
               request);
}

int MPIX_Rmw2(const void *operand_addr, int count, MPI_Datatype datatype, const void *operand2_addr,
              void *result_addr, int target_rank, MPI_Aint target_disp, int assert, MPIX_Rmw2_op op,
              MPI_Win win)
{
    return rmw2(operand_addr, count, datatype, operand2_addr, result_addr, target_rank, target_disp, assert,
                op, win, NULL);
}

int MPIX_Rrmw2(const void *operand_addr, int count, MPI_Datatype datatype, const void *operand2_addr,
               void *result_addr, int target_rank, MPI_Aint target_disp, int assert, MPIX_Rmw2_op op,
               MPI_Win win, MPI_Request *request)
{
    if (!request) return MPI_ERR_REQUEST;
    return rmw2(operand_addr, count, datatype, operand2_addr, result_addr, target_rank, target_disp, assert,
                op, win, request);
}
