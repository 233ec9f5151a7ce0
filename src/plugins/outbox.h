/* SPDX-License-Identifier: MIT */
/*
 * The outbox of the stores that talk to a server (remote_write, postgres,
 * influx): a bounded queue of encoded batches on disk and a sender thread
 * that delivers them in order through the store's send callback, with
 * retries and doubling back-off, so that a slow or dead server never
 * blocks the daemon thread that calls the store's update(), and an outage
 * loses nothing up to the bound (docs/plugins.md, "The outbox").
 *
 * Each batch is one file <queue_dir>/<16 hex digits of its sequence
 * number>.batch, written as .tmp and renamed, so a crash leaves whole
 * batches only; batches still on disk when the store opens again (after a
 * stop, a crash or a reboot) are sent first, in their order.
 */
#ifndef STROBE_PLUGINS_OUTBOX_H
#define STROBE_PLUGINS_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/plugin.h"

struct strobe__outbox;

enum strobe__send_result {
    STROBE__SEND_OK = 0,      /* delivered: drop the batch */
    STROBE__SEND_RETRY = 1,   /* server down, slow (timeout), 5xx, 429: keep it, back off, retry */
    STROBE__SEND_REFUSED = 2, /* the server will never accept it (4xx other than 429, bad data):
                                 drop it, count it, log it */
};

/* Delivers one batch; runs on the outbox's sender thread, one call at a
 * time. `why` gets a short reason for the log (e.g. "HTTP 503",
 * "connection refused", "timeout after 10 s", the server's message). */
typedef enum strobe__send_result (*strobe__send_fn)(void *ctx, const void *batch, size_t len, char *why,
                                                    size_t whylen);

struct strobe__outbox_config {
    char dir[1024];        /* queue directory (created); key `queue_dir`, default
                              $STATE_DIRECTORY (else /var/lib/strobe)/queue/<instance name> */
    uint64_t max_bytes;    /* bound of the queue: key `queue_size`, default 64M */
    uint64_t retry_min_ns; /* first back-off: key `retry_min`, default 100ms */
    uint64_t retry_max_ns; /* back-off cap (it doubles up to it): key `retry_max`, default 30s */
    const char *target;    /* what the log lines name, e.g. the URL (not copied: it must
                              outlive the outbox) */
};

/* CLOCK_MONOTONIC in ns: the clock of the outbox's back-off and of the
 * stores' batch ages. */
uint64_t strobe__outbox_now_ns(void);

/* Reads the common keys (queue_dir, queue_size, retry_min, retry_max)
 * through the host; configuration errors are reported through the host and
 * returned as STROBE_ERR_SYNTAX. `target` is left NULL for the store to set. */
int strobe__outbox_config_read(const struct strobe_plugin_host *host, struct strobe__outbox_config *c);

/* Opens the queue directory (creating it), picks up the batches left in it
 * and starts the sender thread. The host's log() is called from that thread
 * (strobed's is thread-safe). Returns 0 or -errno. */
int strobe__outbox_open(const struct strobe_plugin_host *host, const struct strobe__outbox_config *c,
                        strobe__send_fn send, void *ctx, struct strobe__outbox **out);

/* Queues one batch (written to disk, not kept in memory); never waits for
 * the network. When the queue would exceed its bound the OLDEST batches are
 * dropped (counted; logged once when dropping starts), except the one being
 * sent. A batch larger than the whole bound is dropped itself: -EFBIG.
 * Returns 0 or -errno (the disk write failed: the batch is lost, counted
 * as dropped). One thread at a time. */
int strobe__outbox_put(struct strobe__outbox *o, const void *batch, size_t len);

/* Waits up to timeout_ns for the queue to drain; 0 or -ETIMEDOUT. */
int strobe__outbox_drain(struct strobe__outbox *o, uint64_t timeout_ns);

struct strobe__outbox_stats {
    uint64_t queued_batches, queued_bytes; /* on disk now, the one being sent included */
    uint64_t sent_batches;                 /* delivered (OK) */
    uint64_t retried;                      /* send attempts that asked for a retry */
    uint64_t dropped_batches;              /* lost to the bound (or to a failed disk write) */
    uint64_t refused_batches;              /* refused by the server */
};

/* Counters since open (thread-safe). */
void strobe__outbox_stats(struct strobe__outbox *o, struct strobe__outbox_stats *s);

/* Stops the sender thread (waiting for a send under way to end: bound it
 * with the store's timeout) and frees the outbox; undelivered batches stay
 * on disk for the next open. NULL is a no-op. */
void strobe__outbox_close(struct strobe__outbox *o);

#endif
