/* SPDX-License-Identifier: MIT */
/*
 * The trace half of libstrobe-mpi.so (trace.h): MPI records and
 * communicator definitions for the experiment of `strobe run --mpi`.
 *
 * Two tables map MPI handles to what the records need. Communicators: id,
 * and the MPI_COMM_WORLD rank of each member (so a record names its peer
 * the same way on every rank). Requests: the message a nonblocking call
 * posted, until a Wait/Test completes it (persistent ones until freed),
 * so the completion record carries the original parameters. Both are
 * chained hash tables of malloc'd entries behind one spin lock: MPI calls
 * are not made from signal handlers, and a pthread mutex would show up in
 * `--locks`.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/mpi/clocks.h"
#include "adapters/mpi/pmpi.h"
#include "adapters/mpi/trace.h"

bool strobe__mpi_tracing;

__attribute__((constructor)) static void detect_runtime(void)
{
    strobe__mpi_tracing = strobe_is_active() != 0;
}

/* ---- tables ------------------------------------------------------------ */

#define NBUCKETS 1024u
#define DEF_MAX 2048u /* STROBE_DEF_MPI_COMM payload, strobe_adapter_define's limit */

struct comm {
    struct comm *next;
    uintptr_t key; /* the handle */
    uint64_t id;
    bool inter;
    int size;   /* local group */
    int *world; /* world rank of each local rank; NULL: MPI_COMM_WORLD itself */
    int remote_size;
    int *remote_world; /* intercommunicators */
};

struct request {
    struct request *next;
    uintptr_t key;
    bool recv, persistent, active;
    uint64_t number; /* of the current (or last) activation */
    uint64_t peer;   /* send: world rank of dest */
    int64_t tag;
    uint64_t comm;   /* id */
    MPI_Comm handle; /* to translate a receive's source */
    uint64_t bytes;
};

static struct {
    atomic_flag lock;
    struct comm *comms[NBUCKETS];
    struct request *requests[NBUCKETS];
    uint64_t next_comm;    /* n of the ids this rank hands out */
    uint64_t next_request; /* request numbers */
    int world_rank, world_size;
} g = {.lock = ATOMIC_FLAG_INIT};

/* acquire/release: the tables' contents pass from one holder to the next */
static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&g.lock, memory_order_acquire))
        __builtin_ia32_pause();
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&g.lock, memory_order_release);
}

static unsigned bucket(uintptr_t key)
{
    return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 54) & (NBUCKETS - 1);
}

#define HANDLE(h) ((uintptr_t)(h))

/* ---- records ----------------------------------------------------------- */

struct rec {
    uint8_t buf[64];
    uint8_t *p;
};

static void rec_start(struct rec *r, unsigned op)
{
    r->p = strobe_uleb_put(r->buf, op);
}

static void put(struct rec *r, uint64_t v)
{
    r->p = strobe_uleb_put(r->p, v);
}

static void rec_write(struct rec *r)
{
    strobe_event_record(STROBE_EXT_MPI, r->buf, (size_t)(r->p - r->buf));
}

/* ---- communicators ------------------------------------------------------ */

/* World ranks of group's members, in the group's order; NULL when out of
 * memory. */
static int *world_ranks(MPI_Group group, int n)
{
    int *local = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int *world = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    MPI_Group wg;
    if (local && world && PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
        for (int i = 0; i < n; i++)
            local[i] = i;
        int rc = PMPI_Group_translate_ranks(group, n, local, wg, world);
        PMPI_Group_free(&wg);
        if (rc == MPI_SUCCESS) {
            free(local);
            return world;
        }
    }
    free(local);
    free(world);
    return NULL;
}

/* The DEF_MPI_COMM record of c: members as runs of consecutive world ranks,
 * cut when they do not fit. */
