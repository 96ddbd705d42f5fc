// The provider's contract as the engine reads it (provider_contract.h), without a
// fabric: each fi_info here is what a production provider hands back, as its man page
// and sources describe it (DESIGN.md's table), so the rules that follow from it can be
// checked where no such NIC is.
#include "catch_compat.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <string>

#include "../../osc_fabric/engine/mr.h"
#include "../../osc_fabric/engine/provider_contract.h"

using namespace oscf;

namespace {
// An fi_info as `prov` returns it: RDM, 1 MiB messages, the given mr_mode and mode.
info_ptr returned(const char *prov, uint64_t mr_mode, uint64_t mode, size_t inject = 64) {
    info_ptr i(fi_allocinfo());
    REQUIRE(i);
    i->fabric_attr->prov_name = strdup(prov);
    i->domain_attr->mr_mode = static_cast<int>(mr_mode);
    i->domain_attr->mr_key_size = 8;
    i->mode = mode;
    i->ep_attr->max_msg_size = 1 << 20;
    i->tx_attr->inject_size = inject;
    i->tx_attr->iov_limit = 1;
    i->tx_attr->rma_iov_limit = 1;
    return i;
}
}  // namespace

TEST_CASE("the hints ask for every registration and mode bit the engine honours, and no other",
          "[contract]") {
    info_ptr h = contract_hints();
    REQUIRE(h);
    const uint64_t mr = static_cast<uint64_t>(h->domain_attr->mr_mode);
    CHECK((mr & FI_MR_ENDPOINT));     // cxi demands it
    CHECK((mr & FI_MR_PROV_KEY));     // efa demands it
    CHECK((mr & FI_MR_VIRT_ADDR));    // efa demands it
    CHECK((mr & FI_MR_ALLOCATED));    // cxi and efa demand it
    CHECK((mr & FI_MR_LOCAL));        // efa-direct demands it; rxm over verbs then skips its own
    CHECK((h->mode & FI_CONTEXT));    // psm2, psm3 with FI_MSG
    CHECK((h->mode & FI_CONTEXT2));   // opx, efa-direct
    CHECK((h->mode & FI_ASYNC_IOV));  // opx
    CHECK(h->ep_attr->type == FI_EP_RDM);
    // osc_fabric_mr_local 0: every other bit as before, FI_MR_LOCAL left to the provider.
    info_ptr without = contract_hints(false);
    CHECK(static_cast<uint64_t>(without->domain_attr->mr_mode) == (mr & ~uint64_t{FI_MR_LOCAL}));
}

TEST_CASE("FI_MR_LOCAL handed back: every local buffer is to be described", "[contract]") {
    ProviderContract c = read_contract(
        *returned("verbs;ofi_rxm", FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0));
    CHECK(c.mr_local);
    CHECK_FALSE(read_contract(*returned("tcp;ofi_rxm", 0, 0)).mr_local);
}

TEST_CASE("cxi: regions are bound and enabled, addressed by offset, keys its own when asked", "[contract]") {
    ProviderContract c =
        read_contract(*returned("cxi", FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0));
    CHECK(c.refusal.empty());
    CHECK(c.mr_endpoint);
    CHECK_FALSE(c.virt_addr);
    CHECK(c.prov_key);
    CHECK(c.context_bytes == 0);
    // Without PROV_KEY the keys are ours, and must fit its key size.
    info_ptr client = returned("cxi", FI_MR_ENDPOINT | FI_MR_ALLOCATED, 0);
    client->domain_attr->mr_key_size = 4;
    c = read_contract(*client);
    CHECK_FALSE(c.prov_key);
    CHECK(c.mr_key_size == 4);
}

TEST_CASE("opx: FI_CONTEXT2 and FI_ASYNC_IOV handed back unasked are honoured, not refused", "[contract]") {
    // opx 1.22 hands back its configured FI_MR_SCALABLE (and FI_MR_HMEM when built with it)
    // and 2-byte keys, whatever the hints say.
    info_ptr i = returned("opx", kMrScalable | FI_MR_HMEM, FI_CONTEXT2 | FI_ASYNC_IOV, 16);
    i->domain_attr->mr_key_size = 2;
    const ProviderContract c = read_contract(*i);
    CHECK(c.refusal.empty());
    CHECK_FALSE(c.virt_addr);
    CHECK_FALSE(c.prov_key);
    CHECK(c.mr_key_size == 2);
    CHECK(c.context_bytes == sizeof(fi_context2));
    CHECK(c.async_iov);
    CHECK(c.inject_size == 16);
}

TEST_CASE("psm3: FI_CONTEXT owns one fi_context of each post", "[contract]") {
    const ProviderContract c = read_contract(*returned("psm3", 0, FI_CONTEXT));
    CHECK(c.refusal.empty());
    CHECK(c.context_bytes == sizeof(fi_context));
    CHECK_FALSE(c.virt_addr);
    CHECK_FALSE(c.prov_key);
}

TEST_CASE("efa: virtual addresses and provider keys", "[contract]") {
    const ProviderContract c =
        read_contract(*returned("efa", FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0, 32));
    CHECK(c.refusal.empty());
    CHECK(c.virt_addr);
    CHECK(c.prov_key);
    CHECK_FALSE(c.mr_endpoint);
}

