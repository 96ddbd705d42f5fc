// The contract table. Each fact was read from ofiwg/libfabric (tag in brackets) and is restated
// here in our own words; nothing else in the strict provider hard-codes a provider fact.
#include "profiles.h"

#include <cstring>

namespace strict {
namespace {

// Datatype masks, bit = fi_datatype.
constexpr dt_mask kInts = 0x00ff;   // FI_INT8 .. FI_UINT64
constexpr dt_mask kReal = 0x03ff;   // + FI_FLOAT, FI_DOUBLE
constexpr dt_mask kFcplx = 0x07ff;  // + FI_FLOAT_COMPLEX
constexpr dt_mask kCplx = 0x0fff;   // + FI_DOUBLE_COMPLEX
constexpr dt_mask kLdbl = 1u << FI_LONG_DOUBLE;
constexpr dt_mask kAll = 0x3fff;  // every type of libfabric 1.17

constexpr uint64_t kRdmCommon = FI_MSG | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
                                FI_REMOTE_WRITE | FI_SEND | FI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM;

// The (op, datatype) tables are indexed by fi_op; designated initialisers keep the op visible.
// Cassini's hardware table [v2.3.0 prov/cxi/src/cxip_atomic.c, _cxip_amo_valid]: no PROD, no
// long double; logical and bitwise on integers only; SUM and WRITE also on both complex types;
// READ only as a fetching op; CSWAP/CSWAP_NE on complex too, ordered CSWAPs on reals, MSWAP on ints.
constexpr profile kCxi = {
    "cxi",
    "cxi",
    // caps [v2.3.0 prov/cxi/include/cxip.h CXIP_EP_PRI_CAPS/SEC_CAPS, incl. FI_FENCE]
    kRdmCommon | FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE | FI_MULTI_RECV | FI_RMA_EVENT | FI_FENCE,
    // mr_mode [v2.3.0 prov/cxi/src/cxip_info.c: the info variants all carry FI_MR_ENDPOINT, the
    // default ones FI_MR_ALLOCATED; hints of exactly FI_MR_ENDPOINT get ALLOCATED added (no ODP);
    // PROV_KEY variants are only matched when the hints ask for PROV_KEY]
    FI_MR_ENDPOINT | FI_MR_ALLOCATED,
    FI_MR_ENDPOINT | FI_MR_ALLOCATED,
    FI_MR_PROV_KEY,
    0,
    4,  // client key size: sizeof(uint32_t) [cxip.h CXIP_MR_KEY_SIZE]
    0,
    0,
    0,
    192,  // inject: C_MAX_IDC_PAYLOAD_UNR [cassini-headers cassini_user_defs.h] via CXIP_INJECT_SIZE
    1,
    1,                 // iov_limit, rma_iov_limit [cxip_info.c tx_attr]
    (1ull << 32) - 1,  // CXIP_EP_MAX_MSG_SZ [cxip.h]
    FI_ORDER_SAS | FI_ORDER_WAW | FI_ORDER_RMA_WAW | FI_ORDER_RMA_RAR | FI_ORDER_ATOMIC_WAW |
        FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_RAR,  // CXIP_MSG_ORDER
    0,
    0,
    SIZE_MAX,  // max_order raw/war/waw [cxip_info.c ep_attr: 0, 0, -1]
    true,      // delivery complete [man/fi_cxi.7.md "FI_DELIVERY_COMPLETE"]
    true,      // FI_FENCE [cxip.h CXIP_EP_SEC_CAPS, fi_cxi.7.md]
    {
        {[FI_MIN] = kReal,
         [FI_MAX] = kReal,
         [FI_SUM] = kCplx,
         [FI_PROD] = 0,
         [FI_LOR] = kInts,
         [FI_LAND] = kInts,
         [FI_BOR] = kInts,
         [FI_BAND] = kInts,
         [FI_LXOR] = kInts,
         [FI_BXOR] = kInts,
         [FI_ATOMIC_READ] = 0,
         [FI_ATOMIC_WRITE] = kCplx},
        {[FI_MIN] = kReal,
         [FI_MAX] = kReal,
         [FI_SUM] = kCplx,
         [FI_PROD] = 0,
         [FI_LOR] = kInts,
         [FI_LAND] = kInts,
         [FI_BOR] = kInts,
         [FI_BAND] = kInts,
         [FI_LXOR] = kInts,
         [FI_BXOR] = kInts,
         [FI_ATOMIC_READ] = kCplx,
         [FI_ATOMIC_WRITE] = kCplx},
        {[FI_MIN] = 0,
         [FI_MAX] = 0,
         [FI_SUM] = 0,
         [FI_PROD] = 0,
         [FI_LOR] = 0,
         [FI_LAND] = 0,
         [FI_BOR] = 0,
         [FI_BAND] = 0,
         [FI_LXOR] = 0,
         [FI_BXOR] = 0,
         [FI_ATOMIC_READ] = 0,
         [FI_ATOMIC_WRITE] = 0,
         [FI_CSWAP] = kCplx,
         [FI_CSWAP_NE] = kCplx,
         [FI_CSWAP_LE] = kReal,
         [FI_CSWAP_LT] = kReal,
         [FI_CSWAP_GE] = kReal,
         [FI_CSWAP_GT] = kReal,
         [FI_MSWAP] = kInts},
    },
};

// libfabric's shared software atomics (prov/util/src/util_atomic.c), which efa RDM
// [v2.3.0 prov/efa/src/rdm/efa_rdm_atomic.c: ofi_atomic_valid] and rxm [prov/rxm/src/rxm_atomic.c]
// use. The per-type coverage is the one measured on libfabric 1.17 here (DESIGN.md): no double
// complex, no long double.
#define STRICT_SOFTWARE_ATOMICS                                                                              \
    {                                                                                                        \
        {[FI_MIN] = kReal,   [FI_MAX] = kReal,   [FI_SUM] = kFcplx,    [FI_PROD] = kFcplx,                   \
         [FI_LOR] = kFcplx,  [FI_LAND] = kFcplx, [FI_BOR] = kInts,     [FI_BAND] = kInts,                    \
         [FI_LXOR] = kFcplx, [FI_BXOR] = kInts,  [FI_ATOMIC_READ] = 0, [FI_ATOMIC_WRITE] = kFcplx},          \
            {[FI_MIN] = kReal,   [FI_MAX] = kReal,   [FI_SUM] = kFcplx,         [FI_PROD] = kFcplx,          \
             [FI_LOR] = kFcplx,  [FI_LAND] = kFcplx, [FI_BOR] = kInts,          [FI_BAND] = kInts,           \
             [FI_LXOR] = kFcplx, [FI_BXOR] = kInts,  [FI_ATOMIC_READ] = kFcplx, [FI_ATOMIC_WRITE] = kFcplx}, \
            {[FI_MIN] = 0,          [FI_MAX] = 0,           [FI_SUM] = 0,          [FI_PROD] = 0,            \
             [FI_LOR] = 0,          [FI_LAND] = 0,          [FI_BOR] = 0,          [FI_BAND] = 0,            \
             [FI_LXOR] = 0,         [FI_BXOR] = 0,          [FI_ATOMIC_READ] = 0,  [FI_ATOMIC_WRITE] = 0,    \
             [FI_CSWAP] = kFcplx,   [FI_CSWAP_NE] = kFcplx, [FI_CSWAP_LE] = kReal, [FI_CSWAP_LT] = kReal,    \
             [FI_CSWAP_GE] = kReal, [FI_CSWAP_GT] = kReal,  [FI_MSWAP] = kInts},                             \
    }

constexpr profile kEfa = {
    "efa",
    "efa",
    // caps [v2.3.0 prov/efa/src/efa_prov_info.c efa_prov_info_alloc_for_rdm: MSG, TAGGED, RMA,
    // ATOMIC, SOURCE, MULTI_RECV, DIRECTED_RECV, LOCAL/REMOTE_COMM]
    kRdmCommon | FI_TAGGED | FI_SOURCE | FI_MULTI_RECV | FI_DIRECTED_RECV,
    // mr_mode: the device info has OFI_MR_BASIC_MAP (VIRT_ADDR|ALLOCATED|PROV_KEY) | LOCAL; the
    // RDM path clears FI_MR_LOCAL [efa_prov_info.c]
    FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
    FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
    0,
    0,
    4,  // sizeof(ibv_sge.lkey) [efa_prov_info.c]
    0,
    0,
    0,     // RDM clears FI_CONTEXT2 [efa_prov_info.c]
    4096,  // inject: MIN(MTU - max header, SHM_MAX_INJECT_SIZE 4096) with shm transfer on [efa.h]
    4,
    1,         // EFA_RDM_IOV_LIMIT [rdm/efa_rdm_ope.h]; rma_iov_limit 1 [efa_prov_info.c]
    SIZE_MAX,  // RDM segments messages: UINT64_MAX [efa_prov_info.c]
    FI_ORDER_SAS | FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW,
    4096,
    4096,
    4096,  // max_atomic_size = MTU - headers (device dependent; 4 KiB stands in)
    true,  // EFA_RDM_TX_OP_FLAGS includes FI_DELIVERY_COMPLETE [efa_prov_info.c]
    false,
    STRICT_SOFTWARE_ATOMICS,
};

constexpr profile kEfaDirect = {
    "efa-direct",
    "efa",
    // caps [v2.3.0 efa_prov_info.c efa_prov_info_set_caps... EFA_RDM_CAPS = MSG + SOURCE + LOCAL/
    // REMOTE_COMM; RMA only with RDMA read+write+unsolicited write; no FI_TAGGED, no FI_ATOMIC]
    FI_MSG | FI_SEND | FI_RECV | FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_RMA | FI_READ | FI_WRITE |
        FI_REMOTE_READ | FI_REMOTE_WRITE,
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
    0,
    0,
    4,
    FI_CONTEXT2,
    0,
    FI_CONTEXT2,  // "efa-direct path requires FI_CONTEXT2" [efa_prov_info.c]
    32,           // inline_buf_size of the device (32 on current EFA; device dependent)
    2,
    1,             // max_sq_sge of the device (2 on current EFA; device dependent); rma_iov 1
    (1ull << 30),  // max(port max_msg_sz, max_rdma_size): 1 GiB stands in (device dependent)
    0,             // EFA_MSG_ORDER (0)
    0,
    0,
    0,
    false,  // the device path has only transmit-complete op_flags (EFA_TX_OP_FLAGS)
    false,
    {},  // no FI_ATOMIC
};

constexpr profile kVerbsRxm = {
    // Registered as "verbs": libfabric 1.17's fi_fabric dispatches on the part after the last ';',
    // so an external provider named "verbs;ofi_rxm" would hand its fabrics to the real ofi_rxm.
    "verbs-rxm",
    "verbs",
    // caps: rxm's RDM caps [v2.3.0 prov/rxm/src/rxm_attr.c RXM_TX_CAPS/RX_CAPS]; no FI_FENCE
    kRdmCommon | FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE | FI_MULTI_RECV,
    // verbs asks LOCAL|VIRT_ADDR|ALLOCATED|PROV_KEY [prov/verbs/src/verbs_info.c]; rxm registers
    // bounce buffers itself and absorbs LOCAL, leaving OFI_MR_BASIC_MAP to the application
    FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
    FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
    0,
    0,
    4,  // ibv rkey is 32 bits
    0,
    0,
    0,
    16384,  // rxm_buffer_size default 16384 [prov/rxm/src/rxm_init.c, man/fi_rxm.7.md]
    4,
    1,  // RXM_IOV_LIMIT 4 [rxm.h]; rma_iov = MIN(rxm 4, verbs 1) [rxm_init.c, verbs_info.c]
    SIZE_MAX,
    // rxm hands the core's msg_order through [v1.17.0 prov/rxm/src/rxm_init.c], and verbs's
    // is VERBS_MSG_ORDER [prov/verbs/src/verbs_info.c]: the RAR, RAW and WAW sets (message,
    // RMA and atomic bits of each), RAS, WAS, SAW, SAS; max_order sizes stay 0 here (ours
    // come from the inner provider anyway)
    FI_ORDER_RAR | FI_ORDER_RMA_RAR | FI_ORDER_ATOMIC_RAR | FI_ORDER_RAW | FI_ORDER_RMA_RAW |
        FI_ORDER_ATOMIC_RAW | FI_ORDER_WAW | FI_ORDER_RMA_WAW | FI_ORDER_ATOMIC_WAW | FI_ORDER_RAS |
        FI_ORDER_WAS | FI_ORDER_SAW | FI_ORDER_SAS,
    0,
    0,
    0,
    false,  // RMA writes go straight to the verbs QP: completion at transmit only
    false,
    STRICT_SOFTWARE_ATOMICS,
    // rdm_mr_local = ofi_mr_local(the returned info): with FI_MR_LOCAL asked, rxm hands verbs the
    // application's descriptors for RMA and rendezvous [v1.17.0 prov/rxm/src/rxm_ep.c, rxm_rma.c
    // rxm_ep_rma_reg_iov]; without, it registers every RMA buffer and closes the region at completion
    FI_MR_LOCAL,
};

// psm3's own atomic emulation [v2.3.0 prov/psm3/src/psmx3_atomic.c *_valid_internal]: every type
// but MIN/MAX and ordered CSWAPs exclude complex, MSWAP excludes complex and reals.
constexpr dt_mask kNoCplx = kReal | kLdbl;
constexpr profile kPsm3 = {
    "psm3",
    "psm3",
    // caps [v2.3.0 prov/psm3/src/psmx3.h PSMX3_TX_CAPS/RX_CAPS; no FI_FENCE]
    kRdmCommon | FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE | FI_MULTI_RECV | FI_RMA_EVENT,
    0,
    0,
    0,
    0,  // OFI_MR_SCALABLE|OFI_MR_BASIC: mr_mode 0 for 1.5+ [psmx3_attr.c]
    8,  // sizeof(uint64_t) [psmx3_attr.c]
    FI_CONTEXT,
    FI_MSG | FI_TAGGED,
    FI_CONTEXT,  // FI_CONTEXT when MSG/TAGGED asked [psmx3_attr.c]
    64,          // inject 64 [psmx3_attr.c tx_attr]
    13,
    1,                         // PSMX3_IOV_MAX_COUNT = 64/4 - 3 [psmx3.h]; rma_iov 1 [psmx3_attr.c]
    (1ull << 32) - 1 - 0xfff,  // PSMX3_MAX_MSG_SIZE & ~0xfff [psmx3_attr.c, psmx3.h]
    FI_ORDER_SAS | FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_WAR | FI_ORDER_WAW,  // PSMX3_MSG_ORDER
    4096,
    4096,
    4096,  // PSMX3_RMA_ORDER_SIZE [psmx3.h]
    true,
    false,
    {
        {[FI_MIN] = kNoCplx,
         [FI_MAX] = kNoCplx,
         [FI_SUM] = kAll,
         [FI_PROD] = kAll,
         [FI_LOR] = kAll,
         [FI_LAND] = kAll,
         [FI_BOR] = kAll,
         [FI_BAND] = kAll,
         [FI_LXOR] = kAll,
         [FI_BXOR] = kAll,
         [FI_ATOMIC_READ] = 0,
         [FI_ATOMIC_WRITE] = kAll},
        {[FI_MIN] = kNoCplx,
         [FI_MAX] = kNoCplx,
         [FI_SUM] = kAll,
         [FI_PROD] = kAll,
         [FI_LOR] = kAll,
         [FI_LAND] = kAll,
         [FI_BOR] = kAll,
         [FI_BAND] = kAll,
         [FI_LXOR] = kAll,
         [FI_BXOR] = kAll,
         [FI_ATOMIC_READ] = kAll,
         [FI_ATOMIC_WRITE] = kAll},
        {[FI_MIN] = 0,
         [FI_MAX] = 0,
         [FI_SUM] = 0,
         [FI_PROD] = 0,
         [FI_LOR] = 0,
         [FI_LAND] = 0,
         [FI_BOR] = 0,
         [FI_BAND] = 0,
         [FI_LXOR] = 0,
         [FI_BXOR] = 0,
         [FI_ATOMIC_READ] = 0,
         [FI_ATOMIC_WRITE] = 0,
         [FI_CSWAP] = kAll,
         [FI_CSWAP_NE] = kAll,
         [FI_CSWAP_LE] = kNoCplx,
         [FI_CSWAP_LT] = kNoCplx,
         [FI_CSWAP_GE] = kNoCplx,
         [FI_CSWAP_GT] = kNoCplx,
         [FI_MSWAP] = kInts},
    },
};

// opx accepts every op up to FI_ATOMIC_WRITE (READ included) for plain and fetching atomics and
// every compare op, on every type [v1.22.0 prov/opx/src/fi_opx_atomic.c *valid].
constexpr profile kOpx = {
    "opx",
    "opx",
    // caps [v1.22.0 prov/opx/include/rdma/opx/fi_opx.h FI_OPX_DEFAULT_CAPS; no FI_FENCE]
    kRdmCommon | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV | FI_MULTI_RECV,
    0,
    // OPX_MR, FI_MR_SCALABLE unless configured otherwise [v1.22.0 prov/opx/configure.m4], is
    // what fi_opx_domain.c hands back whatever the hints ask: offsets and client keys. Builds
    // with OPX_HMEM add FI_MR_HMEM [fi_opx_domain.c, fi_opx_init.c], which binds only device
    // memory; it is returned here so the engine is seen to accept it. FI_MR_SCALABLE's
    // value, 2: libfabric 2 deprecates the name.
    2 | FI_MR_HMEM,
    0,
    0,
    2,  // the default info's mr_key_size [v1.22.0 prov/opx/src/fi_opx_info.c]
    0,
    0,
    FI_CONTEXT2 | FI_ASYNC_IOV,  // set whatever the hints say [v1.22.0 fi_opx_init.c, fi_opx_ep.c]
    16,                          // FI_OPX_HFI1_PACKET_IMM [fi_opx_hfi1_packet.h]
    1,
    1,  // FI_OPX_IOV_LIMIT 1, rma_iov 1 [fi_opx.h, fi_opx_ep.c]
    SIZE_MAX,
    // The sources advertise FI_OPX_DEFAULT_MSG_ORDER = ATOMIC_RAR|RAW|WAR|WAW [fi_opx.h], but
    // DESIGN.md says opx gives no atomic ordering; we promise none (stricter is safe).
    0,
    0,
    0,
    0,
    true,
    false,
    {
        {[FI_MIN] = kAll,
         [FI_MAX] = kAll,
         [FI_SUM] = kAll,
         [FI_PROD] = kAll,
         [FI_LOR] = kAll,
         [FI_LAND] = kAll,
         [FI_BOR] = kAll,
         [FI_BAND] = kAll,
         [FI_LXOR] = kAll,
         [FI_BXOR] = kAll,
         [FI_ATOMIC_READ] = kAll,
         [FI_ATOMIC_WRITE] = kAll},
        {[FI_MIN] = kAll,
         [FI_MAX] = kAll,
         [FI_SUM] = kAll,
         [FI_PROD] = kAll,
         [FI_LOR] = kAll,
         [FI_LAND] = kAll,
         [FI_BOR] = kAll,
         [FI_BAND] = kAll,
         [FI_LXOR] = kAll,
         [FI_BXOR] = kAll,
         [FI_ATOMIC_READ] = kAll,
         [FI_ATOMIC_WRITE] = kAll},
        {[FI_MIN] = 0,
         [FI_MAX] = 0,
         [FI_SUM] = 0,
         [FI_PROD] = 0,
         [FI_LOR] = 0,
         [FI_LAND] = 0,
         [FI_BOR] = 0,
         [FI_BAND] = 0,
         [FI_LXOR] = 0,
         [FI_BXOR] = 0,
         [FI_ATOMIC_READ] = 0,
         [FI_ATOMIC_WRITE] = 0,
         [FI_CSWAP] = kAll,
         [FI_CSWAP_NE] = kAll,
         [FI_CSWAP_LE] = kAll,
         [FI_CSWAP_LT] = kAll,
         [FI_CSWAP_GE] = kAll,
         [FI_CSWAP_GT] = kAll,
         [FI_MSWAP] = kAll},
    },
};

const profile *const kProfiles[] = {&kCxi, &kEfa, &kEfaDirect, &kVerbsRxm, &kPsm3, &kOpx};

}  // namespace

const profile *find_profile(const char *name) {
    if (!name) return nullptr;
    for (const profile *p : kProfiles)
        if (std::strcmp(p->name, name) == 0) return p;
    return nullptr;
}

}  // namespace strict
