/* SPDX-License-Identifier: MIT */
/*
 * Region filter: a text file of include/exclude rules with shell globs,
 * matched against region names. Used by the runtime (to skip filtered
 * functions) and by `strobe run` (to validate the file before launching).
 *
 *   # comment
 *   exclude *            every rule is: keyword, then one or more globs
 *   include main solve_*
 *
 * Rules are applied in order and the last matching rule decides; a name no
 * rule matches is measured.
 */
#ifndef STROBE_COMMON_FILTER_H
#define STROBE_COMMON_FILTER_H

#include <stdbool.h>
#include <stddef.h>

struct strobe_filter;

/* Parses PATH. Returns 0 and *out, or a negative code with a one-line
 * message "PATH:LINE: problem" in err. Not async-signal-safe (mallocs). */
int strobe__filter_load(const char *path, struct strobe_filter **out, char *err, size_t errlen);

/* Parses an in-memory text; `origin` names it in error messages. */
int strobe__filter_parse(const char *text, size_t len, const char *origin,
                         struct strobe_filter **out, char *err, size_t errlen);

/* true when NAME is to be measured. Thread-safe (read-only). */
bool strobe__filter_match(const struct strobe_filter *f, const char *name);

void strobe__filter_free(struct strobe_filter *f);

/* The glob that matches NAME and no other name, for writing filter files
 * (`strobe report --score -o`): fnmatch's specials (backslash, *, ?, [) and a leading
 * '#' (a comment) are escaped with a backslash. Returns 0 and, when glob is
 * not NULL, a malloc'd string in *glob; STROBE_ERR_SYNTAX when no rule can
 * match exactly NAME (empty, or a blank or newline, where the parser splits
 * words and lines); -ENOMEM. Thread-safe. */
int strobe__filter_exact_glob(const char *name, char **glob);

#endif
