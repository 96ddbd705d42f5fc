// Specifications of the strict provider: for each rule, a correct call succeeds and completes with
// the application's own context, and a deliberately wrong call fails naming the rule. Runs over
// FI_PROVIDER_PATH=<dir of libstrict-fi.so>, with two endpoints of one process talking to each other.
#define CATCH_CONFIG_MAIN
#include "catch_compat.h"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// libfabric opens the provider RTLD_LOCAL: reach its counter through the same file.
uint64_t violations() {
    using fn = uint64_t (*)();
    static fn f = [] {
        const char *dir = std::getenv("FI_PROVIDER_PATH");
        std::string path = std::string(dir ? dir : ".") + "/libstrict-fi.so";
        void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
        return h ? reinterpret_cast<fn>(dlsym(h, "strict_violations")) : nullptr;
    }();
    return f ? f() : ~0ull;
}

const char *registered_name(const char *profile) {
    std::string p = profile;
    if (p == "efa-direct") return "efa";
    if (p == "verbs-rxm") return "verbs";  // see profiles.cpp: "verbs;ofi_rxm" cannot be registered
    return profile;
}

fi_info *hints_for(const char *profile, uint64_t caps, uint64_t mr_mode, uint64_t mode) {
    setenv("OSCF_STRICT_PROFILE", profile, 1);
    fi_info *h = fi_allocinfo();
    h->caps = caps;
    h->mode = mode;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = static_cast<int>(mr_mode);
    return h;
}

// The production name the provider registered under (fixed at load, by the first profile).
// Other providers answer too: keep only the strict provider's entries (by its production name).
int getinfo(fi_info *hints, fi_info **out) {
    fi_info *all = nullptr;
    *out = nullptr;
    int ret = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &all);
    if (ret) return ret;
    const char *want = registered_name(std::getenv("OSCF_STRICT_PROFILE"));
    fi_info **tail = out;
    for (fi_info *i = all, *next; i; i = next) {
        next = i->next;
        i->next = nullptr;
        if (std::strcmp(i->fabric_attr->prov_name, want) == 0) {
            *tail = i;
            tail = &i->next;
        } else {
            fi_freeinfo(i);
        }
    }
    return *out ? 0 : -FI_ENODATA;
}

// Retries a post while the inner provider (or the fence emulation) asks for progress.
template <class F>
ssize_t post(fid_cq *cq, F f) {
    ssize_t ret;
    for (int i = 0; i < 1000000 && (ret = f()) == -FI_EAGAIN; ++i) fi_cq_read(cq, nullptr, 0);
    return ret;
}

constexpr uint64_t kCaps =
    FI_MSG | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND | FI_RECV;

// Fabric, domain, one CQ and AV, two endpoints that know each other.
struct world {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_cq *cq = nullptr;
    fid_av *av = nullptr;
    fid_ep *ep[2] = {nullptr, nullptr};
    fi_addr_t addr[2] = {0, 0};
    int status = -1;

    world(const char *profile, uint64_t caps, uint64_t mr_mode, uint64_t mode) {
        fi_info *h = hints_for(profile, caps, mr_mode, mode);
        status = getinfo(h, &info);
        fi_freeinfo(h);
        if (status) return;
        if ((status = fi_fabric(info->fabric_attr, &fabric, nullptr))) return;
        if ((status = fi_domain(fabric, info, &domain, nullptr))) return;
        fi_cq_attr ca{};
        ca.format = FI_CQ_FORMAT_MSG;
        if ((status = fi_cq_open(domain, &ca, &cq, nullptr))) return;
        fi_av_attr aa{};
        aa.type = FI_AV_TABLE;
        if ((status = fi_av_open(domain, &aa, &av, nullptr))) return;
        for (int i = 0; i < 2; ++i) {
            if ((status = fi_endpoint(domain, info, &ep[i], nullptr))) return;
            if ((status = fi_ep_bind(ep[i], &av->fid, 0))) return;
            if ((status = fi_ep_bind(ep[i], &cq->fid, FI_TRANSMIT | FI_RECV))) return;
            if ((status = fi_enable(ep[i]))) return;
        }
        for (int i = 0; i < 2; ++i) {
            char name[256];
            size_t len = sizeof(name);
            if ((status = fi_getname(&ep[i]->fid, name, &len))) return;
            if (fi_av_insert(av, name, 1, &addr[i], 0, nullptr) != 1) {
                status = -FI_EINVAL;
                return;
            }
        }
    }
    ~world() {
        for (fid_ep *e : ep)
            if (e) fi_close(&e->fid);
        if (av) fi_close(&av->fid);
        if (cq) fi_close(&cq->fid);
        if (domain) fi_close(&domain->fid);
        if (fabric) fi_close(&fabric->fid);
        if (info) fi_freeinfo(info);
    }
    bool va() const { return info->domain_attr->mr_mode & FI_MR_VIRT_ADDR; }

