/* SPDX-License-Identifier: MIT */
/*
 * strobed aggregation (aggregator.h). Each producer has a client, a
 * mirror of its sets and a thread. The network wait happens without the
 * daemon lock; applying a reply to the mirror and dispatching the
 * changes happens with it, so the server never reads a set while it is
 * being overwritten.
 */
#include <errno.h>
#include <fnmatch.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strobed/aggregator.h"
#include "strobed/daemon.h"
#include "transport/client.h"
#include "transport/proto.h"

struct strobe__aggregator {
    struct strobe__daemon *d;
    char *name; /* `name`, default the address: what runtime control calls it */
    char *address;
    struct strobe__cfg *own_cfg; /* the entry, when added at runtime */
    _Atomic int stop;            /* this producer alone is stopping (runtime control) */
    uint64_t interval_ns, offset_ns, timeout_ns;
    int timeout_set, stale_set; /* given, not derived from the interval */
    uint64_t backoff_ns; /* after a refused authentication: doubles up to AUTH_BACKOFF_MAX_NS */
    int push;
    int publish;
    const char *const *sets; /* globs, NULL = all */
    size_t nsets;
    const char **sets_owned;
    struct strobe__client *client;
    struct strobe__mirror mirror;
    pthread_t thread;
    int started;
    int connected; /* last round succeeded (d->lock: /metrics reads it) */
    uint64_t rounds, failures;
    uint64_t started_ns, last_ok_ns; /* wall clock; last_ok_ns 0 = never */
    uint64_t stale_after_ns;         /* down this long: its sets leave /metrics */
};

/* A producer that fails authentication is retried after a wait that
 * doubles from the pull interval up to a minute: an impostor or a
 * mistyped secret gets a warning per attempt, not a flood. */
#define AUTH_BACKOFF_MAX_NS 60000000000ull

static const char *const producer_keys[] = { "name",    "address", "interval", "offset",      "mode",
                                             "timeout", "sets",    "publish",  "stale_after", NULL };

static int fail_at(const struct strobe__cfg *c, const char *key, char *err, size_t errlen,
                   const char *what, const char *value)
{
    char where[300];
    snprintf(err, errlen, "%sproducers: %s%s'%s' %s", strobe__cfg_where(c, key, where, sizeof where),
             key ? key : "", key ? ": " : "", value ? value : "", what);
    return STROBE_ERR_SYNTAX;
}

static int parse_timing(const struct strobe__cfg *c, struct strobe__aggregator *a, char *err, size_t errlen);
static int open_client(struct strobe__aggregator *a);

