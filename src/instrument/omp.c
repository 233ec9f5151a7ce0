/* SPDX-License-Identifier: MIT */
/*
 * OpenMP constructs (omp.h). A construct's directive is replaced, on its
 * own line, by the calls that begin it and the directive again as
 * _Pragma("omp ..."), which may stand in the middle of a line; the calls
 * that end it follow its statement on the statement's last line. So no
 * line moves and the statement keeps its exact extent from the AST.
 */
#include "instrument/omp.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/format.h"

#define ITEMS_MAX 64
#define PART_MAX 512

/* One word of a directive with its parenthesized arguments, if any:
 * "parallel", "num_threads(4)", "critical(name)". */
struct item {
    char name[32];
    char text[PART_MAX]; /* the whole item as written back */
    bool args;
};

struct directive {
    const struct strobe__inst_pragma *p;
    struct item items[ITEMS_MAX];
    size_t n;
    const char *func;
};

/* Splits a directive's words into items; false when malformed (unbalanced
 * parentheses, too long). */
static bool split(const char *text, struct directive *d)
{
    d->n = 0;
    const char *c = text;
    for (;;) {
        c += strspn(c, " \t,");
        if (!*c)
            return true;
        if (d->n == ITEMS_MAX)
            return false;
        struct item *it = &d->items[d->n++];
        size_t w = strcspn(c, " \t,(");
        if (w == 0 || w >= sizeof it->name)
            return false;
        snprintf(it->name, sizeof it->name, "%.*s", (int)w, c);
        const char *e = c + w, *a = e + strspn(e, " \t");
        it->args = *a == '(';
        if (it->args) {
            int depth = 0;
            for (e = a; *e; e++) {
                depth += *e == '(';
                depth -= *e == ')';
                if (depth == 0)
                    break;
            }
            if (!*e)
                return false;
            e++;
        }
        /* "num_threads ( 4 )" as the tokens were joined: written back whole */
        if ((size_t)(e - c) >= sizeof it->text)
            return false;
        snprintf(it->text, sizeof it->text, "%.*s", (int)(e - c), c);
        c = e;
    }
}

static bool has(const struct directive *d, size_t from, const char *name)
{
    for (size_t i = from; i < d->n; i++)
        if (strcmp(d->items[i].name, name) == 0)
            return true;
    return false;
}

/* Appends the items [from, n) that `keep` accepts to out. */
static void clauses(const struct directive *d, size_t from, bool (*keep)(const char *), char *out, size_t len)
{
    for (size_t i = from; i < d->n; i++)
        if (!keep || keep(d->items[i].name)) {
            size_t k = strlen(out);
            snprintf(out + k, len - k, " %s", d->items[i].text);
        }
}

/* The clauses of a combined `parallel for|sections` that go to the
 * parallel region; the others go to the worksharing construct. */
static bool parallel_clause(const char *c)
{
    static const char *const p[] = {"if",     "num_threads", "default",   "private",   "firstprivate",
                                    "shared", "copyin",      "reduction", "proc_bind", "allocate"};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        if (strcmp(c, p[i]) == 0)
            return true;
    return false;
}

/* ---- code ----------------------------------------------------------------- */

struct code {
    char buf[4 * PART_MAX];
    bool full;
};

static void put(struct code *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct code *c, const char *fmt, ...)
{
    size_t k = strlen(c->buf);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->buf + k, sizeof c->buf - k, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof c->buf - k)
        c->full = true;
}

/* _Pragma("omp WORDS") */
static void put_pragma(struct code *c, const char *words)
{
    char q[2 * PART_MAX] = "";
    if (!strobe__inst_quote(q, sizeof q, words))
        c->full = true;
    put(c, "_Pragma(\"omp %s\") ", q);
}

/* A descriptor for the construct's region of kind `kind`, named
 * "<kind name>@<function>" (or `what` instead of the kind's name). */
static unsigned region(struct strobe__inst_src *s, const struct directive *d, unsigned kind, const char *what)
{
    char name[1024];
    snprintf(name, sizeof name, "%s@%s", what ? what : strobe_region_kind_name(kind), d->func);
    return strobe__inst_region(s, name, d->p->line);
}

