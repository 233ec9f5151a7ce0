/* SPDX-License-Identifier: MIT */
/*
 * The shared-memory index (src/monitor/shm.c): publishing and reading in
 * place, generation-driven rescans, shared sets, the four crash scenarios
 * of seed 002 Figure 4.4 (applications and the sampler are fork()ed
 * children, crashes are SIGKILL), a crash inside the index lock,
 * permissions, corrupt contents and a full index.
 *
 * Each case uses its own index name (case name + pid), so cases run in
 * parallel, and ends by checking that nothing with that prefix is left in
 * /dev/shm. A killed child is always reaped before the next check: a
 * zombie still counts as a live process for kill(pid, 0).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "monitor/shm.h"
#include "test.h"

#define N_ADDS 100000

static char g_name[128];

static const char *index_name(const char *tag)
{
    snprintf(g_name, sizeof g_name, "strobe-test-%s-%d", tag, (int)getpid());
    return g_name;
}

/* Objects in /dev/shm named `name` or `name.*`. */
static int leftovers(const char *name)
{
    DIR *d = opendir("/dev/shm");
    CHECK(d != NULL);
    size_t n = strlen(name);
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strncmp(de->d_name, name, n) == 0 && (de->d_name[n] == 0 || de->d_name[n] == '.')) {
            fprintf(stderr, "left over: /dev/shm/%s\n", de->d_name);
            count++;
        }
    closedir(d);
    return count;
}

static int shm_exists(const char *obj) /* obj as in the index: leading '/' */
{
    char path[512];
    snprintf(path, sizeof path, "/dev/shm%s", obj);
    return access(path, F_OK) == 0;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static strobe_schema *make_schema(int extra)
{
    strobe_schema *s;
    CHECK_EQ_INT(strobe_schema_new("app", &s), 0);
    CHECK_EQ_INT(strobe_schema_add(s, "calls", NULL, STROBE_MT_U64, 1, 0), 0);
    CHECK_EQ_INT(strobe_schema_add(s, "bytes", "B", STROBE_MT_U64, 1, 0), 1);
    if (extra)
        CHECK_EQ_INT(strobe_schema_add(s, "extra", NULL, STROBE_MT_U32, 1, 0), 2);
    return s;
}

/* Value of `metric` in a consistent snapshot of a set read in place. */
static uint64_t snap_u64(strobe_set *set, const char *metric)
{
    size_t ml, dl;
    const void *meta = strobe_set_meta(set, &ml);
    strobe_set_data(set, &dl);
    void *buf = aligned_alloc(8, dl);
    CHECK(buf != NULL);
    CHECK_EQ_INT(strobe_set_snapshot_data(set, buf, dl), 0);
    strobe_set *copy;
    CHECK_EQ_INT(strobe_set_from_meta(meta, ml, &copy), 0);
    CHECK_EQ_INT(strobe_set_apply_data(copy, buf, dl), 0);
    int i = strobe_set_metric_index(copy, metric);
    CHECK(i >= 0);
    uint64_t v = strobe_set_get_u64(copy, (uint32_t)i, 0);
    strobe_set_free(copy);
    free(buf);
    return v;
}

/* The test's own view of an index, to inspect and corrupt it. */
static struct strobe__shm_hdr *map_index(const char *name)
{
    char obj[256];
    snprintf(obj, sizeof obj, "/%s", name);
    int fd = shm_open(obj, O_RDWR, 0);
    CHECK(fd >= 0);
    struct stat st;
    CHECK_EQ_INT(fstat(fd, &st), 0);
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED);
    close(fd);
    return p;
}

static void unmap_index(struct strobe__shm_hdr *h)
{
    munmap(h, STROBE__SHM_INDEX_BYTES(h->capacity));
}

static struct strobe__shm_entry *entries(struct strobe__shm_hdr *h)
{
    return (struct strobe__shm_entry *)(h + 1);
}

/* The ACTIVE entry labelled `label`, or NULL. */
static struct strobe__shm_entry *find_entry(struct strobe__shm_hdr *h, const char *label)
{
    for (uint32_t s = 0; s < h->capacity; s++)
        if (entries(h)[s].state == STROBE__SHM_ACTIVE && strcmp(entries(h)[s].label, label) == 0)
            return &entries(h)[s];
    return NULL;
}

static int popcount32(uint32_t v)
{
    return __builtin_popcount(v);
}

