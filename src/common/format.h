/* SPDX-License-Identifier: MIT */
/*
 * On-disk layout of a strobe experiment, version 1: the single source of
 * truth shared by the runtime (writer, src/core) and the analysis (reader,
 * src/analysis). docs/formats/trace.md explains the same layout in prose;
 * keep the two in step and bump STROBE_FORMAT_VERSION on any change.
 *
 * An experiment directory holds a `meta` file written by `strobe run` and
 * one sub-directory per measured process image, `proc-<pid>` (or
 * `proc-<pid>-<n>` when an exec() reuses the pid), containing:
 *   defs          definitions: process, clock sync points, modules, regions,
 *                 metrics (record framing below)
 *   t<N>.evt      event stream of thread N (N = 0 is the main thread)
 *   t<N>.prof     call-path profile of thread N (fixed 64-byte slots)
 *   t<N>.bb       block stream of thread N: the basic blocks and memory
 *                 addresses of code compiled by `strobe cc --trace=bb[,mem]`
 *                 (below, "Block streams")
 *   blocks        the static tables of those modules (core/bb.c writes it,
 *                 analysis/blocks.c reads it; docs/formats/trace.md)
 * Every file is written through a MAP_SHARED mapping, so whatever a process
 * stored before being killed is in the page cache and thus in the file.
 *
 * All integers are little-endian. "uleb" is unsigned LEB128 (7 bits per
 * byte, high bit = more), "sleb" is zigzag-mapped then uleb, "str" is a uleb
 * byte length followed by that many bytes (no NUL).
 */
#ifndef STROBE_COMMON_FORMAT_H
#define STROBE_COMMON_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define STROBE_FORMAT_VERSION 1u

/* Every file is a sequence of chunks of `chunk_size` bytes; the header sits
 * at the start of chunk 0. A record never straddles a chunk boundary: a
 * writer that cannot fit a record pads the rest of the chunk with zero
 * bytes. A reader that meets a 0x00 record byte therefore skips to the next
 * chunk boundary; if that is at or beyond the end of the file, or the next
 * chunk starts with 0x00 too, the stream has ended. A file is also allowed
 * to be longer than its data (zero tail), which is what a SIGKILLed process
 * leaves behind. */
#define STROBE_CHUNK_SIZE_DEFAULT (1u << 20)
#define STROBE_CHUNK_SIZE_MIN 4096u
#define STROBE_CHUNK_SIZE_MAX (1u << 30)

/* Largest encoded size of one record of each stream kind; writers reserve
 * this much before encoding so the hot path does a single bounds check. */
#define STROBE_MAX_EVENT_BYTES 32u /* enter/exit and small ext records */
#define STROBE_MAX_EXT_PAYLOAD 256u

#define STROBE_MAGIC_EVENTS "STRBEVT1"
#define STROBE_MAGIC_DEFS "STRBDEF1"
#define STROBE_MAGIC_PROFILE "STRBPRF1"
#define STROBE_MAGIC_BLOCKS "STRBBLK1"

/* Header of t<N>.evt and defs (64 bytes). */
struct strobe_file_header {
    char magic[8];
    uint32_t version;      /* STROBE_FORMAT_VERSION */
    uint32_t header_size;  /* sizeof(struct strobe_file_header) = 64 */
    uint32_t chunk_size;   /* power of two, MIN..MAX */
    uint32_t thread_index; /* event streams: N of t<N>.evt; defs: 0 */
    uint64_t start_ticks;  /* event streams: base of the first delta */
    uint64_t dropped;      /* event streams: events not recorded because the
                              size limit was reached, or because they came
                              from a signal handler that interrupted the
                              runtime while it wrote an event (updated live) */
    uint64_t limit_bytes;  /* size limit in force (0 = none) */
    uint64_t flags;        /* event streams: STROBE_STREAM_* (0 in older files) */
    uint64_t reserved;     /* zero */
};

/* An event stream kept as a ring of chunks (flight recorder, `strobe run
 * --max-size`): the oldest chunk is overwritten when the process's trace
 * budget is used up, every chunk begins with a CHUNK record, and the
 * chunks are read in the order of their CHUNK sequence numbers, not of
 * their place in the file. */
#define STROBE_STREAM_RING 1u
/* Every chunk of the stream that is not empty begins with a CHUNK record
 * (its sequence number, time and open frames), so each chunk decodes
 * alone (`strobe report/export --chunk`). Set on every event stream the
 * runtime writes (a ring has both flags); streams of older versions have
 * 0 (no CHUNK records) or, for a ring, STROBE_STREAM_RING alone (with
 * CHUNK records). */
#define STROBE_STREAM_CHUNKED 2u
/* The smallest STROBE_MAX_SIZE: 16 chunks of the smallest size. */
#define STROBE__RING_MIN (16u * STROBE_CHUNK_SIZE_MIN)

/* ---- Event stream records (t<N>.evt) ----------------------------------
 * First byte b0:  kk c ddddd
 *   kk = b0 >> 6       record kind (below)
 *   c  = (b0 >> 5) & 1 time delta continues in a following uleb
 *   ddddd              low 5 bits of the time delta
 * The delta is in clock ticks since the previous record of the stream (the
 * first record's base is start_ticks); delta = ddddd | (uleb << 5).
 *
 *   kk = 1 ENTER       delta, then uleb region id
 *   kk = 2 EXIT        delta; leaves the innermost open region
 *   kk = 3 ENTER_SAME  delta; enters the region named by the previous
 *                      ENTER/ENTER_SAME/INHERIT record of this stream
 *   kk = 0 EXT         b0 low 6 bits = ext type (1..63; b0 == 0 is chunk
 *                      padding), followed by uleb delta, uleb payload
 *                      length, payload. Readers skip unknown types.
 */
