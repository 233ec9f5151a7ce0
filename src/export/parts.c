/* SPDX-License-Identifier: MIT */
/*
 * Trace exports split into parts of about a given size (parts.h).
 */
#include "export/parts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strobe/strobe.h"

char *strobe__part_name(const char *out, uint32_t index)
{
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - out) : strlen(out);
    const char *ext = out + stem;
    size_t len = stem + strlen(ext) + 16;
    char *name = malloc(len);
    if (name)
        snprintf(name, len, "%.*s-%03u%s", (int)stem, out, (unsigned)index, ext);
    return name;
}

static int open_part(struct strobe__parts *ps, uint32_t thread, struct strobe_errbuf *eb)
{
    char *name = ps->limit ? strobe__part_name(ps->out, ps->index) : NULL;
    if (ps->limit && !name)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", ps->out);
    int rc = strobe__out_file_open(&ps->file, name ? name : ps->out, eb);
    free(name);
    if (rc < 0)
        return rc;
    ps->since_check = 0;
    return ps->begin(ps->arg, ps->file.f, thread, eb);
}

int strobe__parts_open(struct strobe__parts *ps, const char *out, uint64_t limit, struct strobe_errbuf *eb)
{
    ps->out = out;
    ps->limit = limit;
    ps->index = 0;
    ps->done = NULL;
    ps->stack = NULL;
    ps->depth = ps->cap = 0;
    ps->file = (struct strobe__out_file){0};
    /* ftello costs a system call: look at the size every few events, so a
     * part exceeds SIZE by at most that many events (~150 B each in JSON) */
    uint64_t every = limit / 1024;
    ps->check_every = every < 1 ? 1 : every > 256 ? 256 : (uint32_t)every;
    return open_part(ps, STROBE_NONE, eb);
}

bool strobe__parts_continued(const struct strobe__parts *ps)
{
    return ps->depth > 0 && ps->stack[ps->depth - 1].continued;
}

/* Keeps the open frames of the thread being written: ENTERs push (before
 * the format sees them), EXITs pop (after). */
static int push(struct strobe__parts *ps, const struct strobe_event *ev, bool continued)
{
    if (ps->depth == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 64;
        struct strobe__part_frame *s = realloc(ps->stack, cap * sizeof *s);
        if (!s)
            return -ENOMEM;
        ps->stack = s;
        ps->cap = cap;
    }
    ps->stack[ps->depth++] = (struct strobe__part_frame){ev->type, ev->region, continued};
    return 0;
}

static int commit_part(struct strobe__parts *ps, struct strobe_errbuf *eb)
{
    int rc = ps->end(ps->arg, eb);
    if (rc < 0)
        return rc;
    char *name = ps->limit ? strdup(ps->file.name) : NULL;
    char **done = ps->limit ? realloc(ps->done, (ps->index + 1) * sizeof *done) : NULL;
    if (ps->limit && (!name || !done)) {
        free(name);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", ps->out);
    }
    if ((rc = strobe__out_file_commit(&ps->file, eb)) < 0) {
        free(name);
        return rc;
    }
    if (ps->limit) {
        ps->done = done;
        ps->done[ps->index] = name;
    }
    ps->index++;
    return 0;
}

/* Ends this part after ev with the thread's frames left, and starts the
 * next one with them entered again, all at ev's time. */
static int split(struct strobe__parts *ps, uint32_t thread, const struct strobe_event *ev,
                 struct strobe_errbuf *eb)
{
    struct strobe_event e = {.type = STROBE_EVENT_EXIT,
                             .time_ns = ev->time_ns,
                             .offset = ev->offset,
                             .metric = STROBE_NONE,
                             .other_thread = STROBE_NONE,
                             .synthetic = true};
    size_t depth = ps->depth;
    int rc = 0;
    for (size_t i = depth; i-- > 0 && rc == 0;) {
        ps->depth = i + 1; /* the frame being left is the top (strobe__parts_continued) */
        e.region = ps->stack[i].region;
        e.depth = (uint32_t)i;
        rc = ps->event(ps->arg, thread, &e, eb);
    }
    if (rc == 0 && (rc = commit_part(ps, eb)) == 0)
        rc = open_part(ps, thread, eb);
    for (size_t i = 0; i < depth && rc == 0; i++) {
        ps->depth = i + 1;
        ps->stack[i].continued = true;
        e.type = ps->stack[i].type;
        e.region = ps->stack[i].region;
        e.depth = (uint32_t)(i + 1);
        rc = ps->event(ps->arg, thread, &e, eb);
    }
    ps->depth = depth;
    return rc;
}

int strobe__parts_event(void *arg, uint32_t thread, const struct strobe_event *ev, struct strobe_errbuf *eb)
{
    struct strobe__parts *ps = arg;
    int rc;
    bool enter = ev->type == STROBE_EVENT_ENTER || ev->type == STROBE_EVENT_INHERIT;
    if (enter && push(ps, ev, false) < 0)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", ps->out);
    if ((rc = ps->event(ps->arg, thread, ev, eb)) < 0)
        return rc;
    if (ev->type == STROBE_EVENT_EXIT && ps->depth > 0)
        ps->depth--;
    if (!ps->limit || ++ps->since_check < ps->check_every)
        return 0;
    ps->since_check = 0;
    off_t size = ftello(ps->file.f);
    return size >= 0 && (uint64_t)size >= ps->limit ? split(ps, thread, ev, eb) : 0;
}

int strobe__parts_commit(struct strobe__parts *ps, uint32_t *nparts, struct strobe_errbuf *eb)
{
    int rc = commit_part(ps, eb);
    if (rc < 0) {
        strobe__parts_abort(ps);
        return rc;
    }
    if (nparts)
        *nparts = ps->index;
    for (uint32_t i = 0; ps->done && i < ps->index; i++)
        free(ps->done[i]);
    free(ps->done);
    free(ps->stack);
    ps->done = NULL;
    ps->stack = NULL;
    return 0;
}

void strobe__parts_abort(struct strobe__parts *ps)
{
    strobe__out_file_abort(&ps->file);
    for (uint32_t i = 0; ps->done && i < ps->index; i++) {
        unlink(ps->done[i]);
        free(ps->done[i]);
    }
    free(ps->done);
    free(ps->stack);
    ps->done = NULL;
    ps->stack = NULL;
    ps->index = 0;
}
