/* SPDX-License-Identifier: MIT */
/*
 * The streaming task-graph builder and its analyses (taskgraph.h).
 *
 * Per process, each thread's event stream is decoded lazily: a thread is
 * advanced to its next synchronization record (the records in between,
 * regions entered and left, are consumed on the way), and a heap picks
 * the thread whose pending record has the smallest ticket. Processing a
 * record ends the thread's current task and starts the next; the tickets
 * guarantee that whatever a task depends on (the release before an
 * acquisition, every arrival of a barrier episode, the creator's task,
 * the joined thread's last) was processed before it starts. A created
 * thread is not advanced before its creator's CREATE record is processed,
 * and a thread's last task ends when its stream does, which the merge
 * reaches before the JOIN's ticket comes up.
 */
#define _GNU_SOURCE
#include "analysis/taskgraph.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocks.h"
#include "analysis/decode.h"
#include "analysis/keymap.h"
#include "analysis/shadow.h"
#include "analysis/symbols.h"
#include "common/bbtrace.h"
#include "common/format.h"
#include "strobe/strobe.h"

/* A finished task as the critical-path DP keeps it: dist is the longest
 * path (in ns of task time) ending with it, pred the task before it on
 * that path. Nodes are shared (reference-counted): by the thread's next
 * task, the objects whose last release it was, open barrier episodes, the
 * best path so far and their successors' pred links. */
struct node {
    struct node *pred;
    uint64_t dist;
    uint64_t id, start_ns, end_ns, blocks;
    uint32_t thread, region, lock, refs;
    uint8_t via;
};

struct held {
    uint64_t object, since_ns;
    uint32_t lock; /* row */
};

struct arrival {
    struct node *task; /* the task that ended at the arrival */
    uint32_t thread;
    uint64_t ns;
    bool departed;
};

struct episode {
    struct arrival *a;
    size_t n, cap, departed;
    uint64_t seq;
};

/* Per synchronization object of the process being built. */
struct object {
    uint64_t address;
    struct node *release; /* the task that ended at its last release (a team: at its fork) */
    struct node *signal;  /* ... at its last signal or broadcast (cond) */
    struct episode *eps;  /* open barrier episodes, oldest first */
    size_t neps, epcap;
    uint64_t episodes; /* started so far */
};


/* The latest write of one thread to a line, within the task [start, end]. */
struct line_write {
    uint32_t thread;
    uint32_t source_line;
    uint64_t address, start, end;
    const char *file;
};

#define LINE_WRITERS 4

struct line_rec {
    struct line_write w[LINE_WRITERS];
    uint32_t n;
};

struct thread {
    uint32_t global, index;
    uint32_t slot;               /* position in the process's threads */
    struct strobe__bbstream *bb; /* its block stream, or NULL */
    bool bb_done;
    uint64_t lines; /* distinct 64-byte lines of the running task */
    /* the running task's blocks and accesses */
    uint64_t blocks, reads, writes, read_bytes, write_bytes;
    const uint8_t *buf;
    size_t len;
    struct strobe__stream_decoder dec;
    bool mapped, started, done, in_task;
    struct strobe__raw_event next; /* the pending synchronization record */
    uint64_t key, next_ticks, prev_ticks;
    /* the running task */
    uint64_t id, start_ns;
    uint32_t region, lock, via;
    uint64_t in;
    struct node *in_pred;
    struct node *last;   /* the thread's last finished task */
    struct node *create; /* the creator's task, until the first task starts */
    struct held *held;
    size_t nheld, heldcap;
    /* inside a barrier or condition wait since the ARRIVE */
    bool waiting;
    uint64_t wait_object, wait_mutex;
    /* the barrier arrived at, until the departure: condition waits may
     * come in between (libomp's threads sleep in one inside an OpenMP
     * barrier) */
    uint64_t barrier_object;
    uint32_t wait_lock; /* the mutex's row, for its hold after the wait */
};

struct builder {
    const struct strobe_experiment *exp;
    const struct strobe_tg_sink *sink;
    struct strobe_errbuf *eb;
    struct strobe_taskgraph *g;
    uint64_t next_id;
    size_t live;
    struct node *free_nodes;
    /* the process being built */
    uint32_t process;
    struct strobe_tg_process *pr;
    struct thread *threads;
    size_t nthreads;
    struct thread **heap;
    size_t nheap;
    struct strobe__blocks *tables; /* the process's block tables, or NULL */
    /* sharing: the shadow of the memory written (who wrote each word,
     * who read it since; the index + 1 of each line's writes), the lines
     * written lately, the bytes per writer x reader slot, the
     * false-sharing candidates' index */
    struct strobe__shadow shadow;
    struct line_rec *line_recs;
    size_t nline_recs, linecap;
    uint64_t *matrix;
    struct strobe__keymap fsmap;
    size_t fscap;
    size_t fs_first; /* the process's first false-sharing candidate */
    bool fs_owned;   /* its files are copies (else the tables' strings) */
    bool ticketed, decided;
    struct node *best;
    size_t roots;         /* nodes without a predecessor */
    size_t sweep_at;      /* live nodes at which the next sweep runs */
    struct node *blocker; /* where the last sweep stopped */
    struct node **chain;  /* scratch: a chain of nodes, last first */
    size_t chaincap;
    struct strobe_tg_region_time *regions; /* the critical path's time per region so far */
    size_t nregions, regioncap;
    struct strobe__keymap objmap;
    struct object *objects;
    size_t nobjects, objcap;
    struct strobe__keymap lockmap;
    size_t lockcap, epcap;
    uint32_t *path; /* scratch: a call path as global ids */
    size_t pathcap;
    uint8_t *key; /* scratch: a lock row's key */
    size_t keycap;
};

/* ---- nodes ---- */

static struct node *node_new(struct builder *b)
{
    struct node *n = b->free_nodes;
    if (n)
        b->free_nodes = n->pred;
    else if (!(n = malloc(sizeof *n)))
        return NULL;
    if (++b->live > b->g->peak_live)
        b->g->peak_live = b->live;
    return n;
}

static struct node *ref(struct node *n)
{
    if (n)
        n->refs++;
    return n;
}

static void unref(struct builder *b, struct node *n)
{
    while (n && --n->refs == 0) {
        struct node *pred = n->pred;
        b->roots -= !pred;
        n->pred = b->free_nodes;
        b->free_nodes = n;
        b->live--;
        n = pred;
    }
}

/* ---- tasks and edges ---- */

static uint64_t ns_of(const struct builder *b, uint64_t ticks)
{
    return strobe_ticks_to_ns(b->exp, b->process, ticks);
}

static uint32_t innermost(const struct builder *b, const struct thread *t)
{
    const struct strobe_process_info *p = &b->exp->processes[b->process];
    if (t->dec.depth == 0)
        return STROBE_NONE;
    uint64_t local = t->dec.stack[t->dec.depth - 1];
    return local < p->region_map_len ? p->region_map[local] : STROBE_NONE;
}

