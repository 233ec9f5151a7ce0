/* SPDX-License-Identifier: MIT */
/*
 * Cube4 exporter: writes the merged call-path profile as a .cubex file for
 * CubeGUI, cube_dump, CubeLib and pycubexr. The format, as CubeW writes and
 * CubeLib reads it:
 *
 *  - a ustar archive holding, per metric, "<id>.data" and "<id>.index",
 *    and "anchor.xml" last (staged in a temporary file, so OUT is written
 *    strictly sequentially and may be a pipe);
 *  - anchor.xml: metric tree, regions, call tree (nested <cnode>), system
 *    tree (systemtreenode > locationgroup > location). CubeLib scans it
 *    with a strict flex grammar: attribute values exactly `name="value"`,
 *    no empty-element tags (<url></url>, not <url/>), locationgroups of a
 *    systemtreenode before its child nodes, name/rank/type in that order;
 *  - <id>.index: "CUBEX.INDEX", int32 1 (endianness probe), uint16 version
 *    0, uint8 format 1 (SPARSE), uint32 N, then N uint32 row numbers. A
 *    DENSE index (format 0) has no list, but pycubexr only reads SPARSE, so
 *    SPARSE listing every row is written (as Score-P does);
 *  - <id>.data: "CUBEX.DATA" then N rows of one value per location, rows in
 *    index order, locations in definition order of the system tree.
 *
 * Row numbers are not cnode ids but positions in a per-metric enumeration
 * of the call tree: depth-first preorder for EXCLUSIVE metrics, a
 * breadth-like order for INCLUSIVE ones. Every metric here is EXCLUSIVE
 * (CubeLib refuses MINDOUBLE/MAXDOUBLE as INCLUSIVE, and CubeGUI derives
 * inclusive values of exclusive metrics itself), and cnode ids are assigned
 * in depth-first preorder, so row number == cnode id.
 *
 * Metrics (ids = file names): 0 time (DOUBLE s, exclusive), 1 visits
 * (UINT64), 2 min_time (MINDOUBLE s, shortest inclusive visit), 3 max_time
 * (MAXDOUBLE s), 4.. user metrics (INT64, sum of the reported values).
 * A (call path, thread) pair without a completed visit stores min = DBL_MAX
 * (CubeLib's neutral "zero" of MINDOUBLE) and max = 0.
 *
 * The call tree root of the model (no region) becomes a cnode of an
 * artificial region named after the program, like Score-P's program root.
 *
 * An experiment recorded with `strobe run --sample` adds, as the root's
 * last child, an artificial cnode "sampled call stacks" holding the
 * sampled call tree (analysis/samples.h: one region per sampled function,
 * paradigm "sampling"), and a last metric "samples" (UINT64, the sampling
 * periods each sampled call path was running in; 0 elsewhere). So a
 * program without instrumentation has a call tree in Cube too.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/samples.h"
#include "common/format.h"
#include "export/escape.h"
#include "export/export.h"
#include "export/names.h"
#include "export/output.h"
#include "export/tar.h"
#include "strobe/strobe.h"

enum builtin_metric {
    METRIC_TIME,
    METRIC_VISITS,
    METRIC_MIN_TIME,
    METRIC_MAX_TIME,
    NBUILTIN,
};

struct metric_desc {
    const char *disp_name, *dtype, *uom, *descr;
    char *uniq_name;
};

/* A cnode of the sampled subtree: SAMPLED | sample-model node index (node
 * 0: its artificial root); other cnodes are profile node indices. */
#define SAMPLED 0x80000000u

struct cubex {
    const struct strobe_experiment *exp;
    const struct strobe_profile *prof;
    const struct strobe_sample_model *sm; /* NULL: not sampled */
    uint32_t *sm_first;                   /* [sm->nnodes + 1]: node n's entries in sm->node_threads */
    size_t samples_metric;                /* metric id of "samples" (sm only) */
    const char *out;
    struct strobe_errbuf *eb;
    FILE *f;
    struct strobe__tar tar;
    uint32_t *preorder;  /* [ncnodes] profile node index (or SAMPLED | sampled node) of cnode id i */
    uint32_t *locations; /* [nthreads] global thread index of location id i */
    size_t nmetrics;     /* NBUILTIN + exp->nmetrics */
    struct metric_desc *metrics;
    unsigned char *row; /* one data row: nthreads values of 8 bytes */
    uint32_t *open;     /* [ncnodes] cnodes open while writing the nesting */
    FILE *xml;          /* anchor.xml, staged in a temporary file for its size */
};

