/* SPDX-License-Identifier: MIT */
/*
 * `strobe run`: measures one program. Everything that can be checked is
 * checked before anything is created or started (options, filter file,
 * program, runtime); then the experiment directory and its meta file are
 * created, the program is started with libstrobe.so preloaded, signals
 * sent to strobe are forwarded to it, its exit is recorded in meta, and
 * the run ends with one summary line read back through the analysis
 * reader. The program's exit code is strobe's exit code.
 */
#define _GNU_SOURCE /* execvpe */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/experiment.h"
#include "cli/cli.h"
#include "common/build_config.h"
#include "common/job.h"
#include "common/filter.h"
#include "common/format.h"
#include "common/signame.h"
#include "common/size.h"
#include "report/units.h"
#include "strobe/strobe.h"

extern char **environ;

const char strobe__run_help[] =
    "usage: strobe run [-o DIR] [--filter FILE] [--no-trace | --no-profile] [--no-locks | --taskgraph]\n"
    "                  [--tm] [--tm-monitor off|counters|stats|events] [--publish] [--mpi]\n"
    "                  [--openmp] [--malloc] [--sample[=HZ]] [--measure-launcher] [--job NAME]\n"
    "                  [--delay T] [--duration T] [--toggle-signal SIG] [--max-size SIZE]\n"
    "                  [--dump-signal SIG|none]\n"
    "                  [--] PROG [ARGS...]\n"
    "\n"
    "Runs PROG with the strobe runtime (libstrobe.so) preloaded and writes an\n"
    "experiment directory: a call-path profile and an event trace per thread.\n"
    "PROG needs no relinking; compile it with -finstrument-functions (and -g for\n"
    "source locations) to measure its functions, or use the annotation API.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR   experiment directory (created; an existing one must be\n"
    "                     empty). Default: strobe-<prog>-<YYYYmmdd-HHMMSS>, with a\n"
    "                     -N suffix when that exists\n"
    "  --filter FILE      region filter (include/exclude rules with globs); checked\n"
    "                     before PROG is started\n"
    "  --no-trace         record profiles only (no event trace)\n"
    "  --no-profile       record event traces only (the report rebuilds the profile)\n"
    "  --locks, --no-locks record (default) or not the program's pthread mutex,\n"
    "                     rwlock, spin lock, condition variable, barrier and\n"
    "                     semaphore calls (`strobe report --locks`); the last wins\n"
    "  --taskgraph        record every one of those calls and thread create/join,\n"
    "                     waited or not, with ordering tickets, for `strobe\n"
    "                     taskgraph` (STROBE_LOCKS=all; on by itself for code\n"
    "                     built with `strobe cc --trace=bb`); with --locks and\n"
    "                     --no-locks, the last wins\n"
    "  --tm               run `gcc -fgnu-tm` transactions on strobe's monitored STM\n"
    "                     (libstrobe-tm.so preloaded in place of libitm)\n"
    "  --tm-monitor LEVEL what the STM records (implies --tm): off (statistics API\n"
    "                     only), counters (transactions, rollbacks, serializations\n"
    "                     and abort causes per thread and atomic block, written at\n"
    "                     exit), stats (also atomic blocks as regions of the\n"
    "                     profile), events (also every transaction attempt in the\n"
    "                     trace). Default: counters\n"
    "  --publish          publish region visits and time live, every\n"
    "                     $STROBE_PUBLISH_INTERVAL seconds (default 1), as the\n"
    "                     metric set <host>/regions/<pid> in the shared-memory\n"
    "                     index $STROBE_SHM_INDEX (strobed's shm sampler reads it)\n"
    "  --mpi              also preload the MPI profiler (libstrobe-mpi.so): every\n"
    "                     MPI call a region of the trace and profile, messages,\n"
    "                     requests, collectives and communicators as MPI records\n"
    "                     (docs/mpi.md); calls and bytes per MPI function\n"
    "                     published live, query in $STROBE_MPI_QUERY\n"
    "                     (docs/mpi-profiler.md)\n"
    "  --openmp           also preload the OpenMP adapter (libstrobe-ompt.so, an OMPT\n"
    "                     tool for LLVM's libomp: clang -fopenmp programs): parallel\n"
    "                     regions, implicit tasks, loops, sections, single, barrier\n"
    "                     waits and critical sections as regions (docs/openmp.md)\n"
    "  --malloc           track malloc, calloc, realloc, free, the memalign family\n"
    "                     and anonymous mmap/munmap: bytes and counts per call\n"
    "                     path, peak live bytes, blocks live at exit; blocks of\n"
    "                     $STROBE_MALLOC_LARGE bytes (default 1M) and more as\n"
    "                     trace events (`strobe report --malloc`)\n"
    "  --sample[=HZ]      sample the call stack of every thread HZ times per second\n"
    "                     of its CPU time (1 to 10000, default 1000), also in code\n"
    "                     that was not instrumented (`strobe report --samples`)\n"
    "  --measure-launcher measure PROG itself when it is an MPI launcher (mpirun,\n"
    "                     mpiexec, orterun, prterun, srun, ...); by default only\n"
    "                     the processes it starts are measured\n"
    "  --job NAME         the batch job the run belongs to (STROBE_JOB): a job_id\n"
    "                     label of the published sets (default: Slurm's\n"
    "                     SLURM_JOB_ID.SLURM_STEP_ID when set)\n"
    "  --delay T          start recording T after each process starts (2.5, 500ms,\n"
    "                     1m); region visits before are not recorded\n"
    "  --duration T       stop recording T after it started\n"
    "  --toggle-signal SIG  pause and resume recording whenever a process of PROG\n"
    "                     receives signal SIG (USR1, SIGUSR1 or a number; PROG\n"
    "                     must leave it alone). Default: none\n"
    "  --max-size SIZE    flight recorder: each process keeps only the newest events\n"
    "                     of every thread, in rings of trace chunks within SIZE\n"
    "                     bytes together (at least 64K: 64M, 1G, ...); the\n"
    "                     profile counts all\n"
    "  --dump-signal SIG  with --max-size: copy the rings as they are into\n"
    "                     DIR/dump-<n>/ whenever a process receives SIG (default\n"
    "                     USR2; none: no signal)\n"
    "  -h, --help         show this help\n"
    "\n"
    "exit status: PROG's exit status; 128+S when PROG was killed by signal S;\n"
    "2 usage error or invalid filter; 125 strobe failed before starting PROG;\n"
    "126 PROG cannot be executed; 127 PROG not found.\n";