enum strobe_event_kind {
    STROBE_EV_EXT = 0,
    STROBE_EV_ENTER = 1,
    STROBE_EV_EXIT = 2,
    STROBE_EV_ENTER_SAME = 3,
};

enum strobe_ext_type {
    /* payload: uleb tid (kernel thread id), uleb parent thread index + 1
     *          (0 = none: the first thread of a process image) */
    STROBE_EXT_THREAD_BEGIN = 1,
    /* payload: uleb utime_us, stime_us, maxrss_kb, minflt, majflt, nvcsw,
     *          nivcsw (getrusage(RUSAGE_THREAD) at thread end) */
    STROBE_EXT_THREAD_END = 2,
    /* payload: uleb metric id, sleb value (added to the current call path) */
    STROBE_EXT_METRIC = 3,
    /* payload: uleb child thread index, then uleb ticket (as in SYNC,
     * taken before the child is started; 0 = none; records written before
     * this field have none) */
    STROBE_EXT_THREAD_CREATE = 4,
    /* payload: uleb joined thread index, then uleb ticket (as CREATE,
     * taken after the join returned) */
    STROBE_EXT_THREAD_JOIN = 5,
    /* payload: uleb child pid (written by the parent after fork()) */
    STROBE_EXT_FORK = 6,
    /* payload: uleb region id. Opens a region inherited from the parent
     * process at fork(): nests like ENTER but is not a new visit. */
    STROBE_EXT_INHERIT = 7,
    /* Transactional memory (libstrobe-tm, monitoring level "events"),
     * inside the region of the atomic block, whose ENTER starts the first
     * attempt and whose EXIT ends the last one. payload: uleb event, then
     *   1 START     uleb attempt number (>= 1): a retry starts
     *   2 LOCKED    uleb ticks since the commit was requested: commit time
     *               taken and reads validated; the writes are being
     *               published, until the block's EXIT
     *   3 ABORT     uleb cause (1 read conflict, 2 write conflict,
     *               3 validation, 4 explicit, 5 irrevocable switch,
     *               6 other; in COUNTS also 7 hardware conflict,
     *               8 hardware capacity), uleb culprit thread index + 1
     *               (0 unknown)
     *   4 SERIAL    uleb cause (1 irrevocable action, 2 max rollbacks,
     *               3 other)
     *   5 CANCEL    uleb 1 if the outermost transaction was cancelled
     *   6 LOGGING   uleb 3 (enum strobe_tm_monitor, "events"): this thread
     *               logs TM events from here on (once, before its first
     *               transaction)
     *   7 COUNTS    (level "counters" and up; written at process exit by
     *               the exiting thread, outside any region, one record per
     *               thread and atomic block that ran transactions)
     *               uleb thread index (t<N> that ran them), uleb site (the
     *               atomic block: address of its call to
     *               _ITM_beginTransaction, resolved like a REGION address),
     *               uleb transactions, uleb rollbacks, uleb serialized
     *               (irrevocable action), uleb serialized (max rollbacks),
     *               uleb serialized (other), uleb cancels, uleb n, then n
     *               ulebs: aborts by cause 1..n (the ABORT causes below)
     * A committed first attempt costs one record (LOCKED), or none when it
     * ran serially. */
    STROBE_EXT_TM = 8,
    /* A CPU-time sample of this thread (`--sample`, core/sample.c), inside
     * the instrumented regions open when it was taken (it is written at
     * that time, or, when the signal interrupted the runtime itself, just
     * before the next record: the delta is then the writing time).
     * payload: uleb weight (>= 1: the sampling periods of CPU time the
     * sample stands for; CPU-time timers expire at the kernel's tick only,
     * so at a rate above it one sample stands for several), uleb missed
     * (periods of this thread's CPU time lost since its previous SAMPLE
     * record: signal blocked or delayed, or the runtime busy twice in a
     * row), uleb flags (STROBE_SAMPLE_TRUNCATED), uleb n
     * (1..STROBE_SAMPLE_MAX_FRAMES), uleb frame 0 (the interrupted
     * instruction's address), then n - 1 slebs: each following frame (a
     * return address, innermost first) minus the previous one. */
    STROBE_EXT_SAMPLE = 9,
    /* Synchronization (interposed pthread/semaphore calls; by default only
     * the ones that waited, every condition wait and barrier wait, and the
     * releases a waiter had registered for: uncontended acquisitions are
     * counted in the profile's SYNC slots instead). payload: uleb op (enum
     * strobe_sync_op), uleb object address, then
     *   ACQUIRE_*   uleb wait ticks (0: it did not wait, recorded by
     *               task-graph recording only; a timed wait is at least
     *               1), uleb releaser thread index + 1 (0 unknown), uleb
     *               its release number (0 unknown)
     *   RELEASE, SIGNAL, BROADCAST  uleb release number: the n-th release
     *               of the object published to a waiter (0: no waiter had
     *               registered; such releases are recorded by task-graph
     *               recording only)
     *   COND_WAIT   uleb wait ticks, uleb mutex address, uleb signaller
     *               thread index + 1 (0 unknown), uleb its release
     *               number, uleb 1 if it timed out. The mutex is held
     *               again: this also acquires it.
     *   BARRIER     uleb wait ticks, uleb episode (this thread's n-th wait
     *               on the barrier, from 1), uleb 1 for the serial thread
     *   TIMEOUT     uleb wait ticks: a timed acquire that gave up
     *   ARRIVE      uleb 0, uleb mutex address (a condition wait) or 0 (a
     *               barrier); see enum strobe_sync_op
     *   FORK        uleb team size; TEAM_BEGIN uleb index, uleb team
     *               size (adapters, task-graph recording only; the
     *               object is a team id: see enum strobe_sync_op)
     * then, for every op but RELEASE, SIGNAL and BROADCAST: uleb n (0 to
     * STROBE_SYNC_MAX_FRAMES), n ulebs: return addresses of the waiting
     * call's stack, innermost first (the runtime writes one: the return
     * address of the interposed call; readers skip the runtime's own
     * frames). Records written before this field have none.
     * Then, for every op: uleb ticket (0 = none), a process-wide number
     * (1, 2, ...; gaps possible) that orders the synchronization events
     * of all threads consistently with happens-before: when one call
     * happens before another (same thread, or a release passed on to the
     * acquire, wake-up or barrier departure it enables), its ticket is
     * smaller. It is taken after an acquire (or trylock, COND_WAIT,
     * BARRIER) returns, before a release (or signal, broadcast, sem_post)
     * is passed on, and at a barrier's or condition wait's entry
     * (ARRIVE), before the wait begins. Tickets are given by task-graph
     * recording only (STROBE_LOCKS=all, `strobe run --taskgraph`; on by
     * itself when a module traced by `strobe cc --trace=bb` registers,
     * unless STROBE_LOCKS=0): then every call is recorded, waited or not,
     * and every record but TIMEOUT has a ticket, and a MARK with the same
     * ticket goes into the thread's block stream. A condition wait writes
     * ARRIVE, which also releases its mutex (no RELEASE record: an
     * acquirer that waited for that release names a release number no
     * record carries), then COND_WAIT, which re-acquires it. Without
     * task-graph recording the ticket is 0. Records written before this
     * field have none. */
    STROBE_EXT_SYNC = 10,
    /* A large block (>= the MALLOC CONFIG threshold) allocated
     * or freed by this thread (`--malloc`, core/malloc.c), inside the
     * regions open at the time. payload: uleb op (enum strobe_alloc_op),
     * uleb call (enum strobe_alloc_call), uleb block address, uleb size
     * (bytes asked for; for a FREE the block's recorded size). The FREE of
     * a block may be in another thread's stream than its ALLOC. */
    STROBE_EXT_ALLOC = 11,
    /* MPI (libstrobe-mpi, `--mpi`), inside the region of the MPI call
     * (kind STROBE_REGION_MPI). Ranks are in MPI_COMM_WORLD's numbering,
     * communicators are the ids of MPI_COMM definitions, bytes are count x
     * type size. payload: uleb op (enum strobe_mpi_op), then
     *   SEND            uleb peer, sleb tag, uleb comm, uleb bytes
     *   RECV            uleb source, sleb tag, uleb comm, uleb bytes: the
     *                   message that arrived (from its status)
     *   ISEND           uleb request, uleb peer, sleb tag, uleb comm, uleb
     *                   bytes: a nonblocking (or started persistent) send;
     *                   request is a per-process number
     *   ISEND_COMPLETE  uleb request: the Wait/Test call completing it
     *   IRECV_REQUEST   uleb request: a nonblocking receive was posted
     *   IRECV           uleb request, uleb source, sleb tag, uleb comm,
     *                   uleb bytes: it completed with this message
     *   COLL_BEGIN      (nothing): a blocking collective starts
     *   COLL_END        uleb collective (enum strobe_mpi_coll), uleb comm,
     *                   uleb root + 1 (0 = none), uleb bytes sent, uleb
     *                   bytes received by this rank (docs/mpi.md)
     *   INIT            uleb world rank, uleb world size: MPI_Init(_thread)
     *                   returned
     *   FINALIZE        (nothing): MPI_Finalize is called */
    STROBE_EXT_MPI = 12,
    /* The first record of every chunk of a chunked or ring stream
     * (STROBE_STREAM_CHUNKED, STROBE_STREAM_RING):
     * uleb sequence number (1, 2, ... in writing order), uleb ticks (the
     * absolute time of this record: the chunk decodes without the ones
     * before), uleb depth, then depth times: uleb region id, uleb ticks at
     * its entry, outermost first: the frames open when the chunk began,
     * whose ENTERs may be overwritten (a ring) or not read. Not an event: readers keep
     * it to themselves. */
    STROBE_EXT_CHUNK = 13,
};

