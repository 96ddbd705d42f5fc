/*
 * The datatypes MPIX_Rmw and MPIX_Rmw2 accept and what each op allows on them
 * (include/mpix_fabric.h has the table), for the library's checks and its fallback.
 */
#ifndef MPIX_RMW_TYPES_H
#define MPIX_RMW_TYPES_H

#include <stddef.h>

#include "mpix_fabric.h"

typedef enum rmw_kind {
    RMW_SIGNED, /* C and multi-language integers */
    RMW_UNSIGNED,
    RMW_FLOATING, /* float and double: what CPUs and fabrics compare and swap */
    RMW_LONG_DOUBLE,
    RMW_COMPLEX,
    RMW_LOGICAL, /* MPI_C_BOOL */
    RMW_BYTE,
    RMW_OTHER, /* any other predefined type: MPIX_RMW_SWAP only */
} rmw_kind;

typedef struct rmw_type {
    rmw_kind kind;
    size_t size;
} rmw_type;

/* MPI_SUCCESS and *out for a predefined datatype, MPI_ERR_TYPE for a derived one. */
int rmw_type_of(MPI_Datatype dt, rmw_type *out);
/* MPI_SUCCESS, or MPI_ERR_OP for an op outside the enum or not allowed on the type. */
int rmw_op_check(int op, const rmw_type *t);  /* an MPIX_Rmw_op */
int rmw2_op_check(int op, const rmw_type *t); /* an MPIX_Rmw2_op */
/* The MPI reduction of an MPIX_Rmw op (MPIX_RMW_INC: MPI_SUM, of ones). */
MPI_Op rmw_mpi_op(MPIX_Rmw_op op);
/* count ones of type t (integers, floating point, complex), for MPIX_RMW_INC's origin.
 * They stay valid for the life of the process, as a non-blocking accumulate's origin
 * must until it completes: one buffer per type, replaced by one twice as large when a
 * call needs more, the old ones kept. NULL when out of memory. */
const void *rmw_ones(const rmw_type *t, int count);
/* The unsigned integer datatype as wide as t (1, 2, 4 or 8 bytes), for compare-and-swap
 * of t's bits; MPI_DATATYPE_NULL for other widths. */
MPI_Datatype rmw_bits_type(const rmw_type *t);
/* What one element becomes under op (MPIX_Rmw2's rule): *target (old) with value and
 * comperand or mask. Writes the new element to out. */
void rmw2_element(MPIX_Rmw2_op op, const rmw_type *t, const void *target, const void *value,
                  const void *compare, void *out);

#endif
