/* SPDX-License-Identifier: MIT */
/*
 * The POSIX shared-memory index: applications publish metric sets, a
 * sampler reads them in place (include/strobe/shm.h; seed 002, sections
 * 4.3, 4.5 and 4.6; the layout is in src/monitor/shm.h and
 * docs/formats/shm-index.md).
 *
 * One index object holds a header and a fixed table of entries; each set
 * lives in its own segment (meta section, then data section). Every change
 * to the index happens under a robust process-shared mutex stored in it:
 * a process that dies inside the lock hands the next locker EOWNERDEAD,
 * and that locker repairs the tables before using them. The writer
 * heartbeat is the only lock-free access.
 *
 * Who cleans up what (seed Figure 4.4):
 *   1. an application leaves: its writer count goes down; at zero the
 *      entry and its segment go; the last one out removes the index when
 *      no live reader is registered;
 *   2. an application dies: whoever sweeps the table next (a reader at
 *      every scan, any process at open or unpublish) removes entries whose
 *      writer pids are all dead; a reader also removes entries silent for
 *      longer than its timeout;
 *   3. the reader dies: its pid is dead, so the last writer to leave finds
 *      no live reader and removes the index;
 *   4. everybody dies: the next process to open the index finds only dead
 *      pids in it and reinitialises it in place, unlinking the segments it
 *      names.
 *
 * Trust: objects are created 0600 and refused when another user owns them
 * or group/other may access them. Their contents can still be garbage (a
 * crash in the middle of an update, a bug, a hostile process of the same
 * user), so an entry is copied before it is checked and only the checked
 * copy is used, pids are passed to kill() only when positive (0 and -1
 * address groups and everybody), and only segment names this file derives
 * itself are ever unlinked. What no check can stop: a same-user process
 * that shrinks an object another process has mapped makes the next access
 * to it fault (SIGBUS).
 *
 * Not async-signal-safe (malloc, mutexes); thread-safe as the public header
 * says. Liveness is judged by pid, so every process using one index must
 * share a pid namespace.
 */
#define _GNU_SOURCE /* pthread_mutex_clocklock */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "monitor/set.h"
#include "monitor/shm.h"

/* A holder keeps the index lock for a few system calls at most; a lock
 * held this long is wedged (a garbage mutex, a stopped process). */
#define LOCK_TIMEOUT_S 10
/* How long an opener waits for a creator between shm_open and READY. */
#define INIT_WAIT_MS 2000
/* Retries when the index disappears or is replaced while we open it. */
#define OPEN_ATTEMPTS 50

struct index {
    char name[STROBE__SHM_NAME_MAX + 2]; /* "/" + name */
    int fd;                              /* kept open for the st_nlink checks */
    struct strobe__shm_hdr *hdr;
    struct strobe__shm_entry *ent;
    uint32_t cap; /* entries, from the header (checked once at attach) */
};

struct strobe_shm_pub {
    struct index ix;
    uint32_t slot;     /* entry */
    uint32_t pid_slot; /* our place in its writer_pids */
    uint64_t entry_gn; /* tells our entry from a later one in the same slot */
    int32_t pid;
    char segment[STROBE__SHM_SEGMENT_SIZE];
    void *map;
    size_t map_len;
    strobe_set *set;
};

/* A set the reader has attached. */
struct att {
    uint32_t slot;
    uint64_t entry_gn;
    uint64_t data_gn; /* at the last scan: a change counts as writer activity */
    void *map;        /* the segment, read-only */
    size_t map_len;
    void *meta; /* private copy of the meta section */
    strobe_set *set;
};

struct strobe_shm_reader {
    struct index ix;
    uint64_t timeout_ns;
    uint32_t slot; /* reader table */
    int32_t pid;
    int have_gen; /* gen is valid: otherwise the next scan rebuilds */
    uint64_t gen;
    uint32_t n;
    struct att *att;  /* [ix.cap], sorted by slot */
    struct att *next; /* [ix.cap], scratch for rebuilds */
};

/* ---- small helpers ------------------------------------------------------- */

int strobe__shm_capacity(uint32_t *out)
{
    const char *v = getenv("STROBE_SHM_CAPACITY");
    *out = STROBE__SHM_CAPACITY_DEFAULT;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || *end || end == v || v[0] == '-' || n < STROBE__SHM_CAPACITY_MIN || n > STROBE__SHM_CAPACITY_MAX)
        return -EINVAL;
    *out = (uint32_t)n;
    return 0;
}

/* Activity times use CLOCK_MONOTONIC: the index lives in tmpfs, so it never
 * outlives the boot that all its users share, and a wall-clock step (NTP,
 * settimeofday) must not time out every writer at once. */
static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Dead only when the kernel says there is no such process (seed 4.6): a
 * zombie or a process of another user (EPERM, pid reuse) counts as alive,
 * which errs on the side of keeping data. Non-positive values are slots
 * that are free or garbage, never a process. */