/* ---- parent/child synchronisation over pipes ----------------------------- */

struct chan {
    int up[2];   /* child -> parent */
    int down[2]; /* parent -> child */
};

static void chan_init(struct chan *c)
{
    CHECK_EQ_INT(pipe(c->up), 0);
    CHECK_EQ_INT(pipe(c->down), 0);
}

static void chan_send(int fd, char b)
{
    CHECK_EQ_INT(write(fd, &b, 1), 1);
}

static char chan_recv(int fd)
{
    char b = 0;
    CHECK_EQ_INT(read(fd, &b, 1), 1);
    return b;
}

/* Children report failure through their exit status; _exit skips the
 * parent's atexit work (stdio buffers, leak checks of copied state). */
#define CHILD_CHECK(cond)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s:%d: child check failed: %s\n", __FILE__, __LINE__, #cond);                   \
            _exit(2);                                                                                        \
        }                                                                                                    \
    } while (0)

static int reap(pid_t pid)
{
    int st;
    CHECK_EQ_INT(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
}

static void kill_reap(pid_t pid)
{
    CHECK_EQ_INT(kill(pid, SIGKILL), 0);
    CHECK_EQ_INT(reap(pid), 128 + SIGKILL);
}

/* A child application: publishes `instance`, runs one transaction with
 * calls = v, bytes = 2v, says 'r', then on 'q' unpublishes and exits 0
 * (or waits to be killed if it never gets 'q'). */
static pid_t spawn_app(const char *name, const char *instance, uint64_t v, struct chan *c)
{
    chan_init(c);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        strobe_schema *s = make_schema(0);
        strobe_shm_pub *pub;
        strobe_set *set;
        CHILD_CHECK(strobe_shm_publish(name, s, "node", instance, &pub, &set) == 0);
        strobe_schema_free(s);
        strobe_set_begin(set);
        strobe_set_u64(set, 0, 0, v);
        strobe_set_u64(set, 1, 0, 2 * v);
        strobe_set_end(set);
        chan_send(c->up[1], 'r');
        CHILD_CHECK(chan_recv(c->down[0]) == 'q');
        CHILD_CHECK(strobe_shm_unpublish(pub) == 0);
        _exit(0);
    }
    CHECK_EQ_INT(chan_recv(c->up[0]), 'r');
    return pid;
}

/* A child sampler: opens a reader, scans once, expects `expect` sets,
 * says 'r' and waits to be killed. */
static pid_t spawn_reader(const char *name, uint32_t expect)
{
    struct chan c;
    chan_init(&c);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        strobe_shm_reader *r;
        CHILD_CHECK(strobe_shm_reader_open(name, 0, &r) == 0);
        CHILD_CHECK(strobe_shm_reader_scan(r, NULL) == 0);
        CHILD_CHECK(strobe_shm_reader_count(r) == expect);
        chan_send(c.up[1], 'r');
        for (;;)
            pause();
    }
    CHECK_EQ_INT(chan_recv(c.up[0]), 'r');
    return pid;
}

/* ---- cases ---------------------------------------------------------------- */

STROBE_TEST(publish_read)
{
    const char *name = index_name("publish_read");
    strobe_shm_reader *r;
    int changed;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(changed, 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 0);

    struct chan c;
    pid_t app = spawn_app(name, "app1", 42, &c);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    strobe_set *set = strobe_shm_reader_set(r, 0);
    CHECK(strobe_shm_reader_set(r, 1) == NULL);
    CHECK_STR_EQ(strobe_set_instance(set), "app1");
    CHECK_STR_EQ(strobe_set_producer(set), "node");
    CHECK_EQ_U64(strobe_set_data_gn(set), 1);
    CHECK_EQ_U64(snap_u64(set, "calls"), 42);
    CHECK_EQ_U64(snap_u64(set, "bytes"), 84);

    struct strobe__shm_hdr *h = map_index(name);
    struct strobe__shm_entry *e = find_entry(h, "app1");
    CHECK(e != NULL);
    CHECK_EQ_INT(e->writers, 1);
    CHECK_EQ_INT(e->writer_pids[0], app);
    CHECK_EQ_INT(popcount32(e->reader_mask), 1); /* reader refcount */
    char seg[STROBE__SHM_SEGMENT_SIZE];
    memcpy(seg, e->segment, sizeof seg);
    CHECK(shm_exists(seg));

    chan_send(c.down[1], 'q');
    CHECK_EQ_INT(reap(app), 0);
    CHECK(!shm_exists(seg));
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 0);
    unmap_index(h);
    strobe_shm_reader_close(r);
    CHECK_EQ_INT(leftovers(name), 0);
}

