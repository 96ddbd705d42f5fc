/*
 * Info keys. Open MPI's core reads only its own "accumulate_order"; the standard's
 * keys are ours to read. Every key we honour is subscribed, so MPI_Win_get_info
 * reports the value in force; all are fixed at window creation, so MPI_Win_set_info
 * keeps that value (the standard lets an implementation ignore a changed hint).
 * Values are parsed by the engine (engine/info.cpp), where they are unit tested.
 */
#include "osc_fabric.h"

#include <stdio.h>
#include <string.h>

#include "opal/util/output.h"
#include "osc_fabric_compat.h"

typedef int (*parse_fn)(const char *value, unsigned *out);

static int parse_bool(const char *value, unsigned *out)
{
    if (0 == strcmp(value, "true"))
        *out = 1;
    else if (0 == strcmp(value, "false"))
        *out = 0;
    else
        return OSCF_ERR_INFO;
    return OSCF_OK;
}

/* A byte count; a hint only: accumulates are atomic per element whatever it says. */
static int parse_count(const char *value, unsigned *out)
{
    return oscf_parse_accumulate_granularity(value, out);
}

static const struct {
    const char *key;
    const char *fallback; /* reported when the user gave none */
    parse_fn parse;
} keys[OMPI_OSC_FABRIC_INFO_KEYS] = {
    {"accumulate_ordering", "rar,raw,war,waw", oscf_parse_accumulate_ordering},
    {"accumulate_ops", "same_op_no_op", oscf_parse_accumulate_ops},
    {"no_locks", "false", parse_bool},
    {"same_size", "false", parse_bool},
    {"same_disp_unit", "false", parse_bool},
    {"alloc_shared_noncontig", "false", parse_bool},
    {"mpi_accumulate_granularity", "0", parse_count},
};

int ompi_osc_fabric_read_info(struct opal_info_t *info, ompi_osc_fabric_module_t *module,
                              unsigned *accumulate_ordering)
{
    for (int k = 0; k < OMPI_OSC_FABRIC_INFO_KEYS; k++) {
        char value[OPAL_MAX_INFO_VAL + 1];
        int flag = 0;
        unsigned parsed = 0;
        if (NULL != info) oscf_info_get(info, keys[k].key, value, sizeof value, &flag);
        if (!flag) {
            strncpy(value, keys[k].fallback, sizeof value - 1);
            value[sizeof value - 1] = '\0';
        }
        if (OSCF_OK != keys[k].parse(value, &parsed)) {
            opal_output_verbose(1, mca_osc_fabric_component.output,
                                "osc/fabric: info %s=\"%s\" is not a valid value", keys[k].key, value);
            return MPI_ERR_INFO_VALUE;
        }
        /* Report the canonical spelling of what is in force. */
        if (0 == k) {
            *accumulate_ordering = parsed;
            oscf_format_accumulate_ordering(parsed, value, sizeof value);
        } else if (parse_count == keys[k].parse) {
            snprintf(value, sizeof value, "%u", parsed);
        }
        /* Valid values are short (the longest is "rar,raw,war,waw"). */
        snprintf(module->info[k], sizeof module->info[k], "%s", value);
    }
    return OMPI_SUCCESS;
}

static oscf_info_string value_in_force(opal_infosubscriber_t *obj, oscf_info_string key,
                                       oscf_info_string value)
{
    struct ompi_win_t *win = (struct ompi_win_t *)obj;
    ompi_osc_fabric_module_t *module = (ompi_osc_fabric_module_t *)win->w_osc_module;
    for (int k = 0; NULL != module && k < OMPI_OSC_FABRIC_INFO_KEYS; k++) {
        if (0 == strcmp(key, keys[k].key)) return module->info[k];
    }
    return value;
}

int ompi_osc_fabric_subscribe_info(struct ompi_win_t *win, ompi_osc_fabric_module_t *module)
{
    for (int k = 0; k < OMPI_OSC_FABRIC_INFO_KEYS; k++) {
        int rc =
            opal_infosubscribe_subscribe(&win->super, (char *)keys[k].key, module->info[k], value_in_force);
        if (OMPI_SUCCESS != rc) return rc;
    }
    return OMPI_SUCCESS;
}