    // Polls until one completion or one error arrives; returns its context and error (0: success).
    void *wait(int *err, fi_cq_msg_entry *out = nullptr) {
        for (int spin = 0; spin < 2000000; ++spin) {
            fi_cq_msg_entry e{};
            ssize_t n = fi_cq_read(cq, &e, 1);
            if (n == 1) {
                *err = 0;
                if (out) *out = e;
                return e.op_context;
            }
            if (n == -FI_EAVAIL) {
                fi_cq_err_entry ee{};
                fi_cq_readerr(cq, &ee, 0);
                *err = ee.err;
                return ee.op_context;
            }
        }
        *err = -FI_ETIMEDOUT;
        return nullptr;
    }

    fid_mr *reg(void *buf, size_t len, uint64_t key, bool enable = true) {
        fid_mr *mr = nullptr;
        uint64_t acc = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND | FI_RECV;
        if (fi_mr_reg(domain, buf, len, acc, 0, key, 0, &mr, nullptr)) return nullptr;
        if (enable && (info->domain_attr->mr_mode & FI_MR_ENDPOINT)) {
            fi_mr_bind(mr, &ep[1]->fid, 0);
            fi_mr_enable(mr);
        }
        return mr;
    }
    uint64_t raddr(void *base) const { return va() ? reinterpret_cast<uint64_t>(base) : 0; }
};

}  // namespace

TEST_CASE("cxi refuses hints without FI_MR_ENDPOINT", "[cxi][getinfo]") {
    fi_info *out = nullptr;
    fi_info *h = hints_for("cxi", kCaps, FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY, 0);
    CHECK(getinfo(h, &out) == -FI_ENODATA);
    fi_freeinfo(h);
    h = hints_for("cxi", kCaps, FI_MR_ENDPOINT | FI_MR_ALLOCATED, 0);
    REQUIRE(getinfo(h, &out) == 0);
    CHECK(out->domain_attr->mr_mode == (FI_MR_ENDPOINT | FI_MR_ALLOCATED));
    CHECK(out->tx_attr->inject_size == 192);
    CHECK(out->tx_attr->iov_limit == 1);
    fi_freeinfo(out);
    fi_freeinfo(h);
}

TEST_CASE("psm3 refuses hints with FI_MSG but no FI_CONTEXT", "[psm3][getinfo]") {
    fi_info *out = nullptr;
    fi_info *h = hints_for("psm3", kCaps, 0, 0);
    CHECK(getinfo(h, &out) == -FI_ENODATA);
    fi_freeinfo(h);
    h = hints_for("psm3", kCaps, 0, FI_CONTEXT);
    REQUIRE(getinfo(h, &out) == 0);
    CHECK((out->mode & FI_CONTEXT));
    CHECK(out->domain_attr->mr_mode == 0);
    CHECK(out->tx_attr->inject_size == 64);
    fi_freeinfo(out);
    fi_freeinfo(h);
}

TEST_CASE("opx returns FI_CONTEXT2|FI_ASYNC_IOV even when the hints lack them", "[opx][getinfo]") {
    fi_info *out = nullptr;
    fi_info *h = hints_for("opx", kCaps, 0, 0);
    REQUIRE(getinfo(h, &out) == 0);
    CHECK((out->mode & (FI_CONTEXT2 | FI_ASYNC_IOV)) == (FI_CONTEXT2 | FI_ASYNC_IOV));
    CHECK(out->tx_attr->inject_size == 16);
    fi_freeinfo(out);
    fi_freeinfo(h);
}

TEST_CASE("efa-direct offers no FI_ATOMIC", "[efa-direct][getinfo]") {
    fi_info *out = nullptr;
    fi_info *h = hints_for("efa-direct", kCaps,
                           FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, FI_CONTEXT2);
    CHECK(getinfo(h, &out) == -FI_ENODATA);
    fi_freeinfo(h);
}

