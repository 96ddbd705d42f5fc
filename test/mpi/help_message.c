/*
 * Creates one window and reports how MPI_Win_allocate ended; run-help checks what the
 * user sees around it. With "fatal" the default error handler stays, so a window osc
 * cannot serve aborts the job (as in most programs); otherwise the call returns its
 * error and the program ends cleanly. It also says whether libfabric is in the process
 * before and after MPI_Init and after the window (Open MPI 5 as Debian 13 builds it links
 * libfabric itself), and the window's name ("osc/fabric window N" for ours, "rdma window
 * N" for osc/rdma's), so run-help can tell who served it and whether an osc/fabric nobody
 * asked for stayed out of the way.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char *libfabric_loaded(void)
{
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (NULL == h) return "no";
    dlclose(h);
    return "yes";
}

int main(int argc, char **argv)
{
    const char *at_start = libfabric_loaded();
    MPI_Init(&argc, &argv);
    if (argc < 2 || 0 != strcmp(argv[1], "fatal")) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (0 == rank) {
        printf("help_message: libfabric loaded before MPI_Init: %s\n", at_start);
        printf("help_message: libfabric loaded after MPI_Init: %s\n", libfabric_loaded());
    }
    void *base = NULL;
    MPI_Win win;
    int rc = MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (0 == rank) printf("help_message: MPI_Win_allocate %s\n", MPI_SUCCESS == rc ? "succeeded" : "failed");
    if (MPI_SUCCESS == rc) {
        char name[MPI_MAX_OBJECT_NAME] = "";
        int len = 0;
        MPI_Win_get_name(win, name, &len);
        if (0 == rank) {
            printf("help_message: libfabric loaded after the window: %s\n", libfabric_loaded());
            printf("help_message: window name '%s'\n", name);
        }
        MPI_Win_free(&win);
    }
    MPI_Finalize();
    return 0;
}
