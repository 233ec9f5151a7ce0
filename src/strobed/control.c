/* SPDX-License-Identifier: MIT */
/*
 * strobed runtime control (control.h): parses the command words and calls
 * the daemon's and the aggregator's runtime functions, which check an
 * entry exactly as the configuration file's (daemon.c, aggregator.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobed/aggregator.h"
#include "strobed/control.h"
#include "strobed/daemon.h"

static const char usage[] = "expected status, or KIND add|remove|interval ... with KIND sampler, transform, "
                            "store or producer";

/* The words of an entry: name=NAME, second=VALUE, then the KEY=VALUE
 * words as they are; a tree from strobe__cfg_from_words. */
static int entry_from(const char *name, const char *second, const char *value, char *const *kv, size_t nkv,
                      struct strobe__cfg **out, char *err, size_t errlen)
{
    char first[2][300];
    char *w[STROBE__CONTROL_MAX_WORDS + 2];
    snprintf(first[0], sizeof first[0], "name=%s", name);
    snprintf(first[1], sizeof first[1], "%s=%s", second, value);
    w[0] = first[0];
    w[1] = first[1];
    for (size_t i = 0; i < nkv && i < STROBE__CONTROL_MAX_WORDS; i++)
        w[2 + i] = kv[i];
    return strobe__cfg_from_words(w, 2 + nkv, out, err, errlen);
}

static enum strobe_plugin_kind plugin_kind(const char *word)
{
    for (int k = STROBE_PLUGIN_SAMPLER; k <= STROBE_PLUGIN_STORE; k++)
        if (strcmp(word, strobe__plugin_kind_names[k]) == 0)
            return (enum strobe_plugin_kind)k;
    return 0;
}

static int run(struct strobe__daemon *d, char *const *w, size_t n, FILE *out, char *err, size_t errlen)
{
    if (n == 1 && strcmp(w[0], "status") == 0) {
        strobe__daemon_inst_describe(d, out);
        strobe__aggregator_describe(d, out);
        return 0;
    }
    enum strobe_plugin_kind kind = plugin_kind(w[0]);
    int producer = strcmp(w[0], "producer") == 0;
    if (n < 2 || (!kind && !producer)) {
        snprintf(err, errlen, "%s", usage);
        return STROBE_ERR_SYNTAX;
    }
    const char *verb = w[1];
    int rc;
    if (strcmp(verb, "add") == 0) {
        if (n < 4 || n - 4 > STROBE__CONTROL_MAX_WORDS) {
            snprintf(err, errlen, "usage: %s add NAME %s [KEY=VALUE...]", w[0],
                     producer ? "HOST:PORT" : "PLUGIN");
            return STROBE_ERR_SYNTAX;
        }
        struct strobe__cfg *entry;
        rc = entry_from(w[2], producer ? "address" : "plugin", w[3], w + 4, n - 4, &entry, err, errlen);
        if (rc < 0)
            return rc;
        rc = producer ? strobe__aggregator_add(d, entry, err, errlen)
                      : strobe__daemon_inst_add(d, kind, entry, err, errlen);
        if (rc < 0)
            strobe__cfg_free(entry);
        else
            fprintf(out, "%s %s added\n", w[0], w[2]);
        return rc;
    }
    if (strcmp(verb, "remove") == 0) {
        if (n != 3) {
            snprintf(err, errlen, "usage: %s remove NAME", w[0]);
            return STROBE_ERR_SYNTAX;
        }
        rc = producer ? strobe__aggregator_remove(d, w[2], err, errlen)
                      : strobe__daemon_inst_remove(d, kind, w[2], err, errlen);
        if (rc == 0)
            fprintf(out, "%s %s removed\n", w[0], w[2]);
        return rc;
    }
    if (strcmp(verb, "interval") == 0) {
        if (n != 4) {
            snprintf(err, errlen, "usage: %s interval NAME DURATION", w[0]);
            return STROBE_ERR_SYNTAX;
        }
        rc = producer ? strobe__aggregator_interval(d, w[2], w[3], err, errlen)
                      : strobe__daemon_inst_interval(d, kind, w[2], w[3], err, errlen);
        if (rc == 0)
            fprintf(out, "%s %s: interval %s\n", w[0], w[2], w[3]);
        return rc;
    }
    snprintf(err, errlen, "%s: unknown action '%s' (add, remove or interval)", w[0], verb);
    return STROBE_ERR_SYNTAX;
}

int strobe__control_run(struct strobe__daemon *d, char *const *words, size_t n, char **out, char *err,
                        size_t errlen)
{
    *out = NULL;
    if (n == 0) {
        snprintf(err, errlen, "%s", usage);
        return STROBE_ERR_SYNTAX;
    }
    size_t len;
    FILE *f = open_memstream(out, &len);
    if (!f)
        return -ENOMEM;
    int rc;
    pthread_mutex_lock(&d->ctl_lock);
    if (d->stop) {
        snprintf(err, errlen, "the daemon is stopping");
        rc = -ESHUTDOWN;
    } else {
        rc = run(d, words, n, f, err, errlen);
    }
    pthread_mutex_unlock(&d->ctl_lock);
    if (fclose(f) != 0 && rc == 0)
        rc = -ENOMEM;
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}