TEST_CASE("an unknown profile offers nothing", "[getinfo]") {
    fi_info *out = nullptr;
    fi_info *h = hints_for("no-such-profile", kCaps, 0, FI_CONTEXT | FI_CONTEXT2);
    h->fabric_attr->prov_name = strdup("cxi");
    CHECK(getinfo(h, &out) == -FI_ENODATA);
    fi_freeinfo(h);
}

TEST_CASE("cxi: a region used before fi_mr_enable is refused", "[cxi][strict]") {
    world w("cxi", kCaps, FI_MR_ENDPOINT | FI_MR_ALLOCATED, 0);
    REQUIRE(w.status == 0);
    std::vector<char> src(64, 'a'), dst(64, 0);
    fid_mr *good = w.reg(dst.data(), dst.size(), 100);
    REQUIRE(good);
    int ctx = 0, err = 1;
    REQUIRE(post(w.cq, [&] {
                return fi_write(w.ep[0], src.data(), src.size(), nullptr, w.addr[1], w.raddr(dst.data()),
                                fi_mr_key(good), &ctx);
            }) == 0);
    CHECK(w.wait(&err) == &ctx);
    CHECK(err == 0);

    fid_mr *late = w.reg(src.data(), src.size(), 101, false);
    REQUIRE(late);
    uint64_t before = violations();
    CHECK(fi_write(w.ep[0], src.data(), src.size(), fi_mr_desc(late), w.addr[1], 0, fi_mr_key(good), &ctx) ==
          -FI_EINVAL);
    CHECK(violations() == before + 1);
    CHECK(fi_mr_enable(late) == -FI_EINVAL);  // mr-not-bound
    CHECK(violations() == before + 2);
    fi_close(&late->fid);
    fi_close(&good->fid);
}

TEST_CASE("cxi: a client key already in use is refused with -FI_ENOKEY", "[cxi][strict]") {
    world w("cxi", kCaps, FI_MR_ENDPOINT | FI_MR_ALLOCATED, 0);
    REQUIRE(w.status == 0);
    std::vector<char> a(64), b(64);
    fid_mr *m1 = w.reg(a.data(), a.size(), 200);
    REQUIRE(m1);
    uint64_t before = violations();
    CHECK(w.reg(b.data(), b.size(), 200) == nullptr);
    CHECK(violations() == before + 1);
    CHECK(w.reg(b.data(), b.size(), 1ull << 40) == nullptr);  // key-too-large: 4-byte keys
    CHECK(violations() == before + 2);
    fi_close(&m1->fid);
}

TEST_CASE("cxi: a write with two local iovs breaks iov-limit", "[cxi][strict]") {
    world w("cxi", kCaps, FI_MR_ENDPOINT | FI_MR_ALLOCATED, 0);
    REQUIRE(w.status == 0);
    std::vector<char> src(64, 'x'), dst(64);
    fid_mr *mr = w.reg(dst.data(), dst.size(), 300);
    REQUIRE(mr);
    iovec iov[2] = {{src.data(), 32}, {src.data() + 32, 32}};
    int ctx;
    uint64_t before = violations();
    CHECK(fi_writev(w.ep[0], iov, nullptr, 2, w.addr[1], 0, fi_mr_key(mr), &ctx) == -FI_EINVAL);
    CHECK(violations() == before + 1);
    // msg-size: never dereferenced, refused before the inner provider sees it.
    CHECK(fi_write(w.ep[0], src.data(), 1ull << 33, nullptr, w.addr[1], 0, fi_mr_key(mr), &ctx) ==
          -FI_EINVAL);
    CHECK(violations() == before + 2);
    fi_close(&mr->fid);
}