/* ---- enumeration ------------------------------------------------------ */

/* A tree's links of node n: first child, next sibling, parent. */
typedef void (*links_fn)(const void *tree, uint32_t n, uint32_t links[3]);

static void profile_links(const void *tree, uint32_t n, uint32_t links[3])
{
    const struct strobe_cnode *c = &((const struct strobe_profile *)tree)->nodes[n];
    links[0] = c->first_child, links[1] = c->next_sibling, links[2] = c->parent;
}

static void sample_links(const void *tree, uint32_t n, uint32_t links[3])
{
    const struct strobe_sample_node *s = &((const struct strobe_sample_model *)tree)->nodes[n];
    links[0] = s->first_child, links[1] = s->next_sibling, links[2] = s->parent;
}

/* Depth-first preorder of a tree rooted at node 0, without recursion (call
 * trees of recursive programs are deep): follow the first child, else the
 * next sibling of the nearest ancestor that has one. Each entry is the
 * node index | tag. */
static size_t preorder(const void *tree, size_t nnodes, links_fn links, uint32_t tag, uint32_t *out)
{
    size_t n = 0;
    uint32_t node = 0, l[3];
    while (node != STROBE_NONE && n < nnodes) {
        out[n++] = tag | node;
        links(tree, node, l);
        if (l[0] != STROBE_NONE) {
            node = l[0];
            continue;
        }
        for (;;) { /* up to the nearest ancestor with a next sibling */
            if (node == 0) {
                node = STROBE_NONE;
                break;
            }
            links(tree, node, l);
            if (l[1] != STROBE_NONE) {
                node = l[1];
                break;
            }
            node = l[2];
        }
    }
    return n;
}

/* ---- binary members --------------------------------------------------- */

