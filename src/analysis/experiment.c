/* SPDX-License-Identifier: MIT */
/*
 * Loads an experiment directory into the model of experiment.h: meta,
 * every process's definitions (unified across processes after symbol
 * resolution), threads with their stream statistics, and the clock fit of
 * each process. Also the per-thread event iterator, which maps process-
 * local ids to global ones and closes regions left open by a killed
 * thread. Everything is validated once here, so reports and exporters see
 * only consistent data.
 */
#define _GNU_SOURCE /* asprintf */
#include "analysis/experiment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/align.h"
#include "analysis/decode.h"
#include "analysis/keymap.h"
#include "analysis/select.h"
#include "analysis/symbols.h"
#include "strobe/strobe.h"
#include "strobe/tm.h"

/* ---- files ------------------------------------------------------------- */

struct mapped {
    const uint8_t *buf;
    size_t len;
};

static int map_file(const char *path, const char *shown, struct mapped *m, struct strobe_errbuf *eb)
{
    m->buf = NULL;
    m->len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return strobe__error(eb, -errno, "%s: %s", shown, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISREG(st.st_mode) ? errno : EINVAL;
        close(fd);
        return strobe__error(eb, -e, "%s: %s", shown, e == EINVAL ? "not a regular file" : strerror(e));
    }
    if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return strobe__error(eb, -e, "%s: %s", shown, strerror(e));
        }
        madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
        m->buf = p;
        m->len = (size_t)st.st_size;
    }
    close(fd);
    return 0;
}

static void unmap_file(struct mapped *m)
{
    if (m->buf)
        munmap((void *)m->buf, m->len);
    m->buf = NULL;
}

int strobe__file_map(const char *path, const char *shown, const uint8_t **buf, size_t *len,
                     struct strobe_errbuf *eb)
{
    struct mapped m;
    int rc = map_file(path, shown, &m, eb);
    *buf = m.buf;
    *len = m.len;
    return rc;
}

void strobe__file_unmap(const uint8_t *buf, size_t len)
{
    struct mapped m = { buf, len };
    unmap_file(&m);
}

static char *join(const char *a, const char *b)
{
    char *s;
    return asprintf(&s, "%s/%s", a, b) < 0 ? NULL : s;
}

const char *strobe__shown_path(const struct strobe_experiment *exp, const char *path)
{
    size_t n = strlen(exp->dir);
    return strncmp(path, exp->dir, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

int strobe__process_defs(const struct strobe_experiment *exp, uint32_t p, struct strobe__defs *d,
                         struct strobe_errbuf *eb)
{
    char *pdir = join(exp->dir, exp->processes[p].dir), *path = pdir ? join(pdir, "defs") : NULL;
    char *shown = join(exp->processes[p].dir, "defs");
    const uint8_t *buf = NULL;
    size_t len = 0;
    int rc = path && shown ? strobe__file_map(path, shown, &buf, &len, eb) : -ENOMEM;
    if (rc == 0) {
        rc = strobe__defs_decode(buf, len, shown, d, eb);
        strobe__file_unmap(buf, len);
    }
    free(pdir);
    free(path);
    free(shown);
    return rc;
}

/* ---- clock ------------------------------------------------------------- */

uint64_t strobe_ticks_to_ns(const struct strobe_experiment *exp, uint32_t process, uint64_t ticks)
{
    const struct strobe_process_info *p = &exp->processes[process];
    /* long double keeps ns exact for monotonic clocks and TSC fits alike */
    long double ns = (long double)p->base_ns +
                     (long double)(int64_t)(ticks - p->base_ticks) * (long double)p->ns_per_tick -
                     (long double)exp->origin_ns;
    return ns <= 0 ? 0 : (uint64_t)(ns + 0.5L);
}

/* Unrounded, origin-free conversion used while the origin is computed. */
static long double raw_ns(const struct strobe_process_info *p, uint64_t ticks)
{
    return (long double)p->base_ns + (long double)(int64_t)(ticks - p->base_ticks) * (long double)p->ns_per_tick;
}

/* Least-squares line through the sync points, anchored at the first. */
static int fit_clock(struct strobe_process_info *p, const struct strobe__defs *d, const char *name,
                     struct strobe_errbuf *eb)
{
    p->clock_kind = (int)d->clock_kind;
    /* Monotonic ticks are ns: the sync points lie on ns = ticks, unless the
     * test hooks of the runtime (STROBE_TEST_CLOCK_*) moved them, so they
     * are fitted like the TSC's when there are two. */
    if (d->clock_kind == STROBE_CLOCK_MONOTONIC && d->nsyncs < 2) {
        p->base_ticks = d->nsyncs ? d->syncs[0].ticks : 0;
        p->base_ns = d->nsyncs ? (double)d->syncs[0].ns : 0;
        p->ns_per_tick = 1.0;
        return 0;
    }
    if (d->nsyncs == 0)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: no CLOCK_SYNC record; ticks cannot be converted", name);
    const struct strobe__sync *s0 = &d->syncs[0];
    long double sxy = 0, sxx = 0;
    for (size_t i = 1; i < d->nsyncs; i++) {
        long double dx = (long double)(int64_t)(d->syncs[i].ticks - s0->ticks);
        long double dy = (long double)(int64_t)(d->syncs[i].ns - s0->ns);
        sxy += dx * dy;
        sxx += dx * dx;
    }
    if (sxx == 0 || sxy <= 0)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: clock sync points do not span any time; ticks cannot be converted", name);
    p->base_ticks = s0->ticks;
    p->base_ns = (double)s0->ns;
    p->ns_per_tick = (double)(sxy / sxx);
    return 0;
}

/* ---- definitions ------------------------------------------------------- */

struct loader {
    struct strobe_experiment *exp;
    struct strobe__keymap regions, metrics;
    struct strobe_errbuf *eb;
    /* per exp->tm_counts[i] until its block is resolved: process, site */
    uint32_t *counts_process;
    uint64_t *counts_site;
};

static int unify_region(struct loader *L, const char *name, const char *file, unsigned line, const char *module,
                        uint64_t rel, int kind, uint32_t *out)
{
    struct strobe_experiment *exp = L->exp;
    size_t nl = strlen(name), fl = strlen(file), ml = strlen(module);
    char *key = malloc(nl + fl + ml + 16);
    if (!key)
        return -ENOMEM;
    size_t k = 0;
    memcpy(key + k, name, nl + 1), k += nl + 1;
    memcpy(key + k, file, fl + 1), k += fl + 1;
    memcpy(key + k, &line, sizeof line), k += sizeof line;
    memcpy(key + k, module, ml + 1), k += ml + 1;
    uint32_t id = (uint32_t)exp->nregions;
    int rc = strobe__keymap_get_or_put(&L->regions, key, k, &id);
    free(key);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if ((exp->nregions & (exp->nregions - 1)) == 0) {
            size_t cap = exp->nregions ? exp->nregions * 2 : 1;
            void *p = realloc(exp->regions, cap * sizeof *exp->regions);
            if (!p)
                return -ENOMEM;
            exp->regions = p;
        }
        struct strobe_region_def *r = &exp->regions[exp->nregions];
        *r = (struct strobe_region_def){ strdup(name), strdup(file), line, strdup(module), rel, kind };
        exp->nregions++;
        if (!r->name || !r->file || !r->module)
            return -ENOMEM;
    }
    *out = id;
    return 0;
}

static int unify_metric(struct loader *L, const char *name, const char *unit, uint32_t *out)
{
    struct strobe_experiment *exp = L->exp;
    size_t nl = strlen(name), ul = strlen(unit);
    char *key = malloc(nl + ul + 2);
    if (!key)
        return -ENOMEM;
    memcpy(key, name, nl + 1);
    memcpy(key + nl + 1, unit, ul + 1);
    uint32_t id = (uint32_t)exp->nmetrics;
    int rc = strobe__keymap_get_or_put(&L->metrics, key, nl + ul + 2, &id);
    free(key);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if ((exp->nmetrics & (exp->nmetrics - 1)) == 0) {
            size_t cap = exp->nmetrics ? exp->nmetrics * 2 : 1;
            void *p = realloc(exp->metrics, cap * sizeof *exp->metrics);
            if (!p)
                return -ENOMEM;
            exp->metrics = p;
        }
        struct strobe_metric_def *m = &exp->metrics[exp->nmetrics++];
        m->name = strdup(name);
        m->unit = strdup(unit);
        if (!m->name || !m->unit)
            return -ENOMEM;
    }
    *out = id;
    return 0;
}