STROBE_TEST(generation_rescan)
{
    const char *name = index_name("generation_rescan");
    strobe_schema *s = make_schema(0);
    strobe_shm_reader *r;
    strobe_shm_pub *pa, *pb;
    strobe_set *sa, *sb;
    int changed;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    struct strobe__shm_hdr *h = map_index(name);
    uint64_t g0 = h->generation;

    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "a", &pa, &sa), 0);
    CHECK(h->generation > g0);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    uint64_t g1 = h->generation;
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0); /* nothing new */
    CHECK_EQ_INT(changed, 0);
    CHECK_EQ_U64(h->generation, g1);

    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "b", &pb, &sb), 0);
    CHECK(h->generation > g1);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 2);
    CHECK_EQ_INT(h->size, 2);

    uint64_t g2 = h->generation;
    CHECK_EQ_INT(strobe_shm_unpublish(pa), 0);
    CHECK(h->generation > g2);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    CHECK_STR_EQ(strobe_set_instance(strobe_shm_reader_set(r, 0)), "b");

    /* the reader's values follow the writer's */
    strobe_set_begin(sb);
    strobe_set_u64(sb, 0, 0, 7);
    strobe_set_end(sb);
    CHECK_EQ_U64(snap_u64(strobe_shm_reader_set(r, 0), "calls"), 7);

    CHECK_EQ_INT(strobe_shm_unpublish(pb), 0);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 0);
    unmap_index(h);
    strobe_shm_reader_close(r);
    strobe_schema_free(s);
    CHECK_EQ_INT(leftovers(name), 0);
}

/* Two processes write one set with atomic adds (a set aggregated over MPI
 * ranks): one entry, writer count 2, exact sums. */
STROBE_TEST(two_writers_join)
{
    const char *name = index_name("two_writers_join");
    strobe_shm_reader *r;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    struct chan c[2];
    pid_t pid[2];
    for (int k = 0; k < 2; k++) {
        chan_init(&c[k]);
        pid[k] = fork();
        CHECK(pid[k] >= 0);
        if (pid[k] == 0) {
            strobe_schema *s = make_schema(0);
            strobe_shm_pub *pub;
            strobe_set *set;
            CHILD_CHECK(strobe_shm_publish(name, s, "node", "mpi", &pub, &set) == 0);
            strobe_schema_free(s);
            chan_send(c[k].up[1], 'r');
            CHILD_CHECK(chan_recv(c[k].down[0]) == 'g');
            strobe_set_begin(set);
            for (int i = 0; i < N_ADDS; i++) {
                strobe_set_add_u64(set, 0, 0, 1);
                strobe_set_add_u64(set, 1, 0, (uint64_t)k + 3);
            }
            strobe_set_end(set);
            chan_send(c[k].up[1], 'd');
            CHILD_CHECK(chan_recv(c[k].down[0]) == 'q');
            CHILD_CHECK(strobe_shm_unpublish(pub) == 0);
            _exit(0);
        }
        /* one after the other: the second one joins the first one's entry */
        CHECK_EQ_INT(chan_recv(c[k].up[0]), 'r');
    }
    struct strobe__shm_hdr *h = map_index(name);
    struct strobe__shm_entry *e = find_entry(h, "mpi");
    CHECK(e != NULL);
    CHECK_EQ_INT(e->writers, 2);
    CHECK_EQ_INT(e->writer_pids[0], pid[0]);
    CHECK_EQ_INT(e->writer_pids[1], pid[1]);
    CHECK_EQ_INT(h->size, 1);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, NULL), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);

    chan_send(c[0].down[1], 'g');
    chan_send(c[1].down[1], 'g');
    CHECK_EQ_INT(chan_recv(c[0].up[0]), 'd');
    CHECK_EQ_INT(chan_recv(c[1].up[0]), 'd');
    strobe_set *set = strobe_shm_reader_set(r, 0);
    CHECK_EQ_U64(snap_u64(set, "calls"), 2 * N_ADDS);
    CHECK_EQ_U64(snap_u64(set, "bytes"), (3 + 4) * (uint64_t)N_ADDS);
    CHECK_EQ_U64(strobe_set_data_gn(set), 2);

    chan_send(c[0].down[1], 'q');
    CHECK_EQ_INT(reap(pid[0]), 0);
    CHECK_EQ_INT(e->writers, 1); /* still there for the other writer */
    CHECK_EQ_INT(e->state, STROBE__SHM_ACTIVE);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, NULL), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    CHECK_EQ_U64(snap_u64(strobe_shm_reader_set(r, 0), "calls"), 2 * N_ADDS);

    chan_send(c[1].down[1], 'q');
    CHECK_EQ_INT(reap(pid[1]), 0);
    CHECK(find_entry(h, "mpi") == NULL);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, NULL), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 0);
    unmap_index(h);
    strobe_shm_reader_close(r);
    CHECK_EQ_INT(leftovers(name), 0);
}

