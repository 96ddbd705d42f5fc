// One element of a reduction: what MPI's predefined ops make of a target value t and
// an origin value o. Shared by the element-wise reductions (atomic_types.cpp) and the
// compare-exchange loops of on-node atomics (node_atomics.cpp), so both compute alike.
#pragma once

#include <type_traits>

#include "osc_fabric/engine.h"

namespace oscf {

// Signed overflow wraps, as MPI implementations do, without undefined behaviour.
template <class T>
T wrap_add(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
T wrap_mul(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// Integers, logicals and bytes. REPLACE and NO_OP are the callers'.
template <class T>
T combine_integer(oscf_op op, T t, T o) {
    switch (op) {
    case OSCF_OP_SUM: return wrap_add(t, o);
    case OSCF_OP_PROD: return wrap_mul(t, o);
    case OSCF_OP_MIN: return o < t ? o : t;
    case OSCF_OP_MAX: return o > t ? o : t;
    case OSCF_OP_LAND: return static_cast<T>(t && o);
    case OSCF_OP_LOR: return static_cast<T>(t || o);
    case OSCF_OP_LXOR: return static_cast<T>(!t != !o);
    case OSCF_OP_BAND: return static_cast<T>(t & o);
    case OSCF_OP_BOR: return static_cast<T>(t | o);
    case OSCF_OP_BXOR: return static_cast<T>(t ^ o);
    default: return t;
    }
}

template <class T>
T combine_floating(oscf_op op, T t, T o) {
    switch (op) {
    case OSCF_OP_SUM: return t + o;
    case OSCF_OP_PROD: return t * o;
    case OSCF_OP_MIN: return o < t ? o : t;
    case OSCF_OP_MAX: return o > t ? o : t;
    default: return t;
    }
}

}  // namespace oscf
