/* SPDX-License-Identifier: MIT */
/*
 * strobed runtime: turns the configuration into plugin instances, keeps
 * the registry of sets, runs samplers on their interval/offset schedule
 * and passes every set update through the transforms (which may feed
 * each other: chains) to the stores. See daemon.h for the locking rule.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/build_config.h"
#include "strobed/aggregator.h"
#include "strobed/daemon.h"
#include "strobed/http.h"
#include "strobed/server.h"
#include "transport/auth.h"

#define MAX_CHAIN_DEPTH 16

struct strobe__instance {
    struct strobe_plugin_host host; /* first: plugins get &inst->host */
    struct strobe__daemon *d;
    const struct strobe_plugin *plugin;
    void *state;
    int opened;
    void *dl; /* dlopen handle of an external plugin */
    const struct strobe__cfg *cfg;
    struct strobe__cfg *own_cfg; /* cfg, when added at runtime (freed with the instance) */
    char *used; /* per key of cfg: read by someone */
    void **lists; /* arrays handed out by cfg_list */
    size_t nlists;
    char name[128];
    /* samplers: the sampling schedule; stores with a flush(): the flush
     * schedule (offset 0) */
    uint64_t interval_ns, offset_ns, next_ns;
    int sample_errors;
    char cfg_err[1024]; /* the first problem cfg_error reported, for the caller's err */
};

const char *const strobe__plugin_kind_names[] = { [STROBE_PLUGIN_SAMPLER] = "sampler",
                                                  [STROBE_PLUGIN_TRANSFORM] = "transform",
                                                  [STROBE_PLUGIN_STORE] = "store" };

/* the keys of an entry the daemon reads itself, by kind of plugin */
static const char *const own_keys[][5] = {
    [STROBE_PLUGIN_SAMPLER] = { "plugin", "name", "interval", "offset", NULL },
    [STROBE_PLUGIN_TRANSFORM] = { "plugin", "name", NULL },
    [STROBE_PLUGIN_STORE] = { "plugin", "name", "flush_interval", NULL },
};

/* ---- logging --------------------------------------------------------------- */

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int strobe__log_level_parse(const char *s, enum strobe_log_level *out)
{
    for (int i = 0; i <= STROBE_LOG_DEBUG; i++)
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum strobe_log_level)i;
            return 0;
        }
    return STROBE_ERR_SYNTAX;
}

static void vlog(struct strobe__daemon *d, enum strobe_log_level level, const char *who,
                 const char *fmt, va_list ap)
{
    if (level > d->log_level)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    char line[1024];
    int n = (int)strftime(line, sizeof line, "%Y-%m-%d %H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03ld %-5s %s%s", ts.tv_nsec / 1000000,
                  level_names[level], who ? who : "", who ? ": " : "");
    if (n < (int)sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* one fputs per line: lines from several threads do not interleave */
    size_t len = strlen(line);
    if (len + 1 < sizeof line) {
        line[len] = '\n';
        line[len + 1] = 0;
    }
    pthread_mutex_lock(&d->log_lock);
    fputs(line, d->log ? d->log : stderr);
    fflush(d->log ? d->log : stderr);
    pthread_mutex_unlock(&d->log_lock);
}

void strobe__daemon_reopen_log(struct strobe__daemon *d)
{
    if (!d->log_path)
        return;
    FILE *f = fopen(d->log_path, "a");
    if (!f) {
        strobe__log(d, STROBE_LOG_ERROR, "log_file %s: cannot reopen: %s; logging on to the old file",
                    d->log_path, strerror(errno));
        return;
    }
    pthread_mutex_lock(&d->log_lock);
    FILE *old = d->log;
    d->log = f;
    pthread_mutex_unlock(&d->log_lock);
    fclose(old);
    strobe__log(d, STROBE_LOG_INFO, "log file %s reopened", d->log_path);
}

void strobe__log(struct strobe__daemon *d, enum strobe_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(d, level, NULL, fmt, ap);
    va_end(ap);
}

/* ---- the host side of the plugin interface ---------------------------------- */

static struct strobe__instance *inst_of(const struct strobe_plugin_host *h)
{
    return (struct strobe__instance *)h;
}

static const struct strobe__cfg *key_node(const struct strobe_plugin_host *h, const char *key)
{
    struct strobe__instance *in = inst_of(h);
    const struct strobe__cfg *c = in->cfg;
    if (!c)
        return NULL;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->keys[i], key) == 0) {
            in->used[i] = 1;
            return c->items[i];
        }
    return NULL;
}

