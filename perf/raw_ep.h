/*
 * raw_ep.h - the endpoint of the raw libfabric benchmarks (fi_baseline, fi_packed_put):
 * one provider, one CQ for both directions, a table AV holding the one peer. MPI only
 * swaps the endpoint names. Every failure ends the job with fi_strerror's text
 * (fi_check.h).
 */
#ifndef OSC_FABRIC_PERF_RAW_EP_H
#define OSC_FABRIC_PERF_RAW_EP_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

struct raw_ep {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    fi_addr_t peer;
};

/* Opens the first provider fi_getinfo returns for hints (freed here), with a CQ of
 * cq_attr, and enables the endpoint. The hints' tx op_flags are kept in the info the
 * endpoint is made from, as a provider may leave them out of what it returns. */
void raw_ep_open(struct raw_ep *e, struct fi_info *hints, const struct fi_cq_attr *cq_attr);

/* Swaps endpoint names with peer_rank (MPI_COMM_WORLD) and puts the peer in the AV. */
void raw_ep_connect(struct raw_ep *e, int peer_rank);

/* Closes the endpoint, then what it was bound to. Memory regions go first (the caller's). */
void raw_ep_close(struct raw_ep *e);

#endif
