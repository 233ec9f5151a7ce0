/* SPDX-License-Identifier: MIT */
/*
 * The stores' outbox (src/plugins/outbox.c) on its own: a host whose log
 * lines the test keeps, and a send callback that the test switches between
 * delivering, failing (an outage) and refusing. Exact order, counts and
 * log lines; the number of attempts during an outage shows the back-off.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/size.h"
#include "plugins/outbox.h"
#include "test.h"

/* ---- a host: configuration from a key table, log lines kept ------------------- */

static const char *const *cfg_keys; /* key, value, key, value, ..., NULL */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[16384];
static int nlines;

static const char *cfg_str(const struct strobe_plugin_host *h, const char *key)
{
    (void)h;
    for (size_t i = 0; cfg_keys && cfg_keys[i]; i += 2)
        if (!strcmp(cfg_keys[i], key))
            return cfg_keys[i + 1];
    return NULL;
}

static int cfg_duration(const struct strobe_plugin_host *h, const char *key, uint64_t def, uint64_t *out)
{
    const char *v = cfg_str(h, key);
    unsigned long long ns = def;
    if (v && strobe__parse_duration(v, &ns) < 0)
        return STROBE_ERR_SYNTAX;
    *out = ns;
    return 0;
}

static int cfg_error(const struct strobe_plugin_host *h, const char *key, const char *fmt, ...)
{
    (void)h;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(logbuf);
    n += (size_t)snprintf(logbuf + n, sizeof logbuf - n, "config %s: ", key ? key : "-");
    vsnprintf(logbuf + n, sizeof logbuf - n, fmt, ap);
    strncat(logbuf, "\n", sizeof logbuf - strlen(logbuf) - 1);
    nlines++;
    pthread_mutex_unlock(&log_lock);
    va_end(ap);
    return STROBE_ERR_SYNTAX;
}

static void host_log(const struct strobe_plugin_host *h, enum strobe_log_level level, const char *fmt, ...)
{
    (void)h;
    (void)level;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(logbuf);
    vsnprintf(logbuf + n, sizeof logbuf - n, fmt, ap);
    strncat(logbuf, "\n", sizeof logbuf - strlen(logbuf) - 1);
    nlines++;
    pthread_mutex_unlock(&log_lock);
    va_end(ap);
}

static const struct strobe_plugin_host host = {
    .name = "rw1",
    .producer = "node1",
    .cfg_str = cfg_str,
    .cfg_duration = cfg_duration,
    .cfg_error = cfg_error,
    .log = host_log,
};

static int log_lines(void)
{
    pthread_mutex_lock(&log_lock);
    int n = nlines;
    pthread_mutex_unlock(&log_lock);
    return n;
}

/* ---- a receiver the test switches -------------------------------------------- */

enum mode { UP, DOWN, REFUSE_BAD };
static _Atomic int mode;
static atomic_uint attempts;
static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static char got[64 * 1024]; /* delivered batches, one per line */

static enum strobe__send_result send_cb(void *ctx, const void *batch, size_t len, char *why, size_t whylen)
{
    (void)ctx;
    atomic_fetch_add(&attempts, 1);
    if (atomic_load(&mode) == DOWN) {
        snprintf(why, whylen, "connection refused");
        return STROBE__SEND_RETRY;
    }
    if (atomic_load(&mode) == REFUSE_BAD && len >= 3 && !memcmp(batch, "bad", 3)) {
        snprintf(why, whylen, "HTTP 400: out of bounds");
        return STROBE__SEND_REFUSED;
    }
    pthread_mutex_lock(&got_lock);
    strncat(got, batch, len);
    strcat(got, "\n");
    pthread_mutex_unlock(&got_lock);
    return STROBE__SEND_OK;
}

static char dir[256];