static int host_cfg_error(const struct strobe_plugin_host *h, const char *key, const char *fmt, ...)
{
    struct strobe__instance *in = inst_of(h);
    char msg[512], where[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    strobe__cfg_where(in->cfg, key, where, sizeof where);
    /* strobe__daemon_new hands this line back in err, so callers (and
     * tests) see file:line:key without reading the log */
    if (!in->cfg_err[0])
        snprintf(in->cfg_err, sizeof in->cfg_err, "%s%s: %s%s%s", where, in->name, key ? key : "",
                 key ? ": " : "", msg);
    strobe__log(in->d, STROBE_LOG_ERROR, "%s%s: %s%s%s", where, in->name, key ? key : "", key ? ": " : "",
                msg);
    return STROBE_ERR_SYNTAX;
}

static const char *host_cfg_str(const struct strobe_plugin_host *h, const char *key)
{
    const struct strobe__cfg *v = key_node(h, key);
    if (v && v->kind != STROBE_CFG_SCALAR) {
        host_cfg_error(h, key, "expected a single value");
        return NULL;
    }
    return v ? v->scalar : NULL;
}

static int host_cfg_list(const struct strobe_plugin_host *h, const char *key,
                         const char *const **items, size_t *n)
{
    struct strobe__instance *in = inst_of(h);
    const struct strobe__cfg *v = key_node(h, key);
    *n = 0;
    *items = NULL;
    if (!v)
        return 0;
    if (v->kind == STROBE_CFG_MAP)
        return host_cfg_error(h, key, "expected a list of values");
    /* a scalar is a list of one */
    size_t cnt = v->kind == STROBE_CFG_SEQ ? v->n : 1;
    const char **arr = calloc(cnt + 1, sizeof *arr);
    void **lists = realloc(in->lists, (in->nlists + 1) * sizeof *lists);
    if (!arr || !lists) {
        free(arr);
        if (lists)
            in->lists = lists;
        return -ENOMEM;
    }
    in->lists = lists;
    in->lists[in->nlists++] = arr; /* freed with the instance */
    for (size_t i = 0; i < cnt; i++) {
        const struct strobe__cfg *it = v->kind == STROBE_CFG_SEQ ? v->items[i] : v;
        if (it->kind != STROBE_CFG_SCALAR)
            return host_cfg_error(h, key, "item %zu: expected a single value", i + 1);
        arr[i] = it->scalar;
    }
    *items = arr;
    *n = cnt;
    return 0;
}

static int host_cfg_u64(const struct strobe_plugin_host *h, const char *key, uint64_t def,
                        uint64_t *out)
{
    const char *s = host_cfg_str(h, key);
    *out = def;
    if (!s)
        return key_node(h, key) ? STROBE_ERR_SYNTAX : 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || *end || errno || *s == '-')
        return host_cfg_error(h, key, "'%s' is not a non-negative integer", s);
    *out = v;
    return 0;
}

static int host_cfg_double(const struct strobe_plugin_host *h, const char *key, double def,
                           double *out)
{
    const char *s = host_cfg_str(h, key);
    *out = def;
    if (!s)
        return key_node(h, key) ? STROBE_ERR_SYNTAX : 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno)
        return host_cfg_error(h, key, "'%s' is not a number", s);
    *out = v;
    return 0;
}

static int host_cfg_duration(const struct strobe_plugin_host *h, const char *key, uint64_t def,
                             uint64_t *out)
{
    const char *s = host_cfg_str(h, key);
    unsigned long long ns;
    *out = def;
    if (!s)
        return key_node(h, key) ? STROBE_ERR_SYNTAX : 0;
    if (strobe__parse_duration(s, &ns) < 0)
        return host_cfg_error(h, key, "'%s' is not a duration (e.g. 500ms, 1s, 2m)", s);
    *out = ns;
    return 0;
}

static int host_set_add(const struct strobe_plugin_host *h, strobe_set *set, unsigned flags)
{
    struct strobe__instance *in = inst_of(h);
    return strobe__daemon_set_add(in->d, set, flags, in);
}

static void host_set_remove(const struct strobe_plugin_host *h, strobe_set *set)
{
    strobe__daemon_set_remove(inst_of(h)->d, set);
}

static void host_set_updated(const struct strobe_plugin_host *h, strobe_set *set)
{
    strobe__daemon_set_updated(inst_of(h)->d, set);
}

static void host_log(const struct strobe_plugin_host *h, enum strobe_log_level level,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(inst_of(h)->d, level, inst_of(h)->name, fmt, ap);
    va_end(ap);
}

/* ---- registry ---------------------------------------------------------------- */

/* The registry is an array (in insertion order until a removal: listings
 * and dispatch keep that order) plus an index by instance name, so that
 * an aggregator applying thousands of set updates per round does not
 * search linearly for each, and removing every set at shutdown is linear
 * too (a rebuild per removal took minutes for 40,000 sets). */
static const char *entry_name(const void *ctx, size_t pos)
{
    return strobe_set_instance(((const struct strobe__daemon *)ctx)->sets[pos].set);
}

struct strobe__set_entry *strobe__daemon_set_find(struct strobe__daemon *d, const char *instance)
{
    size_t pos = strobe__name_index_find(&d->index, instance, entry_name, d);
    return pos == STROBE__NAME_NONE ? NULL : &d->sets[pos];
}

static void wake(struct strobe__daemon *d)
{
    d->change_seq++;
    pthread_cond_broadcast(&d->changed);
}

int strobe__daemon_set_add(struct strobe__daemon *d, strobe_set *set, unsigned flags,
                           struct strobe__instance *owner)
{
    if (strobe__daemon_set_find(d, strobe_set_instance(set))) {
        strobe__log(d, STROBE_LOG_WARN, "set %s exists already; the second one is not added",
                    strobe_set_instance(set));
        return -EEXIST;
    }
    if (d->nsets == d->capsets) {
        size_t cap = d->capsets ? d->capsets * 2 : 32;
        struct strobe__set_entry *s = realloc(d->sets, cap * sizeof *s);
        if (!s)
            return -ENOMEM;
        d->sets = s;
        d->capsets = cap;
    }
    d->sets[d->nsets] = (struct strobe__set_entry){ set, flags, owner, NULL };
    if (strobe__name_index_add(&d->index, d->nsets, d->nsets + 1, entry_name, d) < 0)
        return -ENOMEM;
    d->nsets++;
    wake(d);
    return 0;
}