static void put_u64le(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u32le(FILE *f, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}

static uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static const struct strobe_stats no_stats = {.min_ns = UINT64_MAX};

/* The self samples of sampled node s in thread. */
static uint64_t sampled_self(const struct cubex *c, uint32_t s, uint32_t thread)
{
    for (uint32_t i = c->sm_first[s]; i < c->sm_first[s + 1]; i++)
        if (c->sm->node_threads[i].thread == thread)
            return c->sm->node_threads[i].self;
    return 0;
}

/* The 8-byte little-endian value of metric m at (cnode node, thread). */
static uint64_t value_bits(const struct cubex *c, size_t m, uint32_t node, uint32_t thread)
{
    if (node & SAMPLED) { /* samples only: no visit, no time */
        if (c->sm && m == c->samples_metric)
            return sampled_self(c, node & ~SAMPLED, thread);
        return m == METRIC_MIN_TIME                       ? double_bits(DBL_MAX)
               : m == METRIC_TIME || m == METRIC_MAX_TIME ? double_bits(0.0)
                                                          : 0;
    }
    if (c->sm && m == c->samples_metric)
        return 0;
    const struct strobe_cnode *n = &c->prof->nodes[node];
    const struct strobe_stats *s = n->per_thread ? &n->per_thread[thread] : &no_stats;
    /* A completed visit has set min_ns; the model's root has no visits. */
    bool timed = s->min_ns != UINT64_MAX && (s->visits > 0 || s->max_ns > 0);
    switch (m) {
    case METRIC_TIME:
        return double_bits((double)s->excl_ns / 1e9);
    case METRIC_VISITS:
        return s->visits;
    case METRIC_MIN_TIME:
        return double_bits(timed ? (double)s->min_ns / 1e9 : DBL_MAX);
    case METRIC_MAX_TIME:
        return double_bits(timed ? (double)s->max_ns / 1e9 : 0.0);
    default: {
        /* experiment.h: thread_metrics holds nthreads * nmetrics entries,
         * thread-major (entry thread * nmetrics + metric). */
        size_t um = m - NBUILTIN;
        if (!n->thread_metrics)
            return 0;
        return (uint64_t)n->thread_metrics[(size_t)thread * c->exp->nmetrics + um].sum;
    }
    }
}

static int write_metric_files(struct cubex *c, size_t m, uint32_t ncnodes)
{
    size_t nloc = c->exp->nthreads;
    char name[32];
    int rc;

    snprintf(name, sizeof name, "%zu.data", m);
    uint64_t data_size = 10 + (uint64_t)ncnodes * nloc * 8;
    if ((rc = strobe__tar_begin(&c->tar, name, data_size)) < 0)
        return rc;
    fwrite("CUBEX.DATA", 1, 10, c->f);
    for (uint32_t id = 0; id < ncnodes; id++) {
        for (size_t l = 0; l < nloc; l++)
            put_u64le(c->row + 8 * l, value_bits(c, m, c->preorder[id], c->locations[l]));
        fwrite(c->row, 8, nloc, c->f);
    }
    strobe__tar_end(&c->tar);

    snprintf(name, sizeof name, "%zu.index", m);
    if ((rc = strobe__tar_begin(&c->tar, name, 22 + 4 * (uint64_t)ncnodes)) < 0)
        return rc;
    fwrite("CUBEX.INDEX", 1, 11, c->f);
    put_u32le(c->f, 1);         /* endianness probe */
    fwrite("\0\0", 1, 2, c->f); /* version 0 */
    fputc(1, c->f);             /* SPARSE */
    put_u32le(c->f, ncnodes);
    for (uint32_t id = 0; id < ncnodes; id++)
        put_u32le(c->f, id);
    strobe__tar_end(&c->tar);
    return 0;
}

/* ---- anchor.xml ------------------------------------------------------- */

static void xml_element(FILE *f, const char *tag, const char *text)
{
    fprintf(f, "<%s>", tag);
    strobe__xml_text(f, text);
    fprintf(f, "</%s>\n", tag);
}

static void xml_attr_tag(FILE *f, const char *key, const char *value)
{
    fputs("<attr key=\"", f);
    strobe__xml_text(f, key);
    fputs("\" value=\"", f);
    strobe__xml_text(f, value);
    fputs("\"/>\n", f);
}

static void write_anchor_metrics(struct cubex *c)
{
    FILE *f = c->xml;
    fputs("<metrics>\n", f);
    for (size_t m = 0; m < c->nmetrics; m++) {
        const struct metric_desc *d = &c->metrics[m];
        fprintf(f, "<metric id=\"%zu\" type=\"EXCLUSIVE\">\n", m);
        xml_element(f, "disp_name", d->disp_name);
        xml_element(f, "uniq_name", d->uniq_name);
        xml_element(f, "dtype", d->dtype);
        xml_element(f, "uom", d->uom);
        xml_element(f, "url", "");
        xml_element(f, "descr", d->descr);
        fputs("</metric>\n", f);
    }
    fputs("</metrics>\n", f);
}

static void write_region(FILE *f, size_t id, const char *name, const char *file, unsigned line,
                         const char *paradigm, const char *role, const char *descr)
{
    fprintf(f, "<region id=\"%zu\" mod=\"", id);
    strobe__xml_text(f, file);
    if (line)
        fprintf(f, "\" begin=\"%u\" end=\"-1\">\n", line);
    else
        fputs("\" begin=\"-1\" end=\"-1\">\n", f);
    xml_element(f, "name", name);
    xml_element(f, "mangled_name", name);
    xml_element(f, "paradigm", paradigm);
    xml_element(f, "role", role);
    xml_element(f, "url", "");
    xml_element(f, "descr", descr);
    fputs("</region>\n", f);
}

/* Cube region ids: 0 = artificial program root, r + 1 = model region r. */
static void write_anchor_program(struct cubex *c, uint32_t ncnodes)
{
    const struct strobe_experiment *exp = c->exp;
    const struct strobe_profile *p = c->prof;
    FILE *f = c->xml;
    fputs("<program>\n", f);
    const char *exe = exp->nprocesses && exp->processes[0].exe ? exp->processes[0].exe : "";
    const char *root = *exe ? strobe__basename(exe) : "program";
    write_region(f, 0, root, "", 0, "measurement", "artificial", exe);
    for (size_t r = 0; r < exp->nregions; r++) {
        const struct strobe_region_def *d = &exp->regions[r];
        bool user = d->kind == STROBE_REGION_USER;
        write_region(f, r + 1, d->name, d->file, d->line, user ? "user" : "compiler",
                     user ? "code" : "function", d->module);
    }
    /* the sampled subtree's: its root, then the sampled functions */
    size_t sampled_root = exp->nregions + 1;
    if (c->sm) {
        write_region(f, sampled_root, "sampled call stacks", "", 0, "sampling", "artificial",
                     "the call stacks of strobe run --sample");
        for (size_t k = 0; k < c->sm->nfuncs; k++) {
            const struct strobe_sample_func *fn = &c->sm->funcs[k];
            write_region(f, sampled_root + 1 + k, fn->name, fn->file, fn->line, "sampling", "function",
                         fn->module);
        }
    }
    /* Preorder is the nesting order: before opening cnode i, close every
     * open cnode that is not its parent. */
    uint32_t *open = c->open;
    size_t depth = 0;
    for (uint32_t id = 0; id < ncnodes; id++) {
        uint32_t node = c->preorder[id], parent, callee;
        if (node & SAMPLED) {
            uint32_t s = node & ~SAMPLED;
            parent = s == 0 ? 0 : SAMPLED | c->sm->nodes[s].parent;
            callee = (uint32_t)(s == 0 ? sampled_root : sampled_root + 1 + c->sm->nodes[s].func);
        } else {
            uint32_t region = p->nodes[node].region;
            parent = p->nodes[node].parent;
            callee = region < exp->nregions ? region + 1 : 0;
        }
        while (depth > 0 && open[depth - 1] != parent) {
            fputs("</cnode>\n", f);
            depth--;
        }
        fprintf(f, "<cnode id=\"%" PRIu32 "\" calleeId=\"%" PRIu32 "\">\n", id, callee);
        open[depth++] = node;
    }
    while (depth-- > 0)
        fputs("</cnode>\n", f);
    fputs("</program>\n", f);
}

static void write_anchor_system(struct cubex *c)
{
    const struct strobe_experiment *exp = c->exp;
    FILE *f = c->xml;
    char name[512];
    fputs("<system>\n<systemtreenode Id=\"0\">\n", f);
    xml_element(f, "name", strobe__host_name(exp));
    xml_element(f, "class", "machine");
    /* Location groups and locations are numbered in definition order, which
     * is the column order of the data files. */
    size_t group = 0, l = 0;
    while (l < exp->nthreads) {
        /* one group per MPI rank (ranked by it), one per other process */
        uint32_t leader = strobe__group_leader(exp, exp->threads[c->locations[l]].process);
        strobe__group_name(exp, leader, name, sizeof name);
        fprintf(f, "<locationgroup Id=\"%zu\">\n", group);
        xml_element(f, "name", name);
        fprintf(f, "<rank>%zu</rank>\n",
                exp->processes[leader].has_rank ? (size_t)exp->processes[leader].rank : group);
        xml_element(f, "type", "process");
        for (;
             l < exp->nthreads && strobe__group_leader(exp, exp->threads[c->locations[l]].process) == leader;
             l++) {
            uint32_t t = c->locations[l];
            strobe__thread_name(exp, t, name, sizeof name);
            fprintf(f, "<location Id=\"%zu\">\n", l);
            xml_element(f, "name", name);
            fprintf(f, "<rank>%" PRIu32 "</rank>\n", exp->threads[t].index);
            xml_element(f, "type", "thread");
            fputs("</location>\n", f);
        }
        fputs("</locationgroup>\n", f);
        group++;
    }
    fputs("</systemtreenode>\n</system>\n", f);
}

static int write_anchor(struct cubex *c, uint32_t ncnodes)
{
    const struct strobe_experiment *exp = c->exp;
    c->xml = tmpfile();
    if (!c->xml)
        return -errno;
    FILE *f = c->xml;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<cube version=\"4.4\">\n", f);
    xml_attr_tag(f, "Creator", "strobe " STROBE_VERSION_STRING);
    xml_attr_tag(f, "CUBE_CT_AGGR", "SUM");
    char key[256];
    for (size_t i = 0; i < exp->nmeta; i++) {
        snprintf(key, sizeof key, "strobe::%s", exp->meta_keys[i] ? exp->meta_keys[i] : "");
        xml_attr_tag(f, key, exp->meta_values[i]);
    }
    write_anchor_metrics(c);
    write_anchor_program(c, ncnodes);
    write_anchor_system(c);
    fputs("</cube>\n", f);
    /* A member that fills its last block exactly is followed by an extra
     * zero block in CubeW's own archives; avoid the case altogether so every
     * tar reader agrees where the next header is. */
    if (ftello(f) % STROBE_TAR_BLOCK == 0)
        fputc('\n', f);
    off_t size = ftello(f);
    if (fflush(f) != 0 || ferror(f) || size < 0)
        return -(errno ? errno : EIO);
    rewind(f);
    int rc = strobe__tar_begin(&c->tar, "anchor.xml", (uint64_t)size);
    if (rc < 0)
        return rc;
    char buf[65536];
    size_t n, copied = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        fwrite(buf, 1, n, c->f);
        copied += n;
    }
    if (ferror(f) || copied != (size_t)size)
        return -EIO;
    strobe__tar_end(&c->tar);
    return 0;
}

