/* SPDX-License-Identifier: MIT */
/*
 * The `shm` sampler: sets an application publishes through the
 * shared-memory index appear in the daemon as copies with the same values,
 * follow meta changes and disappear when the application leaves or dies.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/shm.h"
#include "strobed/config.h"
#include "strobed/daemon.h"
#include "strobed/inproc.h"
#include "test.h"

static struct strobe__daemon *daemon_for(const char *index)
{
    char text[512];
    snprintf(text, sizeof text, "daemon:\n  producer: node\nsamplers:\n  - plugin: shm\n    index: %s\n"
             "    timeout: 0\n", index);
    return inproc_daemon(text, "t.yaml");
}

static long long copy_value(struct strobe__daemon *d, const char *set, uint32_t metric)
{
    pthread_mutex_lock(&d->lock);
    struct strobe__set_entry *e = strobe__daemon_set_find(d, set);
    long long v = e ? (long long)strobe_set_get_u64(e->set, metric, 0) : -1;
    pthread_mutex_unlock(&d->lock);
    return v;
}

static strobe_schema *app_schema(void)
{
    strobe_schema *s;
    CHECK_EQ_INT(strobe_schema_new("app", &s), 0);
    CHECK_EQ_INT(strobe_schema_add(s, "rank", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META), 0);
    CHECK_EQ_INT(strobe_schema_add(s, "iterations", NULL, STROBE_MT_U64, 1, 0), 1);
    return s;
}

STROBE_TEST(app_sets_come_and_go)
{
    char index[64];
    snprintf(index, sizeof index, "strobe-test-shms-%d", (int)getpid());
    struct strobe__daemon *d = daemon_for(index);
    strobe_schema *sc = app_schema();
    strobe_shm_pub *pub;
    strobe_set *set;
    CHECK_EQ_INT(strobe_shm_publish(index, sc, "node", "node/app/1", &pub, &set), 0);
    strobe_set_u64(set, 0, 0, 3);
    strobe_set_begin(set);
    strobe_set_u64(set, 1, 0, 41);
    strobe_set_end(set);
    strobe__daemon_sample_all(d, 0);
    CHECK_EQ_INT(copy_value(d, "node/app/1", 1), 41);
    CHECK_EQ_INT(copy_value(d, "node/app/1", 0), 3);
    /* meta changes reach the copy */
    strobe_set_u64(set, 0, 0, 4);
    strobe_set_begin(set);
    strobe_set_u64(set, 1, 0, 42);
    strobe_set_end(set);
    strobe__daemon_sample_all(d, 0);
    CHECK_EQ_INT(copy_value(d, "node/app/1", 0), 4);
    CHECK_EQ_INT(copy_value(d, "node/app/1", 1), 42);
    CHECK_EQ_INT(strobe_shm_unpublish(pub), 0);
    strobe__daemon_sample_all(d, 0);
    CHECK_EQ_INT(copy_value(d, "node/app/1", 1), -1);
    /* an application that dies: its set goes at the next sample */
    pid_t child = fork();
    if (child == 0) {
        strobe_shm_pub *p2;
        strobe_set *s2;
        if (strobe_shm_publish(index, sc, "node", "node/app/2", &p2, &s2) < 0)
            _exit(1);
        strobe_set_begin(s2);
        strobe_set_u64(s2, 1, 0, 7);
        strobe_set_end(s2);
        pause();
        _exit(0);
    }
    for (int i = 0; i < 200 && copy_value(d, "node/app/2", 1) != 7; i++) {
        usleep(10000);
        strobe__daemon_sample_all(d, 0);
    }
    CHECK_EQ_INT(copy_value(d, "node/app/2", 1), 7);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    strobe__daemon_sample_all(d, 0);
    CHECK_EQ_INT(copy_value(d, "node/app/2", 1), -1);
    strobe_schema_free(sc);
    strobe__daemon_free(d);
    char *out;
    strobe_test_sh(&out, "ls /dev/shm | grep -c '%s' || true", index);
    CHECK_STR_EQ(out, "0\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(app_sets_come_and_go))