/* An edge from finished task `from` into t's running task. */
static int add_pred(struct builder *b, struct thread *t, struct node *from, uint32_t kind)
{
    if (!from)
        return 0;
    if (!t->in_pred || from->dist > t->in) {
        unref(b, t->in_pred);
        t->in_pred = ref(from);
        t->in = from->dist;
        t->via = kind;
    }
    b->pr->edges[kind]++;
    if (!b->sink || !b->sink->edge)
        return 0;
    struct strobe_tg_edge e = {from->id, t->id, kind, from->thread, t->global, from->end_ns, t->start_ns};
    return b->sink->edge(b->sink->arg, &e);
}

/* ---- block streams ---- */

/* Counts line for t's running task unless the task touched it already:
 * each line's shadow remembers the last task that touched it. A task's
 * accesses are consumed in one run (consume_blocks, up to the MARK that
 * ends it), so no other task comes between two of its accesses. */
static int line_touch(struct builder *b, struct thread *t, uint64_t line)
{
    int err = 0;
    struct strobe__shadow_region *r = strobe__shadow_region(&b->shadow, line << 6, 1, &err);
    if (!r)
        return err;
    uint64_t *last = &r->task[line & ((1u << (STROBE__SHADOW_REGION_BITS - 6)) - 1)];
    if (*last != t->id + 1) {
        *last = t->id + 1;
        t->lines++;
    }
    return 0;
}

/* Write `mine` to line met w, another thread's write at another address
 * in an overlapping task. */
static int false_share(struct builder *b, uint64_t line, const struct line_write *w,
                       const struct line_write *mine)
{
    struct strobe_taskgraph *g = b->g;
    const struct line_write *lo = w->thread < mine->thread ? w : mine, *hi = lo == w ? mine : w;
    uint64_t key[2] = {line, (uint64_t)lo->thread << 32 | hi->thread};
    uint32_t i = (uint32_t)g->nfalse_shares;
    int found = strobe__keymap_get_or_put(&b->fsmap, key, sizeof key, &i);
    if (found < 0)
        return -ENOMEM;
    if (found == 0) {
        if (strobe__grow((void **)&g->false_shares, &b->fscap, g->nfalse_shares + 1, sizeof *g->false_shares))
            return -ENOMEM;
        g->false_shares[g->nfalse_shares++] = (struct strobe_tg_false_share){
            .process = b->process, .line = line << 6, .thread = {lo->thread, hi->thread}};
    }
    struct strobe_tg_false_share *f = &g->false_shares[i];
    const struct line_write *both[2] = {lo, hi};
    for (int k = 0; k < 2; k++) {
        f->address[k] = both[k]->address;
        f->file[k] = (char *)both[k]->file; /* the tables' until the process ends */
        f->source_line[k] = both[k]->source_line;
    }
    f->conflicts++;
    return 0;
}

/* The bytes of [a, a + size) in the 4-byte word w. */
static uint32_t word_overlap(uint64_t a, uint32_t size, uint64_t w)
{
    uint64_t lo = a > w << 2 ? a : w << 2, hi = a + size < (w + 1) << 2 ? a + size : (w + 1) << 2;
    return (uint32_t)(hi - lo);
}

/* One memory access of t's running task, which ends at end_ns: a read is
 * charged to the writer of each word it reads that another thread wrote
 * and this one has not read since (true communication); a write becomes
 * the words' last and is checked against the other threads' recent
 * writes to its line (false sharing). */
static int share_access(struct builder *b, struct thread *t, const struct strobe__bb_event *ev,
                        const struct strobe__bb_access *a, uint64_t end_ns)
{
    bool store = a->kind == STROBE_BB_STORE;
    uint32_t size = a->size ? a->size : 1;
    uint64_t first = a->address >> 2, last = (a->address + size - 1) >> 2;
    struct strobe__shadow_region *r = NULL;
    uint64_t rkey = UINT64_MAX, mask = (1ull << (STROBE__SHADOW_REGION_BITS - 2)) - 1;
    uint64_t me = (uint64_t)t->slot + 1;
    uint64_t bit = t->slot < STROBE__SHADOW_READERS ? 1ull << (16 + t->slot) : 0; /* further threads are not counted */
    int err = 0;
    for (uint64_t w = first; w <= last; w++) {
        if (w >> (STROBE__SHADOW_REGION_BITS - 2) != rkey) {
            rkey = w >> (STROBE__SHADOW_REGION_BITS - 2);
            r = strobe__shadow_region(&b->shadow, w << 2, store, &err);
            if (err)
                return err;
        }
        if (!r)
            continue;
        uint64_t *word = &r->word[w & mask];
        if (store) {
            *word = me;
        } else {
            uint64_t writer = *word & 0xffff;
            if (writer && writer != me && bit && !(*word & bit)) {
                *word |= bit;
                b->matrix[(size_t)(writer - 1) * b->nthreads + t->slot] += word_overlap(a->address, size, w);
            }
        }
    }
    if (!store || !(r = strobe__shadow_region(&b->shadow, a->address, 1, &err)))
        return err;
    uint64_t line = a->address >> 6;
    uint32_t *idx = &r->line[line & ((1u << (STROBE__SHADOW_REGION_BITS - 6)) - 1)];
    if (!*idx) {
        if (strobe__grow((void **)&b->line_recs, &b->linecap, b->nline_recs + 1, sizeof *b->line_recs))
            return -ENOMEM;
        memset(&b->line_recs[b->nline_recs], 0, sizeof *b->line_recs);
        *idx = (uint32_t)++b->nline_recs;
    }
    struct line_rec *lr = &b->line_recs[*idx - 1];
    const struct strobe__op_info *op = a->op < ev->block->nops ? &ev->block->ops[a->op] : NULL;
    struct line_write mine = {t->global, op ? op->line : 0, a->address, t->start_ns, end_ns, ev->block->file};
    uint32_t k = lr->n;
    for (uint32_t j = 0; j < lr->n; j++) {
        const struct line_write *w = &lr->w[j];
        if (w->thread == t->global)
            k = j;
        else if (w->address != a->address && w->start <= end_ns && t->start_ns <= w->end &&
                 false_share(b, line, w, &mine))
            return -ENOMEM;
    }
    if (k == LINE_WRITERS) { /* forget the oldest */
        memmove(lr->w, lr->w + 1, (LINE_WRITERS - 1) * sizeof *lr->w);
        k = LINE_WRITERS - 1;
    } else if (k == lr->n) {
        lr->n++;
    }
    lr->w[k] = mine;
    return 0;
}

/* Reads t's block stream up to the MARK of `ticket` (0: to its end),
 * charging what ran to the running task (none between an arrival and its
 * departure: the thread was waiting). */