/* ---- metric table ----------------------------------------------------- */

static int setup_metrics(struct cubex *c)
{
    const struct strobe_experiment *exp = c->exp;
    static const struct metric_desc builtin[NBUILTIN] = {
        [METRIC_TIME] = {.disp_name = "Time",
                         .uniq_name = (char *)"time",
                         .dtype = "DOUBLE",
                         .uom = "sec",
                         .descr = "Time spent in the call path without its callees (Cube adds "
                                  "the callees to show inclusive time)"},
        [METRIC_VISITS] = {.disp_name = "Visits",
                           .uniq_name = (char *)"visits",
                           .dtype = "UINT64",
                           .uom = "occ",
                           .descr = "Number of times the call path was entered"},
        [METRIC_MIN_TIME] = {.disp_name = "Minimum Inclusive Time",
                             .uniq_name = (char *)"min_time",
                             .dtype = "MINDOUBLE",
                             .uom = "sec",
                             .descr = "Shortest completed visit of the call path, callees "
                                      "included"},
        [METRIC_MAX_TIME] = {.disp_name = "Maximum Inclusive Time",
                             .uniq_name = (char *)"max_time",
                             .dtype = "MAXDOUBLE",
                             .uom = "sec",
                             .descr = "Longest completed visit of the call path, callees "
                                      "included"},
    };
    c->nmetrics = NBUILTIN + exp->nmetrics + (c->sm != NULL);
    c->samples_metric = NBUILTIN + exp->nmetrics;
    c->metrics = calloc(c->nmetrics, sizeof *c->metrics);
    if (!c->metrics)
        return -ENOMEM;
    for (size_t m = 0; m < c->nmetrics; m++) {
        struct metric_desc *d = &c->metrics[m];
        const char *uniq;
        if (m < NBUILTIN) {
            *d = builtin[m];
            uniq = builtin[m].uniq_name;
        } else if (c->sm && m == c->samples_metric) {
            *d = (struct metric_desc){.disp_name = "Samples",
                                      .dtype = "UINT64",
                                      .uom = "occ",
                                      .descr =
                                          "CPU-time sampling periods (strobe run --sample) the sampled call "
                                          "path was running in"};
            uniq = "samples";
        } else {
            const struct strobe_metric_def *def = &exp->metrics[m - NBUILTIN];
            d->disp_name = def->name;
            d->dtype = "INT64";
            d->uom = def->unit;
            d->descr = "Sum of the values reported through the strobe metric API";
            uniq = def->name;
        }
        /* uniq_name must be unique: metrics of the same name but another
         * unit, or named like a built-in, get their id appended. */
        bool taken = false;
        for (size_t k = 0; k < m && !taken; k++)
            taken = strcmp(c->metrics[k].uniq_name, uniq) == 0;
        char buf[512];
        if (taken) {
            snprintf(buf, sizeof buf, "%s#%zu", uniq, m);
            uniq = buf;
        }
        d->uniq_name = strdup(uniq);
        if (!d->uniq_name)
            return -ENOMEM;
    }
    return 0;
}

