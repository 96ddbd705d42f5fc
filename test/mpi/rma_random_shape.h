/*
 * rma_random shapes: a random layout of n elements of one basic type, expressed both
 * as an MPI (count, datatype) pair and as the byte offsets of its type map in order,
 * so the model can move data exactly as MPI must.  Origin, target and result sides of
 * one operation get independent shapes with the same n (matching signatures).
 */
#ifndef RMA_RANDOM_SHAPE_H
#define RMA_RANDOM_SHAPE_H

#include <stdlib.h>

#include "rma_random_util.h"

enum { SH_BASIC, SH_CONTIG, SH_VECTOR, SH_VECTOR_N, SH_CONTIG_VEC, SH_RESIZED, SH_INDEXED, SH_STRUCT, SH_N };
#define RR_MAXB 8

typedef struct {
    int kind, bt, n;
    int c, b, stride, m, pad; /* vector family: m copies of c blocks of b, stride (elements) */
    int nb, lens[RR_MAXB];    /* indexed/struct blocks, in type-map order */
    long disp[RR_MAXB];       /* element displacement of each block */
    long *off;                /* n byte offsets, type-map order */
    long span;                /* bytes from the buffer start past the last element */
} rr_shape;

static inline long rr_divisor(rr_rng *r, long n)
{
    long d[64];
    int nd = 0;
    for (long i = 1; i <= n && nd < 64; i++)
        if (n % i == 0) d[nd++] = i;
    return d[rr_below(r, nd)];
}

static inline long shape_vec_extent(const rr_shape *sh)
{
    return ((long)(sh->c - 1) * sh->stride + sh->b + sh->pad) * bt_size[sh->bt];
}

/* Fills sh->off and sh->span from the parameters. */
static inline void shape_offsets(rr_shape *sh)
{
    long s = bt_size[sh->bt];
    sh->off = malloc(sizeof(long) * (size_t)(sh->n > 0 ? sh->n : 1));
    long k = 0, span = 0;
    if (sh->kind == SH_INDEXED || sh->kind == SH_STRUCT) {
        for (int q = 0; q < sh->nb; q++)
            for (int i = 0; i < sh->lens[q]; i++) sh->off[k++] = (sh->disp[q] + i) * s;
    } else {
        long ext = shape_vec_extent(sh);
        for (int q = 0; q < sh->m; q++)
            for (int j = 0; j < sh->c; j++)
                for (int i = 0; i < sh->b; i++) sh->off[k++] = q * ext + ((long)j * sh->stride + i) * s;
    }
    for (long i = 0; i < k; i++)
        if (sh->off[i] + s > span) span = sh->off[i] + s;
    sh->span = span;
}

/* Random shape of n elements whose span is at most max_span bytes (the caller makes
 * sure n contiguous elements fit).  Only the contiguous forms if !derived. */
static inline void shape_gen(rr_rng *r, rr_shape *sh, int bt, int n, long max_span, bool derived)
{
    long s = bt_size[bt];
    for (int tries = 0; tries < 6; tries++) {
        memset(sh, 0, sizeof *sh);
        sh->bt = bt;
        sh->n = n;
        sh->kind = derived ? (int)rr_below(r, SH_N) : SH_BASIC;
        sh->m = sh->c = 1;
        sh->b = sh->stride = n;
        long span;
        switch (sh->kind) {
        case SH_BASIC:
        case SH_CONTIG: span = n * s; break;
        case SH_VECTOR:
        case SH_VECTOR_N:
        case SH_CONTIG_VEC:
        case SH_RESIZED: {
            long rest = n;
            if (sh->kind != SH_VECTOR) {
                sh->m = (int)rr_divisor(r, n);
                rest = n / sh->m;
            }
            sh->b = (int)rr_divisor(r, rest);
            sh->c = (int)(rest / sh->b);
            sh->stride = sh->b + (int)rr_range(r, 1, 3);
            if (sh->kind == SH_RESIZED) sh->pad = (int)rr_range(r, 1, 3);
            long body = ((long)(sh->c - 1) * sh->stride + sh->b) * s;
            span = (sh->m - 1) * shape_vec_extent(sh) + body;
            break;
        }
        default: {
            /* Blocks cut at random points, laid out in memory with gaps, then listed
             * in a shuffled order so type-map order differs from memory order. */
            sh->nb = (int)rr_range(r, 1, n < RR_MAXB ? n : RR_MAXB);
            int cuts[RR_MAXB + 1];
            cuts[0] = 0;
            cuts[sh->nb] = n;
            for (int q = 1; q < sh->nb; q++)
                cuts[q] = cuts[q - 1] + 1 + (int)rr_below(r, n - cuts[q - 1] - (sh->nb - q));
            long pos = 0;
            for (int q = 0; q < sh->nb; q++) {
                sh->lens[q] = cuts[q + 1] - cuts[q];
                sh->disp[q] = pos;
                pos += sh->lens[q] + rr_below(r, 3);
            }
            for (int q = sh->nb - 1; q > 0; q--) {
                int j = (int)rr_below(r, q + 1);
                int tl = sh->lens[q];
                sh->lens[q] = sh->lens[j];
                sh->lens[j] = tl;
                long td = sh->disp[q];
                sh->disp[q] = sh->disp[j];
                sh->disp[j] = td;
            }
            span = 0;
            for (int q = 0; q < sh->nb; q++)
                if ((sh->disp[q] + sh->lens[q]) * s > span) span = (sh->disp[q] + sh->lens[q]) * s;
            break;
        }
        }
        if (span <= max_span) {
            shape_offsets(sh);
            return;
        }
    }
    memset(sh, 0, sizeof *sh);
    sh->kind = SH_BASIC;
    sh->bt = bt;
    sh->n = n;
    sh->m = sh->c = 1;
    sh->b = sh->stride = n;
    shape_offsets(sh);
}