static int pid_alive(int32_t pid)
{
    if (pid <= 0)
        return 0;
    return !(kill(pid, 0) == -1 && errno == ESRCH);
}

int strobe__shm_index_name(const char *index, char *out, size_t cap)
{
    char def[32];
    if (!index) {
        index = getenv(STROBE_SHM_INDEX_ENV);
        if (!index || !*index) {
            snprintf(def, sizeof def, "strobe-%u", (unsigned)geteuid());
            index = def;
        }
    }
    if (index[0] == '/')
        index++;
    size_t n = strlen(index);
    if (n == 0 || n > STROBE__SHM_NAME_MAX || n + 2 > cap || strcmp(index, ".") == 0 ||
        strcmp(index, "..") == 0)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)index[i];
        if (c <= ' ' || c == 0x7f || c == '/')
            return -EINVAL;
    }
    out[0] = '/';
    memcpy(out + 1, index, n + 1);
    return 0;
}

/* Objects must be ours and private: another user could otherwise read our
 * data, or feed us theirs. */
static int check_owner(int fd, struct stat *st)
{
    if (fstat(fd, st) < 0)
        return -errno;
    if (st->st_uid != geteuid() || (st->st_mode & 077))
        return -EACCES;
    return 0;
}

static void seg_name(const struct index *ix, uint32_t slot, uint64_t gn, char out[STROBE__SHM_SEGMENT_SIZE])
{
    /* at most 201 + 1 + 3 + 1 + 20 bytes: always fits */
    snprintf(out, STROBE__SHM_SEGMENT_SIZE, "%s.%" PRIu32 ".%" PRIu64, ix->name, slot, gn);
}

/* Unlinks the segment an entry names, but only when the name is the one
 * this index derives for that slot and generation: a corrupt entry must
 * not make us remove some other object of ours. */
static void unlink_entry_segment(const struct index *ix, uint32_t slot, const struct strobe__shm_entry *snap)
{
    char want[STROBE__SHM_SEGMENT_SIZE];
    if (!snap->segment[0] || !memchr(snap->segment, 0, sizeof snap->segment))
        return;
    seg_name(ix, slot, snap->entry_gn, want);
    if (strcmp(want, snap->segment) == 0)
        shm_unlink(want);
}

/* Checks a copy of an ACTIVE entry: 0 or STROBE_ERR_FORMAT. */
static int entry_check(const struct index *ix, uint32_t slot, const struct strobe__shm_entry *e)
{
    char want[STROBE__SHM_SEGMENT_SIZE];
    const uint32_t min_meta = sizeof(struct strobe__set_meta_hdr);
    const uint32_t min_data = sizeof(struct strobe__set_data_hdr);
    if (e->state != STROBE__SHM_ACTIVE || e->entry_gn == 0 || !e->label[0] ||
        !memchr(e->label, 0, sizeof e->label) || !memchr(e->segment, 0, sizeof e->segment))
        return STROBE_ERR_FORMAT;
    seg_name(ix, slot, e->entry_gn, want);
    if (strcmp(want, e->segment) != 0)
        return STROBE_ERR_FORMAT;
    if (e->meta_size < min_meta || e->meta_size > STROBE_SET_MAX_BYTES || e->meta_size % 8 ||
        e->data_size < min_data || e->data_size > STROBE_SET_MAX_BYTES || e->data_size % 8)
        return STROBE_ERR_FORMAT;
    if (e->writers > STROBE__SHM_WRITERS || (e->reader_mask >> STROBE__SHM_READERS))
        return STROBE_ERR_FORMAT;
    for (uint32_t k = 0; k < STROBE__SHM_WRITERS; k++)
        if (e->writer_pids[k] < 0)
            return STROBE_ERR_FORMAT;
    return 0;
}

/* ---- table maintenance (all with the index locked) ----------------------- */

/* Removes entry `slot`: the segment goes first, so that a crash in between
 * leaves an entry naming nothing (which the next sweep removes), never a
 * segment that no entry names. A heartbeat may race with the clearing; it
 * checks entry_gn first, so at worst it refreshes a free entry, which
 * allocation clears again. */
static void entry_release(struct index *ix, uint32_t slot)
{
    struct strobe__shm_entry snap;
    memcpy(&snap, &ix->ent[slot], sizeof snap);
    unlink_entry_segment(ix, slot, &snap);
    memset(&ix->ent[slot], 0, sizeof snap);
    if (snap.state == STROBE__SHM_ACTIVE && ix->hdr->size > 0)
        ix->hdr->size--;
    ix->hdr->generation++;
}

/* Drops reader slots whose process is gone, with their bits in the
 * entries' reader masks (a mask rather than a count, so that a dead
 * reader's references can be taken back). */
static void prune_readers(struct index *ix)
{
    for (uint32_t s = 0; s < STROBE__SHM_READERS; s++) {
        int32_t pid = ix->hdr->readers[s].pid;
        if (pid == 0 || pid_alive(pid))
            continue;
        memset(&ix->hdr->readers[s], 0, sizeof ix->hdr->readers[s]);
        for (uint32_t e = 0; e < ix->cap; e++)
            ix->ent[e].reader_mask &= ~(1u << s);
    }
}