static struct strobe__outbox *open_box(uint64_t max_bytes, uint64_t retry_min_ns, uint64_t retry_max_ns)
{
    struct strobe__outbox_config c = {.max_bytes = max_bytes,
                                      .retry_min_ns = retry_min_ns,
                                      .retry_max_ns = retry_max_ns,
                                      .target = "http://receiver/api/v1/write"};
    snprintf(c.dir, sizeof c.dir, "%s/queue", dir);
    struct strobe__outbox *o;
    CHECK_EQ_INT(strobe__outbox_open(&host, &c, send_cb, NULL, &o), 0);
    return o;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/strobe-outbox-XXXXXX");
    CHECK(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void put_str(struct strobe__outbox *o, const char *fmt, int i)
{
    char b[64];
    int n = snprintf(b, sizeof b, fmt, i);
    CHECK_EQ_INT(strobe__outbox_put(o, b, (size_t)n), 0);
}

/* "b<from>\nb<from+1>\n...b<to-1>\n" */
static void check_got(int from, int to)
{
    char want[64 * 1024] = "";
    for (int i = from; i < to; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "b%03d\n", i);
    pthread_mutex_lock(&got_lock);
    CHECK_STR_EQ(got, want);
    pthread_mutex_unlock(&got_lock);
}

static size_t files_in(const char *sub, const char *ext)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    CHECK(d);
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += strstr(de->d_name, ext) != NULL;
    closedir(d);
    return n;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Until the sender has tried once (at most 1 s). */
static void wait_first_attempt(void)
{
    for (int i = 0; i < 200 && atomic_load(&attempts) == 0; i++)
        sleep_ms(5);
}

/* ---- cases ------------------------------------------------------------------------ */

STROBE_TEST(order_kept)
{
    setup();
    struct strobe__outbox *o = open_box(1 << 20, 100000000, 1000000000);
    for (int i = 0; i < 300; i++)
        put_str(o, "b%03d", i);
    CHECK_EQ_INT(strobe__outbox_drain(o, 10000000000u), 0);
    check_got(0, 300);
    struct strobe__outbox_stats st;
    strobe__outbox_stats(o, &st);
    CHECK_EQ_U64(st.sent_batches, 300);
    CHECK_EQ_U64(st.queued_batches, 0);
    CHECK_EQ_U64(st.queued_bytes, 0);
    CHECK_EQ_U64(st.retried + st.dropped_batches + st.refused_batches, 0);
    CHECK_EQ_INT(files_in("queue", ".batch"), 0);
    strobe__outbox_close(o);
    CHECK_EQ_INT(log_lines(), 0);
    teardown();
}

/* A 1 s outage: nothing lost, order kept, two log lines, and with
 * retry_min 100ms the attempts are those at 0, 0.1, 0.3, 0.7 s (doubling),
 * not a busy loop. */
STROBE_TEST(outage_nothing_lost)
{
    setup();
    atomic_store(&mode, DOWN);
    struct strobe__outbox *o = open_box(1 << 20, 100000000, 30000000000u);
    for (int i = 0; i < 50; i++)
        put_str(o, "b%03d", i);
    sleep_ms(1000);
    unsigned n = atomic_load(&attempts);
    if (n < 3 || n > 6)
        STROBE_FAIL("%u attempts during a 1 s outage (expected 4: back-off 0.1, 0.2, 0.4 s)", n);
    CHECK_EQ_INT(strobe__outbox_drain(o, 100000000), -ETIMEDOUT);
    struct strobe__outbox_stats st;
    strobe__outbox_stats(o, &st);
    CHECK_EQ_U64(st.queued_batches, 50);
    CHECK_EQ_U64(st.queued_bytes, 200);
    CHECK_EQ_U64(st.retried, n);
    CHECK_EQ_INT(files_in("queue", ".batch"), 50);
    atomic_store(&mode, UP);
    CHECK_EQ_INT(strobe__outbox_drain(o, 10000000000u), 0);
    check_got(0, 50);
    strobe__outbox_stats(o, &st);
    CHECK_EQ_U64(st.sent_batches, 50);
    CHECK_EQ_U64(st.dropped_batches, 0);
    strobe__outbox_close(o);
    CHECK_EQ_INT(log_lines(), 2);
    CHECK(!strncmp(
        logbuf,
        "http://receiver/api/v1/write unreachable (connection refused); queueing, retrying with "
        "back-off\nhttp://receiver/api/v1/write delivered again after ",
        strlen("http://receiver/api/v1/write unreachable (connection refused); queueing, retrying with "
               "back-off\nhttp://receiver/api/v1/write delivered again after ")));
    CHECK_CONTAINS(logbuf, " s; 50 batch(es) (200 B) were queued, 0 dropped\n");
    teardown();
}

/* The back-off stops doubling at retry_max: 50ms, then 100ms for ever. */
STROBE_TEST(backoff_capped)
{
    setup();
    atomic_store(&mode, DOWN);
    struct strobe__outbox *o = open_box(1 << 20, 50000000, 100000000);
    put_str(o, "b%03d", 0);
    sleep_ms(1000);
    unsigned n = atomic_load(&attempts);
    /* at 0, 0.05, 0.15, 0.25, ... 0.95 s: 11 */
    if (n < 8 || n > 12)
        STROBE_FAIL("%u attempts in 1 s with retry_max 100ms (expected 11)", n);
    strobe__outbox_close(o);
    CHECK_EQ_INT(log_lines(), 1);
    teardown();
}

/* A queue bound of 10 batches of 4 bytes: the first batch fails, 24 more
 * come during the back-off, the 15 oldest are dropped (counted, logged once). */
STROBE_TEST(bound_drops_oldest)
{
    setup();
    atomic_store(&mode, DOWN);
    struct strobe__outbox *o = open_box(40, 500000000, 1000000000);
    put_str(o, "b%03d", 0);
    wait_first_attempt();
    CHECK_EQ_INT(atomic_load(&attempts), 1);
    for (int i = 1; i < 25; i++)
        put_str(o, "b%03d", i);
    struct strobe__outbox_stats st;
    strobe__outbox_stats(o, &st);
    CHECK_EQ_U64(st.queued_batches, 10);
    CHECK_EQ_U64(st.queued_bytes, 40);
    CHECK_EQ_U64(st.dropped_batches, 15);
    CHECK_EQ_INT(files_in("queue", ".batch"), 10);
    /* larger than the whole bound: refused at once */
    char big[41] = {0};
    CHECK_EQ_INT(strobe__outbox_put(o, big, sizeof big), -EFBIG);
    atomic_store(&mode, UP);
    CHECK_EQ_INT(strobe__outbox_drain(o, 10000000000u), 0);
    check_got(15, 25);
    strobe__outbox_stats(o, &st);
    CHECK_EQ_U64(st.dropped_batches, 16);
    strobe__outbox_close(o);
    CHECK_EQ_INT(log_lines(), 5);
    CHECK_CONTAINS(logbuf, "unreachable (connection refused); queueing, retrying with back-off\n"
                           "http://receiver/api/v1/write: queue full (40 B, queue_size): dropping the oldest "
                           "batches (counted) until it drains\n"
                           "http://receiver/api/v1/write: a batch of 41 B is larger than queue_size (40 B): "
                           "dropped\nhttp://receiver/api/v1/write delivered again after ");
    CHECK_CONTAINS(logbuf,
                   " s; 10 batch(es) (40 B) were queued, 16 dropped\n"
                   "http://receiver/api/v1/write: queue drained; 16 batch(es) were dropped at its bound\n");
    teardown();
}

/* Batches not delivered when the outbox closes are sent, in order, by the
 * next one opened on the same directory (a half-written .tmp is removed). */
STROBE_TEST(persists_across_restart)
{
    setup();
    atomic_store(&mode, DOWN);
    struct strobe__outbox *o = open_box(1 << 20, 100000000, 1000000000);
    for (int i = 0; i < 20; i++)
        put_str(o, "b%03d", i);
    wait_first_attempt();
    strobe__outbox_close(o);
    CHECK_EQ_INT(files_in("queue", ".batch"), 20);
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/queue/00000000000000ff.tmp", dir);
    FILE *f = fopen(tmp, "w");
    CHECK(f && fputs("torn", f) >= 0 && fclose(f) == 0);
    atomic_store(&mode, UP);
    o = open_box(1 << 20, 100000000, 1000000000);
    put_str(o, "b%03d", 20);
    CHECK_EQ_INT(strobe__outbox_drain(o, 10000000000u), 0);
    check_got(0, 21);
    CHECK_EQ_INT(files_in("queue", "."), 2); /* . and .. */
    strobe__outbox_close(o);
    CHECK_CONTAINS(logbuf, "\nhttp://receiver/api/v1/write: 20 batch(es) (80 B) queued in ");
    CHECK_CONTAINS(logbuf, "/queue by an earlier run are sent first\n");
    CHECK_EQ_INT(log_lines(), 2);
    teardown();
}

/* Refused batches are dropped and counted; one line when refusals begin,
 * one when a batch is accepted again. */
STROBE_TEST(refused_dropped_once)
{
    setup();
    atomic_store(&mode, REFUSE_BAD);
    struct strobe__outbox *o = open_box(1 << 20, 100000000, 1000000000);
    put_str(o, "b%03d", 0);
    put_str(o, "bad%d", 1);
    put_str(o, "bad%d", 2);
    put_str(o, "b%03d", 1);
    CHECK_EQ_INT(strobe__outbox_drain(o, 10000000000u), 0);
    check_got(0, 2);
    struct strobe__outbox_stats st;
    strobe__outbox_stats(o, &st);
    CHECK_EQ_U64(st.refused_batches, 2);
    CHECK_EQ_U64(st.sent_batches, 2);
    CHECK_EQ_U64(st.retried, 0);
    strobe__outbox_close(o);
    CHECK_STR_EQ(logbuf, "http://receiver/api/v1/write refused a batch (HTTP 400: out of bounds); refused "
                         "batches are dropped (counted)\n"
                         "http://receiver/api/v1/write accepts batches again; 2 batch(es) were refused\n");
    teardown();
}

/* The common keys: defaults, values, and refusals with the key named. */
STROBE_TEST(config_keys)
{
    struct strobe__outbox_config c;
    static const char *const none[] = {NULL};
    cfg_keys = none;
    unsetenv("STATE_DIRECTORY");
    CHECK_EQ_INT(strobe__outbox_config_read(&host, &c), 0);
    CHECK_STR_EQ(c.dir, "/var/lib/strobe/queue/rw1");
    CHECK_EQ_U64(c.max_bytes, 64u << 20);
    CHECK_EQ_U64(c.retry_min_ns, 100000000u);
    CHECK_EQ_U64(c.retry_max_ns, 30000000000u);
    setenv("STATE_DIRECTORY", "/srv/state", 1);
    CHECK_EQ_INT(strobe__outbox_config_read(&host, &c), 0);
    CHECK_STR_EQ(c.dir, "/srv/state/queue/rw1");
    static const char *const set[] = {"queue_dir", "/q",        "queue_size", "1G", "retry_min",
                                      "1s",        "retry_max", "2m",         NULL};
    cfg_keys = set;
    CHECK_EQ_INT(strobe__outbox_config_read(&host, &c), 0);
    CHECK_STR_EQ(c.dir, "/q");
    CHECK_EQ_U64(c.max_bytes, 1u << 30);
    CHECK_EQ_U64(c.retry_min_ns, 1000000000u);
    CHECK_EQ_U64(c.retry_max_ns, 120000000000u);
    static const char *const bad_size[] = {"queue_size", "lots", NULL};
    cfg_keys = bad_size;
    CHECK_EQ_INT(strobe__outbox_config_read(&host, &c), STROBE_ERR_SYNTAX);
    static const char *const bad_order[] = {"retry_min", "1m", "retry_max", "1s", NULL};
    cfg_keys = bad_order;
    CHECK_EQ_INT(strobe__outbox_config_read(&host, &c), STROBE_ERR_SYNTAX);
    static const char *const zero[] = {"retry_min", "0s", NULL};
    cfg_keys = zero;
    CHECK_EQ_INT(strobe__outbox_config_read(&host, &c), STROBE_ERR_SYNTAX);
    CHECK_STR_EQ(logbuf, "config queue_size: 'lots' is not a size above 0 (e.g. 64M, 1G)\n"
                         "config retry_max: must be at least retry_min\n"
                         "config retry_min: must be more than 0 (the first back-off)\n");
}

STROBE_TEST_MAIN(STROBE_CASE(order_kept), STROBE_CASE(outage_nothing_lost), STROBE_CASE(backoff_capped),
                 STROBE_CASE(bound_drops_oldest), STROBE_CASE(persists_across_restart),
                 STROBE_CASE(refused_dropped_once), STROBE_CASE(config_keys))