static int consume_blocks(struct builder *b, struct thread *t, uint64_t ticket, uint64_t end_ns)
{
    struct strobe__bb_event ev;
    int rc = 0;
    while (t->bb && !t->bb_done && (rc = strobe__bbstream_next(t->bb, &ev, b->eb)) == 1) {
        b->g->events++;
        if (ev.type == STROBE__BB_MARK) {
            if (ticket && ev.ticket >= ticket)
                return 0;
            continue;
        }
        if (!t->in_task)
            continue;
        t->blocks++;
        for (uint32_t i = 0; i < ev.naccesses; i++) {
            const struct strobe__bb_access *a = &ev.accesses[i];
            if (a->kind == STROBE_BB_STORE) {
                t->writes++;
                t->write_bytes += a->size;
            } else {
                t->reads++;
                t->read_bytes += a->size;
            }
            uint64_t first = a->address >> 6, last = (a->address + (a->size ? a->size - 1 : 0)) >> 6;
            for (uint64_t l = first; l <= last; l++)
                if ((rc = line_touch(b, t, l)) != 0)
                    return rc;
            if (b->matrix && (rc = share_access(b, t, &ev, a, end_ns)) != 0)
                return rc;
        }
    }
    if (rc == 0)
        t->bb_done = true;
    return rc;
}

/* Starts t's next task at `ns`, after its last one (program order). */
static int begin_task(struct builder *b, struct thread *t, uint64_t ns)
{
    t->in_task = true;
    t->id = b->next_id++;
    t->start_ns = ns;
    t->region = innermost(b, t);
    /* inside a critical section the task belongs to its lock: a hold that
     * spans a barrier or a wait has tasks that no acquisition started */
    t->lock = t->nheld ? t->held[t->nheld - 1].lock : STROBE_NONE;
    t->in = 0;
    t->in_pred = NULL;
    t->via = STROBE_TG_PROGRAM;
    t->blocks = t->reads = t->writes = t->read_bytes = t->write_bytes = 0;
    t->lines = 0;
    int rc = add_pred(b, t, t->last, STROBE_TG_PROGRAM);
    if (rc == 0 && t->create) {
        rc = add_pred(b, t, t->create, STROBE_TG_CREATE);
        unref(b, t->create);
        t->create = NULL;
    }
    return rc;
}

static void add_busy(struct strobe_tg_process *pr, uint64_t start, uint64_t end)
{
    if (end <= start || pr->bin_ns == 0)
        return;
    uint64_t from = start > pr->begin_ns ? start - pr->begin_ns : 0, to = end - pr->begin_ns;
    for (uint64_t i = from / pr->bin_ns; i < STROBE_TG_BINS && i * pr->bin_ns < to; i++) {
        uint64_t lo = i * pr->bin_ns, hi = lo + pr->bin_ns;
        pr->busy[i] += (to < hi ? to : hi) - (from > lo ? from : lo);
    }
}

/* ---- the critical path ---- */

/* Nodes kept at least before a sweep: a sweep walks the best chain, so
 * sweeping each time the live nodes double keeps its cost linear. */
#define SWEEP_MIN 65536u

/* Appends x, the next task of the critical path (first to last), to the
 * process's path: kept while there is room, counted in any case, its time
 * added to its region and, when it ran inside a critical section, to its lock row. */
static int path_step(struct builder *b, const struct node *x)
{
    struct strobe_tg_process *pr = b->pr;
    if (pr->npath < STROBE_TG_PATH_KEEP) {
        size_t cap = pr->npath;
        if (strobe__grow((void **)&pr->path, &cap, pr->npath + 1, sizeof *pr->path))
            return -ENOMEM;
        pr->path[pr->npath++] = (struct strobe_tg_step){
            x->id, x->thread, x->region, x->start_ns, x->end_ns, pr->path_tasks ? x->via : STROBE_TG_PROGRAM};
    }
    pr->path_tasks++;
    pr->path_blocks += x->blocks;
    if (x->lock != STROBE_NONE)
        b->g->locks[x->lock].on_path++;
    size_t j = 0;
    while (j < b->nregions && b->regions[j].region != x->region)
        j++;
    if (j == b->nregions) {
        if (strobe__grow((void **)&b->regions, &b->regioncap, j + 1, sizeof *b->regions))
            return -ENOMEM;
        b->regions[b->nregions++] = (struct strobe_tg_region_time){x->region, 0, 0};
    }
    b->regions[j].ns += x->end_ns - x->start_ns;
    b->regions[j].tasks++;
    return 0;
}

/* b->chain[0..*n) = the best chain, best first, root last. */
static int best_chain(struct builder *b, size_t *n)
{
    *n = 0;
    for (struct node *x = b->best; x; x = x->pred) {
        if (strobe__grow((void **)&b->chain, &b->chaincap, *n + 1, sizeof *b->chain))
            return -ENOMEM;
        b->chain[(*n)++] = x;
    }
    return 0;
}

/* Retires the prefix every future path shares. With one root, a node of
 * the best chain that only its successor on the chain refers to (no
 * holder, no other successor), and every node above it, lies on every
 * path that can still be extended, so on the final critical path: its
 * steps are appended to the path and the nodes freed. This keeps memory
 * at the live tasks and the candidates' unshared parts, however long the
 * critical path grows. The node the walk stopped at is kept (b->blocker,
 * one more reference): while something else still refers to it, nothing
 * can be retired and the walk is skipped. (A thread started late, because
 * its creation was not recorded, adds a root afterwards; its chain is
 * assumed not to outgrow the retired path.) */
static int retire(struct builder *b)
{
    size_t n = 0;
    int rc = 0;
    if (b->roots != 1 || (b->blocker && b->blocker->refs > 2))
        return 0;
    unref(b, b->blocker);
    b->blocker = NULL;
    if ((rc = best_chain(b, &n)) != 0 || n == 0)
        return rc;
    size_t k = n;
    while (k > 1 && b->chain[k - 1]->refs == 1)
        k--;
    for (size_t i = n; rc == 0 && i-- > k;)
        rc = path_step(b, b->chain[i]);
    if (rc == 0 && k < n) {
        b->chain[k - 1]->pred = NULL;
        for (size_t i = k; i < n; i++) {
            b->chain[i]->pred = b->free_nodes;
            b->free_nodes = b->chain[i];
            b->live--;
        }
    }
    if (k > 1)
        b->blocker = ref(b->chain[k - 1]);
    return rc;
}

static int sweep(struct builder *b)
{
    int rc = retire(b);
    b->sweep_at = 2 * b->live > SWEEP_MIN ? 2 * b->live : SWEEP_MIN;
    return rc;
}