TEST_CASE("cxi: an inject beyond 192 bytes is refused, one within is carried out", "[cxi][strict]") {
    world w("cxi", kCaps, FI_MR_ENDPOINT | FI_MR_ALLOCATED, 0);
    REQUIRE(w.status == 0);
    std::vector<char> src(256, 'i'), dst(256, 0);
    fid_mr *mr = w.reg(dst.data(), dst.size(), 400);
    REQUIRE(mr);
    // 150 bytes: above the inner tcp;ofi_rxm inject size (64), so emulated.
    REQUIRE(post(w.cq, [&] {
                return fi_inject_write(w.ep[0], src.data(), 150, w.addr[1], 0, fi_mr_key(mr));
            }) == 0);
    int ctx, err;
    REQUIRE(post(w.cq, [&] {
                return fi_read(w.ep[0], dst.data() + 200, 1, nullptr, w.addr[1], 0, fi_mr_key(mr), &ctx);
            }) == 0);
    CHECK(w.wait(&err) == &ctx);
    uint64_t before = violations();
    CHECK(fi_inject_write(w.ep[0], src.data(), 193, w.addr[1], 0, fi_mr_key(mr)) == -FI_EINVAL);
    CHECK(violations() == before + 1);
    fi_close(&mr->fid);
}

TEST_CASE("cxi: PROD is not a Cassini atomic; SUM on int64 is", "[cxi][strict]") {
    world w("cxi", kCaps, FI_MR_ENDPOINT | FI_MR_ALLOCATED, 0);
    REQUIRE(w.status == 0);
    int64_t target = 5, one = 1;
    fid_mr *mr = w.reg(&target, sizeof(target), 500);
    REQUIRE(mr);
    size_t count = 0;
    CHECK(fi_atomicvalid(w.ep[0], FI_INT64, FI_SUM, &count) == 0);
    CHECK(fi_atomicvalid(w.ep[0], FI_INT64, FI_PROD, &count) == -FI_EOPNOTSUPP);
    fi_atomic_attr attr{};
    CHECK(fi_query_atomic(w.domain, FI_INT64, FI_PROD, &attr, 0) == -FI_EOPNOTSUPP);
    int ctx, err;
    REQUIRE(post(w.cq, [&] {
                return fi_atomic(w.ep[0], &one, 1, nullptr, w.addr[1], 0, fi_mr_key(mr), FI_INT64, FI_SUM,
                                 &ctx);
            }) == 0);
    CHECK(w.wait(&err) == &ctx);
    CHECK(err == 0);
    CHECK(target == 6);
    uint64_t before = violations();
    CHECK(fi_atomic(w.ep[0], &one, 1, nullptr, w.addr[1], 0, fi_mr_key(mr), FI_INT64, FI_PROD, &ctx) ==
          -FI_EOPNOTSUPP);
    CHECK(violations() == before + 1);
    fi_close(&mr->fid);
}

TEST_CASE("verbs-rxm: a write asking FI_DELIVERY_COMPLETE is refused", "[verbs-rxm][strict]") {
    world w("verbs-rxm", kCaps, FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0);
    REQUIRE(w.status == 0);
    std::vector<char> src(64, 'd'), dst(64, 0);
    fid_mr *mr = w.reg(dst.data(), dst.size(), 0);
    REQUIRE(mr);
    iovec iov{src.data(), src.size()};
    fi_rma_iov r{w.raddr(dst.data()), src.size(), fi_mr_key(mr)};
    fi_msg_rma m{};
    m.msg_iov = &iov;
    m.iov_count = 1;
    m.addr = w.addr[1];
    m.rma_iov = &r;
    m.rma_iov_count = 1;
    int ctx, err;
    m.context = &ctx;
    REQUIRE(post(w.cq, [&] { return fi_writemsg(w.ep[0], &m, FI_TRANSMIT_COMPLETE | FI_COMPLETION); }) == 0);
    CHECK(w.wait(&err) == &ctx);
    CHECK(err == 0);
    CHECK(dst[10] == 'd');
    uint64_t before = violations();
    CHECK(fi_writemsg(w.ep[0], &m, FI_DELIVERY_COMPLETE | FI_COMPLETION) == -FI_EINVAL);
    CHECK(violations() == before + 1);
    CHECK(fi_writemsg(w.ep[0], &m, FI_FENCE | FI_COMPLETION) == -FI_EINVAL);  // fence-unsupported
    CHECK(violations() == before + 2);
    fi_close(&mr->fid);
}

