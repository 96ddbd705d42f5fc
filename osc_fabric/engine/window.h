// One MPI window as the engine sees it: local memory and its registration, what every
// peer published at creation, per-target completion counters and the epoch state.
// Owned by the MPI layer's module through the oscf_win handle; holds a reference to its
// engine. Every method assumes the engine lock is held (Guard is that lock, passed to
// the methods that may wait so they can release it between polls).
//
// Files: window.cpp (creation, exchange, teardown), epoch.cpp (which calls are allowed
// when: fence and the access checks), lock.cpp (the passive-target lock protocol; one
// target's lock state in peer_lock.h), rma.cpp (put/get), packed.cpp (many small
// segments of one put or get in few messages), packed_layout.cpp and
// packed_rendezvous.cpp (derived-datatype transfers as the target's layout and packed
// bytes, run_cursor.h cuts them), accumulate.cpp (the accumulate family on both paths
// and its ordering), swap.cpp (conditional swaps), implicit_epoch.cpp (lock + one
// operation + unlock in one message), accumulate_batch.cpp (coalescing emulated
// accumulates; one target's batch in accumulate_batch.h), flush.cpp (completion
// waits), pscw.cpp (general active target; its counts in pscw_counts.h), dynamic.cpp
// (attached regions; a peer's table copy in region_cache.h), shared.cpp (the node
// segment), route.cpp (which road an operation takes; the direct road to peers on this
// node, with node_link.h and node_atomics.h; puts and gets to their MPI_Win_create
// windows by cross-memory attach, cross_memory.h), direct_view.cpp (when the MPI layer
// may take that road without calling in). Messages: am.cpp, each origin's order in
// message_stream.h. Below every window: fabric.h (the endpoint and every libfabric data
// call, each with its own context, op_context.h; writes proved delivered where they
// complete at transmit, delivery_proof.h; descriptors of local buffers under
// FI_MR_LOCAL, local_memory.h) and provider_contract.h (what the provider demands and
// offers). The headers named here hold rules with no fabric in them, each
// with its own tests in test/engine.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <chrono>
#include <map>
#include <memory>
#include <vector>

#include "am_proto.h"
#include "engine_instance.h"
#include "osc_fabric/direct_view.h"
#include "accumulate_batch.h"
#include "cross_memory.h"
#include "node_link.h"
#include "peer_lock.h"
#include "pscw_counts.h"
#include "region_cache.h"
#include "request.h"
#include "window_blob.h"

namespace oscf {
class RunCursor;
}

struct oscf_win {
    using Guard = std::unique_lock<oscf::EngineLock>;

    explicit oscf_win(oscf_engine &eng) : eng_(eng) {}
    ~oscf_win();
    oscf_win(const oscf_win &) = delete;
    oscf_win &operator=(const oscf_win &) = delete;

    // window.cpp
    int init(const oscf_win_params &p, void **base_out);
    void local_blob(oscf::WinBlob *out) const;
    int connect(const oscf::WinBlob *blobs);
    int free_begin(Guard &lk);

    // epoch.cpp
    int fence(Guard &lk, int assert_bits);

    // pscw.cpp
    int start(Guard &lk, const int *group, int n, int assert_bits);
    int complete(Guard &lk);
    int post(Guard &lk, const int *group, int n, int assert_bits);
    int wait(Guard &lk);
    int test(Guard &lk, bool *done);

    // lock.cpp
    int lock(Guard &lk, int target, bool exclusive, int assert_bits);
    int unlock(Guard &lk, int target);
    int lock_all(Guard &lk, int assert_bits);
    int unlock_all(Guard &lk);

    // dynamic.cpp
    int attach(Guard &lk, void *base, size_t size);
    int detach(Guard &lk, const void *base);