static int write_cubex(struct cubex *c)
{
    const struct strobe_experiment *exp = c->exp;
    const struct strobe_profile *p = c->prof;
    int rc = setup_metrics(c);
    if (rc < 0)
        return strobe__error(c->eb, rc, "%s: out of memory", c->out);
    size_t nsampled = c->sm ? c->sm->nnodes : 0;
    c->preorder = malloc((p->nnodes + nsampled) * sizeof *c->preorder);
    c->locations = strobe__threads_in_tree_order(exp);
    c->row = malloc(exp->nthreads * 8);
    c->open = malloc((p->nnodes + nsampled) * sizeof *c->open);
    if (c->sm)
        c->sm_first = calloc(nsampled + 1, sizeof *c->sm_first);
    if (!c->preorder || !c->locations || !c->row || !c->open || (c->sm && !c->sm_first))
        return strobe__error(c->eb, -ENOMEM, "%s: out of memory", c->out);
    size_t n = preorder(p, p->nnodes, profile_links, 0, c->preorder);
    if (n != p->nnodes || n + nsampled > UINT32_MAX / 2)
        return strobe__error(c->eb, STROBE_ERR_FORMAT,
                             "%s: call tree has %zu nodes but %zu are reachable from the root", c->out,
                             p->nnodes, n);
    if (c->sm) {
        /* the sampled subtree, the root's last child */
        n += preorder(c->sm, nsampled, sample_links, SAMPLED, c->preorder + n);
        for (size_t i = 0; i < c->sm->nnode_threads; i++)
            c->sm_first[c->sm->node_threads[i].node + 1]++;
        for (size_t s = 0; s < nsampled; s++)
            c->sm_first[s + 1] += c->sm_first[s];
    }
    for (size_t m = 0; m < c->nmetrics; m++)
        if ((rc = write_metric_files(c, m, (uint32_t)n)) < 0)
            return strobe__error(c->eb, rc, "%s: %s", c->out, strerror(-rc));
    if ((rc = write_anchor(c, (uint32_t)n)) < 0)
        return strobe__error(c->eb, rc, "%s: anchor.xml: %s", c->out, strerror(-rc));
    strobe__tar_finish(&c->tar);
    return 0;
}

