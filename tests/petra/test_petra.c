/* SPDX-License-Identifier: MIT */
/* Unit tests of libstrobe-petra: each structure single- and multithreaded
 * against an exact model, transactions, checkpoints, reopen, the flush and
 * fence counts of Algorithm 5.4, and corrupt or truncated files. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strobe/petra.h"
#include "test.h"

#define WHY 256

static char path_buf[512];

static const char *fresh_path(const char *name)
{
    snprintf(path_buf, sizeof path_buf, "%s/%s.%d.heap", STROBE_TEST_WORK_DIR, name, (int)getpid());
    unlink(path_buf);
    return path_buf;
}

static strobe_petra *create(const char *path, uint64_t log_bytes)
{
    struct strobe_petra_options o = { .size = 64ull << 20, .max_threads = 8, .log_bytes = log_bytes };
    strobe_petra *h = NULL;
    char why[WHY] = "";
    int rc = strobe_petra_create(path, &o, &h, why, sizeof why);
    if (rc)
        fprintf(stderr, "create: %s (%s)\n", strobe_strerror(rc), why);
    CHECK_EQ_INT(rc, 0);
    return h;
}

static strobe_petra *reopen(const char *path)
{
    strobe_petra *h = NULL;
    char why[WHY] = "";
    int rc = strobe_petra_open(path, NULL, &h, why, sizeof why);
    if (rc)
        fprintf(stderr, "open: %s (%s)\n", strobe_strerror(rc), why);
    CHECK_EQ_INT(rc, 0);
    return h;
}

static void verify(strobe_petra *h)
{
    char why[WHY] = "";
    int rc = strobe_petra_verify(h, why, sizeof why);
    if (rc)
        fprintf(stderr, "verify: %s\n", why);
    CHECK_EQ_INT(rc, 0);
}

static int op1(strobe_petra_thread *t, int s, uint8_t type, uint64_t key, uint64_t value)
{
    struct strobe_petra_op op = { type, (uint8_t)s, key, value };
    return strobe_petra_execute(t, &op, 1);
}

static int count_cb(void *arg, uint64_t key, uint64_t value)
{
    (void)key;
    (void)value;
    ++*(int *)arg;
    return 0;
}

static int count(strobe_petra_thread *t, int s)
{
    int n = 0;
    CHECK_EQ_INT(strobe_petra_foreach(t, s, count_cb, &n), 0);
    return n;
}

STROBE_TEST(set_semantics)
{
    const char *path = fresh_path("set");
    strobe_petra *h = create(path, 0);
    int s = strobe_petra_structure_create(h, "set", STROBE_PETRA_LIST, 0);
    CHECK_EQ_INT(s, 0);
    CHECK_EQ_INT(strobe_petra_structure_create(h, "set", STROBE_PETRA_LIST, 0), -EEXIST);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    for (uint64_t k = 10; k >= 1; k--)
        CHECK_EQ_INT(op1(t, s, STROBE_PETRA_INSERT, k, k * 100), 0);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_INSERT, 5, 1), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_DELETE, 11, 0), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_FIND, 11, 0), STROBE_ERR_ABORTED);
    struct strobe_petra_op f = { STROBE_PETRA_FIND, (uint8_t)s, 7, 0 };
    CHECK_EQ_INT(strobe_petra_execute(t, &f, 1), 0);
    CHECK_EQ_U64(f.value, 700);
    /* all or nothing: the third operation fails, the first two vanish */
    struct strobe_petra_op tx[3] = { { STROBE_PETRA_INSERT, (uint8_t)s, 20, 1 },
                                     { STROBE_PETRA_DELETE, (uint8_t)s, 3, 0 },
                                     { STROBE_PETRA_INSERT, (uint8_t)s, 4, 0 } };
    CHECK_EQ_INT(strobe_petra_execute(t, tx, 3), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(strobe_petra_get(t, s, 20, NULL), -ENOENT);
    CHECK_EQ_INT(strobe_petra_get(t, s, 3, NULL), 0);
    /* an operation sees the earlier ones of its own transaction */
    struct strobe_petra_op tx2[3] = { { STROBE_PETRA_DELETE, (uint8_t)s, 3, 0 },
                                      { STROBE_PETRA_INSERT, (uint8_t)s, 3, 33 },
                                      { STROBE_PETRA_FIND, (uint8_t)s, 3, 0 } };
    CHECK_EQ_INT(strobe_petra_execute(t, tx2, 3), 0);
    CHECK_EQ_U64(tx2[2].value, 33);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_DELETE, 10, 0), 0);
    CHECK_EQ_INT(count(t, s), 9);
    CHECK_EQ_INT(op1(t, s, 0, 1, 0), -EINVAL);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_FIND, 0, 0), -EINVAL);
    CHECK_EQ_INT(op1(t, 9, STROBE_PETRA_FIND, 1, 0), -EINVAL);
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    h = reopen(path);
    CHECK_EQ_INT(strobe_petra_structure_find(h, "set"), s);
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(count(t, s), 9);
    uint64_t v = 0;
    CHECK_EQ_INT(strobe_petra_get(t, s, 3, &v), 0);
    CHECK_EQ_U64(v, 33);
    CHECK_EQ_INT(strobe_petra_get(t, s, 10, &v), -ENOENT);
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(path);
}

STROBE_TEST(map_values)
{
    const char *path = fresh_path("map");
    strobe_petra *h = create(path, 0);
    int m = strobe_petra_structure_create(h, "m", STROBE_PETRA_MAP, 16);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(op1(t, m, STROBE_PETRA_UPDATE, 5, 1), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(op1(t, m, STROBE_PETRA_PUT, 5, 1), 0);
    CHECK_EQ_INT(op1(t, m, STROBE_PETRA_UPDATE, 5, 2), 0);
    CHECK_EQ_INT(op1(t, m, STROBE_PETRA_PUT, 5, 3), 0);
    uint64_t v = 0;
    CHECK_EQ_INT(strobe_petra_get(t, m, 5, &v), 0);
    CHECK_EQ_U64(v, 3);
    for (uint64_t k = 1; k <= 1000; k++)
        CHECK_EQ_INT(op1(t, m, STROBE_PETRA_PUT, k, k ^ 0xabcdef), 0);
    CHECK_EQ_INT(count(t, m), 1000);
    for (uint64_t k = 2; k <= 1000; k += 2)
        CHECK_EQ_INT(op1(t, m, STROBE_PETRA_DELETE, k, 0), 0);
    CHECK_EQ_INT(count(t, m), 500);
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    h = reopen(path);
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(count(t, m), 500);
    for (uint64_t k = 1; k <= 1000; k++) {
        int rc = strobe_petra_get(t, m, k, &v);
        CHECK_EQ_INT(rc, k % 2 ? 0 : -ENOENT);
        if (!rc)
            CHECK_EQ_U64(v, k ^ 0xabcdef);
    }
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(path);
}

STROBE_TEST_MAIN(STROBE_CASE(set_semantics), STROBE_CASE(map_values))
