/* SPDX-License-Identifier: MIT */
/*
 * Prometheus text exposition (format 0.0.4) of the daemon's published
 * sets at /metrics, served by nng's HTTP server.
 */
#ifndef STROBE_STROBED_HTTP_H
#define STROBE_STROBED_HTTP_H

#include <stddef.h>

struct strobe__daemon;
struct strobe__http;
struct strobe__wr;

int strobe__http_start(struct strobe__daemon *d, const char *addr, struct strobe__http **out,
                       char *err, size_t errlen);
void strobe__http_stop(struct strobe__http *h);
/* The exposition text of the published sets (d->lock held by caller). */
int strobe__prometheus_text(struct strobe__daemon *d, struct strobe__wr *out);

#endif