STROBE_TEST(different_schema_eexist)
{
    const char *name = index_name("different_schema_eexist");
    strobe_schema *s1 = make_schema(0), *s2 = make_schema(1);
    strobe_shm_pub *p1, *p2, *p3;
    strobe_set *x1, *x2, *x3;
    CHECK_EQ_INT(strobe_shm_publish(name, s1, "node", "x", &p1, &x1), 0);
    CHECK_EQ_INT(strobe_shm_publish(name, s2, "node", "x", &p2, &x2), -EEXIST);
    CHECK_EQ_INT(strobe_shm_publish(name, s2, "node", "y", &p2, &x2), 0);
    /* same schema, same label, same process: a second writer of x */
    CHECK_EQ_INT(strobe_shm_publish(name, s1, "node", "x", &p3, &x3), 0);
    struct strobe__shm_hdr *h = map_index(name);
    CHECK_EQ_INT(find_entry(h, "x")->writers, 2);
    CHECK_EQ_INT(h->size, 2);
    strobe_set_u64(x3, 0, 0, 5);
    CHECK_EQ_U64(strobe_set_get_u64(x1, 0, 0), 5); /* one segment */
    CHECK_EQ_INT(strobe_shm_publish(name, s1, NULL, "z", &p3, &x3), -EINVAL);
    CHECK_EQ_INT(strobe_shm_publish("bad/name", s1, "node", "z", &p3, &x3), -EINVAL);
    CHECK_EQ_INT(strobe_shm_unpublish(p1), 0);
    CHECK_EQ_INT(find_entry(h, "x")->writers, 1);
    CHECK_EQ_INT(strobe_shm_unpublish(p3), 0);
    CHECK(find_entry(h, "x") == NULL);
    /* no reader ever: the last writer out removes the index */
    CHECK_EQ_INT(strobe_shm_unpublish(p2), 0);
    unmap_index(h);
    strobe_schema_free(s1);
    strobe_schema_free(s2);
    CHECK_EQ_INT(leftovers(name), 0);
}

/* Scenario 1: the application leaves normally, the sampler stays. */
STROBE_TEST(scenario1_app_exits)
{
    const char *name = index_name("scenario1_app_exits");
    strobe_shm_reader *r;
    int changed;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    struct chan c1, c2;
    pid_t a1 = spawn_app(name, "m", 1, &c1);
    pid_t a2 = spawn_app(name, "n", 2, &c2);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 2);
    struct strobe__shm_hdr *h = map_index(name);
    char seg[STROBE__SHM_SEGMENT_SIZE];
    memcpy(seg, find_entry(h, "n")->segment, sizeof seg);

    chan_send(c2.down[1], 'q');
    CHECK_EQ_INT(reap(a2), 0);
    /* the application removed its entry and segment itself */
    CHECK(find_entry(h, "n") == NULL);
    CHECK(!shm_exists(seg));
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    CHECK_STR_EQ(strobe_set_instance(strobe_shm_reader_set(r, 0)), "m");

    chan_send(c1.down[1], 'q');
    CHECK_EQ_INT(reap(a1), 0);
    /* a live reader keeps the empty index */
    CHECK(leftovers(name) == 1);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 0);
    unmap_index(h);
    strobe_shm_reader_close(r);
    CHECK_EQ_INT(leftovers(name), 0);
}

/* Scenario 2: a live application that goes silent is timed out; a
 * heartbeating one is not. */
