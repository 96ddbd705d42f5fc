/*
 * One clear message when the user selected osc/fabric explicitly (--mca osc fabric)
 * and it cannot serve a window: a topic of help-osc-fabric.txt (installed beside this
 * plugin), rendered by Open MPI's show_help. Only the window's rank 0 prints it: every
 * rank opens the same provider the same way, so once per job says it all. When
 * osc/fabric was not asked for by name it declines silently, as other components do,
 * and the reason is only in the verbose output.
 */
#include "osc_fabric.h"

#include <dlfcn.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/argv.h"
#include "opal/util/show_help.h"

static char last_reason[512]; /* the engine's last word on why it failed */
static bool shown;

void ompi_osc_fabric_help_note(const char *msg)
{
    snprintf(last_reason, sizeof last_reason, "%s", msg);
}

bool ompi_osc_fabric_named(const char **list)
{
    *list = "";
    int idx = mca_base_var_find("ompi", "osc", NULL, NULL);
    const char **value = NULL;
    if (idx < 0 || OPAL_SUCCESS != mca_base_var_get_value(idx, &value, NULL, NULL) || NULL == value ||
        NULL == *value || '^' == (*value)[0])
        return false;
    *list = *value;
    char **names = opal_argv_split(*value, ',');
    bool found = false;
    for (int i = 0; NULL != names && NULL != names[i]; i++) found |= 0 == strcmp(names[i], "fabric");
    opal_argv_free(names);
    return found;
}

/* show_help looks in Open MPI's own data directory; ours is beside the plugin. */
static void add_help_dir(void)
{
    Dl_info where;
    if (0 == dladdr((void *)&mca_osc_fabric_component, &where) || NULL == where.dli_fname) return;
    char *path = strdup(where.dli_fname);
    if (NULL == path) return;
    (void)opal_show_help_add_dir(dirname(path));
    free(path);
}

static const char *or_unset(const char *s)
{
    return NULL != s && '\0' != *s ? s : "(unset)";
}

/* Renders a topic of our help file and writes it to stderr, which mpirun forwards. Not
 * opal_show_help: Open MPI 4.1's mpirun loses or garbles such messages now and then (an
 * unpack error in its log instead, for its own components' messages too). */
static void show(const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    char *text = opal_show_help_vstring("help-osc-fabric.txt", topic, true, ap);
    va_end(ap);
    if (NULL == text) return;
    fputs(text, stderr);
    fflush(stderr);
    free(text);
}

void ompi_osc_fabric_cannot_serve(int status, const char *why, int comm_rank)
{
    const char *list;
    if (shown || !ompi_osc_fabric_named(&list)) return;
    shown = true;
    /* The default error handler aborts the job right after this decline, and mpirun
     * stops forwarding output once a process has aborted: every rank waits a moment so
     * rank 0's message gets out first. A failure path, once per process. */
    if (0 != comm_rank) {
        usleep(500 * 1000);
        return;
    }
    add_help_dir();
    char host[256] = "";
    (void)gethostname(host, sizeof host - 1);
    const ompi_osc_fabric_component_t *c = &mca_osc_fabric_component;
    const char *reason = '\0' != last_reason[0] ? last_reason : why;
    if (!c->version_ok) {
        char running[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0;
        (void)MPI_Get_library_version(running, &len);
        char *eol = strchr(running, ',');
        if (NULL != eol) *eol = '\0';
        char built[64];
        snprintf(built, sizeof built, "v%d.%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                 OMPI_RELEASE_VERSION);
        show("version", list, built, running, host);
    } else if (OSCF_ERR_NO_PROVIDER == status) {
        show("no-provider", list, host, reason, or_unset(getenv("FI_PROVIDER")),
             or_unset(c->provider_include));
    } else if (OSCF_ERR_FABRIC == status) {
        show("fabric-failed", list, host, reason);
    } else {
        show("declined", list, host, why);
    }
    usleep(200 * 1000);
}
