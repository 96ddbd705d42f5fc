/*
 * Creates one window and reports how MPI_Win_allocate ended; run-help checks what the
 * user sees around it. With "fatal" the default error handler stays, so a window osc
 * cannot serve aborts the job (as in most programs); otherwise the call returns its
 * error and the program ends cleanly.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 2 || 0 != strcmp(argv[1], "fatal")) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    void *base = NULL;
    MPI_Win win;
    int rc = MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (0 == rank) printf("help_message: MPI_Win_allocate %s\n", MPI_SUCCESS == rc ? "succeeded" : "failed");
    if (MPI_SUCCESS == rc) MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