enum {
    OPT_FILTER = 256,
    OPT_NO_TRACE,
    OPT_NO_PROFILE,
    OPT_TM,
    OPT_TM_MONITOR,
    OPT_PUBLISH,
    OPT_MPI,
    OPT_OPENMP,
    OPT_MEASURE_LAUNCHER,
    OPT_JOB,
    OPT_LOCKS,
    OPT_NO_LOCKS,
    OPT_TASKGRAPH,
    OPT_MALLOC,
    OPT_SAMPLE,
    OPT_DELAY,
    OPT_DURATION,
    OPT_TOGGLE_SIGNAL,
    OPT_MAX_SIZE,
    OPT_DUMP_SIGNAL,
};

static const struct option run_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"filter", required_argument, NULL, OPT_FILTER},
    {"no-trace", no_argument, NULL, OPT_NO_TRACE},
    {"no-profile", no_argument, NULL, OPT_NO_PROFILE},
    {"tm", no_argument, NULL, OPT_TM},
    {"tm-monitor", required_argument, NULL, OPT_TM_MONITOR},
    {"publish", no_argument, NULL, OPT_PUBLISH},
    {"mpi", no_argument, NULL, OPT_MPI},
    {"openmp", no_argument, NULL, OPT_OPENMP},
    {"measure-launcher", no_argument, NULL, OPT_MEASURE_LAUNCHER},
    {"job", required_argument, NULL, OPT_JOB},
    {"locks", no_argument, NULL, OPT_LOCKS},
    {"no-locks", no_argument, NULL, OPT_NO_LOCKS},
    {"taskgraph", no_argument, NULL, OPT_TASKGRAPH},
    {"malloc", no_argument, NULL, OPT_MALLOC},
    {"sample", optional_argument, NULL, OPT_SAMPLE},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"toggle-signal", required_argument, NULL, OPT_TOGGLE_SIGNAL},
    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
    {"dump-signal", required_argument, NULL, OPT_DUMP_SIGNAL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* ---- Checks before starting ------------------------------------------- */

static int check_exec(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -errno;
    if (S_ISDIR(st.st_mode))
        return -EACCES; /* what execve says about a directory */
    if (access(path, X_OK) != 0)
        return -errno;
    return 0;
}

int strobe__find_program(const char *prog, char **found)
{
    if (!*prog)
        return -ENOENT;
    if (strchr(prog, '/')) {
        int rc = check_exec(prog);
        if (rc == 0 && !(*found = strdup(prog)))
            rc = -ENOMEM;
        return rc;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin"; /* glibc's default for execvp */
    int best = -ENOENT;
    size_t plen = strlen(prog);
    while (1) {
        const char *end = strchrnul(path, ':');
        size_t dlen = (size_t)(end - path);
        char *cand = malloc(dlen + plen + 3);
        if (!cand)
            return -ENOMEM;
        if (dlen == 0)
            sprintf(cand, "./%s", prog);
        else
            sprintf(cand, "%.*s/%s", (int)dlen, path, prog);
        int rc = check_exec(cand);
        if (rc == 0) {
            *found = cand;
            return 0;
        }
        free(cand);
        if (rc == -EACCES)
            best = rc;
        if (!*end)
            return best;
        path = end + 1;
    }
}

/* MPI launchers: they start the ranks and wait, and measuring them adds
 * a process of idle threads to every report and export. Recognised by
 * PROG's name, as the user typed it (mpirun is often a symlink to
 * orterun or to an alternatives entry; the name typed is what says
 * "launcher"). */
static bool is_mpi_launcher(const char *prog)
{
    static const char *const names[] = {
        "mpirun",         "mpiexec",       "orterun",       "prterun",      "prun",
        "srun",           "mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich", "mpiexec.openmpi",
        "mpirun.openmpi", "aprun",         "jsrun"};
    const char *slash = strrchr(prog, '/');
    const char *base = slash ? slash + 1 : prog;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(base, names[i]) == 0)
            return true;
    return false;
}

/* PROG runs MPICH ranks: it is MPICH's launcher (mpiexec.hydra, whatever
 * the name typed: alternatives and symlinks lead there) or a program
 * linked with libmpich (its dynamic section names it). Such ranks need the
 * MPI profiler built against MPICH's mpi.h, whose handles differ from
 * Open MPI's. */
static bool runs_mpich(const char *path)
{
    char *real = realpath(path, NULL);
    if (!real)
        return false;
    const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    bool mpich = strstr(base, "hydra") || strstr(base, "mpich");
    int fd = mpich ? -1 : open(real, O_RDONLY | O_CLOEXEC);
    free(real);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            mpich = memmem(m, (size_t)st.st_size, "libmpich.so", 11) != NULL;
            munmap(m, (size_t)st.st_size);
        }
    }
    if (fd >= 0)
        close(fd);
    return mpich;
}