/* Brings the tables back to their invariants: every ACTIVE entry checks,
 * names at least one live writer and (timeout_ns > 0) was active within
 * timeout_ns of now; free entries name no segment; dead readers are gone.
 * Anybody may run it; writers pass timeout_ns 0 because only the reader
 * knows the timeout. Returns how many corrupt entries were removed. */
static unsigned sweep(struct index *ix, uint64_t now, uint64_t timeout_ns)
{
    unsigned bad = 0, active = 0;
    prune_readers(ix);
    for (uint32_t s = 0; s < ix->cap; s++) {
        struct strobe__shm_entry *e = &ix->ent[s], snap;
        memcpy(&snap, e, sizeof snap);
        if (snap.state == STROBE__SHM_FREE) {
            /* a free entry with a name: a creation that died inside the lock */
            if (snap.segment[0]) {
                unlink_entry_segment(ix, s, &snap);
                memset(e, 0, sizeof *e);
            }
            continue;
        }
        if (entry_check(ix, s, &snap) < 0) {
            bad++;
            entry_release(ix, s);
            continue;
        }
        uint32_t live = 0;
        for (uint32_t k = 0; k < STROBE__SHM_WRITERS; k++) {
            if (snap.writer_pids[k] == 0)
                continue;
            if (pid_alive(snap.writer_pids[k]))
                live++;
            else
                e->writer_pids[k] = 0;
        }
        uint64_t last = __atomic_load_n(&e->last_write_ns, __ATOMIC_RELAXED);
        if (live == 0 || (timeout_ns && now > last && now - last > timeout_ns)) {
            entry_release(ix, s);
            continue;
        }
        e->writers = live;
        active++;
    }
    ix->hdr->size = active;
    return bad;
}

/* Scenario 4 test: some pid was recorded and none of them is alive. */
static int index_stale(const struct index *ix)
{
    unsigned recorded = 0;
    for (uint32_t s = 0; s < STROBE__SHM_READERS; s++) {
        int32_t pid = ix->hdr->readers[s].pid;
        recorded += pid != 0;
        if (pid_alive(pid))
            return 0;
    }
    for (uint32_t e = 0; e < ix->cap; e++) {
        if (ix->ent[e].state == STROBE__SHM_FREE)
            continue;
        for (uint32_t k = 0; k < STROBE__SHM_WRITERS; k++) {
            int32_t pid = ix->ent[e].writer_pids[k];
            recorded += pid != 0;
            if (pid_alive(pid))
                return 0;
        }
    }
    return recorded > 0;
}

/* Scenario 4: everybody who used this index is dead, so nothing in it is
 * worth keeping. Unlinks the segments its entries name (only names this
 * file derives) and empties both tables; the generation keeps counting so
 * that segment names stay unique. */
static void index_reinit(struct index *ix)
{
    for (uint32_t s = 0; s < ix->cap; s++) {
        struct strobe__shm_entry snap;
        memcpy(&snap, &ix->ent[s], sizeof snap);
        unlink_entry_segment(ix, s, &snap);
    }
    memset(ix->ent, 0, (size_t)ix->cap * sizeof *ix->ent);
    memset(ix->hdr->readers, 0, sizeof ix->hdr->readers);
    ix->hdr->size = 0;
    ix->hdr->generation++;
}

/* The index object is still the one its name refers to. On Linux an
 * unlinked shared-memory object (tmpfs) has st_nlink 0. */
static int index_linked(const struct index *ix)
{
    struct stat st;
    return fstat(ix->fd, &st) != 0 || st.st_nlink > 0;
}

/* Scenarios 1 and 3: the last one out removes the index, but only when no
 * entry is left and no live reader is registered (a running sampler keeps
 * waiting for new applications). Processes blocked on the lock meanwhile
 * see st_nlink 0 once they get it and start over. */
static void index_unlink_if_unused(struct index *ix)
{
    for (uint32_t e = 0; e < ix->cap; e++)
        if (ix->ent[e].state != STROBE__SHM_FREE)
            return;
    for (uint32_t s = 0; s < STROBE__SHM_READERS; s++)
        if (pid_alive(ix->hdr->readers[s].pid))
            return;
    /* the name may already mean a newer index if ours was unlinked before */
    if (index_linked(ix))
        shm_unlink(ix->name);
}

/* ---- the lock ------------------------------------------------------------ */

static int index_lock(struct index *ix)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += LOCK_TIMEOUT_S;
    int rc = pthread_mutex_clocklock(&ix->hdr->lock.m, CLOCK_MONOTONIC, &ts);
    if (rc == EOWNERDEAD) {
        /* The owner died inside the lock, perhaps half-way through an
         * update. Make the mutex usable again, then repair: sweep checks
         * every entry and recounts, the generation bump makes readers
         * rebuild their lists from scratch. */
        pthread_mutex_consistent(&ix->hdr->lock.m);
        sweep(ix, mono_ns(), 0);
        ix->hdr->generation++;
        return 0;
    }
    return -rc;
}

