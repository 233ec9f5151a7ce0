/* SPDX-License-Identifier: MIT */
/*
 * strobed configuration tree: a YAML file (docs/strobed.md) read with
 * libyaml into scalars, sequences and mappings that remember their line,
 * so every later error can name file, line and key.
 */
#ifndef STROBE_STROBED_CONFIG_H
#define STROBE_STROBED_CONFIG_H

#include <stddef.h>

#include "common/size.h"

enum strobe__cfg_kind { STROBE_CFG_SCALAR, STROBE_CFG_SEQ, STROBE_CFG_MAP };

struct strobe__cfg {
    enum strobe__cfg_kind kind;
    int line;
    char *scalar;               /* STROBE_CFG_SCALAR */
    size_t n;                   /* items of a sequence or mapping */
    struct strobe__cfg **items; /* sequence items, or mapping values */
    char **keys;                /* mapping keys (parallel to items) */
    const char *file;           /* shared by the whole tree */
};

/* Parse text (name is used in messages). On error returns STROBE_ERR_SYNTAX
 * with "name:line: message" in err. Duplicate keys are errors. */
int strobe__cfg_parse(const char *text, size_t len, const char *name, struct strobe__cfg **out,
                      char *err, size_t errlen);
int strobe__cfg_load(const char *path, struct strobe__cfg **out, char *err, size_t errlen);
void strobe__cfg_free(struct strobe__cfg *c);

/* A mapping built from "KEY=VALUE" words (runtime control, `strobe ctl`):
 * every value a scalar, every node at line 0, which strobe__cfg_where
 * leaves out of messages. On error returns STROBE_ERR_SYNTAX with one
 * line in err ("'x' is not KEY=VALUE", "KEY: given twice"). */
int strobe__cfg_from_words(char *const *words, size_t n, struct strobe__cfg **out, char *err,
                           size_t errlen);

/* Where a message about key of mapping c (or about c itself, key NULL)
 * points: "FILE:LINE: " into buf, or "" for a tree from
 * strobe__cfg_from_words. Returns buf. */
const char *strobe__cfg_where(const struct strobe__cfg *c, const char *key, char *buf, size_t cap);

/* Mapping lookup; NULL when absent or c is not a mapping. */
struct strobe__cfg *strobe__cfg_get(const struct strobe__cfg *c, const char *key);
/* Line of a key in a mapping (the key's own line), or c's line. */
int strobe__cfg_key_line(const struct strobe__cfg *c, const char *key);

/* Scalars: durations (strobe__parse_duration) are parsed in common/size.h. */

/* ns as the shortest exact duration text ("1500ms", "2m", "0"), which
 * strobe__parse_duration reads back to the same value. */
void strobe__format_duration(unsigned long long ns, char *buf, size_t cap);

/* The shortest interval a schedule (sampler, producer pull, store flush)
 * may have: below it the daemon spends its time in its scheduler (1 ns was
 * 91 % of a core) instead of measuring anything. */
#define STROBE__MIN_INTERVAL_NS 1000000ull
#define STROBE__MIN_INTERVAL_TEXT "1ms"

/* A schedule's interval: a duration of at least STROBE__MIN_INTERVAL_NS.
 * 0, STROBE_ERR_SYNTAX (not a duration) or -ERANGE (below the minimum). */
int strobe__parse_interval(const char *s, unsigned long long *ns);

/* Checks the port of an address given as HOST:PORT or tcp://HOST:PORT
 * (tcp4://, tcp6:// too): digits only, 1 to 65535. Other URLs are left to
 * nng. 0 or STROBE_ERR_SYNTAX. */
int strobe__check_port(const char *addr);

#endif