enum strobe_mpi_op {
    STROBE_MPI_SEND = 1,
    STROBE_MPI_RECV = 2,
    STROBE_MPI_ISEND = 3,
    STROBE_MPI_ISEND_COMPLETE = 4,
    STROBE_MPI_IRECV_REQUEST = 5,
    STROBE_MPI_IRECV = 6,
    STROBE_MPI_COLL_BEGIN = 7,
    STROBE_MPI_COLL_END = 8,
    STROBE_MPI_INIT = 9,
    STROBE_MPI_FINALIZE = 10,
    STROBE_MPI_NOPS = 11,
};

/* The blocking collectives a COLL_END names (the OTF2 export maps them to
 * OTF2_CollectiveOp). */
enum strobe_mpi_coll {
    STROBE_MPI_COLL_BARRIER = 1,
    STROBE_MPI_COLL_BCAST = 2,
    STROBE_MPI_COLL_GATHER = 3,
    STROBE_MPI_COLL_GATHERV = 4,
    STROBE_MPI_COLL_SCATTER = 5,
    STROBE_MPI_COLL_SCATTERV = 6,
    STROBE_MPI_COLL_ALLGATHER = 7,
    STROBE_MPI_COLL_ALLGATHERV = 8,
    STROBE_MPI_COLL_ALLTOALL = 9,
    STROBE_MPI_COLL_ALLTOALLV = 10,
    STROBE_MPI_COLL_ALLTOALLW = 11,
    STROBE_MPI_COLL_ALLREDUCE = 12,
    STROBE_MPI_COLL_REDUCE = 13,
    STROBE_MPI_COLL_REDUCE_SCATTER = 14,
    STROBE_MPI_COLL_SCAN = 15,
    STROBE_MPI_COLL_EXSCAN = 16,
    STROBE_MPI_COLL_REDUCE_SCATTER_BLOCK = 17,
    STROBE_MPI_NCOLLS = 18,
};