int strobe_export_cubex(const struct strobe_experiment *exp, const char *out,
                        const struct strobe_export_opts *opts, struct strobe_errbuf *eb)
{
    struct strobe_profile *prof;
    struct strobe_sample_model *sm;
    struct strobe__out_file o;
    int rc = strobe__export_profile_begin(exp, out, opts, &prof, &sm, &o, eb);
    if (rc < 0)
        return rc;
    struct cubex c = {.exp = exp, .prof = prof, .sm = sm, .out = out, .eb = eb, .f = o.f};
    strobe__tar_init(&c.tar, o.f, (long)time(NULL));
    rc = write_cubex(&c);
    if (rc == 0)
        rc = strobe__out_file_commit(&o, eb);
    else
        strobe__out_file_abort(&o);
    for (size_t m = 0; m < c.nmetrics && c.metrics; m++)
        free(c.metrics[m].uniq_name);
    free(c.metrics);
    free(c.preorder);
    free(c.locations);
    free(c.row);
    free(c.open);
    free(c.sm_first);
    strobe_sample_model_free(sm);
    if (c.xml)
        fclose(c.xml);
    strobe_profile_free(prof);
    if (rc == 0)
        strobe__export_progress(opts, exp->total_bytes, exp->total_bytes);
    return rc;
}
