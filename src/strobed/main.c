/* SPDX-License-Identifier: MIT */
/*
 * strobed: the live-monitoring daemon (docs/strobed.md). Runs from a
 * configuration file (-c), or from a few options for a quick start that
 * are turned into the same configuration.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/build_config.h"
#include "strobed/config.h"
#include "strobed/daemon.h"

#if STROBE_WITH_SYSTEMD
#include <systemd/sd-daemon.h>
#else
/* built without libsystemd (STROBE_WITH_SYSTEMD=OFF): no readiness
 * notification, and the units say Type=exec (packaging/CMakeLists.txt) */
#define sd_notify(unset_environment, state) ((void)0)
#define sd_notifyf(unset_environment, ...) ((void)0)
#endif

static void usage(FILE *f)
{
    fputs("usage: strobed -c FILE [--log-level LEVEL] [--check]\n"
          "       strobed --listen HOST:PORT --sample NAME[,NAME...] [--interval DURATION]\n"
          "               [--http HOST:PORT] [--producer NAME] [--secret-file FILE] [--log-level LEVEL]\n"
          "       strobed --list-plugins\n"
          "see docs/strobed.md\n", f);
}

/* Quick start: the options become a configuration text, parsed like a
 * file, so both paths validate the same way. */
static int quick_config(const char *listen, const char *sample, const char *interval,
                        const char *http, const char *producer, const char *secret,
                        struct strobe__cfg **out, char *err, size_t errlen)
{
    char text[8192];
    size_t n = 0;
#define PUT(...) n += (size_t)snprintf(text + n, n < sizeof text ? sizeof text - n : 0, __VA_ARGS__)
    if (listen || http || producer || secret)
        PUT("daemon:\n");
    if (listen)
        PUT("  listen: \"%s\"\n", listen);
    if (http)
        PUT("  http: \"%s\"\n", http);
    if (producer)
        PUT("  producer: \"%s\"\n", producer);
    if (secret)
        PUT("  secret_file: \"%s\"\n", secret);
    if (sample) {
        PUT("samplers:\n");
        char *copy = strdup(sample), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            PUT("  - plugin: \"%s\"\n    interval: \"%s\"\n", tok, interval ? interval : "1s");
        free(copy);
    }
#undef PUT
    if (n >= sizeof text) {
        snprintf(err, errlen, "command line too long");
        return -E2BIG;
    }
    return strobe__cfg_parse(text, n, "command line", out, err, errlen);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "config", required_argument, 0, 'c' },   { "listen", required_argument, 0, 'l' },
        { "sample", required_argument, 0, 's' },   { "interval", required_argument, 0, 'i' },
        { "http", required_argument, 0, 'H' },     { "producer", required_argument, 0, 'p' },
        { "secret-file", required_argument, 0, 'S' }, { "log-level", required_argument, 0, 'L' },
        { "check", no_argument, 0, 'C' },          { "list-plugins", no_argument, 0, 'P' },
        { "help", no_argument, 0, 'h' },           { 0, 0, 0, 0 },
    };
    const char *file = NULL, *listen = NULL, *sample = NULL, *interval = NULL, *http = NULL,
               *producer = NULL, *secret = NULL, *level = NULL;
    int check = 0, c;
    while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': file = optarg; break;
        case 'l': listen = optarg; break;
        case 's': sample = optarg; break;
        case 'i': interval = optarg; break;
        case 'H': http = optarg; break;
        case 'p': producer = optarg; break;
        case 'S': secret = optarg; break;
        case 'L': level = optarg; break;
        case 'C': check = 1; break;
        case 'P':
            for (size_t i = 0; strobe__builtin_plugins[i]; i++) {
                static const char *const kinds[] = { "", "sampler", "transform", "store" };
                printf("%-14s %-9s %s\n", strobe__builtin_plugins[i]->name,
                       kinds[strobe__builtin_plugins[i]->kind], strobe__builtin_plugins[i]->summary);
            }
            return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc || (!file && !listen && !sample && !http)) {
        usage(stderr);
        return 2;
    }
    if (file && (listen || sample || interval || http || producer || secret)) {
        fprintf(stderr, "strobed: -c and the quick-start options exclude each other\n");
        return 2;
    }
    unsigned long long ns;
    int rc;
    if (interval && (rc = strobe__parse_interval(interval, &ns)) < 0) {
        if (rc == -ERANGE)
            fprintf(stderr, "strobed: --interval %s: below the minimum interval of " STROBE__MIN_INTERVAL_TEXT "\n",
                    interval);
        else
            fprintf(stderr, "strobed: --interval %s: not a positive duration (e.g. 500ms, 1s)\n", interval);
        return 2;
    }
    char err[1024] = "";
    struct strobe__cfg *cfg;
    rc = file ? strobe__cfg_load(file, &cfg, err, sizeof err)
                  : quick_config(listen, sample, interval, http, producer, secret, &cfg, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "strobed: %s\n", err[0] ? err : strobe_strerror(rc));
        return 1;
    }
    struct strobe__daemon *d;
    /* signals are taken synchronously by the main thread: block them
     * before any thread starts so none of those threads gets them */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Message buffers (UPDATE replies of megabytes) come and go every
     * round on nng's threads. glibc raises its mmap threshold after each
     * such buffer is freed, so the next ones come from the threads' heaps,
     * which keep their high-water mark: a fixed threshold gives each big
     * buffer its own mapping, returned to the system when freed. */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    if ((rc = strobe__daemon_new(cfg, &d, err, sizeof err)) < 0) {
        strobe__cfg_free(cfg);
        fprintf(stderr, "strobed: %s\n", err[0] ? err : strobe_strerror(rc));
        return 1;
    }
    if (level && strobe__log_level_parse(level, &d->log_level) < 0) {
        fprintf(stderr, "strobed: --log-level %s: expected error, warn, info or debug\n", level);
        strobe__daemon_free(d);
        return 2;
    }
    if (check) {
        printf("strobed: %s: configuration is valid\n", file ? file : "command line");
        strobe__daemon_free(d);
        return 0;
    }
    if ((rc = strobe__daemon_start(d, err, sizeof err)) < 0) {
        fprintf(stderr, "strobed: %s\n", err[0] ? err : strobe_strerror(rc));
        strobe__daemon_free(d);
        return 1;
    }
    /* the counts under the lock: runtime control may already change them */
    pthread_mutex_lock(&d->lock);
    size_t ninst = d->ninst, nprod = d->nprod;
    pthread_mutex_unlock(&d->lock);
    strobe__log(d, STROBE_LOG_INFO, "producer %s running (%zu plugin instance(s), %zu producer(s))",
                d->producer, ninst, nprod);
    /* systemd's Type=notify: the listeners are up (nothing without
     * NOTIFY_SOCKET, i.e. outside such a unit) */
    sd_notifyf(0, "READY=1\nSTATUS=producer %s running", d->producer);
    for (;;) {
        int sig;
        sigwait(&sigs, &sig);
        if (sig != SIGHUP)
            break;
        /* SIGHUP: the log file is reopened (after logrotate), stores flush */
        sd_notify(0, "RELOADING=1");
        strobe__daemon_reopen_log(d);
        pthread_mutex_lock(&d->lock);
        strobe__daemon_flush_stores(d);
        pthread_mutex_unlock(&d->lock);
        sd_notify(0, "READY=1");
    }
    sd_notify(0, "STOPPING=1");
    strobe__log(d, STROBE_LOG_INFO, "stopping");
    strobe__daemon_free(d);
    return 0;
}
