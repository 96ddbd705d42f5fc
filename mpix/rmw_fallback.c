#include "rmw_fallback.h"

#include <string.h>

int rmw2_fallback_plan(const rmw_type *t, int count, MPI_Win win, rmw2_plan *plan)
{
    plan->bits = rmw_bits_type(t);
    if (MPI_DATATYPE_NULL == plan->bits) return MPI_ERR_TYPE;
    /* The caller's displacement unit stands for the target's (rmw_fallback.h). */
    int *unit = NULL, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
    const MPI_Aint du = flag && unit && *unit > 0 ? *unit : 1;
    if (count > 1 && (MPI_Aint)t->size % du) return MPI_ERR_DISP;
    plan->step = (MPI_Aint)t->size / du;
    return MPI_SUCCESS;
}

/* One element: read it, and while op would change it, try to swap its bits. */
static int swap_element(MPIX_Rmw2_op op, const rmw_type *t, MPI_Datatype bits, const void *compare,
                        const void *value, void *result, int target, MPI_Aint disp, MPI_Win win)
{
    unsigned char cur[8], next[8], seen[8];
    int rc = MPI_Fetch_and_op(NULL, cur, bits, target, disp, MPI_NO_OP, win);
    if (MPI_SUCCESS == rc) rc = MPI_Win_flush(target, win);
    while (MPI_SUCCESS == rc) {
        rmw2_element(op, t, cur, value, compare, next);
        if (0 == memcmp(next, cur, t->size)) break; /* nothing to store: done as read */
        rc = MPI_Compare_and_swap(next, cur, seen, bits, target, disp, win);
        if (MPI_SUCCESS == rc) rc = MPI_Win_flush(target, win);
        if (MPI_SUCCESS != rc || 0 == memcmp(seen, cur, t->size)) break; /* swapped */
        memcpy(cur, seen, t->size); /* someone else changed it first: decide again */
    }
    if (MPI_SUCCESS == rc && result) memcpy(result, cur, t->size);
    return rc;
}

int rmw2_fallback(MPIX_Rmw2_op op, const rmw_type *t, const rmw2_plan *plan, const void *compare,
                  const void *value, void *result, int count, int target, MPI_Aint target_disp, MPI_Win win)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count && MPI_SUCCESS == rc; i++) {
        const size_t at = (size_t)i * t->size;
        rc = swap_element(op, t, plan->bits, (const char *)compare + at, (const char *)value + at,
                          result ? (char *)result + at : NULL, target, target_disp + i * plan->step, win);
    }
    return rc;
}