/* O(1) apart from the probe chain: the last entry takes the removed one's
 * place. */
void strobe__daemon_set_remove(struct strobe__daemon *d, strobe_set *set)
{
    struct strobe__set_entry *e = strobe__daemon_set_find(d, strobe_set_instance(set));
    if (!e || e->set != set)
        return;
    size_t i = (size_t)(e - d->sets), last = d->nsets - 1;
    int borrowed = (e->flags & STROBE__SET_BORROWED) != 0;
    strobe__name_index_remove(&d->index, i, last, entry_name, d);
    d->sets[i] = d->sets[last];
    d->nsets--;
    if (!borrowed) /* after the index no longer needs its name */
        strobe_set_free(set);
    wake(d);
}

void strobe__daemon_set_updated(struct strobe__daemon *d, strobe_set *set)
{
    if (d->dispatch_depth >= MAX_CHAIN_DEPTH) {
        strobe__log(d, STROBE_LOG_ERROR, "set %s: transform chain deeper than %d (a cycle?); "
                    "not passed on", strobe_set_instance(set), MAX_CHAIN_DEPTH);
        return;
    }
    d->dispatch_depth++;
    /* only transforms and stores take updates: walking every instance made
     * a sampler's update cost grow with the number of samplers */
    for (size_t i = 0; i < d->ncons; i++) {
        struct strobe__instance *in = d->cons[i];
        if (!in->opened)
            continue;
        int rc = in->plugin->update(in->state, set);
        if (rc < 0)
            strobe__log(d, STROBE_LOG_WARN, "%s: update with %s: %s", in->name,
                        strobe_set_instance(set), strobe_strerror(rc));
    }
    d->dispatch_depth--;
    wake(d);
}

/* ---- instances ------------------------------------------------------------------ */

static const struct strobe_plugin *find_plugin(struct strobe__daemon *d, const char *name,
                                               void **dl, char *err, size_t errlen)
{
    *dl = NULL;
    for (size_t i = 0; strobe__builtin_plugins[i]; i++)
        if (strcmp(strobe__builtin_plugins[i]->name, name) == 0)
            return strobe__builtin_plugins[i];
    if (!STROBE_WITH_PETRA && strcmp(name, "petra") == 0) {
        snprintf(err, errlen, "petra: " STROBE_WITHOUT("PETRA"));
        return NULL;
    }
    if (!STROBE_WITH_REMOTE_WRITE && strcmp(name, "remote_write") == 0) {
        snprintf(err, errlen, "remote_write: " STROBE_WITHOUT("REMOTE_WRITE"));
        return NULL;
    }
    if (!STROBE_WITH_INFLUX && strcmp(name, "influx") == 0) {
        snprintf(err, errlen, "influx: " STROBE_WITHOUT("INFLUX"));
        return NULL;
    }
    if (!STROBE_WITH_POSTGRES && strcmp(name, "postgres") == 0) {
        snprintf(err, errlen, "postgres: " STROBE_WITHOUT("POSTGRES"));
        return NULL;
    }
    /* external: a path, or libstrobe_<name>.so on the plugin path */
    char path[4096];
    const struct strobe__cfg *pp = strobe__cfg_get(d->cfg, "plugin_path");
    const char *dir = pp && pp->kind == STROBE_CFG_SCALAR ? pp->scalar : getenv("STROBE_PLUGIN_PATH");
    if (strchr(name, '/'))
        snprintf(path, sizeof path, "%s", name);
    else if (dir)
        snprintf(path, sizeof path, "%s/libstrobe_%s.so", dir, name);
    else
        snprintf(path, sizeof path, "libstrobe_%s.so", name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "no built-in plugin '%s' and %s", name, dlerror());
        return NULL;
    }
    const struct strobe_plugin *(*entry)(void) =
        (const struct strobe_plugin *(*)(void))dlsym(h, "strobe_plugin_entry");
    const struct strobe_plugin *p = entry ? entry() : NULL;
    if (!p || p->abi != STROBE_PLUGIN_ABI || !p->name || !p->open || !p->close ||
        (p->kind == STROBE_PLUGIN_SAMPLER && !p->sample) ||
        (p->kind != STROBE_PLUGIN_SAMPLER && !p->update)) {
        snprintf(err, errlen, "%s: not a strobe plugin of ABI %d (strobe_plugin_entry missing "
                 "or incomplete)", path, STROBE_PLUGIN_ABI);
        dlclose(h);
        return NULL;
    }
    *dl = h;
    return p;
}

static void inst_free(struct strobe__instance *in)
{
    if (!in)
        return;
    /* the instance's sets go first (they belong to the daemon once added,
     * even when open() failed after adding them); close() may free what
     * they point to */
    for (size_t i = in->d->nsets; i-- > 0;)
        if (in->d->sets[i].owner == in)
            strobe__daemon_set_remove(in->d, in->d->sets[i].set);
    if (in->opened)
        in->plugin->close(in->state);
    for (size_t i = 0; i < in->nlists; i++)
        free(in->lists[i]);
    free(in->lists);
    free(in->used);
    if (in->dl)
        dlclose(in->dl);
    strobe__cfg_free(in->own_cfg);
    free(in);
}