    // rma.cpp
    // disp is in the target's disp_unit; each segment adds its byte offset.
    int put(Guard &lk, int target, const oscf_segment *segs, size_t n, int64_t disp,
            const oscf_notify *notify);
    int get(Guard &lk, int target, const oscf_segment *segs, size_t n, int64_t disp,
            const oscf_notify *notify);
    // The target's side as runs, the origin's as packed bytes (packed_layout.cpp).
    int put_packed(Guard &lk, int target, const oscf_run *runs, size_t n, int64_t disp, const oscf_packer &pk,
                   const oscf_notify *notify) {
        return transfer_packed(lk, Dir::write, target, runs, n, disp, pk, notify);
    }
    int get_packed(Guard &lk, int target, const oscf_run *runs, size_t n, int64_t disp, const oscf_packer &pk,
                   const oscf_notify *notify) {
        return transfer_packed(lk, Dir::read, target, runs, n, disp, pk, notify);
    }
    // The same with the target's runs from src, a batch at a time.
    int put_streamed(Guard &lk, int target, const oscf_run_source &src, int64_t disp, const oscf_packer &pk,
                     const oscf_notify *notify) {
        return transfer_streamed(lk, Dir::write, target, src, disp, pk, notify);
    }
    int get_streamed(Guard &lk, int target, const oscf_run_source &src, int64_t disp, const oscf_packer &pk,
                     const oscf_notify *notify) {
        return transfer_streamed(lk, Dir::read, target, src, disp, pk, notify);
    }
    bool engine_applies(int target, oscf_type type) const;  // oscf_win_engine_applies; any target
    int accumulate_packed(Guard &lk, int target, const oscf_run *runs, size_t n, oscf_type type, oscf_op op,
                          int64_t disp, const oscf_packer &pk, const oscf_notify *notify) {
        return accumulate_layout(lk, target, runs, n, type, op, disp, &pk, nullptr, notify);
    }
    // origin: nullptr for OSCF_OP_NO_OP.
    int get_accumulate_packed(Guard &lk, int target, const oscf_run *runs, size_t n, oscf_type type,
                              oscf_op op, int64_t disp, const oscf_packer *origin, const oscf_packer &result,
                              const oscf_notify *notify) {
        return accumulate_layout(lk, target, runs, n, type, op, disp, origin, &result, notify);
    }
    // Both: a get_accumulate's result unpacks the old values, an accumulate's is nullptr.
    int accumulate_layout(Guard &lk, int target, const oscf_run *runs, size_t n, oscf_type type, oscf_op op,
                          int64_t disp, const oscf_packer *origin, const oscf_packer *result,
                          const oscf_notify *notify);
    int check_acc_layout(int target, const oscf_run *runs, size_t n, oscf_type type, const char *what,
                         const oscf_notify *notify);

    // accumulate.cpp
    int accumulate(Guard &lk, int target, const oscf_acc_segment *segs, size_t n, oscf_type type, oscf_op op,
                   int64_t disp, const oscf_notify *notify);
    // MPI_ERR_OP unless MPI allows op on type; `updates`: a call that must change the
    // target, for which MPI_NO_OP is not defined either.
    int check_reduction(oscf_op op, oscf_type type, bool updates = false);
    int accumulate_direct(Guard &lk, int target, oscf_type type, oscf_op op, int64_t disp,
                          int64_t span_offset, size_t span_len, bool fetching, const oscf_acc_source &src,
                          const oscf_notify *notify, int *served);

    // swap.cpp: conditional swaps (oscf_win_swap), MPI_Compare_and_swap among them.
    struct Swap {
        oscf_swap swap;
        oscf_type type;
        size_t count;
        const char *value;    // what a swap stores
        const char *compare;  // comperands, or masks
        char *result;         // old values, or nullptr
    };
    int swap(Guard &lk, int target, const Swap &sw, int64_t disp, int64_t offset, const oscf_notify *notify);
    int compare_and_swap(Guard &lk, int target, const void *origin, const void *compare, void *result,
                         oscf_type type, int64_t disp, int64_t offset);

    // implicit_epoch.cpp: lock + one operation + unlock as one call.
    int rmw_implicit(Guard &lk, int target, const oscf_rmw &r, int assert_bits);
    // Target side of an emulated accumulate: validates and applies the request, storing
    // old values in old_out when it asks to fetch. Returns the status for the reply.
    int serve_am(const oscf::AmHeader &h, const uint8_t *payload, size_t len, uint8_t *old_out,
                 size_t *old_len);
    int peer_address(uint32_t rank, fi_addr_t *out) const;

    // flush.cpp
    int flush(Guard &lk, int target);  // target < 0: all
    int sync(Guard &lk);

    // route.cpp: a span of an on-node peer's window memory the caller may copy to or
    // from itself (a derived datatype's layout on both sides), or nullptr.
    int direct_span(Guard &lk, int target, int64_t disp, int64_t offset, size_t len, bool put, void **where);
    bool has_direct_memory() const { return has_direct_memory_; }
    bool exchanges_messages() const;  // route.cpp; true until connected

    // direct_view.cpp: the MPI layer's fast road to on-node peers
    // (include/osc_fabric/direct_view.h). api.cpp closes the view as every call enters
    // and settles it as the call leaves.
    oscf_direct_view *direct_view() { return &view_; }
    void close_direct_view() { ++view_.epoch; }
    void settle_direct_view();
    void mark_quiet();                   // settle_direct_view's two steps:
    void open_direct_entry(int target);  // the window's mark, and one peer's entry
    bool fast_accumulate(int target, int64_t disp, int64_t offset, const void *origin, void *result,
                         size_t count, oscf_type type, oscf_op op);
    bool fast_compare_and_swap(int target, int64_t disp, const void *value, const void *compare, void *result,
                               oscf_type type);
    bool fast_lock(int target, bool exclusive, int assert_bits);  // lock.cpp
    int fast_unlock(int target);
    bool fast_lock_all(int assert_bits);
    int fast_unlock_all();