/* Ends t's running task at `ns` (not before its start); it becomes t->last. */
static int end_task(struct builder *b, struct thread *t, uint64_t ns)
{
    int rc;
    if (!t->in_task)
        return 0;
    t->in_task = false;
    if (ns < t->start_ns)
        ns = t->start_ns;
    struct node *n = node_new(b);
    if (!n) {
        unref(b, t->in_pred);
        t->in_pred = NULL;
        return -ENOMEM;
    }
    *n = (struct node){.pred = t->in_pred,
                       .dist = t->in + (ns - t->start_ns),
                       .id = t->id,
                       .start_ns = t->start_ns,
                       .end_ns = ns,
                       .blocks = t->blocks,
                       .thread = t->global,
                       .region = t->region,
                       .via = (uint8_t)t->via,
                       .lock = t->lock,
                       .refs = 1};
    t->in_pred = NULL;
    b->roots += !n->pred;
    unref(b, t->last);
    t->last = n;
    struct strobe_tg_process *pr = b->pr;
    pr->tasks++;
    pr->work_ns += ns - t->start_ns;
    pr->block_count += t->blocks;
    pr->reads += t->reads;
    pr->writes += t->writes;
    pr->read_bytes += t->read_bytes;
    pr->write_bytes += t->write_bytes;
    if (t->start_ns < pr->begin_ns)
        pr->begin_ns = t->start_ns;
    if (ns > pr->end_ns)
        pr->end_ns = ns;
    add_busy(pr, t->start_ns, ns);
    if (!b->best || n->dist > b->best->dist) {
        unref(b, b->best);
        b->best = ref(n);
    }
    if (b->live >= b->sweep_at && (rc = sweep(b)) != 0)
        return rc;
    if (b->sink && b->sink->task) {
        struct strobe_tg_task task = {n->id,     b->process,    n->thread,      n->start_ns,
                                      n->end_ns, n->region,     t->blocks,      t->reads,
                                      t->writes, t->read_bytes, t->write_bytes, t->lines};
        return b->sink->task(b->sink->arg, &task);
    }
    return 0;
}

/* ---- objects, lock rows, barrier episodes ---- */

static struct object *object_of(struct builder *b, uint64_t address)
{
    uint32_t i = (uint32_t)b->nobjects;
    int found = strobe__keymap_get_or_put(&b->objmap, &address, sizeof address, &i);
    if (found < 0)
        return NULL;
    if (found == 0) {
        if (strobe__grow((void **)&b->objects, &b->objcap, b->nobjects + 1, sizeof *b->objects))
            return NULL;
        b->objects[b->nobjects++] = (struct object){.address = address};
    }
    return &b->objects[i];
}

static uint32_t lock_kind(uint64_t op)
{
    switch (op) {
    case STROBE_SYNC_ACQUIRE_READ:
    case STROBE_SYNC_ACQUIRE_WRITE:
        return STROBE_SYNC_RWLOCK;
    case STROBE_SYNC_ACQUIRE_SPIN:
        return STROBE_SYNC_SPIN;
    case STROBE_SYNC_ACQUIRE_SEM:
        return STROBE_SYNC_SEM;
    default:
        return STROBE_SYNC_MUTEX;
    }
}

/* The row of (object, t's current call path): its index, or -ENOMEM. */
static int64_t lock_row(struct builder *b, struct thread *t, uint32_t kind, uint64_t object)
{
    const struct strobe_process_info *p = &b->exp->processes[b->process];
    size_t depth = t->dec.depth;
    if (strobe__grow((void **)&b->path, &b->pathcap, depth + 1, sizeof *b->path) ||
        strobe__grow((void **)&b->key, &b->keycap, 16 + depth * 4, 1))
        return -ENOMEM;
    for (size_t i = 0; i < depth; i++) {
        uint64_t local = t->dec.stack[i];
        b->path[i] = local < p->region_map_len ? p->region_map[local] : STROBE_NONE;
    }
    memcpy(b->key, &b->process, 4);
    memcpy(b->key + 4, &kind, 4);
    memcpy(b->key + 8, &object, 8);
    memcpy(b->key + 16, b->path, depth * 4);
    struct strobe_taskgraph *g = b->g;
    uint32_t i = (uint32_t)g->nlocks;
    int found = strobe__keymap_get_or_put(&b->lockmap, b->key, 16 + depth * 4, &i);
    if (found < 0)
        return -ENOMEM;
    if (found == 0) {
        if (strobe__grow((void **)&g->locks, &b->lockcap, g->nlocks + 1, sizeof *g->locks))
            return -ENOMEM;
        struct strobe_tg_lock *l = &g->locks[g->nlocks];
        *l = (struct strobe_tg_lock){
            .process = b->process, .kind = kind, .object = object, .depth = (uint32_t)depth};
        if (depth && !(l->path = malloc(depth * sizeof *l->path)))
            return -ENOMEM;
        if (depth)
            memcpy(l->path, b->path, depth * sizeof *l->path);
        g->nlocks++;
    }
    return i;
}

static int hold(struct thread *t, uint64_t object, uint64_t ns, uint32_t lock)
{
    if (strobe__grow((void **)&t->held, &t->heldcap, t->nheld + 1, sizeof *t->held))
        return -ENOMEM;
    t->held[t->nheld++] = (struct held){object, ns, lock};
    return 0;
}

/* Ends t's hold of `object` at ns; returns its row (STROBE_NONE: not held). */
static uint32_t unhold(struct builder *b, struct thread *t, uint64_t object, uint64_t ns)
{
    for (size_t i = t->nheld; i-- > 0;)
        if (t->held[i].object == object) {
            struct held h = t->held[i];
            /* kept in acquisition order: the last is the innermost */
            memmove(&t->held[i], &t->held[i + 1], (--t->nheld - i) * sizeof *t->held);
            if (ns > h.since_ns)
                b->g->locks[h.lock].hold_ns += ns - h.since_ns;
            return h.lock;
        }
    return STROBE_NONE;
}

/* Appends the finished episode's figures and drops it (ep is o->eps[0..]). */
static int close_episode(struct builder *b, struct object *o, size_t k, bool complete)
{
    struct episode *ep = &o->eps[k];
    struct strobe_taskgraph *g = b->g;
    int rc = 0;
    if (ep->n && strobe__grow((void **)&g->episodes, &b->epcap, g->nepisodes + 1, sizeof *g->episodes))
        rc = -ENOMEM;
    if (rc == 0 && ep->n) {
        struct strobe_tg_episode *e = &g->episodes[g->nepisodes++];
        *e = (struct strobe_tg_episode){.process = b->process,
                                        .object = o->address,
                                        .episode = ep->seq,
                                        .threads = (uint32_t)ep->n,
                                        .first_ns = UINT64_MAX,
                                        .complete = complete};
        for (size_t i = 0; i < ep->n; i++) {
            if (ep->a[i].ns >= e->last_ns) {
                e->last_ns = ep->a[i].ns;
                e->last = ep->a[i].thread;
            }
            if (ep->a[i].ns < e->first_ns)
                e->first_ns = ep->a[i].ns;
        }
        for (size_t i = 0; i < ep->n; i++)
            e->wait_ns += e->last_ns - ep->a[i].ns;
    }
    for (size_t i = 0; i < ep->n; i++)
        unref(b, ep->a[i].task);
    free(ep->a);
    memmove(&o->eps[k], &o->eps[k + 1], (o->neps - k - 1) * sizeof *o->eps);
    o->neps--;
    return rc;
}