static void enter(struct code *c, unsigned r, unsigned kind)
{
    if (kind == STROBE_REGION_OMP_IMPLICIT_TASK)
        put(c, "strobe__inst_task(strobe__inst_r%u()); ", r);
    else
        put(c, "strobe__inst_in(strobe__inst_r%u(), %u); ", r, kind);
}

static void leave(struct code *c, unsigned r)
{
    put(c, "strobe__inst_exit(strobe__inst_r%u()); ", r);
}

/* A barrier with its wait measured: an explicit one, or the implicit one
 * at a construct's end made explicit. */
static void barrier(struct strobe__inst_src *s, const struct directive *d, struct code *c)
{
    unsigned r = region(s, d, STROBE_REGION_OMP_BARRIER, NULL);
    enter(c, r, STROBE_REGION_OMP_BARRIER);
    put_pragma(c, "barrier");
    leave(c, r);
}

/* What a construct's statement gets besides the closing code after it.
 * The closing code follows the statement on its last line; when that
 * line ends an unbraced body (`for (...)\n    x++;`), compilers warn that
 * the code looks like part of the body (-Wmisleading-indentation), so the
 * statement is braced; a loop, which must follow its directive directly,
 * gets its body braced instead. */
enum body {
    NO_STATEMENT, /* a standalone directive */
    BRACE,        /* braced unless it is a compound statement */
    LOOP_BODY,    /* the loop's body braced (collapsed loops too: compilers accept that) */
    AS_IS,        /* atomic: the expression statement must follow the directive */
};

/* Emits the directive's edits: `open` replaces it, `close` follows its
 * statement (when it has one). */
static int emit(struct strobe__inst_src *s, const struct directive *d, struct code *open,
                const struct code *close, enum body body)
{
    if (open->full || close->full)
        return strobe__inst_fail(s, d->p->line, "OpenMP directive too long to instrument");
    if (body != NO_STATEMENT) {
        struct strobe__inst_span st;
        if (!strobe__inst_stmt_after(s, d->p->end, &st))
            return strobe__inst_fail(s, d->p->line, "omp %s is not followed by a statement",
                                     d->items[0].name);
        if (body == BRACE && s->buf[st.start] != '{') {
            /* around whatever lies between the directive and the end of
             * its statement (inner directives included) */
            put(open, "{ ");
            if (open->full)
                return strobe__inst_fail(s, d->p->line, "OpenMP directive too long to instrument");
            strobe__inst_edit(s, st.end, 0, STROBE__INST_CLOSE, d->p->off, " }%s", close->buf);
            return strobe__inst_replace(s, d->p, open->buf);
        }
        if (body == LOOP_BODY) {
            unsigned header = strobe__inst_for_header(s, strobe__inst_token_at(s, st.start));
            unsigned b = header && header + 1 < s->ntoks ? strobe__inst_token_start(s, header + 1) : 0;
            if (!b)
                return strobe__inst_fail(s, d->p->line, "omp %s is not followed by a for loop",
                                         d->items[0].name);
            /* inside the construct's text: p->end orders the brace after
             * the directive's own opening and before any inner one's */
            if (s->buf[b] != '{') {
                strobe__inst_edit(s, b, 0, STROBE__INST_OPEN, d->p->end, "{ ");
                strobe__inst_edit(s, st.end, 0, STROBE__INST_CLOSE, d->p->end, " }");
            }
        }
        strobe__inst_edit(s, st.end, 0, STROBE__INST_CLOSE, d->p->off, "%s", close->buf);
    }
    return strobe__inst_replace(s, d->p, open->buf);
}

/* parallel [for|sections|master|masked]: the parallel region on the
 * forking thread, the implicit task on each thread, the region's closing
 * barrier made explicit (its wait: the team's imbalance). A combined
 * construct is split; its worksharing construct gets `nowait`, the
 * parallel region's barrier stands for both. */
