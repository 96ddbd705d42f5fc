// One element of a reduction: what MPI's predefined ops make of a target value t and
// an origin value o, and of a conditional swap. Shared by the element-wise reductions (atomic_types.cpp) and the
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

// One element of a conditional swap: what target t becomes, given the value v a swap
// stores and the comperand or mask c. Values compare (floating point: -0 equals 0, NaN
// equals nothing); a mask selects bits.
template <class T>
T swap_element(oscf_swap s, T t, T v, T c) {
    switch (s) {
    case OSCF_SWAP_EQ: return c == t ? v : t;
    case OSCF_SWAP_NE: return c != t ? v : t;
    case OSCF_SWAP_LT: return c < t ? v : t;
    case OSCF_SWAP_LE: return c <= t ? v : t;
    case OSCF_SWAP_GT: return c > t ? v : t;
    case OSCF_SWAP_GE: return c >= t ? v : t;
    case OSCF_SWAP_MASK:
        if constexpr (std::is_integral_v<T>)
            return static_cast<T>((v & c) | (t & ~c));
        else
            return t;  // swap_allowed() admits masks on integers only
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
