/* SPDX-License-Identifier: MIT */
/*
 * libstrobe-mpi.so end to end: mpi_prog runs under mpirun with 2 ranks and
 * the library preloaded; while its ranks hold before MPI_Finalize, this
 * test reads the published sets from the shared-memory index and checks
 * every count exactly, then lets them finish and checks that the sets
 * are gone. Each case uses its own index, named after the test's pid.
 *
 * Exits 77 (ctest: skipped) only when mpirun cannot start a 2-rank job of
 * /bin/true at all on this machine.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strobe/shm.h"
#include "test.h"

/* Open MPI refuses root without both variables and fewer slots than ranks
 * without oversubscription; other MPIs ignore them. */
static void mpi_env(void)
{
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
}

static void skip_unless_mpirun_works(void)
{
    mpi_env();
    char *out;
    int rc = strobe_test_sh(&out, "%s %s 2 /bin/true", STROBE_MPIEXEC, STROBE_MPIEXEC_NP);
    if (rc != 0) {
        printf("SKIP: mpirun cannot start a 2-rank job here (exit %d):\n%s\n", rc, out);
        free(out);
        exit(77);
    }
    free(out);
}

struct run {
    char dir[4096];
    char index[64];
    char job[64];
    pid_t pid;
};

/* Starts mpi_prog under mpirun in the background. The environment goes
 * through env(1) on the command line so that it reaches the ranks whatever
 * the launcher forwards, and LD_PRELOAD does not load the profiler into
 * mpirun itself. */
static void start_cmd(struct run *r, const char *name, const char *query, int via_strobe_run)
{
    skip_unless_mpirun_works();
    snprintf(r->dir, sizeof r->dir, "%s", strobe_test_tmpdir(name));
    snprintf(r->index, sizeof r->index, "strobe-test-mpi-%ld", (long)getpid());
    snprintf(r->job, sizeof r->job, "t%ld", (long)getpid());
    char cmd[16384];
    if (via_strobe_run) /* what a user types: the profiler comes with `strobe run --mpi` */
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && STROBE_SHM_INDEX='%s' STROBE_MPI_PRODUCER=testnode STROBE_MPI_JOB='%s' "
                 "STROBE_MPI_QUERY='%s' exec '%s/strobe' run --publish --mpi -o exp -- %s %s 2 '%s' '%s' "
                 ">'%s/mpirun.log' 2>&1",
                 r->dir, r->index, r->job, query, STROBE_BIN_DIR, STROBE_MPIEXEC, STROBE_MPIEXEC_NP,
                 STROBE_MPI_PROG, r->dir, r->dir);
    else
        snprintf(cmd, sizeof cmd,
                 "exec %s %s 2 env LD_PRELOAD='%s' STROBE_SHM_INDEX='%s' STROBE_MPI_PRODUCER=testnode "
                 "STROBE_MPI_JOB='%s' STROBE_MPI_QUERY='%s' '%s' '%s' >'%s/mpirun.log' 2>&1",
                 STROBE_MPIEXEC, STROBE_MPIEXEC_NP, STROBE_MPI_LIB, r->index, r->job, query, STROBE_MPI_PROG,
                 r->dir, r->dir);
    r->pid = fork();
    if (r->pid < 0)
        STROBE_FAIL("fork: %s", strerror(errno));
    if (r->pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
}

static void start(struct run *r, const char *name, const char *query)
{
    start_cmd(r, name, query, 0);
}

static char *slurp(const char *path)
{
    char *out;
    strobe_test_sh(&out, "cat '%s'", path);
    return out;
}