static int parallel(struct strobe__inst_src *s, struct directive *d)
{
    struct code open = {.full = false}, close = {.full = false};
    const char *inner = d->n > 1 && !d->items[1].args ? d->items[1].name : "";
    size_t from = 1;
    bool ws = strcmp(inner, "for") == 0 || strcmp(inner, "sections") == 0;
    bool master = strcmp(inner, "master") == 0 || strcmp(inner, "masked") == 0;
    if (ws || master)
        from = 2;
    bool simd = ws && d->n > 2 && strcmp(d->items[2].name, "simd") == 0 && !d->items[2].args;
    if (simd)
        from = 3;
    char pc[2 * PART_MAX] = "parallel", wc[2 * PART_MAX] = "";
    /* firstprivate with lastprivate: both to the worksharing construct, so
     * that a variable in both is shared by the parallel region and gets the
     * loop's last value */
    bool fp_inner = ws && has(d, from, "lastprivate") && has(d, from, "firstprivate");
    for (size_t i = from; i < d->n; i++) {
        const char *name = d->items[i].name;
        bool to_parallel = ws ? parallel_clause(name) && !(fp_inner && strcmp(name, "firstprivate") == 0)
                              : !master || strcmp(name, "filter") != 0;
        char *dst = to_parallel ? pc : wc;
        size_t k = strlen(dst);
        snprintf(dst + k, sizeof pc - k, " %s", d->items[i].text);
        if (fp_inner && strcmp(name, "firstprivate") == 0 && has(d, from, "default")) {
            k = strlen(pc); /* default(none) needs them listed */
            snprintf(pc + k, sizeof pc - k, " shared%s", d->items[i].text + strlen(name));
        }
    }
    unsigned rp = region(s, d, STROBE_REGION_OMP_PARALLEL, NULL);
    unsigned rt = region(s, d, STROBE_REGION_OMP_IMPLICIT_TASK, NULL);
    put(&open, "{ ");
    enter(&open, rp, STROBE_REGION_OMP_PARALLEL);
    put_pragma(&open, pc);
    put(&open, "{ ");
    enter(&open, rt, STROBE_REGION_OMP_IMPLICIT_TASK);
    unsigned rw = 0;
    if (ws) {
        bool loop = strcmp(inner, "for") == 0;
        unsigned kind = loop ? STROBE_REGION_OMP_LOOP : STROBE_REGION_OMP_SECTIONS;
        rw = region(s, d, kind, NULL);
        enter(&open, rw, kind);
        char w[2 * PART_MAX + 32];
        snprintf(w, sizeof w, "%s%s%s nowait", inner, simd ? " simd" : "", wc);
        put_pragma(&open, w);
        leave(&close, rw);
    } else if (master) {
        rw = region(s, d, STROBE_REGION_OMP_MASTER, NULL);
        char w[2 * PART_MAX + 32];
        snprintf(w, sizeof w, "%s%s", inner, wc);
        put_pragma(&open, w);
        put(&open, "{ ");
        enter(&open, rw, STROBE_REGION_OMP_MASTER);
        leave(&close, rw);
        put(&close, "} ");
    }
    barrier(s, d, &close);
    leave(&close, rt);
    put(&close, "} ");
    leave(&close, rp);
    put(&close, "}");
    return emit(s, d, &open, &close, strcmp(inner, "for") == 0 ? LOOP_BODY : BRACE);
}

/* for, sections, single: the construct's region, then its implicit
 * barrier made explicit unless it has `nowait` (or, for single,
 * `copyprivate`, which cannot go with nowait: that barrier stays
 * implicit and unmeasured). */
static int worksharing(struct strobe__inst_src *s, struct directive *d, unsigned kind)
{
    struct code open = {.full = false}, close = {.full = false};
    bool simd = kind == STROBE_REGION_OMP_LOOP && d->n > 1 && strcmp(d->items[1].name, "simd") == 0;
    size_t from = simd ? 2 : 1;
    bool wait = !has(d, from, "nowait") && !has(d, from, "copyprivate");
    char w[2 * PART_MAX] = "";
    snprintf(w, sizeof w, "%s%s", d->items[0].name, simd ? " simd" : "");
    clauses(d, from, NULL, w, sizeof w);
    if (wait)
        snprintf(w + strlen(w), sizeof w - strlen(w), " nowait");
    unsigned r = region(s, d, kind, NULL);
    put(&open, "{ ");
    if (kind == STROBE_REGION_OMP_SINGLE) {
        /* the thread that runs the block */
        put_pragma(&open, w);
        put(&open, "{ ");
        enter(&open, r, kind);
        leave(&close, r);
        put(&close, "} ");
    } else {
        enter(&open, r, kind);
        put_pragma(&open, w);
        leave(&close, r);
    }
    if (wait)
        barrier(s, d, &close);
    put(&close, "}");
    return emit(s, d, &open, &close, kind == STROBE_REGION_OMP_LOOP ? LOOP_BODY : BRACE);
}