/* STROBE_EXT_SAMPLE */
#define STROBE_SAMPLE_MAX_FRAMES 128u
/* Frames a SYNC wait record carries at most. */
#define STROBE_SYNC_MAX_FRAMES 8
#define STROBE_SAMPLE_TRUNCATED 1u /* the stack had more frames than the record */
/* Rates `strobe run --sample=HZ` and STROBE_SAMPLE accept, per second of
 * a thread's CPU time. */
#define STROBE_SAMPLE_HZ_DEFAULT 1000u
#define STROBE_SAMPLE_HZ_MIN 1u
#define STROBE_SAMPLE_HZ_MAX 10000u

enum strobe_sync_op {
    STROBE_SYNC_ACQUIRE_MUTEX = 1,
    STROBE_SYNC_ACQUIRE_READ = 2,  /* rwlock */
    STROBE_SYNC_ACQUIRE_WRITE = 3, /* rwlock */
    STROBE_SYNC_ACQUIRE_SPIN = 4,
    STROBE_SYNC_ACQUIRE_SEM = 5,
    STROBE_SYNC_RELEASE = 6,
    STROBE_SYNC_COND_WAIT = 7,
    STROBE_SYNC_SIGNAL = 8,
    STROBE_SYNC_BROADCAST = 9,
    STROBE_SYNC_BARRIER = 10,
    STROBE_SYNC_TIMEOUT = 11,
    /* task-graph recording only: the thread arrives at a barrier or
     * enters a condition wait (the object); payload uleb 0 (no wait yet),
     * uleb the mutex address (condition wait: this releases it) or 0
     * (barrier). The matching
     * BARRIER or COND_WAIT record follows when the call returns (none if
     * it failed or the thread ended first). */
    STROBE_SYNC_ARRIVE = 12,
    /* task-graph recording only, written by adapters (strobe/adapter.h:
     * the OpenMP adapter): a thread forks a team (an OpenMP parallel
     * region). object: the team's id, the ticket of this record (unique
     * in the process, not an address); payload uleb team size asked for.
     * Its ticket is taken before any team thread starts. */
    STROBE_SYNC_FORK = 13,
    /* ... a thread begins its part of the team `object` (an OpenMP
     * implicit task; the forking thread writes none); payload uleb index
     * in the team (>= 1), uleb team size. The team's barriers are ARRIVE
     * and BARRIER records on the same object, with the episode the n-th
     * barrier of the team; the forking thread's departure from the team's
     * last barrier is the join. */
    STROBE_SYNC_TEAM_BEGIN = 14,
};

/* Kinds of synchronization objects (profile SYNC slots). */
enum strobe_sync_kind {
    STROBE_SYNC_MUTEX = 1,
    STROBE_SYNC_RWLOCK = 2,
    STROBE_SYNC_SPIN = 3,
    STROBE_SYNC_SEM = 4,
    STROBE_SYNC_COND = 5,
    STROBE_SYNC_BARRIER_OBJ = 6,
};

enum strobe_alloc_op {
    STROBE_ALLOC_ALLOC = 1,
    STROBE_ALLOC_FREE = 2,
};

/* The function that allocated or freed a block (STROBE_EXT_ALLOC). */
enum strobe_alloc_call {
    STROBE_ALLOC_MALLOC = 1,
    STROBE_ALLOC_CALLOC = 2,
    STROBE_ALLOC_REALLOC = 3,  /* both the free of the old block and the new one */
    STROBE_ALLOC_MEMALIGN = 4, /* posix_memalign, aligned_alloc, memalign, valloc, pvalloc */
    STROBE_ALLOC_MMAP = 5,     /* an anonymous mapping */
    STROBE_ALLOC_FREE_CALL = 6,
    STROBE_ALLOC_MUNMAP = 7,
    STROBE_ALLOC_NCALLS = 8,
};

/* STROBE_EXT_TM: events, abort causes, serialization causes. */
enum strobe_tm_event {
    STROBE_TM_START = 1,
    STROBE_TM_LOCKED = 2,
    STROBE_TM_ABORT = 3,
    STROBE_TM_SERIAL = 4,
    STROBE_TM_CANCEL = 5,
    STROBE_TM_LOGGING = 6,
    STROBE_TM_COUNTS = 7,
};
enum strobe_tm_abort_cause {
    STROBE_TM_ABORT_READ_CONFLICT = 1,
    STROBE_TM_ABORT_WRITE_CONFLICT = 2,
    STROBE_TM_ABORT_VALIDATION = 3,
    STROBE_TM_ABORT_EXPLICIT = 4,
    STROBE_TM_ABORT_IRREVOCABLE = 5,
    STROBE_TM_ABORT_OTHER = 6,
    STROBE_TM_ABORT_HW_CONFLICT = 7, /* a hardware transaction: conflict with another thread */
    STROBE_TM_ABORT_HW_CAPACITY = 8, /* a hardware transaction: too much data for the cache */
};
enum strobe_tm_serial_cause {
    STROBE_TM_SERIAL_IRREVOCABLE = 1,
    STROBE_TM_SERIAL_MAX_ROLLBACKS = 2,
    STROBE_TM_SERIAL_OTHER = 3,
};

