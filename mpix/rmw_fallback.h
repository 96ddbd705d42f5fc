/*
 * MPIX_Rmw2 through standard MPI, for windows of any component: each element is a loop
 * of MPI_Fetch_and_op(MPI_NO_OP) and MPI_Compare_and_swap on the element's bits, each
 * flushed, until the swap holds or is not needed. It needs a passive-target epoch to
 * flush in (the caller's, or the implicit epoch's lock), and element i lies at
 * target_disp + i * size / disp_unit: the target's displacement unit is taken to be
 * the caller's and must divide the element size when count > 1 (else MPI_ERR_DISP).
 * Atomic with other MPIX_Rmw2 calls; with MPI accumulates of floating-point types on the
 * same element only as far as the component makes integer and floating-point atomics
 * of one width atomic with each other (osc/fabric's own path needs no such loop).
 */
#ifndef MPIX_RMW_FALLBACK_H
#define MPIX_RMW_FALLBACK_H

#include "rmw_types.h"

/* What the loop needs for count elements of t on win, decided before anything is
 * locked or sent: the unsigned integer type of t's bits and the displacement units
 * between elements. MPI_ERR_TYPE or MPI_ERR_DISP when the loop cannot do it. */
typedef struct rmw2_plan {
    MPI_Datatype bits;
    MPI_Aint step;
} rmw2_plan;
int rmw2_fallback_plan(const rmw_type *t, int count, MPI_Win win, rmw2_plan *plan);

/* The loop. Its errors are those of the MPI calls it makes, which gave them to the
 * window's error handler already. */
int rmw2_fallback(MPIX_Rmw2_op op, const rmw_type *t, const rmw2_plan *plan, const void *compare,
                  const void *value, void *result, int count, int target, MPI_Aint target_disp, MPI_Win win);

#endif