static void define(const struct comm *c)
{
    uint8_t buf[DEF_MAX], *p = buf;
    p = strobe_uleb_put(p, c->id);
    uint8_t *flags = p++; /* one byte: the flags are < 0x80 */
    p = strobe_uleb_put(p, (uint64_t)c->size);
    uint8_t *nruns_at = p;
    p += 5; /* uleb n, padded to 5 bytes so it can be filled in last */
    unsigned f = c->inter ? 1 : 0;
    uint64_t nruns = 0;
    for (int i = 0; i < c->size;) {
        int first = c->world ? c->world[i] : i, n = 1;
        while (i + n < c->size && (c->world ? c->world[i + n] : i + n) == first + n)
            n++;
        if ((size_t)(p - buf) + 20 > sizeof buf) {
            f |= 2;
            break;
        }
        p = strobe_uleb_put(p, (uint64_t)first);
        p = strobe_uleb_put(p, (uint64_t)n);
        nruns++;
        i += n;
    }
    *flags = (uint8_t)f;
    for (int k = 0; k < 5; k++, nruns >>= 7)
        nruns_at[k] = (uint8_t)((nruns & 0x7f) | (k < 4 ? 0x80 : 0));
    strobe_adapter_define(STROBE_DEF_MPI_COMM, buf, (size_t)(p - buf));
}

/* Adds comm with id to the table and defines it. Caller holds the lock. */
static struct comm *comm_add(MPI_Comm handle, uint64_t id)
{
    struct comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->key = HANDLE(handle);
    c->id = id;
    int inter = 0;
    PMPI_Comm_test_inter(handle, &inter);
    c->inter = inter != 0;
    PMPI_Comm_size(handle, &c->size);
    if (handle != MPI_COMM_WORLD) {
        MPI_Group grp;
        if (PMPI_Comm_group(handle, &grp) == MPI_SUCCESS) {
            c->world = world_ranks(grp, c->size);
            PMPI_Group_free(&grp);
        }
        if (c->inter && PMPI_Comm_remote_size(handle, &c->remote_size) == MPI_SUCCESS &&
            PMPI_Comm_remote_group(handle, &grp) == MPI_SUCCESS) {
            c->remote_world = world_ranks(grp, c->remote_size);
            PMPI_Group_free(&grp);
        }
    }
    struct comm **b = &g.comms[bucket(c->key)];
    c->next = *b;
    *b = c;
    define(c);
    return c;
}

static struct comm *comm_find(uintptr_t key)
{
    for (struct comm *c = g.comms[bucket(key)]; c; c = c->next)
        if (c->key == key)
            return c;
    return NULL;
}

/* The entry of comm, met for the first time outside a call that made it:
 * an id of this process's own. Caller holds the lock. */
static struct comm *comm_get(MPI_Comm handle)
{
    struct comm *c = comm_find(HANDLE(handle));
    return c ? c : comm_add(handle, (uint64_t)g.world_rank << 32 | ++g.next_comm);
}

/* World rank of rank r of c (its remote group when remote); -1 unknown. */
static int64_t world_of(const struct comm *c, int r, bool remote)
{
    if (!c || r < 0)
        return -1;
    if (remote && c->inter)
        return c->remote_world && r < c->remote_size ? c->remote_world[r] : -1;
    if (r >= c->size)
        return -1;
    return c->world ? c->world[r] : r;
}

/* Unlinks and frees the entry of key, if any. Caller holds the lock. */
static void comm_drop(uintptr_t key)
{
    for (struct comm **p = &g.comms[bucket(key)]; *p; p = &(*p)->next)
        if ((*p)->key == key) {
            struct comm *c = *p;
            *p = c->next;
            free(c->world);
            free(c->remote_world);
            free(c);
            return;
        }
}