/* section, master, masked, task, atomic: a region around the statement,
 * inside the construct (atomic: around it, the statement must follow the
 * directive directly). */
static int block(struct strobe__inst_src *s, struct directive *d, unsigned kind)
{
    struct code open = {.full = false}, close = {.full = false};
    char w[2 * PART_MAX] = "";
    snprintf(w, sizeof w, "%s", d->items[0].name);
    clauses(d, 1, NULL, w, sizeof w);
    unsigned r = region(s, d, kind, NULL);
    if (kind == STROBE_REGION_OMP_ATOMIC) {
        put(&open, "{ ");
        enter(&open, r, kind);
        put_pragma(&open, w);
        leave(&close, r);
        put(&close, "}");
    } else {
        put_pragma(&open, w);
        put(&open, "{ ");
        enter(&open, r, kind);
        leave(&close, r);
        put(&close, "}");
    }
    return emit(s, d, &open, &close, kind == STROBE_REGION_OMP_ATOMIC ? AS_IS : BRACE);
}

/* critical, ordered: the wait to get in (an omp wait region), then the
 * region inside. */
static int exclusive(struct strobe__inst_src *s, struct directive *d, unsigned kind)
{
    struct code open = {.full = false}, close = {.full = false};
    char w[2 * PART_MAX] = "", what[PART_MAX + 32];
    snprintf(w, sizeof w, "%s", d->items[0].text);
    clauses(d, 1, NULL, w, sizeof w);
    /* a named critical section: "omp critical(name)" */
    snprintf(what, sizeof what, "%s", strobe_region_kind_name(kind));
    for (const char *a = d->items[0].args ? d->items[0].text + strlen(d->items[0].name) : ""; *a; a++)
        if (*a != ' ' && strlen(what) + 1 < sizeof what)
            strncat(what, a, 1);
    unsigned rw = region(s, d, STROBE_REGION_OMP_WAIT, NULL);
    unsigned r = region(s, d, kind, what);
    put(&open, "{ ");
    enter(&open, rw, STROBE_REGION_OMP_WAIT);
    put_pragma(&open, w);
    put(&open, "{ ");
    leave(&open, rw);
    enter(&open, r, kind);
    leave(&close, r);
    put(&close, "} }");
    return emit(s, d, &open, &close, BRACE);
}

/* barrier, taskwait, flush: a region around the standalone directive. */
static int standalone(struct strobe__inst_src *s, struct directive *d, unsigned kind)
{
    struct code open = {.full = false}, close = {.full = false};
    char w[2 * PART_MAX] = "";
    snprintf(w, sizeof w, "%s", d->items[0].text);
    clauses(d, 1, NULL, w, sizeof w);
    unsigned r = region(s, d, kind, NULL);
    put(&open, "{ ");
    enter(&open, r, kind);
    put_pragma(&open, w);
    leave(&open, r);
    put(&open, "}");
    return emit(s, d, &open, &close, NO_STATEMENT);
}

/* taskgroup: its region holds the block and the wait at its end. */
static int taskgroup(struct strobe__inst_src *s, struct directive *d)
{
    struct code open = {.full = false}, close = {.full = false};
    char w[2 * PART_MAX] = "taskgroup";
    clauses(d, 1, NULL, w, sizeof w);
    unsigned r = region(s, d, STROBE_REGION_OMP_TASKGROUP, NULL);
    put(&open, "{ ");
    enter(&open, r, STROBE_REGION_OMP_TASKGROUP);
    put_pragma(&open, w);
    put(&open, "{ ");
    put(&close, "} ");
    leave(&close, r);
    put(&close, "}");
    return emit(s, d, &open, &close, BRACE);
}

