/* SPDX-License-Identifier: MIT */
/*
 * The annotation API in a program linked with -lstrobe: no compiler
 * instrumentation and no `strobe run` needed, the program measures itself
 * (into ./strobe-annotate-<timestamp>/ unless STROBE_EXPERIMENT_DIR says
 * otherwise).
 *
 * A toy request server: serve() handles 20 requests; each is parsed and
 * answered, answering is a recursive template expansion, and two metrics
 * record the bytes sent and the items per request. Regions and visits:
 *
 *   serve 1
 *     handle 20
 *       parse 20
 *       respond 20
 *         expand 60      expand > expand > expand, three levels per response
 *   metrics on handle: bytes_sent (B) 20 samples, sum 2*(100+...+119) = 4380;
 *                      items 20 samples, values 1..20, sum 210
 */
#include <stdio.h>
#include <string.h>

#include <strobe/strobe.h>

static strobe_metric_t bytes_sent = STROBE_METRIC_INIT("bytes_sent", "B");
static strobe_metric_t items = STROBE_METRIC_INIT("items", "");

/* A handle shared by every level of the recursion. */
static strobe_region_t expand_region = STROBE_REGION_INIT("expand");

static size_t expand(char *out, size_t cap, int depth)
{
    strobe_region_enter(&expand_region);
    size_t n = 0;
    if (depth > 0)
        n = expand(out, cap, depth - 1);
    if (n + 2 < cap) {
        out[n++] = (char)('a' + depth);
        out[n] = 0;
    }
    strobe_region_exit(&expand_region);
    return n;
}

static int parse(int request)
{
    STROBE_REGION_BEGIN(parse);
    int n_items = request + 1;
    STROBE_REGION_END(parse);
    return n_items;
}

static size_t respond(int request)
{
    STROBE_REGION_BEGIN(respond);
    char body[64];
    expand(body, sizeof body, 2);
    size_t len = 2 * (100 + (size_t)request); /* what a real server would have sent */
    STROBE_REGION_END(respond);
    return len;
}

static void handle(int request)
{
    STROBE_REGION_BEGIN(handle);
    int n = parse(request);
    size_t len = respond(request);
    strobe_metric_add(&items, n);
    strobe_metric_add(&bytes_sent, (int64_t)len);
    STROBE_REGION_END(handle);
}

int main(void)
{
    STROBE_REGION_BEGIN(serve);
    for (int r = 0; r < 20; r++)
        handle(r);
    STROBE_REGION_END(serve);
    const char *dir = strobe_experiment_dir();
    printf("served 20 requests; measured: %s\n", dir ? dir : "no (STROBE_ENABLE=0)");
    return 0;
}