static int parse_one(struct strobe__daemon *d, const struct strobe__cfg *c,
                     struct strobe__aggregator *a, char *err, size_t errlen)
{
    if (c->kind != STROBE_CFG_MAP)
        return fail_at(c, NULL, err, errlen, "an entry must be a mapping with 'address'", "");
    for (size_t i = 0; i < c->n; i++) {
        size_t k = 0;
        while (producer_keys[k] && strcmp(producer_keys[k], c->keys[i]))
            k++;
        if (!producer_keys[k])
            return fail_at(c, c->keys[i], err, errlen, "is not a producer key", c->keys[i]);
        if (strcmp(c->keys[i], "sets") && c->items[i]->kind != STROBE_CFG_SCALAR)
            return fail_at(c, c->keys[i], err, errlen, "expects a single value", "");
    }
    const struct strobe__cfg *v;
    if (!(v = strobe__cfg_get(c, "address")))
        return fail_at(c, NULL, err, errlen, "entry without 'address' (host:port)", "");
    if (!strchr(v->scalar, ':'))
        return fail_at(c, "address", err, errlen, "is not host:port", v->scalar);
    /* a port nothing can listen on would be redialed forever */
    if (strobe__check_port(v->scalar) < 0)
        return fail_at(c, "address", err, errlen, "has no port from 1 to 65535", v->scalar);
    const struct strobe__cfg *nv = strobe__cfg_get(c, "name");
    const char *name = nv ? nv->scalar : v->scalar;
    if (!*name)
        return fail_at(c, "name", err, errlen, "is not a producer name", name);
    for (size_t i = 0; i < d->nprod; i++)
        if (d->prod[i] != a && strcmp(d->prod[i]->name, name) == 0)
            return fail_at(c, nv ? "name" : "address", err, errlen,
                           "names a second producer (give each a distinct 'name')", name);
    if (!(a->address = strdup(v->scalar)) || !(a->name = strdup(name)))
        return -ENOMEM;
    int rc = parse_timing(c, a, err, errlen);
    if (rc < 0)
        return rc;
    if ((v = strobe__cfg_get(c, "mode"))) {
        if (strcmp(v->scalar, "push") == 0)
            a->push = 1;
        else if (strcmp(v->scalar, "pull") != 0)
            return fail_at(c, "mode", err, errlen, "is not pull or push", v->scalar);
    }
    a->publish = 1;
    if ((v = strobe__cfg_get(c, "publish"))) {
        if (strcmp(v->scalar, "false") == 0 || strcmp(v->scalar, "no") == 0)
            a->publish = 0;
        else if (strcmp(v->scalar, "true") && strcmp(v->scalar, "yes"))
            return fail_at(c, "publish", err, errlen, "is not true or false", v->scalar);
    }
    if ((v = strobe__cfg_get(c, "sets"))) {
        size_t n = v->kind == STROBE_CFG_SEQ ? v->n : 1;
        if (n > STROBE_PROTO_MAX_PATTERNS)
            return fail_at(c, "sets", err, errlen, "lists more than 64 patterns", "");
        a->sets_owned = calloc(n + 1, sizeof *a->sets_owned);
        if (!a->sets_owned)
            return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
            const struct strobe__cfg *it = v->kind == STROBE_CFG_SEQ ? v->items[i] : v;
            if (it->kind != STROBE_CFG_SCALAR)
                return fail_at(c, "sets", err, errlen, "must be a list of set names or globs", "");
            a->sets_owned[i] = it->scalar;
        }
        a->sets = a->sets_owned;
        a->nsets = n;
    }
    if (open_client(a) < 0)
        return fail_at(c, "address", err, errlen, "cannot be dialed", a->address);
    return 0;
}

/* The schedule keys of a producer entry (interval, offset, timeout,
 * stale_after) into a, with the defaults derived from the interval. */
static int parse_timing(const struct strobe__cfg *c, struct strobe__aggregator *a, char *err, size_t errlen)
{
    const struct strobe__cfg *v;
    unsigned long long ns;
    int rc;
    a->interval_ns = 1000000000ull;
    a->offset_ns = 0;
    a->timeout_ns = 0;
    if ((v = strobe__cfg_get(c, "interval"))) {
        if ((rc = strobe__parse_interval(v->scalar, &ns)) < 0)
            return fail_at(c, "interval", err, errlen,
                           rc == -ERANGE ? "is below the minimum interval of " STROBE__MIN_INTERVAL_TEXT
                                         : "is not a positive duration",
                           v->scalar);
        a->interval_ns = ns;
    }
    if ((v = strobe__cfg_get(c, "offset"))) {
        if (strobe__parse_duration(v->scalar, &ns) < 0 || ns >= a->interval_ns)
            return fail_at(c, "offset", err, errlen, "is not a duration below the interval", v->scalar);
        a->offset_ns = ns;
    }
    if ((v = strobe__cfg_get(c, "timeout"))) {
        if (strobe__parse_duration(v->scalar, &ns) < 0 || ns == 0)
            return fail_at(c, "timeout", err, errlen, "is not a positive duration", v->scalar);
        a->timeout_ns = ns;
        a->timeout_set = 1;
    }
    if (!a->timeout_ns) /* default: one interval, at least 1 s, at most 10 s */
        a->timeout_ns = a->interval_ns < 1000000000ull ? 1000000000ull
                        : a->interval_ns > 10000000000ull ? 10000000000ull : a->interval_ns;
    /* default: three rounds that could each have answered, at least 10 s */
    a->stale_after_ns = 3 * (a->interval_ns + a->timeout_ns);
    if (a->stale_after_ns < 10000000000ull)
        a->stale_after_ns = 10000000000ull;
    if ((v = strobe__cfg_get(c, "stale_after"))) {
        if (strobe__parse_duration(v->scalar, &ns) < 0 || ns == 0)
            return fail_at(c, "stale_after", err, errlen, "is not a positive duration", v->scalar);
        a->stale_after_ns = ns;
        a->stale_set = 1;
    }
    return 0;
}

