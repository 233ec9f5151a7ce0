/* SPDX-License-Identifier: MIT */
/*
 * Attribution of samples to variables (blame.h). Frames (a function at a
 * source location in a module) and stacks are interned: each distinct
 * frame is looked up in its module's blame table once, each distinct
 * stack attributed once (docs/blame.md, "Attribution"); a sample only adds
 * its weight to its stack, and the views are summed over the distinct
 * stacks at the end.
 */
#define _GNU_SOURCE
#include "analysis/blame.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blame_table.h"
#include "analysis/decode.h"
#include "analysis/keymap.h"
#include "analysis/symbols.h"
#include "strobe/strobe.h"

struct module {
    char *path;
    bool loaded;
    struct strobe__blame_table *t; /* NULL: no table */
    uint32_t *var_row;             /* [t->nvars]: its display row */
    uint32_t *func_name;           /* [t->nfuncs]: the function's name id */
    struct strobe__keymap funcs;   /* name -> first table func of that name */
    uint32_t *next_func;           /* [t->nfuncs]: the next one of the same name */
};

/* A function at a location; what its module's table says about it. */
struct frame {
    uint32_t module, name; /* module STROBE_NONE: none */
    uint32_t path;         /* in the module's table, STROBE_NONE: not in it */
    unsigned line, col;
    bool runtime;
    uint32_t func;      /* the table func, STROBE_NONE */
    int reason;         /* when it has no entry */
    uint32_t set, nset; /* its entry: table vars in b->pool */
};

/* The interning key of a frame: what the sample says. */
struct frame_key {
    uint32_t module, name, path, line, col, runtime;
    uint32_t file; /* the symbolizer's file name (a name id), STROBE_NONE: none */
};

struct stack {
    uint32_t first, n; /* frames in b->stack_frames, innermost first */
    uint64_t weight;
    int reason; /* -1: charged */
    bool caller_unknown;
    uint32_t rows, nrows; /* the rows charged, ascending, in b->results */
};

/* A sample list's frame before symbolization. */
struct raw_frame {
    uint32_t first, n; /* its frames in b->raw_frames (an inline chain) */
    uint32_t process;  /* MODULE+0xOFF: the process whose module it is; STROBE_NONE: resolved */
    uint64_t addr;
};

struct raw_stack {
    uint32_t first, n; /* raw frame ids in b->raw_seq */
    uint64_t weight;
};

struct builder {
    const struct strobe_experiment *exp;
    struct strobe_errbuf *eb;
    struct strobe_blame_model *m;
    struct module *mods;
    size_t nmods, mods_cap;
    struct strobe__keymap mod_ids;
    char **names;
    size_t nnames, names_cap;
    struct strobe__keymap name_ids;
    struct frame *frames;
    size_t nframes, frames_cap;
    struct strobe__keymap frame_ids;
    uint32_t *pool;
    size_t npool, pool_cap;
    struct stack *stacks;
    size_t nstacks, stacks_cap;
    struct strobe__keymap stack_ids;
    uint32_t *stack_frames;
    size_t nstack_frames, stack_frames_cap;
    uint32_t *results;
    size_t nresults, results_cap;
    size_t vars_cap;
    uint32_t *var_fname; /* [m->nvars]: the row's function name id, STROBE_NONE */
    size_t var_fname_cap;
    struct strobe__keymap row_ids;
    uint64_t *stamp; /* [rows]: the stack that last charged it + 1 */
    size_t stamp_cap;
    uint32_t *tmp; /* scratch: sets, charged rows */
    size_t ntmp, tmp_cap;
    int32_t *exits, *next_exits;
    size_t nexits, exits_cap, nnext, next_cap;
    uint32_t *key; /* scratch: a stack's key */
    size_t key_cap;
    /* sample lists */
    struct strobe__defs *defs; /* [exp->nprocesses] */
    struct raw_frame *rframes;
    size_t nrframes, rframes_cap;
    struct strobe__keymap rframe_ids;
    uint32_t *raw_frames;
    size_t nraw_frames, raw_frames_cap;
    struct raw_stack *rstacks;
    size_t nrstacks, rstacks_cap;
    struct strobe__keymap rstack_ids;
    uint32_t *raw_seq;
    size_t nraw_seq, raw_seq_cap;
};

static int oom(struct builder *b)
{
    return strobe__error(b->eb, -ENOMEM, "%s: out of memory", b->exp->dir);
}

static int warn(struct builder *b, const char *msg)
{
    struct strobe_blame_model *m = b->m;
    char **w = realloc(m->warnings, (m->nwarnings + 1) * sizeof *w);
    if (!w)
        return -ENOMEM;
    m->warnings = w;
    if (!(w[m->nwarnings] = strdup(msg)))
        return -ENOMEM;
    m->nwarnings++;
    return 0;
}

static int intern(struct strobe__keymap *map, char ***arr, size_t *n, size_t *cap, const char *s, size_t len,
                  uint32_t *id)
{
    *id = (uint32_t)*n;
    int rc = strobe__keymap_get_or_put(map, s, len, id);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (strobe__grow((void **)arr, cap, *n + 1, sizeof **arr) || !((*arr)[*n] = strndup(s, len)))
        return -ENOMEM;
    (*n)++;
    return 0;
}

static int name_id(struct builder *b, const char *s, uint32_t *id)
{
    return intern(&b->name_ids, &b->names, &b->nnames, &b->names_cap, s, strlen(s), id);
}

/* The module of PATH ("" or NULL: STROBE_NONE). */
static int module_id(struct builder *b, const char *path, uint32_t *id)
{
    *id = STROBE_NONE;
    if (!path || !*path)
        return 0;
    *id = (uint32_t)b->nmods;
    int rc = strobe__keymap_get_or_put(&b->mod_ids, path, strlen(path), id);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (strobe__grow((void **)&b->mods, &b->mods_cap, b->nmods + 1, sizeof *b->mods))
        return -ENOMEM;
    memset(&b->mods[b->nmods], 0, sizeof *b->mods);
    if (!(b->mods[b->nmods].path = strdup(path)))
        return -ENOMEM;
    b->nmods++;
    return 0;
}