/* ---- Experiment directory ---------------------------------------------- */

static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    struct dirent *e;
    int empty = 1;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    }
    closedir(d);
    return empty;
}

int strobe__cli_experiment_dir(const char *cmd, const char *output, const char *prog, time_t start, char **dir,
                               bool *created)
{
    *created = false;
    if (output) {
        if (mkdir(output, 0777) == 0) {
            *created = true;
        } else if (errno == EEXIST) {
            int empty = dir_is_empty(output);
            if (empty == -ENOTDIR) {
                strobe__cli_say("%s: %s: exists and is not a directory", cmd, output);
                return STROBE_EXIT_USAGE;
            }
            if (empty < 0) {
                strobe__cli_say("%s: %s: %s", cmd, output, strerror(-empty));
                return STROBE_EXIT_RUN_FAILED;
            }
            if (!empty) {
                strobe__cli_say("%s: %s: directory is not empty (choose a new -o DIR)", cmd, output);
                return STROBE_EXIT_USAGE;
            }
        } else {
            strobe__cli_say("%s: %s: %s", cmd, output, strerror(errno));
            return STROBE_EXIT_RUN_FAILED;
        }
        *dir = strdup(output);
        if (!*dir) {
            strobe__cli_say("%s: %s", cmd, strerror(ENOMEM));
            return STROBE_EXIT_RUN_FAILED;
        }
        return 0;
    }
    /* strobe-<basename>-<local time>, -1, -2, ... when taken */
    const char *base = strrchr(prog, '/');
    base = base && base[1] ? base + 1 : prog;
    char name[256], stamp[32];
    struct tm tm;
    localtime_r(&start, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    int n = snprintf(name, sizeof name, "strobe-%.128s-%s", base, stamp);
    for (char *p = name + 7; p < name + n - (int)strlen(stamp) - 1; p++) {
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("._+-", c)))
            *p = '_';
    }
    for (unsigned i = 0; i < 10000; i++) {
        char cand[300];
        if (i == 0)
            snprintf(cand, sizeof cand, "%s", name);
        else
            snprintf(cand, sizeof cand, "%s-%u", name, i);
        if (mkdir(cand, 0777) == 0) {
            *created = true;
            *dir = strdup(cand);
            if (!*dir) {
                strobe__cli_say("%s: %s", cmd, strerror(ENOMEM));
                return STROBE_EXIT_RUN_FAILED;
            }
            return 0;
        }
        if (errno != EEXIST) {
            strobe__cli_say("%s: %s: %s", cmd, cand, strerror(errno));
            return STROBE_EXIT_RUN_FAILED;
        }
    }
    strobe__cli_say("%s: %s: too many experiments with this name", cmd, name);
    return STROBE_EXIT_RUN_FAILED;
}

/* ---- Child environment ------------------------------------------------- */

struct env_builder {
    char **v;
    size_t n, cap;
};

static int env_add(struct env_builder *b, const char *name, const char *value)
{
    if (b->n + 2 > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        char **v = realloc(b->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        b->v = v;
        b->cap = cap;
    }
    char *e;
    if (value) {
        if (asprintf(&e, "%s=%s", name, value) < 0)
            return -ENOMEM;
    } else if (!(e = strdup(name))) {
        return -ENOMEM;
    }
    b->v[b->n++] = e;
    b->v[b->n] = NULL;
    return 0;
}

static void env_free(struct env_builder *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i]);
    free(b->v);
}