/* The client for a's address; a push round may wait an interval more */
/* A request's bound: the timeout, and in push mode the two intervals the
 * producer may hold it. */
static uint32_t request_ms(const struct strobe__aggregator *a)
{
    return (uint32_t)(a->timeout_ns / 1000000ull) + (a->push ? (uint32_t)(a->interval_ns * 2 / 1000000ull) : 0);
}

static int open_client(struct strobe__aggregator *a)
{
    return strobe__client_open(a->address, a->d->secret, request_ms(a), 0, &a->client);
}

struct closing {
    struct strobe__daemon *d;
    struct strobe__client *c;
};

static void *close_client(void *arg)
{
    struct closing *x = arg;
    strobe__client_close(x->c);
    atomic_fetch_sub(&x->d->closing, 1);
    free(x);
    return NULL;
}

/* Closes c on a thread of its own: nng 1.5's nng_close can hang for good
 * in its reaper (about one close in a few hundred right after a
 * reconnection, tests/strobed/test_control.c churn_under_load), and a
 * control command or the daemon's exit must not hang with it. */
static void close_in_background(struct strobe__daemon *d, struct strobe__client *c)
{
    if (!c)
        return;
    struct closing *x = malloc(sizeof *x);
    pthread_attr_t attr;
    pthread_t t;
    if (x && pthread_attr_init(&attr) == 0) {
        *x = (struct closing){ d, c };
        atomic_fetch_add(&d->closing, 1);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, close_client, x);
        pthread_attr_destroy(&attr);
        if (rc == 0)
            return;
        atomic_fetch_sub(&d->closing, 1);
    }
    free(x);
    strobe__client_close(c);
}

