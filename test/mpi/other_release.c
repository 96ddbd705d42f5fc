/*
 * Preloaded into a job (LD_PRELOAD), answers MPI_Get_library_version in libmpi's place
 * with the next release of the same Open MPI series: how a job looks to osc/fabric
 * when the Open MPI it loads into is not the one it was built for. run-help uses it
 * for the "version" help message; nothing else does.
 */
#include <mpi.h>
#include <stdio.h>

int MPI_Get_library_version(char *version, int *resultlen)
{
    *resultlen = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                          "Open MPI v%d.%d.%d, package: a release osc/fabric was not built for",
                          OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION + 1);
    return MPI_SUCCESS;
}
