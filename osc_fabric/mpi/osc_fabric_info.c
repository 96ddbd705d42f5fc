/*
 * Info keys. Open MPI's core reads only its own "accumulate_order"; the standard's
 * "accumulate_ordering" is ours to parse (the engine does, see engine/info.cpp). Every
 * key we honour is subscribed, so MPI_Win_get_info reports the value in force and
 * MPI_Win_set_info cannot change what is fixed at creation.
 */
#include "osc_fabric.h"

#include "opal/util/info.h"
#include "opal/util/info_subscriber.h"
#include "opal/util/output.h"

int ompi_osc_fabric_read_info(struct opal_info_t *info, unsigned *accumulate_ordering)
{
    char value[OPAL_MAX_INFO_VAL + 1];
    int flag = 0;
    *accumulate_ordering = OSCF_ORDER_DEFAULT;
    if (NULL == info) return OMPI_SUCCESS;
    opal_info_get(info, "accumulate_ordering", OPAL_MAX_INFO_VAL, value, &flag);
    if (!flag) return OMPI_SUCCESS;
    int rc = oscf_parse_accumulate_ordering(value, accumulate_ordering);
    if (OSCF_OK != rc) {
        opal_output_verbose(1, mca_osc_fabric_component.output,
                            "osc/fabric: accumulate_ordering \"%s\" is not \"none\" or a list of "
                            "rar, raw, war, waw", value);
    }
    return ompi_osc_fabric_status(rc);
}

/* accumulate_ordering is fixed at creation: whatever MPI_Win_set_info asks, the value
 * in force stays. */
static char *accumulate_ordering_changed(opal_infosubscriber_t *obj, char *key, char *value)
{
    (void) key;
    (void) value;
    struct ompi_win_t *win = (struct ompi_win_t *) obj;
    ompi_osc_fabric_module_t *module = (ompi_osc_fabric_module_t *) win->w_osc_module;
    return module->accumulate_ordering;
}

int ompi_osc_fabric_subscribe_info(struct ompi_win_t *win, ompi_osc_fabric_module_t *module)
{
    return opal_infosubscribe_subscribe(&win->super, "accumulate_ordering",
                                        module->accumulate_ordering, accumulate_ordering_changed);
}
