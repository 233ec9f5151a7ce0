/* SPDX-License-Identifier: MIT */
/*
 * The strobed runtime context: configuration, plugin instances, the set
 * registry, dispatch of set updates through transform chains to stores,
 * and the sampler schedule. Everything a daemon holds lives in one
 * struct strobe__daemon; network pieces (server.c, aggregator.c, http.c)
 * attach to it.
 *
 * Locking: d->lock serialises every plugin call and every registry
 * change. Threads that call into plugins (scheduler, one thread per
 * producer) take it; readers of sets for the network take it only to find
 * sets and snapshot them. d->ctl_lock serialises runtime control
 * (control.h) with start and stop: a command that adds a producer never
 * runs while the daemon starts or stops its threads. It is taken before
 * d->lock, never while holding it.
 */
#ifndef STROBE_STROBED_DAEMON_H
#define STROBE_STROBED_DAEMON_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "common/name_index.h"
#include "strobe/plugin.h"
#include "strobed/config.h"

struct strobe__instance;
struct strobe__server;
struct strobe__http;
struct strobe__aggregator;

/* registry flag: the set belongs to someone else (an aggregator's mirror),
 * removing the entry does not free it */
#define STROBE__SET_BORROWED 0x100u
/* registry flag: mirrored from a producer down for longer than its
 * stale_after (set by the exposition under the lock, http.c) */
#define STROBE__SET_STALE 0x200u

struct strobe__set_entry {
    strobe_set *set;
    unsigned flags;                     /* STROBE_SET_PUBLISH */
    struct strobe__instance *owner;     /* NULL: mirrored from a producer */
    struct strobe__aggregator *source;  /* the producer it is mirrored from, or NULL */
};

struct strobe__daemon {
    pthread_mutex_t lock;
    pthread_mutex_t ctl_lock;
    pthread_cond_t changed; /* broadcast on every set update and registry change */
    uint64_t change_seq;    /* bumped with it */
    struct strobe__cfg *cfg;
    char producer[STROBE_SET_NAME_MAX + 1];
    char *listen, *http_listen, *secret; /* NULL when not configured */
    /* /metrics: the credential a scrape must present (http_token_file,
     * else the secret; NULL: open to anyone), and the PEM files of its TLS
     * certificate and key (both or none) */
    char *http_token, *http_tls_cert, *http_tls_key;
    enum strobe_log_level log_level;
    /* log_lock guards the log stream: SIGHUP replaces it while any
     * thread may be writing a line */
    pthread_mutex_t log_lock;
    FILE *log;
    char *log_path; /* log_file, NULL: stderr */

    struct strobe__instance **inst; /* samplers, then transforms, then stores */
    size_t ninst;
    struct strobe__instance **cons; /* the transforms and stores of inst, in order */
    size_t ncons;
    struct strobe__set_entry *sets;
    size_t nsets, capsets;
    struct strobe__name_index index; /* by instance name, over sets */
    int dispatch_depth;

    struct strobe__aggregator **prod;
    size_t nprod;
    struct strobe__server *server;
    struct strobe__http *http;
    pthread_t sched;
    int sched_started;
    _Atomic int stop; /* read by every daemon thread */
    _Atomic int closing; /* producer connections being closed in the background (aggregator.c) */
    int nng_wedged;      /* one of them never closed: nng's reaper hangs, so the exit skips
                            nng's teardown (it would hang too) */
    int stop_pipe[2]; /* wakes the scheduler */
    int sched_pipe[2]; /* wakes it to look at a schedule runtime control changed */
};

/* Build a daemon from a parsed configuration (taken over on success).
 * Plugin instances are opened; nothing runs yet. err gets one line naming
 * file, line and key on STROBE_ERR_SYNTAX. */
int strobe__daemon_new(struct strobe__cfg *cfg, struct strobe__daemon **out, char *err,
                       size_t errlen);
/* Start the scheduler, aggregators, server and HTTP endpoint. */
int strobe__daemon_start(struct strobe__daemon *d, char *err, size_t errlen);
/* Stop all threads, flush stores, close plugins, free. */
void strobe__daemon_free(struct strobe__daemon *d);

/* SIGHUP: reopen log_file at its path (after logrotate renamed it), so new
 * lines go to a new file; every line goes whole to the old or the new one.
 * Without log_file, or when the path cannot be opened (logged in the old
 * file), the log goes on where it was. */
void strobe__daemon_reopen_log(struct strobe__daemon *d);

/* Flush every store (lock held): SIGHUP and shutdown. */
void strobe__daemon_flush_stores(struct strobe__daemon *d);

/* Run every sampler once, now (tests and `strobed --once`). */
int strobe__daemon_sample_all(struct strobe__daemon *d, uint64_t now_ns);

/* Runtime control of plugin instances (caller holds d->ctl_lock, not
 * d->lock). add: entry is a mapping like one of the configuration file
 * (checked the same way, same messages), taken over on success; the
 * instance is opened and scheduled at once. remove: a store is flushed,
 * the instance's sets are removed, it is closed. interval: a sampler's
 * `interval` or a store's `flush_interval`, from the next tick on. Each
 * returns 0, or a negative code with one line in err and nothing changed
 * (-ENOENT: no instance of that kind and name). */
int strobe__daemon_inst_add(struct strobe__daemon *d, enum strobe_plugin_kind kind, struct strobe__cfg *entry,
                            char *err, size_t errlen);
int strobe__daemon_inst_remove(struct strobe__daemon *d, enum strobe_plugin_kind kind, const char *name,
                               char *err, size_t errlen);
int strobe__daemon_inst_interval(struct strobe__daemon *d, enum strobe_plugin_kind kind, const char *name,
                                 const char *duration, char *err, size_t errlen);
/* One line per instance: "KIND NAME plugin=P [interval=D offset=D |
 * flush_interval=D] sets=N", samplers, then transforms, then stores. */
void strobe__daemon_inst_describe(struct strobe__daemon *d, FILE *out);
/* "sampler", "transform", "store", indexed by enum strobe_plugin_kind. */
extern const char *const strobe__plugin_kind_names[];

/* Registry (caller holds d->lock). */
int strobe__daemon_set_add(struct strobe__daemon *d, strobe_set *set, unsigned flags,
                           struct strobe__instance *owner);
void strobe__daemon_set_remove(struct strobe__daemon *d, strobe_set *set);
struct strobe__set_entry *strobe__daemon_set_find(struct strobe__daemon *d, const char *instance);
/* A set changed: transforms and stores see it, waiters wake (lock held). */
void strobe__daemon_set_updated(struct strobe__daemon *d, strobe_set *set);

/* CLOCK_REALTIME in ns: the clock sampling and pulling are scheduled on. */
uint64_t strobe__wall_ns(void);
/* The next time strictly after `now` on the grid k*interval + offset, so
 * that daemons on different nodes with the same settings sample and pull
 * at the same moments. */
uint64_t strobe__next_tick(uint64_t now, uint64_t interval, uint64_t offset);

void strobe__log(struct strobe__daemon *d, enum strobe_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int strobe__log_level_parse(const char *s, enum strobe_log_level *out);

/* The built-in plugins (src/plugins), NULL-terminated. */
extern const struct strobe_plugin *const strobe__builtin_plugins[];

#endif