STROBE_TEST(scenario2_timeout)
{
    const char *name = index_name("scenario2_timeout");
    const uint64_t timeout = 1000000000ull; /* 1 s */
    strobe_shm_reader *r;
    int changed;
    CHECK_EQ_INT(strobe_shm_reader_open(name, timeout, &r), 0);
    struct chan c;
    pid_t silent = spawn_app(name, "silent", 1, &c);

    struct chan hb;
    chan_init(&hb);
    pid_t beating = fork();
    CHECK(beating >= 0);
    if (beating == 0) {
        strobe_schema *s = make_schema(0);
        strobe_shm_pub *pub;
        strobe_set *set;
        CHILD_CHECK(strobe_shm_publish(name, s, "node", "beating", &pub, &set) == 0);
        chan_send(hb.up[1], 'r');
        for (;;) {
            strobe_shm_heartbeat(pub);
            sleep_ms(50);
        }
    }
    CHECK_EQ_INT(chan_recv(hb.up[0]), 'r');

    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 2);
    struct strobe__shm_hdr *h = map_index(name);
    char seg[STROBE__SHM_SEGMENT_SIZE];
    memcpy(seg, find_entry(h, "silent")->segment, sizeof seg);
    for (int i = 0; i < 15; i++) { /* 1.5 s of scans */
        sleep_ms(100);
        CHECK_EQ_INT(strobe_shm_reader_scan(r, NULL), 0);
    }
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    CHECK_STR_EQ(strobe_set_instance(strobe_shm_reader_set(r, 0)), "beating");
    CHECK(find_entry(h, "silent") == NULL);
    CHECK(!shm_exists(seg));

    /* the timed-out writer learns nothing, but can still leave cleanly */
    chan_send(c.down[1], 'q');
    CHECK_EQ_INT(reap(silent), 0);
    kill_reap(beating);
    unmap_index(h);
    strobe_shm_reader_close(r); /* sweeps the dead one: index unused */
    CHECK_EQ_INT(leftovers(name), 0);
}

/* Scenario 2 again: a killed application is removed at the next scan,
 * without waiting for any timeout. */
STROBE_TEST(scenario2_dead_pid)
{
    const char *name = index_name("scenario2_dead_pid");
    strobe_shm_reader *r;
    int changed;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    struct chan c1, c2;
    pid_t a1 = spawn_app(name, "crasher", 1, &c1);
    pid_t a2 = spawn_app(name, "survivor", 2, &c2);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 2);
    struct strobe__shm_hdr *h = map_index(name);
    char seg[STROBE__SHM_SEGMENT_SIZE];
    memcpy(seg, find_entry(h, "crasher")->segment, sizeof seg);

    kill_reap(a1);
    CHECK(shm_exists(seg));
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    CHECK_STR_EQ(strobe_set_instance(strobe_shm_reader_set(r, 0)), "survivor");
    CHECK_EQ_U64(snap_u64(strobe_shm_reader_set(r, 0), "calls"), 2);
    CHECK(!shm_exists(seg));

    chan_send(c2.down[1], 'q');
    CHECK_EQ_INT(reap(a2), 0);
    unmap_index(h);
    strobe_shm_reader_close(r);
    CHECK_EQ_INT(leftovers(name), 0);
}

/* Scenario 3: the sampler dies; the last application out finds no live
 * reader and removes the index. */
STROBE_TEST(scenario3_reader_killed)
{
    const char *name = index_name("scenario3_reader_killed");
    strobe_schema *s = make_schema(0);
    strobe_shm_pub *pub;
    strobe_set *set;
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "app", &pub, &set), 0);
    pid_t reader = spawn_reader(name, 1);
    struct strobe__shm_hdr *h = map_index(name);
    CHECK_EQ_INT(h->readers[0].pid, reader);
    CHECK_EQ_INT(popcount32(find_entry(h, "app")->reader_mask), 1);
    kill_reap(reader);
    CHECK_EQ_INT(leftovers(name), 2); /* index and segment */
    CHECK_EQ_INT(strobe_shm_unpublish(pub), 0);
    unmap_index(h);
    strobe_schema_free(s);
    CHECK_EQ_INT(leftovers(name), 0);
}

/* Scenario 4: sampler and applications all killed; the next process to
 * open the index reinitialises it and unlinks the stale segments. Once
 * with a reader as the next opener, once with a writer. */
