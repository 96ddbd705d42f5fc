// Wire format of the active messages that carry emulated accumulates. Fixed-width
// fields; every message is one AmHeader followed by its payload. Receivers check the
// version, the opcode against kAmOpcodeMax and every length before dispatch.
//   version 1: accumulate and compare-and-swap requests, and their replies.
//   version 2: batches of non-fetching accumulates (kAmBatch).
//   version 3: requests that want no reply (kAmNoReply), kAmFlush, and shared lock
//              requests the target queues until it can grant them (kAmLockShared,
//              or kAmTakeShared on the batch that carries one).
//   version 4: a batch may end its sender's lock hold (kAmReleaseShared/Exclusive).
//   version 5: requests carry their place in the sender's stream (AmHeader::seq); the
//              target serves them in that order, whatever order they arrive in.
//   version 6: kAmGather, the small segments of one get read in one message.
//   version 7: kAmScatter and kAmGatherRuns, a put's or get's pieces described as runs
//              (AmRun) of the target's layout.
//   version 8: kAmScatterPull and kAmGatherPush, the same by rendezvous (AmPull).
//   version 9: kAmCompareSwap carries count elements and an oscf_swap in op; requests
//              may be one-shot epochs (kAmImplicitEpoch, kAmImplicitGate).
//   version 10: runs travel in their wire form (run_codec.h), a few bytes each; the
//              layout opcodes' AmHeader::offset is the byte length of their runs.
//   version 11: a kAmGatherPush's AmPull names its bytes' room only, not its runs' too.
//   version 12: kAmComplete, MPI_Win_complete's notification behind the origin's messages,
//              or riding on the last batch (kAmBatchCompletes).
//   version 13: a kAmScatter or kAmScatterPull may ask for its pieces' old values
//              (kAmFetch): get_accumulate in the layout form, and by rendezvous.
//   version 14: exclusive lock requests the target queues as it does shared ones
//              (kAmLockExclusive, or kAmTakeExclusive on the batch that carries one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace oscf {

constexpr uint8_t kAmVersion = 15;

enum AmOpcode : uint8_t {
    kAmAccumulate = 0,   // payload: count origin elements (none for a fetching NO_OP)
    kAmCompareSwap = 1,  // payload: count values, then count comperands or masks; op is
                         // an oscf_swap (swap.cpp)
    kAmReply = 2,        // payload: old target values when the request asked to fetch
    kAmBatch = 3,        // payload: count AmRecords, each followed by its padded data
    kAmFlush = 4,        // no payload; its reply says every earlier message from this
                         // origin was applied (served in the order sent, MessageStream)
    kAmLockShared = 5,   // no payload; take a shared hold on the lock word (lock.cpp). If an
                         // exclusive holder has it, the target holds this request and every
                         // later one from the same origin to the same window until it can
                         // grant; the reply is the grant.
    kAmGather = 6,       // payload: count AmGatherRecords; the reply carries their bytes
                         // back to back, in record order (packed.cpp)
    // The layout opcodes: count AmRuns in offset bytes of their wire form (run_codec.h),
    // padded to kRunsAlign.
    kAmScatter = 7,         // payload: the runs, then the bytes of their pieces back to back,
                            // which the target copies to them or applies (packed_layout.cpp);
                            // with kAmFetch the reply carries the pieces' old values back to
                            // back, and a NO_OP has no bytes
    kAmGatherRuns = 8,      // payload: the runs; the reply carries their pieces' bytes back
                            // to back
    kAmScatterPull = 9,     // payload: AmPull of a chunk of the runs and their bytes; the
                            // target reads it, copies the bytes to the pieces, replies. With
                            // kAmFetch a second AmPull names the room for the old values,
                            // which the target writes there before it replies
    kAmGatherPush = 10,     // payload: AmPull of the room for a chunk's bytes, then its
                            // runs; the target writes the bytes there, then replies
                            // (packed_rendezvous.cpp)
    kAmComplete = 11,       // no payload; offset is the sender's MPI_Win_complete count for
                            // the target's complete word, set once every earlier message
                            // from it is served (pscw.cpp)
    kAmLockExclusive = 12,  // kAmLockShared for an exclusive hold: granted when nobody
                            // holds the word
    kAmFailed = 13,         // no payload, no reply, outside the sender's request order: its
                            // engine failed (Progress::fail) and may never serve what we
                            // sent it, so the receiver's engine fails too
    kAmOpcodeMax
};

enum AmFlags : uint8_t {
    kAmFetch = 1,              // reply with the old target values
    kAmStateWord = 2,          // offset is into the target's WindowState (lock word), not its memory
    kAmNoReply = 4,            // apply and stay silent (token unused): a failure is only logged
    kAmTakeShared = 8,         // kAmBatch: first take a shared hold as kAmLockShared does (held
                               // until grantable); one reply answers both
    kAmReleaseShared = 16,     // kAmBatch: after the records, drop the sender's shared hold
    kAmReleaseExclusive = 32,  // kAmBatch: after the records, drop its exclusive hold
    // kAmAccumulate, kAmCompareSwap: a one-shot epoch (implicit_epoch.cpp). The target
    // takes its lock word exclusively, applies, releases; held as kAmLockShared is while
    // it cannot take it.
    kAmImplicitEpoch = 64,
    // kAmScatterPull of a put (not an accumulate): the same put's next chunk is the
    // sender's next request, so the target may read it before this one is in
    // (packed_rendezvous.cpp).
    kAmChunkFollows = 64,
    // kAmBatch: after the records, set the sender's MPI_Win_complete word to offset, as
    // kAmComplete does (pscw.cpp).
    kAmBatchCompletes = 64,
    kAmImplicitGate = 128,   // with kAmImplicitEpoch, at rank 0: take the gate (lock.cpp) too
    kAmTakeExclusive = 128,  // kAmBatch: kAmTakeShared for an exclusive hold
};
constexpr uint8_t kAmReleases = kAmReleaseShared | kAmReleaseExclusive;