static int construct(struct strobe__inst_src *s, struct directive *d)
{
    const char *w = d->items[0].name;
    if (strcmp(w, "parallel") == 0)
        return parallel(s, d);
    if (strcmp(w, "for") == 0)
        return worksharing(s, d, STROBE_REGION_OMP_LOOP);
    if (strcmp(w, "sections") == 0)
        return worksharing(s, d, STROBE_REGION_OMP_SECTIONS);
    if (strcmp(w, "single") == 0)
        return worksharing(s, d, STROBE_REGION_OMP_SINGLE);
    if (strcmp(w, "section") == 0)
        return block(s, d, STROBE_REGION_OMP_SECTION);
    if (strcmp(w, "master") == 0 || strcmp(w, "masked") == 0)
        return block(s, d, STROBE_REGION_OMP_MASTER);
    if (strcmp(w, "task") == 0)
        return block(s, d, STROBE_REGION_OMP_TASK);
    if (strcmp(w, "atomic") == 0)
        return block(s, d, STROBE_REGION_OMP_ATOMIC);
    if (strcmp(w, "critical") == 0)
        return exclusive(s, d, STROBE_REGION_OMP_CRITICAL);
    /* ordered with depend() is a standalone directive of a doacross loop:
     * not instrumented */
    if (strcmp(w, "ordered") == 0)
        return has(d, 1, "depend") || has(d, 1, "doacross") ? 0 : exclusive(s, d, STROBE_REGION_OMP_ORDERED);
    if (strcmp(w, "barrier") == 0)
        return standalone(s, d, STROBE_REGION_OMP_BARRIER);
    if (strcmp(w, "taskwait") == 0)
        return standalone(s, d, STROBE_REGION_OMP_WAIT);
    if (strcmp(w, "flush") == 0)
        return standalone(s, d, STROBE_REGION_OMP_FLUSH);
    if (strcmp(w, "taskgroup") == 0)
        return taskgroup(s, d);
    return 0; /* simd, target, teams, declare, threadprivate, ...: left as they are */
}

const char *const strobe__inst_omp_locks[] = {"omp_set_lock", "omp_set_nest_lock", NULL};

/* omp_set_lock and omp_set_nest_lock: the wait for the lock, as a region
 * named after the call, around it: `(enter, omp_set_lock(l), exit)`. */
static void lock_calls(struct strobe__inst_src *s)
{
    for (size_t i = 0; i < s->ncalls && !s->rc; i++) {
        const struct strobe__inst_call *c = &s->calls[i];
        if (strobe__inst_excluded(s, c->start))
            continue;
        char name[256];
        snprintf(name, sizeof name, "%s@%s", strobe__inst_omp_locks[c->name],
                 strobe__inst_function_at(s, c->start));
        unsigned r = strobe__inst_region(s, name, c->line);
        strobe__inst_edit(s, c->start, 0, STROBE__INST_OPEN, c->start,
                          "(strobe__inst_in(strobe__inst_r%u(), %u), ", r, STROBE_REGION_OMP_WAIT);
        strobe__inst_edit(s, c->end, 0, STROBE__INST_CLOSE, c->start,
                          ", strobe__inst_exit(strobe__inst_r%u()))", r);
    }
}

int strobe__inst_plan_omp(struct strobe__inst_src *s)
{
    if (!s->omp)
        return 0;
    lock_calls(s);
    for (size_t i = 0; i < s->npragmas && !s->rc; i++) {
        const struct strobe__inst_pragma *p = &s->pragmas[i];
        if (p->family != STROBE__INST_OMP || strobe__inst_excluded(s, p->off))
            continue;
        struct directive d = {.p = p, .func = strobe__inst_function_at(s, p->off)};
        if (!split(p->text, &d))
            return strobe__inst_fail(s, p->line, "malformed OpenMP directive: omp %s", p->text);
        if (d.n && !*d.func)
            continue; /* outside a function: declare, threadprivate, requires */
        if (d.n)
            construct(s, &d);
    }
    return s->rc;
}