/* The display row of table var v of t, added when new. */
static int row_of(struct builder *b, const struct strobe__blame_table *t, const struct module *mod,
                  uint32_t v, uint32_t *row)
{
    const struct strobe__blame_var *tv = &t->vars[v];
    const char *fname = tv->func == STROBE_NONE ? "" : strobe__blame_str(t, t->funcs[tv->func].name);
    const char *name = strobe__blame_str(t, tv->name);
    const char *file = tv->path == STROBE_NONE ? "" : strobe__blame_str(t, t->paths[tv->path]);
    size_t lf = strlen(fname), ln = strlen(name), lp = strlen(file), len = lf + ln + lp + 3 + 8;
    char *key = malloc(len);
    if (!key)
        return -ENOMEM;
    memcpy(key, fname, lf + 1);
    memcpy(key + lf + 1, name, ln + 1);
    memcpy(key + lf + ln + 2, file, lp + 1);
    uint32_t li[2] = {tv->line, (uint32_t)tv->kind};
    memcpy(key + lf + ln + lp + 3, li, 8);
    struct strobe_blame_model *m = b->m;
    *row = (uint32_t)m->nvars;
    int rc = strobe__keymap_get_or_put(&b->row_ids, key, len, row);
    free(key);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (strobe__grow((void **)&m->vars, &b->vars_cap, m->nvars + 1, sizeof *m->vars) ||
        strobe__grow((void **)&b->var_fname, &b->var_fname_cap, m->nvars + 1, sizeof *b->var_fname))
        return -ENOMEM;
    struct strobe_blame_var *r = &m->vars[m->nvars];
    memset(r, 0, sizeof *r);
    r->name = strdup(name);
    r->type = strdup(strobe__blame_str(t, tv->type));
    r->function = tv->func == STROBE_NONE ? NULL : strdup(fname);
    r->file = strdup(file);
    r->line = tv->line;
    r->kind = tv->kind;
    /* the parent is an earlier var of the same unit: its row exists */
    r->parent = tv->parent == STROBE_NONE ? STROBE_NONE : mod->var_row[tv->parent];
    b->var_fname[m->nvars] = STROBE_NONE;
    m->nvars++;
    if (!r->name || !r->type || !r->file || (tv->func != STROBE_NONE && !r->function))
        return -ENOMEM;
    return tv->func == STROBE_NONE ? 0 : name_id(b, fname, &b->var_fname[m->nvars - 1]);
}

/* Reads module i's table (once): its rows and its functions by name. */
static int load(struct builder *b, uint32_t i)
{
    struct module *mod = &b->mods[i];
    if (mod->loaded)
        return 0;
    mod->loaded = true;
    struct strobe_errbuf eb = {""};
    int rc = strobe__blame_table_read(mod->path, &mod->t, &eb);
    if (rc == -ENOMEM || (rc && warn(b, eb.msg)))
        return -ENOMEM;
    const struct strobe__blame_table *t = mod->t;
    if (!t)
        return 0;
    for (size_t w = 0; w < t->nwarnings; w++)
        if (warn(b, t->warnings[w]))
            return -ENOMEM;
    if (t->nunits)
        b->m->ntables++;
    mod->var_row = malloc((t->nvars ? t->nvars : 1) * sizeof *mod->var_row);
    mod->func_name = malloc((t->nfuncs ? t->nfuncs : 1) * sizeof *mod->func_name);
    mod->next_func = malloc((t->nfuncs ? t->nfuncs : 1) * sizeof *mod->next_func);
    if (!mod->var_row || !mod->func_name || !mod->next_func)
        return -ENOMEM;
    for (uint32_t v = 0; v < t->nvars; v++)
        if ((rc = row_of(b, t, mod, v, &mod->var_row[v])))
            return rc;
    /* functions by name: several share one when static in different units */
    for (uint32_t f = 0; f < t->nfuncs; f++) {
        const char *name = strobe__blame_str(t, t->funcs[f].name);
        uint32_t first = f;
        mod->next_func[f] = STROBE_NONE;
        if (name_id(b, name, &mod->func_name[f]) ||
            (rc = strobe__keymap_get_or_put(&mod->funcs, name, strlen(name), &first)) < 0)
            return -ENOMEM;
        while (rc == 1 && mod->next_func[first] != STROBE_NONE)
            first = mod->next_func[first];
        if (rc == 1)
            mod->next_func[first] = f;
    }
    return 0;
}

/* The frame of key k, looked up in its module's table when new. */
static int frame_id(struct builder *b, const struct frame_key *k, uint32_t *id)
{
    *id = (uint32_t)b->nframes;
    int rc = strobe__keymap_get_or_put(&b->frame_ids, k, sizeof *k, id);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (strobe__grow((void **)&b->frames, &b->frames_cap, b->nframes + 1, sizeof *b->frames))
        return -ENOMEM;
    struct frame *f = &b->frames[b->nframes++];
    *f = (struct frame){
        k->module, k->name, k->path, k->line, k->col, k->runtime, STROBE_NONE, STROBE_BLAME_NO_TABLE, 0, 0};
    if (f->runtime) {
        f->reason = STROBE_BLAME_MEASUREMENT;
        return 0;
    }
    if (f->module == STROBE_NONE)
        return 0;
    if ((rc = load(b, f->module)))
        return rc;
    const struct module *mod = &b->mods[f->module];
    const struct strobe__blame_table *t = mod->t;
    if (!t)
        return 0;
    /* the candidates: the function of the given file containing the line,
     * or the table's functions of that name; else (an inlined function
     * DWARF names "relax" where the table has "geo::Grid::relax(double)")
     * the function of the symbolizer's file containing the line, whose
     * table name the frame then takes, for its callers' call records */
    uint32_t cand = STROBE_NONE, by_path = k->path;
    if (by_path != STROBE_NONE) {
        cand = strobe__blame_table_func_at(t, by_path, f->line);
    } else if (!strobe__keymap_get(&mod->funcs, b->names[f->name], strlen(b->names[f->name]), &cand)) {
        if (k->file != STROBE_NONE &&
            (by_path = strobe__blame_table_path(t, b->names[k->file])) != STROBE_NONE)
            cand = strobe__blame_table_func_at(t, by_path, f->line);
        if (cand == STROBE_NONE) {
            /* a function the analysis did not see: its unit has no table, or
             * it has no debug information at all (crt1's _start) */
            f->reason = f->line ? STROBE_BLAME_NO_TABLE : STROBE_BLAME_NO_DEBUG;
            return 0;
        }
        f->name = mod->func_name[cand];
    }
    if (cand == STROBE_NONE)
        return 0;
    f->reason = f->line ? STROBE_BLAME_NO_VARIABLE : STROBE_BLAME_NO_DEBUG;
    f->func = cand;
    if (f->path == STROBE_NONE)
        f->path = t->funcs[cand].path;
    bool by_file = by_path != STROBE_NONE;
    for (uint32_t c = cand; c != STROBE_NONE && f->line; c = by_file ? STROBE_NONE : mod->next_func[c]) {
        uint32_t path = by_file ? by_path : t->funcs[c].path;
        if ((rc = strobe__blame_table_find_loc(t, path, f->line, f->col, &b->tmp, &b->ntmp, &b->tmp_cap)))
            return rc;
        if (!b->ntmp)
            continue;
        if (strobe__grow((void **)&b->pool, &b->pool_cap, b->npool + b->ntmp, sizeof *b->pool))
            return -ENOMEM;
        f->path = path;
        f->func = c;
        f->set = (uint32_t)b->npool;
        f->nset = (uint32_t)b->ntmp;
        memcpy(b->pool + b->npool, b->tmp, b->ntmp * sizeof *b->pool);
        b->npool += b->ntmp;
        break;
    }
    return 0;
}

