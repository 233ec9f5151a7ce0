/* SPDX-License-Identifier: MIT */
/*
 * Test helpers: a strobed daemon built in the test's own process from
 * configuration text, as tests of the daemon and of its plugins use it
 * (no threads started; the test samples and feeds sets itself). `name`
 * is the file name that messages give ("test.yaml:3: key: ...").
 */
#ifndef STROBE_TESTS_STROBED_INPROC_H
#define STROBE_TESTS_STROBED_INPROC_H

#include <string.h>

#include "strobed/config.h"
#include "strobed/daemon.h"
#include "test.h"

/* Parses and builds, then frees what was built: 0, or the parser's or
 * the daemon's code with its message in err. */
static inline int inproc_build(const char *text, const char *name, char *err, size_t cap)
{
    struct strobe__cfg *cfg;
    struct strobe__daemon *d;
    err[0] = 0;
    int rc = strobe__cfg_parse(text, strlen(text), name, &cfg, err, cap);
    if (rc < 0)
        return rc;
    if ((rc = strobe__daemon_new(cfg, &d, err, cap)) < 0) {
        strobe__cfg_free(cfg);
        return rc;
    }
    strobe__daemon_free(d);
    return 0;
}

/* The daemon for text; the test fails when the text is refused. */
static inline struct strobe__daemon *inproc_daemon(const char *text, const char *name)
{
    struct strobe__cfg *cfg;
    struct strobe__daemon *d;
    char err[1024] = "";
    if (strobe__cfg_parse(text, strlen(text), name, &cfg, err, sizeof err) < 0)
        STROBE_FAIL("config: %s", err);
    int rc = strobe__daemon_new(cfg, &d, err, sizeof err);
    if (rc < 0)
        STROBE_FAIL("daemon: %s (%d)", err, rc);
    return d;
}

/* The message with which the daemon refuses text that parses; the test
 * fails when the text does not parse or is accepted. */
static inline const char *inproc_refusal(const char *text, const char *name)
{
    static char err[1024];
    struct strobe__cfg *cfg;
    struct strobe__daemon *d;
    err[0] = 0;
    if (strobe__cfg_parse(text, strlen(text), name, &cfg, err, sizeof err) < 0)
        STROBE_FAIL("config: %s", err);
    if (strobe__daemon_new(cfg, &d, err, sizeof err) == 0)
        STROBE_FAIL("configuration accepted:\n%s", text);
    strobe__cfg_free(cfg);
    return err;
}

#endif