STROBE_TEST(scenario4_all_killed)
{
    const char *name = index_name("scenario4_all_killed");
    for (int round = 0; round < 2; round++) {
        struct chan c1, c2;
        pid_t reader = spawn_reader(name, 0);
        pid_t a1 = spawn_app(name, "one", 1, &c1);
        pid_t a2 = spawn_app(name, "two", 2, &c2);
        kill_reap(a1);
        kill_reap(a2);
        kill_reap(reader);
        CHECK_EQ_INT(leftovers(name), 3);
        struct strobe__shm_hdr *h = map_index(name);
        CHECK_EQ_INT(h->size, 2);
        char seg1[STROBE__SHM_SEGMENT_SIZE], seg2[STROBE__SHM_SEGMENT_SIZE];
        memcpy(seg1, find_entry(h, "one")->segment, sizeof seg1);
        memcpy(seg2, find_entry(h, "two")->segment, sizeof seg2);
        uint64_t g = h->generation;
        if (round == 0) {
            strobe_shm_reader *r;
            CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
            CHECK(!shm_exists(seg1) && !shm_exists(seg2));
            CHECK_EQ_INT(h->size, 0);
            CHECK(h->generation > g);
            CHECK_EQ_INT(h->readers[0].pid, getpid()); /* the dead reader's slot was freed */
            CHECK_EQ_INT(h->readers[1].pid, 0);
            CHECK_EQ_INT(strobe_shm_reader_scan(r, NULL), 0);
            CHECK_EQ_INT(strobe_shm_reader_count(r), 0);
            strobe_shm_reader_close(r);
        } else {
            strobe_schema *s = make_schema(0);
            strobe_shm_pub *pub;
            strobe_set *set;
            CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "one", &pub, &set), 0);
            CHECK(!shm_exists(seg1) && !shm_exists(seg2));
            CHECK_EQ_INT(h->size, 1);
            CHECK_EQ_INT(find_entry(h, "one")->writers, 1);
            CHECK_EQ_U64(strobe_set_get_u64(set, 0, 0), 0); /* a fresh set, not the dead one's */
            CHECK_EQ_INT(h->readers[0].pid, 0);
            CHECK_EQ_INT(strobe_shm_unpublish(pub), 0);
            strobe_schema_free(s);
        }
        unmap_index(h);
        CHECK_EQ_INT(leftovers(name), 0);
    }
}

/* A process killed while it holds the index lock wedges nobody. */
STROBE_TEST(crash_inside_lock)
{
    const char *name = index_name("crash_inside_lock");
    strobe_shm_reader *r;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    struct chan c;
    chan_init(&c);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct strobe__shm_hdr *h = map_index(name);
        CHILD_CHECK(pthread_mutex_lock(&h->lock.m) == 0);
        /* die half-way through an update: an entry named but never
         * finished, as a crash inside pub_create would leave it */
        char obj[STROBE__SHM_SEGMENT_SIZE];
        CHILD_CHECK((size_t)snprintf(obj, sizeof obj, "/%s.5.%llu", name,
                                     (unsigned long long)h->generation + 1) < sizeof obj);
        int fd = shm_open(obj, O_RDWR | O_CREAT | O_EXCL, 0600);
        CHILD_CHECK(fd >= 0);
        entries(h)[5].entry_gn = h->generation + 1;
        memcpy(entries(h)[5].segment, obj, sizeof obj);
        chan_send(c.up[1], 'r');
        for (;;)
            pause();
    }
    CHECK_EQ_INT(chan_recv(c.up[0]), 'r');
    CHECK_EQ_INT(leftovers(name), 2);
    kill_reap(pid);
    strobe_schema *s = make_schema(0);
    strobe_shm_pub *pub;
    strobe_set *set;
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "after", &pub, &set), 0);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, NULL), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    CHECK_EQ_INT(leftovers(name), 2); /* the half-made segment is gone */
    CHECK_EQ_INT(strobe_shm_unpublish(pub), 0);
    strobe_shm_reader_close(r);
    strobe_schema_free(s);
    CHECK_EQ_INT(leftovers(name), 0);
}