TEST_CASE("psm3: data operations need a context that is not outstanding", "[psm3][strict]") {
    world w("psm3", kCaps, 0, FI_CONTEXT);
    REQUIRE(w.status == 0);
    char rbuf[16] = {}, sbuf[16] = "hello";
    fi_context rctx, sctx;
    REQUIRE(post(w.cq,
                 [&] { return fi_recv(w.ep[1], rbuf, sizeof(rbuf), nullptr, FI_ADDR_UNSPEC, &rctx); }) == 0);
    uint64_t before = violations();
    CHECK(fi_recv(w.ep[1], rbuf, sizeof(rbuf), nullptr, FI_ADDR_UNSPEC, &rctx) == -FI_EINVAL);  // reused
    CHECK(fi_send(w.ep[0], sbuf, 6, nullptr, w.addr[1], nullptr) == -FI_EINVAL);                // missing
    CHECK(violations() == before + 2);
    REQUIRE(post(w.cq, [&] { return fi_send(w.ep[0], sbuf, 6, nullptr, w.addr[1], &sctx); }) == 0);
    int seen = 0;
    for (int i = 0; i < 2; ++i) {
        int err = 1;
        fi_cq_msg_entry e{};
        void *c = w.wait(&err, &e);
        CHECK(err == 0);
        if (c == &rctx) {
            CHECK(e.len == 6);
            CHECK((e.flags & FI_RECV));
            seen |= 1;
        }
        if (c == &sctx) seen |= 2;
    }
    CHECK(seen == 3);
    CHECK(std::string(rbuf) == "hello");
}

// A closed endpoint takes its posted operations with it (the engine closes one with its
// receives still posted): their contexts are the application's again, and nothing of
// them is reported later.
TEST_CASE("psm3: the contexts of a closed endpoint's operations are free again", "[psm3][strict]") {
    static fi_context rctx;  // outlives the first world: the same object is posted again below
    char rbuf[16] = {};
    const uint64_t before = violations();
    {
        world w("psm3", kCaps, 0, FI_CONTEXT);
        REQUIRE(w.status == 0);
        REQUIRE(post(w.cq, [&] {
                    return fi_recv(w.ep[1], rbuf, sizeof(rbuf), nullptr, FI_ADDR_UNSPEC, &rctx);
                }) == 0);
    }  // closed with the receive posted
    world w("psm3", kCaps, 0, FI_CONTEXT);
    REQUIRE(w.status == 0);
    CHECK(post(w.cq, [&] { return fi_recv(w.ep[1], rbuf, sizeof(rbuf), nullptr, FI_ADDR_UNSPEC, &rctx); }) ==
          0);
    CHECK(violations() == before);
}

// What the provider does not wrap answers -FI_ENOSYS, never a null function.
TEST_CASE("psm3: collectives, which no profile offers here, answer -FI_ENOSYS", "[psm3][strict]") {
    world w("psm3", kCaps, 0, FI_CONTEXT);
    REQUIRE(w.status == 0);
    fi_context ctx;
    CHECK(fi_barrier(w.ep[0], 0, &ctx) == -FI_ENOSYS);
}

TEST_CASE("psm3: an application writing into the provider's context share gets an error", "[psm3][strict]") {
    world w("psm3", kCaps, 0, FI_CONTEXT);
    REQUIRE(w.status == 0);
    char rbuf[16] = {}, sbuf[16] = "x";
    fi_context rctx, sctx;
    REQUIRE(post(w.cq,
                 [&] { return fi_recv(w.ep[1], rbuf, sizeof(rbuf), nullptr, FI_ADDR_UNSPEC, &rctx); }) == 0);
    rctx.internal[0] = nullptr;  // "my own field"
    uint64_t before = violations();
    REQUIRE(post(w.cq, [&] { return fi_send(w.ep[0], sbuf, 2, nullptr, w.addr[1], &sctx); }) == 0);
    int errors = 0;
    for (int i = 0; i < 2; ++i) {
        int err = 0;
        void *c = w.wait(&err);
        if (c == &rctx) CHECK(err == FI_EINVAL);
        if (err) errors++;
    }
    CHECK(errors == 1);
    CHECK(violations() == before + 1);
}