/* Puts `in` into v (n entries, room for one more) after every instance
 * of its kind or an earlier one: samplers, then transforms, then stores,
 * whatever order they were added in (the scheduler samples before it
 * flushes; shutdown frees consumers before what they consume). */
static void insert_by_kind(struct strobe__instance **v, size_t n, struct strobe__instance *in)
{
    size_t at = n;
    while (at > 0 && v[at - 1]->plugin->kind > in->plugin->kind)
        at--;
    memmove(v + at + 1, v + at, (n - at) * sizeof *v);
    v[at] = in;
}

/* Takes `in` out of v (n entries) if it is there; returns the new count. */
static size_t unlink_from(struct strobe__instance **v, size_t n, const struct strobe__instance *in)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == in) {
            memmove(v + i, v + i + 1, (n - i - 1) * sizeof *v);
            return n - 1;
        }
    return n;
}

/* Ends instance `in` (lock held): out of the schedule and dispatch, its
 * sets removed, closed, freed. */
static void inst_end(struct strobe__daemon *d, struct strobe__instance *in)
{
    d->ninst = unlink_from(d->inst, d->ninst, in);
    d->ncons = unlink_from(d->cons, d->ncons, in);
    inst_free(in);
}

static int cfg_fail(const struct strobe__cfg *c, const char *key, char *err, size_t errlen,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int cfg_fail(const struct strobe__cfg *c, const char *key, char *err, size_t errlen,
                    const char *fmt, ...)
{
    char where[300];
    int n = snprintf(err, errlen, "%s%s%s", strobe__cfg_where(c, key, where, sizeof where),
                     key ? key : "", key ? ": " : "");
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return STROBE_ERR_SYNTAX;
}

static const char *scalar(const struct strobe__cfg *c, const char *key)
{
    const struct strobe__cfg *v = strobe__cfg_get(c, key);
    return v && v->kind == STROBE_CFG_SCALAR ? v->scalar : NULL;
}

/* The schedule keys of an entry: samplers sample every `interval` shifted
 * by `offset`, stores flush every `flush_interval` (default 1 s). */
static int parse_schedule(const struct strobe__cfg *c, enum strobe_plugin_kind kind, uint64_t *interval,
                          uint64_t *offset, char *err, size_t errlen)
{
    const char *ikey = kind == STROBE_PLUGIN_SAMPLER ? "interval" : "flush_interval";
    unsigned long long iv = 1000000000ull, off = 0;
    const char *s;
    int rc;
    if (kind != STROBE_PLUGIN_TRANSFORM && (s = scalar(c, ikey)) && (rc = strobe__parse_interval(s, &iv)) < 0) {
        if (rc == -ERANGE)
            return cfg_fail(c, ikey, err, errlen, "'%s' is below the minimum interval of %s", s,
                            STROBE__MIN_INTERVAL_TEXT);
        return cfg_fail(c, ikey, err, errlen, "'%s' is not a positive duration", s);
    }
    if (kind == STROBE_PLUGIN_SAMPLER && (s = scalar(c, "offset")) &&
        (strobe__parse_duration(s, &off) < 0 || off >= iv))
        return cfg_fail(c, "offset", err, errlen, "'%s' is not a duration below the interval", s);
    *interval = iv;
    *offset = off;
    return 0;
}

/* One entry of samplers/transforms/stores (lock held): opened and in the
 * schedule and dispatch, or, on failure, nothing of it left. */
static int inst_new(struct strobe__daemon *d, const struct strobe__cfg *c,
                    enum strobe_plugin_kind kind, char *err, size_t errlen,
                    struct strobe__instance **out)
{
    const char *const *section = strobe__plugin_kind_names;
    if (c->kind != STROBE_CFG_MAP)
        return cfg_fail(c, NULL, err, errlen, "a %s entry must be a mapping with a 'plugin' key",
                        section[kind]);
    const char *pname = scalar(c, "plugin");
    if (!pname)
        return cfg_fail(c, NULL, err, errlen, "%s entry without 'plugin'", section[kind]);
    void *dl;
    char perr[4608];
    const struct strobe_plugin *p = find_plugin(d, pname, &dl, perr, sizeof perr);
    if (!p)
        return cfg_fail(c, "plugin", err, errlen, "%s", perr);
    if (p->kind != kind) {
        if (dl)
            dlclose(dl);
        return cfg_fail(c, "plugin", err, errlen, "'%s' is a %s plugin, listed under %ss",
                        pname, section[p->kind], section[kind]);
    }
    struct strobe__instance *in = calloc(1, sizeof *in);
    if (!in || !(in->used = calloc(c->n + 1, 1))) {
        free(in);
        return -ENOMEM;
    }
    in->d = d;
    in->plugin = p;
    in->dl = dl;
    in->cfg = c;
    const char *name = scalar(c, "name");
    snprintf(in->name, sizeof in->name, "%s", name ? name : pname);
    for (size_t i = 0; i < d->ninst; i++)
        if (strcmp(d->inst[i]->name, in->name) == 0) {
            inst_free(in);
            return cfg_fail(c, name ? "name" : "plugin", err, errlen,
                            "a second instance named '%s' (give each a distinct 'name')",
                            name ? name : pname);
        }
    for (size_t i = 0; i < c->n; i++)
        for (size_t k = 0; own_keys[kind][k]; k++)
            if (strcmp(c->keys[i], own_keys[kind][k]) == 0)
                in->used[i] = 1;
    in->host = (struct strobe_plugin_host){
        .impl = d, .name = in->name, .producer = d->producer,
        .cfg_str = host_cfg_str, .cfg_list = host_cfg_list, .cfg_u64 = host_cfg_u64,
        .cfg_double = host_cfg_double, .cfg_duration = host_cfg_duration,
        .cfg_error = host_cfg_error, .set_add = host_set_add, .set_remove = host_set_remove,
        .set_updated = host_set_updated, .log = host_log,
    };
    int rc = parse_schedule(c, kind, &in->interval_ns, &in->offset_ns, err, errlen);
    if (rc < 0) {
        inst_free(in);
        return rc;
    }
    struct strobe__instance **v = realloc(d->inst, (d->ninst + 1) * sizeof *v);
    struct strobe__instance **cv = v ? realloc(d->cons, (d->ncons + 1) * sizeof *cv) : NULL;
    if (v)
        d->inst = v;
    if (cv)
        d->cons = cv;
    if (!cv) {
        inst_free(in);
        return -ENOMEM;
    }
    insert_by_kind(d->inst, d->ninst++, in);
    rc = p->open(&in->host, &in->state);
    if (rc < 0) {
        d->ninst = unlink_from(d->inst, d->ninst, in);
        /* the plugin reported configuration errors itself (logged with
         * file:line:key, and the first one kept); other failures get one
         * line here */
        if (rc == STROBE_ERR_SYNTAX && in->cfg_err[0]) {
            snprintf(err, errlen, "%s", in->cfg_err);
            inst_free(in);
            return rc;
        }
        inst_free(in);
        if (rc == STROBE_ERR_SYNTAX)
            return cfg_fail(c, NULL, err, errlen, "%s: invalid configuration (see above)", pname);
        return cfg_fail(c, NULL, err, errlen, "%s: cannot start: %s", pname, strobe_strerror(rc));
    }
    in->opened = 1;
    if (p->kind != STROBE_PLUGIN_SAMPLER)
        insert_by_kind(d->cons, d->ncons++, in);
    for (size_t i = 0; i < c->n; i++)
        if (!in->used[i]) {
            cfg_fail(c, c->keys[i], err, errlen, "unknown key for plugin %s", pname);
            inst_end(d, in);
            return STROBE_ERR_SYNTAX;
        }
    in->next_ns = strobe__next_tick(strobe__wall_ns(), in->interval_ns, in->offset_ns);
    *out = in;
    return 0;
}

/* ---- scheduling -------------------------------------------------------------------- */

uint64_t strobe__wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t strobe__next_tick(uint64_t now, uint64_t interval, uint64_t offset)
{
    uint64_t base = now >= offset ? now - offset : 0;
    return (base / interval + 1) * interval + offset;
}

static void run_sampler(struct strobe__daemon *d, struct strobe__instance *in, uint64_t now)
{
    int rc = in->plugin->sample(in->state, now);
    if (rc < 0) {
        /* log the first failure and every 100th after it: a broken source
         * must not flood the log */
        if (in->sample_errors++ % 100 == 0)
            strobe__log(d, STROBE_LOG_WARN, "%s: sample failed: %s (%d time(s))", in->name,
                        strobe_strerror(rc), in->sample_errors);
    }
}

void strobe__daemon_flush_stores(struct strobe__daemon *d)
{
    for (size_t i = 0; i < d->ninst; i++)
        if (d->inst[i]->opened && d->inst[i]->plugin->flush)
            d->inst[i]->plugin->flush(d->inst[i]->state);
}

int strobe__daemon_sample_all(struct strobe__daemon *d, uint64_t now_ns)
{
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->ninst; i++)
        if (d->inst[i]->plugin->kind == STROBE_PLUGIN_SAMPLER)
            run_sampler(d, d->inst[i], now_ns);
    pthread_mutex_unlock(&d->lock);
    return 0;
}