STROBE_TEST(permissions)
{
    const char *name = index_name("permissions");
    char obj[256], path[300];
    snprintf(obj, sizeof obj, "/%s", name);
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    strobe_schema *s = make_schema(0);
    strobe_shm_pub *pub;
    strobe_set *set;
    struct stat st;

    /* the index and the segment are 0600 and ours, even with umask 0 */
    mode_t old = umask(0);
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "p", &pub, &set), 0);
    CHECK_EQ_INT(stat(path, &st), 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0600);
    CHECK_EQ_INT(st.st_uid, geteuid());
    struct strobe__shm_hdr *h = map_index(name);
    char seg[300];
    snprintf(seg, sizeof seg, "/dev/shm%s", find_entry(h, "p")->segment);
    CHECK_EQ_INT(stat(seg, &st), 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0600);

    /* a segment others may read is refused by the reader and removed */
    CHECK_EQ_INT(chmod(seg, 0644), 0);
    strobe_shm_reader *r;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, NULL), STROBE_ERR_FORMAT);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 0);
    CHECK(access(seg, F_OK) != 0);
    CHECK_EQ_INT(strobe_shm_unpublish(pub), 0);
    strobe_shm_reader_close(r);
    unmap_index(h);
    CHECK_EQ_INT(leftovers(name), 0);

    /* an index others may read is refused */
    int fd = shm_open(obj, O_RDWR | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    CHECK_EQ_INT(ftruncate(fd, STROBE__SHM_INDEX_BYTES(STROBE__SHM_CAPACITY_DEFAULT)), 0);
    close(fd);
    umask(old);
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "p", &pub, &set), -EACCES);
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), -EACCES);
    CHECK_EQ_INT(shm_unlink(obj), 0);

    /* $STROBE_SHM_INDEX names the default index */
    CHECK_EQ_INT(setenv(STROBE_SHM_INDEX_ENV, name, 1), 0);
    CHECK_EQ_INT(strobe_shm_publish(NULL, s, "node", "p", &pub, &set), 0);
    CHECK_EQ_INT(stat(path, &st), 0);
    CHECK_EQ_INT(strobe_shm_unpublish(pub), 0);
    strobe_schema_free(s);
    CHECK_EQ_INT(leftovers(name), 0);
}

/* Garbage in the index or in a segment: the reader skips it with an
 * error, removes it, keeps the good sets and does not crash. */
STROBE_TEST(corrupt_index_rejected)
{
    const char *name = index_name("corrupt_index_rejected");
    strobe_schema *s = make_schema(0);
    enum { N = 7 };
    strobe_shm_pub *pub[N];
    strobe_set *set[N];
    char label[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(label[i], sizeof label[i], "c%d", i);
        CHECK_EQ_INT(strobe_shm_publish(name, s, "node", label[i], &pub[i], &set[i]), 0);
    }
    strobe_shm_reader *r;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    struct strobe__shm_hdr *h = map_index(name);
    struct strobe__shm_entry *e[N];
    for (int i = 0; i < N; i++)
        CHECK((e[i] = find_entry(h, label[i])) != NULL);
    memset(e[0]->label, 'A', sizeof e[0]->label);             /* no NUL */
    e[1]->meta_size = 0xfffffff8u;                            /* larger than any set */
    e[2]->writer_pids[1] = -1;                                /* must never reach kill() */
    memset(e[3]->segment + 1, 'B', sizeof e[3]->segment - 1); /* no NUL */
    e[4]->state = 0xa5a5a5a5u;
    /* c5: the entry is fine, its segment is not */
    char seg[STROBE__SHM_SEGMENT_SIZE];
    memcpy(seg, e[5]->segment, sizeof seg);
    int fd = shm_open(seg, O_RDWR, 0);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, "garbage!", 8), 8);
    close(fd);
    /* c6 stays good */
    int changed;
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), STROBE_ERR_FORMAT);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    CHECK_STR_EQ(strobe_set_instance(strobe_shm_reader_set(r, 0)), "c6");
    CHECK_EQ_INT(h->size, 1);
    /* reported once: the bad entries are gone */
    CHECK_EQ_INT(strobe_shm_reader_scan(r, &changed), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), 1);
    /* their writers leave as usual; those whose segment name was garbage
     * remove their segment themselves */
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(strobe_shm_unpublish(pub[i]), 0);
    strobe_shm_reader_close(r);
    unmap_index(h);
    CHECK_EQ_INT(leftovers(name), 0);

    /* a header that is not an index */
    char obj[256];
    snprintf(obj, sizeof obj, "/%s", name);
    fd = shm_open(obj, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0);
    size_t bytes = STROBE__SHM_INDEX_BYTES(STROBE__SHM_CAPACITY_DEFAULT);
    CHECK_EQ_INT(ftruncate(fd, (off_t)bytes), 0);
    h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(h != MAP_FAILED);
    close(fd);
    memset(h, 0xa5, bytes);
    h->state = STROBE__SHM_READY;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), STROBE_ERR_FORMAT);
    memcpy(h->magic, STROBE__SHM_MAGIC, 8);
    h->version = 99;
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "x", &pub[0], &set[0]), STROBE_ERR_VERSION);
    /* a capacity that does not match the object's size */
    h->version = STROBE__SHM_VERSION;
    h->hdr_size = sizeof *h;
    h->entry_size = sizeof(struct strobe__shm_entry);
    h->reader_slots = STROBE__SHM_READERS;
    h->capacity = STROBE__SHM_CAPACITY_DEFAULT + 1;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), STROBE_ERR_FORMAT);
    h->capacity = STROBE__SHM_CAPACITY_DEFAULT;
    munmap(h, bytes);
    CHECK_EQ_INT(shm_unlink(obj), 0);
    strobe_schema_free(s);
    CHECK_EQ_INT(leftovers(name), 0);
}