/* t arrives at barrier o with its task that just ended: into the newest
 * episode unless that one has begun to depart. */
static int arrive(struct builder *b, struct thread *t, struct object *o, uint64_t ns)
{
    struct episode *ep = o->neps ? &o->eps[o->neps - 1] : NULL;
    if (!ep || ep->departed) {
        if (strobe__grow((void **)&o->eps, &o->epcap, o->neps + 1, sizeof *o->eps))
            return -ENOMEM;
        ep = &o->eps[o->neps++];
        *ep = (struct episode){.seq = ++o->episodes};
    }
    if (strobe__grow((void **)&ep->a, &ep->cap, ep->n + 1, sizeof *ep->a))
        return -ENOMEM;
    ep->a[ep->n++] = (struct arrival){ref(t->last), t->global, ns, false};
    return 0;
}

/* t departs barrier o: edges from every other arrival of its episode (the
 * oldest open one t arrived at). */
static int depart(struct builder *b, struct thread *t, struct object *o)
{
    for (size_t k = 0; k < o->neps; k++) {
        struct episode *ep = &o->eps[k];
        size_t mine = ep->n;
        for (size_t i = 0; i < ep->n; i++)
            if (ep->a[i].thread == t->global && !ep->a[i].departed)
                mine = i;
        if (mine == ep->n)
            continue;
        int rc = 0;
        for (size_t i = 0; i < ep->n && rc == 0; i++)
            if (i != mine && ep->a[i].task)
                rc = add_pred(b, t, ep->a[i].task, STROBE_TG_BARRIER);
        ep->a[mine].departed = true;
        if (rc == 0 && ++ep->departed == ep->n)
            rc = close_episode(b, o, k, true);
        return rc;
    }
    return 0;
}

/* ---- the merge ---- */

static bool heap_less(const struct thread *x, const struct thread *y)
{
    return x->key < y->key || (x->key == y->key && x->global < y->global);
}

static void heap_push(struct builder *b, struct thread *t)
{
    size_t i = b->nheap++;
    while (i > 0 && heap_less(t, b->heap[(i - 1) / 2])) {
        b->heap[i] = b->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    b->heap[i] = t;
}

static struct thread *heap_pop(struct builder *b)
{
    struct thread *top = b->heap[0], *last = b->heap[--b->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= b->nheap)
            break;
        if (c + 1 < b->nheap && heap_less(b->heap[c + 1], b->heap[c]))
            c++;
        if (!heap_less(b->heap[c], last))
            break;
        b->heap[i] = b->heap[c];
        i = c;
    }
    if (b->nheap)
        b->heap[i] = last;
    return top;
}

static struct thread *thread_by_index(struct builder *b, uint64_t index)
{
    for (size_t i = 0; i < b->nthreads; i++)
        if (b->threads[i].index == index)
            return &b->threads[i];
    return NULL;
}

/* Decodes t up to its next synchronization record (pending in t->next,
 * then pushed on the heap) or the end of its stream (its last task ends). */
static int advance(struct builder *b, struct thread *t)
{
    struct strobe__raw_event *ev = &t->next;
    int rc;
    while ((rc = strobe__stream_decode(&t->dec, ev, b->eb)) == 1) {
        b->g->events++;
        switch (ev->kind) {
        case STROBE__RAW_ENTER:
            if (t->in_task && t->region == STROBE_NONE)
                t->region = innermost(b, t);
            break;
        case STROBE__RAW_SYNC:
        case STROBE__RAW_THREAD_CREATE:
        case STROBE__RAW_THREAD_JOIN: {
            uint64_t ticket = ev->ticket;
            if (!b->decided) {
                b->decided = true;
                b->ticketed = ticket != 0;
                b->pr->ticketed = b->ticketed;
            }
            t->key = b->ticketed ? ticket : ev->ticks;
            t->next_ticks = ev->ticks;
            heap_push(b, t);
            return 0;
        }
        default:
            break;
        }
        t->prev_ticks = ev->ticks;
    }
    if (rc < 0)
        return rc;
    t->done = true;
    /* the last record (THREAD_END, or the last one written before a kill) */
    const struct strobe_thread_info *ti = &b->exp->threads[t->global];
    uint64_t end = t->prev_ticks ? ns_of(b, t->prev_ticks) : 0;
    end = ti->end_ns > end ? ti->end_ns : end;
    if ((rc = consume_blocks(b, t, 0, end)) != 0)
        return rc;
    return end_task(b, t, end);
}

/* 1 when thread `thread`'s first synchronization record has a ticket, 0
 * when it has none or there is no such record, < 0 on damage. */
static int first_ticketed(const struct strobe_experiment *exp, uint32_t thread, struct strobe_errbuf *eb)
{
    const char *shown = strobe__shown_path(exp, exp->threads[thread].stream_path);
    const uint8_t *buf;
    size_t len;
    int rc = strobe__file_map(exp->threads[thread].stream_path, shown, &buf, &len, eb);
    if (rc)
        return rc;
    struct strobe__stream_decoder d;
    struct strobe__raw_event ev;
    if ((rc = strobe__stream_begin(&d, buf, len, shown, eb)) == 0) {
        while ((rc = strobe__stream_decode(&d, &ev, eb)) == 1)
            if (ev.kind == STROBE__RAW_SYNC || ev.kind == STROBE__RAW_THREAD_CREATE ||
                ev.kind == STROBE__RAW_THREAD_JOIN) {
                rc = ev.ticket != 0;
                break;
            }
        strobe__stream_end(&d);
    }
    strobe__file_unmap(buf, len);
    return rc;
}

int strobe_taskgraph_recorded(const struct strobe_experiment *exp, struct strobe_errbuf *eb)
{
    /* a process's first thread: every thread of it is created after it, and
     * a traced program that synchronizes at all does so there (creates) */
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        if (!exp->threads[t].stream_path || (t > 0 && exp->threads[t - 1].process == exp->threads[t].process))
            continue;
        int rc = first_ticketed(exp, t, eb);
        if (rc)
            return rc;
    }
    return 0;
}

static int start_thread(struct builder *b, struct thread *t)
{
    t->started = true;
    int rc = begin_task(b, t, b->exp->threads[t->global].begin_ns);
    return rc ? rc : advance(b, t);
}

