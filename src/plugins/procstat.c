/* SPDX-License-Identifier: MIT */
/*
 * `procstat` sampler: /proc/stat as one set. The ten CPU time columns are
 * u64 arrays of ncpu + 1 elements: element 0 is the "cpu" total line,
 * element k + 1 is the line "cpuk". The kernel leaves offline CPUs out of
 * the file; a set has one validity bit per metric, not per element, so
 * the u8 array cpu_online says which elements hold a value in this sample
 * (1: the line was there) and the elements of a missing line are 0. The
 * scalars ctxt, intr (the total, first number of its line), processes,
 * procs_running, procs_blocked and btime are invalid when their line is
 * missing. Like meminfo, a sample is one pread() of the kept-open file and
 * one pass over it (the intr line can be thousands of numbers; only its
 * first is read).
 *   keys: component_id (meta metric, default 0), instance (set name),
 *         path (default /proc/stat; tests use fixture copies),
 *         cpus (array slots for cpu0..cpuN-1; default: the highest cpuN in
 *         the file at start + 1, and for /proc/stat at least the number of
 *         configured CPUs, so CPUs offline at start get a slot)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins/plugins.h"
#include "plugins/procfile.h"

#define NFIELDS 10
#define MAX_CPUS 65534u          /* count is a u32 but the set must fit 64 MiB */

static const char *const field_names[NFIELDS] = {"user", "nice",    "system", "idle",  "iowait",
                                                 "irq",  "softirq", "steal",  "guest", "guest_nice"};

/* Scalar lines, in the kernel's order (which the parser does not rely on). */
enum { SC_INTR, SC_CTXT, SC_BTIME, SC_PROCESSES, SC_RUNNING, SC_BLOCKED, NSCALARS };
static const char *const scalar_names[NSCALARS] = {"intr",      "ctxt",          "btime",
                                                   "processes", "procs_running", "procs_blocked"};

/* Metric indices in the set. */
#define M_COMP 0
#define M_FIELD0 1
#define M_ONLINE (M_FIELD0 + NFIELDS)
#define M_SCALAR0 (M_ONLINE + 1)

struct procstat {
    const struct strobe_plugin_host *h;
    struct strobe__procfile file;
    strobe_set *set;
    uint32_t slots;       /* ncpu + 1 */
    int warned_extra;     /* a cpuN beyond the slots was logged once */
    unsigned char *seen;  /* per slot, this sample */
    unsigned char *ncols; /* per slot: columns the line had */
};

static const char *skip_spaces(const char *p, const char *le)
{
    while (p < le && *p == ' ')
        p++;
    return p;
}

/* Decimal number at p (after blanks); *ok = 0 when there is none. */
static const char *parse_u64(const char *p, const char *le, uint64_t *v, int *ok)
{
    p = skip_spaces(p, le);
    uint64_t x = 0;
    const char *d = p;
    while (p < le && *p >= '0' && *p <= '9')
        x = x * 10 + (uint64_t)(*p++ - '0');
    *v = x;
    *ok = p > d;
    return p;
}

/* Slot of a "cpu" line starting at p (p points after "cpu"): 0 for the
 * total, k + 1 for cpuk; -1 for a line that is not a CPU line. */
static long cpu_slot(const char **pp, const char *le)
{
    const char *p = *pp;
    if (p < le && *p == ' ') {
        *pp = p;
        return 0;
    }
    long k = 0;
    const char *d = p;
    while (p < le && *p >= '0' && *p <= '9' && k < 1000000)
        k = k * 10 + (*p++ - '0');
    if (p == d || p >= le || *p != ' ')
        return -1;
    *pp = p;
    return k + 1;
}

/* The highest "cpuN" in the text + 1 (0 without per-CPU lines). */
static uint32_t count_cpus(const char *p, const char *end)
{
    uint32_t n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le - p > 3 && memcmp(p, "cpu", 3) == 0) {
            const char *q = p + 3;
            long slot = cpu_slot(&q, le);
            if (slot > 0 && (uint32_t)slot > n)
                n = (uint32_t)slot;
        }
        p = le + 1;
    }
    return n;
}

