/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a strobed configuration file (docs/strobed.md) through
 * strobe__cfg_parse, then strobe__daemon_new on the tree: the daemon
 * section, every sampler/transform/store entry opened by its plugin, and
 * the producers list. Nothing is started (no scheduler, server, HTTP
 * endpoint or aggregation thread) and nothing is sampled.
 *
 * What a configuration may make the daemon touch is fenced in before
 * daemon_new sees the tree, by rewriting scalar values (the keys stay, so
 * their checks are still fuzzed):
 *  - plugin_path: an empty scratch directory (and STROBE_PLUGIN_PATH
 *    too), so an external plugin name never dlopen()s anything; a plugin
 *    name holding '/' (a path to dlopen) rejects the input;
 *  - daemon.log_file: /dev/null; daemon.secret_file: a scratch file
 *    holding a valid secret; daemon.listen/http are only copied;
 *  - `path` of any plugin entry (files samplers read, csv's output
 *    directory): a name inside the scratch directory;
 *  - producers[].address holding ':': an nng inproc:// address, so
 *    aggregators dial nothing outside the process.
 * Any STROBE_ERR_SYNTAX must come with a message.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strobed/config.h"
#include "strobed/daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[256], plugins[300], secret_path[300];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static void cleanup(void)
{
    nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void init(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/strobe-fuzz-config.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch))
        abort();
    atexit(cleanup);
    snprintf(plugins, sizeof plugins, "%s/plugins", scratch);
    snprintf(secret_path, sizeof secret_path, "%s/secret", scratch);
    FILE *f = fopen(secret_path, "w");
    /* a secret file must not be readable by others (auth.c refuses it) */
    if (mkdir(plugins, 0700) < 0 || !f || fchmod(fileno(f), 0600) < 0 ||
        fputs("fuzz-shared-secret\n", f) < 0 || fclose(f) != 0)
        abort();
    setenv("STROBE_PLUGIN_PATH", plugins, 1);
}

static void set_scalar(struct strobe__cfg *v, const char *s)
{
    if (!v || v->kind != STROBE_CFG_SCALAR)
        return;
    char *copy = strdup(s);
    if (!copy)
        abort();
    free(v->scalar);
    v->scalar = copy;
}

/* Rewrites one plugin entry; 0 to reject the input. */
static int fence_entry(struct strobe__cfg *e)
{
    struct strobe__cfg *v = strobe__cfg_get(e, "plugin");
    if (v && v->kind == STROBE_CFG_SCALAR && strchr(v->scalar, '/'))
        return 0;
    if ((v = strobe__cfg_get(e, "path")) && v->kind == STROBE_CFG_SCALAR) {
        char p[400];
        int n = snprintf(p, sizeof p, "%s/p-", scratch);
        for (const char *c = v->scalar; *c && n < 380; c++)
            p[n++] = *c == '/' ? '_' : *c;
        p[n] = 0;
        set_scalar(v, p);
    }
    return 1;
}

static int fence(struct strobe__cfg *cfg)
{
    set_scalar(strobe__cfg_get(cfg, "plugin_path"), plugins);
    struct strobe__cfg *c = strobe__cfg_get(cfg, "daemon");
    set_scalar(strobe__cfg_get(c, "log_file"), "/dev/null");
    set_scalar(strobe__cfg_get(c, "secret_file"), secret_path);
    static const char *const sections[] = { "samplers", "transforms", "stores" };
    for (size_t s = 0; s < 3; s++)
        if ((c = strobe__cfg_get(cfg, sections[s])) && c->kind == STROBE_CFG_SEQ)
            for (size_t i = 0; i < c->n; i++)
                if (!fence_entry(c->items[i]))
                    return 0;
    if ((c = strobe__cfg_get(cfg, "producers")) && c->kind == STROBE_CFG_SEQ)
        for (size_t i = 0; i < c->n; i++) {
            struct strobe__cfg *a = strobe__cfg_get(c->items[i], "address");
            if (a && a->kind == STROBE_CFG_SCALAR && strchr(a->scalar, ':'))
                set_scalar(a, "inproc://strobe-fuzz-config");
        }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        init();
        ready = 1;
    }
    struct strobe__cfg *cfg;
    char err[1024];
    err[0] = 0;
    int rc = strobe__cfg_parse((const char *)data, size, "fuzz.yaml", &cfg, err, sizeof err);
    if (rc == STROBE_ERR_SYNTAX && !err[0])
        abort();
    if (rc < 0)
        return 0;
    if (!fence(cfg)) {
        strobe__cfg_free(cfg);
        return 0;
    }
    struct strobe__daemon *d;
    err[0] = 0;
    rc = strobe__daemon_new(cfg, &d, err, sizeof err);
    if (rc == 0) {
        strobe__daemon_free(d);
    } else {
        if (rc == STROBE_ERR_SYNTAX && !err[0])
            abort();
        strobe__cfg_free(cfg);
    }
    return 0;
}