/* Processes t's pending record. */
static int process(struct builder *b, struct thread *t)
{
    const struct strobe__raw_event *ev = &t->next;
    const struct strobe_process_info *p = &b->exp->processes[b->process];
    uint64_t ns = ns_of(b, t->next_ticks);
    uint64_t object = (uint64_t)ev->value;
    int rc = ev->ticket ? consume_blocks(b, t, ev->ticket, ns) : 0;
    struct object *o;
    if (rc)
        return rc;
    if (ev->kind == STROBE__RAW_THREAD_CREATE) {
        struct thread *child = thread_by_index(b, ev->id);
        if ((rc = end_task(b, t, ns)) || (rc = begin_task(b, t, ns)))
            return rc;
        if (child && !child->started) {
            child->create = ref(t->last);
            rc = start_thread(b, child);
        }
        return rc;
    }
    if (ev->kind == STROBE__RAW_THREAD_JOIN) {
        /* a join record has no wait: the joiner's task ends at its
         * previous record (what it did since, unseen, counts as waiting;
         * counting the whole wait as work would put every join on the
         * critical path) */
        struct thread *child = thread_by_index(b, ev->id);
        if ((rc = end_task(b, t, t->prev_ticks ? ns_of(b, t->prev_ticks) : ns)) ||
            (rc = begin_task(b, t, ns)))
            return rc;
        return child ? add_pred(b, t, child->last, STROBE_TG_JOIN) : 0;
    }
    uint64_t wait = (uint64_t)llround((double)ev->sync_args[0] * p->ns_per_tick);
    switch (ev->id) {
    case STROBE_SYNC_ACQUIRE_MUTEX:
    case STROBE_SYNC_ACQUIRE_READ:
    case STROBE_SYNC_ACQUIRE_WRITE:
    case STROBE_SYNC_ACQUIRE_SPIN:
    case STROBE_SYNC_ACQUIRE_SEM: {
        int64_t row = lock_row(b, t, lock_kind(ev->id), object);
        if (row < 0 || !(o = object_of(b, object)))
            return -ENOMEM;
        struct strobe_tg_lock *l = &b->g->locks[row];
        l->acquisitions++;
        l->wait_ns += wait;
        if (wait > l->max_wait_ns)
            l->max_wait_ns = wait;
        if ((rc = end_task(b, t, ns - (wait < ns ? wait : ns))) || (rc = hold(t, object, ns, (uint32_t)row)) ||
            (rc = begin_task(b, t, ns)))
            return rc;
        return add_pred(b, t, o->release, STROBE_TG_LOCK);
    }
    case STROBE_SYNC_RELEASE:
    case STROBE_SYNC_SIGNAL:
    case STROBE_SYNC_BROADCAST:
        if (!(o = object_of(b, object)))
            return -ENOMEM;
        if (ev->id == STROBE_SYNC_RELEASE)
            unhold(b, t, object, ns);
        if ((rc = end_task(b, t, ns)))
            return rc;
        if (ev->id == STROBE_SYNC_RELEASE) {
            unref(b, o->release);
            o->release = ref(t->last);
        } else {
            unref(b, o->signal);
            o->signal = ref(t->last);
        }
        return begin_task(b, t, ns);
    case STROBE_SYNC_ARRIVE:
        /* a barrier, or a condition wait (with its mutex, released while
         * waiting) */
        if ((rc = end_task(b, t, ns)))
            return rc;
        t->waiting = true;
        t->wait_object = object;
        t->wait_mutex = ev->sync_args[1];
        t->wait_lock = STROBE_NONE;
        if (t->wait_mutex) {
            if (!(o = object_of(b, t->wait_mutex)))
                return -ENOMEM;
            t->wait_lock = unhold(b, t, t->wait_mutex, ns);
            unref(b, o->release);
            o->release = ref(t->last);
            return 0;
        }
        t->barrier_object = object;
        return (o = object_of(b, object)) ? arrive(b, t, o, ns) : -ENOMEM;
    case STROBE_SYNC_BARRIER:
        if (!(o = object_of(b, object)))
            return -ENOMEM;
        if (t->barrier_object != object) {
            /* no ARRIVE (recorded without task-graph recording): it
             * arrived when the wait began */
            if ((rc = end_task(b, t, ns - (wait < ns ? wait : ns))) ||
                (rc = arrive(b, t, o, ns - (wait < ns ? wait : ns))))
                return rc;
        }
        t->waiting = false;
        t->barrier_object = 0;
        /* the task of a condition wait in between, if any, ends here */
        if ((rc = end_task(b, t, ns)) || (rc = begin_task(b, t, ns)))
            return rc;
        return depart(b, t, o);
    case STROBE_SYNC_COND_WAIT: {
        uint64_t mutex = ev->sync_args[1];
        if (!t->waiting || t->wait_object != object) {
            if ((rc = end_task(b, t, ns - (wait < ns ? wait : ns))))
                return rc;
            t->wait_lock = unhold(b, t, mutex, ns - (wait < ns ? wait : ns));
        }
        t->waiting = false;
        /* the mutex is held again before the woken task starts: it runs in
         * the critical section */
        if (t->wait_lock != STROBE_NONE && (rc = hold(t, mutex, ns, t->wait_lock)))
            return rc;
        if (!(o = object_of(b, object)) || (rc = begin_task(b, t, ns)))
            return rc ? rc : -ENOMEM;
        if (!ev->sync_args[4] && (rc = add_pred(b, t, o->signal, STROBE_TG_COND)))
            return rc;
        struct object *m = object_of(b, mutex);
        return m ? add_pred(b, t, m->release, STROBE_TG_LOCK) : -ENOMEM;
    }
    case STROBE_SYNC_FORK:
    case STROBE_SYNC_TEAM_BEGIN:
        /* a team (OpenMP parallel region): its fork, then each other team
         * thread's begin; its barriers are ARRIVE/BARRIER on the team's
         * id, and the forking thread's departure from the last is the join */
        if (!(o = object_of(b, object)) || (rc = end_task(b, t, ns)) || (rc = begin_task(b, t, ns)))
            return rc ? rc : -ENOMEM;
        if (ev->id == STROBE_SYNC_TEAM_BEGIN)
            return add_pred(b, t, o->release, STROBE_TG_FORK);
        unref(b, o->release);
        o->release = ref(t->last);
        return 0;
    default: /* TIMEOUT: the wait ended without an acquisition */
        if ((rc = end_task(b, t, ns - (wait < ns ? wait : ns))))
            return rc;
        return begin_task(b, t, ns);
    }
}

/* ---- per process ---- */

static int cmp_region_time(const void *pa, const void *pb)
{
    const struct strobe_tg_region_time *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns < b->ns ? 1 : -1;
    return (a->region > b->region) - (a->region < b->region);
}

/* The rest of the critical path: from the retired part (or its first
 * task) to b->best, and its time per region, longest first. */