static int make_set(struct procstat *s, uint64_t comp, const char *instance)
{
    const struct strobe_plugin_host *h = s->h;
    strobe_schema *sc;
    int rc = strobe_schema_new("procstat", &sc);
    if (rc < 0)
        return rc;
    strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
    for (int f = 0; f < NFIELDS && rc >= 0; f++)
        rc = strobe_schema_add(sc, field_names[f], "ticks", STROBE_MT_U64, s->slots,
                               STROBE_METRIC_ARRAY | STROBE_METRIC_COUNTER);
    if (rc >= 0)
        rc = strobe_schema_add(sc, "cpu_online", NULL, STROBE_MT_U8, s->slots, STROBE_METRIC_ARRAY);
    for (int k = 0; k < NSCALARS && rc >= 0; k++)
        rc = strobe_schema_add(sc, scalar_names[k], k == SC_BTIME ? "s" : NULL, STROBE_MT_U64, 1,
                               k == SC_INTR || k == SC_CTXT || k == SC_PROCESSES ? STROBE_METRIC_COUNTER : 0);
    if (rc >= 0)
        rc = strobe_set_new(sc, h->producer, instance, &s->set);
    strobe_schema_free(sc);
    if (rc == -EINVAL)
        return h->cfg_error(h, "instance", "not a set name");
    if (rc < 0)
        return rc;
    strobe_set_u64(s->set, M_COMP, 0, comp);
    if ((rc = h->set_add(h, s->set, STROBE_SET_PUBLISH)) < 0) {
        strobe_set_free(s->set);
        s->set = NULL;
    }
    return rc;
}

static void free_procstat(struct procstat *s)
{
    strobe__procfile_close(&s->file);
    free(s->seen);
    free(s->ncols);
    free(s);
}

static int open_procstat(const struct strobe_plugin_host *h, void **state)
{
    struct procstat *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    uint64_t comp, cpus;
    int rc;
    const char *instance = h->cfg_str(h, "instance");
    const char *path = h->cfg_str(h, "path");
    const char *file = path ? path : "/proc/stat";
    if ((rc = h->cfg_u64(h, "component_id", 0, &comp)) < 0 || (rc = h->cfg_u64(h, "cpus", 0, &cpus)) < 0)
        goto fail;
    if (cpus > MAX_CPUS) {
        rc = h->cfg_error(h, "cpus", "at most %u", MAX_CPUS);
        goto fail;
    }
    if ((rc = strobe__procfile_open(&s->file, h, file)) < 0)
        goto fail;
    ssize_t len = strobe__procfile_read(&s->file);
    if (len < 0) {
        rc = (int)len;
        h->log(h, STROBE_LOG_ERROR, "%s: %s", file, strerror((int)-len));
        goto fail;
    }
    if (!cpus) {
        cpus = count_cpus(s->file.buf, s->file.buf + len);
        if (!path) {
            /* offline CPUs are absent from /proc/stat but may come back */
            long conf = sysconf(_SC_NPROCESSORS_CONF);
            if (conf > 0 && (uint64_t)conf > cpus)
                cpus = (uint64_t)conf;
        }
        if (cpus > MAX_CPUS)
            cpus = MAX_CPUS;
    }
    s->slots = (uint32_t)cpus + 1;
    s->seen = calloc(s->slots, 1);
    s->ncols = calloc(s->slots, 1);
    if (!s->seen || !s->ncols) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = make_set(s, comp, instance)) < 0)
        goto fail;
    *state = s;
    return 0;
fail:
    free_procstat(s);
    return rc;
}