    oscf_engine &engine() const { return eng_; }
    // Lock requests held at this target (ActiveMessages::retry_held) are tried again only
    // once our lock words differ from those the last ones failed against: the same words
    // give the same answer. before: the words read before the attempt that failed, so a
    // change racing with it (on-node peers change them with CPU atomics) is not missed.
    struct LockWords {
        uint64_t lock, gate;
        bool operator!=(const LockWords &o) const { return lock != o.lock || gate != o.gate; }
    };
    LockWords lock_words() const;
    void note_held(const LockWords &before);
    bool held_may_grant() const;
    void forget_held() { held_noted_ = held_mixed_ = false; }
    void *shared_segment() const { return shared_.addr; }
    // MPI_Win_shared_query on a window of any flavor (MPI-4.0): the rank's window memory
    // where this process can load and store it (its own; an on-node peer's in the node
    // segment), else size 0 and a null base. OSCF_ERR_RANK outside the group.
    int memory_of(int rank, void **base, size_t *size, int *disp_unit) const;
    // Our engine failed (Progress::fail): a kAmFailed notice to every other member.
    void tell_peers_failed();

    oscf_win_stats stats{};
    oscf_win_stats all_stats() const;  // stats and what the direct view counted

private:
    struct Peer {
        fi_addr_t addr = FI_ADDR_UNSPEC;
        uint64_t base = 0, size = 0, key = 0;
        uint64_t state_base = 0, state_key = 0;
        uint32_t disp_unit = 1;
        uint64_t am_window_id = 0;
        uint32_t am_sent = 0;        // requests sent to this peer's window: the next one's AmHeader::seq
        oscf::RegionCache regions;   // dynamic windows: our copy of its region table
        oscf::NodeLink node;         // linked: on this node, reached directly (route.cpp)
        oscf::CrossLink cross;       // its process, for cross-memory puts and gets (route.cpp)
        oscf::OpCounter ops;         // this origin's operations to this target
        uint64_t complete_note = 0;  // MPI_Win_complete's value, its write counted in ops
        uint64_t post_note = 0;      // MPI_Win_post's, the same way
        oscf::OpCounter acc;         // the accumulates among them (child of ops)
        // Operations among them that need nothing more of this origin once their active
        // messages are sent (a batch of accumulates, a packed put or accumulate: their
        // bytes are in the messages or our copy).
        // The target serves its origin's messages in order, so an MPI_Win_complete
        // notification sent behind them is seen after they are applied (pscw.cpp).
        oscf::OpCounter streamed_ops;  // child of ops
        oscf::OpCounter streamed_acc;  // child of acc
        oscf::PeerLock lock;           // our lock on it (lock.cpp); lock.grant is a child of ops
        oscf::AccumulateBatch batch;   // emulated accumulates not yet sent; counted on streamed_acc once sent
        // Completes the batch and the grant with the one reply to a batch carrying our
        // lock request.
        struct BatchAndGrant final : oscf::Completion {
            oscf::OpCounter *batch = nullptr, *grant = nullptr;
            void complete(int status, size_t len) override {
                batch->complete(status, len);
                grant->complete(status, len);
            }
        } batch_and_grant;
    };
    Peer &peer(int rank) { return peers_[static_cast<size_t>(rank)]; }
    const Peer &peer(int rank) const { return peers_[static_cast<size_t>(rank)]; }
    Peer &self() { return peer(rank_); }
    bool is_self(const Peer &p) const { return &p == &peer(rank_); }
    int rank_of(const Peer &p) const { return static_cast<int>(&p - peers_.data()); }

    // epoch.cpp
    int check_target(int target) const;
    bool in_passive_epoch(int target) const;
    bool may_access(int target) const;
    int check_request_epoch(int target, const char *what) const;
    // check_target, and check_request_epoch for a request-based operation (notify set).
    int check_operation(int target, const oscf_notify *notify, const char *what) const;
    int begin_access(Guard &lk, int target, const char *what);
    int close_idle_fence(const char *what);

    // pscw.cpp
    int notify(int t, uint64_t offset, uint64_t value, uint64_t &note);
    int complete_in_stream(Guard &lk, int t, uint64_t value);
    int serve_complete(const oscf::AmHeader &h, size_t len);
    int note_complete(uint32_t origin, uint64_t value);
    volatile uint64_t &state_word(uint64_t offset);
    bool exposure_complete();