/* Adds table var v of mod (and its display ancestors) to the rows the
 * current stack (serial) charged, in b->tmp; its exit to b->next_exits. */
static int charge(struct builder *b, const struct module *mod, uint32_t v, uint64_t serial)
{
    int32_t exit = mod->t->vars[v].exit;
    if (exit != STROBE__BLAME_EXIT_NONE && exit != STROBE__BLAME_EXIT_GLOBAL) {
        size_t i = 0;
        while (i < b->nnext && b->next_exits[i] != exit)
            i++;
        if (i == b->nnext) {
            if (strobe__grow((void **)&b->next_exits, &b->next_cap, b->nnext + 1, sizeof *b->next_exits))
                return -ENOMEM;
            b->next_exits[b->nnext++] = exit;
        }
    }
    for (uint32_t r = mod->var_row[v]; r != STROBE_NONE && b->stamp[r] != serial; r = b->m->vars[r].parent) {
        b->stamp[r] = serial;
        if (strobe__grow((void **)&b->tmp, &b->tmp_cap, b->ntmp + 1, sizeof *b->tmp))
            return -ENOMEM;
        b->tmp[b->ntmp++] = r;
    }
    return 0;
}

/* The exits charged become the ones to pass on. */
static void swap_exits(struct builder *b)
{
    int32_t *e = b->exits;
    size_t cap = b->exits_cap;
    b->exits = b->next_exits;
    b->exits_cap = b->next_cap;
    b->nexits = b->nnext;
    b->next_exits = e;
    b->next_cap = cap;
    b->nnext = 0;
}

/* Whether frame f can hold call records: a line of a function in a table. */
static bool in_table(const struct builder *b, const struct frame *f)
{
    return f->module != STROBE_NONE && b->mods[f->module].t && f->func != STROBE_NONE && f->line;
}

/* The bind of call c for exit e, STROBE_NONE when none. */
static uint32_t bind_of(const struct strobe__blame_table *t, const struct strobe__blame_call *c, int32_t e)
{
    for (uint32_t k = c->first_bind; k < c->first_bind + c->nbind; k++)
        if (t->binds[k].exit == e)
            return k;
    return STROBE_NONE;
}

/* Charges the binds of call c of mod for the exits in b->exits; a pK*
 * exit without its own bind takes pK's (docs/formats/blame-table.md). */
