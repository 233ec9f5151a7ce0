/* SPDX-License-Identifier: MIT */
/*
 * pprof exporter: the merged call-path profile (and the sampled call
 * stacks of `strobe run --sample`) as a gzip'd perftools.profiles.Profile
 * (profile.proto, google/pprof), for `go tool pprof`, speedscope and
 * Pyroscope. The message is built with the protobuf-c code generated from
 * profile.proto, packed once and deflated with zlib's gzip wrapper.
 *
 * Mapping (docs/formats/exports.md, "pprof"):
 *  - sample types visits (count), incl_time, excl_time (nanoseconds) and,
 *    for a sampled experiment, samples (count) and cpu (nanoseconds: the
 *    samples times the sampling period, when all processes sampled at one
 *    known rate);
 *  - one Sample per (call-path node, thread) with visits or time, its
 *    stack the regions of the path leaf first, labelled with the thread
 *    and its process; one Sample per distinct sampled stack of a thread,
 *    its stack the sampled code addresses;
 *  - pprof adds a sample's values to every function on its stack, which
 *    is right for exclusive time (the default sample type) and visits, but
 *    counts inclusive time once per enclosing call path: incl_time is the
 *    call path's own inclusive time, to be read in pprof's "flat" column;
 *  - one Function per region and per sampled function; one Location per
 *    region (one Line: the region's file:line) and per sampled code
 *    address (its module-relative address, a Line per function of its
 *    inline chain, innermost first, at the address's line); Locations of a
 *    module point to its Mapping, marked as already symbolized so pprof
 *    does not look for the binaries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/keymap.h"
#include "analysis/samples.h"
#include "export/escape.h"
#include "export/export.h"
#include "export/names.h"
#include "export/output.h"
#include "export/profile.pb-c.h"
#include "strobe/strobe.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* Sample value indices. */
enum { V_VISITS, V_INCL, V_EXCL, V_SAMPLES, V_CPU, NVALUES };
/* Labels of each thread's samples. */
enum { L_THREAD, L_PROCESS, NLABELS };

struct pprof {
    const struct strobe_experiment *exp;
    const struct strobe_profile *prof;
    const struct strobe_sample_model *sm; /* NULL: not sampled */
    Profile p;
    struct strobe__keymap strings;
    size_t strings_cap;
    struct strobe__keymap modules; /* module path -> mapping index */
    size_t nvalues;
    ValueType types[NVALUES], *type_ptrs[NVALUES], period_type;
    int64_t comments[3];
    Function *funcs, **func_ptrs; /* regions, then sampled functions */
    Location *locs, **loc_ptrs;   /* regions', then sampled addresses' */
    Line *lines, **line_ptrs;     /* the locations', in their order */
    Mapping *maps, **map_ptrs;
    Label *labels, **label_ptrs; /* [nthreads * NLABELS] */
    Sample *samples, **sample_ptrs;
    int64_t *values;    /* [nsamples * nvalues] */
    uint64_t *stacks;   /* location ids of every stack, leaf first */
    size_t *node_stack; /* [nnodes]: a call path's first entry in stacks */
    uint8_t *packed;
};

/* The index of s in the string table, added when new (as valid UTF-8:
 * protobuf strings are). -ENOMEM. */
static int intern(struct pprof *x, const char *s, int64_t *id)
{
    char *v = strobe__utf8_valid(s ? s : "");
    if (!v)
        return -ENOMEM;
    uint32_t k = (uint32_t)x->p.n_string_table;
    int rc = strobe__keymap_get_or_put(&x->strings, v, strlen(v), &k);
    if (rc == 0)
        rc = strobe__grow((void **)&x->p.string_table, &x->strings_cap, x->p.n_string_table + 1,
                          sizeof *x->p.string_table);
    if (rc == 0) {
        x->p.string_table[x->p.n_string_table++] = v;
        v = NULL;
    }
    free(v);
    *id = k;
    return rc < 0 ? rc : 0;
}

static int add_type(struct pprof *x, const char *type, const char *unit)
{
    ValueType *t = &x->types[x->nvalues];
    perftools__profiles__value_type__init(t);
    x->type_ptrs[x->nvalues++] = t;
    int rc = intern(x, type, &t->type);
    return rc ? rc : intern(x, unit, &t->unit);
}

/* The sampling period in ns when every process sampled at one known rate,
 * else 0 (no cpu sample type). */