    // lock.cpp
    // What a process holds of a lock word: a target's (lock) or rank 0's gate.
    enum class Hold : uint8_t { shared, exclusive, gate_exclusive, gate_all };
    int try_hold(Guard &lk, Peer &p, Hold hold, bool *taken);
    int acquire(Guard &lk, Peer &p, Hold hold);
    void begin_lock(Peer &p, bool exclusive, bool acquired);
    void end_lock(Peer &p);
    int release(Peer &p, Hold hold);
    uint64_t *own_word(uint64_t offset);  // a word of our WindowState
    int enter_exclusive_gate(Guard &lk);
    int leave_exclusive_gate();
    int await_earlier_lock(Guard &lk);
    int confirm_releases();  // before free: every silent release has been applied
    bool lock_requests_queue() const;
    int request_lock(Peer &p, bool exclusive);
    int send_lock_request(Peer &p);
    void drop_hold(bool exclusive);
    bool take_own(Hold hold);                          // on our own words, with CPU atomics
    uint64_t *hold_word(Peer &p, Hold hold);           // the word a hold takes, in our mapping (direct_words)
    bool take_direct(uint64_t *word, bool exclusive);  // fast_lock's holds
    int release_direct(Peer &p, Hold hold, uint64_t *word);  // the fast road's releases
    void drop_own(Hold hold);
    int take_lock(Guard &lk, Peer &p, bool exclusive);
    int await_grant(Guard &lk, Peer &p);
    void count_lock_wait(std::chrono::steady_clock::time_point since);  // MPI_T: lock_wait_ns
    // Target side of kAmLockShared and kAmLockExclusive (and a batch's kAmTake*) from
    // origin: OSCF_OK, or kAmDeferred to hold the request until it can be granted.
    int grant_lock(bool exclusive, uint32_t origin);
    bool writer_takes(uint32_t origin, bool taken);
    // Target side of a one-shot epoch's request (kAmImplicitEpoch): our lock word taken
    // exclusively (and the gate, kAmImplicitGate) for the request's duration, or
    // kAmDeferred while someone holds them.
    int take_implicit_hold(uint8_t flags, uint32_t origin);
    void drop_implicit_hold(uint8_t flags);
    int serve_state_word(const oscf::AmHeader &h, const uint8_t *payload, size_t len, char *t,
                         uint8_t *old_out, size_t *old_len);
    int lock_word_atomic(Guard &lk, Peer &p, uint64_t offset, int op, uint64_t operand, uint64_t compare,
                         uint64_t *old);
    int lock_word_am(Guard &lk, Peer &p, uint64_t offset, int op, uint64_t operand, uint64_t compare,
                     uint64_t *old);

    // Where one access lands: for the fabric (remote address and key), for ourselves
    // (local pointer), and for active messages (the offset the owner resolves again).
    // span: how many of the access's bytes lie there, in one registration; less than
    // asked only on a dynamic window whose access runs on into the next attached region.
    enum class Dir { read, write };
    struct Where {
        uint64_t remote = 0;
        uint64_t key = 0;
        char *local = nullptr;
        uint64_t am_offset = 0;
        size_t span = 0;
    };
    int resolve(Guard &lk, int target, int64_t disp, int64_t offset, size_t len, const char *what, Where *w);

    // route.cpp: the direct road to peers in our node segment, and when it serves.
    // The road of an accumulate or swap of type t to p: updates under the target's
    // stripe locks on our node (direct, node_atomics.h), the provider's atomics (native), or applied by an engine under its
    // lock, ours (here) or the target's through an active message (message).
    enum class AccRoute { direct, native, here, message };
    AccRoute acc_route(const Peer &p, int target, oscf_type t) const;
    bool direct_memory(const Peer &p) const;
    bool updated_on_node(oscf_type t) const;
    bool direct_accumulate(const Peer &p, oscf_type t) const;
    bool direct_words(const Peer &p) const;
    // Lock words taken with the provider's atomics (lock.cpp), not with messages.
    bool lock_words_native() const;
    int direct_transfer_all(Guard &lk, Dir dir, int target, const oscf_segment *segs, size_t n, int64_t disp);
    // Puts and gets to an on-node peer's user memory (MPI_Win_create, dynamic windows)
    // by cross-memory attach; cross_transfer_all sets *refused, having moved nothing
    // that counts, when the kernel refuses the road: the fabric serves the call.
    bool cross_memory(Peer &p);
    bool cross_verify(Peer &p);
    void cross_refuse(Peer &p, int err, const char *what);
    int cross_transfer_all(Guard &lk, Dir dir, int target, const oscf_segment *segs, size_t n, int64_t disp,
                           bool *refused);
    int direct_begin(Guard &lk, int target, const char *what);
    int direct_ready(Guard &lk, Peer &p);
    int direct_accumulate_all(Guard &lk, int target, const oscf_acc_segment *segs, size_t n, oscf_type type,
                              oscf_op op, int64_t disp);
    int direct_accumulate_each(Guard &lk, int target, oscf_type type, oscf_op op, int64_t disp,
                               const oscf_acc_source &src);
    int direct_swap(Guard &lk, Peer &p, const Swap &sw, const Where &w);
    uint64_t direct_word(Peer &p, uint64_t offset, bool cas, uint64_t operand, uint64_t compare);
    void direct_store_word(Peer &p, uint64_t offset, uint64_t value);
    // Target side: updates of our own window memory, atomic with on-node peers' CPUs.
    void apply_here(oscf_op op, oscf_type type, char *target, const char *origin, char *result, size_t count);
    void init_direct_view();
    // The fast road's sync calls enter the engine now and then, for progress's tick.
    bool view_call_due() { return ++view_.sync_calls % OSCF_DIRECT_SYNC_CALLS_PER_ENGINE_CALL != 0; }
    // This call took the direct road to target: settle_direct_view may open its entry.
    void offer_direct(int target) { view_candidate_ = target; }
    void swap_here(oscf_swap s, oscf_type type, char *target, const void *value, const void *compare,
                   void *result, size_t count);

