// The element types and reductions of the accumulate family, independent of any path:
// sizes, the libfabric datatype and op each maps to, which (op, type) pairs MPI allows,
// and the element-wise reduction the active-message path applies at the target.
// Stateless and thread-safe.
#pragma once

#include <rdma/fi_domain.h>

#include <cstddef>

#include "osc_fabric/engine.h"

namespace oscf {

size_t type_size(oscf_type t);
bool valid_type(int t);
bool valid_op(int op);

// MPI's table of allowed reductions per type class (MPI-4.0 §6.9.2), REPLACE and NO_OP
// allowed for every type, and compare-and-swap for integer, logical and byte types.
bool op_allowed(oscf_op op, oscf_type t);
bool cas_allowed(oscf_type t);
// Conditional swaps (oscf_swap_allowed's rule).
bool valid_swap(int s);
bool swap_allowed(oscf_swap s, oscf_type t);

// libfabric equivalents, or -1 where libfabric has none (pair types, MINLOC/MAXLOC).
int fi_type_of(oscf_type t);
int fi_op_of(oscf_op op);
int fi_swap_of(oscf_swap s);

// dst[i] = src[i] for i < count: the bytes, but of a pair type only its value and index.
// The padding beside them (MPI_SHORT_INT's hole, MPI_DOUBLE_INT's tail) may hold an
// application's own field, in a window or a result buffer, and MPI leaves it alone.
void copy_elements(oscf_type t, void *dst, const void *src, size_t count);
// The same over `bytes` bytes (fetched old values); bytes that are not whole elements of a
// known type are copied as they are.
void copy_element_bytes(oscf_type t, void *dst, const void *src, size_t bytes);

// target[i] = origin[i] (op) target[i] for i < count. NO_OP leaves target alone.
// Callers guarantee op_allowed(op, t) and exclusive access to target.
void apply_reduction(oscf_op op, oscf_type t, void *target, const void *origin, size_t count);

// Conditional swaps of count elements (reduce_ops.h, swap_element), old values to
// result when it is not null. Callers guarantee swap_allowed(s, t) and exclusive access.
void apply_swap(oscf_swap s, oscf_type t, void *target, const void *value, const void *compare, void *result,
                size_t count);

}  // namespace oscf