void strobe__mpi_comm_created(const MPI_Comm *comm)
{
    if (!strobe__mpi_tracing || *comm == MPI_COMM_NULL)
        return;
    int inter = 0;
    PMPI_Comm_test_inter(*comm, &inter);
    uint64_t id = 0;
    lock();
    if (!inter)
        id = (uint64_t)g.world_rank << 32 | ++g.next_comm; /* used at the new rank 0 */
    unlock();
    if (!inter) {
        /* every member is in this call: rank 0's id becomes everyone's */
        PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, *comm);
    }
    lock();
    /* a handle reused after a communicator went without MPI_Comm_free
     * (MPI_Comm_disconnect) names the new one now */
    comm_drop(HANDLE(*comm));
    comm_add(*comm, inter ? (uint64_t)g.world_rank << 32 | ++g.next_comm : id);
    unlock();
}

void strobe__mpi_comm_freed(MPI_Comm comm)
{
    if (!strobe__mpi_tracing)
        return;
    lock();
    comm_drop(HANDLE(comm));
    unlock();
}

/* ---- setup ------------------------------------------------------------- */

void strobe__mpi_started(void)
{
    strobe__mpi_live_start();
    strobe__mpi_clock_offsets(STROBE_CLOCK_OFFSET_INIT);
    if (!strobe__mpi_tracing)
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &g.world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &g.world_size);
    lock();
    g.next_comm = 1; /* MPI_COMM_SELF's */
    comm_add(MPI_COMM_WORLD, 0);
    comm_add(MPI_COMM_SELF, (uint64_t)g.world_rank << 32 | 1);
    unlock();
    struct rec r;
    rec_start(&r, STROBE_MPI_INIT);
    put(&r, (uint64_t)g.world_rank);
    put(&r, (uint64_t)g.world_size);
    rec_write(&r);
}

void strobe__mpi_stopping(void)
{
    strobe__mpi_live_stop();
    strobe__mpi_clock_offsets(STROBE_CLOCK_OFFSET_FINALIZE);
    if (!strobe__mpi_tracing)
        return;
    struct rec r;
    rec_start(&r, STROBE_MPI_FINALIZE);
    rec_write(&r);
}

/* ---- sizes ------------------------------------------------------------- */

uint64_t strobe__mpi_bytes(int count, MPI_Datatype type)
{
    if (count <= 0)
        return 0;
#if MPI_VERSION >= 3
    MPI_Count size;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
#else
    int size;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
#endif
    return (uint64_t)count * (uint64_t)size;
}

uint64_t strobe__mpi_comm_size(MPI_Comm comm)
{
    int inter = 0, n = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n))
        return 0;
    return n > 0 ? (uint64_t)n : 0;
}

uint64_t strobe__mpi_vbytes(const int counts[], MPI_Datatype type, MPI_Comm comm)
{
    uint64_t n = strobe__mpi_comm_size(comm), sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += counts[i] > 0 ? (uint64_t)counts[i] : 0;
    return sum > INT32_MAX ? strobe__mpi_bytes(1, type) * sum : strobe__mpi_bytes((int)sum, type);
}

uint64_t strobe__mpi_rank_bytes(const int counts[], MPI_Datatype type, MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return strobe__mpi_bytes(counts[rank], type);
}

