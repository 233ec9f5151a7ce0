/* SPDX-License-Identifier: MIT */
/*
 * `strobe merge`: puts several experiments (the ranks of one MPI job run
 * by one `strobe run` each, possibly on several hosts, or the steps of a
 * workflow) into one experiment directory that every report and export
 * reads as one run.
 *
 * Each input is validated by the one reader first. Process directories
 * are copied byte for byte; one whose name another input already took is
 * renamed (proc-<pid>-m<input>), and the meta file lists every process
 * with its input and the name it had there (`merge_process`), which is
 * all the reader needs: it finds fork parents by their old names within
 * one input, and puts the clocks of the inputs on one timebase
 * (src/analysis/align.h) each time it opens the experiment, so nothing
 * measured is rewritten and `--no-align` only writes one meta line.
 *
 * All or nothing: everything is written into a hidden directory next to
 * the output, read back through the reader, and renamed to the output at
 * the end; on any error it is removed.
 */
#define _GNU_SOURCE /* copy_file_range */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/align.h"
#include "analysis/experiment.h"
#include "analysis/mpi.h"
#include "cli/cli.h"
#include "common/format.h"
#include "report/units.h"
#include "strobe/strobe.h"

const char strobe__merge_help[] =
    "usage: strobe merge DIR... -o OUT [--no-align]\n"
    "\n"
    "Puts the experiments DIR... into one new experiment directory OUT, so that\n"
    "report, export, HTML and timeline show them as one run: the ranks of an MPI\n"
    "job measured by one `strobe run` each (on one host or several), or the steps\n"
    "of a workflow. Every process is kept; a process directory whose name an\n"
    "earlier input already has is renamed proc-<pid>-m<input>. The clocks are put\n"
    "on one timebase whenever OUT is read: MPI ranks by the offsets to rank 0 that\n"
    "`strobe run --mpi` measures at MPI_Init and MPI_Finalize (interpolated\n"
    "linearly between them), other processes by the realtime clock each input\n"
    "recorded at start (docs/cli.md#strobe-merge). Prints which method each\n"
    "process got and the residual skew: the offsets' bound (half their shortest\n"
    "round trip) and, from the MPI messages, how far a receive ends before its\n"
    "send started, after alignment and as recorded.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT    the new experiment directory (must not exist)\n"
    "  --no-align          keep every clock as recorded (OUT's meta says\n"
    "                      clock_align: off)\n"
    "  -h, --help          show this help\n"
    "\n"
    "exit status: 0 success, 1 an input cannot be read, inputs of different\n"
    "format versions or with the same MPI rank, OUT exists or cannot be written\n"
    "(nothing is left behind), 2 usage error.\n";

enum { OPT_NO_ALIGN = 256 };

static const struct option options[] = {
    {"output", required_argument, NULL, 'o'},
    {"no-align", no_argument, NULL, OPT_NO_ALIGN},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* ---- files --------------------------------------------------------------- */

/* dir/name into buf[PATH_MAX]; false when it does not fit. */
static bool join(char *buf, const char *dir, const char *name)
{
    int n = snprintf(buf, PATH_MAX, "%s/%s", dir, name);
    return n >= 0 && n < PATH_MAX;
}

/* Copies the regular file src to dst (created, must not exist); bytes
 * copied are added to *bytes. */
static int copy_file(const char *src, const char *dst, uint64_t *bytes)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        return -e;
    }
    int rc = 0;
    bool plain = false; /* copy_file_range cannot: across file systems on old kernels */
    for (;;) {
        ssize_t n;
        if (!plain) {
            n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
            if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
                plain = true;
                continue;
            }
        } else {
            static char buf[1 << 16];
            n = read(in, buf, sizeof buf);
            for (ssize_t done = 0; n > 0 && done < n;) {
                ssize_t w = write(out, buf + done, (size_t)(n - done));
                if (w < 0) {
                    n = -1;
                    break;
                }
                done += w;
            }
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        if (n == 0)
            break;
        *bytes += (uint64_t)n;
    }
    if (close(out) != 0 && rc == 0)
        rc = -errno;
    close(in);
    return rc;
}