static void index_unlock(struct index *ix)
{
    pthread_mutex_unlock(&ix->hdr->lock.m);
}

/* ---- opening ------------------------------------------------------------- */

static void index_close(struct index *ix)
{
    if (ix->hdr)
        munmap(ix->hdr, STROBE__SHM_INDEX_BYTES(ix->cap));
    if (ix->fd >= 0)
        close(ix->fd);
    ix->hdr = NULL;
    ix->ent = NULL;
    ix->fd = -1;
}

/* We created the object (O_EXCL): it starts zero-filled from ftruncate;
 * the header and mutex are written, and READY is released last. */
static int index_init(struct index *ix)
{
    int rc;
    pthread_mutexattr_t a;
    if ((rc = strobe__shm_capacity(&ix->cap)) < 0)
        return rc;
    if (ftruncate(ix->fd, (off_t)STROBE__SHM_INDEX_BYTES(ix->cap)) < 0)
        return -errno;
    void *p = mmap(NULL, STROBE__SHM_INDEX_BYTES(ix->cap), PROT_READ | PROT_WRITE, MAP_SHARED, ix->fd, 0);
    if (p == MAP_FAILED)
        return -errno;
    struct strobe__shm_hdr *h = p;
    h->init_pid = getpid();
    memcpy(h->magic, STROBE__SHM_MAGIC, sizeof h->magic);
    h->version = STROBE__SHM_VERSION;
    h->hdr_size = sizeof *h;
    h->entry_size = sizeof(struct strobe__shm_entry);
    h->capacity = ix->cap;
    h->reader_slots = STROBE__SHM_READERS;
    /* Starting from the wall clock instead of 1 keeps segment names
     * ("<index>.<slot>.<generation>") distinct from those of any earlier
     * index of the same name, whose leftovers may still exist. */
    h->generation = real_ns();
    if ((rc = pthread_mutexattr_init(&a)) == 0) {
        if ((rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED)) == 0 &&
            (rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST)) == 0)
            rc = pthread_mutex_init(&h->lock.m, &a);
        pthread_mutexattr_destroy(&a);
    }
    if (rc) {
        munmap(p, STROBE__SHM_INDEX_BYTES(ix->cap));
        return -rc;
    }
    /* release: everything above is visible to whoever sees READY; pairs
     * with the acquire load in index_attach */
    __atomic_store_n(&h->state, STROBE__SHM_READY, __ATOMIC_RELEASE);
    ix->hdr = h;
    ix->ent = (struct strobe__shm_entry *)(h + 1);
    return 0;
}

/* Someone else created the object. Returns 0 (mapped, header checked), 1
 * when the creator died before finishing (the caller unlinks and starts
 * over), or a negative code. */
static int index_attach(struct index *ix)
{
    struct stat st;
    int rc = check_owner(ix->fd, &st);
    if (rc < 0)
        return rc;
    /* between the creator's shm_open and ftruncate the size is 0 */
    for (unsigned ms = 0; st.st_size == 0; ms++) {
        if (ms >= INIT_WAIT_MS)
            return 1;
        sleep_ms(1);
        if (fstat(ix->fd, &st) < 0)
            return -errno;
    }
    if ((uint64_t)st.st_size < sizeof(struct strobe__shm_hdr) ||
        (uint64_t)st.st_size > STROBE__SHM_INDEX_BYTES(STROBE__SHM_CAPACITY_MAX))
        return STROBE_ERR_FORMAT;
    /* map only what exists: touching pages past the end would fault */
    size_t len = (size_t)st.st_size;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ix->fd, 0);
    if (p == MAP_FAILED)
        return -errno;
    struct strobe__shm_hdr *h = p;
    unsigned ms = 0;
    /* acquire: pairs with the creator's release of READY */
    while (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != STROBE__SHM_READY && ms++ < INIT_WAIT_MS)
        sleep_ms(1);
    if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != STROBE__SHM_READY)
        rc = pid_alive(h->init_pid) ? -ETIMEDOUT : 1;
    else if (memcmp(h->magic, STROBE__SHM_MAGIC, sizeof h->magic) != 0)
        rc = STROBE_ERR_FORMAT;
    else if (h->version != STROBE__SHM_VERSION)
        rc = STROBE_ERR_VERSION;
    else if (h->hdr_size != sizeof *h || h->entry_size != sizeof(struct strobe__shm_entry) ||
             h->capacity < STROBE__SHM_CAPACITY_MIN || h->capacity > STROBE__SHM_CAPACITY_MAX ||
             h->reader_slots != STROBE__SHM_READERS || (uint64_t)st.st_size != STROBE__SHM_INDEX_BYTES(h->capacity))
        rc = STROBE_ERR_FORMAT;
    if (rc != 0) {
        munmap(p, len);
        return rc;
    }
    ix->hdr = h;
    ix->ent = (struct strobe__shm_entry *)(h + 1);
    ix->cap = h->capacity; /* checked above; later writes to it are ignored */
    return 0;
}

