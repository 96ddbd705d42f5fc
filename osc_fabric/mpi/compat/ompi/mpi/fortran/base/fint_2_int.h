/*
 * Stand-in for a header Debian's libopenmpi-dev does not ship. ompi/op/op.h includes
 * it only for OMPI_INT_2_FINT, used by the inline ompi_op_reduce for Fortran user
 * ops; with MPI_Fint == int (Debian's build) the conversion is the identity.
 */
#ifndef OSC_FABRIC_COMPAT_FINT_2_INT_H
#define OSC_FABRIC_COMPAT_FINT_2_INT_H
#define OMPI_INT_2_FINT(a) (a)
#endif
