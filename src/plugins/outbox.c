/* SPDX-License-Identifier: MIT */
/*
 * The stores' outbox (outbox.h): batches queued on disk, delivered in
 * order by one sender thread.
 *
 * Invariants, under o->lock:
 *  - q[head .. head+n) are the batches on disk, oldest first, with strictly
 *    increasing sequence numbers; queued_bytes is the sum of their lengths;
 *  - while `busy`, q[head] is being sent (its file is read outside the
 *    lock) and nothing else removes it: put() drops the batches after it;
 *  - the sender sleeps while the queue is empty (until put() signals) and
 *    during a back-off (until its deadline or close()), never otherwise
 *    idle: one attempt per back-off interval while the server is down.
 * A batch file is written under a .tmp name and renamed, so a crash leaves
 * whole batches; open() removes .tmp leftovers. Files are not fsync()ed:
 * the queue survives a restart of strobed, not a power loss (the same as
 * the csv store's default).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/size.h"
#include "plugins/outbox.h"
#include "plugins/store_common.h"

struct entry {
    uint64_t seq, len;
};

struct strobe__outbox {
    const struct strobe_plugin_host *h;
    struct strobe__outbox_config c;
    strobe__send_fn send;
    void *ctx;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* put() and close() to the sender */
    pthread_cond_t drained; /* the sender to drain() */
    struct entry *q;
    size_t head, n, cap;
    uint64_t next_seq, queued_bytes;
    int busy, stop;
    struct strobe__outbox_stats st;
    /* delivery state, for one log line per change */
    int down;              /* the last attempt asked for a retry */
    uint64_t down_since;   /* monotonic ns of the first failed attempt */
    uint64_t backoff;      /* current back-off, 0 after a success */
    uint64_t retry_at;     /* monotonic ns of the next attempt while down */
    uint64_t peak_batches; /* most batches queued during the outage */
    uint64_t peak_bytes;
    uint64_t down_dropped; /* dropped_batches when the outage began */
    int refusing;          /* the last answer was a refusal */
    uint64_t refused_at;   /* refused_batches when refusals began */
    int dropping;          /* batches were dropped at the bound since the queue was last empty */
    uint64_t drop_from;    /* dropped_batches when dropping began */
    int disk_failing;      /* writing a batch failed; logged until one succeeds */
    char *buf;             /* the sender's read buffer */
    size_t bufcap;
};

uint64_t strobe__outbox_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* "1.2 MB", "512 B": sizes in the log */
static const char *human(uint64_t b, char *buf, size_t cap)
{
    if (b < 1000)
        snprintf(buf, cap, "%" PRIu64 " B", b);
    else if (b < 1000000)
        snprintf(buf, cap, "%.1f kB", (double)b / 1e3);
    else
        snprintf(buf, cap, "%.1f MB", (double)b / 1e6);
    return buf;
}

static void batch_path(const struct strobe__outbox *o, uint64_t seq, const char *ext, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%016" PRIx64 ".%s", o->c.dir, seq, ext);
}

/* ---- configuration ------------------------------------------------------------ */

int strobe__outbox_config_read(const struct strobe_plugin_host *h, struct strobe__outbox_config *c)
{
    memset(c, 0, sizeof *c);
    const char *dir = h->cfg_str(h, "queue_dir");
    const char *size = h->cfg_str(h, "queue_size");
    int rc;
    if ((rc = h->cfg_duration(h, "retry_min", 100000000u, &c->retry_min_ns)) < 0 ||
        (rc = h->cfg_duration(h, "retry_max", 30000000000u, &c->retry_max_ns)) < 0)
        return rc;
    if (c->retry_min_ns == 0)
        return h->cfg_error(h, "retry_min", "must be more than 0 (the first back-off)");
    if (c->retry_max_ns < c->retry_min_ns)
        return h->cfg_error(h, "retry_max", "must be at least retry_min");
    c->max_bytes = 64u << 20;
    if (size && (strobe__parse_size(size, &c->max_bytes) < 0 || c->max_bytes == 0))
        return h->cfg_error(h, "queue_size", "'%s' is not a size above 0 (e.g. 64M, 1G)", size);
    if (dir && !*dir)
        return h->cfg_error(h, "queue_dir", "is empty");
    const char *state = getenv("STATE_DIRECTORY"); /* systemd's StateDirectory= */
    int n = dir ? snprintf(c->dir, sizeof c->dir, "%s", dir)
                : snprintf(c->dir, sizeof c->dir, "%s/queue/%s", state && *state ? state : "/var/lib/strobe",
                           h->name);
    if (n < 0 || (size_t)n >= sizeof c->dir)
        return h->cfg_error(h, "queue_dir", "longer than %zu characters", sizeof c->dir - 1);
    return 0;
}