/* Samplers sample on their schedule; stores that buffer (have a flush())
 * flush on theirs, so a crash loses at most one flush interval of data. */
static int scheduled(const struct strobe__instance *in)
{
    return in->plugin->kind == STROBE_PLUGIN_SAMPLER ||
           (in->plugin->kind == STROBE_PLUGIN_STORE && in->plugin->flush);
}

static void *scheduler(void *arg)
{
    struct strobe__daemon *d = arg;
    uint64_t now;
    while (!d->stop) {
        uint64_t next = UINT64_MAX;
        /* under the lock: runtime control adds and removes instances */
        pthread_mutex_lock(&d->lock);
        for (size_t i = 0; i < d->ninst; i++)
            if (scheduled(d->inst[i]) && d->inst[i]->next_ns < next)
                next = d->inst[i]->next_ns;
        pthread_mutex_unlock(&d->lock);
        now = strobe__wall_ns();
        if (next > now) {
            /* sleep on the stop pipe so shutdown is immediate, and on the
             * schedule pipe so an added sampler's first tick is not late */
            uint64_t wait_ms = next == UINT64_MAX ? 1000 : (next - now + 999999) / 1000000;
            struct pollfd pfd[2] = { { d->stop_pipe[0], POLLIN, 0 }, { d->sched_pipe[0], POLLIN, 0 } };
            if (poll(pfd, 2, (int)(wait_ms > 1000 ? 1000 : wait_ms)) > 0 && (pfd[1].revents & POLLIN)) {
                char buf[64];
                while (read(d->sched_pipe[0], buf, sizeof buf) > 0)
                    ;
            }
            continue;
        }
        pthread_mutex_lock(&d->lock);
        /* samplers come before stores in d->inst: a flush due at the same
         * tick as a sample writes that sample too */
        for (size_t i = 0; i < d->ninst; i++) {
            struct strobe__instance *in = d->inst[i];
            if (!scheduled(in) || in->next_ns > now)
                continue;
            if (in->plugin->kind == STROBE_PLUGIN_SAMPLER)
                run_sampler(d, in, now);
            else
                in->plugin->flush(in->state);
            /* a late tick is not replayed: skip to the next grid point */
            in->next_ns = strobe__next_tick(strobe__wall_ns(), in->interval_ns, in->offset_ns);
        }
        pthread_mutex_unlock(&d->lock);
    }
    return NULL;
}