/* Fills the process's local->global maps from its definitions. */
static int load_ids(struct loader *L, struct strobe_process_info *p, const struct strobe__defs *d)
{
    size_t rlen = 0, mlen = 0;
    for (size_t i = 0; i < d->nregions; i++)
        if (d->regions[i].id + 1 > rlen)
            rlen = d->regions[i].id + 1;
    for (size_t i = 0; i < d->nmetrics; i++)
        if (d->metrics[i].id + 1 > mlen)
            mlen = d->metrics[i].id + 1;
    p->region_map = malloc((rlen ? rlen : 1) * sizeof *p->region_map);
    p->metric_map = malloc((mlen ? mlen : 1) * sizeof *p->metric_map);
    struct strobe__resolved *res = calloc(d->nregions ? d->nregions : 1, sizeof *res);
    if (!p->region_map || !p->metric_map || !res) {
        free(res);
        return -ENOMEM;
    }
    p->region_map_len = rlen;
    p->metric_map_len = mlen;
    memset(p->region_map, 0xff, rlen * sizeof *p->region_map);
    memset(p->metric_map, 0xff, mlen * sizeof *p->metric_map);
    int rc = strobe__symbols_resolve(d, res);
    for (size_t i = 0; i < d->nregions && rc == 0; i++) {
        const struct strobe__local_region *r = &d->regions[i];
        if (strobe_region_kind_is_code((unsigned)r->kind) && r->address)
            rc = unify_region(L, res[i].name, res[i].file, res[i].line, res[i].module, res[i].rel, r->kind,
                              &p->region_map[r->id]);
        else
            rc = unify_region(L, r->name, r->file, r->line, "", 0, r->kind, &p->region_map[r->id]);
    }
    for (size_t i = 0; i < d->nregions; i++)
        strobe__resolved_free(&res[i]);
    free(res);
    for (size_t i = 0; i < d->nmetrics && rc == 0; i++)
        rc = unify_metric(L, d->metrics[i].name, d->metrics[i].unit, &p->metric_map[d->metrics[i].id]);
    return rc;
}

/* ---- directory scan ---------------------------------------------------- */

struct proc_entry {
    char *dir;
    struct strobe__defs defs;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Parses "t<N>.evt" / "t<N>.prof"; returns 1 = evt, 2 = prof, 0 = other. */
static int thread_file(const char *name, uint32_t *index)
{
    if (name[0] != 't' || name[1] < '0' || name[1] > '9')
        return 0;
    uint64_t n = 0;
    const char *p = name + 1;
    for (; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (uint64_t)(*p - '0');
        if (n > UINT32_MAX - 1)
            return 0;
    }
    if (p - name > 2 && name[1] == '0')
        return 0; /* no leading zeros: one name per index */
    *index = (uint32_t)n;
    if (strcmp(p, ".evt") == 0)
        return 1;
    if (strcmp(p, ".prof") == 0)
        return 2;
    return 0;
}

static int list_dir(const char *path, char ***names, size_t *n, struct strobe_errbuf *eb)
{
    DIR *dir = opendir(path);
    if (!dir)
        return strobe__error(eb, -errno, "%s: %s", path, strerror(errno));
    struct dirent *de;
    int rc = 0;
    *names = NULL;
    *n = 0;
    size_t cap = 0;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **p = realloc(*names, cap * sizeof *p);
            if (!p) {
                rc = -ENOMEM;
                break;
            }
            *names = p;
        }
        if (!((*names)[(*n)++] = strdup(de->d_name))) {
            rc = -ENOMEM;
            break;
        }
    }
    closedir(dir);
    if (rc == 0 && *n) /* an empty directory leaves *names NULL: qsort must not see it */
        qsort(*names, *n, sizeof **names, cmp_str);
    return rc ? strobe__error(eb, rc, "%s: out of memory", path) : 0;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int add_thread(struct strobe_experiment *exp, uint32_t process, uint32_t index, struct strobe_thread_info **out)
{
    for (size_t i = 0; i < exp->nthreads; i++)
        if (exp->threads[i].process == process && exp->threads[i].index == index) {
            *out = &exp->threads[i];
            return 0;
        }
    if ((exp->nthreads & (exp->nthreads - 1)) == 0) {
        size_t cap = exp->nthreads ? exp->nthreads * 2 : 1;
        void *p = realloc(exp->threads, cap * sizeof *exp->threads);
        if (!p)
            return -ENOMEM;
        exp->threads = p;
    }
    struct strobe_thread_info *t = &exp->threads[exp->nthreads++];
    memset(t, 0, sizeof *t);
    t->process = process;
    t->index = index;
    t->parent = STROBE_NONE;
    *out = t;
    return 0;
}