TEST_CASE("opx: an iov array changed before completion is reported", "[opx][strict]") {
    world w("opx", kCaps, 0, 0);
    REQUIRE(w.status == 0);
    std::vector<char> src(64, 'o'), dst(64, 0);
    fid_mr *mr = w.reg(dst.data(), dst.size(), 600);
    REQUIRE(mr);
    iovec iov{src.data(), src.size()};
    fi_rma_iov r{0, src.size(), fi_mr_key(mr)};
    fi_msg_rma m{};
    m.msg_iov = &iov;
    m.iov_count = 1;
    m.addr = w.addr[1];
    m.rma_iov = &r;
    m.rma_iov_count = 1;
    fi_context2 ctx;
    m.context = &ctx;
    int err = 1;
    REQUIRE(post(w.cq, [&] { return fi_writemsg(w.ep[0], &m, FI_COMPLETION); }) == 0);
    CHECK(w.wait(&err) == &ctx);
    CHECK(err == 0);
    uint64_t before = violations();
    REQUIRE(post(w.cq, [&] { return fi_writemsg(w.ep[0], &m, FI_COMPLETION); }) == 0);
    iov.iov_len = 1;  // the application reuses its array too early
    CHECK(w.wait(&err) == &ctx);
    CHECK(err == FI_EINVAL);
    CHECK(violations() == before + 1);
    // inject-too-large: opx injects 16 bytes at most.
    CHECK(fi_inject_write(w.ep[0], src.data(), 17, w.addr[1], 0, fi_mr_key(mr)) == -FI_EINVAL);
    CHECK(violations() == before + 2);
    fi_close(&mr->fid);
}

TEST_CASE("efa-direct: every local buffer needs a covering desc", "[efa-direct][strict]") {
    world w("efa-direct",
            FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND | FI_RECV,
            FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, FI_CONTEXT2);
    REQUIRE(w.status == 0);
    std::vector<char> src(64, 'e'), dst(64, 0);
    fid_mr *smr = w.reg(src.data(), 32, 0);
    fid_mr *dmr = w.reg(dst.data(), dst.size(), 0);
    REQUIRE(smr);
    REQUIRE(dmr);
    fi_context2 ctx;
    int err = 1;
    REQUIRE(post(w.cq, [&] {
                return fi_write(w.ep[0], src.data(), 32, fi_mr_desc(smr), w.addr[1], w.raddr(dst.data()),
                                fi_mr_key(dmr), &ctx);
            }) == 0);
    CHECK(w.wait(&err) == &ctx);
    CHECK(err == 0);
    CHECK(dst[5] == 'e');
    uint64_t before = violations();
    CHECK(fi_write(w.ep[0], src.data(), 32, nullptr, w.addr[1], w.raddr(dst.data()), fi_mr_key(dmr), &ctx) ==
          -FI_EINVAL);  // desc-missing
    CHECK(fi_write(w.ep[0], src.data(), 64, fi_mr_desc(smr), w.addr[1], w.raddr(dst.data()), fi_mr_key(dmr),
                   &ctx) == -FI_EINVAL);  // desc-too-small
    int bogus;
    CHECK(fi_write(w.ep[0], src.data(), 32, &bogus, w.addr[1], w.raddr(dst.data()), fi_mr_key(dmr), &ctx) ==
          -FI_EINVAL);  // desc-wrong
    CHECK(violations() == before + 3);
    fi_close(&smr->fid);
    fi_close(&dmr->fid);
}

TEST_CASE("efa: a write with two remote iovs breaks rma-iov-limit", "[efa][strict]") {
    world w("efa", kCaps, FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0);
    REQUIRE(w.status == 0);
    std::vector<char> src(64, 'f'), dst(64, 0);
    fid_mr *mr = w.reg(dst.data(), dst.size(), 0);
    REQUIRE(mr);
    iovec iov{src.data(), 64};
    fi_rma_iov r[2] = {{w.raddr(dst.data()), 32, fi_mr_key(mr)},
                       {w.raddr(dst.data() + 32), 32, fi_mr_key(mr)}};
    fi_msg_rma m{};
    m.msg_iov = &iov;
    m.iov_count = 1;
    m.addr = w.addr[1];
    m.rma_iov = r;
    m.rma_iov_count = 2;
    int ctx, err = 1;
    m.context = &ctx;
    uint64_t before = violations();
    CHECK(fi_writemsg(w.ep[0], &m, FI_COMPLETION) == -FI_EINVAL);
    CHECK(violations() == before + 1);
    m.rma_iov_count = 1;
    iov.iov_len = 32;
    REQUIRE(post(w.cq, [&] { return fi_writemsg(w.ep[0], &m, FI_COMPLETION | FI_DELIVERY_COMPLETE); }) == 0);
    CHECK(w.wait(&err) == &ctx);
    CHECK(err == 0);
    CHECK(dst[3] == 'f');
    fi_close(&mr->fid);
}
