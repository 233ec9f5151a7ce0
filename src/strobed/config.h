/* SPDX-License-Identifier: MIT */
/*
 * strobed configuration tree: a YAML file (docs/strobed.md) read with
 * libyaml into scalars, sequences and mappings that remember their line,
 * so every later error can name file, line and key.
 */
#ifndef STROBE_STROBED_CONFIG_H
#define STROBE_STROBED_CONFIG_H

#include <stddef.h>

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

/* Mapping lookup; NULL when absent or c is not a mapping. */
struct strobe__cfg *strobe__cfg_get(const struct strobe__cfg *c, const char *key);
/* Line of a key in a mapping (the key's own line), or c's line. */
int strobe__cfg_key_line(const struct strobe__cfg *c, const char *key);

/* Scalars: "250ms", "1.5s", "2m", "1h", "10us", "100ns"; a bare number is
 * seconds. 0 or STROBE_ERR_SYNTAX. */
int strobe__parse_duration(const char *s, unsigned long long *ns);

#endif