static int cmp_thread(const void *a, const void *b)
{
    const struct strobe_thread_info *x = a, *y = b;
    if (x->process != y->process)
        return x->process < y->process ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static uint32_t global_thread(const struct strobe_experiment *exp, uint32_t process, uint64_t index)
{
    for (size_t i = 0; i < exp->nthreads; i++)
        if (exp->threads[i].process == process && exp->threads[i].index == index)
            return (uint32_t)i;
    return STROBE_NONE;
}

/* Path of a file relative to the experiment, for messages. */
static const char *shown_path(const struct strobe_experiment *exp, const char *path)
{
    size_t n = strlen(exp->dir);
    if (strncmp(path, exp->dir, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

/* Validates the ids a decoded event refers to. */
static int check_ids(const struct strobe_experiment *exp, const struct strobe_process_info *p,
                     const struct strobe__raw_event *ev, const char *name, struct strobe_errbuf *eb)
{
    if (ev->kind == STROBE__RAW_ENTER || ev->kind == STROBE__RAW_INHERIT) {
        if (ev->region >= p->region_map_len || p->region_map[ev->region] == STROBE_NONE)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: region id %llu not defined in %s/defs",
                                 name, (unsigned long long)ev->offset, (unsigned long long)ev->region, p->dir);
    } else if (ev->kind == STROBE__RAW_METRIC) {
        if (ev->id >= p->metric_map_len || p->metric_map[ev->id] == STROBE_NONE)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: metric id %llu not defined in %s/defs",
                                 name, (unsigned long long)ev->offset, (unsigned long long)ev->id, p->dir);
    }
    (void)exp;
    return 0;
}

/* Keeps a COUNTS record (its block is resolved after every stream is read,
 * resolve_counts). */
static int add_counts(struct loader *L, const struct strobe_thread_info *t, const struct strobe__tm_counts *k,
                      const char *name, uint64_t offset)
{
    struct strobe_experiment *exp = L->exp;
    uint32_t thread = global_thread(exp, t->process, k->thread);
    if (thread == STROBE_NONE)
        return strobe__error(L->eb, STROBE_ERR_FORMAT,
                             "%s: offset %llu: TM COUNTS record names thread t%llu, which has no file in %s",
                             name, (unsigned long long)offset, (unsigned long long)k->thread,
                             exp->processes[t->process].dir);
    size_t n = exp->ntm_counts;
    if ((n & (n - 1)) == 0) {
        size_t cap = n ? n * 2 : 1;
        void *a = realloc(exp->tm_counts, cap * sizeof *exp->tm_counts);
        if (a)
            exp->tm_counts = a;
        void *b = realloc(L->counts_process, cap * sizeof *L->counts_process);
        if (b)
            L->counts_process = b;
        void *c = realloc(L->counts_site, cap * sizeof *L->counts_site);
        if (c)
            L->counts_site = c;
        if (!a || !b || !c)
            return strobe__error(L->eb, -ENOMEM, "%s: out of memory", name);
    }
    struct strobe_tm_counts *o = &exp->tm_counts[n];
    *o = (struct strobe_tm_counts){
        .thread = thread,
        .block = STROBE_NONE,
        .counts = {.transactions = k->transactions, .rollbacks = k->rollbacks, .cancels = k->cancels}};
    memcpy(o->counts.serialized, k->serialized, sizeof o->counts.serialized);
    memcpy(o->counts.aborts, k->aborts, sizeof o->counts.aborts);
    L->counts_process[n] = t->process;
    L->counts_site[n] = k->site;
    exp->ntm_counts++;
    return 0;
}

/* Maps t's stream and positions a decoder on its first record, checking
 * the header names t; sets begin_ns (origin applied later). */
static int open_stream(struct loader *L, struct strobe_thread_info *t, struct mapped *m,
                       struct strobe__stream_decoder *d)
{
    struct strobe_experiment *exp = L->exp;
    const char *name = shown_path(exp, t->stream_path);
    int rc = map_file(t->stream_path, name, m, L->eb);
    if (rc)
        return rc;
    if ((rc = strobe__stream_begin(d, m->buf, m->len, name, L->eb)) == 0 && d->hdr.thread_index != t->index) {
        strobe__stream_end(d);
        rc = strobe__error(L->eb, STROBE_ERR_FORMAT, "%s: offset 20: header names thread %u", name,
                           d->hdr.thread_index);
    }
    if (rc) {
        unmap_file(m);
        return rc;
    }
    t->begin_ns = (uint64_t)raw_ns(&exp->processes[t->process], d->hdr.start_ticks);
    t->limit_bytes = d->hdr.limit_bytes;
    t->ring = d->ring;
    t->window_ns = d->ring && d->norder ? (uint64_t)raw_ns(&exp->processes[t->process], d->ring_first_ticks)
                                        : t->begin_ns;
    t->overwritten_chunks = d->ring && d->norder ? d->ring_first_seq - 1 : 0;
    return 0;
}

/* One pass over a stream: counts, time span, thread facts, id checks, TM
 * COUNTS records. */
static int scan_stream(struct loader *L, struct strobe_thread_info *t, uint64_t *done, uint64_t total,
                       void (*progress)(uint64_t, uint64_t, void *), void *arg)
{
    struct strobe_experiment *exp = L->exp;
    struct strobe_errbuf *eb = L->eb;
    const struct strobe_process_info *p = &exp->processes[t->process];
    const char *name = shown_path(exp, t->stream_path);
    struct mapped m;
    struct strobe__stream_decoder d;
    int rc = open_stream(L, t, &m, &d);
    if (rc)
        return rc;
    t->dropped = d.hdr.dropped;
    uint64_t last_ticks = d.hdr.start_ticks, next_progress = 1u << 24;
    struct strobe__raw_event ev;
    while (rc == 0 && (rc = strobe__stream_decode(&d, &ev, eb)) == 1) {
        rc = check_ids(exp, p, &ev, name, eb);
        t->events += !ev.synthetic;
        t->bytes += d.pos - ev.offset;
        last_ticks = ev.ticks;
        if (ev.kind == STROBE__RAW_THREAD_BEGIN) {
            t->tid = ev.tid;
            /* parent index + 1 in the payload; resolved to global later */
            t->parent = ev.parent ? (uint32_t)(ev.parent - 1) : STROBE_NONE;
        } else if (ev.kind == STROBE__RAW_THREAD_END) {
            t->ended = true;
            t->has_rusage = true;
            t->rusage = ev.rusage;
        } else if (ev.kind == STROBE__RAW_TM && ev.id == STROBE_TM_LOGGING) {
            exp->tm_logging = true;
        } else if (ev.kind == STROBE__RAW_TM_COUNTS && rc == 0) {
            rc = add_counts(L, t, &d.counts, name, ev.offset);
        }
        if (progress && d.pos >= next_progress) {
            progress(*done + d.pos, total, arg);
            next_progress = d.pos + (1u << 24);
        }
    }
    t->end_ns = (uint64_t)raw_ns(p, last_ticks);
    *done += m.len;
    strobe__stream_end(&d);
    unmap_file(&m);
    return rc < 0 ? rc : 0;
}

/* What the runtime recorded of thread t (THREAD_SUMMARY and OPEN_FRAMES
 * in its process's defs), instead of decoding its stream: the stream is
 * opened only for the records written at process exit (TM COUNTS), when
 * the summary says there are some. */
static int load_summary(struct loader *L, struct strobe_thread_info *t, const struct strobe__defs *d,
                        const struct strobe__thread_summary *s)
{
    struct strobe_experiment *exp = L->exp;
    struct strobe_errbuf *eb = L->eb;
    const struct strobe_process_info *p = &exp->processes[t->process];
    t->summarized = true;
    t->tid = s->tid;
    t->parent = s->parent ? (uint32_t)(s->parent - 1) : STROBE_NONE; /* resolved to global later */
    t->begin_ns = (uint64_t)raw_ns(p, s->begin_ticks);               /* origin applied later */
    t->ended = s->how == STROBE_THREAD_ENDED;
    t->at_exit = s->how == STROBE_THREAD_AT_EXIT;
    t->events = s->events;
    t->bytes = s->bytes;
    t->dropped = s->dropped;
    t->limit_bytes = s->limit;
    t->has_rusage = s->has_rusage;
    t->rusage = s->rusage;
    t->end_ns = (uint64_t)raw_ns(p, s->end_ticks); /* origin applied later */
    if (s->depth && !(t->open = calloc(s->depth, sizeof *t->open)))
        return strobe__error(eb, -ENOMEM, "%s: out of memory", exp->dir);
    for (size_t i = 0; i < d->nopen; i++) {
        const struct strobe__open_frame *f = &d->open[i];
        if (f->thread != t->index)
            continue;
        if (f->region >= p->region_map_len || p->region_map[f->region] == STROBE_NONE)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s/defs: OPEN_FRAMES of t%u: region id %llu not defined",
                                 p->dir, t->index, (unsigned long long)f->region);
        t->open[f->depth] = (struct strobe_open_frame){
            .region = p->region_map[f->region],
            .slot = f->slot_plus1 ? (uint32_t)(f->slot_plus1 - 1) : STROBE_NONE,
            .start_ns = (uint64_t)raw_ns(p, f->start_ticks)};
        if (f->depth + 1 > t->nopen)
            t->nopen = f->depth + 1;
    }
    if (t->nopen != s->depth)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s/defs: t%u has %llu frames open at its end but %zu are listed",
                             p->dir, t->index, (unsigned long long)s->depth, t->nopen);
    t->overwritten = s->overwritten;
    /* a ring is opened for where its window begins (its chunks' first
     * records only) */
    if (!t->stream_path || (!s->tail_offset && !s->ring))
        return 0;
    const char *name = shown_path(exp, t->stream_path);
    struct mapped m;
    struct strobe__stream_decoder dec;
    uint64_t begin_ns = t->begin_ns;
    int rc = open_stream(L, t, &m, &dec);
    t->begin_ns = begin_ns; /* the summary's */
    if (rc)
        return rc;
    struct strobe__raw_event ev;
    if (s->tail_offset && (rc = strobe__stream_seek(&dec, s->tail_offset, eb)) == 0)
        while ((rc = strobe__stream_decode(&dec, &ev, eb)) == 1)
            if (ev.kind == STROBE__RAW_TM_COUNTS && (rc = add_counts(L, t, &dec.counts, name, ev.offset)))
                break;
    strobe__stream_end(&dec);
    unmap_file(&m);
    return rc < 0 ? rc : 0;
}

