/*
 * What osc/fabric's plugin offers libmpix-fabric (mpix/): one table, found by name with
 * dlsym when the library is first used. The library so needs nothing from the plugin to
 * link or load, and where the plugin is not loaded (another osc component was chosen)
 * it uses its portable fallback. Only MPI handles cross: the plugin's MPI layer
 * translates them as it does for every MPI call. A table of another version is not used.
 */
#ifndef OSC_FABRIC_MPIX_ENTRY_H
#define OSC_FABRIC_MPIX_ENTRY_H

#include <mpi.h>

#define OSC_FABRIC_MPIX_ENTRY_SYMBOL "mca_osc_fabric_mpix_entry"
#define OSC_FABRIC_MPIX_ENTRY_VERSION 1

/* One MPIX_Rmw or MPIX_Rmw2 call, already checked by the library (datatype predefined
 * and allowed for the op, count >= 0, target not MPI_PROC_NULL). */
typedef struct osc_fabric_mpix_call {
    int is_swap;         /* 0: MPIX_Rmw with op; 1: MPIX_Rmw2 with swap_op */
    MPI_Op op;           /* MPIX_Rmw: the MPI reduction (INC arrives as MPI_SUM of ones) */
    int swap_op;         /* MPIX_Rmw2: an MPIX_Rmw2_op */
    const void *operand; /* MPIX_Rmw: origin values; MPIX_Rmw2: comperands or masks */
    const void *operand2;
    void *result;
    int count;
    MPI_Datatype datatype;
    int target;
    MPI_Aint target_disp;
    int implicit_epoch; /* MPIX_MODE_PASSIVE_EPOCH_IMPLICIT */
    int nocheck;        /* MPI_MODE_NOCHECK, with implicit_epoch */
} osc_fabric_mpix_call;

typedef struct osc_fabric_mpix_entry {
    int version;
    /* 1 when win is served by osc/fabric. */
    int (*serves)(MPI_Win win);
    /* Runs the call on an osc/fabric window; returns an MPI error code (not yet given to
     * the window's error handler). request: NULL, or where a request for a call in an
     * epoch goes (an implicit epoch is complete on return and takes none). */
    int (*rmw)(MPI_Win win, const osc_fabric_mpix_call *call, MPI_Request *request);
} osc_fabric_mpix_entry;

#endif