static bool env_is(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

struct child_env {
    const char *runtime, *exp_dir, *filter;
    int trace, profile;
    const char *extra_preload; /* libraries before the runtime ("a.so:b.so"), or NULL */
    const char *tm_monitor;    /* NULL without --tm */
    bool publish;
    bool skip_launcher; /* PROG is an MPI launcher, not measured */
    const char *job;    /* --job NAME, or NULL */
    const char *locks;  /* STROBE_LOCKS: "0", "1" or "all" */
    bool malloc;        /* --malloc */
    uint32_t sample_hz; /* --sample, 0 = off */
    const char *delay, *duration; /* --delay, --duration as given (checked), or NULL */
    int toggle_signal;            /* --toggle-signal, 0 = none */
    const char *max_size;         /* --max-size as given (checked), or NULL */
    const char *dump_signal;      /* --dump-signal: a signal number or "none", or NULL */
};

/* Room for the launcher's pid, filled in by the child (fill_pid). */
#define LAUNCHER_PID_SLOT "STROBE_LAUNCHER_PID=00000000000000000000"

/* The program's environment: ours, minus what strobe sets, plus
 *   LD_PRELOAD=[sanitizer runtime:]libstrobe.so[:previous LD_PRELOAD]
 *   (with --tm and --mpi, libstrobe-tm.so and libstrobe-mpi.so come first:
 *   before libitm, and so that the MPI wrappers come before the MPI library)
 *   STROBE_EXPERIMENT_DIR, STROBE_TRACE, STROBE_PROFILE, STROBE_LOCKS (always set, so the
 *   run is what its command line says), STROBE_FILTER (only with --filter),
 *   STROBE_PUBLISH=1 (only with --publish), STROBE_JOB (only with --job),
 *   STROBE_MALLOC=1 (only with --malloc)
 *   STROBE_SAMPLE=HZ (only with --sample)
 *   STROBE_DELAY, STROBE_DURATION, STROBE_TOGGLE_SIGNAL (only with their
 *   options)
 *   STROBE_LAUNCHER_PID (only for an MPI launcher without
 *   --measure-launcher: the runtime in the process of that pid stays off;
 *   the child writes its pid there before exec, see fill_pid)
 *   STROBE_TM_MONITOR (only with --tm; it must stay last in `replaced`)
 *   ASAN_OPTIONS += detect_leaks=0 (ASan builds; the program's leaks are
 *   not strobe's business and would change its exit code). */
static int build_env(struct env_builder *b, const struct child_env *ce)
{
    static const char *const replaced[] = {
        "LD_PRELOAD",    "STROBE_EXPERIMENT_DIR", "STROBE_FILTER",       "STROBE_TRACE", "STROBE_PROFILE",
        "ASAN_OPTIONS",  "STROBE_PUBLISH",        "STROBE_LAUNCHER_PID", "STROBE_JOB",   "STROBE_LOCKS",
        "STROBE_MALLOC", "STROBE_SAMPLE",         "STROBE_DELAY",        "STROBE_DURATION", "STROBE_TOGGLE_SIGNAL",
        "STROBE_MAX_SIZE", "STROBE_DUMP_SIGNAL", "STROBE_TM_MONITOR"};
    memset(b, 0, sizeof *b);
    int rc = 0;
    /* without --tm, STROBE_TM_MONITOR is the user's (a program may link the STM) */
    size_t nreplaced = sizeof replaced / sizeof replaced[0] - (ce->tm_monitor ? 0 : 1);
    for (char **e = environ; *e && rc == 0; e++) {
        bool skip = false;
        for (size_t i = 0; i < nreplaced; i++)
            skip = skip || env_is(*e, replaced[i]);
        if (!skip)
            rc = env_add(b, *e, NULL);
    }
    if (rc)
        return rc;
    char *san = strobe__sanitizer_runtime();
    const char *old = getenv("LD_PRELOAD");
    char *preload;
    int n = asprintf(&preload, "%s%s%s%s%s%s%s", san ? san : "", san ? ":" : "",
                     ce->extra_preload ? ce->extra_preload : "", ce->extra_preload ? ":" : "", ce->runtime,
                     old && *old ? ":" : "", old && *old ? old : "");
    free(san);
    if (n < 0)
        return -ENOMEM;
    rc = env_add(b, "LD_PRELOAD", preload);
    free(preload);
    if (rc == 0)
        rc = env_add(b, "STROBE_EXPERIMENT_DIR", ce->exp_dir);
    if (rc == 0)
        rc = env_add(b, "STROBE_TRACE", ce->trace ? "1" : "0");
    if (rc == 0)
        rc = env_add(b, "STROBE_PROFILE", ce->profile ? "1" : "0");
    if (rc == 0)
        rc = env_add(b, "STROBE_LOCKS", ce->locks);
    if (rc == 0 && ce->filter)
        rc = env_add(b, "STROBE_FILTER", ce->filter);
    if (rc == 0 && ce->publish)
        rc = env_add(b, "STROBE_PUBLISH", "1");
    if (rc == 0 && ce->malloc)
        rc = env_add(b, "STROBE_MALLOC", "1");
    if (rc == 0 && ce->sample_hz) {
        char v[40];
        snprintf(v, sizeof v, "STROBE_SAMPLE=%" PRIu32, ce->sample_hz);
        rc = env_add(b, v, NULL);
    }
    if (rc == 0 && ce->delay)
        rc = env_add(b, "STROBE_DELAY", ce->delay);
    if (rc == 0 && ce->duration)
        rc = env_add(b, "STROBE_DURATION", ce->duration);
    if (rc == 0 && ce->max_size)
        rc = env_add(b, "STROBE_MAX_SIZE", ce->max_size);
    if (rc == 0 && ce->dump_signal)
        rc = env_add(b, "STROBE_DUMP_SIGNAL", ce->dump_signal);
    if (rc == 0 && ce->toggle_signal) {
        char v[40];
        snprintf(v, sizeof v, "STROBE_TOGGLE_SIGNAL=%d", ce->toggle_signal);
        rc = env_add(b, v, NULL);
    }
    if (rc == 0 && ce->job) {
        char *v;
        if (asprintf(&v, "STROBE_JOB=%s", ce->job) < 0)
            return -ENOMEM;
        rc = env_add(b, v, NULL);
        free(v);
    }
    if (rc == 0 && ce->skip_launcher)
        rc = env_add(b, LAUNCHER_PID_SLOT, NULL);
    if (rc == 0 && ce->tm_monitor)
        rc = env_add(b, "STROBE_TM_MONITOR", ce->tm_monitor);
    const char *asan = getenv("ASAN_OPTIONS");
    if (rc == 0 && strobe__built_with_asan()) {
        char *v;
        if (!asan || !*asan)
            n = asprintf(&v, "detect_leaks=0");
        else if (strstr(asan, "detect_leaks="))
            n = asprintf(&v, "%s", asan);
        else
            n = asprintf(&v, "%s:detect_leaks=0", asan);
        if (n < 0)
            return -ENOMEM;
        rc = env_add(b, "ASAN_OPTIONS", v);
        free(v);
    } else if (rc == 0 && asan) {
        rc = env_add(b, "ASAN_OPTIONS", asan);
    }
    return rc;
}

/* Writes pid in decimal over the digits of the LAUNCHER_PID_SLOT entry of
 * env. The runtime recognises the launcher by pid, not by name: this is
 * exactly the process strobe starts (and its exec()ed images: mpirun ->
 * orterun), never a program of the same name that the job runs, and
 * `--measure-launcher` needs nothing in the runtime. Async-signal-safe
 * (runs in the child between fork and exec). */
static void fill_pid(char **env, pid_t pid)
{
    static const char name[] = "STROBE_LAUNCHER_PID=";
    for (; *env; env++) {
        if (strncmp(*env, name, sizeof name - 1) != 0)
            continue;
        char digits[24], *d = digits + sizeof digits;
        unsigned long v = (unsigned long)pid;
        *--d = 0;
        do
            *--d = (char)('0' + v % 10);
        while (v /= 10);
        memcpy(*env + sizeof name - 1, d, (size_t)(digits + sizeof digits - d));
        return;
    }
}

/* ---- Signals ------------------------------------------------------------ */

static volatile sig_atomic_t forward_pid;
/* The last signal strobe received while PROG ran: an MPI launcher that
 * catches it tears the job down and exits with a status, and the run
 * should still say what ended it. */
static volatile sig_atomic_t received_signal;
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

/* Async-signal-safe. Signals from the terminal (Ctrl-C, hangup: si_code
 * SI_KERNEL) already went to the whole foreground process group, the
 * program included; forwarding those would deliver them twice. */
static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    int saved = errno;
    pid_t pid = forward_pid;
    if (pid > 0)
        received_signal = sig;
    if (pid > 0 && !(si && si->si_code == SI_KERNEL))
        kill(pid, sig);
    errno = saved;
}