/* The process's MALLOC records into the model (experiment.h). */
static int load_malloc(struct loader *L, uint32_t pi, const struct strobe__defs *d)
{
    struct strobe_experiment *exp = L->exp;
    struct strobe_process_info *p = &exp->processes[pi];
    p->malloc = (struct strobe_malloc_info){.on = d->malloc_on,
                                            .large = d->malloc_large,
                                            .summarized = d->malloc_summary,
                                            .peak_bytes = d->malloc_peak,
                                            .live_bytes = d->malloc_live_bytes,
                                            .live_blocks = d->malloc_live_blocks,
                                            .untracked = d->malloc_untracked};
    if (d->malloc_peak)
        p->malloc.peak_ns = strobe_ticks_to_ns(exp, pi, d->malloc_peak_ticks);
    if (!d->nmalloc_live)
        return 0;
    void *grown = realloc(exp->malloc_live, (exp->nmalloc_live + d->nmalloc_live) * sizeof *exp->malloc_live);
    if (!grown)
        return -ENOMEM;
    exp->malloc_live = grown;
    for (size_t i = 0; i < d->nmalloc_live; i++) {
        const struct strobe__malloc_live *l = &d->malloc_live[i];
        uint32_t t = global_thread(exp, pi, l->thread);
        if (t == STROBE_NONE || (l->slot_plus1 && !exp->threads[t].profile_path))
            return strobe__error(L->eb, STROBE_ERR_FORMAT, "%s/defs: MALLOC LIVE record names thread t%llu%s, which has no %s file",
                                 p->dir, (unsigned long long)l->thread, l->slot_plus1 ? " and a profile slot" : "",
                                 t == STROBE_NONE ? "t<N>" : "t<N>.prof");
        exp->malloc_live[exp->nmalloc_live++] =
            (struct strobe_malloc_live){t, l->slot_plus1 ? (uint32_t)(l->slot_plus1 - 1) : STROBE_NONE, l->blocks, l->bytes};
    }
    return 0;
}

/* The process's MPI_COMM records into exp->mpi_comms: a communicator's id
 * is global, so the first process defining it describes it. */
static int load_mpi_comms(struct strobe_experiment *exp, struct strobe__defs *d)
{
    for (size_t i = 0; i < d->nmpi_comms; i++) {
        struct strobe__mpi_comm *c = &d->mpi_comms[i];
        bool known = false;
        for (size_t k = 0; k < exp->nmpi_comms && !known; k++)
            known = exp->mpi_comms[k].id == c->id;
        if (known)
            continue;
        void *grown = realloc(exp->mpi_comms, (exp->nmpi_comms + 1) * sizeof *exp->mpi_comms);
        if (!grown)
            return -ENOMEM;
        exp->mpi_comms = grown;
        exp->mpi_comms[exp->nmpi_comms++] = (struct strobe_mpi_comm){.id = c->id,
                                                                     .size = (uint32_t)c->size,
                                                                     .inter = c->flags & 1,
                                                                     .members = c->members,
                                                                     .nmembers = c->nmembers};
        c->members = NULL; /* moved */
    }
    return 0;
}