static int charge_binds(struct builder *b, const struct module *mod, const struct strobe__blame_call *c,
                        uint64_t serial)
{
    const struct strobe__blame_table *t = mod->t;
    for (size_t e = 0; e < b->nexits; e++) {
        uint32_t k = bind_of(t, c, b->exits[e]);
        int32_t through = STROBE__BLAME_EXIT_THROUGH_K(b->exits[e]);
        if (k == STROBE_NONE && through >= 0)
            k = bind_of(t, c, through);
        for (uint32_t i = 0; k != STROBE_NONE && i < t->binds[k].nset; i++) {
            int rc = charge(b, mod, t->sets[t->binds[k].set + i], serial);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Attributes stack s (docs/blame.md, "Attribution"). */
static int attribute(struct builder *b, uint32_t s)
{
    struct stack *st = &b->stacks[s];
    const uint32_t *fs = b->stack_frames + st->first;
    uint64_t serial = (uint64_t)s + 1;
    size_t n = st->n, i = 0;
    int rc = 0;
    b->ntmp = b->nnext = 0;
    st->reason = n == 0 ? STROBE_BLAME_NO_STACK : b->frames[fs[0]].reason;
    if (n == 0 || b->frames[fs[0]].runtime)
        return 0;
    /* pending until a frame with an entry: the others pass the sample out */
    while (i < n && b->frames[fs[i]].nset == 0)
        i++;
    if (i == n)
        return 0;
    const struct frame *f = &b->frames[fs[i]];
    const struct module *mod = &b->mods[f->module];
    for (uint32_t k = 0; k < f->nset && rc == 0; k++)
        rc = charge(b, mod, b->pool[f->set + k], serial);
    swap_exits(b);
    /* the exits go to the callers through the call records' binds */
    while (rc == 0 && b->nexits) {
        const char *callee = b->names[f->name];
        size_t j = i + 1;
        while (j < n && !in_table(b, &b->frames[fs[j]]))
            j++;
        if (j == n) {
            /* no caller in user code: a worker thread runs what a spawn
             * record hands it; else the stack's outermost user frame */
            const struct strobe__blame_table *t = mod->t;
            for (size_t c = 0; c < t->ncalls && rc == 0; c++)
                if (t->calls[c].spawn && t->calls[c].callee != STROBE_NONE &&
                    strcmp(strobe__blame_str(t, t->calls[c].callee), callee) == 0)
                    rc = charge_binds(b, mod, &t->calls[c], serial);
            break;
        }
        const struct frame *o = &b->frames[fs[j]];
        const struct module *om = &b->mods[o->module];
        const struct strobe__blame_table *t = om->t;
        uint32_t caller = STROBE_NONE; /* the calling function's name */
        for (size_t c = SIZE_MAX; rc == 0 && (c = strobe__blame_table_next_call(t, o->path, o->line, o->col,
                                                                                callee, c)) != SIZE_MAX;) {
            caller = caller == STROBE_NONE ? om->func_name[t->calls[c].func] : caller;
            rc = charge_binds(b, om, &t->calls[c], serial);
        }
        if (caller == STROBE_NONE) {
            st->caller_unknown = true;
            break;
        }
        swap_exits(b);
        /* the walk goes on from the caller's frame: normally o itself, but a
         * record is found by location, and a compiler's wrapper at the same
         * line may stand between (clang's .omp_outlined. around the body it
         * calls, .omp_outlined._debug__, which the spawn record names); no
         * frame of the caller (a worker thread): nothing more to pass on */
        while (j < n && b->frames[fs[j]].name != caller)
            j++;
        if (j == n)
            break;
        i = j;
        f = &b->frames[fs[j]];
        mod = &b->mods[f->module];
    }
    if (rc)
        return rc;
    st->reason = -1;
    qsort(b->tmp, b->ntmp, sizeof *b->tmp, cmp_u32);
    if (strobe__grow((void **)&b->results, &b->results_cap, b->nresults + b->ntmp, sizeof *b->results))
        return -ENOMEM;
    st->rows = (uint32_t)b->nresults;
    st->nrows = (uint32_t)b->ntmp;
    memcpy(b->results + b->nresults, b->tmp, b->ntmp * sizeof *b->tmp);
    b->nresults += b->ntmp;
    return 0;
}

/* Counts w samples of the stack of frames fr[0..n) (innermost first);
 * merge: with an equal stack counted before (else the caller knows it is
 * new: a sample list's lines are merged by their text). */
static int count_stack(struct builder *b, const uint32_t *fr, size_t n, uint64_t w, bool merge)
{
    uint32_t id = (uint32_t)b->nstacks;
    int rc = merge ? strobe__keymap_get_or_put(&b->stack_ids, fr, n * sizeof *fr, &id) : 0;
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (strobe__grow((void **)&b->stacks, &b->stacks_cap, b->nstacks + 1, sizeof *b->stacks) ||
            strobe__grow((void **)&b->stack_frames, &b->stack_frames_cap, b->nstack_frames + n,
                         sizeof *b->stack_frames))
            return -ENOMEM;
        b->stacks[b->nstacks++] = (struct stack){(uint32_t)b->nstack_frames, (uint32_t)n, 0, -1, false, 0, 0};
        memcpy(b->stack_frames + b->nstack_frames, fr, n * sizeof *fr);
        b->nstack_frames += n;
    }
    b->stacks[id].weight += w;
    return 0;
}

/* A sampled function while summing: (module, name) and its first frame. */
struct func_sum {
    uint32_t module, name, frame;
    uint64_t self, total, unknown, stamp;
    uint32_t top;
    uint64_t top_samples;
};

struct pair_count {
    uint32_t a, b;
    uint64_t n;
};

/* The count of pair (a, b) in *arr (via map), added when new. */
static int pair_add(struct strobe__keymap *map, struct pair_count **arr, size_t *n, size_t *cap, uint32_t a,
                    uint32_t b, uint64_t w)
{
    uint32_t key[2] = {a, b}, id = (uint32_t)*n;
    int rc = strobe__keymap_get_or_put(map, key, sizeof key, &id);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (strobe__grow((void **)arr, cap, *n + 1, sizeof **arr))
            return -ENOMEM;
        (*arr)[(*n)++] = (struct pair_count){a, b, 0};
    }
    (*arr)[id].n += w;
    return 0;
}

/* The code-centric view: per sampled function its samples, its unknown
 * ones and its top variable (its own or a global). */
static int sum_funcs(struct builder *b)
{
    struct strobe_blame_model *m = b->m;
    struct func_sum *fs = NULL;
    struct pair_count *pc = NULL;
    size_t nf = 0, fcap = 0, npc = 0, pcap = 0;
    struct strobe__keymap ids = {0}, pairs = {0};
    /* each frame's function, looked up once */
    uint32_t *func_of = malloc((b->nframes ? b->nframes : 1) * sizeof *func_of);
    int rc = func_of ? 0 : -ENOMEM;
    for (size_t i = 0; i < b->nframes && rc == 0; i++) {
        const struct frame *f = &b->frames[i];
        uint32_t key[2] = {f->module, f->name};
        func_of[i] = (uint32_t)nf;
        if ((rc = strobe__keymap_get_or_put(&ids, key, sizeof key, &func_of[i])) == 0) {
            if (strobe__grow((void **)&fs, &fcap, nf + 1, sizeof *fs))
                rc = -ENOMEM;
            else
                fs[nf++] = (struct func_sum){f->module, f->name, (uint32_t)i, 0, 0, 0, 0, STROBE_NONE, 0};
        }
        rc = rc < 0 ? rc : 0;
    }
    for (size_t s = 0; s < b->nstacks && rc == 0; s++) {
        const struct stack *st = &b->stacks[s];
        for (uint32_t k = 0; k < st->n && rc == 0; k++) {
            const struct frame *f = &b->frames[b->stack_frames[st->first + k]];
            uint32_t id = func_of[b->stack_frames[st->first + k]];
            struct func_sum *x = &fs[id];
            if (k == 0)
                x->self += st->weight;
            if (x->stamp == s + 1) /* once per sample, recursion or not */
                continue;
            x->stamp = s + 1;
            x->total += st->weight;
            x->unknown += st->reason >= 0 ? st->weight : 0;
            for (uint32_t r = 0; r < st->nrows && rc == 0; r++) {
                uint32_t row = b->results[st->rows + r];
                if (b->var_fname[row] == f->name || m->vars[row].function == NULL)
                    rc = pair_add(&pairs, &pc, &npc, &pcap, id, row, st->weight);
            }
        }
    }
    for (size_t i = 0; i < npc && rc == 0; i++) {
        struct func_sum *x = &fs[pc[i].a];
        if (pc[i].n > x->top_samples || (pc[i].n == x->top_samples && pc[i].b < x->top)) {
            x->top = pc[i].b;
            x->top_samples = pc[i].n;
        }
    }
    if (rc == 0 && nf && !(m->funcs = calloc(nf, sizeof *m->funcs)))
        rc = -ENOMEM;
    for (size_t i = 0; i < nf && rc == 0; i++) {
        const struct func_sum *x = &fs[i];
        const struct frame *f = &b->frames[x->frame];
        const struct strobe__blame_table *t = f->module == STROBE_NONE ? NULL : b->mods[f->module].t;
        struct strobe_blame_func *o = &m->funcs[m->nfuncs++];
        o->name = strdup(b->names[x->name]);
        o->file =
            strdup(t && f->func != STROBE_NONE ? strobe__blame_str(t, t->paths[t->funcs[f->func].path]) : "");
        o->line = t && f->func != STROBE_NONE ? t->funcs[f->func].line : 0;
        o->self = x->self;
        o->total = x->total;
        o->unknown = x->unknown;
        o->top_var = x->top;
        o->top_samples = x->top_samples;
        if (!o->name || !o->file)
            rc = -ENOMEM;
    }
    free(func_of);
    free(fs);
    free(pc);
    strobe__keymap_free(&ids);
    strobe__keymap_free(&pairs);
    return rc;
}

static int cmp_share(const void *a, const void *b)
{
    const struct strobe_blame_share *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return x->var < y->var ? -1 : x->var > y->var;
}

static int cmp_callee(const void *a, const void *b)
{
    const struct strobe_blame_callee *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The hybrid view of blame point p (function name NAME). */
static int sum_point(struct builder *b, struct strobe_blame_point *p, const char *name)
{
    struct strobe_blame_model *m = b->m;
    uint32_t pid;
    if (!(p->function = strdup(name)))
        return -ENOMEM;
    if (!strobe__keymap_get(&b->name_ids, name, strlen(name), &pid))
        return 0; /* never sampled */
    uint64_t *var_n = calloc(m->nvars ? m->nvars : 1, sizeof *var_n);
    struct pair_count *paths = NULL, *callees = NULL; /* paths: (first in seq, length); callees: (name, -) */
    uint32_t *seq = NULL;
    size_t npaths = 0, pcap = 0, ncallees = 0, ccap = 0, nseq = 0, seq_cap = 0;
    struct strobe__keymap path_ids = {0}, callee_ids = {0};
    int rc = var_n ? 0 : -ENOMEM;
    for (size_t s = 0; s < b->nstacks && rc == 0; s++) {
        const struct stack *st = &b->stacks[s];
        const uint32_t *fr = b->stack_frames + st->first;
        size_t o = st->n;
        while (o > 0 && b->frames[fr[o - 1]].name != pid)
            o--;
        if (o-- == 0)
            continue; /* not through it */
        p->samples += st->weight;
        /* its call path, from the outermost frame of user code */
        size_t top = st->n - 1;
        while (top > o && !in_table(b, &b->frames[fr[top]]))
            top--;
        size_t len = top - o + 1;
        if (strobe__grow((void **)&seq, &seq_cap, nseq + len, sizeof *seq)) {
            rc = -ENOMEM;
            break;
        }
        for (size_t k = 0; k < len; k++)
            seq[nseq + k] = b->frames[fr[top - k]].name;
        uint32_t id = (uint32_t)npaths;
        if ((rc = strobe__keymap_get_or_put(&path_ids, seq + nseq, len * sizeof *seq, &id)) < 0)
            break;
        if (rc == 0) {
            if (strobe__grow((void **)&paths, &pcap, npaths + 1, sizeof *paths)) {
                rc = -ENOMEM;
                break;
            }
            paths[npaths++] = (struct pair_count){(uint32_t)nseq, (uint32_t)len, 0};
            nseq += len;
        }
        paths[id].n += st->weight;
        rc = 0;
        for (uint32_t r = 0; r < st->nrows; r++)
            if (b->var_fname[b->results[st->rows + r]] == pid)
                var_n[b->results[st->rows + r]] += st->weight;
        if (o > 0)
            rc = pair_add(&callee_ids, &callees, &ncallees, &ccap, b->frames[fr[o - 1]].name, 0, st->weight);
    }
    /* the most common path (the first seen among equals) */
    size_t best = 0;
    for (size_t i = 1; i < npaths; i++)
        if (paths[i].n > paths[best].n)
            best = i;
    if (rc == 0 && npaths) {
        if (!(p->path = calloc(paths[best].b, sizeof *p->path)))
            rc = -ENOMEM;
        for (uint32_t k = 0; rc == 0 && k < paths[best].b; k++)
            if (!(p->path[p->npath++] = strdup(b->names[seq[paths[best].a + k]])))
                rc = -ENOMEM;
    }
    size_t nv = 0;
    for (size_t r = 0; r < m->nvars; r++)
        nv += var_n && var_n[r] != 0;
    if (rc == 0 && nv && !(p->vars = calloc(nv, sizeof *p->vars)))
        rc = -ENOMEM;
    for (size_t r = 0; rc == 0 && r < m->nvars; r++)
        if (var_n[r])
            p->vars[p->nvars++] = (struct strobe_blame_share){(uint32_t)r, var_n[r]};
    if (rc == 0 && ncallees && !(p->callees = calloc(ncallees, sizeof *p->callees)))
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < ncallees; i++) {
        p->callees[p->ncallees] = (struct strobe_blame_callee){strdup(b->names[callees[i].a]), callees[i].n};
        if (!p->callees[p->ncallees++].name)
            rc = -ENOMEM;
    }
    if (rc == 0 && p->ncallees)
        qsort(p->callees, p->ncallees, sizeof *p->callees, cmp_callee);
    free(var_n);
    free(paths);
    free(callees);
    free(seq);
    strobe__keymap_free(&path_ids);
    strobe__keymap_free(&callee_ids);
    return rc;
}

static int cmp_var_at(const void *a, const void *b, void *arg)
{
    const struct strobe_blame_var *v = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (v[x].samples != v[y].samples)
        return v[x].samples > v[y].samples ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int cmp_func(const void *a, const void *b)
{
    const struct strobe_blame_func *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void var_free(struct strobe_blame_var *v)
{
    free(v->name);
    free(v->type);
    free(v->function);
    free(v->file);
}

/* Only the charged rows, by samples (every reference renumbered). */
static int sort_vars(struct builder *b)
{
    struct strobe_blame_model *m = b->m;
    size_t n = m->nvars, k = 0;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order), *rank = malloc((n ? n : 1) * sizeof *rank);
    struct strobe_blame_var *v = malloc((n ? n : 1) * sizeof *v);
    if (!order || !rank || !v) {
        free(order);
        free(rank);
        free(v);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof *order, cmp_var_at, m->vars);
    for (size_t i = 0; i < n; i++) {
        rank[order[i]] = m->vars[order[i]].samples ? (uint32_t)k : STROBE_NONE;
        if (m->vars[order[i]].samples)
            v[k++] = m->vars[order[i]];
        else
            var_free(&m->vars[order[i]]);
    }
    for (size_t i = 0; i < k; i++)
        v[i].parent = v[i].parent == STROBE_NONE ? STROBE_NONE : rank[v[i].parent];
    for (size_t i = 0; i < m->nfuncs; i++)
        m->funcs[i].top_var = m->funcs[i].top_var == STROBE_NONE ? STROBE_NONE : rank[m->funcs[i].top_var];
    for (size_t p = 0; p < m->npoints; p++) {
        struct strobe_blame_point *pt = &m->points[p];
        for (size_t i = 0; i < pt->nvars; i++)
            pt->vars[i].var = rank[pt->vars[i].var];
        if (pt->nvars)
            qsort(pt->vars, pt->nvars, sizeof *pt->vars, cmp_share);
    }
    free(m->vars);
    m->vars = v;
    m->nvars = k;
    free(order);
    free(rank);
    return 0;
}

/* Attributes every distinct stack, then sums the views. */
static int finish(struct builder *b, const char *const *points, size_t np)
{
    static const char *const main_only[] = {"main"};
    struct strobe_blame_model *m = b->m;
    int rc = 0;
    m->nstacks = b->nstacks;
    if (!(b->stamp = calloc(m->nvars ? m->nvars : 1, sizeof *b->stamp)))
        return -ENOMEM;
    for (size_t s = 0; s < b->nstacks && rc == 0; s++)
        rc = attribute(b, (uint32_t)s);
    for (size_t s = 0; s < b->nstacks && rc == 0; s++) {
        const struct stack *st = &b->stacks[s];
        m->samples += st->weight;
        if (st->reason >= 0) {
            m->unknown += st->weight;
            m->by_reason[st->reason] += st->weight;
        }
        m->caller_unknown += st->caller_unknown ? st->weight : 0;
        for (uint32_t r = 0; r < st->nrows; r++)
            m->vars[b->results[st->rows + r]].samples += st->weight;
    }
    if (rc == 0)
        rc = sum_funcs(b);
    if (np == 0) {
        points = main_only;
        np = 1;
    }
    if (rc == 0 && !(m->points = calloc(np, sizeof *m->points)))
        rc = -ENOMEM;
    for (size_t p = 0; p < np && rc == 0; p++, m->npoints++)
        rc = sum_point(b, &m->points[p], points[p]);
    if (rc == 0)
        rc = sort_vars(b);
    if (rc == 0 && m->nfuncs)
        qsort(m->funcs, m->nfuncs, sizeof *m->funcs, cmp_func);
    return rc;
}

static void builder_free(struct builder *b)
{
    for (size_t i = 0; i < b->nmods; i++) {
        free(b->mods[i].path);
        strobe__blame_table_free(b->mods[i].t);
        free(b->mods[i].var_row);
        free(b->mods[i].func_name);
        free(b->mods[i].next_func);
        strobe__keymap_free(&b->mods[i].funcs);
    }
    free(b->mods);
    strobe__keymap_free(&b->mod_ids);
    for (size_t i = 0; i < b->nnames; i++)
        free(b->names[i]);
    free(b->names);
    strobe__keymap_free(&b->name_ids);
    free(b->frames);
    strobe__keymap_free(&b->frame_ids);
    free(b->pool);
    free(b->stacks);
    strobe__keymap_free(&b->stack_ids);
    free(b->stack_frames);
    free(b->results);
    free(b->var_fname);
    strobe__keymap_free(&b->row_ids);
    free(b->stamp);
    free(b->tmp);
    free(b->exits);
    free(b->next_exits);
    free(b->key);
    for (size_t p = 0; b->defs && p < b->exp->nprocesses; p++)
        strobe__defs_free(&b->defs[p]);
    free(b->defs);
    free(b->rframes);
    strobe__keymap_free(&b->rframe_ids);
    free(b->raw_frames);
    free(b->rstacks);
    strobe__keymap_free(&b->rstack_ids);
    free(b->raw_seq);
}

/* Ends a build: *out the model, or everything freed. */
static int done(struct builder *b, int rc, struct strobe_blame_model **out)
{
    if (rc == -ENOMEM)
        oom(b);
    builder_free(b);
    if (rc) {
        strobe_blame_model_free(b->m);
        return rc;
    }
    *out = b->m;
    return 0;
}

int strobe_blame_model_build(const struct strobe_experiment *exp, const struct strobe_sample_model *sm,
                             const char *const *points, size_t np, struct strobe_blame_model **out,
                             struct strobe_errbuf *eb)
{
    struct builder b = {.exp = exp, .eb = eb, .m = calloc(1, sizeof *b.m)};
    if (!b.m)
        return oom(&b);
    b.m->hz = sm->hz;
    /* the sample model's functions as (module, name) once */
    uint32_t *fmod = malloc((sm->nfuncs ? sm->nfuncs : 1) * sizeof *fmod);
    uint32_t *fname = malloc((sm->nfuncs ? sm->nfuncs : 1) * sizeof *fname);
    uint32_t *ffile = malloc((sm->nfuncs ? sm->nfuncs : 1) * sizeof *ffile);
    int rc = fmod && fname && ffile ? 0 : -ENOMEM;
    for (size_t f = 0; f < sm->nfuncs && rc == 0; f++) {
        ffile[f] = STROBE_NONE;
        if ((rc = module_id(&b, sm->funcs[f].module, &fmod[f])) == 0 &&
            (rc = name_id(&b, sm->funcs[f].name, &fname[f])) == 0 && *sm->funcs[f].file)
            rc = name_id(&b, sm->funcs[f].file, &ffile[f]);
    }
    for (size_t s = 0; s < sm->nstacks && rc == 0; s++) {
        const struct strobe_sample_stack *st = &sm->stacks[s];
        size_t n = 0;
        for (uint32_t i = 0; i < st->n && rc == 0; i++) {
            const struct strobe_sample_loc *l = &sm->locs[sm->stack_locs[st->first + i]];
            if (strobe__grow((void **)&b.key, &b.key_cap, n + l->n, sizeof *b.key)) {
                rc = -ENOMEM;
                break;
            }
            for (uint32_t k = 0; k < l->n && rc == 0; k++) {
                const struct strobe_sample_frame *fr = &sm->loc_frames[l->first + k];
                struct frame_key key = {fmod[fr->func], fname[fr->func],
                                        STROBE_NONE,    fr->line,
                                        fr->col,        strobe__is_runtime_module(sm->funcs[fr->func].module),
                                        ffile[fr->func]};
                rc = frame_id(&b, &key, &b.key[n++]);
            }
        }
        if (rc == 0)
            rc = count_stack(&b, b.key, n, st->samples, true);
    }
    free(fmod);
    free(fname);
    free(ffile);
    if (rc == 0)
        rc = finish(&b, points, np);
    if (rc == 0 && sm->unstacked) { /* no stack to charge: never dropped */
        b.m->samples += sm->unstacked;
        b.m->unknown += sm->unstacked;
        b.m->by_reason[STROBE_BLAME_NO_STACK] += sm->unstacked;
    }
    return done(&b, rc, out);
}

/* ---- sample lists (docs/blame.md, "Replaying a sample list") ---------- */

/* Whether PATH[0..lp) ends with the whole path components of TAIL[0..lt). */
static bool tail_match(const char *path, size_t lp, const char *tail, size_t lt)
{
    return lt && lp >= lt && memcmp(path + lp - lt, tail, lt) == 0 && (lp == lt || path[lp - lt - 1] == '/');
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return n > 0;
}

/* Whether module PATH is the one TAIL names: by whole trailing components,
 * a shared library also without its version ("libc.so" for libc.so.6). */
static bool module_match(const char *path, const char *tail, size_t lt)
{
    size_t lp = strlen(path);
    while (!tail_match(path, lp, tail, lt)) {
        const char *dot = memrchr(path, '.', lp);
        if (!dot || !all_digits(dot + 1, (size_t)(path + lp - dot - 1)))
            return false;
        lp = (size_t)(dot - path);
    }
    return true;
}

/* A FILE:LINE[:COL] frame: the table file it names (by its trailing
 * components) and the function of that table holding the line. */
static int file_frame(struct builder *b, const char *where, const char *s, size_t n, uint32_t *out)
{
    const char *c1 = memrchr(s, ':', n);
    if (!c1 || !all_digits(c1 + 1, (size_t)(s + n - c1 - 1)))
        return strobe__error(b->eb, STROBE_ERR_SYNTAX,
                             "%s: '%.*s' is neither FILE:LINE[:COL] nor MODULE+0xOFFSET", where, (int)n, s);
    size_t lf = (size_t)(c1 - s);
    unsigned long line = strtoul(c1 + 1, NULL, 10), col = 0;
    const char *c2 = memrchr(s, ':', lf);
    if (c2 && all_digits(c2 + 1, (size_t)(c1 - c2 - 1))) {
        col = line;
        line = strtoul(c2 + 1, NULL, 10);
        lf = (size_t)(c2 - s);
    }
    if (line > UINT32_MAX || col > UINT32_MAX)
        return strobe__error(b->eb, STROBE_ERR_SYNTAX, "%s: '%.*s': line or column too large", where, (int)n,
                             s);
    uint32_t mod = STROBE_NONE, path = STROBE_NONE;
    for (uint32_t i = 0; i < b->nmods; i++) {
        const struct strobe__blame_table *t = b->mods[i].t;
        for (uint32_t p = 0; t && p < t->npaths; p++) {
            const char *full = strobe__blame_str(t, t->paths[p]);
            if (!tail_match(full, strlen(full), s, lf))
                continue;
            if (mod == STROBE_NONE) {
                mod = i;
                path = p;
            } else if (strcmp(full, strobe__blame_str(b->mods[mod].t, b->mods[mod].t->paths[path])) != 0) {
                return strobe__error(b->eb, STROBE_ERR_SYNTAX, "%s: %.*s names several files: %s and %s",
                                     where, (int)lf, s,
                                     strobe__blame_str(b->mods[mod].t, b->mods[mod].t->paths[path]), full);
            }
        }
    }
    if (mod == STROBE_NONE)
        return strobe__error(b->eb, STROBE_ERR_SYNTAX,
                             "%s: no blame table of the experiment's modules has a file %.*s", where, (int)lf,
                             s);
    const struct strobe__blame_table *t = b->mods[mod].t;
    uint32_t func = strobe__blame_table_func_at(t, path, (unsigned)line);
    if (func == STROBE_NONE)
        return strobe__error(b->eb, STROBE_ERR_SYNTAX, "%s: no function of %s begins at or before line %lu",
                             where, strobe__blame_str(t, t->paths[path]), line);
    struct frame_key key = {mod,        b->mods[mod].func_name[func], path, (uint32_t)line, (uint32_t)col, 0,
                            STROBE_NONE};
    return frame_id(b, &key, out) ? -ENOMEM : 0;
}

/* The raw frame of the text s[0..n), parsed when new. */
static int raw_frame(struct builder *b, const char *where, const char *s, size_t n, uint32_t *id)
{
    *id = (uint32_t)b->nrframes;
    int rc = strobe__keymap_get_or_put(&b->rframe_ids, s, n, id);
    if (rc != 0)
        return rc < 0 ? -ENOMEM : 0;
    if (strobe__grow((void **)&b->rframes, &b->rframes_cap, b->nrframes + 1, sizeof *b->rframes) ||
        strobe__grow((void **)&b->raw_frames, &b->raw_frames_cap, b->nraw_frames + 1, sizeof *b->raw_frames))
        return -ENOMEM;
    struct raw_frame *r = &b->rframes[b->nrframes++];
    *r = (struct raw_frame){(uint32_t)b->nraw_frames, 1, STROBE_NONE, 0};
    /* MODULE+0xOFFSET: symbolized later, with the other addresses */
    const char *plus = NULL;
    for (const char *p = s; p + 3 <= s + n; p++)
        if (p[0] == '+' && p[1] == '0' && (p[2] == 'x' || p[2] == 'X'))
            plus = p;
    if (plus) {
        const char *hex = plus + 3;
        size_t lh = (size_t)(s + n - hex), lm = (size_t)(plus - s);
        bool ok = lh > 0 && lh <= 16;
        for (size_t i = 0; i < lh; i++)
            ok &= isxdigit((unsigned char)hex[i]) != 0;
        if (!ok)
            return strobe__error(b->eb, STROBE_ERR_SYNTAX,
                                 "%s: '%.*s': the offset is not a hexadecimal number", where, (int)n, s);
        uint64_t off = strtoull(hex, NULL, 16);
        for (uint32_t p = 0; p < b->exp->nprocesses && r->process == STROBE_NONE; p++)
            for (size_t i = 0; i < b->defs[p].nmodules; i++)
                if (module_match(b->defs[p].modules[i].path, s, lm)) {
                    r->process = p;
                    r->addr = b->defs[p].modules[i].bias + off;
                    break;
                }
        if (r->process != STROBE_NONE) {
            r->n = 0;
            return 0;
        }
        /* a module the experiment does not know: code without a table */
        uint32_t name;
        char *text = strndup(s, n);
        rc = text ? name_id(b, text, &name) : -ENOMEM;
        free(text);
        struct frame_key key = {STROBE_NONE, name, STROBE_NONE, 0, 0, 0, STROBE_NONE};
        if (rc == 0)
            rc = frame_id(b, &key, &b->raw_frames[b->nraw_frames++]);
        return rc ? -ENOMEM : 0;
    }
    uint32_t f;
    if ((rc = file_frame(b, where, s, n, &f)))
        return rc;
    b->raw_frames[b->nraw_frames++] = f;
    return 0;
}

/* One line of the list: "WEIGHT FRAME [< FRAME]...". */
static int list_line(struct builder *b, const char *where, char *s, size_t n)
{
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    while (n && isspace((unsigned char)*s))
        s++, n--;
    if (n == 0)
        return 0;
    size_t lw = 0;
    while (lw < n && !isspace((unsigned char)s[lw]))
        lw++;
    errno = 0;
    unsigned long long w = all_digits(s, lw) ? strtoull(s, NULL, 10) : 0;
    if (w == 0 || errno)
        return strobe__error(b->eb, STROBE_ERR_SYNTAX, "%s: WEIGHT '%.*s' is not a positive number", where,
                             (int)lw, s);
    const char *fr = s + lw;
    size_t nf = n - lw;
    while (nf && isspace((unsigned char)*fr))
        fr++, nf--;
    if (nf == 0)
        return strobe__error(b->eb, STROBE_ERR_SYNTAX, "%s: no frame after the weight", where);
    uint32_t id = (uint32_t)b->nrstacks;
    int rc = strobe__keymap_get_or_put(&b->rstack_ids, fr, nf, &id);
    if (rc < 0)
        return -ENOMEM;
    if (rc == 0) {
        size_t first = b->nraw_seq;
        for (size_t k = 0; k <= nf;) {
            size_t e = k;
            while (e < nf && fr[e] != '<')
                e++;
            size_t a = k, z = e;
            while (a < z && isspace((unsigned char)fr[a]))
                a++;
            while (z > a && isspace((unsigned char)fr[z - 1]))
                z--;
            if (a == z) {
                b->nraw_seq = first; /* the stack stays unknown: the list is refused */
                return strobe__error(b->eb, STROBE_ERR_SYNTAX, "%s: an empty frame", where);
            }
            if (strobe__grow((void **)&b->raw_seq, &b->raw_seq_cap, b->nraw_seq + 1, sizeof *b->raw_seq))
                return -ENOMEM;
            if ((rc = raw_frame(b, where, fr + a, z - a, &b->raw_seq[b->nraw_seq])))
                return rc;
            b->nraw_seq++;
            k = e + 1;
        }
        if (strobe__grow((void **)&b->rstacks, &b->rstacks_cap, b->nrstacks + 1, sizeof *b->rstacks))
            return -ENOMEM;
        b->rstacks[b->nrstacks++] = (struct raw_stack){(uint32_t)first, (uint32_t)(b->nraw_seq - first), 0};
    }
    b->rstacks[id].weight += w;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The list's MODULE+0xOFFSET frames symbolized like a real sample's
 * addresses (one libdw session per process), each into its inline chain. */
static int symbolize(struct builder *b)
{
    int rc = 0;
    for (uint32_t p = 0; p < b->exp->nprocesses && rc == 0; p++) {
        size_t n = 0;
        for (size_t i = 0; i < b->nrframes; i++)
            n += b->rframes[i].process == p;
        if (n == 0)
            continue;
        uint64_t *addrs = malloc(n * sizeof *addrs);
        struct strobe__code_loc *locs = calloc(n, sizeof *locs);
        if (!addrs || !locs) {
            free(addrs);
            free(locs);
            return -ENOMEM;
        }
        n = 0;
        for (size_t i = 0; i < b->nrframes; i++)
            if (b->rframes[i].process == p)
                addrs[n++] = b->rframes[i].addr;
        qsort(addrs, n, sizeof *addrs, cmp_u64);
        size_t u = 0;
        for (size_t i = 0; i < n; i++)
            if (u == 0 || addrs[i] != addrs[u - 1])
                addrs[u++] = addrs[i];
        rc = strobe__symbols_code(&b->defs[p], addrs, u, locs);
        for (size_t i = 0; i < b->nrframes && rc == 0; i++) {
            struct raw_frame *r = &b->rframes[i];
            if (r->process != p)
                continue;
            const uint64_t *a = bsearch(&r->addr, addrs, u, sizeof *addrs, cmp_u64);
            const struct strobe__code_loc *l = &locs[a - addrs];
            if (strobe__grow((void **)&b->raw_frames, &b->raw_frames_cap, b->nraw_frames + l->nframes,
                             sizeof *b->raw_frames)) {
                rc = -ENOMEM;
                break;
            }
            r->first = (uint32_t)b->nraw_frames;
            r->n = (uint32_t)l->nframes;
            for (size_t k = 0; k < l->nframes && rc == 0; k++) {
                struct frame_key key = {0,
                                        0,
                                        STROBE_NONE,
                                        l->frames[k].line,
                                        l->frames[k].col,
                                        strobe__is_runtime_module(l->module),
                                        STROBE_NONE};
                if ((rc = module_id(b, l->module, &key.module)) == 0 &&
                    (rc = name_id(b, l->frames[k].name, &key.name)) == 0 &&
                    (!*l->frames[k].file || (rc = name_id(b, l->frames[k].file, &key.file)) == 0))
                    rc = frame_id(b, &key, &b->raw_frames[b->nraw_frames++]);
            }
        }
        for (size_t i = 0; i < u; i++)
            strobe__code_loc_free(&locs[i]);
        free(locs);
        free(addrs);
    }
    return rc;
}

int strobe_blame_model_from_list(const struct strobe_experiment *exp, const char *list,
                                 const char *const *points, size_t np, struct strobe_blame_model **out,
                                 struct strobe_errbuf *eb)
{
    struct builder b = {.exp = exp, .eb = eb, .m = calloc(1, sizeof *b.m)};
    b.defs = calloc(exp->nprocesses ? exp->nprocesses : 1, sizeof *b.defs);
    if (!b.m || !b.defs)
        return done(&b, -ENOMEM, out);
    int rc = 0;
    /* the experiment's modules, every table read: FILE names a table's file */
    for (uint32_t p = 0; p < exp->nprocesses && rc == 0; p++) {
        if ((rc = strobe__process_defs(exp, p, &b.defs[p], eb)))
            return done(&b, rc, out);
        for (size_t i = 0; i < b.defs[p].nmodules && rc == 0; i++) {
            uint32_t id;
            if ((rc = module_id(&b, b.defs[p].modules[i].path, &id)) == 0 && id != STROBE_NONE)
                rc = load(&b, id);
        }
    }
    FILE *f = rc ? NULL : fopen(list, "r");
    if (rc == 0 && !f) {
        rc = -errno;
        strobe__error(eb, rc, "%s: %s", list, strerror(errno));
        return done(&b, rc, out);
    }
    char *line = NULL, where[4200];
    size_t cap = 0;
    ssize_t len;
    for (unsigned long no = 1; rc == 0 && (len = getline(&line, &cap, f)) >= 0; no++) {
        char *hash = memchr(line, '#', (size_t)len);
        snprintf(where, sizeof where, "%s:%lu", list, no);
        rc = list_line(&b, where, line, hash ? (size_t)(hash - line) : (size_t)len);
    }
    if (rc == 0 && ferror(f))
        rc = strobe__error(eb, -EIO, "%s: %s", list, strerror(EIO));
    free(line);
    if (f)
        fclose(f);
    if (rc == 0)
        rc = symbolize(&b);
    /* the stacks: each raw frame expanded into its frames */
    for (size_t s = 0; s < b.nrstacks && rc == 0; s++) {
        const struct raw_stack *rs = &b.rstacks[s];
        size_t n = 0;
        for (uint32_t i = 0; i < rs->n && rc == 0; i++) {
            const struct raw_frame *r = &b.rframes[b.raw_seq[rs->first + i]];
            if (strobe__grow((void **)&b.key, &b.key_cap, n + r->n, sizeof *b.key))
                rc = -ENOMEM;
            for (uint32_t k = 0; rc == 0 && k < r->n; k++)
                b.key[n++] = b.raw_frames[r->first + k];
        }
        if (rc == 0)
            rc = count_stack(&b, b.key, n, rs->weight, false);
    }
    if (rc == 0)
        rc = finish(&b, points, np);
    return done(&b, rc, out);
}

void strobe_blame_model_free(struct strobe_blame_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nvars; i++)
        var_free(&m->vars[i]);
    free(m->vars);
    for (size_t i = 0; i < m->nfuncs; i++) {
        free(m->funcs[i].name);
        free(m->funcs[i].file);
    }
    free(m->funcs);
    for (size_t p = 0; p < m->npoints; p++) {
        struct strobe_blame_point *pt = &m->points[p];
        free(pt->function);
        for (size_t i = 0; i < pt->npath; i++)
            free(pt->path[i]);
        free(pt->path);
        free(pt->vars);
        for (size_t i = 0; i < pt->ncallees; i++)
            free(pt->callees[i].name);
        free(pt->callees);
    }
    free(m->points);
    for (size_t i = 0; i < m->nwarnings; i++)
        free(m->warnings[i]);
    free(m->warnings);
    free(m);
}