struct AmHeader {
    uint8_t version;
    uint8_t opcode;  // AmOpcode
    uint8_t type;    // oscf_type
    uint8_t op;      // oscf_op
    uint8_t flags;   // AmFlags
    uint8_t pad[3];
    int32_t status;        // reply: OSCF status of the request
    uint32_t count;        // elements
    uint32_t origin_rank;  // request: the sender's rank in the window, to reply to
    uint32_t seq;          // request: its place among the origin's requests to this window
    uint64_t window_id;    // the target's window (WinBlob::am_window_id)
    uint64_t offset;       // byte offset into the target's window memory
    uint64_t token;        // origin's request handle, echoed by the reply
};
static_assert(sizeof(AmHeader) == 48, "AmHeader is part of the wire format");

// One accumulate inside a kAmBatch message; its count elements follow, padded to 8
// bytes so the next record is aligned. The target applies the records in order, which
// is what keeps a batch's accumulates ordered among themselves.
struct AmRecord {
    uint64_t offset;  // as AmHeader::offset
    uint32_t count;
    uint8_t type;  // oscf_type
    uint8_t op;    // oscf_op
    uint8_t pad[2];
};
static_assert(sizeof(AmRecord) == 16, "AmRecord is part of the wire format");
constexpr size_t am_record_bytes(size_t data) {
    return sizeof(AmRecord) + ((data + 7) & ~size_t{7});
}
// Zeroes the padding after a record of `data` bytes at rec: it travels too, and must
// never carry stale heap bytes. Returns the record's size.
inline size_t am_record_pad(uint8_t *rec, size_t data) {
    const size_t end = am_record_bytes(data);
    std::memset(rec + sizeof(AmRecord) + data, 0, end - sizeof(AmRecord) - data);
    return end;
}
// Writes record r with its data at rec. Returns its size.
inline size_t am_record_write(uint8_t *rec, const AmRecord &r, const void *data, size_t bytes) {
    std::memcpy(rec, &r, sizeof r);
    std::memcpy(rec + sizeof r, data, bytes);
    return am_record_pad(rec, bytes);
}

// One segment of a kAmGather: where its bytes are in the target's window memory (as
// AmHeader::offset) and how many.
struct AmGatherRecord {
    uint64_t offset;
    uint32_t len;
    uint32_t pad;
};
static_assert(sizeof(AmGatherRecord) == 16, "AmGatherRecord is part of the wire format");

// Pieces of the target's layout: count pieces of len bytes each, stride bytes apart, the
// first at offset (as AmHeader::offset). Pieces lie in run order in the data. Messages
// carry runs in their wire form (run_codec.h), not as this struct.
struct AmRun {
    uint64_t offset;
    int64_t stride;
    uint32_t len;
    uint32_t count;
};

// Where a rendezvous chunk is in the origin's memory (an RMA address and key of its
// registration): a put's AmHeader::count runs in AmHeader::offset bytes, then `bytes`
// bytes, together at most kPullChunkMax; a get's `bytes` bytes only.
struct AmPull {
    uint64_t addr;
    uint64_t key;
    uint64_t bytes;
};
static_assert(sizeof(AmPull) == 24, "AmPull is part of the wire format");
constexpr size_t kPullChunkMax = size_t{1} << 20;
// What an origin puts in one chunk: large enough that a transfer costs what its bytes
// cost, small enough that packing the next overlaps it. Over tcp each chunk's transfer
// is CPU work at both ends that waits for the chunk before it, so fewer, larger chunks
// win there (perf/README.md, "Measurements behind design choices").
constexpr size_t kRendezvousChunk = 512 * 1024;
// The last chunk may be this much larger, to take a small rest that would otherwise cost
// a chunk, and a round trip, of its own (1 MiB of data and its runs: two chunks, not three).
constexpr size_t kRendezvousChunkMax = kRendezvousChunk + kRendezvousChunk / 8;
static_assert(kRendezvousChunkMax <= kPullChunkMax, "the target refuses larger chunks");

// Largest payload of one message: longer accumulates are split into chunks of whole
// elements and pipelined. A whole message stays below 16 KiB with room for a provider's
// own header: tcp;ofi_rxm sends messages that fit its 16 KiB buffers eagerly and larger
// ones by rendezvous, a round trip more each (perf/README.md, osc_ddt, has the cost).
// A multiple of 32, the largest element, so element chunks fill it.
constexpr size_t kAmMaxPayload = 16384 - 256;
constexpr size_t kAmBufferSize = sizeof(AmHeader) + kAmMaxPayload;
// A get's rendezvous chunk ends before its runs pass this, so that they travel in its
// request: a target that had to read them first would wait for the origin's progress,
// over tcp the origin's CPU, busy unpacking the chunk before.
constexpr size_t kInlineRunsMax = 12 * 1024;
static_assert(sizeof(AmPull) + kInlineRunsMax <= kAmMaxPayload, "inline runs fit a request");

}  // namespace oscf