/* ---- the queue (o->lock held) --------------------------------------------------- */

static int q_push(struct strobe__outbox *o, uint64_t seq, uint64_t len)
{
    if (o->head + o->n == o->cap) {
        if (o->head) {
            memmove(o->q, o->q + o->head, o->n * sizeof *o->q);
            o->head = 0;
        } else {
            size_t cap = o->cap ? o->cap * 2 : 64;
            struct entry *v = realloc(o->q, cap * sizeof *v);
            if (!v)
                return -ENOMEM;
            o->q = v;
            o->cap = cap;
        }
    }
    o->q[o->head + o->n++] = (struct entry){seq, len};
    o->queued_bytes += len;
    return 0;
}

/* Removes q[head + k] (its file too) for k 0 or 1, keeping q[head] when k is 1. */
static void q_remove(struct strobe__outbox *o, size_t k)
{
    char path[1100];
    batch_path(o, o->q[o->head + k].seq, "batch", path, sizeof path);
    unlink(path);
    o->queued_bytes -= o->q[o->head + k].len;
    if (k)
        o->q[o->head + 1] = o->q[o->head];
    o->head++;
    if (!--o->n)
        o->head = 0;
}

static void q_pop(struct strobe__outbox *o)
{
    q_remove(o, 0);
}

/* Drops the oldest batch that is not being sent, for room; 0 when there is
 * none. */
static int drop_oldest(struct strobe__outbox *o)
{
    if (o->n <= (size_t)o->busy)
        return 0;
    q_remove(o, (size_t)o->busy);
    o->st.dropped_batches++;
    if (!o->dropping) {
        char b[32];
        o->h->log(o->h, STROBE_LOG_WARN,
                  "%s: queue full (%s, queue_size): dropping the oldest batches (counted) until it drains",
                  o->c.target, human(o->c.max_bytes, b, sizeof b));
        o->dropping = 1;
        o->drop_from = o->st.dropped_batches - 1;
    }
    return 1;
}

static void log_drained(struct strobe__outbox *o)
{
    if (o->n || !o->dropping)
        return;
    o->h->log(o->h, STROBE_LOG_INFO, "%s: queue drained; %" PRIu64 " batch(es) were dropped at its bound",
              o->c.target, o->st.dropped_batches - o->drop_from);
    o->dropping = 0;
}

/* ---- the sender ---------------------------------------------------------------- */

static void timed_wait(struct strobe__outbox *o, uint64_t until_mono)
{
    struct timespec ts = {(time_t)(until_mono / 1000000000u), (long)(until_mono % 1000000000u)};
    pthread_cond_timedwait(&o->wake, &o->lock, &ts);
}