/* Removes dir and what the merge put in it (files, and their folders). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char path[PATH_MAX];
            if (join(path, dir, e->d_name) && unlink(path) != 0) /* a directory (EISDIR, or EPERM on Linux) */
                remove_tree(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Copies every regular file of the process directory src into dst. */
static int copy_process(const char *src, const char *dst, uint64_t *bytes, char *err, size_t errlen)
{
    if (mkdir(dst, 0755) != 0) {
        snprintf(err, errlen, "%s: %s", dst, strerror(errno));
        return -errno;
    }
    DIR *d = opendir(src);
    if (!d) {
        snprintf(err, errlen, "%s: %s", src, strerror(errno));
        return -errno;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        char from[PATH_MAX], to[PATH_MAX];
        struct stat st;
        if (!join(from, src, e->d_name) || !join(to, dst, e->d_name)) {
            snprintf(err, errlen, "%s: %s", src, strerror(ENAMETOOLONG));
            rc = -ENAMETOOLONG;
            break;
        }
        if (stat(from, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if ((rc = copy_file(from, to, bytes)) < 0)
            snprintf(err, errlen, "copying %s: %s", from, strerror(-rc));
    }
    closedir(d);
    return rc;
}

/* The format version of an experiment: its first process's defs header. */
static int format_version(const char *dir, uint32_t *version)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    int rc = -ENOENT;
    struct dirent *e;
    while (rc == -ENOENT && (e = readdir(d))) {
        if (strncmp(e->d_name, "proc-", 5) != 0)
            continue;
        char proc[PATH_MAX], path[PATH_MAX];
        int fd =
            join(proc, dir, e->d_name) && join(path, proc, "defs") ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        struct strobe_file_header h;
        if (fd >= 0 && read(fd, &h, sizeof h) == (ssize_t)sizeof h) {
            *version = h.version;
            rc = 0;
        }
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    return rc;
}

/* ---- the merge ----------------------------------------------------------- */

struct input {
    const char *dir;
    struct strobe_experiment *exp;
};

/* One clock domain of the output: a domain of one input (an input merged
 * before keeps its own domains apart). */
struct domain {
    size_t input;
    unsigned inner;
};

struct merge {
    struct input *in;
    size_t nin;
    const char *out;
    const char *command; /* the command line as given, for meta */
    char *tmp;           /* the hidden directory written first */
    FILE *meta;          /* tmp/meta */
    char **names;        /* process directories of the output so far */
    size_t nnames;
    struct domain *domains;
    size_t ndomains;
    uint64_t bytes; /* copied */
    char err[PATH_MAX + 256];
};

static bool name_taken(const struct merge *m, const char *name)
{
    for (size_t i = 0; i < m->nnames; i++)
        if (strcmp(m->names[i], name) == 0)
            return true;
    return false;
}

static unsigned domain_of(struct merge *m, size_t input, unsigned inner)
{
    for (size_t i = 0; i < m->ndomains; i++)
        if (m->domains[i].input == input && m->domains[i].inner == inner)
            return (unsigned)i + 1;
    void *grown = realloc(m->domains, (m->ndomains + 1) * sizeof *m->domains);
    if (!grown)
        return 0;
    m->domains = grown;
    m->domains[m->ndomains++] = (struct domain){input, inner};
    return (unsigned)m->ndomains;
}

/* The same MPI rank in two inputs: two jobs whose messages and
 * communicators would be taken for one job's. */
static int check_ranks(struct merge *m)
{
    for (size_t a = 0; a < m->nin; a++)
        for (size_t p = 0; p < m->in[a].exp->nprocesses; p++) {
            const struct strobe_process_info *x = &m->in[a].exp->processes[p];
            for (size_t b = a + 1; b < m->nin && x->has_rank; b++)
                for (size_t q = 0; q < m->in[b].exp->nprocesses; q++) {
                    const struct strobe_process_info *y = &m->in[b].exp->processes[q];
                    if (y->has_rank && y->rank == x->rank) {
                        snprintf(m->err, sizeof m->err,
                                 "%s and %s both hold MPI rank %u: only the ranks of one job can be merged",
                                 m->in[a].dir, m->in[b].dir, x->rank);
                        return -EINVAL;
                    }
                }
        }
    return 0;
}

/* Copies input i's processes into tmp and lists them in meta. */
static int add_input(struct merge *m, size_t i)
{
    const struct strobe_experiment *exp = m->in[i].exp;
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const char *dir = exp->processes[p].dir, *original;
        unsigned d = domain_of(m, i, strobe_align_domain(exp, (uint32_t)p, &original));
        char name[256], src[PATH_MAX], dst[PATH_MAX];
        snprintf(name, sizeof name, "%s", dir);
        if (name_taken(m, name))
            snprintf(name, sizeof name, "%s-m%zu", dir, i + 1);
        for (unsigned k = 2; name_taken(m, name); k++) /* a -m name taken by an input itself */
            snprintf(name, sizeof name, "%s-m%zu.%u", dir, i + 1, k);
        char *copy = strdup(name);
        void *grown = copy ? realloc(m->names, (m->nnames + 1) * sizeof *m->names) : NULL;
        if (!d || !grown) {
            free(copy);
            snprintf(m->err, sizeof m->err, "out of memory");
            return -ENOMEM;
        }
        m->names = grown;
        m->names[m->nnames++] = copy;
        if (!join(src, m->in[i].dir, dir) || !join(dst, m->tmp, name)) {
            snprintf(m->err, sizeof m->err, "%s/%s: %s", m->in[i].dir, dir, strerror(ENAMETOOLONG));
            return -ENAMETOOLONG;
        }
        int rc = copy_process(src, dst, &m->bytes, m->err, sizeof m->err);
        if (rc)
            return rc;
        fprintf(m->meta, "merge_process: %s %u %s\n", name, d, original);
    }
    return 0;
}

/* meta: what a report's summary shows, then the inputs and processes. */
static int write_meta(struct merge *m, bool align)
{
    char path[PATH_MAX];
    if (!join(path, m->tmp, "meta") || !(m->meta = fopen(path, "wx"))) {
        snprintf(m->err, sizeof m->err, "%s: %s", path, strerror(errno));
        return -errno;
    }
    fprintf(m->meta, "strobe_version: %s\ncommand: strobe %s\n", STROBE_VERSION_STRING,
            m->command ? m->command : "merge");
    /* the distinct hosts, in input order */
    fputs("host:", m->meta);
    for (size_t i = 0; i < m->nin; i++) {
        const char *h = strobe_experiment_meta(m->in[i].exp, "host");
        bool seen = !h;
        for (size_t j = 0; j < i && !seen; j++) {
            const char *o = strobe_experiment_meta(m->in[j].exp, "host");
            seen = o && strcmp(o, h) == 0;
        }
        if (!seen)
            fprintf(m->meta, "%s %s", i ? "," : "", h);
    }
    fputc('\n', m->meta);
    const char *start = NULL;
    for (size_t i = 0; i < m->nin; i++) {
        const char *s = strobe_experiment_meta(m->in[i].exp, "start_time");
        if (s && (!start || strcmp(s, start) < 0)) /* ISO 8601 UTC: sorts as text */
            start = s;
    }
    if (start)
        fprintf(m->meta, "start_time: %s\n", start);
    if (!align)
        fputs("clock_align: off\n", m->meta);
    fprintf(m->meta, "merged_from: %zu\n", m->nin);
    for (size_t i = 0; i < m->nin; i++) {
        char abs[PATH_MAX];
        fprintf(m->meta, "merge_input: %zu %s\n", i + 1, realpath(m->in[i].dir, abs) ? abs : m->in[i].dir);
    }
    int rc = 0;
    for (size_t i = 0; i < m->nin && rc == 0; i++)
        rc = add_input(m, i);
    if (fclose(m->meta) != 0 && rc == 0) {
        rc = -errno;
        snprintf(m->err, sizeof m->err, "%s: %s", path, strerror(errno));
    }
    m->meta = NULL;
    return rc;
}

/* ---- what is printed ------------------------------------------------------ */

static const char *signed_time(char buf[STROBE_UNITS_LEN + 1], double ns)
{
    char t[STROBE_UNITS_LEN];
    snprintf(buf, STROBE_UNITS_LEN + 1, "%c%s", ns < 0 ? '-' : '+',
             strobe__fmt_time(t, (uint64_t)(ns < 0 ? -ns : ns) + 0.5));
    return buf;
}

/* Each process's clock and the residual skew (see the help). */
static void print_clocks(const struct strobe_experiment *exp, const struct strobe_mpi_model *mpi)
{
    char a[STROBE_UNITS_LEN + 1], b[STROBE_UNITS_LEN];
    uint64_t bound = 0;
    bool realtime = false;
    printf("  %-22s %6s %6s  clock\n", "process", "rank", "input");
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        char rank[16] = "-";
        if (pi->has_rank)
            snprintf(rank, sizeof rank, "%u", pi->rank);
        printf("  %-22s %6s %6u  %s", pi->dir, rank, pi->align_domain, strobe_align_method_name(pi->align));
        if (pi->align == STROBE_ALIGN_MPI || pi->align == STROBE_ALIGN_REALTIME)
            printf(": %s", signed_time(a, pi->align_offset_ns));
        if (pi->align == STROBE_ALIGN_MPI)
            printf(", drift %.2f ppm, ±%s", pi->align_drift * 1e6, strobe__fmt_time(b, pi->align_bound_ns));
        if ((int)p == (int)exp->align_reference && pi->align != STROBE_ALIGN_OFF)
            fputs(" (the timebase)", stdout);
        fputc('\n', stdout);
        if (pi->align_bound_ns > bound)
            bound = pi->align_bound_ns;
        realtime |= pi->align == STROBE_ALIGN_REALTIME;
    }
    if (bound)
        printf("  offsets: within ±%s (half the shortest round trip to rank 0)\n",
               strobe__fmt_time(b, bound));
    if (realtime)
        fputs("  realtime anchors: as close as the hosts' realtime clocks (NTP, PTP) agree\n", stdout);
    if (mpi && mpi->pairs) {
        char c[STROBE_UNITS_LEN];
        printf("  messages: %" PRIu64 " matched; the most a receive ends before its send started: ",
               mpi->pairs);
        if (exp->processes[0].align == STROBE_ALIGN_OFF)
            printf("%s (clocks not aligned)\n",
                   mpi->skew_ns > 0 ? strobe__fmt_time(b, (uint64_t)mpi->skew_ns) : "none");
        else
            printf("%s aligned, %s as recorded\n",
                   mpi->skew_ns > 0 ? strobe__fmt_time(b, (uint64_t)mpi->skew_ns) : "none",
                   mpi->skew_unaligned_ns > 0 ? strobe__fmt_time(c, (uint64_t)mpi->skew_unaligned_ns)
                                              : "none");
    }
}

/* Reads the result back (the reader validates it and aligns the clocks)
 * and prints the summary. */
static int check_output(struct merge *m, double seconds)
{
    struct strobe_experiment *exp;
    struct strobe_errbuf eb = {""};
    int rc = strobe_experiment_open(m->tmp, &exp, NULL, NULL, &eb);
    if (rc) {
        snprintf(m->err, sizeof m->err, "reading the result: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
        return rc;
    }
    struct strobe_profile *prof = NULL;
    struct strobe_mpi_model *mpi = NULL;
    if (strobe_mpi_present(exp) && (rc = strobe_profile_build(exp, STROBE_PROFILE_AUTO, &prof, &eb)) == 0)
        rc = strobe_mpi_model_build(exp, prof, &mpi, &eb);
    if (rc == 0) {
        char a[STROBE_UNITS_LEN];
        printf("strobe merge: %s: %zu experiments, %zu processes, %zu threads, %s copied in %.3f s (%.1f "
               "MB/s)\n",
               m->out, m->nin, exp->nprocesses, exp->nthreads, strobe__fmt_bytes(a, m->bytes), seconds,
               seconds > 0 ? (double)m->bytes / seconds / 1e6 : 0.0);
        print_clocks(exp, mpi);
    } else {
        snprintf(m->err, sizeof m->err, "reading the result: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
    }
    strobe_mpi_model_free(mpi);
    strobe_profile_free(prof);
    strobe_experiment_close(exp);
    return rc;
}

static int merge(struct merge *m, bool align)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint32_t first = 0;
    for (size_t i = 0; i < m->nin; i++) {
        uint32_t v = 0;
        struct strobe_errbuf eb = {""};
        int rc = format_version(m->in[i].dir, &v);
        if (rc == 0 && i == 0)
            first = v;
        else if (rc == 0 && v != first) {
            snprintf(m->err, sizeof m->err,
                     "%s has format version %u, %s has %u: merge experiments of one version", m->in[0].dir,
                     first, m->in[i].dir, v);
            return -EINVAL;
        }
        if ((rc = strobe_experiment_open(m->in[i].dir, &m->in[i].exp, NULL, NULL, &eb)) != 0) {
            snprintf(m->err, sizeof m->err, "%s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
            return rc;
        }
    }
    int rc = check_ranks(m);
    if (rc)
        return rc;
    /* the hidden directory, next to OUT so that the rename stays on one
     * file system */
    char *slash = strrchr(m->out, '/');
    if (asprintf(&m->tmp, "%.*s.%s.merge-XXXXXX", slash ? (int)(slash - m->out + 1) : 0, m->out,
                 slash ? slash + 1 : m->out) < 0) {
        m->tmp = NULL;
        snprintf(m->err, sizeof m->err, "out of memory");
        return -ENOMEM;
    }
    if (!mkdtemp(m->tmp)) {
        rc = -errno;
        snprintf(m->err, sizeof m->err, "%s: %s", m->out, strerror(errno));
        free(m->tmp);
        m->tmp = NULL;
        return rc;
    }
    chmod(m->tmp, 0755);
    if ((rc = write_meta(m, align)))
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    /* the result is checked before it takes OUT's name */
    if ((rc = check_output(m, seconds)))
        return rc;
    /* renameat2(RENAME_NOREPLACE) would need a newer glibc; an OUT made
     * meanwhile is a non-empty directory or a file, which rename refuses
     * too (ENOTEMPTY, ENOTDIR) except for an empty directory */
    struct stat st;
    if (lstat(m->out, &st) == 0) {
        snprintf(m->err, sizeof m->err, "%s: exists (merge into a new directory)", m->out);
        return -EEXIST;
    }
    if (rename(m->tmp, m->out) != 0) {
        rc = -errno;
        snprintf(m->err, sizeof m->err, "%s: %s", m->out, strerror(errno));
        return rc;
    }
    free(m->tmp);
    m->tmp = NULL;
    return 0;
}

/* The command with its options; command is its line for meta. */
static int merge_command(int argc, char **argv, char *command)
{
    char *out = NULL;
    bool align = true;
    int c;
    while ((c = strobe__cli_getopt("merge", argc, argv, ":ho:", options)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg)
                return strobe__cli_usage_error("merge", "-o: empty directory name");
            out = optarg;
            break;
        case OPT_NO_ALIGN:
            align = false;
            break;
        case 'h':
            fputs(strobe__merge_help, stdout);
            return 0;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return strobe__cli_usage_error("merge", "missing experiment directories");
    if (!out)
        return strobe__cli_usage_error("merge", "missing -o OUT (the new experiment directory)");
    /* "out/" names out: the hidden directory goes next to it, not in it */
    for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--)
        out[n - 1] = 0;
    struct stat st;
    if (lstat(out, &st) == 0) {
        strobe__cli_say("merge: %s: exists (merge into a new directory)", out);
        return STROBE_EXIT_FAILURE;
    }
    struct merge m = {.nin = (size_t)(argc - optind), .out = out, .command = command};
    if (!(m.in = calloc(m.nin, sizeof *m.in))) {
        strobe__cli_say("merge: out of memory");
        return STROBE_EXIT_FAILURE;
    }
    for (size_t i = 0; i < m.nin; i++)
        m.in[i].dir = argv[optind + (int)i];
    int rc = merge(&m, align);
    if (rc)
        strobe__cli_say("merge: %s", m.err[0] ? m.err : strobe_strerror(rc));
    if (m.meta)
        fclose(m.meta);
    if (m.tmp) {
        remove_tree(m.tmp);
        free(m.tmp);
    }
    for (size_t i = 0; i < m.nin; i++)
        strobe_experiment_close(m.in[i].exp);
    for (size_t i = 0; i < m.nnames; i++)
        free(m.names[i]);
    free(m.names);
    free(m.domains);
    free(m.in);
    return rc ? STROBE_EXIT_FAILURE : 0;
}

int strobe__cmd_merge(int argc, char **argv)
{
    /* the command line as given, for meta, before getopt reorders argv */
    char *command = strobe__shell_quote_argv(argv);
    int rc = merge_command(argc, argv, command);
    free(command);
    return rc;
}