static int64_t sample_period_ns(const struct strobe_sample_model *sm)
{
    return sm && sm->hz && !sm->mixed_rates ? 1000000000 / (int64_t)sm->hz : 0;
}

/* Sample types, period, comments, times. */
static int add_header(struct pprof *x)
{
    const struct strobe_experiment *exp = x->exp;
    int64_t period = sample_period_ns(x->sm), empty;
    int rc = intern(x, "", &empty); /* string_table[0] must be "" */
    if (!rc)
        rc = add_type(x, "visits", "count");
    if (!rc)
        rc = add_type(x, "incl_time", "nanoseconds");
    if (!rc)
        rc = add_type(x, "excl_time", "nanoseconds");
    if (!rc && x->sm)
        rc = add_type(x, "samples", "count");
    if (!rc && period)
        rc = add_type(x, "cpu", "nanoseconds");
    x->p.n_sample_type = x->nvalues;
    x->p.sample_type = x->type_ptrs;
    /* the profile's own view by default; the samples' when nothing was
     * instrumented */
    x->p.default_sample_type = x->types[x->prof->nnodes > 1 || !x->sm ? V_EXCL : V_SAMPLES].type;
    perftools__profiles__value_type__init(&x->period_type);
    x->p.period_type = &x->period_type;
    if (!rc && period) {
        x->period_type.type = x->types[V_CPU].type;
        x->period_type.unit = x->types[V_CPU].unit;
        x->p.period = period;
    } else if (!rc) { /* every visit is counted */
        x->period_type = x->types[x->sm ? V_SAMPLES : V_VISITS];
        x->p.period = 1;
    }
    char buf[4096];
    const char *command = strobe_experiment_meta(exp, "command");
    snprintf(buf, sizeof buf, "command: %s", command ? command : "(unknown)");
    if (!rc)
        rc = intern(x, "strobe " STROBE_VERSION_STRING, &x->comments[0]);
    if (!rc)
        rc = intern(x, buf, &x->comments[1]);
    if (!rc)
        rc = intern(x,
                    "incl_time: inclusive time of each call path; pprof adds it up over nested paths, "
                    "so read its flat column (cum of excl_time is the inclusive time)",
                    &x->comments[2]);
    x->p.n_comment = 3;
    x->p.comment = x->comments;
    /* experiment time 0 is the earliest process start */
    for (size_t i = 0; i < exp->nprocesses; i++) {
        int64_t t = (int64_t)exp->processes[i].start_realtime_ns;
        if (t > 0 && (x->p.time_nanos == 0 || t < x->p.time_nanos))
            x->p.time_nanos = t;
    }
    x->p.duration_nanos = (int64_t)exp->duration_ns;
    return rc;
}

/* The mapping id of module (0 for none), added when new; its limit grows
 * past address (0: none known). */
static int mapping_of(struct pprof *x, const char *module, uint64_t address, uint64_t *id)
{
    *id = 0;
    if (!module || !*module)
        return 0;
    uint32_t m = (uint32_t)x->p.n_mapping;
    int rc = strobe__keymap_get_or_put(&x->modules, module, strlen(module), &m);
    if (rc < 0)
        return rc;
    Mapping *map = &x->maps[m];
    if (rc == 0) { /* new */
        perftools__profiles__mapping__init(map);
        map->id = m + 1;
        /* addresses are module offsets (before relocation): start 0 */
        map->has_functions = map->has_filenames = map->has_line_numbers = true;
        map->has_inline_frames = x->sm != NULL;
        x->map_ptrs[x->p.n_mapping++] = map;
        if ((rc = intern(x, module, &map->filename)) < 0)
            return rc;
    }
    if (address && address >= map->memory_limit)
        map->memory_limit = address + 1;
    *id = map->id;
    return 0;
}

/* Function i (id i + 1). */
static int add_function(struct pprof *x, size_t i, const char *name, const char *file, unsigned start_line)
{
    Function *f = &x->funcs[i];
    perftools__profiles__function__init(f);
    f->id = i + 1;
    f->start_line = start_line;
    x->func_ptrs[i] = f;
    int rc = intern(x, name, &f->name);
    if (rc == 0) /* no separate mangled name is known */
        f->system_name = f->name;
    return rc ? rc : intern(x, file, &f->filename);
}

/* Location i (id i + 1) at address of module, with n lines from x->lines +
 * first (filled by the caller). */