/* Waits until both ranks hold (all their counted calls are done). */
static void wait_ready(struct run *r)
{
    char p0[4200], p1[4200], log[4200];
    snprintf(p0, sizeof p0, "%s/ready.0", r->dir);
    snprintf(p1, sizeof p1, "%s/ready.1", r->dir);
    snprintf(log, sizeof log, "%s/mpirun.log", r->dir);
    for (int i = 0; i < 6000; i++) { /* 60 s */
        if (access(p0, F_OK) == 0 && access(p1, F_OK) == 0)
            return;
        int st;
        if (waitpid(r->pid, &st, WNOHANG) == r->pid)
            STROBE_FAIL("mpirun exited (status 0x%x) before the ranks were ready:\n%s", st, slurp(log));
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    kill(r->pid, SIGKILL);
    STROBE_FAIL("ranks not ready after 60 s:\n%s", slurp(log));
}

/* Lets the ranks finish; returns mpirun's output (caller frees). */
static char *finish(struct run *r)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/go", r->dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fclose(f);
    int st;
    CHECK_EQ_INT(waitpid(r->pid, &st, 0), r->pid);
    snprintf(path, sizeof path, "%s/mpirun.log", r->dir);
    char *log = slurp(path);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        STROBE_FAIL("mpirun failed (status 0x%x):\n%s", st, log);
    return log;
}

static strobe_set *find_set(strobe_shm_reader *rd, const char *instance)
{
    for (uint32_t i = 0; i < strobe_shm_reader_count(rd); i++) {
        strobe_set *set = strobe_shm_reader_set(rd, i);
        if (strcmp(strobe_set_instance(set), instance) == 0)
            return set;
    }
    return NULL;
}

static uint64_t value(strobe_set *set, const char *metric)
{
    int i = strobe_set_metric_index(set, metric);
    if (i < 0)
        STROBE_FAIL("%s: no metric %s", strobe_set_instance(set), metric);
    return strobe_set_get_u64(set, (uint32_t)i, 0);
}

struct expect {
    const char *fn;
    uint64_t calls, bytes;
};

static void check_counts(strobe_set *set, const struct expect *e, size_t n, int with_bytes)
{
    char name[96];
    for (size_t k = 0; k < n; k++) {
        snprintf(name, sizeof name, "%s.calls", e[k].fn);
        uint64_t calls = value(set, name);
        if (calls != e[k].calls)
            STROBE_FAIL("%s: %s = %" PRIu64 ", expected %" PRIu64, strobe_set_instance(set), name, calls,
                        e[k].calls);
        snprintf(name, sizeof name, "%s.bytes", e[k].fn);
        if (!with_bytes) {
            CHECK_EQ_INT(strobe_set_metric_index(set, name), -ENOENT);
            continue;
        }
        uint64_t bytes = value(set, name);
        if (bytes != e[k].bytes)
            STROBE_FAIL("%s: %s = %" PRIu64 ", expected %" PRIu64, strobe_set_instance(set), name, bytes,
                        e[k].bytes);
    }
}

/* What mpi_prog does, counted under "WHERE size > 10": the 4-byte sends
 * and receives and the 8-byte broadcast fall out; calls that move no
 * message (Init, Wait, Waitall, Barrier) are never filtered. */
static const struct expect rank0[] = {
    {"MPI_Init", 1, 0},     {"MPI_Init_thread", 0, 0}, {"MPI_Finalize", 0, 0}, {"MPI_Send", 10, 4000},
    {"MPI_Recv", 0, 0},     {"MPI_Isend", 4, 4000},    {"MPI_Irecv", 0, 0},    {"MPI_Ssend", 1, 400},
    {"MPI_Issend", 1, 80},  {"MPI_Bsend", 1, 64},      {"MPI_Rsend", 1, 32},   {"MPI_Sendrecv", 1, 128},
    {"MPI_Wait", 1, 0},     {"MPI_Waitall", 1, 0},     {"MPI_Barrier", 2, 0},  {"MPI_Bcast", 1, 64},
    {"MPI_Reduce", 1, 64},  {"MPI_Allreduce", 3, 192}, {"MPI_Gather", 1, 16},  {"MPI_Allgather", 1, 24},
    {"MPI_Scatter", 1, 20}, {"MPI_Alltoall", 1, 28},
};
static const struct expect rank1[] = {
    {"MPI_Init", 1, 0},     {"MPI_Init_thread", 0, 0}, {"MPI_Finalize", 0, 0}, {"MPI_Send", 0, 0},
    {"MPI_Recv", 13, 4544}, {"MPI_Isend", 0, 0},       {"MPI_Irecv", 5, 4032}, {"MPI_Ssend", 0, 0},
    {"MPI_Issend", 0, 0},   {"MPI_Bsend", 0, 0},       {"MPI_Rsend", 0, 0},    {"MPI_Sendrecv", 1, 128},
    {"MPI_Wait", 5, 0},     {"MPI_Waitall", 0, 0},     {"MPI_Barrier", 2, 0},  {"MPI_Bcast", 1, 64},
    {"MPI_Reduce", 1, 64},  {"MPI_Allreduce", 3, 192}, {"MPI_Gather", 1, 16},  {"MPI_Allgather", 1, 24},
    {"MPI_Scatter", 1, 20}, {"MPI_Alltoall", 1, 28},
};

