/* raw_ep.c - see raw_ep.h. */
#include "raw_ep.h"

#include <mpi.h>

#include <rdma/fi_cm.h>

#include <string.h>

#include "bench.h"
#include "fi_check.h"

void raw_ep_open(struct raw_ep *e, struct fi_info *hints, const struct fi_cq_attr *cq_attr)
{
    memset(e, 0, sizeof *e);
    FI_CK(fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, hints, &e->info));
    e->info->tx_attr->op_flags |= hints->tx_attr->op_flags;
    fi_freeinfo(hints);

    FI_CK(fi_fabric(e->info->fabric_attr, &e->fabric, NULL));
    FI_CK(fi_domain(e->fabric, e->info, &e->domain, NULL));
    struct fi_cq_attr cq = *cq_attr;
    FI_CK(fi_cq_open(e->domain, &cq, &e->cq, NULL));
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = 2};
    FI_CK(fi_av_open(e->domain, &av_attr, &e->av, NULL));
    FI_CK(fi_endpoint(e->domain, e->info, &e->ep, NULL));
    FI_CK(fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV));
    FI_CK(fi_ep_bind(e->ep, &e->av->fid, 0));
    FI_CK(fi_enable(e->ep));
}

void raw_ep_connect(struct raw_ep *e, int peer_rank)
{
    char name[256], peer_name[256];
    size_t len = sizeof name;
    unsigned long mylen, peerlen = 0;

    FI_CK(fi_getname(&e->ep->fid, name, &len));
    mylen = (unsigned long)len;
    MPI_CK(MPI_Sendrecv(&mylen, 1, MPI_UNSIGNED_LONG, peer_rank, 0, &peerlen, 1, MPI_UNSIGNED_LONG, peer_rank,
                        0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (peerlen > sizeof peer_name) bench_die(BENCH_EXIT_FAILURE, "peer address too long (%lu)", peerlen);
    MPI_CK(MPI_Sendrecv(name, (int)mylen, MPI_BYTE, peer_rank, 1, peer_name, (int)peerlen, MPI_BYTE,
                        peer_rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    const int n = fi_av_insert(e->av, peer_name, 1, &e->peer, 0, NULL);
    if (n != 1) fi_check_fail(n < 0 ? n : -FI_EINVAL, "fi_av_insert", __FILE__, __LINE__);
}

void raw_ep_close(struct raw_ep *e)
{
    FI_CK(fi_close(&e->ep->fid));
    FI_CK(fi_close(&e->av->fid));
    FI_CK(fi_close(&e->cq->fid));
    FI_CK(fi_close(&e->domain->fid));
    FI_CK(fi_close(&e->fabric->fid));
    fi_freeinfo(e->info);
    memset(e, 0, sizeof *e);
}