bool strobe__mpi_is_root(int root, MPI_Comm comm)
{
    int inter = 0, rank = -1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return root == MPI_ROOT;
    PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

/* ---- point-to-point ------------------------------------------------------ */

/* Peer's world rank and comm's id; false when there is no message
 * (MPI_PROC_NULL) or no peer known. */
static bool peer_of(MPI_Comm comm, int peer, int64_t *world, uint64_t *id)
{
    if (peer == MPI_PROC_NULL)
        return false;
    if (comm == MPI_COMM_WORLD) { /* the common case, without the lock */
        *world = peer >= 0 && peer < g.world_size ? peer : -1;
        *id = 0;
        return *world >= 0;
    }
    lock();
    struct comm *c = comm_get(comm);
    *world = world_of(c, peer, true);
    *id = c ? c->id : 0;
    unlock();
    return *world >= 0;
}

static void put_message(struct rec *r, uint64_t peer, int64_t tag, uint64_t comm, uint64_t bytes)
{
    put(r, peer);
    put(r, strobe_zigzag(tag));
    put(r, comm);
    put(r, bytes);
}

void strobe__mpi_send(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int64_t peer;
    uint64_t id;
    if (!strobe__mpi_tracing || !peer_of(comm, dest, &peer, &id))
        return;
    struct rec r;
    rec_start(&r, STROBE_MPI_SEND);
    put_message(&r, (uint64_t)peer, tag, id, strobe__mpi_bytes(count, type));
    rec_write(&r);
}

/* Writes the message a receive got (status from the call). */
static void received(unsigned op, const uint64_t *request, MPI_Comm comm, const MPI_Status *st)
{
    int64_t peer;
    uint64_t id;
    if (!peer_of(comm, st->MPI_SOURCE, &peer, &id))
        return;
    int n = 0;
    if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
        n = 0;
    struct rec r;
    rec_start(&r, op);
    if (request)
        put(&r, *request);
    put_message(&r, (uint64_t)peer, st->MPI_TAG, id, (uint64_t)n);
    rec_write(&r);
}

void strobe__mpi_recv(MPI_Comm comm, const MPI_Status *status)
{
    if (strobe__mpi_tracing)
        received(STROBE_MPI_RECV, NULL, comm, status);
}

static struct request *request_find(uintptr_t key)
{
    for (struct request *q = g.requests[bucket(key)]; q; q = q->next)
        if (q->key == key)
            return q;
    return NULL;
}

/* Writes the record of a request's activation. Caller holds the lock
 * (numbers in the order of the records of each thread). */
static void activate(struct request *q)
{
    q->number = ++g.next_request;
    q->active = true;
    struct rec r;
    rec_start(&r, q->recv ? STROBE_MPI_IRECV_REQUEST : STROBE_MPI_ISEND);
    put(&r, q->number);
    if (!q->recv)
        put_message(&r, q->peer, q->tag, q->comm, q->bytes);
    rec_write(&r);
}

static void posted(bool recv, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request req,
                   int persistent)
{
    /* MPI_PROC_NULL: no message, the request is not tracked */
    if (!strobe__mpi_tracing || req == MPI_REQUEST_NULL || peer == MPI_PROC_NULL)
        return;
    int64_t world = -1;
    uint64_t id = 0;
    /* a receive from MPI_ANY_SOURCE has its peer only at completion */
    if (!peer_of(comm, peer, &world, &id) && !recv)
        return;
    struct request *q = calloc(1, sizeof *q);
    if (!q)
        return;
    q->key = HANDLE(req);
    q->recv = recv;
    q->persistent = persistent != 0;
    q->peer = world < 0 ? 0 : (uint64_t)world;
    q->tag = tag;
    q->comm = id;
    q->handle = comm;
    q->bytes = recv ? 0 : strobe__mpi_bytes(count, type);
    lock();
    struct request **b = &g.requests[bucket(q->key)];
    q->next = *b;
    *b = q;
    if (!q->persistent)
        activate(q);
    unlock();
}

void strobe__mpi_isend(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request req,
                       int persistent)
{
    posted(false, count, type, dest, tag, comm, req, persistent);
}

void strobe__mpi_irecv(int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request req,
                       int persistent)
{
    posted(true, count, type, source, tag, comm, req, persistent);
}

void strobe__mpi_start(int n, const MPI_Request reqs[])
{
    if (!strobe__mpi_tracing)
        return;
    lock();
    for (int i = 0; i < n; i++) {
        struct request *q = request_find(HANDLE(reqs[i]));
        if (q && q->persistent)
            activate(q);
    }
    unlock();
}

/* Unlinks and frees the request of key. Caller holds the lock. */
static void request_drop(uintptr_t key)
{
    for (struct request **p = &g.requests[bucket(key)]; *p; p = &(*p)->next)
        if ((*p)->key == key) {
            struct request *q = *p;
            *p = q->next;
            free(q);
            return;
        }
}

void strobe__mpi_request_freed(MPI_Request req)
{
    if (!strobe__mpi_tracing)
        return;
    lock();
    request_drop(HANDLE(req));
    unlock();
}

/* ---- completions ------------------------------------------------------- */

MPI_Status *strobe__mpi_save(struct strobe__mpi_saved *s, int n, const MPI_Request reqs[], MPI_Status *status,
                             int array)
{
    s->n = 0;
    s->heap = NULL;
    if (!strobe__mpi_tracing || n <= 0)
        return status;
    s->reqs = s->req_inline;
    s->st = status;
    bool own = array ? status == MPI_STATUSES_IGNORE : status == MPI_STATUS_IGNORE;
    if (n > STROBE__MPI_SAVED_INLINE) {
        s->heap = malloc((size_t)n * (sizeof(MPI_Request) + sizeof(MPI_Status)));
        if (!s->heap)
            return status;
        s->reqs = s->heap;
        if (own)
            s->st = (MPI_Status *)(s->reqs + n);
    } else if (own) {
        s->st = s->st_inline;
    }
    memcpy(s->reqs, reqs, sizeof(MPI_Request) * (size_t)n);
    s->n = n;
    return s->st;
}

/* The request saved at i completed with status st. */
static void complete(struct strobe__mpi_saved *s, int i, const MPI_Status *st)
{
    if (i < 0 || i >= s->n || s->reqs[i] == MPI_REQUEST_NULL)
        return;
    lock();
    struct request *q = request_find(HANDLE(s->reqs[i]));
    if (q && q->active) {
        q->active = false;
        uint64_t number = q->number;
        if (q->recv) {
            MPI_Comm comm = q->handle;
            unlock(); /* received() takes it to translate the source */
            received(STROBE_MPI_IRECV, &number, comm, st);
            lock();
            q = request_find(HANDLE(s->reqs[i]));
        } else {
            struct rec r;
            rec_start(&r, STROBE_MPI_ISEND_COMPLETE);
            put(&r, number);
            rec_write(&r);
        }
        if (q && !q->persistent)
            request_drop(q->key);
    }
    unlock();
}

void strobe__mpi_completed(struct strobe__mpi_saved *s, int i)
{
    complete(s, i, &s->st[0]);
}

void strobe__mpi_completed_all(struct strobe__mpi_saved *s)
{
    for (int i = 0; i < s->n; i++)
        complete(s, i, &s->st[i]);
}

void strobe__mpi_completed_any(struct strobe__mpi_saved *s, int index)
{
    if (index != MPI_UNDEFINED)
        complete(s, index, &s->st[0]);
}

void strobe__mpi_completed_some(struct strobe__mpi_saved *s, int outcount, const int indices[])
{
    for (int k = 0; outcount != MPI_UNDEFINED && k < outcount; k++)
        complete(s, indices[k], &s->st[k]);
}

void strobe__mpi_saved_free(struct strobe__mpi_saved *s)
{
    free(s->heap);
}

/* ---- collectives ------------------------------------------------------- */

void strobe__mpi_coll_begin(void)
{
    if (!strobe__mpi_tracing)
        return;
    struct rec r;
    rec_start(&r, STROBE_MPI_COLL_BEGIN);
    rec_write(&r);
}

void strobe__mpi_coll_end(unsigned coll, MPI_Comm comm, int root, uint64_t sent, uint64_t received_bytes)
{
    if (!strobe__mpi_tracing)
        return;
    lock();
    struct comm *c = comm_get(comm);
    uint64_t id = c ? c->id : 0;
    int64_t world = -1;
    if (root == MPI_ROOT)
        world = g.world_rank;
    else if (root >= 0)
        world = world_of(c, root, true);
    unlock();
    struct rec r;
    rec_start(&r, STROBE_MPI_COLL_END);
    put(&r, coll);
    put(&r, id);
    put(&r, (uint64_t)(world + 1));
    put(&r, sent);
    put(&r, received_bytes);
    rec_write(&r);
}
