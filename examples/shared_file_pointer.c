/*
 * shared_file_pointer: MPI-IO's shared file pointer (MPI_File_write_shared,
 * MPI_File_write_ordered) on plain POSIX files, built on MPIX_Rmw
 * (include/mpix_fabric.h).
 *
 * The pointer is one int64 in a window at rank 0. write_shared claims its bytes with a
 * single atomic fetch-and-add, MPIX_Rmw(SUM, len) in an implicit epoch, and pwrite()s
 * at the offset it got back: writers never overlap and never wait for each other.
 * write_ordered (collective) places every rank's data as if the ranks had written in
 * rank order from the current pointer: MPI_Exscan gives each rank its place in the
 * group, rank 0 moves the pointer once by the total, and broadcasts where it was.
 *
 * The program writes records (header: rank, sequence number, length; then a payload
 * derived from them) with write_shared, then one write_ordered, then more
 * write_shared, and rank 0 reads the file back: every record intact and present once,
 * the ordered section in rank order with the earlier records before it and the later
 * ones after it, and the file exactly as long as the final shared pointer.
 *
 *   mpirun -np 4 --mca osc fabric ./shared_file_pointer [file]
 * Without a file a temporary one in /tmp is used (and removed): fine on one node; on
 * several nodes give a path on a shared file system.
 */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "mpix_fabric.h"

/* ------------------------------------------------------ the shared pointer */

/* One int64 at rank 0 of win: the next free byte of the file. */
static MPI_Win sfp_create(MPI_Comm comm)
{
    int rank;
    int64_t *ptr;
    MPI_Win win;
    MPI_Comm_rank(comm, &rank);
    MPI_Win_allocate(rank == 0 ? sizeof(int64_t) : 0, sizeof(int64_t), MPI_INFO_NULL, comm, &ptr, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        *ptr = 0;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(comm);
    return win;
}

/* Moves the pointer by len and returns where it was: one atomic round trip. */
static int64_t sfp_claim(MPI_Win win, int64_t len)
{
    int64_t off;
    MPIX_Rmw(&len, 1, MPI_INT64_T, &off, 0, 0, MPIX_MODE_PASSIVE_EPOCH_IMPLICIT, MPIX_RMW_SUM, win);
    return off;
}

static void pwrite_all(int fd, const unsigned char *buf, int64_t len, int64_t off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, buf, (size_t)len, (off_t)off);
        if (n <= 0) {
            perror("pwrite");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        buf += n, off += n, len -= n;
    }
}

/* As MPI_File_write_shared: independent, the data lands at the shared pointer. */
static void write_shared(MPI_Win win, int fd, const unsigned char *buf, int64_t len)
{
    pwrite_all(fd, buf, len, sfp_claim(win, len));
}

/* As MPI_File_write_ordered: collective, rank 0's data first, then rank 1's, ... */
static void write_ordered(MPI_Win win, MPI_Comm comm, int fd, const unsigned char *buf, int64_t len)
{
    int rank;
    int64_t before = 0, total = 0, base = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Exscan(&len, &before, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rank == 0) before = 0; /* MPI_Exscan leaves rank 0's undefined */
    MPI_Reduce(&len, &total, 1, MPI_INT64_T, MPI_SUM, 0, comm);
    if (rank == 0) base = sfp_claim(win, total); /* one move for the whole group */
    MPI_Bcast(&base, 1, MPI_INT64_T, 0, comm);
    pwrite_all(fd, buf, len, base + before);
}

/* ----------------------------------------------------------------- records */

enum { EARLY = 6, LATE = 6, NSEQ = EARLY + LATE, ORDERED = 0xffff, MAX_PAYLOAD = 300 };

struct header {
    uint32_t rank, seq, len;
};

static uint32_t payload_len(uint32_t rank, uint32_t seq)
{
    return 1 + (rank * 37u + seq * 101u) % MAX_PAYLOAD;
}

static unsigned char payload_byte(uint32_t rank, uint32_t seq, uint32_t j)
{
    return (unsigned char)(rank * 59u + seq * 13u + j * 7u + (j >> 8));
}

static int64_t make_record(unsigned char *buf, uint32_t rank, uint32_t seq)
{
    struct header h = {rank, seq, payload_len(rank, seq)};
    memcpy(buf, &h, sizeof h);
    for (uint32_t j = 0; j < h.len; j++) buf[sizeof h + j] = payload_byte(rank, seq, j);
    return (int64_t)(sizeof h + h.len);
}

/* ------------------------------------------------------------- the check */

static bool bad(int64_t off, const char *what)
{
    printf("shared_file_pointer: at file offset %lld: %s\n", (long long)off, what);
    return false;
}

