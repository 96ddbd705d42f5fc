// The wrapper objects. Each wrapper starts with the libfabric fid struct the application holds, so
// the application's pointer is the wrapper's address (the classes are non-polymorphic and the fid is
// their first member). Each owns its inner fid through fid_ptr; members are declared parent first so
// children close first. A parent counts its live children and refuses to close (-FI_EBUSY) while
// any remain. Thread-safety: like the profiles we claim (FI_THREAD_DOMAIN), one thread per domain at
// a time; only the report path and the outstanding-context set are locked.
#pragma once

#include "profiles.h"
#include "rules.h"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <cstdio>
#include <deque>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace strict {

template <class Fid>
struct fid_closer {
    void operator()(Fid *f) const noexcept {
        int ret = fi_close(&f->fid);
        if (ret) std::fprintf(stderr, "strict: closing an inner fid failed: %s\n", fi_strerror(-ret));
    }
};
template <class Fid>
using fid_ptr = std::unique_ptr<Fid, fid_closer<Fid>>;

struct info_deleter {
    void operator()(fi_info *i) const noexcept { fi_freeinfo(i); }
};
using info_ptr = std::unique_ptr<fi_info, info_deleter>;

// Recovers the wrapper from the fid the application passed back (see the header comment).
template <class W, class F>
W *owner(F *f) {
    return reinterpret_cast<W *>(f);
}

// Unimplemented ops table entries: -FI_ENOSYS for any signature.
template <class F>
struct nosys;
template <class R, class... A>
struct nosys<R (*)(A...)> {
    static R fn(A...) { return static_cast<R>(-FI_ENOSYS); }
};
#define STRICT_NOSYS(ops, member) ::strict::nosys<decltype(ops::member)>::fn

const char *inner_prov_name();  // OSCF_STRICT_INNER or "tcp;ofi_rxm"

struct Fabric {
    fid_fabric fab{};
    const profile *prof;
    fid_ptr<fid_fabric> inner;
    int children = 0;
};

struct Ep;
struct Mr;

struct Domain {
    fid_domain dom{};
    Fabric *fabric;
    const profile *prof;
    info_ptr inner_info;  // what the inner provider granted; endpoints are opened from it
    fid_ptr<fid_domain> inner;
    uint64_t mr_mode;  // as returned to the application
    uint64_t mode;     // as returned to the application
    uint64_t caps;
    uint64_t inner_mr_mode;
    size_t inner_inject;
    std::unordered_set<const void *> regions;  // live Mr wrappers: the only descs we accept
    std::unordered_map<uint64_t, Mr *> keys;   // key -> region, for key-in-use
    uint64_t next_key = 0x5e1ec7000;           // provider keys we hand out; never 0 or 1
    // VA profile over an offset-based inner provider (tcp;ofi_rxm): our provider keys carry the
    // region's base address in their upper 48 bits, so any initiator can turn a VA into an offset.
    bool va_emulated = false;
    int children = 0;
};

struct Av {
    fid_av av{};
    Domain *domain;
    fid_ptr<fid_av> inner;
};

// One posted operation. Its address is the inner provider's context: it starts with room for the
// inner provider's own FI_CONTEXT2 share, so any inner mode is satisfied.
struct OpRecord {
    fi_context2 inner_ctx;
    Ep *ep = nullptr;
    void *app_ctx = nullptr;
    bool report = true;  // the application asked for (or did not suppress) a completion
    bool tx = true;
    size_t ctx_share = 0;  // >0: check the stamped context at completion
    // FI_ASYNC_IOV: the application's arrays and what they held at post.
    struct snapshot {
        const void *where;
        std::vector<unsigned char> bytes;
    };
    std::vector<snapshot> snaps;
    std::vector<unsigned char> bounce;  // emulated inject payload
    // Its endpoint was closed first: the operation is gone with it, so is any completion.
    bool orphaned = false;
};

struct Cq {
    fid_cq cq{};
    Domain *domain;
    fid_ptr<fid_cq> inner;
    fi_cq_format format;
    size_t entry_size;
    std::deque<fi_cq_err_entry> errors;  // errors we made up (broken contexts, changed iovs)
    int binds = 0;
};