/* ---- Summary ------------------------------------------------------------ */

static void report_experiment(const char *dir)
{
    const char *slash = dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/";
    struct strobe__progress prog;
    char what[512];
    snprintf(what, sizeof what, "reading %s%s", dir, slash);
    strobe__progress_init(&prog, what);
    struct strobe_experiment *exp = NULL;
    struct strobe_errbuf eb = {""};
    int rc = strobe_experiment_open(dir, &exp, strobe__progress_cb, &prog, &eb);
    strobe__progress_end(&prog);
    if (rc) {
        strobe__cli_say("experiment %s%s: cannot read: %s", dir, slash,
                        eb.msg[0] ? eb.msg : strobe_strerror(rc));
        return;
    }
    char size[STROBE_UNITS_LEN];
    strobe__cli_say("experiment %s%s: %zu thread%s, %" PRIu64 " events, %s, %" PRIu64 " dropped%s", dir,
                    slash, exp->nthreads, exp->nthreads == 1 ? "" : "s", exp->total_events,
                    strobe__fmt_bytes(size, exp->total_bytes), exp->total_dropped,
                    exp->total_dropped ? " (trace incomplete: strobe report names the threads and the "
                                         "STROBE_TRACE_LIMIT that keeps them)"
                                       : "");
    strobe_experiment_close(exp);
}

/* ---- The command -------------------------------------------------------- */

struct run_opts {
    const char *output, *filter, *tm_monitor, *job; /* tm_monitor set = --tm */
    bool no_trace, no_profile, publish, mpi, openmp, measure_launcher, malloc;
    const char *locks; /* STROBE_LOCKS: --locks "1" (default), --no-locks "0", --taskgraph "all" */
    uint32_t sample_hz; /* --sample, 0 = off */
    const char *delay, *duration; /* checked durations, or NULL */
    int toggle_signal;            /* 0 = none */
    const char *max_size;         /* checked size, or NULL */
    char dump_signal[16];         /* --dump-signal as a number or "none"; "" = not given */
    char **argv; /* PROG ARGS..., NULL-terminated */
};

/* An option for a part this strobe was built without (common/build_config.h):
 * one line, and nothing runs. */
static int built_without(const char *opt, const char *line)
{
    strobe__cli_say("run: %s: %s", opt, line);
    return STROBE_EXIT_RUN_FAILED;
}