static inline void shape_free(rr_shape *sh)
{
    free(sh->off);
    sh->off = NULL;
}

/* The (count, datatype) pair describing the shape; *derived says whether to free it. */
/* The shape's datatype over base: a resized vector's extent is shape_vec_extent times
 * extent_scale bytes, a struct's displacements are in units of disp_scale bytes. */
static inline int shape_build_over(const rr_shape *sh, MPI_Datatype base, long extent_scale, long disp_scale,
                                   int *count, MPI_Datatype *dt, bool *derived)
{
    MPI_Datatype v;
    int rc = MPI_SUCCESS;
    *derived = sh->kind != SH_BASIC;
    *count = 1;
    switch (sh->kind) {
    case SH_BASIC:
        *count = sh->n;
        *dt = base;
        return MPI_SUCCESS;
    case SH_CONTIG: rc = MPI_Type_contiguous(sh->n, base, dt); break;
    case SH_VECTOR: rc = MPI_Type_vector(sh->c, sh->b, sh->stride, base, dt); break;
    case SH_VECTOR_N:
        rc = MPI_Type_vector(sh->c, sh->b, sh->stride, base, dt);
        *count = sh->m;
        break;
    case SH_CONTIG_VEC:
        rc = MPI_Type_vector(sh->c, sh->b, sh->stride, base, &v);
        if (rc == MPI_SUCCESS) rc = MPI_Type_contiguous(sh->m, v, dt);
        MPI_Type_free(&v);
        break;
    case SH_RESIZED:
        rc = MPI_Type_vector(sh->c, sh->b, sh->stride, base, &v);
        if (rc == MPI_SUCCESS) rc = MPI_Type_create_resized(v, 0, shape_vec_extent(sh) * extent_scale, dt);
        MPI_Type_free(&v);
        *count = sh->m;
        break;
    case SH_INDEXED: {
        int d[RR_MAXB];
        for (int q = 0; q < sh->nb; q++) d[q] = (int)sh->disp[q];
        rc = MPI_Type_indexed(sh->nb, sh->lens, d, base, dt);
        break;
    }
    default: {
        MPI_Aint d[RR_MAXB];
        MPI_Datatype ts[RR_MAXB];
        for (int q = 0; q < sh->nb; q++) {
            d[q] = sh->disp[q] * disp_scale;
            ts[q] = base;
        }
        rc = MPI_Type_create_struct(sh->nb, sh->lens, d, ts, dt);
        break;
    }
    }
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(dt);
    return rc;
}

static inline int shape_build(const rr_shape *sh, int *count, MPI_Datatype *dt, bool *derived)
{
    return shape_build_over(sh, bt_mpi(sh->bt), 1, bt_size[sh->bt], count, dt, derived);
}

static inline void shape_desc(const rr_shape *sh, char *buf, size_t len)
{
    const char *tn = bt_name[sh->bt];
    switch (sh->kind) {
    case SH_BASIC: snprintf(buf, len, "%d x %s", sh->n, tn); break;
    case SH_CONTIG: snprintf(buf, len, "contig(%d,%s)", sh->n, tn); break;
    case SH_VECTOR: snprintf(buf, len, "vector(%d,%d,%d,%s)", sh->c, sh->b, sh->stride, tn); break;
    case SH_VECTOR_N:
        snprintf(buf, len, "%d x vector(%d,%d,%d,%s)", sh->m, sh->c, sh->b, sh->stride, tn);
        break;
    case SH_CONTIG_VEC:
        snprintf(buf, len, "contig(%d,vector(%d,%d,%d,%s))", sh->m, sh->c, sh->b, sh->stride, tn);
        break;
    case SH_RESIZED:
        snprintf(buf, len, "%d x resized(vector(%d,%d,%d,%s),ext %ld)", sh->m, sh->c, sh->b, sh->stride, tn,
                 shape_vec_extent(sh));
        break;
    default:
        snprintf(buf, len, "%s(%d blocks,%d x %s)", sh->kind == SH_INDEXED ? "indexed" : "struct", sh->nb,
                 sh->n, tn);
        break;
    }
}

#endif /* RMA_RANDOM_SHAPE_H */