/* ---- Block streams (t<N>.bb) ------------------------------------------
 * Header: struct strobe_file_header, magic STROBE_MAGIC_BLOCKS, chunked
 * like an event stream (a 0x00 record byte pads to the chunk end). The
 * records carry no time: they fall between the thread's synchronization
 * events, which MARK records place in the stream.
 *
 *   BLOCK  b0 & 1 == 1. 3 bytes little-endian v = id << 1 | 1, id the
 *          process-wide segment id (1 .. 2^23 - 1; the `blocks` file maps
 *          it to its module's table, common/bbtrace.h).
 *   NEAR   b0 & 3 == 2. 1 byte: id = the id of the previous BLOCK or NEAR
 *          record of this chunk (0 at the chunk start) + ((int8_t)b0 >> 2),
 *          a signed 6-bit delta (-32..31; 0: the same segment again).
 *          Otherwise as BLOCK.
 *          After the head (BLOCK or NEAR) of a segment of a module traced
 *          at level MEM with r > 0 ops whose base is STROBE_BB_RECORDED
 *          ("recorded ops", numbered 0..r-1 in op order): ceil(r / 8)
 *          stride-mask bytes, bit k (byte k / 8, bit k % 8) for recorded
 *          op k. Then, in op order, per recorded op whose bit is clear,
 *          one address field:
 *            2 bytes little-endian int16 d, d != -32768: the address is
 *              this op's previous address plus d;
 *            0x00 0x80 then 6 bytes little-endian: the address itself;
 *          the op's stride becomes its address minus its previous
 *          address. A recorded op whose bit is set has no field: its
 *          address is its previous address plus its stride (both
 *          unchanged then: the access repeats the last step). An op's
 *          previous address and stride are those of this chunk, 0 at the
 *          chunk start; arithmetic is modulo 2^64.
 *          The other ops' addresses follow from the table (a static offset
 *          of a recorded op of the segment, or a constant).
 *   MARK   b0 = 0x04, uleb ticket: the synchronization event of this
 *          thread's event stream that carries this ticket happened here
 *          (STROBE_EXT_SYNC, THREAD_CREATE, THREAD_JOIN).
 *   REPEAT b0 = 0x08, 1 byte n >= 1: the segment of the chunk's
 *          previous BLOCK or NEAR record runs n more times, every recorded
 *          op of it at its stride each time (as if each run were a NEAR
 *          record with delta 0 and every mask bit set). Only after a
 *          BLOCK, NEAR or REPEAT record of the same chunk. The writer
 *          updates n in place while the segment keeps repeating (a new
 *          REPEAT follows a full one), so a killed writer leaves the runs
 *          counted so far.
 *   Other b0 values with b0 & 3 == 0 are reserved. Every chunk decodes
 *   alone: the writer resets the previous id and the per-op previous
 *   addresses and strides at each chunk start. A record's first byte is
 *   stored last, and beyond the end of the data the writer stores only
 *   zeros or the record it is writing, so that a killed writer leaves
 *   whole records followed by a zero byte (b0 0: the end). */
#define STROBE_BB_MARK 0x04u
#define STROBE_BB_REPEAT 0x08u
#define STROBE_BB_MAX_ID 0x7fffffu /* 2^23 - 1 */
#define STROBE_BB_ESCAPE 0x8000u

/* ---- Block tables (blocks) --------------------------------------------
 * The static tables of the modules traced by `strobe cc --trace=bb[,mem]`
 * (common/bbtrace.h) as the process registered them, so that block ids and
 * op numbers of its t<N>.bb streams can be resolved after it is gone.
 * Header: struct strobe_file_header, magic STROBE_MAGIC_BLOCK_TABLES,
 * chunked and framed like defs: byte type (1..255; 0 = chunk padding),
 * uleb payload length, payload; readers skip unknown types. Each module
 * is one MODULE record followed by its NAMES, BLOCKS and OPS records (in
 * that order, each continuing the previous record of its kind), all
 * written at its registration under one lock, so a module's records are
 * never interleaved with another's. A process killed while writing them
 * leaves the last module incomplete: readers keep the entries present
 * (a stream naming a missing one is then an error). A fork child's file
 * repeats the parent's modules, whose ids its code keeps using. */
#define STROBE_MAGIC_BLOCK_TABLES "STRBTAB1"

enum strobe_bt_type {
    /* uleb first id (process-wide id of the module's block 1; its blocks
     * are first .. first + nblocks - 1), uleb nblocks, uleb nops, uleb
     * nnames, uleb level (STROBE_BB_LEVEL_*), str module name */
    STROBE_BT_MODULE = 1,
    /* uleb n, then n strs: the module's next n names (at most
     * STROBE_BT_NAME_MAX bytes each: longer ones are cut) */
    STROBE_BT_NAMES = 2,
    /* uleb n, then n times struct strobe_bb_block: uleb first_op (in the
     * module), uleb nops, uleb recorded, uleb function (name index), uleb
     * file (name index), uleb line */
    STROBE_BT_BLOCKS = 3,
    /* uleb n, then n times struct strobe_bb_op: uleb size, uleb line, uleb
     * column, uleb kind, sleb base (STROBE_BB_RECORDED, STROBE_BB_CONSTANT
     * or an op number of the block), sleb offset (for a CONSTANT: the
     * address at run time) */
    STROBE_BT_OPS = 4,
};
#define STROBE_BT_NAME_MAX 1024u