static int add_location(struct pprof *x, size_t i, size_t first, size_t n, const char *module,
                        uint64_t address)
{
    Location *l = &x->locs[i];
    perftools__profiles__location__init(l);
    l->id = i + 1;
    l->address = address;
    l->n_line = n;
    l->line = x->line_ptrs + first;
    for (size_t k = first; k < first + n; k++) {
        perftools__profiles__line__init(&x->lines[k]);
        x->line_ptrs[k] = &x->lines[k];
    }
    x->loc_ptrs[i] = l;
    return mapping_of(x, module, address, &l->mapping_id);
}

/* Functions: the regions (ids 1..nregions), then the sampled functions.
 * Locations: one per region (its function's id, one line), then one per
 * sampled code address, with a line per function of its inline chain. */
static int add_functions(struct pprof *x)
{
    const struct strobe_experiment *exp = x->exp;
    const struct strobe_sample_model *sm = x->sm;
    size_t nfuncs = exp->nregions + (sm ? sm->nfuncs : 0), nlocs = exp->nregions + (sm ? sm->nlocs : 0),
           nlines = exp->nregions + (sm ? sm->nloc_frames : 0);
    int rc = 0;
    if (nfuncs == 0)
        return 0;
    x->funcs = calloc(nfuncs, sizeof *x->funcs);
    x->func_ptrs = calloc(nfuncs, sizeof *x->func_ptrs);
    x->locs = calloc(nlocs, sizeof *x->locs);
    x->loc_ptrs = calloc(nlocs, sizeof *x->loc_ptrs);
    x->lines = calloc(nlines, sizeof *x->lines);
    x->line_ptrs = calloc(nlines, sizeof *x->line_ptrs);
    x->maps = calloc(nfuncs + 1, sizeof *x->maps); /* a module per function at most, and the exe */
    x->map_ptrs = calloc(nfuncs + 1, sizeof *x->map_ptrs);
    if (!x->funcs || !x->func_ptrs || !x->locs || !x->loc_ptrs || !x->lines || !x->line_ptrs || !x->maps ||
        !x->map_ptrs)
        return -ENOMEM;
    /* mapping[0] is the main binary by pprof's convention */
    uint64_t main_map;
    if (exp->nprocesses && (rc = mapping_of(x, exp->processes[0].exe, 0, &main_map)) < 0)
        return rc;
    for (size_t r = 0; r < exp->nregions && rc == 0; r++) {
        const struct strobe_region_def *d = &exp->regions[r];
        rc = add_function(x, r, d->name, d->file, d->line);
        if (rc == 0)
            rc = add_location(x, r, r, 1, d->module, d->address);
        x->lines[r].function_id = r + 1;
        x->lines[r].line = d->line;
    }
    for (size_t k = 0; sm && k < sm->nfuncs && rc == 0; k++) {
        /* the line of a sampled function is the one most samples fell on,
         * not its first: start_line unknown */
        const struct strobe_sample_func *fn = &sm->funcs[k];
        rc = add_function(x, exp->nregions + k, fn->name, fn->file, 0);
    }
    for (size_t k = 0; sm && k < sm->nlocs && rc == 0; k++) {
        const struct strobe_sample_loc *l = &sm->locs[k];
        size_t first = exp->nregions + l->first;
        rc = add_location(x, exp->nregions + k, first, l->n, sm->funcs[sm->loc_frames[l->first].func].module,
                          l->rel);
        for (size_t f = 0; f < l->n; f++) {
            x->lines[first + f].function_id = exp->nregions + (uint64_t)sm->loc_frames[l->first + f].func + 1;
            x->lines[first + f].line = sm->loc_frames[l->first + f].line;
        }
    }
    x->p.n_function = nfuncs;
    x->p.n_location = nlocs;
    x->p.function = x->func_ptrs;
    x->p.location = x->loc_ptrs;
    x->p.mapping = x->map_ptrs;
    return rc;
}