    // dynamic.cpp
    struct LocalRegion {
        uintptr_t base;
        size_t size;
        oscf::mr_ptr mr;
        uint64_t key;
    };
    struct Table {
        std::unique_ptr<char, void (*)(void *)> mem{nullptr, ::free};
        oscf::mr_ptr mr;
        uint64_t key = 0;
        size_t capacity = 0;
    };
    int publish_regions();
    int resolve_dynamic(Guard &lk, int target, uint64_t addr, size_t len, const char *what, Where *w);
    int refresh_regions(Guard &lk, Peer &p);
    enum class TableRead { read, torn, refused };
    int read_regions_once(Guard &lk, Peer &p, TableRead *out);
    void hold_for_table_readers(Guard &lk);
    TableRead cross_read_regions(Guard &lk, Peer &p);
    int read_remote(Guard &lk, Peer &p, void *dst, size_t len, uint64_t addr, uint64_t key);
    bool attached_here(uint64_t addr, size_t len) const;  // every byte, in one or more regions

    // rma.cpp
    // Byte offset of an access into a window of `size` bytes, or OSCF_ERR_RMA_RANGE.
    static int target_offset(int64_t disp, uint32_t disp_unit, int64_t offset, size_t len, uint64_t size,
                             int target, const char *what, uint64_t *out);
    int transfer_all(Guard &lk, Dir dir, int target, const oscf_segment *segs, size_t n, int64_t disp,
                     const oscf_notify *notify);
    // packed.h: the small segments of one many-segment put or get, packed into few
    // messages; nullptr where the operation's segments travel one by one.
    class Packed;
    int transfer(Guard &lk, Dir dir, int target, void *buf, size_t len, int64_t disp, int64_t offset,
                 oscf::OpScope &scope, Packed *packed);
    int transfer_piece(Guard &lk, Dir dir, int target, char *local, const Where &w, oscf::OpScope &scope,
                       Packed *packed);
    // One fi_writemsg or fi_readmsg of len (at most max_msg_size) bytes, counted in stats;
    // done completes with it.
    int post_rma(Peer &p, bool write, void *local, size_t len, uint64_t remote, uint64_t key,
                 oscf::Completion *done);
    // packed_layout.cpp: puts and gets described by the target's layout as runs.
    int transfer_packed(Guard &lk, Dir dir, int target, const oscf_run *runs, size_t n, int64_t disp,
                        const oscf_packer &pk, const oscf_notify *notify);
    int transfer_streamed(Guard &lk, Dir dir, int target, const oscf_run_source &src, int64_t disp,
                          const oscf_packer &pk, const oscf_notify *notify);
    int layout_delta(Guard &lk, int target, int64_t disp, const oscf_run *runs, size_t n, int64_t lo,
                     int64_t hi, const char *what, uint64_t *delta);
    int staged_transfer(Guard &lk, Dir dir, int target, const oscf_run *runs, size_t n, int64_t disp,
                        size_t bytes, const oscf_packer &pk, const oscf_notify *notify);
    // What a layout's bytes do at the target: a put's plain copy, or an accumulate.
    struct Update {
        oscf_type type = OSCF_TYPE_UINT8;
        oscf_op op = OSCF_OP_REPLACE;
        bool copy() const { return type == OSCF_TYPE_UINT8 && op == OSCF_OP_REPLACE; }
    };
    int scatter(Peer &p, const oscf_run *runs, size_t n, uint64_t delta, const oscf_packer &pk,
                oscf::OpScope &scope, Update u);
    int gather_runs(Peer &p, const oscf_run *runs, size_t n, uint64_t delta, size_t bytes,
                    const oscf_packer &pk, oscf::OpScope &scope);
    int fetch_scatter(Peer &p, const oscf_run *runs, size_t n, uint64_t delta, size_t bytes,
                      const oscf_packer *origin, const oscf_packer &result, oscf::OpScope &scope, Update u);
    int serve_scatter(const oscf::AmHeader &h, const uint8_t *payload, size_t len, uint8_t *old_out,
                      size_t *old_len);
    int scatter_here(const oscf::AmHeader &h, const uint8_t *payload, size_t len);
    // Where a fetching scatter puts its target's old values: out, up to cap bytes, back to
    // back in the runs' order; len says how many it wrote.
    struct OldValues {
        uint8_t *out;
        size_t cap;
        size_t len = 0;
    };
    // The n runs at desc: their pieces filled from data (or, with old, the origin's
    // elements applied, none for NO_OP, each piece's old elements copied there first), or
    // copied out to out.
    // desc: n runs in desc_len bytes of their wire form (run_codec.h).
    int scatter_pieces(const uint8_t *desc, size_t desc_len, uint32_t n, const uint8_t *data, size_t len,
                       Update u, OldValues *old = nullptr);
    int gather_pieces(const uint8_t *desc, size_t desc_len, uint32_t n, uint8_t *out, size_t cap,
                      size_t *out_len);
    // packed_rendezvous.cpp: the same for large operations, by RMA of a registered copy.
    static constexpr size_t kRendezvousMin = 4 * oscf::kAmMaxPayload;  // bytes; below, messages
    // put: pk packs the origin's bytes; get: pk unpacks the bytes that come back; fetch
    // (a get_accumulate): origin packs its elements (nullptr for NO_OP), pk unpacks the old
    // values. wire: the runs' wire form, uncut (packed_layout.cpp, LayoutSize), which
    // sizes our copy.
    enum class Rendezvous { put, get, fetch };
    int rendezvous(Peer &p, Rendezvous kind, const oscf_run *runs, size_t n, size_t bytes, size_t wire,
                   uint64_t delta, const oscf_packer &pk, const oscf_packer *origin, oscf::OpScope &scope,
                   Update u);
    // The same with the runs from cursor. Runs that come as the call is cut
    // (oscf_run_source, transfer_streamed) have wire kWireUnknown: a put's chunks then
    // take a registered slot each (StagingPool::take_slot), and with lk the put holds at
    // most kSlotsInFlight at once, waiting for answers to reuse them; a get's copy holds
    // its bytes only, so it needs no wire size.
    static constexpr size_t kWireUnknown = SIZE_MAX;
    int rendezvous_cut(Peer &p, Rendezvous kind, oscf::RunCursor &cursor, size_t bytes, size_t wire,
                       const oscf_packer &pk, const oscf_packer *origin, oscf::OpScope &scope, Update u,
                       Guard *lk = nullptr);
    // count elements at origin (nullptr for NO_OP), to w, by the rendezvous of a one-run
    // layout; with result, the old values go there.
    int accumulate_rendezvous(Peer &p, const char *origin, char *result, size_t count, oscf_type type,
                              oscf_op op, const Where &w, oscf::OpScope &scope);
    int serve_rendezvous(const oscf::AmHeader &h, const uint8_t *payload, size_t len);
    // A layout that is one block at the target, bytes of it from offset start: our packed
    // copy written there, or the block read into it and unpacked.
    int packed_rma(Guard &lk, Peer &p, int target, Dir dir, int64_t disp, int64_t start, size_t bytes,
                   const oscf_packer &pk, oscf::OpScope &scope);
    class RendezvousOrigin;  // one operation's registered copy and answers
    class RendezvousTarget;  // one chunk being served
    // Per origin: put chunks read ahead (kAmChunkFollows) and not yet in place, and the
    // answer of the chunk behind them that waits for them (token, status).
    std::map<uint32_t, size_t> chunks_ahead_;
    std::map<uint32_t, std::pair<uint64_t, int>> answers_behind_;
    std::map<uint32_t, int> scatter_errors_;  // origin rank: first failure of a silent kAmScatter
    int serve_gather_runs(const oscf::AmHeader &h, const uint8_t *payload, size_t len, uint8_t *out,
                          size_t *out_len);
    std::unique_ptr<uint8_t[]> pack_buffer_;        // a put_packed message's bytes, kAmMaxPayload
    static constexpr size_t kBatchedPutMax = 1024;  // bytes; larger puts go as fi_write
    static constexpr size_t kMessageGetMax = 1024;  // bytes; larger gets go as fi_read
    bool batch_put(size_t len, const Peer &p, const oscf::OpScope &scope) const;