/* Opens or creates the index (seed 4.5: whoever comes first, sampler or
 * application, creates it) and returns with it mapped and LOCKED, after
 * either reinitialising a stale index (scenario 4) or sweeping it. */
static int index_open(const char *name, struct index *ix)
{
    ix->fd = -1;
    ix->hdr = NULL;
    int rc = strobe__shm_index_name(name, ix->name, sizeof ix->name);
    if (rc < 0)
        return rc;
    for (int attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
        int created = 1;
        ix->fd = shm_open(ix->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (ix->fd >= 0) {
            if ((rc = index_init(ix)) < 0) {
                shm_unlink(ix->name);
                index_close(ix);
                return rc;
            }
        } else if (errno != EEXIST) {
            return -errno;
        } else {
            created = 0;
            ix->fd = shm_open(ix->name, O_RDWR, 0);
            if (ix->fd < 0) {
                if (errno == ENOENT) /* removed since: try to create it again */
                    continue;
                return -errno;
            }
            rc = index_attach(ix);
            if (rc == 1) {
                /* abandoned half-way by a dead creator. If two openers
                 * get here at once, the second may unlink the index the
                 * first has just recreated; the window is a few system
                 * calls after a crash in a few others, and the loser's
                 * sets then live in an orphan index (not corrupted). */
                shm_unlink(ix->name);
                index_close(ix);
                continue;
            }
            if (rc < 0) {
                index_close(ix);
                return rc;
            }
        }
        if ((rc = index_lock(ix)) < 0) {
            index_close(ix);
            return rc;
        }
        if (!index_linked(ix)) { /* the last user removed it while we waited */
            index_unlock(ix);
            index_close(ix);
            continue;
        }
        if (!created && index_stale(ix))
            index_reinit(ix);
        else
            sweep(ix, mono_ns(), 0);
        return 0;
    }
    return -EAGAIN;
}

/* Opens and maps segment `name` of exactly `len` bytes. */
static int seg_map(const char *name, int writable, size_t len, void **out)
{
    int fd = shm_open(name, writable ? O_RDWR : O_RDONLY, 0);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = check_owner(fd, &st);
    if (rc == 0 && (uint64_t)st.st_size != len)
        rc = STROBE_ERR_FORMAT;
    if (rc == 0) {
        void *m = mmap(NULL, len, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            rc = -errno;
        else
            *out = m;
    }
    close(fd);
    return rc;
}

/* ---- writers ------------------------------------------------------------- */

/* Joins live entry `slot` as one more writer. */
static int pub_join(strobe_shm_pub *p, uint32_t slot)
{
    struct strobe__shm_entry *e = &p->ix.ent[slot], snap;
    memcpy(&snap, e, sizeof snap); /* checked by the sweep at open */
    uint32_t k;
    for (k = 0; k < STROBE__SHM_WRITERS && snap.writer_pids[k]; k++)
        ;
    if (k == STROBE__SHM_WRITERS)
        return STROBE_ERR_LIMIT;
    size_t ml = snap.meta_size, dl = snap.data_size;
    void *map;
    strobe_set *set;
    int rc = seg_map(snap.segment, 1, ml + dl, &map);
    if (rc < 0)
        return rc;
    /* The meta section is shared here: writers may set meta metrics. A
     * writer trusts its co-writers, as they write the same values. */
    rc = strobe_set_attach(map, ml, (uint8_t *)map + ml, dl, &set);
    if (rc == 0 && (strobe__set_data_check(map, (uint8_t *)map + ml, dl) < 0 ||
                    strobe_set_schema_sum(set) != snap.schema_sum ||
                    strcmp(strobe_set_instance(set), snap.label) != 0)) {
        strobe_set_free(set);
        rc = STROBE_ERR_FORMAT;
    }
    if (rc < 0) {
        munmap(map, ml + dl);
        return rc;
    }
    e->writer_pids[k] = p->pid;
    e->writers++;
    __atomic_store_n(&e->last_write_ns, mono_ns(), __ATOMIC_RELAXED);
    p->slot = slot;
    p->pid_slot = k;
    p->entry_gn = snap.entry_gn;
    memcpy(p->segment, snap.segment, sizeof p->segment);
    p->map = map;
    p->map_len = ml + dl;
    p->set = set;
    return 0;
}

/* Allocates a free entry and a new segment holding a fresh set. */
static int pub_create(strobe_shm_pub *p, const strobe_schema *schema, const char *producer,
                      const char *instance, const char *label, uint64_t sum, size_t ml, size_t dl)
{
    struct index *ix = &p->ix;
    uint32_t s;
    for (s = 0; s < ix->cap && ix->ent[s].state != STROBE__SHM_FREE; s++)
        ;
    if (s == ix->cap)
        return STROBE_ERR_LIMIT;
    struct strobe__shm_entry *e = &ix->ent[s];
    uint64_t gn = ix->hdr->generation + 1;
    size_t len = ml + dl;
    void *map = MAP_FAILED;
    strobe_set *set = NULL;
    int rc;
    memset(e, 0, sizeof *e);
    seg_name(ix, s, gn, p->segment);
    /* named while still FREE, before the segment exists: if we die before
     * the entry becomes ACTIVE, the next sweep unlinks what we made */
    e->entry_gn = gn;
    memcpy(e->segment, p->segment, sizeof e->segment);
    int fd = shm_open(p->segment, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        rc = -errno;
        goto fail_clear;
    }
    if (ftruncate(fd, (off_t)len) < 0 ||
        (map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        rc = -errno;
        close(fd);
        goto fail_unlink;
    }
    close(fd);
    if ((rc = strobe_set_new_in(schema, producer, instance, map, (uint8_t *)map + ml, &set)) < 0)
        goto fail_unlink;
    memcpy(e->label, label, strlen(label) + 1);
    e->schema_sum = sum;
    e->meta_size = (uint32_t)ml;
    e->data_size = (uint32_t)dl;
    e->writers = 1;
    e->writer_pids[0] = p->pid;
    __atomic_store_n(&e->last_write_ns, mono_ns(), __ATOMIC_RELAXED);
    e->state = STROBE__SHM_ACTIVE;
    ix->hdr->size++;
    ix->hdr->generation = gn;
    p->slot = s;
    p->pid_slot = 0;
    p->entry_gn = gn;
    p->map = map;
    p->map_len = len;
    p->set = set;
    return 0;
fail_unlink:
    if (map != MAP_FAILED)
        munmap(map, len);
    shm_unlink(p->segment);
fail_clear:
    memset(e, 0, sizeof *e);
    return rc;
}

STROBE_API int strobe_shm_publish(const char *index, const strobe_schema *schema, const char *producer,
                                  const char *instance, strobe_shm_pub **pubp, strobe_set **setp)
{
    if (!schema || !producer || !pubp || !setp)
        return -EINVAL;
    /* a private copy of the set gives the label, the checksum and the
     * sizes, and checks the names, before anything is shared */
    strobe_set *tmp;
    int rc = strobe_set_new(schema, producer, instance, &tmp);
    if (rc < 0)
        return rc;
    char label[STROBE__SHM_LABEL_SIZE];
    size_t ml, dl;
    snprintf(label, sizeof label, "%s", strobe_set_instance(tmp));
    uint64_t sum = strobe_set_schema_sum(tmp);
    strobe_set_meta(tmp, &ml);
    strobe_set_data(tmp, &dl);
    strobe_set_free(tmp);

    strobe_shm_pub *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->pid = getpid();
    if ((rc = index_open(index, &p->ix)) < 0) {
        free(p);
        return rc;
    }
    int found = -1;
    for (uint32_t s = 0; s < p->ix.cap && found < 0; s++)
        if (p->ix.ent[s].state == STROBE__SHM_ACTIVE && strncmp(p->ix.ent[s].label, label, sizeof label) == 0)
            found = (int)s;
    if (found < 0)
        rc = pub_create(p, schema, producer, instance, label, sum, ml, dl);
    else if (p->ix.ent[found].schema_sum != sum)
        rc = -EEXIST;
    else
        rc = pub_join(p, (uint32_t)found);
    if (rc < 0)
        index_unlink_if_unused(&p->ix); /* we may have created it for nothing */
    index_unlock(&p->ix);
    if (rc < 0) {
        index_close(&p->ix);
        free(p);
        return rc;
    }
    *pubp = p;
    *setp = p->set;
    return 0;
}

STROBE_API void strobe_shm_heartbeat(strobe_shm_pub *p)
{
    if (!p)
        return;
    struct strobe__shm_entry *e = &p->ix.ent[p->slot];
    /* Relaxed: the time is a value of its own, nothing is ordered against
     * it; readers load it under the index lock. The entry_gn check keeps a
     * writer that was timed out from refreshing a slot reused since (a
     * reuse between the two accesses costs one stale refresh, no more). */
    if (__atomic_load_n(&e->entry_gn, __ATOMIC_RELAXED) == p->entry_gn)
        __atomic_store_n(&e->last_write_ns, mono_ns(), __ATOMIC_RELAXED);
}

STROBE_API int strobe_shm_unpublish(strobe_shm_pub *p)
{
    if (!p)
        return -EINVAL;
    struct index *ix = &p->ix;
    int rc = index_lock(ix);
    if (rc == 0) {
        struct strobe__shm_entry *e = &ix->ent[p->slot];
        int ours = e->state == STROBE__SHM_ACTIVE && e->entry_gn == p->entry_gn;
        if (ours && e->writer_pids[p->pid_slot] == getpid()) {
            e->writer_pids[p->pid_slot] = 0;
            if (e->writers > 0)
                e->writers--;
            if (e->writers == 0)
                entry_release(ix, p->slot);
        } else if (!ours) {
            /* timed out or found corrupt: if the entry was unreadable its
             * segment may still exist, and its name is ours alone */
            shm_unlink(p->segment);
        }
        /* (ours with another pid: a fork child leaving its parent's
         * publication; only the mappings go) */
        sweep(ix, mono_ns(), 0);
        index_unlink_if_unused(ix);
        index_unlock(ix);
    }
    strobe_set_free(p->set);
    munmap(p->map, p->map_len);
    index_close(ix);
    free(p);
    return rc;
}

/* ---- readers ------------------------------------------------------------- */

STROBE_API int strobe_shm_reader_open(const char *index, uint64_t timeout_ns, strobe_shm_reader **out)
{
    if (!out)
        return -EINVAL;
    strobe_shm_reader *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->pid = getpid();
    r->timeout_ns = timeout_ns;
    int rc = index_open(index, &r->ix);
    if (rc < 0) {
        free(r);
        return rc;
    }
    if (!(r->att = calloc(r->ix.cap, sizeof *r->att)) || !(r->next = calloc(r->ix.cap, sizeof *r->next))) {
        index_unlock(&r->ix);
        index_close(&r->ix);
        free(r->att);
        free(r);
        return -ENOMEM;
    }
    struct strobe__shm_hdr *h = r->ix.hdr;
    uint32_t s;
    for (s = 0; s < STROBE__SHM_READERS && h->readers[s].pid != 0; s++)
        ;
    if (s == STROBE__SHM_READERS) {
        index_unlock(&r->ix);
        index_close(&r->ix);
        free(r);
        return STROBE_ERR_LIMIT;
    }
    h->readers[s].pid = r->pid;
    h->readers[s].last_read_ns = mono_ns();
    r->slot = s;
    index_unlock(&r->ix);
    *out = r;
    return 0;
}

static void att_close(strobe_shm_reader *r, struct att *a, int locked)
{
    if (locked && r->ix.ent[a->slot].entry_gn == a->entry_gn)
        r->ix.ent[a->slot].reader_mask &= ~(1u << r->slot);
    strobe_set_free(a->set);
    free(a->meta);
    munmap(a->map, a->map_len);
}

/* Maps the segment of checked entry `snap` read-only (a reader can then
 * never damage a writer's values) and validates it. */
static int att_open(uint32_t slot, const struct strobe__shm_entry *snap, struct att *a)
{
    size_t ml = snap->meta_size, dl = snap->data_size;
    void *map, *meta;
    strobe_set *set = NULL;
    int rc = seg_map(snap->segment, 0, ml + dl, &map);
    if (rc < 0)
        return rc;
    /* The set API trusts the offsets it validated once, so the reader
     * works on a private copy of the meta section that nobody else can
     * rewrite; values in the data section may change at will. */
    if (!(meta = aligned_alloc(8, ml))) {
        munmap(map, ml + dl);
        return -ENOMEM;
    }
    memcpy(meta, map, ml);
    rc = strobe_set_attach(meta, ml, (uint8_t *)map + ml, dl, &set);
    if (rc == 0 && (strobe__set_data_check(meta, (uint8_t *)map + ml, dl) < 0 ||
                    strobe_set_schema_sum(set) != snap->schema_sum ||
                    strncmp(strobe_set_instance(set), snap->label, sizeof snap->label) != 0)) {
        strobe_set_free(set);
        rc = STROBE_ERR_FORMAT;
    }
    if (rc < 0) {
        free(meta);
        munmap(map, ml + dl);
        return rc;
    }
    a->slot = slot;
    a->entry_gn = snap->entry_gn;
    a->data_gn = strobe_set_data_gn(set);
    a->map = map;
    a->map_len = ml + dl;
    a->meta = meta;
    a->set = set;
    return 0;
}

/* Takes a newer meta section (meta metric values changed) into the private
 * copy, after the same checks as the first one. */
static void att_refresh_meta(struct att *a)
{
    const struct strobe__set_meta_hdr *mh = a->map;
    size_t ml;
    strobe_set_meta(a->set, &ml);
    if (__atomic_load_n(&mh->meta_gn, __ATOMIC_ACQUIRE) == strobe_set_meta_gn(a->set))
        return;
    void *tmp = aligned_alloc(8, ml);
    if (!tmp)
        return; /* next scan */
    memcpy(tmp, a->map, ml);
    strobe_set_apply_meta(a->set, tmp, ml); /* a bad copy leaves the old one */
    free(tmp);
}

/* Rebuilds the list of attached sets from the (swept) table. Entries whose
 * segment is missing or invalid are removed: nobody else can use them
 * either. Returns 0 or the first error that is ours (memory, descriptors),
 * after which the next scan rebuilds again; *bad counts the removals. */
static int rebuild(strobe_shm_reader *r, int *changed, unsigned *bad)
{
    struct index *ix = &r->ix;
    uint32_t n = 0, i = 0;
    int rc = 0;
    for (uint32_t s = 0; s < ix->cap; s++) {
        struct strobe__shm_entry *e = &ix->ent[s], snap;
        memcpy(&snap, e, sizeof snap);
        for (; i < r->n && r->att[i].slot < s; i++, *changed = 1)
            att_close(r, &r->att[i], 1);
        int kept = 0;
        if (i < r->n && r->att[i].slot == s) {
            if (snap.state == STROBE__SHM_ACTIVE && r->att[i].entry_gn == snap.entry_gn) {
                r->next[n++] = r->att[i];
                kept = 1;
            } else {
                att_close(r, &r->att[i], 1);
                *changed = 1;
            }
            i++;
        }
        if (kept || snap.state != STROBE__SHM_ACTIVE)
            continue;
        int arc = att_open(s, &snap, &r->next[n]);
        if (arc == 0) {
            e->reader_mask |= 1u << r->slot;
            n++;
            *changed = 1;
        } else if (arc == -ENOENT || arc == -EACCES || arc == STROBE_ERR_FORMAT) {
            (*bad)++;
            entry_release(ix, s);
        } else if (rc == 0) {
            rc = arc;
        }
    }
    for (; i < r->n; i++, *changed = 1)
        att_close(r, &r->att[i], 1);
    memcpy(r->att, r->next, n * sizeof *r->att);
    r->n = n;
    r->gen = ix->hdr->generation;
    r->have_gen = rc == 0;
    return rc;
}

STROBE_API int strobe_shm_reader_scan(strobe_shm_reader *r, int *changed)
{
    int ch = 0;
    if (changed)
        *changed = 0;
    if (!r)
        return -EINVAL;
    struct index *ix = &r->ix;
    int rc = index_lock(ix);
    if (rc < 0)
        return rc;
    uint64_t now = mono_ns();
    struct strobe__shm_hdr *h = ix->hdr;
    if (h->readers[r->slot].pid != r->pid) {
        /* our registration is gone (someone overwrote the table): take a
         * slot again so that writers keep seeing a live reader, and
         * rebuild so that the reader masks carry the new slot */
        uint32_t s;
        for (s = 0; s < STROBE__SHM_READERS && h->readers[s].pid != 0; s++)
            ;
        if (s < STROBE__SHM_READERS) {
            for (uint32_t i = 0; i < r->n; i++)
                att_close(r, &r->att[i], 1);
            ch = r->n > 0;
            r->n = 0;
            r->slot = s;
            h->readers[s].pid = r->pid;
            r->have_gen = 0;
        }
    }
    if (h->readers[r->slot].pid == r->pid)
        h->readers[r->slot].last_read_ns = now;
    /* a transaction since the last scan is writer activity as good as a
     * heartbeat */
    for (uint32_t i = 0; i < r->n; i++) {
        struct att *a = &r->att[i];
        struct strobe__shm_entry *e = &ix->ent[a->slot];
        uint64_t dgn = strobe_set_data_gn(a->set);
        if (dgn != a->data_gn && e->state == STROBE__SHM_ACTIVE && e->entry_gn == a->entry_gn) {
            a->data_gn = dgn;
            __atomic_store_n(&e->last_write_ns, now, __ATOMIC_RELAXED);
        }
    }
    unsigned bad = sweep(ix, now, r->timeout_ns);
    if (!r->have_gen || h->generation != r->gen)
        rc = rebuild(r, &ch, &bad);
    for (uint32_t i = 0; i < r->n; i++) {
        ix->ent[r->att[i].slot].last_read_ns = now;
        att_refresh_meta(&r->att[i]);
    }
    index_unlock(ix);
    if (changed)
        *changed = ch;
    if (rc < 0)
        return rc;
    return bad ? STROBE_ERR_FORMAT : 0;
}

STROBE_API uint32_t strobe_shm_reader_count(const strobe_shm_reader *r)
{
    return r ? r->n : 0;
}

STROBE_API strobe_set *strobe_shm_reader_set(const strobe_shm_reader *r, uint32_t i)
{
    return r && i < r->n ? r->att[i].set : NULL;
}

STROBE_API void strobe_shm_reader_close(strobe_shm_reader *r)
{
    if (!r)
        return;
    struct index *ix = &r->ix;
    int locked = index_lock(ix) == 0;
    for (uint32_t i = 0; i < r->n; i++)
        att_close(r, &r->att[i], locked);
    if (locked) {
        if (ix->hdr->readers[r->slot].pid == r->pid) {
            memset(&ix->hdr->readers[r->slot], 0, sizeof ix->hdr->readers[r->slot]);
            for (uint32_t e = 0; e < ix->cap; e++)
                ix->ent[e].reader_mask &= ~(1u << r->slot);
        }
        sweep(ix, mono_ns(), 0);
        index_unlink_if_unused(ix);
        index_unlock(ix);
    }
    index_close(ix);
    free(r->att);
    free(r->next);
    free(r);
}