/* Each thread's labels: its name and its process's. */
static int add_labels(struct pprof *x)
{
    const struct strobe_experiment *exp = x->exp;
    x->labels = calloc(exp->nthreads * NLABELS, sizeof *x->labels);
    x->label_ptrs = calloc(exp->nthreads * NLABELS, sizeof *x->label_ptrs);
    if (!x->labels || !x->label_ptrs)
        return -ENOMEM;
    int64_t keys[NLABELS];
    int rc = intern(x, "thread", &keys[L_THREAD]);
    if (rc == 0)
        rc = intern(x, "process", &keys[L_PROCESS]);
    char name[512];
    for (size_t t = 0; t < exp->nthreads && rc == 0; t++) {
        for (size_t k = 0; k < NLABELS; k++) {
            Label *l = &x->labels[t * NLABELS + k];
            perftools__profiles__label__init(l);
            l->key = keys[k];
            x->label_ptrs[t * NLABELS + k] = l;
        }
        strobe__thread_name(exp, (uint32_t)t, name, sizeof name);
        rc = intern(x, name, &x->labels[t * NLABELS + L_THREAD].str);
        strobe__process_name(exp, exp->threads[t].process, name, sizeof name);
        if (rc == 0)
            rc = intern(x, name, &x->labels[t * NLABELS + L_PROCESS].str);
    }
    return rc;
}

static bool has_data(const struct strobe_stats *s)
{
    return s->visits || s->incl_ns || s->excl_ns;
}

/* Every call path's and sampled stack's location ids, leaf first, in
 * x->stacks; the number of samples. */
static int build_stacks(struct pprof *x, size_t *nsamples)
{
    const struct strobe_profile *prof = x->prof;
    const struct strobe_sample_model *sm = x->sm;
    size_t total = sm ? sm->nstack_locs : 0, n = sm ? sm->nstacks : 0;
    x->node_stack = calloc(prof->nnodes, sizeof *x->node_stack);
    if (!x->node_stack)
        return -ENOMEM;
    for (size_t i = 1; i < prof->nnodes; i++) {
        const struct strobe_cnode *c = &prof->nodes[i];
        x->node_stack[i] = total;
        total += c->depth;
        for (size_t t = 0; t < x->exp->nthreads; t++)
            n += has_data(&c->per_thread[t]);
    }
    x->stacks = malloc((total ? total : 1) * sizeof *x->stacks);
    if (!x->stacks)
        return -ENOMEM;
    for (size_t i = 0; sm && i < sm->nstack_locs; i++)
        x->stacks[i] = x->exp->nregions + (uint64_t)sm->stack_locs[i] + 1;
    for (size_t i = 1; i < prof->nnodes; i++) {
        uint64_t *st = x->stacks + x->node_stack[i];
        size_t k = 0;
        for (uint32_t c = (uint32_t)i; c != 0 && k < prof->nodes[i].depth; c = prof->nodes[c].parent)
            st[k++] = (uint64_t)prof->nodes[c].region + 1;
        if (k != prof->nodes[i].depth)
            return STROBE_ERR_FORMAT;
    }
    *nsamples = n;
    return 0;
}

/* The next sample, on stack [first, first + len) with thread's labels,
 * values zeroed. */
static int64_t *next_sample(struct pprof *x, size_t first, size_t len, uint32_t thread)
{
    size_t i = x->p.n_sample++;
    Sample *s = &x->samples[i];
    perftools__profiles__sample__init(s);
    s->n_location_id = len;
    s->location_id = x->stacks + first;
    s->n_value = x->nvalues;
    s->value = x->values + i * x->nvalues;
    s->n_label = NLABELS;
    s->label = x->label_ptrs + (size_t)thread * NLABELS;
    x->sample_ptrs[i] = s;
    return s->value;
}

static int add_samples(struct pprof *x)
{
    const struct strobe_profile *prof = x->prof;
    const struct strobe_sample_model *sm = x->sm;
    size_t n;
    int rc = build_stacks(x, &n);
    if (rc < 0)
        return rc;
    x->samples = calloc(n ? n : 1, sizeof *x->samples);
    x->sample_ptrs = calloc(n ? n : 1, sizeof *x->sample_ptrs);
    x->values = calloc(n ? n * x->nvalues : 1, sizeof *x->values);
    if (!x->samples || !x->sample_ptrs || !x->values)
        return -ENOMEM;
    x->p.sample = x->sample_ptrs;
    for (size_t i = 1; i < prof->nnodes; i++) {
        const struct strobe_cnode *c = &prof->nodes[i];
        for (uint32_t t = 0; t < x->exp->nthreads; t++) {
            const struct strobe_stats *st = &c->per_thread[t];
            if (!has_data(st))
                continue;
            int64_t *v = next_sample(x, x->node_stack[i], c->depth, t);
            v[V_VISITS] = (int64_t)st->visits;
            v[V_INCL] = (int64_t)st->incl_ns;
            v[V_EXCL] = (int64_t)st->excl_ns;
        }
    }
    int64_t period = sample_period_ns(sm);
    for (size_t i = 0; sm && i < sm->nstacks; i++) {
        const struct strobe_sample_stack *st = &sm->stacks[i];
        int64_t *v = next_sample(x, st->first, st->n, st->thread);
        v[V_SAMPLES] = (int64_t)st->samples;
        if (period)
            v[V_CPU] = (int64_t)st->samples * period;
    }
    return 0;
}