/* An index takes STROBE_SHM_CAPACITY entries (its creator's setting; the
 * others read it from the header): here 300, past the 256 of old. */
STROBE_TEST(index_full)
{
    enum { CAP = 300 };
    const char *name = index_name("index_full");
    strobe_schema *s = make_schema(0);
    static strobe_shm_pub *pub[CAP];
    strobe_set *set;
    char label[16];
    CHECK_EQ_INT(setenv("STROBE_SHM_CAPACITY", "300", 1), 0);
    for (int i = 0; i < CAP; i++) {
        snprintf(label, sizeof label, "s%d", i);
        CHECK_EQ_INT(strobe_shm_publish(name, s, "node", label, &pub[i], &set), 0);
    }
    /* the setting counts only when the index is created */
    CHECK_EQ_INT(setenv("STROBE_SHM_CAPACITY", "5000", 1), 0);
    strobe_shm_pub *extra;
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "one-too-many", &extra, &set), STROBE_ERR_LIMIT);
    /* joining an existing label still works: it takes no entry */
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "s0", &extra, &set), 0);
    struct strobe__shm_hdr *h = map_index(name);
    CHECK_EQ_INT(h->capacity, CAP);
    CHECK_EQ_INT(h->size, CAP);
    strobe_shm_reader *r;
    CHECK_EQ_INT(strobe_shm_reader_open(name, 0, &r), 0);
    CHECK_EQ_INT(strobe_shm_reader_scan(r, NULL), 0);
    CHECK_EQ_INT(strobe_shm_reader_count(r), CAP);
    strobe_shm_reader_close(r);
    CHECK_EQ_INT(strobe_shm_unpublish(extra), 0);
    for (int i = 0; i < CAP; i++)
        CHECK_EQ_INT(strobe_shm_unpublish(pub[i]), 0);
    unmap_index(h);
    CHECK_EQ_INT(leftovers(name), 0);
    /* a bad setting: the index is not created */
    CHECK_EQ_INT(setenv("STROBE_SHM_CAPACITY", "0", 1), 0);
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "s0", &extra, &set), -EINVAL);
    CHECK_EQ_INT(setenv("STROBE_SHM_CAPACITY", "12x", 1), 0);
    CHECK_EQ_INT(strobe_shm_publish(name, s, "node", "s0", &extra, &set), -EINVAL);
    CHECK_EQ_INT(unsetenv("STROBE_SHM_CAPACITY"), 0);
    CHECK_EQ_INT(leftovers(name), 0);
    strobe_schema_free(s);
}

STROBE_TEST_MAIN(STROBE_CASE(publish_read), STROBE_CASE(generation_rescan), STROBE_CASE(two_writers_join),
                 STROBE_CASE(different_schema_eexist), STROBE_CASE(scenario1_app_exits),
                 STROBE_CASE(scenario2_timeout), STROBE_CASE(scenario2_dead_pid),
                 STROBE_CASE(scenario3_reader_killed), STROBE_CASE(scenario4_all_killed),
                 STROBE_CASE(crash_inside_lock), STROBE_CASE(permissions),
                 STROBE_CASE(corrupt_index_rejected), STROBE_CASE(index_full))
