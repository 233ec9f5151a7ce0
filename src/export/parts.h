/* SPDX-License-Identifier: MIT */
/*
 * Trace exports split into parts (`strobe export --chunk-size SIZE`,
 * docs/cli.md): OUT-000.ext, OUT-001.ext, ... each a complete file of its
 * format that loads alone, of about SIZE bytes. The exporter writes every
 * event through strobe__parts_event(), which keeps the thread's open
 * frames; once the part holds SIZE bytes, at an event boundary, it leaves
 * the open frames (synthetic EXITs at the last event's time), lets the
 * format finish the file, starts the next one (the format's header and
 * metadata again) and re-enters the frames at the same time, marked as
 * continued. Without a SIZE the one file is OUT and nothing is split.
 *
 * Each part is written all or nothing (output.h); when the export fails,
 * the parts already written are removed too. Not thread-safe.
 */
#ifndef STROBE_EXPORT_PARTS_H
#define STROBE_EXPORT_PARTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "export/names.h"
#include "export/output.h"

struct strobe__part_frame {
    int type; /* STROBE_EVENT_ENTER or _INHERIT */
    uint32_t region;
    bool continued; /* re-entered at the start of this part */
};

struct strobe__parts {
    /* the format's side, set before strobe__parts_open */
    /* writes the start of a part to f: header, metadata and, when thread
     * is not STROBE_NONE, what that thread's events need first */
    int (*begin)(void *arg, FILE *f, uint32_t thread, struct strobe_errbuf *eb);
    int (*end)(void *arg, struct strobe_errbuf *eb); /* the end of a part */
    strobe__event_fn event;
    void *arg;
    /* the parts' side */
    const char *out;
    uint64_t limit; /* bytes per part, 0 = one file OUT */
    uint32_t index; /* of the part being written */
    uint32_t check_every, since_check;
    struct strobe__out_file file;
    char **done; /* parts committed, removed when the export fails */
    struct strobe__part_frame *stack;
    size_t depth, cap;
};

/* The name of part `index` of OUT = path/name.ext: path/name-<index>.ext,
 * index of at least 3 digits (the extension of the file name only; without
 * one, OUT-<index>). malloc'd; NULL when out of memory. */
char *strobe__part_name(const char *out, uint32_t index);
/* Opens the first part (OUT itself without a limit) and writes its
 * start. 0 or a negative code with a message in eb. */
int strobe__parts_open(struct strobe__parts *ps, const char *out, uint64_t limit, struct strobe_errbuf *eb);
/* A strobe__event_fn (arg = the parts): passes ev to the format, then
 * starts the next part when this one is full. */
int strobe__parts_event(void *arg, uint32_t thread, const struct strobe_event *ev, struct strobe_errbuf *eb);
/* Whether the frame of the ENTER, INHERIT or EXIT being written was
 * re-entered at the start of this part (for the format's mark). */
bool strobe__parts_continued(const struct strobe__parts *ps);
/* Writes the end of the last part and commits it; *nparts (when not NULL)
 * gets the number of parts. Aborts everything itself when it fails. */
int strobe__parts_commit(struct strobe__parts *ps, uint32_t *nparts, struct strobe_errbuf *eb);
/* Removes the part being written and the parts already committed. */
void strobe__parts_abort(struct strobe__parts *ps);

#endif