/* ---- Definition records (defs) ----------------------------------------
 * Each record: byte type (1..255; 0 = chunk padding), uleb payload length,
 * payload. Readers skip unknown types.
 *
 * Region ids and metric ids are process-local, dense and start at 1 (0 is
 * never used: the public API's handles use it for "not registered yet").
 * Compiler-instrumented functions and annotated regions share the region
 * id space; metrics have their own. A REGION/METRIC record precedes the
 * first use of its id in time. A fork child's defs repeat the parent's
 * MODULE/REGION/METRIC (and MPI_RANK) records, so inherited ids keep their
 * meaning. */
enum strobe_def_type {
    /* uleb pid, uleb ppid, uleb clock kind (enum strobe_clock_kind),
     * uleb realtime_ns at start, str exe path, str parent process dir name
     * ("" unless created by fork) */
    STROBE_DEF_PROCESS = 1,
    /* uleb ticks, uleb monotonic ns: one point of the tick->ns line */
    STROBE_DEF_CLOCK_SYNC = 2,
    /* str path, uleb load bias, uleb lowest address, uleb highest address + 1 */
    STROBE_DEF_MODULE = 3,
    /* uleb id, uleb kind (enum strobe_region_kind), uleb address (0 for
     * annotations), str name ("" when resolved offline), str file, uleb line */
    STROBE_DEF_REGION = 4,
    /* uleb id, str name, str unit */
    STROBE_DEF_METRIC = 5,
    /* uleb ticks the runtime spends per recorded event (self-measured at
     * start-up, used to estimate measurement overhead) */
    STROBE_DEF_OVERHEAD = 6,
    /* uleb ticks at exit, sleb exit status (normal process exit only) */
    STROBE_DEF_PROCESS_END = 7,
    /* How the measurement of one thread ended, so that readers need not
     * open its stream to learn it: uleb thread index, uleb tid (kernel
     * thread id), uleb parent thread index + 1 (0 = none), uleb ticks at
     * its THREAD_BEGIN, uleb how (enum
     * strobe_thread_end_how), uleb ticks at the end, uleb events (records
     * in its stream; without a stream the enter and exit events measured),
     * uleb bytes (of encoded records, chunk padding excluded), uleb dropped,
     * uleb the stream's size limit (its header's limit_bytes), uleb offset in its stream of the records
     * written at process exit by the adapters (TM COUNTS; 0 = none), uleb n (0, or 7 followed by the
     * THREAD_END rusage fields), then uleb depth: frames still open at the
     * end (each listed by one of the OPEN_FRAMES records that follow).
     * Absent for a thread of a killed process (and of an image replaced by
     * exec), whose stream must be decoded instead. */
    STROBE_DEF_THREAD_SUMMARY = 8,
    /* Frames open at the end of a thread's measurement, outermost first:
     * uleb thread index, uleb depth of the first frame listed (0 = the
     * outermost), uleb n, then n times: uleb region id, uleb ticks at its
     * entry, uleb profile slot of its call path + 1 (0 = none: no profile,
     * or the profile had no room). Readers charge each the time from its
     * entry to the end, as if it was left then. */
    STROBE_DEF_OPEN_FRAMES = 9,
    /* uleb rank, uleb world size (0 = unknown), str the environment
     * variable the rank was read from (OMPI_COMM_WORLD_RANK, PMI_RANK,
     * PMIX_RANK or SLURM_PROCID; common/mpi_rank.h). At most one, written
     * at start-up by a process its MPI launcher gave a rank; a fork child
     * repeats its parent's (it belongs to the same rank). Older readers
     * skip it. */
    STROBE_DEF_MPI_RANK = 10,
    /* (11 MAP is reserved for the sampler.) Allocation tracking (`--malloc`, core/malloc.c): uleb
     * what (enum strobe_malloc_what), then
     *   1 CONFIG   uleb large-block threshold in bytes: written at start-up
     *              (and by a fork child); the run tracked allocations
     *   2 SUMMARY  at exit: uleb peak live bytes (process-wide), uleb ticks
     *              when the peak was reached (0: nothing allocated), uleb
     *              bytes live at exit, uleb blocks live at exit, uleb blocks
     *              the tracker had no room for (not counted anywhere)
     *   3 LIVE     at exit, after SUMMARY, one per allocating call path
     *              with blocks live at exit: uleb thread index (t<N> that
     *              allocated them), uleb its profile slot of the call path
     *              + 1 (0 = unknown: no profile, or it ran out of slots),
     *              uleb blocks, uleb bytes */
    STROBE_DEF_MALLOC = 13,
    /* An MPI communicator (libstrobe-mpi, `--mpi`): uleb id, uleb flags
     * (1 = an intercommunicator: the members are its local group; 2 = the
     * member list was cut, see size), uleb size, uleb n, then n runs of
     * members in the group's rank order: uleb first world rank, uleb
     * count (consecutive world ranks). Ids are global to the job:
     * MPI_COMM_WORLD is 0, MPI_COMM_SELF is (world rank << 32) | 1, and a
     * communicator made by a collective call is (world rank of its rank 0
     * << 32) | n, n >= 2 counting that rank's communicators, agreed on by
     * its members when it is made. A communicator first met otherwise (an
     * intercommunicator, MPI_Comm_idup) gets an id of its own process
     * only: (own world rank << 32) | n. Written before the first record
     * naming it. */
    STROBE_DEF_MPI_COMM = 12,
    /* The run sampled (`--sample`, core/sample.c): uleb rate in Hz of
     * each thread's CPU time, uleb source (enum strobe_sample_source).
     * Written at start-up (and by a fork child); at most one. */
    STROBE_DEF_SAMPLE = 14,
    /* The offset of this process's clock to a reference rank's, measured
     * by libstrobe-mpi (`--mpi`, adapters/mpi/clocks.c) at MPI_Init and at
     * MPI_Finalize: uleb when (enum strobe_clock_offset_when), uleb own
     * world rank, uleb reference world rank (0), uleb round trips made,
     * uleb ticks when the shortest round trip began, uleb its ticks (local
     * send to local receive), uleb the reference's ticks at its reply (in
     * the reference process's clock). The reference itself writes one with
     * 0 round trips and its own ticks. At most one per `when`; readers
     * convert each side with its own process's tick->ns line and take
     * offset = reference ns - (send ns + receive ns) / 2 (Score-P's
     * scheme), linearly interpolated between the two. */
    STROBE_DEF_CLOCK_OFFSET = 15,
    /* Recording paused or resumed (`strobe run --delay/--duration
     * /--toggle-signal`, strobe_pause/strobe_resume; core/pause.c): uleb
     * ticks, uleb what (enum strobe_recording_what), uleb cause (enum
     * strobe_recording_cause). Written when the process-wide recording
     * state changes, in time order; a process that starts paused (--delay)
     * writes a STOP at its start. */
    STROBE_DEF_RECORDING = 16,
};

