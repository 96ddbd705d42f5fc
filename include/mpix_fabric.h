/*
 * MPIX_Rmw and MPIX_Rmw2: read-modify-write operations MPI cannot express, after the
 * MPI_RMW / MPI_RMW2 proposal, with MPIX_ in place of MPI_ so a program written against
 * the proposal ports by a prefix change. Link with `pkg-config --libs mpix-fabric`.
 *
 * On a window served by osc/fabric the calls go through its engine (native fabric
 * atomics, active messages applied at the target, or updates in shared memory for
 * peers on the node); on a window of any other component they give the same results through
 * standard MPI calls, so a program may call them unconditionally (MPIX_Rmw_native tells
 * which). docs/MPIX.md has the rules in full; in short:
 *
 *   MPIX_Rmw:  result[i] = target[i]; target[i] = target[i] (op) operand[i]
 *              (MPIX_RMW_INC adds one and ignores operand).
 *   MPIX_Rmw2: result[i] = target[i]; then
 *     MPIX_RMW2_MASK_SWAP: target[i] = (operand2[i] & operand[i]) | (target[i] & ~operand[i])
 *                          (the bits set in the mask, operand, take operand2's values);
 *     MPIX_RMW2_COMP_SWAP_xx: if (operand[i] xx target[i]) target[i] = operand2[i]
 *                          (operand is the comperand: COMP_SWAP_LT stores operand2 when
 *                          operand < target, so operand == operand2 keeps the minimum).
 *
 * - Each element is atomic, and atomic with the MPI_Accumulate family (and other
 *   MPIX_Rmw/Rmw2 calls) of the same datatype on the same location; elements of one
 *   call are not atomic as a whole (as MPI_Accumulate).
 * - One predefined datatype and count for operand, operand2, result and target. Types:
 *     INC, SUM, PROD:        integers, floating point, complex
 *     LAND, LOR, LXOR:       integers, MPI_C_BOOL
 *     BAND, BOR, BXOR:       integers, MPI_BYTE
 *     SWAP:                  any predefined type
 *     MASK_SWAP:             integers, MPI_BYTE
 *     COMP_SWAP_E, _NE:      integers, MPI_C_BOOL, MPI_BYTE, float, double (values compare)
 *     COMP_SWAP_LT/LE/GE/GT: integers, float, double
 *   Anything else is MPI_ERR_OP (a type the op does not allow) or MPI_ERR_TYPE (a
 *   derived datatype, or a type no op allows).
 * - operand may be NULL for MPIX_RMW_INC (which adds one); result may be NULL when the
 *   old values are not wanted.
 * - assert 0: like MPI_Get_accumulate, inside an access epoch the caller opened, complete
 *   at its next flush, unlock or fence (the request version: when the request completes).
 *   MPIX_MODE_PASSIVE_EPOCH_IMPLICIT: as MPI_Win_lock(MPI_LOCK_EXCLUSIVE) + the operation
 *   + MPI_Win_unlock on the target, outside any access epoch to it; complete when the
 *   call returns. With MPI_MODE_NOCHECK as well: no other process holds or asks for a
 *   conflicting lock on the target, so no lock is taken.
 * - Errors are reported through the window's error handler with the class the standard
 *   uses for the same misuse of MPI_Get_accumulate.
 */
#ifndef MPIX_FABRIC_H
#define MPIX_FABRIC_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPIX_FABRIC_VERSION_MAJOR 1
#define MPIX_FABRIC_VERSION_MINOR 0

typedef enum MPIX_Rmw_op {
    MPIX_RMW_INC = 1,
    MPIX_RMW_PROD,
    MPIX_RMW_SUM,
    MPIX_RMW_LAND,
    MPIX_RMW_LOR,
    MPIX_RMW_LXOR,
    MPIX_RMW_BAND,
    MPIX_RMW_BOR,
    MPIX_RMW_BXOR,
    MPIX_RMW_SWAP,
} MPIX_Rmw_op;

typedef enum MPIX_Rmw2_op {
    MPIX_RMW2_MASK_SWAP = 1,
    MPIX_RMW2_COMP_SWAP_LT,
    MPIX_RMW2_COMP_SWAP_LE,
    MPIX_RMW2_COMP_SWAP_E,
    MPIX_RMW2_COMP_SWAP_GE,
    MPIX_RMW2_COMP_SWAP_GT,
    MPIX_RMW2_COMP_SWAP_NE,
} MPIX_Rmw2_op;

/* An assert bit beside MPI_MODE_NOCHECK; chosen clear of every MPI_MODE_* value. */
#define MPIX_MODE_PASSIVE_EPOCH_IMPLICIT 0x10000

int MPIX_Rmw(const void *operand_addr, int count, MPI_Datatype datatype, void *result_addr, int target_rank,
             MPI_Aint target_disp, int assert, MPIX_Rmw_op op, MPI_Win win);
int MPIX_Rmw2(const void *operand_addr, int count, MPI_Datatype datatype, const void *operand2_addr,
              void *result_addr, int target_rank, MPI_Aint target_disp, int assert, MPIX_Rmw2_op op,
              MPI_Win win);
int MPIX_Rrmw(const void *operand_addr, int count, MPI_Datatype datatype, void *result_addr, int target_rank,
              MPI_Aint target_disp, int assert, MPIX_Rmw_op op, MPI_Win win, MPI_Request *request);
int MPIX_Rrmw2(const void *operand_addr, int count, MPI_Datatype datatype, const void *operand2_addr,
               void *result_addr, int target_rank, MPI_Aint target_disp, int assert, MPIX_Rmw2_op op,
               MPI_Win win, MPI_Request *request);

/* *flag = 1 when win is served by osc/fabric (the calls go through its engine), 0 when
 * they fall back to standard MPI. */
int MPIX_Rmw_native(MPI_Win win, int *flag);

#ifdef __cplusplus
}
#endif

#endif