    // accumulate.cpp
    // An active-message request header to p's copy of this window (token still unset).
    // op: an oscf_op, or an oscf_swap for kAmCompareSwap.
    oscf::AmHeader am_header(const Peer &p, oscf::AmOpcode opcode, uint8_t flags) const;
    oscf::AmHeader am_request(Peer &p, oscf::AmOpcode opcode, oscf_type type, int op, uint8_t flags,
                              uint32_t count, uint64_t offset);
    int target_range(Guard &lk, int target, size_t len, int64_t disp, int64_t offset, const char *what,
                     Where *w);
    // count elements of `size` bytes at the target, offset bytes past disp, in pieces of
    // whole elements, one per registration they land in (several only on a dynamic
    // window whose regions are attached back to back): each(w, first, n) for elements
    // first .. first + n - 1. Count 0 is still an access: its epoch is checked.
    template <class Each>
    int each_element_span(Guard &lk, int target, size_t count, size_t size, int64_t disp, int64_t offset,
                          const char *what, Each each) {
        size_t first = 0;
        do {
            Where w;
            int rc = target_range(lk, target, (count - first) * size, disp,
                                  offset + static_cast<int64_t>(first * size), what, &w);
            if (rc || count == 0) return rc;
            if (w.span % size) return straddle_error(what, w, size);
            const size_t n = w.span / size;
            if ((rc = each(w, first, n))) return rc;
            first += n;
        } while (first < count);
        return OSCF_OK;
    }
    int straddle_error(const char *what, const Where &w, size_t size);
    int order_accumulate(Guard &lk, Peer &p, oscf_acc_path path);
    int accumulate_segment(Guard &lk, int target, const oscf_acc_segment &sg, oscf_type type, oscf_op op,
                           int64_t disp, oscf::OpScope &scope);
    int post_accumulate(Guard &lk, int target, const char *origin, char *result, size_t count, oscf_type type,
                        oscf_op op, const Where &w, oscf::OpScope &scope);
    // A non-fetching atomic with delivery completion (plain accumulates, lock release).
    int post_atomic_write(const Peer &p, const void *src, size_t count, fi_datatype dt, fi_op op,
                          uint64_t remote, uint64_t key, oscf::Completion *context);
    int post_native(Peer &p, const char *origin, char *result, size_t count, oscf_type type, oscf_op op,
                    const Where &w, oscf::OpScope &scope);
    int post_am(Peer &p, const char *origin, char *result, size_t count, oscf_type type, oscf_op op,
                uint64_t offset, oscf::OpScope &scope);
    // Sends request h (its token made here) for scope, the reply's data to result
    // (nullptr: none); a failed send completes it with the error.
    int send_request(Peer &p, oscf::AmHeader &h, oscf::OpScope &scope, char *result, size_t result_bytes,
                     const void *p1, size_t n1, const void *p2 = nullptr, size_t n2 = 0);
    void apply_local(const char *origin, char *result, size_t count, oscf_type type, oscf_op op,
                     char *target);
    // Target side: where an active message's bytes live, or nullptr when out of range.
    char *am_target(bool state_word, uint64_t offset, size_t bytes);