static int parse(int argc, char **argv, struct run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->locks = "1";
    int c;
    /* '+': stop at PROG, whose own options are not ours */
    while ((c = strobe__cli_getopt("run", argc, argv, "+:ho:", run_options)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case OPT_FILTER:
            o->filter = optarg;
            break;
        case OPT_NO_TRACE:
            o->no_trace = true;
            break;
        case OPT_NO_PROFILE:
            o->no_profile = true;
            break;
        case OPT_TM:
            if (!STROBE_WITH_TM)
                return built_without("--tm", STROBE_WITHOUT("TM"));
            if (!o->tm_monitor)
                o->tm_monitor = "counters";
            break;
        case OPT_TM_MONITOR:
            if (!STROBE_WITH_TM)
                return built_without("--tm-monitor", STROBE_WITHOUT("TM"));
            if (strcmp(optarg, "off") != 0 && strcmp(optarg, "counters") != 0 && strcmp(optarg, "stats") != 0 &&
                strcmp(optarg, "events") != 0)
                return strobe__cli_usage_error(
                    "run", "--tm-monitor: unknown level '%s' (off, counters, stats or events)", optarg);
            o->tm_monitor = optarg;
            break;
        case OPT_PUBLISH:
            o->publish = true;
            break;
        case OPT_MPI:
            if (!STROBE_WITH_MPI)
                return built_without("--mpi", STROBE_WITHOUT("MPI"));
            o->mpi = true;
            break;
        case OPT_OPENMP:
            o->openmp = true;
            break;
        case OPT_MEASURE_LAUNCHER:
            o->measure_launcher = true;
            break;
        case OPT_MALLOC:
            o->malloc = true;
            break;
        case OPT_SAMPLE:
            o->sample_hz = STROBE_SAMPLE_HZ_DEFAULT;
            if (optarg && strobe__parse_sample_hz(optarg, &o->sample_hz) != 0)
                return strobe__cli_usage_error("run", "--sample: '%s' is not a rate in Hz from %u to %u",
                                               optarg, STROBE_SAMPLE_HZ_MIN, STROBE_SAMPLE_HZ_MAX);
            break;
        case OPT_DELAY:
        case OPT_DURATION: {
            unsigned long long ns;
            const char *name = c == OPT_DELAY ? "--delay" : "--duration";
            if (strobe__parse_duration(optarg, &ns) != 0 || (c == OPT_DURATION && ns == 0))
                return strobe__cli_usage_error("run", "%s: '%s' is not a%s duration (2.5, 500ms, 1m, ...)", name,
                                               optarg, c == OPT_DURATION ? " positive" : "");
            *(c == OPT_DELAY ? &o->delay : &o->duration) = optarg;
            break;
        }
        case OPT_MAX_SIZE: {
            uint64_t size;
            if (strobe__parse_size(optarg, &size) != 0 || size < STROBE__RING_MIN)
                return strobe__cli_usage_error("run", "--max-size: '%s' is not a size of at least 64K (64M, 1G, ...)",
                                               optarg);
            o->max_size = optarg;
            break;
        }
        case OPT_DUMP_SIGNAL: {
            int sig = 0;
            if (strcmp(optarg, "none") != 0 && strobe__parse_signal(optarg, &sig) != 0)
                return strobe__cli_usage_error("run", "--dump-signal: '%s' is not a signal strobe can take (USR2, "
                                               "USR1, a number, none; not KILL, STOP, PROF or a fault)", optarg);
            snprintf(o->dump_signal, sizeof o->dump_signal, "%s", sig ? "" : "none");
            if (sig)
                snprintf(o->dump_signal, sizeof o->dump_signal, "%d", sig);
            break;
        }
        case OPT_TOGGLE_SIGNAL:
            if (strobe__parse_signal(optarg, &o->toggle_signal) != 0)
                return strobe__cli_usage_error("run", "--toggle-signal: '%s' is not a signal strobe can take (USR1, "
                                               "USR2, HUP, a number, ...; not KILL, STOP, PROF or a fault)", optarg);
            break;
        case OPT_JOB:
            if (!*optarg || strlen(optarg) > STROBE__JOB_MAX || strpbrk(optarg, "\n\r\"\\"))
                return strobe__cli_usage_error("run", "--job: '%s' is not a job name (1 to %d characters, no quotes, "
                                               "backslashes or line breaks)", optarg, STROBE__JOB_MAX);
            o->job = optarg;
            break;
        case OPT_LOCKS:
        case OPT_NO_LOCKS:
        case OPT_TASKGRAPH:
            o->locks = c == OPT_NO_LOCKS ? "0" : c == OPT_LOCKS ? "1" : "all";
            break;
        case 'h':
            fputs(strobe__run_help, stdout);
            return 0;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (o->no_trace && o->no_profile)
        return strobe__cli_usage_error("run", "'--no-trace' and '--no-profile' exclude each other");
    if (o->dump_signal[0] && !o->max_size)
        return strobe__cli_usage_error("run", "'--dump-signal' needs '--max-size'");
    int dump = o->max_size ? (o->dump_signal[0] ? atoi(o->dump_signal) : SIGUSR2) : 0;
    if (dump && dump == o->toggle_signal)
        return strobe__cli_usage_error("run", "'--toggle-signal' and '--dump-signal' name the same signal");
    if (o->no_trace && o->max_size)
        return strobe__cli_usage_error("run", "'--no-trace' and '--max-size' exclude each other");
    if (o->no_trace && strcmp(o->locks, "all") == 0) /* the task graph is built from the traces */
        return strobe__cli_usage_error("run", "'--no-trace' and '--taskgraph' exclude each other");
    if (o->output && !*o->output)
        return strobe__cli_usage_error("run", "option '--output' needs a directory name");
    if (optind >= argc)
        return strobe__cli_usage_error("run", "missing program to run");
    o->argv = argv + optind;
    return -1;
}

/* Runs the program; returns strobe's exit code. */
static int launch(const struct run_opts *o, const char *dir, const char *abs_dir, const char *runtime,
                  const char *extra_preload, const char *filter, const struct timespec *start)
{
    const char *prog = o->argv[0];
    struct strobe__run_info info = {
        .argv = o->argv,
        .runtime = runtime,
        .filter = filter,
        .trace = !o->no_trace,
        .profile = !o->no_profile,
        .tm_monitor = o->tm_monitor,
        .start_sec = start->tv_sec,
        .start_nsec = start->tv_nsec,
        .launcher_pid = (long)getpid(),
    };
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/meta", abs_dir);
    int rc = strobe__meta_write_start(meta, &info);
    if (rc) {
        strobe__cli_say("run: %s: %s", meta, strerror(-rc));
        unlink(meta);
        return STROBE_EXIT_RUN_FAILED;
    }
    struct env_builder env;
    struct child_env ce = {runtime,       abs_dir,        filter,
                           !o->no_trace,  !o->no_profile, extra_preload,
                           o->tm_monitor, o->publish,     !o->measure_launcher && is_mpi_launcher(prog),
                           o->job,        o->locks,       o->malloc,
                           o->sample_hz,   o->delay,       o->duration,
                           o->toggle_signal, o->max_size,  o->dump_signal[0] ? o->dump_signal : NULL};
    if ((rc = build_env(&env, &ce)) != 0) {
        env_free(&env);
        strobe__cli_say("run: %s", strerror(-rc));
        unlink(meta);
        return STROBE_EXIT_RUN_FAILED;
    }

    /* Forwarding handlers are installed and the signals blocked across
     * fork(), so a signal arriving in between is delivered (and forwarded)
     * once forward_pid is set instead of being lost or killing strobe. */
    struct sigaction sa = {.sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO}, old_sa[NFORWARDED];
    sigset_t block, old_mask;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&block);
    for (size_t i = 0; i < NFORWARDED; i++) {
        sigaddset(&block, forwarded[i]);
        sigaction(forwarded[i], &sa, &old_sa[i]);
    }
    sigprocmask(SIG_BLOCK, &block, &old_mask);

    int pipefd[2] = {-1, -1}; /* close-on-exec: EOF = exec succeeded, else the errno */
    pid_t pid = -1;
    if (pipe2(pipefd, O_CLOEXEC) == 0)
        pid = fork();
    if (pid == 0) {
        /* child: only async-signal-safe calls until exec */
        close(pipefd[0]);
        for (size_t i = 0; i < NFORWARDED; i++)
            sigaction(forwarded[i], &old_sa[i], NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        fill_pid(env.v, getpid());
        execvpe(prog, o->argv, env.v);
        int err = errno;
        ssize_t w = write(pipefd[1], &err, sizeof err);
        (void)w;
        _exit(STROBE_EXIT_NOT_FOUND);
    }
    int fork_errno = errno;
    env_free(&env);
    if (pid < 0) {
        if (pipefd[0] >= 0) {
            close(pipefd[0]);
            close(pipefd[1]);
        }
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        for (size_t i = 0; i < NFORWARDED; i++)
            sigaction(forwarded[i], &old_sa[i], NULL);
        strobe__cli_say("run: cannot start %s: %s", prog, strerror(fork_errno));
        unlink(meta);
        return STROBE_EXIT_RUN_FAILED;
    }
    forward_pid = pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);

    close(pipefd[1]);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(pipefd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(pipefd[0]);
    /* Wait for the end without reaping first: until the pid is reaped it
     * cannot be reused, so the handler never signals an unrelated process. */
    siginfo_t si;
    int status = 0;
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    forward_pid = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            status = -1;
            break;
        }
    }
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaction(forwarded[i], &old_sa[i], NULL);

    if (got == (ssize_t)sizeof exec_errno) {
        /* the program never ran: leave nothing behind */
        unlink(meta);
        strobe__cli_say("run: %s: %s", prog, strerror(exec_errno));
        return exec_errno == ENOENT ? STROBE_EXIT_NOT_FOUND : STROBE_EXIT_CANNOT_EXEC;
    }
    if (status == -1) {
        strobe__cli_say("run: waiting for %s: %s", prog, strerror(errno));
        return STROBE_EXIT_RUN_FAILED;
    }

    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    int after_signal = WIFEXITED(status) ? received_signal : 0;
    if ((rc = strobe__meta_write_end(meta, status, after_signal, end.tv_sec, end.tv_nsec)) != 0)
        strobe__cli_say("run: %s: %s", meta, strerror(-rc));
    int code;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        code = 128 + sig;
        strobe__cli_say("run: %s killed by signal %d (%s)%s", prog, sig, strsignal(sig),
                        WCOREDUMP(status) ? ", core dumped" : "");
    } else {
        code = WEXITSTATUS(status);
        if (after_signal)
            strobe__cli_say("run: %s exited with status %d after signal %d (%s)", prog, code, after_signal,
                            strsignal(after_signal));
    }
    report_experiment(dir);
    return code;
}