static int finish_path(struct builder *b)
{
    struct strobe_tg_process *pr = b->pr;
    size_t n;
    int rc = best_chain(b, &n);
    for (size_t i = n; rc == 0 && i-- > 0;)
        rc = path_step(b, b->chain[i]);
    pr->span_ns = b->best ? b->best->dist : 0;
    if (rc == 0 && b->nregions) {
        if (!(pr->regions = malloc(b->nregions * sizeof *pr->regions)))
            return -ENOMEM;
        memcpy(pr->regions, b->regions, b->nregions * sizeof *pr->regions);
        pr->nregions = b->nregions;
        qsort(pr->regions, pr->nregions, sizeof *pr->regions, cmp_region_time);
    }
    return rc;
}

/* The process's sharing matrix as pairs; its false-sharing candidates'
 * files copied out of the tables. */
static int finish_sharing(struct builder *b)
{
    struct strobe_taskgraph *g = b->g;
    size_t n = b->nthreads, cap = g->nshares;
    for (size_t w = 0; b->matrix && w < n; w++)
        for (size_t r = 0; r < n; r++) {
            if (!b->matrix[w * n + r])
                continue;
            if (strobe__grow((void **)&g->shares, &cap, g->nshares + 1, sizeof *g->shares))
                return -ENOMEM;
            g->shares[g->nshares++] = (struct strobe_tg_share){b->process, b->threads[w].global,
                                                               b->threads[r].global, b->matrix[w * n + r]};
        }
    for (size_t i = b->fs_first; i < g->nfalse_shares; i++)
        for (int k = 0; k < 2; k++)
            g->false_shares[i].file[k] = strdup(g->false_shares[i].file[k]);
    b->fs_owned = true;
    for (size_t i = b->fs_first; i < g->nfalse_shares; i++)
        if (!g->false_shares[i].file[0] || !g->false_shares[i].file[1])
            return -ENOMEM;
    return 0;
}

static void process_free(struct builder *b)
{
    for (size_t i = 0; i < b->nthreads; i++) {
        struct thread *t = &b->threads[i];
        unref(b, t->in_pred);
        unref(b, t->last);
        unref(b, t->create);
        free(t->held);
        strobe__bbstream_close(t->bb);
        if (t->mapped) {
            strobe__stream_end(&t->dec);
            strobe__file_unmap(t->buf, t->len);
        }
    }
    for (size_t i = 0; i < b->nobjects; i++) {
        struct object *o = &b->objects[i];
        while (o->neps) /* killed inside the barrier: what arrived */
            close_episode(b, o, 0, false);
        free(o->eps);
        unref(b, o->release);
        unref(b, o->signal);
    }
    unref(b, b->best);
    unref(b, b->blocker);
    b->best = b->blocker = NULL;
    b->nregions = b->roots = 0;
    free(b->threads);
    free(b->heap);
    free(b->objects);
    strobe__blocks_free(b->tables);
    b->tables = NULL;
    for (size_t i = b->fs_first; !b->fs_owned && i < b->g->nfalse_shares; i++)
        b->g->false_shares[i].file[0] = b->g->false_shares[i].file[1] = NULL; /* the tables' */
    b->fs_first = b->g->nfalse_shares;
    b->fs_owned = false;
    strobe__shadow_free(&b->shadow);
    free(b->line_recs);
    free(b->matrix);
    b->line_recs = NULL;
    b->matrix = NULL;
    b->nline_recs = b->linecap = 0;
    strobe__keymap_free(&b->objmap);
    b->objmap = (struct strobe__keymap){0};
    b->threads = NULL;
    b->heap = NULL;
    b->objects = NULL;
    b->nthreads = b->nheap = b->nobjects = b->objcap = 0;
}

static int build_process(struct builder *b, uint32_t proc)
{
    const struct strobe_experiment *exp = b->exp;
    struct strobe_taskgraph *g = b->g;
    size_t n = 0;
    for (size_t i = 0; i < exp->nthreads; i++)
        n += exp->threads[i].process == proc && exp->threads[i].stream_path;
    if (n == 0)
        return 0;
    struct strobe_tg_process *prs = realloc(g->processes, (g->nprocesses + 1) * sizeof *prs);
    if (!prs)
        return -ENOMEM;
    g->processes = prs;
    b->pr = &prs[g->nprocesses++];
    *b->pr = (struct strobe_tg_process){.process = proc, .begin_ns = UINT64_MAX};
    b->process = proc;
    b->decided = b->ticketed = false;
    b->sweep_at = SWEEP_MIN;
    b->threads = calloc(n, sizeof *b->threads);
    b->heap = calloc(n, sizeof *b->heap);
    if (!b->threads || !b->heap)
        return -ENOMEM;
    /* bins over the process's threads' lifetime */
    uint64_t lo = UINT64_MAX, hi = 0;
    int rc = strobe__blocks_open(exp, proc, &b->tables, b->eb);
    for (size_t i = 0; i < exp->nthreads && rc == 0; i++) {
        const struct strobe_thread_info *ti = &exp->threads[i];
        if (ti->process != proc || !ti->stream_path)
            continue;
        struct thread *t = &b->threads[b->nthreads++];
        *t = (struct thread){.global = (uint32_t)i, .index = ti->index, .slot = (uint32_t)(b->nthreads - 1)};
        const char *shown = strobe__shown_path(exp, ti->stream_path);
        if ((rc = strobe__file_map(ti->stream_path, shown, &t->buf, &t->len, b->eb)) == 0) {
            t->mapped = true;
            rc = strobe__stream_begin(&t->dec, t->buf, t->len, shown, b->eb);
        }
        if (rc == 0 && b->tables &&
            (rc = strobe__bbstream_open(exp, (uint32_t)i, b->tables, &t->bb, b->eb)) == 0)
            b->pr->blocks = b->pr->blocks || t->bb;
        if (ti->begin_ns < lo)
            lo = ti->begin_ns;
        if (ti->end_ns > hi)
            hi = ti->end_ns;
    }
    /* sharing needs memory accesses: a module traced at level MEM */
    bool mem = false;
    for (size_t m = 0; rc == 0 && b->pr->blocks && m < b->tables->nmodules; m++)
        mem = mem || b->tables->modules[m].level == STROBE_BB_LEVEL_MEM;
    if (mem && !(b->matrix = calloc(b->nthreads * b->nthreads, sizeof *b->matrix)))
        rc = -ENOMEM;
    g->has_blocks = g->has_blocks || mem;
    if (rc == 0 && hi > lo) {
        b->pr->begin_ns = lo;
        b->pr->bin_ns = (hi - lo + STROBE_TG_BINS - 1) / STROBE_TG_BINS;
        b->pr->nbins = (size_t)((hi - lo + b->pr->bin_ns - 1) / b->pr->bin_ns);
        b->pr->last_bin_ns = hi - lo - (b->pr->nbins - 1) * b->pr->bin_ns;
    }
    /* threads without a creator in the process start at once; the others
     * when their CREATE is processed, or at the end if it never is */
    for (size_t i = 0; i < b->nthreads && rc == 0; i++) {
        uint32_t parent = exp->threads[b->threads[i].global].parent;
        if (parent == STROBE_NONE || exp->threads[parent].process != proc ||
            !exp->threads[parent].stream_path)
            rc = start_thread(b, &b->threads[i]);
    }
    for (;;) {
        while (rc == 0 && b->nheap) {
            struct thread *t = heap_pop(b);
            if ((rc = process(b, t)) == 0) {
                t->prev_ticks = t->next_ticks;
                rc = advance(b, t);
            }
        }
        size_t i = 0;
        while (i < b->nthreads && b->threads[i].started)
            i++;
        if (rc || i == b->nthreads)
            break;
        rc = start_thread(b, &b->threads[i]); /* its creator's CREATE was not recorded */
    }
    if (rc == 0)
        rc = finish_path(b);
    if (rc == 0)
        rc = finish_sharing(b);
    for (size_t k = 0; k < STROBE_TG_NKINDS; k++)
        g->edges[k] += b->pr->edges[k];
    g->tasks += b->pr->tasks;
    if (b->pr->begin_ns == UINT64_MAX)
        b->pr->begin_ns = 0;
    return rc;
}