static void per_rank_case(int via_strobe_run)
{
    struct run r;
    start_cmd(&r, via_strobe_run ? "strobe_run_mpi" : "per_rank",
              "SELECT calls, bytes FROM all WHERE size > 10 GROUP BY function, rank", via_strobe_run);
    wait_ready(&r);

    strobe_shm_reader *rd;
    CHECK_EQ_INT(strobe_shm_reader_open(r.index, 0, &rd), 0);
    int changed;
    CHECK_EQ_INT(strobe_shm_reader_scan(rd, &changed), 0);
    for (int rank = 0; rank < 2; rank++) {
        char instance[256];
        snprintf(instance, sizeof instance, "testnode/mpi/%s/rank%d", r.job, rank);
        strobe_set *set = find_set(rd, instance);
        if (!set)
            STROBE_FAIL("no set %s in index %s", instance, r.index);
        CHECK_STR_EQ(strobe_set_schema_name(set), "mpi");
        CHECK_STR_EQ(strobe_set_producer(set), "testnode");
        CHECK_EQ_INT(strobe_set_card(set), 2 + 2 * 22);
        CHECK(strobe_set_is_consistent(set));
        CHECK(strobe_set_data_gn(set) >= 1);
        CHECK_EQ_U64(value(set, "rank"), rank);
        CHECK_EQ_U64(value(set, "size"), 2);
        if (rank == 0)
            check_counts(set, rank0, sizeof rank0 / sizeof rank0[0], 1);
        else
            check_counts(set, rank1, sizeof rank1 / sizeof rank1[0], 1);
    }

    char *log = finish(&r);
    CHECK(strstr(log, "strobe-mpi") == NULL); /* no warning from the profiler */
    free(log);
    /* MPI_Finalize unpublished both sets */
    CHECK_EQ_INT(strobe_shm_reader_scan(rd, &changed), 0);
    for (int rank = 0; rank < 2; rank++) {
        char instance[256];
        snprintf(instance, sizeof instance, "testnode/mpi/%s/rank%d", r.job, rank);
        CHECK(find_set(rd, instance) == NULL);
    }
    strobe_shm_reader_close(rd);
}

STROBE_TEST(per_rank)
{
    per_rank_case(0);
}

/* `strobe run --publish --mpi -- mpirun ...`: the same counts, with the
 * ranks measured by strobe at the same time */
STROBE_TEST(strobe_run_mpi)
{
    per_rank_case(1);
}