/* One record at p (avail bytes left): intact? Its size in *len. */
static bool record_ok(const unsigned char *p, int64_t avail, int nranks, struct header *h, int64_t *len)
{
    if (avail < (int64_t)sizeof *h) return false;
    memcpy(h, p, sizeof *h);
    if (h->rank >= (uint32_t)nranks || (h->seq >= NSEQ && h->seq != ORDERED) ||
        h->len != payload_len(h->rank, h->seq) || avail < (int64_t)(sizeof *h + h->len))
        return false;
    for (uint32_t j = 0; j < h->len; j++)
        if (p[sizeof *h + j] != payload_byte(h->rank, h->seq, j)) return false;
    *len = (int64_t)(sizeof *h + h->len);
    return true;
}

/* Walks the file record by record. section: 0 before the ordered records, 1 in them
 * (next: the rank expected next), 2 after. */
static bool check_file(const unsigned char *data, int64_t size, int nranks)
{
    unsigned char *seen = calloc((size_t)nranks * NSEQ, 1);
    int section = 0, next = 0;
    bool ok = true;
    for (int64_t off = 0, len = 0; ok && off < size; off += len) {
        struct header h;
        if (!record_ok(data + off, size - off, nranks, &h, &len)) {
            ok = bad(off, "not an intact record");
        } else if (h.seq == ORDERED) {
            section = section == 0 ? 1 : section;
            if (section != 1 || (int)h.rank != next)
                ok = bad(off, "ordered section out of rank order or not contiguous");
            if (++next == nranks) section = 2;
        } else if (section != (h.seq < EARLY ? 0 : 2)) {
            ok = bad(off, "a write_shared record on the wrong side of the ordered section");
        } else if (seen[h.rank * NSEQ + h.seq]++) {
            ok = bad(off, "a record written twice");
        }
    }
    for (int i = 0; ok && i < nranks * NSEQ; i++)
        if (!seen[i]) ok = bad(size, "a write_shared record is missing");
    if (ok && section != 2) ok = bad(size, "the ordered section is missing or incomplete");
    free(seen);
    return ok;
}

static bool verify(const char *path, int nranks, int64_t pointer)
{
    int64_t want = 0;
    for (int r = 0; r < nranks; r++) {
        want += (int64_t)sizeof(struct header) + payload_len((uint32_t)r, ORDERED);
        for (uint32_t s = 0; s < NSEQ; s++)
            want += (int64_t)sizeof(struct header) + payload_len((uint32_t)r, s);
    }
    FILE *f = fopen(path, "rb");
    unsigned char *data = malloc((size_t)want + 1);
    int64_t size = f ? (int64_t)fread(data, 1, (size_t)want + 1, f) : -1;
    if (f) fclose(f);
    bool ok = size == want && pointer == size && check_file(data, size, nranks);
    if (size != want || pointer != size)
        printf("shared_file_pointer: file size %lld, shared pointer %lld, expected %lld\n", (long long)size,
               (long long)pointer, (long long)want);
    free(data);
    return ok;
}

/* ------------------------------------------------------------------ main */

/* Rank 0 creates (or truncates) the file, everyone opens it by the name rank 0 sends. */
static int open_file(int rank, int argc, char **argv, char *path, size_t len)
{
    int fd = -1;
    if (rank == 0) {
        snprintf(path, len, "%s", argc > 1 ? argv[1] : "/tmp/shared_fp_XXXXXX");
        fd = argc > 1 ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : mkstemp(path);
        if (fd < 0) {
            perror(path);
            path[0] = '\0';
        }
    }
    MPI_Bcast(path, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank != 0 && path[0]) fd = open(path, O_WRONLY);
    return fd;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks, opened, all_opened;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char path[4096];
    int fd = open_file(rank, argc, argv, path, sizeof path);
    opened = fd >= 0;
    MPI_Allreduce(&opened, &all_opened, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_opened) MPI_Abort(MPI_COMM_WORLD, 1);

    MPI_Win win = sfp_create(MPI_COMM_WORLD);
    unsigned char rec[sizeof(struct header) + MAX_PAYLOAD];
    for (uint32_t s = 0; s < EARLY; s++) write_shared(win, fd, rec, make_record(rec, (uint32_t)rank, s));
    write_ordered(win, MPI_COMM_WORLD, fd, rec, make_record(rec, (uint32_t)rank, ORDERED));
    for (uint32_t s = EARLY; s < NSEQ; s++) write_shared(win, fd, rec, make_record(rec, (uint32_t)rank, s));
    close(fd); /* before the reader opens: what a shared file system needs */
    MPI_Barrier(MPI_COMM_WORLD);

    int ok = 1;
    if (rank == 0) {
        ok = verify(path, nranks, sfp_claim(win, 0)); /* adding 0 reads the pointer */
        if (argc < 2) unlink(path);
        printf("shared_file_pointer on %d ranks: %s\n", nranks, ok ? "ok" : "WRONG");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return ok ? 0 : 1;
}