/* ---- life cycle -------------------------------------------------------------------- */

static const char *const top_keys[] = { "daemon", "plugin_path", "samplers", "producers",
                                        "transforms", "stores", NULL };
static const char *const daemon_keys[] = { "producer",     "listen",        "http",         "secret_file",
                                           "log_level",    "log_file",      "http_token_file",
                                           "http_tls_cert", "http_tls_key", NULL };

static int check_keys(const struct strobe__cfg *c, const char *const *allowed, const char *where,
                      char *err, size_t errlen)
{
    for (size_t i = 0; i < c->n; i++) {
        size_t k = 0;
        while (allowed[k] && strcmp(allowed[k], c->keys[i]) != 0)
            k++;
        if (!allowed[k])
            return cfg_fail(c, c->keys[i], err, errlen, "unknown key%s%s", where ? " in " : "",
                            where ? where : "");
    }
    return 0;
}

static int read_secret(const char *path, char **out, char *err, size_t errlen)
{
    int rc = strobe__auth_read_secret(path, out, err, errlen);
    if (rc < 0)
        return rc;
    if (strlen(*out) < 8) {
        snprintf(err, errlen, "%s: the shared secret must be at least 8 characters", path);
        free(*out);
        *out = NULL;
        return STROBE_ERR_SYNTAX;
    }
    return 0;
}

static int daemon_section(struct strobe__daemon *d, const struct strobe__cfg *c, char *err,
                          size_t errlen)
{
    if (c->kind != STROBE_CFG_MAP)
        return cfg_fail(c, NULL, err, errlen, "daemon: expected a mapping");
    int rc = check_keys(c, daemon_keys, "daemon", err, errlen);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i]->kind != STROBE_CFG_SCALAR)
            return cfg_fail(c, c->keys[i], err, errlen, "expected a single value");
    const char *s;
    if ((s = scalar(c, "producer"))) {
        if (!*s || strchr(s, '/') || strlen(s) > STROBE_SET_NAME_MAX)
            return cfg_fail(c, "producer", err, errlen, "'%s' is not a producer name (no '/')", s);
        snprintf(d->producer, sizeof d->producer, "%s", s);
    }
    if ((s = scalar(c, "log_level")) && strobe__log_level_parse(s, &d->log_level) < 0)
        return cfg_fail(c, "log_level", err, errlen, "'%s': expected error, warn, info or debug", s);
    if ((s = scalar(c, "log_file"))) {
        if (!(d->log = fopen(s, "a")))
            return cfg_fail(c, "log_file", err, errlen, "%s: %s", s, strerror(errno));
        if (!(d->log_path = strdup(s)))
            return -ENOMEM;
    }
    static const char *const addr_keys[] = { "listen", "http" };
    for (size_t i = 0; i < 2; i++)
        if ((s = scalar(c, addr_keys[i])) && strobe__check_port(s) < 0)
            return cfg_fail(c, addr_keys[i], err, errlen, "'%s' has no port from 1 to 65535", s);
    if ((s = scalar(c, "listen")) && !(d->listen = strdup(s)))
        return -ENOMEM;
    if ((s = scalar(c, "http")) && !(d->http_listen = strdup(s)))
        return -ENOMEM;
    if ((s = scalar(c, "secret_file")) && (rc = read_secret(s, &d->secret, err, errlen)) < 0)
        return rc;
    if ((s = scalar(c, "http_token_file")) && (rc = read_secret(s, &d->http_token, err, errlen)) < 0)
        return rc;
    if (!d->http_token && d->secret && !(d->http_token = strdup(d->secret)))
        return -ENOMEM;
    const char *cert = scalar(c, "http_tls_cert"), *key = scalar(c, "http_tls_key");
    if (!cert != !key)
        return cfg_fail(c, cert ? "http_tls_cert" : "http_tls_key", err, errlen,
                        "http_tls_cert and http_tls_key go together");
    if (cert && (!(d->http_tls_cert = strdup(cert)) || !(d->http_tls_key = strdup(key))))
        return -ENOMEM;
    return 0;
}