static int sample_procstat(void *state, uint64_t now_ns)
{
    struct procstat *s = state;
    strobe_set *set = s->set;
    strobe_set_begin(set);
    ssize_t len = strobe__procfile_read(&s->file);
    if (len < 0) {
        /* keep the last values but say they are not current */
        for (uint32_t i = M_FIELD0; i < M_SCALAR0 + NSCALARS; i++)
            strobe_set_valid(set, i, 0);
        strobe_set_end(set);
        s->h->set_updated(s->h, set);
        return (int)len;
    }
    memset(s->seen, 0, s->slots);
    int scalar_seen[NSCALARS] = {0};
    const char *p = s->file.buf, *end = s->file.buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *next = le + 1;
        int ok;
        uint64_t v;
        if (le - p > 3 && p[0] == 'c' && p[1] == 'p' && p[2] == 'u') {
            const char *q = p + 3;
            long slot = cpu_slot(&q, le);
            if (slot < 0) {
                p = next;
                continue;
            }
            if ((uint64_t)slot >= s->slots) {
                if (!s->warned_extra++)
                    s->h->log(s->h, STROBE_LOG_WARN,
                              "cpu%ld is beyond the %u CPU slots of the set; set `cpus` higher "
                              "to sample it",
                              slot - 1, s->slots - 1);
                p = next;
                continue;
            }
            int f = 0;
            for (; f < NFIELDS; f++) {
                q = parse_u64(q, le, &v, &ok);
                if (!ok)
                    break;
                strobe_set_u64(set, M_FIELD0 + (uint32_t)f, (uint32_t)slot, v);
            }
            /* columns an older kernel does not write (steal, guest, ...) */
            for (int g = f; g < NFIELDS; g++)
                strobe_set_u64(set, M_FIELD0 + (uint32_t)g, (uint32_t)slot, 0);
            s->seen[slot] = 1;
            s->ncols[slot] = (unsigned char)f;
        } else {
            /* "name value ...": the scalar lines */
            const char *sp = memchr(p, ' ', (size_t)(le - p));
            size_t nlen = sp ? (size_t)(sp - p) : 0;
            for (int k = 0; sp && k < NSCALARS; k++) {
                if (strlen(scalar_names[k]) != nlen || memcmp(p, scalar_names[k], nlen) != 0)
                    continue;
                parse_u64(sp, le, &v, &ok);
                if (ok) {
                    strobe_set_u64(set, M_SCALAR0 + (uint32_t)k, 0, v);
                    scalar_seen[k] = 1;
                }
                break;
            }
        }
        p = next;
    }
    /* A field is valid when every line that was there had its column;
     * per-element presence is cpu_online. */
    int cols = NFIELDS, any = 0;
    for (uint32_t slot = 0; slot < s->slots; slot++) {
        strobe_set_u64(set, M_ONLINE, slot, s->seen[slot]);
        if (s->seen[slot]) {
            any = 1;
            if (s->ncols[slot] < cols)
                cols = s->ncols[slot];
            continue;
        }
        for (uint32_t f = 0; f < NFIELDS; f++)
            strobe_set_u64(set, M_FIELD0 + f, slot, 0);
    }
    for (int f = 0; f < NFIELDS; f++)
        strobe_set_valid(set, M_FIELD0 + (uint32_t)f, any && f < cols);
    strobe_set_valid(set, M_ONLINE, 1);
    for (int k = 0; k < NSCALARS; k++)
        strobe_set_valid(set, M_SCALAR0 + (uint32_t)k, scalar_seen[k]);
    strobe_set_end(set);
    s->h->set_updated(s->h, set);
    /* a missing scalar line is only an invalid metric; no CPU line at
     * all means the file is not /proc/stat */
    return any ? 0 : STROBE_ERR_FORMAT;
}

static void close_procstat(void *state)
{
    free_procstat(state);
}

const struct strobe_plugin strobe__plugin_procstat = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_SAMPLER,
    .name = "procstat",
    .summary = "/proc/stat: per-CPU time arrays (element 0 = total), ctxt, intr, processes, btime",
    .open = open_procstat,
    .sample = sample_procstat,
    .close = close_procstat,
};