static const struct strobe__thread_summary *find_summary(const struct strobe__defs *d, uint32_t index)
{
    for (size_t i = 0; i < d->nsummaries; i++)
        if (d->summaries[i].index == index)
            return &d->summaries[i];
    return NULL;
}

/* Gives every COUNTS record its atomic block: the region its process
 * defined at the same address (levels stats and events), else a region of
 * kind TM_ATOMIC made here and resolved like one (level counters). */
static int resolve_counts(struct loader *L, const struct proc_entry *procs)
{
    struct strobe_experiment *exp = L->exp;
    struct strobe__local_region *sites = NULL;
    struct strobe__resolved *res = NULL;
    int rc = 0;
    if (exp->ntm_counts && !(sites = calloc(exp->ntm_counts, sizeof *sites)))
        return -ENOMEM;
    for (uint32_t pi = 0; pi < exp->nprocesses && rc == 0; pi++) {
        const struct strobe__defs *d = &procs[pi].defs;
        struct strobe_process_info *p = &exp->processes[pi];
        size_t nsites = 0;
        for (size_t i = 0; i < exp->ntm_counts; i++) {
            if (L->counts_process[i] != pi)
                continue;
            for (size_t r = 0; r < d->nregions && exp->tm_counts[i].block == STROBE_NONE; r++)
                if (d->regions[r].kind == STROBE_REGION_TM_ATOMIC &&
                    d->regions[r].address == L->counts_site[i])
                    exp->tm_counts[i].block = p->region_map[d->regions[r].id];
            size_t k = 0;
            while (k < nsites && sites[k].address != L->counts_site[i])
                k++;
            if (exp->tm_counts[i].block == STROBE_NONE && k == nsites)
                sites[nsites++] = (struct strobe__local_region){.kind = STROBE_REGION_TM_ATOMIC,
                                                                .address = L->counts_site[i]};
        }
        if (nsites == 0)
            continue;
        /* the process's modules, borrowed: only the symbols are resolved */
        struct strobe__defs tmp = {
            .modules = d->modules, .nmodules = d->nmodules, .regions = sites, .nregions = nsites};
        uint32_t *ids = calloc(nsites, sizeof *ids);
        if (!ids || !(res = calloc(nsites, sizeof *res))) {
            free(ids);
            rc = -ENOMEM;
            break;
        }
        rc = strobe__symbols_resolve(&tmp, res);
        for (size_t k = 0; k < nsites && rc == 0; k++)
            rc = unify_region(L, res[k].name, res[k].file, res[k].line, res[k].module, res[k].rel,
                              STROBE_REGION_TM_ATOMIC, &ids[k]);
        for (size_t i = 0; i < exp->ntm_counts && rc == 0; i++)
            for (size_t k = 0;
                 k < nsites && L->counts_process[i] == pi && exp->tm_counts[i].block == STROBE_NONE; k++)
                if (sites[k].address == L->counts_site[i])
                    exp->tm_counts[i].block = ids[k];
        for (size_t k = 0; k < nsites; k++)
            strobe__resolved_free(&res[k]);
        free(res);
        res = NULL;
        free(ids);
    }
    free(sites);
    return rc;
}

/* exp->tm and tm_level from meta, else from what was recorded (see
 * experiment.h). had_blocks: a defs file defined an atomic-block region. */
static void tm_level(struct strobe_experiment *exp, bool had_blocks)
{
    static const char *const levels[] = {"off", "counters", "stats", "events"}; /* enum strobe_tm_monitor */
    const char *tm = strobe_experiment_meta(exp, "tm"), *level = strobe_experiment_meta(exp, "tm_monitor");
    for (int k = 0; level && k < (int)(sizeof levels / sizeof levels[0]); k++)
        if (strcmp(level, levels[k]) == 0) {
            exp->tm = true;
            exp->tm_level = k;
            return;
        }
    exp->tm_level_inferred = true;
    exp->tm_level = exp->tm_logging   ? STROBE_TM_MONITOR_EVENTS
                    : had_blocks      ? STROBE_TM_MONITOR_STATS
                    : exp->ntm_counts ? STROBE_TM_MONITOR_COUNTERS
                                      : STROBE_TM_MONITOR_OFF;
    exp->tm = (tm && strcmp(tm, "1") == 0) || exp->tm_logging || had_blocks || exp->ntm_counts;
}

static int load_process(struct loader *L, const char *dirname, struct strobe__defs *defs)
{
    struct strobe_experiment *exp = L->exp;
    char *pdir = join(exp->dir, dirname), *defs_path = pdir ? join(pdir, "defs") : NULL;
    char *shown = defs_path ? join(dirname, "defs") : NULL;
    int rc = (pdir && defs_path && shown) ? 0 : -ENOMEM;
    struct mapped m = { 0 };
    if (rc == 0 && (rc = map_file(defs_path, shown, &m, L->eb)) == 0) {
        rc = strobe__defs_decode(m.buf, m.len, shown, defs, L->eb);
        unmap_file(&m);
    }
    free(defs_path);
    free(shown);
    free(pdir);
    return rc;
}

/* Ranks first, by rank: every report and export then lists them in
 * rank order without sorting again; the other processes (a measured
 * launcher, tools) by start time. */
static int cmp_proc(const void *a, const void *b)
{
    const struct proc_entry *x = a, *y = b;
    if (x->defs.have_rank != y->defs.have_rank)
        return x->defs.have_rank ? -1 : 1;
    if (x->defs.have_rank && x->defs.rank != y->defs.rank)
        return x->defs.rank < y->defs.rank ? -1 : 1;
    if (x->defs.realtime_ns != y->defs.realtime_ns)
        return x->defs.realtime_ns < y->defs.realtime_ns ? -1 : 1;
    if (x->defs.pid != y->defs.pid)
        return x->defs.pid < y->defs.pid ? -1 : 1;
    return strcmp(x->dir, y->dir);
}

static int load_meta(struct strobe_experiment *exp, struct strobe_errbuf *eb)
{
    char *path = join(exp->dir, "meta");
    if (!path)
        return -ENOMEM;
    struct mapped m;
    int rc = 0;
    if (access(path, F_OK) == 0 && (rc = map_file(path, path, &m, eb)) == 0) {
        rc = strobe__meta_parse((const char *)m.buf, m.len, path, &exp->meta_keys, &exp->meta_values, &exp->nmeta,
                                eb);
        unmap_file(&m);
    }
    free(path);
    return rc;
}