int strobe__daemon_new(struct strobe__cfg *cfg, struct strobe__daemon **out, char *err,
                       size_t errlen)
{
    struct strobe__daemon *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    pthread_mutex_init(&d->lock, NULL);
    pthread_mutex_init(&d->ctl_lock, NULL);
    pthread_mutex_init(&d->log_lock, NULL);
    /* the server's waiter computes its deadlines on CLOCK_MONOTONIC; with
     * the default (CLOCK_REALTIME) every timed wait would be long past
     * and return at once, a busy loop on d->lock */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->changed, &ca);
    pthread_condattr_destroy(&ca);
    d->stop_pipe[0] = d->stop_pipe[1] = d->sched_pipe[0] = d->sched_pipe[1] = -1;
    d->cfg = cfg;
    d->log_level = STROBE_LOG_INFO;
    if (gethostname(d->producer, sizeof d->producer - 1) < 0 || !d->producer[0])
        snprintf(d->producer, sizeof d->producer, "localhost");
    char *dot = strchr(d->producer, '.');
    if (dot)
        *dot = 0;
    int rc = check_keys(cfg, top_keys, NULL, err, errlen);
    const struct strobe__cfg *c;
    if (rc == 0 && (c = strobe__cfg_get(cfg, "daemon")))
        rc = daemon_section(d, c, err, errlen);
    static const struct { const char *key; enum strobe_plugin_kind kind; } sections[] = {
        { "samplers", STROBE_PLUGIN_SAMPLER },
        { "transforms", STROBE_PLUGIN_TRANSFORM },
        { "stores", STROBE_PLUGIN_STORE },
    };
    pthread_mutex_lock(&d->lock);
    for (size_t s = 0; rc == 0 && s < 3; s++) {
        if (!(c = strobe__cfg_get(cfg, sections[s].key)))
            continue;
        if (c->kind != STROBE_CFG_SEQ) {
            rc = cfg_fail(cfg, sections[s].key, err, errlen, "expected a list of entries ('- plugin: ...')");
            break;
        }
        struct strobe__instance *in;
        for (size_t i = 0; rc == 0 && i < c->n; i++)
            rc = inst_new(d, c->items[i], sections[s].kind, err, errlen, &in);
    }
    pthread_mutex_unlock(&d->lock);
    if (rc == 0 && (c = strobe__cfg_get(cfg, "producers")))
        rc = strobe__aggregators_new(d, c, err, errlen);
    if (rc < 0) {
        d->cfg = NULL; /* the caller still owns it on failure */
        strobe__daemon_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* strobe__daemon_start, ctl_lock held: control requests the server
 * answers wait until every thread runs */
static int daemon_start(struct strobe__daemon *d, char *err, size_t errlen)
{
    int rc;
    if (pipe(d->stop_pipe) < 0 || pipe(d->sched_pipe) < 0)
        return -errno;
    /* neither a full pipe nor an empty one may block: it only wakes */
    for (int i = 0; i < 2; i++)
        fcntl(d->sched_pipe[i], F_SETFL, fcntl(d->sched_pipe[i], F_GETFL) | O_NONBLOCK);
    if (d->listen && (rc = strobe__server_start(d, d->listen, &d->server, err, errlen)) < 0)
        return rc;
    if (d->http_listen && (rc = strobe__http_start(d, d->http_listen, &d->http, err, errlen)) < 0)
        return rc;
    if ((rc = pthread_create(&d->sched, NULL, scheduler, d)) != 0)
        return -rc;
    d->sched_started = 1;
    if ((rc = strobe__aggregators_start(d)) < 0) {
        snprintf(err, errlen, "cannot start aggregation: %s", strobe_strerror(rc));
        return rc;
    }
    return 0;
}

int strobe__daemon_start(struct strobe__daemon *d, char *err, size_t errlen)
{
    pthread_mutex_lock(&d->ctl_lock);
    int rc = daemon_start(d, err, errlen);
    pthread_mutex_unlock(&d->ctl_lock);
    return rc;
}

void strobe__daemon_free(struct strobe__daemon *d)
{
    if (!d)
        return;
    /* a control command in progress ends first; later ones see stop */
    pthread_mutex_lock(&d->ctl_lock);
    d->stop = 1;
    pthread_mutex_unlock(&d->ctl_lock);
    if (d->stop_pipe[1] >= 0 && write(d->stop_pipe[1], "x", 1) < 0)
        strobe__log(d, STROBE_LOG_DEBUG, "stop pipe: %s", strerror(errno));
    pthread_mutex_lock(&d->lock);
    wake(d);
    pthread_mutex_unlock(&d->lock);
    if (d->sched_started)
        pthread_join(d->sched, NULL);
    strobe__aggregators_free(d);
    strobe__http_stop(d->http);
    strobe__server_stop(d->server);
    pthread_mutex_lock(&d->lock);
    strobe__daemon_flush_stores(d);
    /* stores and transforms first, then samplers: later entries consume
     * earlier ones' sets */
    for (size_t i = d->ninst; i-- > 0;)
        inst_free(d->inst[i]);
    for (size_t i = 0; i < d->nsets; i++)
        if (!(d->sets[i].flags & STROBE__SET_BORROWED))
            strobe_set_free(d->sets[i].set);
    pthread_mutex_unlock(&d->lock);
    free(d->inst);
    free(d->cons);
    free(d->sets);
    strobe__name_index_free(&d->index);
    free(d->listen);
    free(d->http_listen);
    free(d->http_tls_cert);
    free(d->http_tls_key);
    if (d->http_token) {
        memset(d->http_token, 0, strlen(d->http_token));
        free(d->http_token);
    }
    if (d->secret) {
        /* do not leave the secret in freed memory */
        memset(d->secret, 0, strlen(d->secret));
        free(d->secret);
    }
    if (d->log)
        fclose(d->log);
    free(d->log_path);
    for (int i = 0; i < 2; i++) {
        if (d->stop_pipe[i] >= 0)
            close(d->stop_pipe[i]);
        if (d->sched_pipe[i] >= 0)
            close(d->sched_pipe[i]);
    }
    strobe__cfg_free(d->cfg);
    pthread_mutex_destroy(&d->lock);
    pthread_mutex_destroy(&d->ctl_lock);
    pthread_mutex_destroy(&d->log_lock);
    pthread_cond_destroy(&d->changed);
    free(d);
}

/* ---- runtime control ----------------------------------------------------------- */

/* The scheduler recomputes its next wake-up (a full pipe is awake anyway). */
static void sched_changed(struct strobe__daemon *d)
{
    if (d->sched_pipe[1] >= 0 && write(d->sched_pipe[1], "x", 1) < 0 && errno != EAGAIN)
        strobe__log(d, STROBE_LOG_DEBUG, "schedule pipe: %s", strerror(errno));
}

static struct strobe__instance *inst_find(struct strobe__daemon *d, enum strobe_plugin_kind kind,
                                          const char *name, char *err, size_t errlen)
{
    for (size_t i = 0; i < d->ninst; i++)
        if (d->inst[i]->plugin->kind == kind && strcmp(d->inst[i]->name, name) == 0)
            return d->inst[i];
    snprintf(err, errlen, "no %s named '%s'", strobe__plugin_kind_names[kind], name);
    return NULL;
}

int strobe__daemon_inst_add(struct strobe__daemon *d, enum strobe_plugin_kind kind, struct strobe__cfg *entry,
                            char *err, size_t errlen)
{
    struct strobe__instance *in;
    pthread_mutex_lock(&d->lock);
    int rc = inst_new(d, entry, kind, err, errlen, &in);
    if (rc == 0) {
        in->own_cfg = entry;
        sched_changed(d);
        strobe__log(d, STROBE_LOG_INFO, "%s %s (%s) added", strobe__plugin_kind_names[kind], in->name,
                    in->plugin->name);
    }
    pthread_mutex_unlock(&d->lock);
    return rc;
}

int strobe__daemon_inst_remove(struct strobe__daemon *d, enum strobe_plugin_kind kind, const char *name,
                               char *err, size_t errlen)
{
    pthread_mutex_lock(&d->lock);
    struct strobe__instance *in = inst_find(d, kind, name, err, errlen);
    if (in) {
        if (in->plugin->flush) /* what a store buffered reaches its output */
            in->plugin->flush(in->state);
        inst_end(d, in);
        strobe__log(d, STROBE_LOG_INFO, "%s %s removed", strobe__plugin_kind_names[kind], name);
    }
    pthread_mutex_unlock(&d->lock);
    return in ? 0 : -ENOENT;
}

int strobe__daemon_inst_interval(struct strobe__daemon *d, enum strobe_plugin_kind kind, const char *name,
                                 const char *duration, char *err, size_t errlen)
{
    if (kind == STROBE_PLUGIN_TRANSFORM) {
        snprintf(err, errlen, "a transform has no interval (it runs on every update of its inputs)");
        return STROBE_ERR_SYNTAX;
    }
    pthread_mutex_lock(&d->lock);
    struct strobe__instance *in = inst_find(d, kind, name, err, errlen);
    int rc = in ? 0 : -ENOENT;
    if (in) {
        /* the new interval with the instance's offset, read as the entry
         * would be: same checks, same messages */
        char iv[300], off[64];
        strobe__format_duration(in->offset_ns, off, sizeof off);
        snprintf(iv, sizeof iv, "%s=%s", kind == STROBE_PLUGIN_SAMPLER ? "interval" : "flush_interval", duration);
        char offw[80];
        snprintf(offw, sizeof offw, "offset=%s", off);
        char *words[] = { iv, offw };
        struct strobe__cfg *c;
        uint64_t interval, offset;
        rc = strobe__cfg_from_words(words, in->offset_ns ? 2 : 1, &c, err, errlen);
        if (rc == 0) {
            rc = parse_schedule(c, kind, &interval, &offset, err, errlen);
            strobe__cfg_free(c);
        }
        if (rc == 0) {
            in->interval_ns = interval;
            in->next_ns = strobe__next_tick(strobe__wall_ns(), interval, in->offset_ns);
            sched_changed(d);
            strobe__log(d, STROBE_LOG_INFO, "%s %s: interval %s", strobe__plugin_kind_names[kind], name, duration);
        }
    }
    pthread_mutex_unlock(&d->lock);
    return rc;
}

void strobe__daemon_inst_describe(struct strobe__daemon *d, FILE *out)
{
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->ninst; i++) {
        const struct strobe__instance *in = d->inst[i];
        size_t sets = 0;
        for (size_t k = 0; k < d->nsets; k++)
            sets += d->sets[k].owner == in;
        char iv[64], off[64];
        strobe__format_duration(in->interval_ns, iv, sizeof iv);
        strobe__format_duration(in->offset_ns, off, sizeof off);
        fprintf(out, "%s %s plugin=%s", strobe__plugin_kind_names[in->plugin->kind], in->name, in->plugin->name);
        if (in->plugin->kind == STROBE_PLUGIN_SAMPLER)
            fprintf(out, " interval=%s offset=%s", iv, off);
        else if (in->plugin->kind == STROBE_PLUGIN_STORE)
            fprintf(out, " flush_interval=%s", iv);
        fprintf(out, " sets=%zu\n", sets);
    }
    pthread_mutex_unlock(&d->lock);
}