static int cmp_lock(const void *pa, const void *pb)
{
    const struct strobe_tg_lock *a = pa, *b = pb;
    if (a->wait_ns != b->wait_ns)
        return a->wait_ns < b->wait_ns ? 1 : -1;
    if (a->on_path != b->on_path)
        return a->on_path < b->on_path ? 1 : -1;
    if (a->acquisitions != b->acquisitions)
        return a->acquisitions < b->acquisitions ? 1 : -1;
    return (a->object > b->object) - (a->object < b->object);
}

static int cmp_episode(const void *pa, const void *pb)
{
    const struct strobe_tg_episode *a = pa, *b = pb;
    if (a->wait_ns != b->wait_ns)
        return a->wait_ns < b->wait_ns ? 1 : -1;
    if (a->object != b->object)
        return a->object < b->object ? -1 : 1;
    return (a->episode > b->episode) - (a->episode < b->episode);
}

static int cmp_share(const void *pa, const void *pb)
{
    const struct strobe_tg_share *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    if (a->writer != b->writer)
        return a->writer < b->writer ? -1 : 1;
    return (a->reader > b->reader) - (a->reader < b->reader);
}

static int cmp_false_share(const void *pa, const void *pb)
{
    const struct strobe_tg_false_share *a = pa, *b = pb;
    if (a->conflicts != b->conflicts)
        return a->conflicts < b->conflicts ? 1 : -1;
    return (a->line > b->line) - (a->line < b->line);
}

/* Names the lock objects and barriers of process proc by their symbols. */
static int name_objects(const struct strobe_experiment *exp, struct strobe_taskgraph *g, uint32_t proc,
                        struct strobe_errbuf *eb)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nlocks; i++)
        n += g->locks[i].process == proc;
    for (size_t i = 0; i < g->nepisodes; i++)
        n += g->episodes[i].process == proc;
    if (n == 0)
        return 0;
    struct strobe__defs d = {0};
    uint64_t *addrs = malloc(n * sizeof *addrs);
    char **names = calloc(n, sizeof *names);
    int rc = addrs && names ? strobe__process_defs(exp, proc, &d, eb) : -ENOMEM;
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < g->nlocks; i++)
        if (g->locks[i].process == proc)
            addrs[k++] = g->locks[i].object;
    for (size_t i = 0; rc == 0 && i < g->nepisodes; i++)
        if (g->episodes[i].process == proc)
            addrs[k++] = g->episodes[i].object;
    if (rc == 0 && (rc = strobe__symbols_name_objects(&d, addrs, n, names)) == 0) {
        k = 0;
        for (size_t i = 0; i < g->nlocks; i++)
            if (g->locks[i].process == proc)
                g->locks[i].name = names[k++];
        for (size_t i = 0; i < g->nepisodes; i++)
            if (g->episodes[i].process == proc)
                g->episodes[i].name = names[k++];
    }
    strobe__defs_free(&d);
    free(addrs);
    free(names);
    return rc;
}

int strobe_taskgraph_build(const struct strobe_experiment *exp, const struct strobe_tg_sink *sink,
                           struct strobe_taskgraph **out, struct strobe_errbuf *eb)
{
    struct builder b = {.exp = exp, .sink = sink, .eb = eb};
    int rc = (b.g = calloc(1, sizeof *b.g)) ? 0 : -ENOMEM;
    for (uint32_t p = 0; rc == 0 && p < exp->nprocesses; p++) {
        rc = build_process(&b, p);
        process_free(&b);
    }
    for (uint32_t p = 0; rc == 0 && p < exp->nprocesses; p++)
        rc = name_objects(exp, b.g, p, eb);
    if (rc == 0 && b.g->nlocks)
        qsort(b.g->locks, b.g->nlocks, sizeof *b.g->locks, cmp_lock);
    if (rc == 0 && b.g->nepisodes)
        qsort(b.g->episodes, b.g->nepisodes, sizeof *b.g->episodes, cmp_episode);
    if (rc == 0 && b.g->nshares)
        qsort(b.g->shares, b.g->nshares, sizeof *b.g->shares, cmp_share);
    if (rc == 0 && b.g->nfalse_shares)
        qsort(b.g->false_shares, b.g->nfalse_shares, sizeof *b.g->false_shares, cmp_false_share);
    strobe__keymap_free(&b.fsmap);
    while (b.free_nodes) {
        struct node *n = b.free_nodes;
        b.free_nodes = n->pred;
        free(n);
    }
    strobe__keymap_free(&b.lockmap);
    free(b.chain);
    free(b.regions);
    free(b.path);
    free(b.key);
    if (rc) {
        if (rc == -ENOMEM)
            strobe__error(eb, rc, "out of memory");
        strobe_taskgraph_free(b.g);
        return rc;
    }
    *out = b.g;
    return 0;
}

void strobe_taskgraph_free(struct strobe_taskgraph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nprocesses; i++) {
        free(g->processes[i].path);
        free(g->processes[i].regions);
    }
    for (size_t i = 0; i < g->nlocks; i++) {
        free(g->locks[i].name);
        free(g->locks[i].path);
    }
    for (size_t i = 0; i < g->nepisodes; i++)
        free(g->episodes[i].name);
    for (size_t i = 0; i < g->nfalse_shares; i++) {
        free(g->false_shares[i].file[0]);
        free(g->false_shares[i].file[1]);
    }
    free(g->shares);
    free(g->false_shares);
    free(g->processes);
    free(g->locks);
    free(g->episodes);
    free(g);
}
