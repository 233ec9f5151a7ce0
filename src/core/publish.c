/* SPDX-License-Identifier: MIT */
/*
 * Live publishing of region visits and time (publish.h).
 *
 * The set: schema "regions", instance "<host>/regions/<pid>", meta metric
 * pid, data metrics threads (live measured threads) and, per region,
 * "<name>.visits" and "<name>.time_ns" (inclusive time of completed
 * visits; a recursive region counts only its outermost visits, so time
 * is not counted twice). Totals only grow: threads that end hand their
 * totals to `retired`. New regions change the schema, so the set is
 * withdrawn and published again under the same name; readers see the
 * index generation change and rebuild.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/publish.h"

#include "common/job.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"
#include "strobe/shm.h"

#define MAX_REGIONS 4096 /* published regions; later ones are summed into "(other)" */

struct region_info {
    uintptr_t addr;
    const char *name;
    uint64_t retired_visits, retired_ticks;
};

/* The publisher's state: one per process, reached through strobe__pub. */
struct strobe__rt_publish {
    pthread_t thread;
    int running;
    pthread_mutex_t mu; /* with cv: the stop request */
    pthread_cond_t cv;
    int stop;
    uint64_t interval_ns;
    /* under strobe__rt.lock */
    struct region_info *regions; /* index = region id */
    size_t cap;
    /* publisher thread only */
    strobe_shm_pub *pub;
    strobe_set *set;
    uint32_t published_regions; /* regions in the current schema */
    uint64_t *visits, *ticks;   /* per region, this round */
    char host[64];
};

static struct strobe__rt_publish strobe__pub = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cv = PTHREAD_COND_INITIALIZER,
};

void strobe__publish_region_locked(uint32_t id, uintptr_t addr, const char *name)
{
    struct strobe__rt_publish *p = &strobe__pub;
    /* kept whether or not publishing is on: the publisher may start after
     * the first regions, and this is the registration slow path anyway */
    if (id >= MAX_REGIONS)
        return;
    if (id >= p->cap) {
        /* mmap'ed, like every runtime table: registration may happen in
         * a signal handler */
        size_t cap = p->cap ? p->cap * 2 : 256;
        while (cap <= id)
            cap *= 2;
        void *grown = strobe__pages_grow(p->regions, p->cap * sizeof *p->regions, cap * sizeof *p->regions);
        if (!grown)
            return;
        p->regions = grown;
        p->cap = cap;
    }
    p->regions[id].addr = addr;
    p->regions[id].name = name;
}

/* Adds thread t's per-region totals to visits/ticks (lock held). */
static void add_thread(struct strobe__thread *t, uint64_t *visits, uint64_t *ticks, uint32_t nreg)
{
    if (!t->prof.hdr || !t->slots)
        return;
    uint32_t n = __atomic_load_n(&t->prof.hdr->slot_count, __ATOMIC_ACQUIRE);
    const struct strobe_prof_node *s = t->slots;
    for (uint32_t i = 1; i < n; i++) {
        if (s[i].tag != STROBE_SLOT_NODE || s[i].region == 0 || s[i].region >= nreg)
            continue;
        uint32_t r = s[i].region;
        visits[r] += __atomic_load_n(&s[i].visits, __ATOMIC_RELAXED);
        /* outermost visits only: skip when an ancestor is the same region */
        int nested = 0;
        for (uint32_t a = s[i].parent, guard = 0; a != 0 && a < n && guard < 4096; a = s[a].parent, guard++)
            if (s[a].tag == STROBE_SLOT_NODE && s[a].region == r) {
                nested = 1;
                break;
            }
        if (!nested)
            ticks[r] += __atomic_load_n(&s[i].incl_ticks, __ATOMIC_RELAXED);
    }
}

void strobe__publish_retire_locked(struct strobe__thread *t)
{
    struct strobe__rt_publish *p = &strobe__pub;
    if (!p->running || !p->cap)
        return;
    uint32_t nreg = (uint32_t)p->cap;
    uint64_t *v = calloc(nreg, sizeof *v), *k = calloc(nreg, sizeof *k);
    if (v && k) {
        add_thread(t, v, k, nreg);
        for (uint32_t r = 0; r < nreg; r++) {
            p->regions[r].retired_visits += v[r];
            p->regions[r].retired_ticks += k[r];
        }
    }
    free(v);
    free(k);
}