int strobe__cmd_run(int argc, char **argv)
{
    struct run_opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;

    char *filter = NULL;
    const char *filter_path = o.filter;
    if (filter_path) {
        struct strobe_filter *f;
        char err[512];
        if ((rc = strobe__filter_load(filter_path, &f, err, sizeof err)) != 0) {
            strobe__cli_say("%s", err);
            return STROBE_EXIT_USAGE;
        }
        strobe__filter_free(f);
        if (!(filter = realpath(filter_path, NULL))) {
            strobe__cli_say("run: %s: %s", filter_path, strerror(errno));
            return STROBE_EXIT_USAGE;
        }
    }

    char *prog_path = NULL;
    rc = strobe__find_program(o.argv[0], &prog_path);
    /* MPICH's ranks get the profiler built for MPICH */
    bool mpich = rc == 0 && o.mpi && runs_mpich(prog_path);
    free(prog_path);
    if (rc) {
        strobe__cli_say("run: %s: %s", o.argv[0], strerror(-rc));
        free(filter);
        return rc == -EACCES ? STROBE_EXIT_CANNOT_EXEC : STROBE_EXIT_NOT_FOUND;
    }

    char *runtime = NULL;
    char err[2 * PATH_MAX + 256];
    if ((rc = strobe__find_runtime(&runtime, err, sizeof err)) != 0) {
        strobe__cli_say("run: %s", err);
        free(filter);
        return STROBE_EXIT_RUN_FAILED;
    }
    if (strpbrk(runtime, ": \t\n")) {
        /* the dynamic loader splits LD_PRELOAD at these characters */
        strobe__cli_say("run: %s: LD_PRELOAD cannot name a path containing ':' or blanks", runtime);
        free(runtime);
        free(filter);
        return STROBE_EXIT_RUN_FAILED;
    }

    /* The STM, the MPI profiler and the OpenMP adapter are installed next
     * to the runtime. */
    char *extra_preload = NULL;
    /* the MPICH copy when there is one (else the MPI found at build time
     * was MPICH itself) */
    if (mpich) {
        char *lib = NULL;
        const char *slash = strrchr(runtime, '/');
        int len = slash ? (int)(slash - runtime) : 1;
        mpich = asprintf(&lib, "%.*s/" STROBE__SONAME("libstrobe-mpi-mpich"), len, slash ? runtime : ".") >= 0 &&
                access(lib, R_OK) == 0;
        free(lib);
    }
    const struct { const char *opt, *lib; bool on; } extras[] = {
        {"--tm", STROBE__SONAME("libstrobe-tm"), o.tm_monitor != NULL},
        {"--mpi", mpich ? STROBE__SONAME("libstrobe-mpi-mpich") : STROBE__SONAME("libstrobe-mpi"), o.mpi},
        {"--openmp", STROBE__SONAME("libstrobe-ompt"), o.openmp}};
    for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++) {
        if (!extras[i].on)
            continue;
        const char *slash = strrchr(runtime, '/');
        int len = slash ? (int)(slash - runtime) : 1;
        char *lib = NULL, *joined = NULL;
        if (asprintf(&lib, "%.*s/%s", len, slash ? runtime : ".", extras[i].lib) < 0 || access(lib, R_OK) != 0) {
            strobe__cli_say("run: %s: %s: %s", extras[i].opt, lib ? lib : extras[i].lib,
                            lib ? strerror(errno) : "out of memory");
            free(lib);
            free(extra_preload);
            free(runtime);
            free(filter);
            return STROBE_EXIT_RUN_FAILED;
        }
        if (asprintf(&joined, "%s%s%s", extra_preload ? extra_preload : "", extra_preload ? ":" : "", lib) < 0)
            joined = NULL;
        free(lib);
        free(extra_preload);
        extra_preload = joined;
    }

    struct timespec start;
    clock_gettime(CLOCK_REALTIME, &start);
    char *dir = NULL, *abs_dir = NULL;
    bool created;
    int code = strobe__cli_experiment_dir("run", o.output, o.argv[0], start.tv_sec, &dir, &created);
    if (code == 0) {
        if (!(abs_dir = realpath(dir, NULL))) {
            strobe__cli_say("run: %s: %s", dir, strerror(errno));
            code = STROBE_EXIT_RUN_FAILED;
        } else {
            code = launch(&o, dir, abs_dir, runtime, extra_preload, filter, &start);
            /* nothing ran when exec failed: remove the directory we made */
            if ((code == STROBE_EXIT_NOT_FOUND || code == STROBE_EXIT_CANNOT_EXEC ||
                 code == STROBE_EXIT_RUN_FAILED) &&
                created && dir_is_empty(abs_dir) == 1)
                rmdir(abs_dir);
        }
    }
    free(dir);
    free(abs_dir);
    free(runtime);
    free(extra_preload);
    free(filter);
    return code;
}