static int load(struct loader *L, void (*progress)(uint64_t, uint64_t, void *), void *arg)
{
    struct strobe_experiment *exp = L->exp;
    struct strobe_errbuf *eb = L->eb;
    struct stat st;
    if (stat(exp->dir, &st) != 0)
        return strobe__error(eb, -errno, "%s: %s", exp->dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return strobe__error(eb, -ENOTDIR, "%s: not an experiment directory", exp->dir);
    int rc = load_meta(exp, eb);
    if (rc)
        return rc;

    char **names;
    size_t nnames;
    if ((rc = list_dir(exp->dir, &names, &nnames, eb)))
        return rc;
    struct proc_entry *procs = calloc(nnames ? nnames : 1, sizeof *procs);
    size_t nprocs = 0;
    if (!procs)
        rc = -ENOMEM;
    for (size_t i = 0; i < nnames && rc == 0; i++) {
        if (strncmp(names[i], "proc-", 5) != 0)
            continue;
        procs[nprocs].dir = names[i];
        names[i] = NULL;
        rc = load_process(L, procs[nprocs].dir, &procs[nprocs].defs);
        nprocs++;
    }
    free_names(names, nnames);
    if (rc == 0 && nprocs == 0)
        rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: no proc-* directory: not a strobe experiment or nothing was measured",
                           exp->dir);
    if (rc == 0)
        qsort(procs, nprocs, sizeof *procs, cmp_proc);

    exp->processes = calloc(nprocs ? nprocs : 1, sizeof *exp->processes);
    if (!exp->processes && rc == 0)
        rc = -ENOMEM;
    for (size_t i = 0; i < nprocs && rc == 0; i++) {
        struct strobe_process_info *p = &exp->processes[i];
        const struct strobe__defs *d = &procs[i].defs;
        exp->nprocesses++;
        p->dir = procs[i].dir;
        procs[i].dir = NULL;
        p->pid = d->pid;
        p->ppid = d->ppid;
        p->exe = strdup(d->exe ? d->exe : "");
        p->parent = STROBE_NONE;
        p->start_realtime_ns = d->realtime_ns;
        p->exited = d->have_end;
        p->exit_status = d->exit_status;
        p->has_rank = d->have_rank;
        p->rank = (uint32_t)d->rank; /* both checked by the decoder */
        p->world_size = (uint32_t)d->world_size;
        p->recording = procs[i].defs.recording; /* taken over */
        p->nrecording = d->nrecording;
        procs[i].defs.recording = NULL;
        char shown[300];
        snprintf(shown, sizeof shown, "%s/defs", p->dir);
        if (!p->exe)
            rc = -ENOMEM;
        if (rc == 0)
            rc = fit_clock(p, d, shown, eb);
        if (rc == 0)
            p->overhead_ns_per_event = (double)d->overhead_ticks * p->ns_per_tick;
        if (rc == 0 && (rc = load_ids(L, p, d)) == -ENOMEM)
            strobe__error(eb, rc, "%s: out of memory", shown);
    }
    /* fork parents: by the name the parent's directory had when the child
     * was recorded (`strobe merge` may have renamed it), in its input */
    unsigned *domain = rc == 0 ? calloc(nprocs ? nprocs : 1, sizeof *domain) : NULL;
    const char **name = rc == 0 ? calloc(nprocs ? nprocs : 1, sizeof *name) : NULL;
    if (rc == 0 && (!domain || !name))
        rc = -ENOMEM;
    for (size_t i = 0; i < exp->nprocesses && rc == 0; i++)
        domain[i] = strobe_align_domain(exp, (uint32_t)i, &name[i]);
    for (size_t i = 0; i < exp->nprocesses && rc == 0; i++)
        for (size_t j = 0; j < exp->nprocesses; j++)
            if (procs[i].defs.parent_dir && procs[i].defs.parent_dir[0] && domain[i] == domain[j] &&
                strcmp(procs[i].defs.parent_dir, name[j]) == 0)
                exp->processes[i].parent = (uint32_t)j;
    free(domain);
    free(name);
    if (rc == 0) { /* before any time is converted */
        const struct strobe__defs **defs = calloc(nprocs ? nprocs : 1, sizeof *defs);
        if (!defs)
            rc = -ENOMEM;
        for (size_t i = 0; i < nprocs && defs; i++)
            defs[i] = &procs[i].defs;
        if (defs)
            strobe__align_clocks(exp, defs);
        free(defs);
    }

    /* threads: union of t<N>.evt and t<N>.prof per process */
    for (size_t i = 0; i < exp->nprocesses && rc == 0; i++) {
        char *pdir = join(exp->dir, exp->processes[i].dir);
        if (!pdir || (rc = list_dir(pdir, &names, &nnames, eb))) {
            rc = rc ? rc : -ENOMEM;
            free(pdir);
            break;
        }
        for (size_t k = 0; k < nnames && rc == 0; k++) {
            uint32_t index;
            int kind = thread_file(names[k], &index);
            struct strobe_thread_info *t;
            if (!kind)
                continue;
            if ((rc = add_thread(exp, (uint32_t)i, index, &t)))
                break;
            char **slot = kind == 1 ? &t->stream_path : &t->profile_path;
            if (!(*slot = join(pdir, names[k])))
                rc = -ENOMEM;
        }
        free_names(names, nnames);
        free(pdir);
    }
    if (rc == 0)
        qsort(exp->threads, exp->nthreads, sizeof *exp->threads, cmp_thread);

    bool had_blocks = false;
    for (size_t i = 0; i < exp->nregions; i++)
        had_blocks |= exp->regions[i].kind == STROBE_REGION_TM_ATOMIC;
    /* Streams are decoded only for threads the runtime could not summarize
     * (killed), and all of them when the TM level must be inferred from
     * what they hold (no `tm_monitor` in meta). */
    bool scan_all = had_blocks && !strobe_experiment_meta(exp, "tm_monitor");
    uint64_t total = 0, done = 0;
    const struct strobe__thread_summary **sums = calloc(exp->nthreads ? exp->nthreads : 1, sizeof *sums);
    if (!sums && rc == 0)
        rc = -ENOMEM;
    for (size_t i = 0; i < exp->nthreads && rc == 0; i++) {
        struct strobe_thread_info *t = &exp->threads[i];
        sums[i] = scan_all ? NULL : find_summary(&procs[t->process].defs, t->index);
        if (!sums[i] && t->stream_path && stat(t->stream_path, &st) == 0)
            total += (uint64_t)st.st_size;
    }
    for (size_t i = 0; i < exp->nthreads && rc == 0; i++) {
        struct strobe_thread_info *t = &exp->threads[i];
        if (sums[i])
            rc = load_summary(L, t, &procs[t->process].defs, sums[i]);
        else if (t->stream_path)
            rc = scan_stream(L, t, &done, total, progress, arg);
    }
    free(sums);
    if (progress && rc == 0)
        progress(total, total, arg);
    if (rc == 0 && (rc = resolve_counts(L, procs)) == 0)
        tm_level(exp, had_blocks);

    /* origin: the earliest thread start (or process clock anchor) */
    long double origin = -1;
    for (size_t i = 0; i < exp->nthreads && rc == 0; i++)
        if (exp->threads[i].stream_path && (origin < 0 || exp->threads[i].begin_ns < origin))
            origin = exp->threads[i].begin_ns;
    for (size_t i = 0; i < exp->nprocesses && rc == 0; i++) {
        const struct strobe__defs *d = &procs[i].defs;
        if (d->nsyncs && (origin < 0 || raw_ns(&exp->processes[i], d->syncs[0].ticks) < origin))
            origin = raw_ns(&exp->processes[i], d->syncs[0].ticks);
    }
    exp->origin_ns = origin < 0 ? 0 : (double)origin;
    for (size_t i = 0; i < exp->nprocesses && rc == 0; i++)
        for (size_t k = 0; k < exp->processes[i].nrecording; k++) {
            struct strobe_recording_change *c = &exp->processes[i].recording[k];
            c->ns = strobe_ticks_to_ns(exp, (uint32_t)i, c->ticks);
        }
    for (size_t i = 0; i < exp->nthreads && rc == 0; i++) {
        struct strobe_thread_info *t = &exp->threads[i];
        const struct strobe_process_info *p = &exp->processes[t->process];
        t->begin_ns = t->begin_ns > exp->origin_ns ? t->begin_ns - (uint64_t)exp->origin_ns : 0;
        t->window_ns = t->window_ns > exp->origin_ns ? t->window_ns - (uint64_t)exp->origin_ns : 0;
        t->end_ns = t->end_ns > exp->origin_ns ? t->end_ns - (uint64_t)exp->origin_ns : 0;
        for (size_t k = 0; k < t->nopen; k++)
            t->open[k].start_ns = t->open[k].start_ns > exp->origin_ns ? t->open[k].start_ns - (uint64_t)exp->origin_ns : 0;
        if (!t->ended && !t->summarized && p->exited) {
            uint64_t pend = strobe_ticks_to_ns(exp, t->process, procs[t->process].defs.end_ticks);
            if (pend > t->end_ns)
                t->end_ns = pend;
        }
        if (t->parent != STROBE_NONE)
            t->parent = global_thread(exp, t->process, t->parent);
        if (t->end_ns > exp->duration_ns)
            exp->duration_ns = t->end_ns;
        exp->total_events += t->events;
        exp->total_bytes += t->bytes;
        exp->total_dropped += t->dropped;
    }
    /* after the origin: the peak's time is in experiment ns */
    for (size_t i = 0; i < exp->nprocesses && rc == 0; i++) {
        rc = load_malloc(L, (uint32_t)i, &procs[i].defs);
        if (rc == 0)
            rc = load_mpi_comms(exp, &procs[i].defs);
    }
    for (size_t i = 0; i < nprocs; i++) {
        free(procs[i].dir);
        strobe__defs_free(&procs[i].defs);
    }
    free(procs);
    if (rc == -ENOMEM)
        strobe__error(eb, rc, "%s: out of memory", exp->dir);
    return rc;
}