int strobe__aggregators_new(struct strobe__daemon *d, const struct strobe__cfg *list, char *err,
                            size_t errlen)
{
    if (list->kind != STROBE_CFG_SEQ) {
        snprintf(err, errlen, "%s:%d: producers: expected a list of entries ('- address: host:port')",
                 list->file, list->line);
        return STROBE_ERR_SYNTAX;
    }
    d->prod = calloc(list->n ? list->n : 1, sizeof *d->prod);
    if (!d->prod)
        return -ENOMEM;
    for (size_t i = 0; i < list->n; i++) {
        struct strobe__aggregator *a = calloc(1, sizeof *a);
        if (!a)
            return -ENOMEM;
        a->d = d;
        d->prod[d->nprod++] = a;
        int rc = parse_one(d, list->items[i], a, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int wanted(const struct strobe__aggregator *a, const char *name)
{
    if (!a->sets)
        return 1;
    for (size_t i = 0; i < a->nsets; i++)
        if (fnmatch(a->sets[i], name, 0) == 0)
            return 1;
    return 0;
}

/* mirror callback, d->lock held */
static void on_change(void *arg, strobe_set *set, enum strobe__mirror_event ev)
{
    struct strobe__aggregator *a = arg;
    struct strobe__daemon *d = a->d;
    const char *name = strobe_set_instance(set);
    if (!wanted(a, name))
        return;
    struct strobe__set_entry *e = strobe__daemon_set_find(d, name);
    if (e && e->set != set) {
        if (ev == STROBE_MIRROR_NEW)
            strobe__log(d, STROBE_LOG_WARN, "%s: set %s is already known from elsewhere; "
                        "this copy is ignored", a->address, name);
        return;
    }
    switch (ev) {
    case STROBE_MIRROR_NEW:
        if (strobe__daemon_set_add(d, set, (a->publish ? STROBE_SET_PUBLISH : 0) | STROBE__SET_BORROWED,
                                   NULL) == 0) {
            strobe__daemon_set_find(d, name)->source = a;
            strobe__daemon_set_updated(d, set);
        }
        return;
    case STROBE_MIRROR_UPDATED:
        strobe__daemon_set_updated(d, set);
        return;
    case STROBE_MIRROR_GONE:
        strobe__daemon_set_remove(d, set);
        return;
    }
}

static int stopping(const struct strobe__aggregator *a)
{
    return a->d->stop || a->stop;
}

/* Sleeps until the wall-clock time `until` or until the producer stops. */
static void sleep_until(struct strobe__aggregator *a, uint64_t until)
{
    struct strobe__daemon *d = a->d;
    for (uint64_t now = strobe__wall_ns(); !stopping(a) && now < until; now = strobe__wall_ns()) {
        uint64_t ms = (until - now + 999999) / 1000000;
        struct pollfd pfd = { d->stop_pipe[0], POLLIN, 0 };
        poll(&pfd, 1, (int)(ms > 200 ? 200 : ms));
    }
}

/* After a refused authentication: the next, longer wait, logged on every
 * attempt (the client's text names the producer). */
static uint64_t auth_backoff(struct strobe__aggregator *a)
{
    uint64_t ns = !a->backoff_ns ? a->interval_ns
                  : a->backoff_ns * 2 > AUTH_BACKOFF_MAX_NS ? AUTH_BACKOFF_MAX_NS
                                                           : a->backoff_ns * 2;
    strobe__log(a->d, STROBE_LOG_WARN, "producer: %s; next attempt in %.1f s",
                strobe__client_error(a->client), (double)ns / 1e9);
    return ns;
}

static void round_done(struct strobe__aggregator *a, int rc)
{
    struct strobe__daemon *d = a->d;
    a->rounds++;
    pthread_mutex_lock(&d->lock);
    int was = a->connected;
    a->connected = rc >= 0;
    if (rc >= 0)
        a->last_ok_ns = strobe__wall_ns();
    pthread_mutex_unlock(&d->lock);
    if (rc < 0) {
        a->failures++;
        if ((was || a->failures == 1) && !stopping(a)) /* not the round a removal aborted */
            strobe__log(d, STROBE_LOG_WARN, "producer %s: %s (%s); retrying", a->address,
                        strobe_strerror(rc), strobe__client_error(a->client));
    } else if (!was) {
        strobe__log(d, STROBE_LOG_INFO, "producer %s: connected, %zu set(s)", a->address, a->mirror.n);
    }
}

void strobe__aggregator_state(const struct strobe__aggregator *a, uint64_t now,
                              struct strobe__producer_state *out)
{
    uint64_t since = a->last_ok_ns ? a->last_ok_ns : a->started_ns;
    out->address = a->address;
    out->up = a->connected;
    out->age_ns = now > since ? now - since : 0;
    out->stale = !a->connected && out->age_ns >= a->stale_after_ns;
}

static void *producer_thread(void *arg)
{
    struct strobe__aggregator *a = arg;
    struct strobe__daemon *d = a->d;
    uint64_t interval = a->interval_ns;
    int more = 0;
    while (!stopping(a)) {
        /* the rest of a paged first round comes at once */
        if (!a->push && !more) {
            sleep_until(a, strobe__next_tick(strobe__wall_ns(), interval, a->offset_ns));
            if (stopping(a))
                break;
        }
        struct strobe__rd body;
        /* push: the producer holds the reply until a set changes, at most
         * one interval, so a silent producer still answers regularly */
        uint32_t wait_ms = a->push && !more ? (uint32_t)(interval / 1000000ull) : 0;
        /* the producer filters by `sets:`: unwanted sets never travel */
        int rc = strobe__client_update_fetch(a->client, &a->mirror, a->sets, a->nsets, wait_ms, &body,
                                             &more);
        if (stopping(a)) /* ended by a stop or a removal: not a failure to log */
            break;
        if (rc == 0) {
            pthread_mutex_lock(&d->lock);
            rc = strobe__client_update_apply(a->client, &a->mirror, &body, on_change, a);
            pthread_mutex_unlock(&d->lock);
        }
        if (rc < 0)
            more = 0;
        round_done(a, rc);
        a->backoff_ns = rc == -EACCES ? auth_backoff(a) : 0;
        if (a->backoff_ns)
            sleep_until(a, strobe__wall_ns() + a->backoff_ns);
        else if (rc < 0 && a->push)
            sleep_until(a, strobe__wall_ns() + interval); /* do not spin on a dead producer */
    }
    return NULL;
}

static int start_one(struct strobe__aggregator *a)
{
    a->started_ns = strobe__wall_ns();
    int rc = pthread_create(&a->thread, NULL, producer_thread, a);
    if (rc)
        return -rc;
    a->started = 1;
    return 0;
}

int strobe__aggregators_start(struct strobe__daemon *d)
{
    for (size_t i = 0; i < d->nprod; i++) {
        int rc = start_one(d->prod[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Ends a's thread alone: a request it waits for fails at once. */
static void stop_one(struct strobe__aggregator *a)
{
    a->stop = 1;
    strobe__client_abort(a->client);
    if (a->started)
        pthread_join(a->thread, NULL);
    a->started = 0;
    a->stop = 0;
}

/* After its thread ended: a's sets leave the registry, a is freed. */
static void free_one(struct strobe__daemon *d, struct strobe__aggregator *a)
{
    pthread_mutex_lock(&d->lock);
    for (size_t k = 0; k < a->mirror.n; k++)
        strobe__daemon_set_remove(d, a->mirror.sets[k]);
    pthread_mutex_unlock(&d->lock);
    close_in_background(d, a->client);
    strobe__mirror_free(&a->mirror);
    free(a->sets_owned);
    free(a->address);
    free(a->name);
    strobe__cfg_free(a->own_cfg);
    free(a);
}

void strobe__aggregators_free(struct strobe__daemon *d)
{
    /* a request under way would hold its thread up to the timeout (10 s
     * and more): it is ended instead (d->stop is set) */
    for (size_t i = 0; i < d->nprod; i++)
        if (d->prod[i] && d->prod[i]->started)
            strobe__client_abort(d->prod[i]->client);
    for (size_t i = 0; i < d->nprod; i++)
        if (d->prod[i] && d->prod[i]->started)
            pthread_join(d->prod[i]->thread, NULL);
    for (size_t i = 0; i < d->nprod; i++)
        if (d->prod[i])
            free_one(d, d->prod[i]);
    free(d->prod);
    d->prod = NULL;
    d->nprod = 0;
    /* the connections closing in the background: 2 s at most */
    for (int ms = 0; ms < 2000 && atomic_load(&d->closing) > 0; ms += 10)
        nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
    if (atomic_load(&d->closing) > 0) {
        d->nng_wedged = 1;
        strobe__log(d, STROBE_LOG_WARN,
                    "%d producer connection(s) did not close within 2 s (nng hangs in its reaper); exiting "
                    "without closing the network",
                    atomic_load(&d->closing));
    }
}

/* ---- runtime control ---------------------------------------------------------- */

static struct strobe__aggregator *find_one(struct strobe__daemon *d, const char *name, size_t *at, char *err,
                                           size_t errlen)
{
    for (size_t i = 0; i < d->nprod; i++)
        if (strcmp(d->prod[i]->name, name) == 0) {
            *at = i;
            return d->prod[i];
        }
    snprintf(err, errlen, "no producer named '%s'", name);
    return NULL;
}

int strobe__aggregator_add(struct strobe__daemon *d, struct strobe__cfg *entry, char *err, size_t errlen)
{
    struct strobe__aggregator *a = calloc(1, sizeof *a);
    if (!a)
        return -ENOMEM;
    /* room first (under the lock: /metrics walks d->prod), so that
     * parse_one compares names with a valid array */
    pthread_mutex_lock(&d->lock);
    struct strobe__aggregator **v = realloc(d->prod, (d->nprod + 1) * sizeof *v);
    if (v)
        d->prod = v;
    pthread_mutex_unlock(&d->lock);
    if (!v) {
        free(a);
        return -ENOMEM;
    }
    a->d = d;
    int rc = parse_one(d, entry, a, err, errlen);
    if (rc < 0) {
        free_one(d, a);
        return rc;
    }
    a->own_cfg = entry;
    pthread_mutex_lock(&d->lock);
    d->prod[d->nprod++] = a;
    pthread_mutex_unlock(&d->lock);
    if (d->sched_started && (rc = start_one(a)) < 0) {
        snprintf(err, errlen, "cannot start a thread: %s", strobe_strerror(rc));
        pthread_mutex_lock(&d->lock);
        d->nprod--; /* the last entry: control commands run one at a time */
        pthread_mutex_unlock(&d->lock);
        a->own_cfg = NULL; /* the caller still owns entry on failure */
        free_one(d, a);
        return rc;
    }
    strobe__log(d, STROBE_LOG_INFO, "producer %s (%s) added", a->name, a->address);
    return 0;
}

int strobe__aggregator_remove(struct strobe__daemon *d, const char *name, char *err, size_t errlen)
{
    size_t at;
    struct strobe__aggregator *a = find_one(d, name, &at, err, errlen);
    if (!a)
        return -ENOENT;
    pthread_mutex_lock(&d->lock);
    memmove(d->prod + at, d->prod + at + 1, (d->nprod - at - 1) * sizeof *d->prod);
    d->nprod--;
    pthread_mutex_unlock(&d->lock);
    stop_one(a);
    free_one(d, a);
    strobe__log(d, STROBE_LOG_INFO, "producer %s removed", name);
    return 0;
}

int strobe__aggregator_interval(struct strobe__daemon *d, const char *name, const char *duration, char *err,
                                size_t errlen)
{
    size_t at;
    struct strobe__aggregator *a = find_one(d, name, &at, err, errlen);
    if (!a)
        return -ENOENT;
    /* the new interval with a's other schedule keys, read as its entry
     * would be: same checks, same messages, same derived defaults */
    char words[4][300], *w[4];
    size_t n = 0;
    snprintf(words[n++], sizeof words[0], "interval=%s", duration);
    const struct { const char *key; uint64_t ns; int given; } keep[] = {
        { "offset", a->offset_ns, a->offset_ns != 0 },
        { "timeout", a->timeout_ns, a->timeout_set },
        { "stale_after", a->stale_after_ns, a->stale_set },
    };
    for (size_t i = 0; i < 3; i++)
        if (keep[i].given) {
            char dur[64];
            strobe__format_duration(keep[i].ns, dur, sizeof dur);
            snprintf(words[n++], sizeof words[0], "%s=%s", keep[i].key, dur);
        }
    for (size_t i = 0; i < n; i++)
        w[i] = words[i];
    struct strobe__cfg *c;
    struct strobe__aggregator t = { .d = d };
    int rc = strobe__cfg_from_words(w, n, &c, err, errlen);
    if (rc < 0)
        return rc;
    rc = parse_timing(c, &t, err, errlen);
    strobe__cfg_free(c);
    if (rc < 0)
        return rc;
    /* the thread restarts with the new timing; the connection, the mirror
     * and the sets in the registry stay */
    stop_one(a);
    pthread_mutex_lock(&d->lock);
    a->interval_ns = t.interval_ns;
    a->timeout_ns = t.timeout_ns;
    a->stale_after_ns = t.stale_after_ns;
    pthread_mutex_unlock(&d->lock);
    strobe__client_reset(a->client, request_ms(a));
    if (d->sched_started)
        rc = start_one(a);
    if (rc < 0) {
        /* nothing pulls from it now: take it out rather than keep a dead entry */
        snprintf(err, errlen, "producer %s: cannot restart (%s); removed", name, strobe_strerror(rc));
        strobe__aggregator_remove(d, name, err, 0);
        return rc;
    }
    strobe__log(d, STROBE_LOG_INFO, "producer %s: interval %s", name, duration);
    return 0;
}

void strobe__aggregator_describe(struct strobe__daemon *d, FILE *out)
{
    pthread_mutex_lock(&d->lock);
    uint64_t now = strobe__wall_ns();
    for (size_t i = 0; i < d->nprod; i++) {
        const struct strobe__aggregator *a = d->prod[i];
        struct strobe__producer_state st;
        strobe__aggregator_state(a, now, &st);
        size_t sets = 0;
        for (size_t k = 0; k < d->nsets; k++)
            sets += d->sets[k].source == a;
        char iv[64];
        strobe__format_duration(a->interval_ns, iv, sizeof iv);
        fprintf(out, "producer %s address=%s interval=%s mode=%s %s sets=%zu\n", a->name, a->address, iv,
                a->push ? "push" : "pull", st.up ? "up" : "down", sets);
    }
    pthread_mutex_unlock(&d->lock);
}