    // swap.cpp
    int post_swap(Guard &lk, int target, const Swap &sw, const Where &w, oscf::OpScope &scope);
    int post_native_swap(Peer &p, const Swap &sw, const Where &w, oscf::OpScope &scope);
    int post_am_swap(Peer &p, const Swap &sw, uint64_t offset, oscf::OpScope &scope);
    std::unique_ptr<char[]> swap_sink_;  // old values nobody asked for (post_native_swap)

    // implicit_epoch.cpp
    bool implicit_on_node(const Peer &p, int target, const oscf_rmw &r) const;
    int implicit_direct(Guard &lk, Peer &p, int target, const oscf_rmw &r, bool nocheck);
    bool implicit_in_one_message(const Peer &p, int target, const oscf_rmw &r) const;
    int implicit_message(Guard &lk, Peer &p, int target, const oscf_rmw &r, bool nocheck);
    int implicit_composed(Guard &lk, int target, const oscf_rmw &r, int assert_bits);
    int rmw_in_epoch(Guard &lk, int target, const oscf_rmw &r);

    // accumulate_batch.cpp
    int batch_accumulate(Peer &p, const char *origin, size_t count, oscf_type type, oscf_op op,
                         uint64_t offset);
    int send_batch(Peer &p, uint64_t completes = 0);
    void list_for_sending(Peer &p);
    int send_batches();
    int serve_batch(const oscf::AmHeader &h, const uint8_t *payload, size_t len);
    // packed.cpp, target side of kAmGather.
    int serve_gather(const oscf::AmHeader &h, const uint8_t *payload, size_t len, uint8_t *out,
                     size_t *out_len);
    int apply_batch(const oscf::AmHeader &h, const uint8_t *payload, size_t len);

    // flush.cpp
    int wait_idle(Guard &lk, oscf::OpCounter &c);
    // wait_idle, then the first failure of what c counted (a flush's target counter, the
    // one-operation counters of lock words, PSCW notifications and region-table reads).
    int wait_done(Guard &lk, oscf::OpCounter &c) {
        // Nothing in flight and no batch queued (a flush after direct operations, most
        // lock-word updates on one node): no wait to set up.
        if (c.idle() && batched_.empty()) return c.take_error();
        const int rc = wait_idle(lk, c);
        return rc ? rc : c.take_error();
    }
    // The first failure of anything this origin issued, reported once: the targets'
    // counters forget what it covers.
    int take_window_error();
    // Ends an operation's scope (see request.h), waiting under lk if it must.
    int finish(Guard &lk, oscf::OpScope &scope, int rc);