int strobe_experiment_open(const char *dir, struct strobe_experiment **out,
                           void (*progress)(uint64_t done, uint64_t total, void *arg), void *progress_arg,
                           struct strobe_errbuf *eb)
{
    struct strobe_experiment *exp = calloc(1, sizeof *exp);
    if (!exp)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", dir);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    exp->dir = strndup(dir, n);
    if (!exp->dir) {
        free(exp);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", dir);
    }
    struct loader L = { .exp = exp, .eb = eb };
    int rc = load(&L, progress, progress_arg);
    strobe__keymap_free(&L.regions);
    strobe__keymap_free(&L.metrics);
    free(L.counts_process);
    free(L.counts_site);
    if (rc) {
        strobe_experiment_close(exp);
        return rc;
    }
    *out = exp;
    return 0;
}

void strobe_experiment_close(struct strobe_experiment *exp)
{
    if (!exp)
        return;
    for (size_t i = 0; i < exp->nmeta; i++) {
        free(exp->meta_keys[i]);
        free(exp->meta_values[i]);
    }
    free(exp->meta_keys);
    free(exp->meta_values);
    for (size_t i = 0; i < exp->nprocesses; i++) {
        free(exp->processes[i].dir);
        free(exp->processes[i].exe);
        free(exp->processes[i].region_map);
        free(exp->processes[i].recording);
        free(exp->processes[i].metric_map);
    }
    free(exp->processes);
    for (size_t i = 0; i < exp->nthreads; i++) {
        free(exp->threads[i].stream_path);
        free(exp->threads[i].profile_path);
        free(exp->threads[i].open);
    }
    free(exp->threads);
    for (size_t i = 0; i < exp->nregions; i++) {
        free(exp->regions[i].name);
        free(exp->regions[i].file);
        free(exp->regions[i].module);
    }
    free(exp->regions);
    for (size_t i = 0; i < exp->nmetrics; i++) {
        free(exp->metrics[i].name);
        free(exp->metrics[i].unit);
    }
    free(exp->metrics);
    free(exp->tm_counts);
    free(exp->malloc_live);
    for (size_t i = 0; i < exp->nmpi_comms; i++)
        free(exp->mpi_comms[i].members);
    free(exp->mpi_comms);
    strobe__selection_free(exp->selection);
    free(exp->dir);
    free(exp);
}

const char *strobe_experiment_meta(const struct strobe_experiment *exp, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < exp->nmeta; i++) /* the last value wins: `strobe run` appends end facts */
        if (strcmp(exp->meta_keys[i], key) == 0)
            v = exp->meta_values[i];
    return v;
}

/* ---- event iterator ----------------------------------------------------- */

struct strobe_stream_iter {
    const struct strobe_experiment *exp;
    uint32_t thread;
    struct mapped map;
    const char *name;
    struct strobe__stream_decoder dec;
    bool closing;
    uint64_t last_ns;
    struct strobe__filter *filter; /* the experiment's selection, or NULL */
};

int strobe_experiment_chunks(struct strobe_experiment *exp, uint64_t first, uint64_t count, uint64_t *nchunks,
                             struct strobe_errbuf *eb)
{
    *nchunks = 0;
    for (size_t t = 0; t < exp->nthreads; t++) {
        if (!exp->threads[t].stream_path)
            continue;
        const char *name = shown_path(exp, exp->threads[t].stream_path);
        struct mapped m;
        struct strobe__stream_decoder d;
        int rc = map_file(exp->threads[t].stream_path, name, &m, eb);
        if (rc == 0 && (rc = strobe__stream_begin(&d, m.buf, m.len, name, eb)) == 0) {
            uint64_t n = strobe__stream_nchunks(&d);
            *nchunks = n > *nchunks ? n : *nchunks;
            if (!d.chunked)
                rc = strobe__stream_chunks(&d, first, count, eb); /* the message */
            strobe__stream_end(&d);
        }
        unmap_file(&m);
        if (rc)
            return rc;
    }
    exp->chunk_first = first;
    exp->chunk_count = count;
    return 0;
}