struct Ep {
    fid_ep ep{};
    Domain *domain;
    const profile *prof;
    fid_ptr<fid_ep> inner;
    uint64_t tx_op_flags;
    uint64_t rx_op_flags;
    bool tx_selective = false, rx_selective = false;
    Cq *tx_cq = nullptr, *rx_cq = nullptr;
    size_t outstanding_tx = 0;  // for the FI_FENCE emulation
    // Operations posted and not completed: closing the endpoint ends them, and their
    // contexts are the application's again.
    std::unordered_set<OpRecord *> live;
    int bound_mrs = 0;
};

struct Mr {
    fid_mr mr{};
    Domain *domain;
    fid_ptr<fid_mr> inner;
    std::vector<iovec> iov;
    uint64_t access;
    uint64_t offset;
    uint64_t key;  // the key the application sees
    bool bound = false, enabled = false;
    Ep *ep = nullptr;
};

// Factories used by the ops tables of the parent objects.
int fabric_open(fi_fabric_attr *attr, fid_fabric **fabric, void *context);
int domain_open(fid_fabric *fabric, fi_info *info, fid_domain **dom, void *context);
int av_open(fid_domain *domain, fi_av_attr *attr, fid_av **av, void *context);
int cq_open(fid_domain *domain, fi_cq_attr *attr, fid_cq **cq, void *context);
int ep_open(fid_domain *domain, fi_info *info, fid_ep **ep, void *context);
int mr_reg(fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset, uint64_t requested_key,
           uint64_t flags, fid_mr **mr, void *context);
int mr_regv(fid *fid, const iovec *iov, size_t count, uint64_t access, uint64_t offset,
            uint64_t requested_key, uint64_t flags, fid_mr **mr, void *context);
int mr_regattr(fid *fid, const fi_mr_attr *attr, uint64_t flags, fid_mr **mr);
int query_atomic(fid_domain *domain, fi_datatype datatype, fi_op op, fi_atomic_attr *attr, uint64_t flags);

// Shared by msg.cpp, rma.cpp and atomic.cpp (ep.cpp).
extern fi_ops_msg g_msg_ops;
extern fi_ops_rma g_rma_ops;
extern fi_ops_atomic g_atomic_ops;

// Checks a local buffer against the domain's regions; `need` is the local access it requires.
int check_desc(Ep &ep, const char *what, const void *buf, size_t len, void *desc, uint64_t need);
// Translates an application desc to the inner one (nullptr when there is none).
void *inner_desc(Ep &ep, void *desc);
int check_remote_key(Ep &ep, uint64_t key);
// The inner provider's remote address for an application's remote address under `key`.
uint64_t inner_raddr(const Ep &ep, uint64_t addr, uint64_t key);
// Context, fence and async-iov bookkeeping around one post. begin() returns a record or sets *err.
OpRecord *begin_op(Ep &ep, void *app_ctx, uint64_t flags, bool tx, int *err);
void add_snapshot(OpRecord &rec, const void *where, size_t bytes);
// Held by the entry points that take buffers, not arrays (fi_send, fi_read, fi_atomic and
// their v and data forms): the arrays they build on their own stack for the message form
// are ours, and FI_ASYNC_IOV is about the application's only.
struct OwnArrays {
    OwnArrays();
    ~OwnArrays();
};
// Post-time checks shared by all data operations (msg.cpp). Each returns 0 or the error.
int check_fence(Ep &ep, uint64_t *flags);  // strips FI_FENCE; -FI_EAGAIN while earlier ops run
int check_counts(Ep &ep, size_t iov_count, size_t rma_iov_count, size_t total_len);
int check_inject(Ep &ep, uint64_t flags, size_t total_len);
// Copies iov data into rec.bounce when an FI_INJECT payload is beyond the inner inject size;
// returns true (and strips FI_INJECT) when the bounce buffer replaces the application's iov.
bool bounce_inject(Ep &ep, OpRecord &rec, const iovec *iov, size_t count, size_t total, uint64_t *flags);
size_t iov_total(const iovec *iov, size_t count);
// Undoes begin_op when the inner post failed.
void abort_op(OpRecord *rec);
// Called from the CQ with the record of a completed op: returns false when the op broke a rule
// detected only now (then *err is filled for an error completion).
bool finish_op(OpRecord *rec, int *err);

}  // namespace strict