/* Reads batch file e into o->buf: 0 or -errno. Outside the lock. */
static int read_batch(struct strobe__outbox *o, struct entry e)
{
    char path[1100];
    batch_path(o, e.seq, "batch", path, sizeof path);
    if (e.len > o->bufcap) {
        char *p = realloc(o->buf, e.len);
        if (!p)
            return -ENOMEM;
        o->buf = p;
        o->bufcap = e.len;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    int rc = 0;
    while (off < e.len) {
        ssize_t r = read(fd, o->buf + off, e.len - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -errno : -EIO;
            break;
        }
        off += (size_t)r;
    }
    close(fd);
    return rc;
}

/* The outcome of one attempt on the head batch: state changes, one line each. */
static void settle(struct strobe__outbox *o, enum strobe__send_result r, const char *why)
{
    char b[32];
    uint64_t now = strobe__outbox_now_ns();
    if (r == STROBE__SEND_RETRY) {
        o->st.retried++;
        if (!o->down) {
            o->down = 1;
            o->down_since = now;
            o->down_dropped = o->st.dropped_batches;
            o->peak_batches = o->n;
            o->peak_bytes = o->queued_bytes;
            o->h->log(o->h, STROBE_LOG_WARN, "%s unreachable (%s); queueing, retrying with back-off",
                      o->c.target, why);
        }
        o->backoff = o->backoff ? o->backoff * 2 : o->c.retry_min_ns;
        if (o->backoff > o->c.retry_max_ns)
            o->backoff = o->c.retry_max_ns;
        o->retry_at = now + o->backoff;
        return;
    }
    if (o->down) {
        o->h->log(o->h, STROBE_LOG_INFO,
                  "%s %s again after %.1f s; %" PRIu64 " batch(es) (%s) were queued, %" PRIu64 " dropped",
                  o->c.target, r == STROBE__SEND_OK ? "delivered" : "answering",
                  (double)(now - o->down_since) / 1e9, o->peak_batches, human(o->peak_bytes, b, sizeof b),
                  o->st.dropped_batches - o->down_dropped);
        o->down = 0;
    }
    o->backoff = 0;
    if (r == STROBE__SEND_REFUSED) {
        o->st.refused_batches++;
        if (!o->refusing) {
            o->h->log(o->h, STROBE_LOG_ERROR,
                      "%s refused a batch (%s); refused batches are dropped (counted)", o->c.target, why);
            o->refusing = 1;
            o->refused_at = o->st.refused_batches - 1;
        }
    } else {
        o->st.sent_batches++;
        if (o->refusing) {
            o->h->log(o->h, STROBE_LOG_INFO, "%s accepts batches again; %" PRIu64 " batch(es) were refused",
                      o->c.target, o->st.refused_batches - o->refused_at);
            o->refusing = 0;
        }
    }
    q_pop(o);
}

static void *sender(void *arg)
{
    struct strobe__outbox *o = arg;
    char why[512];
    pthread_mutex_lock(&o->lock);
    while (!o->stop) {
        if (!o->n) {
            pthread_cond_broadcast(&o->drained);
            pthread_cond_wait(&o->wake, &o->lock);
            continue;
        }
        if (o->down && strobe__outbox_now_ns() < o->retry_at) {
            timed_wait(o, o->retry_at);
            continue;
        }
        struct entry e = o->q[o->head];
        o->busy = 1;
        pthread_mutex_unlock(&o->lock);
        int rc = read_batch(o, e);
        enum strobe__send_result r = STROBE__SEND_REFUSED;
        why[0] = 0;
        if (rc == 0)
            r = o->send(o->ctx, o->buf, e.len, why, sizeof why);
        pthread_mutex_lock(&o->lock);
        o->busy = 0;
        if (rc < 0) {
            /* removed or cut behind our back: nothing to send */
            o->h->log(o->h, STROBE_LOG_ERROR, "%s: queued batch %016" PRIx64 ": %s; dropped", o->c.dir, e.seq,
                      strerror(-rc));
            o->st.dropped_batches++;
            q_pop(o);
        } else {
            settle(o, r, why[0] ? why : "no reason given");
        }
        log_drained(o);
    }
    pthread_mutex_unlock(&o->lock);
    return NULL;
}

/* ---- the API --------------------------------------------------------------------- */

static int cmp_entry(const void *a, const void *b)
{
    uint64_t x = ((const struct entry *)a)->seq, y = ((const struct entry *)b)->seq;
    return x < y ? -1 : x > y;
}

/* Picks up the batches a previous run left (and removes half-written ones). */
static int load(struct strobe__outbox *o)
{
    DIR *d = opendir(o->c.dir);
    if (!d)
        return -errno;
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        /* <16 hex digits>.batch or .tmp, nothing else is ours */
        const char *name = de->d_name, *ext = name + 17;
        if (strspn(name, "0123456789abcdef") != 16 || name[16] != '.' ||
            (strcmp(ext, "batch") != 0 && strcmp(ext, "tmp") != 0))
            continue;
        uint64_t seq = strtoull(name, NULL, 16);
        char path[1100];
        batch_path(o, seq, ext, path, sizeof path);
        struct stat st;
        if (!strcmp(ext, "tmp")) {
            unlink(path);
        } else if (!strcmp(ext, "batch") && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = q_push(o, seq, (uint64_t)st.st_size);
            if (seq >= o->next_seq)
                o->next_seq = seq + 1;
        }
    }
    closedir(d);
    if (rc == 0 && o->n)
        qsort(o->q + o->head, o->n, sizeof *o->q, cmp_entry);
    return rc;
}