TEST_CASE("a demand the engine does not meet is refused with the demand named", "[contract]") {
    // An mr_mode bit nothing here obeys (FI_MR_RMA_EVENT).
    ProviderContract c =
        read_contract(*returned("efa", FI_MR_RMA_EVENT | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY, 0));
    CHECK(c.refusal.find("mr_mode bits 0x") != std::string::npos);
    // A mode bit nothing here obeys (FI_MSG_PREFIX).
    c = read_contract(*returned("psm3", 0, FI_MSG_PREFIX));
    CHECK(c.refusal.find("mode bits") != std::string::npos);
    // Writes that complete at transmit, with no read ordered behind them nor FI_FENCE:
    // nothing could prove them delivered.
    c = read_contract(*returned("verbs;ofi_rxm", FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0));
    CHECK(c.refusal.find("transmit") != std::string::npos);
    // efa-direct: FI_MR_LOCAL and FI_CONTEXT2 are met, but its RMA completes at transmit
    // with no ordering, so no flush could be proved.
    info_ptr direct =
        returned("efa", FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, FI_CONTEXT2);
    direct->fabric_attr->name = strdup("efa-direct");
    c = read_contract(*direct);
    CHECK(c.mr_local);
    CHECK(c.refusal.find("transmit") != std::string::npos);
    // What every provider on this machine hands back is served.
    CHECK(read_contract(*returned("tcp;ofi_rxm", 0, 0)).refusal.empty());
    CHECK(read_contract(*returned("shm", FI_MR_VIRT_ADDR, 0)).refusal.empty());
}

TEST_CASE("the legacy FI_MR_BASIC value means virtual addresses and provider keys", "[contract]") {
    const ProviderContract c = read_contract(*returned("sockets", kMrBasic, 0));
    CHECK(c.refusal.empty());
    CHECK(c.virt_addr);
    CHECK(c.prov_key);
    CHECK(read_contract(*returned("sockets", kMrScalable, 0)).refusal.empty());
}

TEST_CASE("atomic ordering counts only where max_order size covers the operation", "[contract]") {
    info_ptr i = returned("tcp;ofi_rxm", 0, 0);
    i->tx_attr->msg_order = FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAW | FI_ORDER_SAS;
    i->ep_attr->max_order_raw_size = 0;  // advertised, but for no size at all
    i->ep_attr->max_order_waw_size = 1 << 20;
    const ProviderContract c = read_contract(*i);
    CHECK((c.atomic_order & OSCF_ORDER_WAW));
    CHECK_FALSE((c.atomic_order & OSCF_ORDER_RAW));
}

TEST_CASE("verbs;ofi_rxm: writes complete at transmit, proved by a read the provider orders behind them",
          "[contract]") {
    info_ptr i = returned("verbs;ofi_rxm", FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0, 16384);
    i->tx_attr->msg_order = FI_ORDER_RAW | FI_ORDER_WAW | FI_ORDER_SAS;
    ProviderContract c = read_contract(*i);
    CHECK(c.refusal.empty());
    CHECK_FALSE(c.writes_delivered);
    CHECK(c.read_after_write);
    // Unordered, FI_FENCE does it.
    i->tx_attr->msg_order = FI_ORDER_SAS;
    i->caps |= FI_FENCE;
    c = read_contract(*i);
    CHECK(c.refusal.empty());
    CHECK_FALSE(c.read_after_write);
    CHECK(c.fence);
    // Every other provider's writes are delivered when they complete.
    CHECK(read_contract(*returned("cxi", FI_MR_ENDPOINT | FI_MR_ALLOCATED, 0)).writes_delivered);
}

TEST_CASE("keys we choose fit the key size and are reused oldest-freed first, never while live",
          "[contract][keys]") {
    ClientKeys keys(1);  // 255 keys: 1..255
    CHECK(keys.limit() == 255);
    std::vector<uint64_t> held(255);
    for (uint64_t &k : held) REQUIRE(keys.take(&k));
    CHECK(held.front() == 1);
    CHECK(held.back() == 255);
    uint64_t k = 0;
    CHECK_FALSE(keys.take(&k));  // all live: refused, not wrapped onto a live one
    keys.give(17);
    keys.give(3);
    REQUIRE(keys.take(&k));
    CHECK(k == 17);  // freed first, reused first
    REQUIRE(keys.take(&k));
    CHECK(k == 3);
    CHECK_FALSE(keys.take(&k));
    // A churn of windows on 2-byte keys (opx) never runs out while few are live at once.
    ClientKeys opx(2);
    uint64_t a = 0, b = 0;
    for (int i = 0; i < 200000; ++i) {
        REQUIRE(opx.take(&a));
        REQUIRE(opx.take(&b));
        CHECK((a != b && a >= 1 && a <= 0xffff && b >= 1 && b <= 0xffff));
        opx.give(a);
        opx.give(b);
    }
    ClientKeys wide(8);
    REQUIRE(wide.take(&k));
    CHECK(k == 1);
}