    oscf_engine &eng_;
    oscf::Fabric &fab() const { return *eng_.fabric; }
    oscf::Progress &progress() const { return *eng_.progress; }

    int rank_ = 0, size_ = 0;
    int flavor_ = 0;
    void *base_ = nullptr;
    size_t bytes_ = 0;
    int disp_unit_ = 1;
    std::unique_ptr<void, void (*)(void *)> owned_memory_{nullptr, ::free};
    // SHARED windows: our mapping of the node's segment (shared.cpp).
    struct Mapping {
        void *addr = nullptr;
        size_t len = 0;
        ~Mapping();
    } shared_;
    int map_shared(const oscf_win_params &p);
    uint64_t node_segment_ = 0;       // WinBlob::node_segment: 0 without a node segment
    bool has_direct_memory_ = false;  // some peer's node link maps its window memory
    // Some peer takes our lock words through the fabric (off this node, or not reached
    // directly): where the provider has no hardware atomics its attempts are applied
    // only in our progress rounds (lock.cpp, acquire).
    bool own_words_by_progress_ = false;
    bool connected_ = false;  // connect() succeeded
    oscf_direct_view view_{};
    std::vector<oscf_direct_peer> view_peers_;
    // fast_lock: each peer's lock word where a CPU atomic takes it (direct_words), or null;
    // rank 0's gate the same way. Our own is null where others take it through the fabric
    // (own_words_by_progress_): acquire() serves them first.
    std::vector<uint64_t *> view_lock_words_;
    uint64_t *view_gate_word_ = nullptr;
    std::vector<int> view_direct_ranks_;       // the peers whose memory we map: fast_lock_all opens them
    int view_candidate_ = -1;                  // offer_direct
    uint32_t fast_ops_[OSCF_TYPE_COUNT] = {};  // bit per oscf_op the view's accumulates apply
    bool fast_cas_[OSCF_TYPE_COUNT] = {};
    bool view_on_ = false;  // calls serialized and some peer's memory mapped
    bool memory_in_segment() const {
        return flavor_ == OSCF_FLAVOR_ALLOCATE || flavor_ == OSCF_FLAVOR_SHARED;
    }
    uint64_t node_mem_offset_ = 0, node_state_offset_ = 0;
    std::unique_ptr<oscf::WindowState, void (*)(void *)> state_{nullptr, ::free};
    oscf::mr_ptr mr_;        // window memory (absent when bytes_ == 0)
    oscf::mr_ptr state_mr_;  // WindowState
    uint64_t mr_key_ = 0, state_key_ = 0;
    uint64_t id_ = 0;  // this window in active messages
    unsigned acc_ordering_ = OSCF_ORDER_DEFAULT;

    std::vector<Peer> peers_;
    oscf::OpCounter all_ops_;   // parent of every Peer::ops
    std::vector<int> batched_;  // targets whose Peer::batch is listed to send
    oscf::OpCounter releases_;  // lock releases in flight (lock.cpp), under all_ops_

    // Epoch state (epoch.cpp has the rules).
    uint64_t access_epoch_ = 1;     // counts access epochs opened (fence, start, lock, lock_all)
    bool fence_open_ = false;       // between fences (not closed by MPI_MODE_NOSUCCEED)
    bool ops_since_fence_ = false;  // an idle fence epoch may give way to a lock epoch
    int locks_held_ = 0;            // targets locked with MPI_Win_lock
    int ungranted_ = -1;            // the one lock that may still await its grant (lock.cpp)
    int exclusive_gated_ = 0;       // exclusive locks held through rank 0's gate
    LockWords held_words_{};        // note_held: the words held requests failed against,
    bool held_noted_ = false;       // if any did since the last retry,
    bool held_mixed_ = false;       // and whether they failed against different ones
    // Origins whose exclusive requests are held here: shared ones wait behind them.
    std::vector<uint32_t> writers_waiting_;
    bool lock_all_ = false;
    bool lock_all_gated_ = false;  // this lock_all epoch holds the gate (not NOCHECK)

    // General active target (pscw.cpp has the protocol).
    bool pscw_access_ = false;           // between start and complete
    bool pscw_exposure_ = false;         // between post and wait/test
    std::vector<int> access_group_;      // window ranks of the start group
    std::vector<int> exposure_group_;    // window ranks of the post group
    std::vector<char> in_access_group_;  // by rank, for the access check
    oscf::PscwCounts pscw_;              // what we sent and saw of notifications

    // Dynamic windows (dynamic.cpp).
    std::vector<LocalRegion> regions_;      // attached, sorted by base
    std::vector<uintptr_t> empty_regions_;  // attached with size 0: nothing to publish, but detachable
    std::vector<Table> tables_;             // back() is the ring published; older ones stay readable
    uint64_t table_generation_ = 0;
};
