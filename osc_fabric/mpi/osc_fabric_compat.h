/*
 * What differs between the Open MPI releases this layer builds against (4.1.x and
 * 5.0.x), keyed on the version of the headers meson found; the rest of the layer is
 * written once. The osc module and component interface is the same in both.
 */
#ifndef OSC_FABRIC_COMPAT_H
#define OSC_FABRIC_COMPAT_H

#include "ompi_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/util/info.h"
#include "opal/util/info_subscriber.h"

#if OMPI_MAJOR_VERSION >= 5
/* 5.0: info values are reference-counted strings; subscribers see const strings. */
typedef const char *oscf_info_string;

static inline void oscf_info_get(opal_info_t *info, const char *key, char *value, size_t size, int *flag)
{
    opal_cstring_t *s = NULL;
    *flag = 0;
    if (OPAL_SUCCESS != opal_info_get(info, key, &s, flag) || !*flag || NULL == s) {
        *flag = 0;
        return;
    }
    snprintf(value, size, "%s", s->string);
    OBJ_RELEASE(s);
}
#elif OMPI_MAJOR_VERSION == 4
typedef char *oscf_info_string;

static inline void oscf_info_get(opal_info_t *info, const char *key, char *value, size_t size, int *flag)
{
    /* 4.1 copies at most valuelen characters and terminates the string itself. */
    opal_info_get(info, key, (int)size - 1, value, flag);
}
#else
#error "osc/fabric builds against Open MPI 4.1.x or 5.0.x"
#endif

#endif