int strobe__outbox_open(const struct strobe_plugin_host *h, const struct strobe__outbox_config *c,
                        strobe__send_fn send, void *ctx, struct strobe__outbox **out)
{
    struct strobe__outbox *o = calloc(1, sizeof *o);
    if (!o)
        return -ENOMEM;
    o->h = h;
    o->c = *c;
    if (!o->c.target)
        o->c.target = h->name;
    o->send = send;
    o->ctx = ctx;
    int rc = strobe__store_make_dir(c->dir);
    if (rc == 0)
        rc = load(o);
    if (rc < 0) {
        h->log(h, STROBE_LOG_ERROR, "queue_dir %s: %s", c->dir, strerror(-rc));
        free(o->q);
        free(o);
        return rc;
    }
    if (o->n) {
        char b[32];
        h->log(h, STROBE_LOG_INFO, "%s: %zu batch(es) (%s) queued in %s by an earlier run are sent first",
               o->c.target, o->n, human(o->queued_bytes, b, sizeof b), c->dir);
    }
    /* a smaller queue_size than last time: the oldest go now */
    while (o->queued_bytes > o->c.max_bytes && drop_oldest(o))
        ;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->wake, &ca);
    pthread_cond_init(&o->drained, &ca);
    pthread_condattr_destroy(&ca);
    if ((rc = -pthread_create(&o->thread, NULL, sender, o)) < 0) {
        pthread_cond_destroy(&o->wake);
        pthread_cond_destroy(&o->drained);
        pthread_mutex_destroy(&o->lock);
        free(o->q);
        free(o);
        return rc;
    }
    *out = o;
    return 0;
}

/* Writes the batch file for seq: 0 or -errno (nothing left behind). */
static int write_batch(struct strobe__outbox *o, uint64_t seq, const void *batch, size_t len)
{
    char tmp[1100], path[1100];
    batch_path(o, seq, "tmp", tmp, sizeof tmp);
    batch_path(o, seq, "batch", path, sizeof path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    int rc = 0;
    while (off < len) {
        ssize_t w = write(fd, (const char *)batch + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = w < 0 ? -errno : -EIO;
            break;
        }
        off += (size_t)w;
    }
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(tmp);
    return rc;
}

int strobe__outbox_put(struct strobe__outbox *o, const void *batch, size_t len)
{
    pthread_mutex_lock(&o->lock);
    int rc = 0;
    if (len > o->c.max_bytes) {
        o->st.dropped_batches++;
        char b[32], c[32];
        o->h->log(o->h, STROBE_LOG_ERROR, "%s: a batch of %s is larger than queue_size (%s): dropped",
                  o->c.target, human(len, b, sizeof b), human(o->c.max_bytes, c, sizeof c));
        rc = -EFBIG;
        goto out;
    }
    while (o->queued_bytes + len > o->c.max_bytes && drop_oldest(o))
        ;
    uint64_t seq = o->next_seq++;
    rc = write_batch(o, seq, batch, len);
    if (rc == 0)
        rc = q_push(o, seq, len);
    if (rc < 0) {
        o->st.dropped_batches++;
        if (!o->disk_failing)
            o->h->log(o->h, STROBE_LOG_ERROR,
                      "queue_dir %s: cannot write a batch: %s; batches are dropped (counted)", o->c.dir,
                      strerror(-rc));
        o->disk_failing = 1;
        goto out;
    }
    if (o->disk_failing) {
        o->h->log(o->h, STROBE_LOG_INFO, "queue_dir %s: writing batches again", o->c.dir);
        o->disk_failing = 0;
    }
    if (o->down && o->n > o->peak_batches) {
        o->peak_batches = o->n;
        o->peak_bytes = o->queued_bytes;
    }
    pthread_cond_signal(&o->wake);
out:
    pthread_mutex_unlock(&o->lock);
    return rc;
}

int strobe__outbox_drain(struct strobe__outbox *o, uint64_t timeout_ns)
{
    uint64_t until = strobe__outbox_now_ns() + timeout_ns;
    pthread_mutex_lock(&o->lock);
    while (o->n && strobe__outbox_now_ns() < until) {
        struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
        pthread_cond_timedwait(&o->drained, &o->lock, &ts);
    }
    int rc = o->n ? -ETIMEDOUT : 0;
    pthread_mutex_unlock(&o->lock);
    return rc;
}

void strobe__outbox_stats(struct strobe__outbox *o, struct strobe__outbox_stats *s)
{
    pthread_mutex_lock(&o->lock);
    *s = o->st;
    s->queued_batches = o->n;
    s->queued_bytes = o->queued_bytes;
    pthread_mutex_unlock(&o->lock);
}

void strobe__outbox_close(struct strobe__outbox *o)
{
    if (!o)
        return;
    pthread_mutex_lock(&o->lock);
    o->stop = 1;
    pthread_cond_signal(&o->wake);
    pthread_mutex_unlock(&o->lock);
    pthread_join(o->thread, NULL);
    pthread_cond_destroy(&o->wake);
    pthread_cond_destroy(&o->drained);
    pthread_mutex_destroy(&o->lock);
    free(o->q);
    free(o->buf);
    free(o);
}