int strobe_stream_open(const struct strobe_experiment *exp, uint32_t thread, struct strobe_stream_iter **out,
                       struct strobe_errbuf *eb)
{
    if (thread >= exp->nthreads || !exp->threads[thread].stream_path)
        return strobe__error(eb, -ENOENT, "%s: thread %u has no event stream (tracing was off)", exp->dir, thread);
    struct strobe_stream_iter *it = calloc(1, sizeof *it);
    if (!it)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", exp->dir);
    it->exp = exp;
    it->thread = thread;
    it->name = shown_path(exp, exp->threads[thread].stream_path);
    int rc = map_file(exp->threads[thread].stream_path, it->name, &it->map, eb);
    if (rc == 0)
        rc = strobe__stream_begin(&it->dec, it->map.buf, it->map.len, it->name, eb);
    if (rc == 0 && exp->chunk_count)
        rc = strobe__stream_chunks(&it->dec, exp->chunk_first, exp->chunk_count, eb);
    if (rc == 0 && exp->selection && strobe__filter_open(exp->selection, thread, &it->filter) < 0)
        rc = strobe__error(eb, -ENOMEM, "%s: out of memory", exp->dir);
    if (rc) {
        strobe__stream_end(&it->dec);
        unmap_file(&it->map);
        free(it);
        return rc;
    }
    *out = it;
    return 0;
}

int strobe_stream_next(struct strobe_stream_iter *it, struct strobe_event *ev, struct strobe_errbuf *eb)
{
    return it->filter ? strobe__filter_next(it->filter, it, ev, eb) : strobe__stream_next_raw(it, ev, eb);
}

int strobe__stream_next_raw(struct strobe_stream_iter *it, struct strobe_event *ev, struct strobe_errbuf *eb)
{
    const struct strobe_experiment *exp = it->exp;
    const struct strobe_thread_info *t = &exp->threads[it->thread];
    const struct strobe_process_info *p = &exp->processes[t->process];
    memset(ev, 0, sizeof *ev);
    ev->region = ev->metric = ev->other_thread = STROBE_NONE;
    if (!it->closing) {
        struct strobe__raw_event raw;
        int rc;
        /* COUNTS records were read by the loader (exp->tm_counts); SYNC
         * records are the lock model's (locks.h), SAMPLE records the
         * sample model's (samples.h) */
        while ((rc = strobe__stream_decode(&it->dec, &raw, eb)) == 1 &&
               (raw.kind == STROBE__RAW_TM_COUNTS || raw.kind == STROBE__RAW_SYNC ||
                raw.kind == STROBE__RAW_SAMPLE))
            ;
        if (rc < 0)
            return rc;
        if (rc == 1) {
            if ((rc = check_ids(exp, p, &raw, it->name, eb)))
                return rc;
            ev->time_ns = strobe_ticks_to_ns(exp, t->process, raw.ticks);
            it->last_ns = ev->time_ns;
            ev->depth = raw.depth;
            ev->offset = raw.offset;
            ev->synthetic = raw.synthetic;
            switch (raw.kind) {
            case STROBE__RAW_ENTER: ev->type = STROBE_EVENT_ENTER; break;
            case STROBE__RAW_EXIT: ev->type = STROBE_EVENT_EXIT; break;
            case STROBE__RAW_INHERIT: ev->type = STROBE_EVENT_INHERIT; break;
            case STROBE__RAW_METRIC:
                ev->type = STROBE_EVENT_METRIC;
                ev->metric = p->metric_map[raw.id];
                ev->value = raw.value;
                break;
            case STROBE__RAW_THREAD_BEGIN: ev->type = STROBE_EVENT_THREAD_BEGIN; break;
            case STROBE__RAW_THREAD_END: ev->type = STROBE_EVENT_THREAD_END; break;
            case STROBE__RAW_THREAD_CREATE:
            case STROBE__RAW_THREAD_JOIN:
                ev->type = raw.kind == STROBE__RAW_THREAD_CREATE ? STROBE_EVENT_THREAD_CREATE : STROBE_EVENT_THREAD_JOIN;
                ev->other_thread = global_thread(exp, t->process, raw.id);
                break;
            case STROBE__RAW_FORK:
                ev->type = STROBE_EVENT_FORK;
                ev->value = raw.value;
                break;
            case STROBE__RAW_ALLOC:
                ev->type = STROBE_EVENT_ALLOC;
                ev->alloc_op = (uint32_t)raw.id;
                ev->alloc_call = (uint32_t)raw.parent;
                ev->address = raw.address;
                ev->value = raw.value;
                break;
            case STROBE__RAW_MPI:
                ev->type = STROBE_EVENT_MPI;
                ev->mpi = raw.mpi;
                break;
            case STROBE__RAW_TM:
                ev->type = STROBE_EVENT_TM;
                ev->tm_event = (uint32_t)raw.id;
                ev->value = raw.value;
                if (raw.id == STROBE_TM_LOCKED) /* a duration in ticks */
                    ev->value = (int64_t)((double)(uint64_t)raw.value * p->ns_per_tick + 0.5);
                ev->other_thread = raw.parent ? global_thread(exp, t->process, raw.parent - 1) : STROBE_NONE;
                break;
            }
            if (raw.kind == STROBE__RAW_ENTER || raw.kind == STROBE__RAW_EXIT || raw.kind == STROBE__RAW_INHERIT)
                ev->region = p->region_map[raw.region];
            return 1;
        }
        it->closing = true;
    }
    if (it->dec.depth == 0)
        return 0;
    /* a killed or still-running thread, or the end of the chunks read:
     * close what it left open */
    ev->type = STROBE_EVENT_EXIT;
    ev->region = p->region_map[it->dec.stack[--it->dec.depth]];
    ev->time_ns = t->end_ns > it->last_ns && !exp->chunk_count ? t->end_ns : it->last_ns;
    ev->depth = (uint32_t)it->dec.depth;
    ev->offset = it->dec.pos;
    ev->synthetic = true;
    return 1;
}

void strobe_stream_close(struct strobe_stream_iter *it)
{
    if (!it)
        return;
    strobe__filter_close(it->filter);
    strobe__stream_end(&it->dec);
    unmap_file(&it->map);
    free(it);
}