/* A metric-name-safe region name into buf. */
static void region_name(const struct region_info *ri, uint32_t id, char *buf, size_t cap)
{
    const char *name = ri->name && *ri->name ? ri->name : NULL;
    Dl_info info;
    if (!name && ri->addr && dladdr((void *)ri->addr, &info) && info.dli_sname &&
        (uintptr_t)info.dli_saddr == ri->addr)
        name = info.dli_sname;
    if (name) {
        snprintf(buf, cap, "%.200s", name);
    } else if (ri->addr && dladdr((void *)ri->addr, &info) && info.dli_fname) {
        /* a static function: dladdr sees only dynamic symbols, so name it
         * module+offset, which addr2line turns into a name (or link the
         * program with -rdynamic) */
        const char *base = strrchr(info.dli_fname, '/');
        snprintf(buf, cap, "%.120s+0x%llx", base ? base + 1 : info.dli_fname,
                 (unsigned long long)(ri->addr - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(buf, cap, "0x%llx", (unsigned long long)ri->addr);
    }
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    (void)id;
}

static void withdraw(struct strobe__rt_publish *p)
{
    if (p->pub)
        strobe_shm_unpublish(p->pub);
    p->pub = NULL;
    p->set = NULL;
}

/* (Re)publishes the set with regions 1..nreg-1. */
static int publish_schema(struct strobe__rt_publish *p, uint32_t nreg)
{
    strobe_schema *s;
    int rc = strobe_schema_new("regions", &s);
    if (rc < 0)
        return rc;
    strobe_schema_add(s, "pid", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
    strobe_schema_add(s, "threads", NULL, STROBE_MT_U64, 1, 0);
    for (uint32_t r = 1; r < nreg && rc >= 0; r++) {
        char name[220], metric[256];
        pthread_mutex_lock(&strobe__rt.lock);
        struct region_info ri = p->regions[r];
        pthread_mutex_unlock(&strobe__rt.lock);
        region_name(&ri, r, name, sizeof name);
        snprintf(metric, sizeof metric, "%s.visits", name);
        rc = strobe_schema_add(s, metric, NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER);
        if (rc == -EEXIST) {
            /* two regions with one name (static functions of two files):
             * the id tells them apart */
            snprintf(name + strlen(name), sizeof name - strlen(name), "#%u", r);
            snprintf(metric, sizeof metric, "%s.visits", name);
            rc = strobe_schema_add(s, metric, NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER);
        }
        snprintf(metric, sizeof metric, "%s.time_ns", name);
        if (rc >= 0)
            rc = strobe_schema_add(s, metric, "ns", STROBE_MT_U64, 1, STROBE_METRIC_COUNTER);
    }
    /* the batch job, last (the values above are written by position): a
     * label in /metrics and a column in CSV (job.h) */
    char job[STROBE__JOB_MAX + 1];
    int has_job = strobe__job_id(job, sizeof job);
    if (has_job && rc >= 0)
        rc = strobe_schema_add(s, "job_id", NULL, STROBE_MT_CHAR, STROBE__JOB_MAX + 1, STROBE_METRIC_META);
    char instance[160];
    snprintf(instance, sizeof instance, "%s/regions/%d", p->host, (int)getpid());
    withdraw(p);
    if (rc >= 0)
        rc = strobe_shm_publish(NULL, s, p->host, instance, &p->pub, &p->set);
    strobe_schema_free(s);
    if (rc < 0)
        return rc;
    strobe_set_u64(p->set, 0, 0, (uint64_t)getpid());
    if (has_job)
        strobe_set_str(p->set, (uint32_t)strobe_set_metric_index(p->set, "job_id"), job);
    p->published_regions = nreg;
    return 0;
}

static void publish_round(struct strobe__rt_publish *p, uint64_t ns_per_tick_num, uint64_t ns_per_tick_den)
{
    pthread_mutex_lock(&strobe__rt.lock);
    uint32_t nreg = strobe__rt.region_count + 1;
    if (nreg > MAX_REGIONS)
        nreg = MAX_REGIONS;
    if (nreg > p->cap)
        nreg = (uint32_t)p->cap;
    uint64_t threads = 0;
    /* every entry read below (r < nreg) starts from the retired totals */
    for (uint32_t r = 0; r < nreg; r++) {
        p->visits[r] = p->regions[r].retired_visits;
        p->ticks[r] = p->regions[r].retired_ticks;
    }
    for (struct strobe__thread *t = strobe__rt.threads; t; t = t->next, threads++)
        add_thread(t, p->visits, p->ticks, nreg);
    pthread_mutex_unlock(&strobe__rt.lock);
    if (!p->set || nreg != p->published_regions) {
        int rc = publish_schema(p, nreg);
        if (rc < 0) {
            static int said;
            if (!said++)
                strobe__say("publish: cannot publish to the shared-memory index: ", strobe_strerror(rc),
                            (char *)NULL);
            return;
        }
    }
    strobe_set_begin(p->set);
    strobe_set_u64(p->set, 1, 0, threads);
    for (uint32_t r = 1; r < nreg; r++) {
        strobe_set_u64(p->set, 2 * r, 0, p->visits[r]);
        strobe_set_u64(p->set, 2 * r + 1, 0,
                       (uint64_t)((unsigned __int128)p->ticks[r] * ns_per_tick_num / ns_per_tick_den));
    }
    strobe_set_end(p->set);
    strobe_shm_heartbeat(p->pub);
}

static void *publisher(void *arg)
{
    struct strobe__rt_publish *p = arg;
    /* this thread is the runtime's own: never measured */
    strobe__tls.state = STROBE__TLS_ENDED;
    uint64_t t0, n0;
    strobe__clock_pair(strobe__rt.cfg.clock_kind, &t0, &n0);
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t deadline = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + p->interval_ns;
        ts.tv_sec = (time_t)(deadline / 1000000000ull);
        ts.tv_nsec = (long)(deadline % 1000000000ull);
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        pthread_mutex_unlock(&p->mu);
        /* ticks -> ns from two calibration points, refreshed every round */
        uint64_t t1, n1;
        strobe__clock_pair(strobe__rt.cfg.clock_kind, &t1, &n1);
        uint64_t num = n1 > n0 ? n1 - n0 : 1, den = t1 > t0 ? t1 - t0 : 1;
        publish_round(p, num, den);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void strobe__publish_start(void)
{
    struct strobe__rt_publish *p = &strobe__pub;
    const char *on = getenv("STROBE_PUBLISH");
    if (!on || strcmp(on, "1") != 0 || p->running)
        return;
    double sec = 1.0;
    const char *iv = getenv("STROBE_PUBLISH_INTERVAL");
    if (iv) {
        char *end;
        sec = strtod(iv, &end);
        if (end == iv || *end || !(sec >= 0.001 && sec <= 3600)) {
            strobe__say("STROBE_PUBLISH_INTERVAL=", iv, ": expected seconds between 0.001 and 3600; "
                        "publishing every second", (char *)NULL);
            sec = 1.0;
        }
    }
    p->interval_ns = (uint64_t)(sec * 1e9);
    if (gethostname(p->host, sizeof p->host - 1) < 0 || !p->host[0])
        strcpy(p->host, "localhost");
    char *dot = strchr(p->host, '.');
    if (dot)
        *dot = 0;
    p->visits = strobe__pages_alloc(MAX_REGIONS * sizeof *p->visits);
    p->ticks = strobe__pages_alloc(MAX_REGIONS * sizeof *p->ticks);
    if (!p->visits || !p->ticks)
        return;
    /* regions registered before the publisher existed */
    pthread_mutex_lock(&strobe__rt.lock);
    p->running = 1;
    pthread_mutex_unlock(&strobe__rt.lock);
    /* the real pthread_create: ours would measure the publisher */
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
    if (!create || create(&p->thread, NULL, publisher, p) != 0) {
        pthread_mutex_lock(&strobe__rt.lock);
        p->running = 0;
        pthread_mutex_unlock(&strobe__rt.lock);
        strobe__say("publish: cannot start the publisher thread", (char *)NULL);
    }
}

void strobe__publish_after_fork_child(void)
{
    struct strobe__rt_publish *p = &strobe__pub;
    /* the thread and the publication are the parent's; the child does not
     * publish (its profile starts afresh in its own process directory) */
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->running = 0;
    p->pub = NULL;
    p->set = NULL;
}

void strobe__publish_stop(void)
{
    struct strobe__rt_publish *p = &strobe__pub;
    if (!p->running)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    int (*join)(pthread_t, void **) = (int (*)(pthread_t, void **))dlsym(RTLD_NEXT, "pthread_join");
    if (join)
        join(p->thread, NULL);
    withdraw(p);
    pthread_mutex_lock(&strobe__rt.lock);
    p->running = 0;
    pthread_mutex_unlock(&strobe__rt.lock);
}