enum strobe_clock_offset_when {
    STROBE_CLOCK_OFFSET_INIT = 1,     /* MPI_Init(_thread) returned */
    STROBE_CLOCK_OFFSET_FINALIZE = 2, /* MPI_Finalize is called */
};

enum strobe_recording_what {
    STROBE_RECORDING_STOP = 0,   /* from here on nothing is recorded */
    STROBE_RECORDING_RESUME = 1, /* recording again */
};

enum strobe_recording_cause {
    STROBE_RECORDING_API = 1,    /* strobe_pause() / strobe_resume() */
    STROBE_RECORDING_SIGNAL = 2, /* the toggle signal */
    STROBE_RECORDING_TIMER = 3,  /* --delay / --duration */
};

enum strobe_sample_source {
    STROBE_SAMPLE_PERF = 1,  /* a software perf event (task clock, user mode) per thread */
    STROBE_SAMPLE_TIMER = 2, /* a POSIX timer on each thread's CPU-time clock (tick-limited) */
};

enum strobe_malloc_what {
    STROBE_MALLOC_CONFIG = 1,
    STROBE_MALLOC_SUMMARY = 2,
    STROBE_MALLOC_LIVE = 3,
};

enum strobe_thread_end_how {
    STROBE_THREAD_ENDED = 1,   /* the thread ended (returned, pthread_exit, or called exit()) */
    STROBE_THREAD_AT_EXIT = 2, /* still running when another thread ended the process */
};

enum strobe_clock_kind {
    STROBE_CLOCK_TSC = 0,       /* rdtsc; tick->ns from CLOCK_SYNC points */
    STROBE_CLOCK_MONOTONIC = 1, /* clock_gettime(CLOCK_MONOTONIC): 1 tick = 1 ns */
};

enum strobe_region_kind {
    STROBE_REGION_FUNCTION = 0,  /* -finstrument-functions: address */
    STROBE_REGION_USER = 1,      /* annotation API: name/file/line */
    STROBE_REGION_TM_ATOMIC = 2, /* atomic block (TM runtime): address of its
                                    call to _ITM_beginTransaction */
    /* OpenMP constructs (the OMPT adapter, libstrobe-ompt): the address is
     * the return address of the runtime call that began the construct */
    STROBE_REGION_OMP_PARALLEL = 3,      /* fork to join, on the encountering thread */
    STROBE_REGION_OMP_IMPLICIT_TASK = 4, /* a thread's implicit task of a parallel region */
    STROBE_REGION_OMP_LOOP = 5,          /* worksharing loop */
    STROBE_REGION_OMP_SECTIONS = 6,      /* sections */
    STROBE_REGION_OMP_SINGLE = 7,        /* single (the thread that runs it) */
    STROBE_REGION_OMP_BARRIER = 8,       /* waiting in a barrier, explicit or implicit */
    STROBE_REGION_OMP_CRITICAL = 9,      /* inside a critical section */
    STROBE_REGION_OMP_WAIT = 10, /* waiting for a critical section, lock, ordered, taskwait or taskgroup */
    /* An MPI call (libstrobe-mpi): the address is the wrapper's entry,
     * resolved like a function to the MPI function's name */
    STROBE_REGION_MPI = 11,
    STROBE_REGION_OMP_TASK = 12, /* an explicit task running, named after the task construct */
    /* Constructs only the directive instrumenter (`strobe instrument`)
     * records, named by their descriptor (address 0, name and file:line
     * given), like the OpenMP kinds above when it records those */
    STROBE_REGION_OMP_SECTION = 13,   /* one section of a sections construct, on the thread running it */
    STROBE_REGION_OMP_MASTER = 14,    /* master or masked: the thread that runs the block */
    STROBE_REGION_OMP_ATOMIC = 15,    /* an atomic statement */
    STROBE_REGION_OMP_ORDERED = 16,   /* inside an ordered block (its wait is an OMP_WAIT) */
    STROBE_REGION_OMP_FLUSH = 17,     /* a flush */
    STROBE_REGION_OMP_TASKGROUP = 18, /* a taskgroup, its end's wait for the tasks included */
    STROBE_REGION_SPECULATIVE = 19,   /* a speculative for or sections (`#pragma speculative`) */
};
#define STROBE_REGION_KIND_MAX STROBE_REGION_SPECULATIVE

/* The metric the OMPT adapter adds to a parallel region once per fork:
 * its team size (the OTF2 export turns it into an OmpFork). */
#define STROBE_OMP_TEAM_SIZE_METRIC "omp team size"

