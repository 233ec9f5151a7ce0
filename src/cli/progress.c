/* SPDX-License-Identifier: MIT */
/*
 * Progress line for long reads and exports: "\r<what>: NN%" on stderr,
 * only when stderr is a terminal and the traces are large enough to take
 * a noticeable time, redrawn only when the percentage changes, and erased
 * at the end so the one-line messages that follow start on a clean line.
 */
#include <unistd.h>

#include "cli/cli.h"

void strobe__progress_init(struct strobe__progress *p, const char *what)
{
    p->out = stderr;
    p->what = what;
    p->min_total = STROBE_PROGRESS_MIN_BYTES;
    p->enabled = isatty(STDERR_FILENO) == 1;
    p->shown = false;
    p->last_pct = -1;
}

void strobe__progress_cb(uint64_t done, uint64_t total, void *arg)
{
    struct strobe__progress *p = arg;
    if (!p->enabled || total < p->min_total || total == 0)
        return;
    if (done > total)
        done = total;
    int pct = (int)((unsigned __int128)done * 100 / total);
    if (pct == p->last_pct)
        return;
    p->last_pct = pct;
    p->shown = true;
    fprintf(p->out, "\rstrobe: %s: %3d%%", p->what, pct);
    fflush(p->out);
}

void strobe__progress_end(struct strobe__progress *p)
{
    if (!p->shown)
        return;
    /* carriage return, then erase to the end of the line (ECMA-48 EL) */
    fputs("\r\033[K", p->out);
    fflush(p->out);
    p->shown = false;
    p->last_pct = -1;
}