/* Packs the profile and writes it gzip'd to f. */
static int write_gzip(struct pprof *x, FILE *f)
{
    size_t len = perftools__profiles__profile__get_packed_size(&x->p);
    x->packed = malloc(len ? len : 1);
    if (!x->packed)
        return -ENOMEM;
    perftools__profiles__profile__pack(&x->p, x->packed);
    z_stream z = {0};
    /* windowBits 15 + 16: a gzip header and trailer around the deflate
     * stream, as pprof expects on disk. Level 1: on bench/paths.c's
     * profile (docs/performance.md) level 6 spent 43 % of the export in
     * zlib, and level 1 cuts the export from 0.62 to 0.40 s for a file
     * 1.4x larger (2.0 MB against 1.4); small either way. */
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    unsigned char buf[65536];
    size_t done = 0;
    int zrc;
    do {
        /* avail_in is a uInt: feed large profiles in slices */
        size_t slice = len - done < (1u << 30) ? len - done : (1u << 30);
        z.next_in = x->packed + done;
        z.avail_in = (uInt)slice;
        int flush = done + slice == len ? Z_FINISH : Z_NO_FLUSH;
        do {
            z.next_out = buf;
            z.avail_out = sizeof buf;
            zrc = deflate(&z, flush);
            fwrite(buf, 1, sizeof buf - z.avail_out, f);
        } while (z.avail_out == 0);
        done += slice;
    } while (zrc != Z_STREAM_END && zrc != Z_STREAM_ERROR && done < len);
    deflateEnd(&z);
    return zrc == Z_STREAM_END ? 0 : -EIO; /* write errors: strobe__out_file_commit() */
}

static void pprof_free(struct pprof *x)
{
    for (size_t i = 0; i < x->p.n_string_table; i++)
        free(x->p.string_table[i]);
    free(x->p.string_table);
    strobe__keymap_free(&x->strings);
    strobe__keymap_free(&x->modules);
    free(x->funcs);
    free(x->func_ptrs);
    free(x->locs);
    free(x->loc_ptrs);
    free(x->lines);
    free(x->line_ptrs);
    free(x->maps);
    free(x->map_ptrs);
    free(x->labels);
    free(x->label_ptrs);
    free(x->samples);
    free(x->sample_ptrs);
    free(x->values);
    free(x->stacks);
    free(x->node_stack);
    free(x->packed);
}

int strobe_export_pprof(const struct strobe_experiment *exp, const char *out,
                        const struct strobe_export_opts *opts, struct strobe_errbuf *eb)
{
    struct strobe_profile *prof;
    struct strobe_sample_model *sm;
    struct strobe__out_file o;
    int rc = strobe__export_profile_begin(exp, out, opts, &prof, &sm, &o, eb);
    if (rc < 0)
        return rc;
    struct pprof x = {.exp = exp, .prof = prof, .sm = sm};
    perftools__profiles__profile__init(&x.p);
    rc = add_header(&x);
    if (rc == 0)
        rc = add_functions(&x);
    if (rc == 0)
        rc = add_labels(&x);
    if (rc == 0)
        rc = add_samples(&x);
    if (rc == STROBE_ERR_FORMAT)
        rc = strobe__error(eb, rc, "%s: a call path of the profile does not reach its root", out);
    else if (rc == 0 && (rc = write_gzip(&x, o.f)) < 0)
        rc = strobe__error(eb, rc, "%s: %s", out, rc == -EIO ? "gzip failed" : strerror(-rc));
    else if (rc < 0)
        rc = strobe__error(eb, rc, "%s: out of memory", out);
    if (rc == 0)
        rc = strobe__out_file_commit(&o, eb);
    else
        strobe__out_file_abort(&o);
    pprof_free(&x);
    strobe_sample_model_free(sm);
    strobe_profile_free(prof);
    if (rc == 0)
        strobe__export_progress(opts, exp->total_bytes, exp->total_bytes);
    return rc;
}