/* "function", "user", "atomic", "omp parallel", ...: the kind's name in
 * reports and exports. */
static inline const char *strobe_region_kind_name(unsigned kind)
{
    static const char *const names[STROBE_REGION_KIND_MAX + 1] = {
        "function",          "user",         "atomic",       "omp parallel",
        "omp implicit task", "omp loop",     "omp sections", "omp single",
        "omp barrier",       "omp critical", "omp wait",     "mpi",
        "omp task",          "omp section",  "omp master",   "omp atomic",
        "omp ordered",       "omp flush",    "omp taskgroup", "speculative"};
    return kind <= STROBE_REGION_KIND_MAX && names[kind] ? names[kind] : "unknown";
}

/* Regions whose address is a return address (of the call that began an
 * atomic block or an OpenMP construct): resolved to the call's source
 * line and named "<kind name>@<function>". */
static inline int strobe_region_kind_is_site(unsigned kind)
{
    return kind == STROBE_REGION_TM_ATOMIC ||
           (kind >= STROBE_REGION_OMP_PARALLEL && kind <= STROBE_REGION_OMP_TASK && kind != STROBE_REGION_MPI);
}

/* Regions named by a code address resolved offline: functions, call
 * sites, MPI wrappers. */
static inline int strobe_region_kind_is_code(unsigned kind)
{
    return kind == STROBE_REGION_FUNCTION || kind == STROBE_REGION_MPI || strobe_region_kind_is_site(kind);
}

/* ---- Profile (t<N>.prof) ----------------------------------------------
 * Header (64 bytes) then 64-byte slots; slot 0 is the call tree root
 * (region STROBE_PROF_NO_REGION). Times are in clock ticks; node times
 * cover completed visits only, visits are counted on entry. */
struct strobe_prof_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size; /* 64 */
    uint32_t slot_size;   /* 64 */
    uint32_t thread_index;
    uint32_t slot_count; /* slots in use; published after the slot is filled */
    uint32_t flags;      /* STROBE_PROF_* */
    uint64_t reserved[4];
};

#define STROBE_PROF_ENDED 1u    /* the thread finished and closed its profile */
#define STROBE_PROF_OVERFLOW 2u /* slots or depth ran out; profile is partial */
#define STROBE_PROF_NO_REGION UINT32_MAX
#define STROBE_PROF_NONE UINT32_MAX /* null slot index */

enum strobe_prof_tag {
    STROBE_SLOT_NODE = 1,
    STROBE_SLOT_METRIC = 2,
    STROBE_SLOT_SYNC = 3,
};

struct strobe_prof_node {
    uint32_t tag;         /* STROBE_SLOT_NODE */
    uint32_t parent;      /* slot index */
    uint32_t region;      /* region id of this process */
    uint32_t first_child; /* slot index or STROBE_PROF_NONE */
    uint32_t next_sibling;
    uint32_t first_metric; /* slot index of a STROBE_SLOT_METRIC or NONE */
    uint64_t visits;
    uint64_t incl_ticks; /* sum over completed visits */
    uint64_t min_ticks;  /* UINT64_MAX until a visit completes */
    uint64_t max_ticks;
    double sumsq_ticks; /* sum of squared inclusive durations */
};

struct strobe_prof_metric {
    uint32_t tag;  /* STROBE_SLOT_METRIC */
    uint32_t node; /* owning node slot */
    uint32_t metric;
    uint32_t next; /* next metric slot of the same node */
    uint64_t count;
    int64_t sum;
    int64_t min;
    int64_t max;
    uint64_t reserved[2];
};

/* One synchronization object as used from one call path by this thread
 * (the interposer, src/core/sync.c). Acquisitions: lock calls that
 * succeeded (for a semaphore: waits; a condition variable: waits; a
 * barrier: episodes). Hold time is the sum over the acquisitions whose
 * hold was timed (hold_samples of them: the first 16, then about one in
 * 16), so the total hold is about hold_ticks * acquisitions / hold_samples. */
struct strobe_prof_sync {
    uint32_t tag;          /* STROBE_SLOT_SYNC */
    uint32_t node;         /* node slot of the acquiring call path */
    uint32_t kind;         /* enum strobe_sync_kind */
    uint32_t hold_samples; /* acquisitions whose hold time was measured */
    uint64_t object;       /* run-time address */
    uint64_t acquisitions;
    uint64_t contended;  /* acquisitions that had to wait */
    uint64_t wait_ticks; /* total wait */
    uint64_t max_wait_ticks;
    uint64_t hold_ticks; /* over the hold_samples timed holds */
};

_Static_assert(sizeof(struct strobe_file_header) == 64, "header layout");
_Static_assert(sizeof(struct strobe_prof_header) == 64, "header layout");
_Static_assert(sizeof(struct strobe_prof_node) == 64, "slot layout");
_Static_assert(sizeof(struct strobe_prof_metric) == 64, "slot layout");
_Static_assert(sizeof(struct strobe_prof_sync) == 64, "slot layout");

/* ---- LEB128 helpers shared by writer and reader ----------------------- */

/* Appends v as uleb at p; returns the byte after it. Needs <= 10 bytes. */
static inline uint8_t *strobe_uleb_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t strobe_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t strobe_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Decodes a uleb from [*p, end). Returns 0 and advances *p, or -1 when the
 * value is truncated or longer than 64 bits. Never reads past end. */
static inline int strobe_uleb_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *q = *p;
    for (;;) {
        if (q >= end || shift > 63)
            return -1;
        uint8_t b = *q++;
        if (shift == 63 && (b & 0x7e))
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
        shift += 7;
    }
    *p = q;
    *out = v;
    return 0;
}

#endif
