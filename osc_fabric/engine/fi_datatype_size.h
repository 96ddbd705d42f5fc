// Bytes of one element of a libfabric atomic datatype: the length a buffer of count
// elements spans. Header-only, so the strict test provider shares it.
#pragma once

#include <rdma/fi_atomic.h>

#include <cstddef>

namespace oscf {

// 0 for a type newer than these headers.
inline size_t fi_datatype_size(fi_datatype dt) {
    switch (dt) {
    case FI_INT8:
    case FI_UINT8: return 1;
    case FI_INT16:
    case FI_UINT16: return 2;
    case FI_INT32:
    case FI_UINT32:
    case FI_FLOAT: return 4;
    case FI_INT64:
    case FI_UINT64:
    case FI_DOUBLE:
    case FI_FLOAT_COMPLEX: return 8;
    case FI_DOUBLE_COMPLEX: return 16;
    case FI_LONG_DOUBLE: return sizeof(long double);
    case FI_LONG_DOUBLE_COMPLEX: return 2 * sizeof(long double);
    default: return 0;
    }
}

}  // namespace oscf
