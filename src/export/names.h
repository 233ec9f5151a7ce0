/* SPDX-License-Identifier: MIT */
/*
 * Display names and orderings shared by all exporters, so a thread, a
 * process and the machine are called the same in Perfetto, Vampir and Cube,
 * and progress is reported the same way; the common start of the profile
 * exports.
 */
#ifndef STROBE_EXPORT_NAMES_H
#define STROBE_EXPORT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "export/export.h"

/* Part of path after its last '/'; path itself when it has none. */
const char *strobe__basename(const char *path);

/* "thread N (tid T)" with N the thread's index within its process. */
void strobe__thread_name(const struct strobe_experiment *exp, uint32_t thread, char *buf, size_t size);

/* "rank R" for the one process of MPI rank R; "rank R: <exe basename> (pid
 * P)" when the rank has several (fork, exec); else "<exe basename> (pid
 * P)", or "process P" when the exe is unknown. */
void strobe__process_name(const struct strobe_experiment *exp, uint32_t process, char *buf, size_t size);

/* Location groups (OTF2, Cube): the processes of one MPI rank share one,
 * every other process has its own. Returns the first process of the group
 * of `process` (the model keeps the processes of a rank together). */
uint32_t strobe__group_leader(const struct strobe_experiment *exp, uint32_t process);

/* Name of the location group of `process`: "MPI Rank R" as Score-P names
 * ranks (so Vampir, Cube and Scalasca show what they show for Score-P
 * traces), else strobe__process_name(). */
void strobe__group_name(const struct strobe_experiment *exp, uint32_t process, char *buf, size_t size);

/* The machine: meta "host", else "localhost". */
const char *strobe__host_name(const struct strobe_experiment *exp);

/* The global thread indices sorted by (process, index within process): the
 * order in which system trees list threads. Returns a malloc'd array of
 * exp->nthreads entries, or NULL when out of memory (or nthreads == 0). */
uint32_t *strobe__threads_in_tree_order(const struct strobe_experiment *exp);

struct strobe_sample_model;
struct strobe__out_file;

/* The start of a profile export (Cube, pprof): *prof, the merged call-path
 * profile (never empty), *sm, the sample model of a `strobe run --sample`
 * experiment (NULL when not sampled), and o opened on out (output.h);
 * reports progress 0. Returns 0, or a negative code with a one-line
 * message naming out, nothing to free and nothing left behind. */
int strobe__export_profile_begin(const struct strobe_experiment *exp, const char *out,
                                 const struct strobe_export_opts *opts, struct strobe_profile **prof,
                                 struct strobe_sample_model **sm, struct strobe__out_file *o,
                                 struct strobe_errbuf *eb);

/* Calls opts->progress when there is one. */
void strobe__export_progress(const struct strobe_export_opts *opts, uint64_t done, uint64_t total);

/* 0 when the region or metric id of ev is one the model defines, else
 * STROBE_ERR_FORMAT with a message naming thread's stream and the offset. */
int strobe__check_event_ids(const struct strobe_experiment *exp, uint32_t thread, const struct strobe_event *ev,
                            struct strobe_errbuf *eb);

/* Called for each event of a thread; returns 0 or a negative code with a
 * message in eb. */
typedef int (*strobe__event_fn)(void *arg, uint32_t thread, const struct strobe_event *ev,
                                struct strobe_errbuf *eb);

/* Passes every event of thread (which must have a stream) to fn in stream
 * order, through the reader's iterator, until fn fails. Progress counts
 * bytes of event streams: *done holds those of the threads already
 * exported and grows by this thread's. Returns 0 or the first negative
 * code of the reader or fn (message in eb). */
int strobe__export_thread_events(const struct strobe_experiment *exp, uint32_t thread,
                                 const struct strobe_export_opts *opts, uint64_t *done, strobe__event_fn fn,
                                 void *arg, struct strobe_errbuf *eb);

#endif