STROBE_TEST(aggregated)
{
    struct run r;
    start(&r, "aggregated",
          "select calls from p2p, MPI_Barrier, MPI_Bcast where size >= 4 and size < 1000 group by function");
    wait_ready(&r);

    strobe_shm_reader *rd;
    CHECK_EQ_INT(strobe_shm_reader_open(r.index, 0, &rd), 0);
    int changed;
    CHECK_EQ_INT(strobe_shm_reader_scan(rd, &changed), 0);
    char instance[256];
    snprintf(instance, sizeof instance, "testnode/mpi/%s", r.job);
    strobe_set *set = find_set(rd, instance);
    if (!set)
        STROBE_FAIL("no set %s in index %s", instance, r.index);
    /* one set for the node: no per-rank set next to it */
    snprintf(instance, sizeof instance, "testnode/mpi/%s/rank0", r.job);
    CHECK(find_set(rd, instance) == NULL);
    CHECK_EQ_INT(strobe_set_card(set), 1 + 11);
    CHECK_EQ_INT(strobe_set_metric_index(set, "rank"), -ENOENT);
    CHECK_EQ_U64(value(set, "size"), 2);
    CHECK(strobe_set_is_consistent(set));
    CHECK_EQ_INT(strobe_set_metric_index(set, "MPI_Allreduce.calls"), -ENOENT);
    /* both ranks summed; [4, 999] keeps the 4-byte messages and drops the
     * 1000-byte Isend/Irecv */
    static const struct expect sum[] = {
        {"MPI_Send", 15, 0},    {"MPI_Recv", 18, 0},   {"MPI_Isend", 0, 0}, {"MPI_Irecv", 1, 0},
        {"MPI_Ssend", 1, 0},    {"MPI_Issend", 1, 0},  {"MPI_Bsend", 1, 0}, {"MPI_Rsend", 1, 0},
        {"MPI_Sendrecv", 2, 0}, {"MPI_Barrier", 4, 0}, {"MPI_Bcast", 4, 0},
    };
    check_counts(set, sum, sizeof sum / sizeof sum[0], 0);

    char *log = finish(&r);
    CHECK(strstr(log, "strobe-mpi") == NULL);
    free(log);
    CHECK_EQ_INT(strobe_shm_reader_scan(rd, &changed), 0);
    snprintf(instance, sizeof instance, "testnode/mpi/%s", r.job);
    CHECK(find_set(rd, instance) == NULL);
    strobe_shm_reader_close(rd);
}

/* A bad query: one line from rank 0 naming the problem, no profiling, and
 * the application runs as if the library were not there. */
STROBE_TEST(bad_query)
{
    struct run r;
    start(&r, "bad_query", "SELECT calls FROM MPI_Snd");
    wait_ready(&r);
    char *log = finish(&r);
    CHECK_STR_EQ(log,
                 "strobe-mpi: STROBE_MPI_QUERY: query:1:19: unknown MPI function 'MPI_Snd'; not profiling\n");
    free(log);
}

/* The library adds nothing to an application's namespace but the MPI
 * functions it wraps. */
/* The wrappers are generated from mpi.h: every MPI_X whose PMPI_X the MPI
 * library exports is wrapped, and nothing else is exported, except the
 * functions that are not error-code calls (the handle conversions, the
 * clocks), the variadic MPI_Pcontrol, and the MPI-1 functions MPI-3
 * removed (Open MPI's library keeps them, its mpi.h does not declare
 * them: no program built against it can call them). */
static const char exports_script[] =
    "nm -D --defined-only '%s' | awk '{print $3}' | sort >ours; "
    "lib=$(ldd " STROBE_MPI_PROG " | awk '$1 ~ /^libmpi(ch)?[.]so/ {print $3}'); "
    "nm -D --defined-only $lib | awk '$3 ~ /^PMPI_/ {print substr($3, 2)}' | sort >theirs; "
    "echo extra: $(comm -23 ours theirs); "
    "echo missing: $(comm -13 ours theirs | grep -v -e '_f2c$' -e '_c2f$' -e '^MPI_Wti' -e "
    "'^MPI_Pcontrol$'); "
    "grep -c . ours";

STROBE_TEST(exports)
{
    char *out;
    const char *dir = strobe_test_tmpdir("exports");
    char script[1024];
    snprintf(script, sizeof script, exports_script, STROBE_MPI_LIB);
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s", dir, script), 0);
    CHECK_STR_EQ(out, "extra:\n"
                      "missing: MPI_Address MPI_Errhandler_create MPI_Errhandler_get MPI_Errhandler_set "
                      "MPI_Type_extent MPI_Type_hindexed MPI_Type_hvector MPI_Type_lb MPI_Type_struct "
                      "MPI_Type_ub\n"
                      "380\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(per_rank), STROBE_CASE(strobe_run_mpi), STROBE_CASE(aggregated), STROBE_CASE(bad_query), STROBE_CASE(exports))
