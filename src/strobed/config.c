/* SPDX-License-Identifier: MIT */
/*
 * strobed configuration files: YAML through libyaml's document loader,
 * copied into a small tree that keeps line numbers (config.h). The copy
 * bounds depth and size, so aliases cannot blow it up ("billion laughs").
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "strobe/strobe.h"
#include "strobed/config.h"

#define MAX_DEPTH 32
#define MAX_NODES 100000
#define MAX_FILE (4u << 20)

struct conv {
    yaml_document_t *doc;
    const char *file;
    size_t nodes;
    char *err;
    size_t errlen;
};

static int fail(struct conv *cv, int line, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(cv->err, cv->errlen, "%s:%d: ", cv->file, line);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < cv->errlen)
        vsnprintf(cv->err + n, cv->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return STROBE_ERR_SYNTAX;
}

static int convert(struct conv *cv, yaml_node_t *yn, int depth, struct strobe__cfg **out)
{
    int line = (int)yn->start_mark.line + 1;
    if (depth > MAX_DEPTH)
        return fail(cv, line, "nesting deeper than %d levels", MAX_DEPTH);
    if (++cv->nodes > MAX_NODES)
        return fail(cv, line, "more than %d values (aliases expanding?)", MAX_NODES);
    struct strobe__cfg *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->line = line;
    c->file = cv->file;
    *out = c;
    switch (yn->type) {
    case YAML_SCALAR_NODE:
        c->kind = STROBE_CFG_SCALAR;
        if (memchr(yn->data.scalar.value, 0, yn->data.scalar.length))
            return fail(cv, line, "NUL byte in a value");
        c->scalar = strndup((const char *)yn->data.scalar.value, yn->data.scalar.length);
        return c->scalar ? 0 : -ENOMEM;
    case YAML_SEQUENCE_NODE: {
        c->kind = STROBE_CFG_SEQ;
        size_t n = (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
        c->items = calloc(n ? n : 1, sizeof *c->items);
        if (!c->items)
            return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *item = yaml_document_get_node(cv->doc, yn->data.sequence.items.start[i]);
            int rc = convert(cv, item, depth + 1, &c->items[c->n++]);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    case YAML_MAPPING_NODE: {
        c->kind = STROBE_CFG_MAP;
        size_t n = (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
        c->items = calloc(n ? n : 1, sizeof *c->items);
        c->keys = calloc(n ? n : 1, sizeof *c->keys);
        if (!c->items || !c->keys)
            return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
            yaml_node_pair_t *p = &yn->data.mapping.pairs.start[i];
            yaml_node_t *k = yaml_document_get_node(cv->doc, p->key);
            yaml_node_t *v = yaml_document_get_node(cv->doc, p->value);
            int kl = (int)k->start_mark.line + 1;
            if (k->type != YAML_SCALAR_NODE)
                return fail(cv, kl, "a key must be a plain word");
            char *key = strndup((const char *)k->data.scalar.value, k->data.scalar.length);
            if (!key)
                return -ENOMEM;
            if (strobe__cfg_get(c, key)) {
                int rc = fail(cv, kl, "%s: given twice", key);
                free(key);
                return rc;
            }
            c->keys[c->n] = key;
            int rc = convert(cv, v, depth + 1, &c->items[c->n]);
            c->n++;
            if (rc < 0)
                return rc;
            c->items[c->n - 1]->line = kl; /* errors about a value point at its key */
        }
        return 0;
    }
    default:
        return fail(cv, line, "empty value");
    }
}

int strobe__cfg_parse(const char *text, size_t len, const char *name, struct strobe__cfg **out,
                      char *err, size_t errlen)
{
    yaml_parser_t p;
    yaml_document_t doc;
    *out = NULL;
    /* every node points at this one copy of the name; the root frees it */
    char *file = strdup(name);
    if (!file)
        return -ENOMEM;
    struct conv cv = { &doc, file, 0, err, errlen };
    if (!yaml_parser_initialize(&p)) {
        free(file);
        return -ENOMEM;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int rc;
    if (!yaml_parser_load(&p, &doc)) {
        rc = fail(&cv, (int)p.problem_mark.line + 1, "%s%s%s", p.problem ? p.problem : "invalid YAML",
                  p.context ? " " : "", p.context ? p.context : "");
        yaml_parser_delete(&p);
        free(file);
        return rc;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        rc = fail(&cv, 1, "the file is empty");
    else if (root->type != YAML_MAPPING_NODE)
        rc = fail(&cv, (int)root->start_mark.line + 1, "the top level must be a mapping of sections");
    else
        rc = convert(&cv, root, 0, out);
    if (rc < 0) {
        if (*out)
            strobe__cfg_free(*out); /* frees file too */
        else
            free(file);
        *out = NULL;
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    return rc;
}

int strobe__cfg_load(const char *path, struct strobe__cfg **out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    char *buf = malloc(MAX_FILE + 1);
    size_t len = buf ? fread(buf, 1, MAX_FILE + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return -ENOMEM;
    int rc;
    if (bad) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -EIO;
    } else if (len > MAX_FILE) {
        snprintf(err, errlen, "%s: larger than %u bytes", path, MAX_FILE);
        rc = -EFBIG;
    } else {
        rc = strobe__cfg_parse(buf, len, path, out, err, errlen);
    }
    free(buf);
    return rc;
}

static void free_node(struct strobe__cfg *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free_node(c->items[i]);
        if (c->keys)
            free(c->keys[i]);
    }
    free(c->items);
    free(c->keys);
    free(c->scalar);
    free(c);
}

void strobe__cfg_free(struct strobe__cfg *c)
{
    if (!c)
        return;
    char *file = (char *)c->file;
    free_node(c);
    free(file);
}

int strobe__cfg_from_words(char *const *words, size_t n, struct strobe__cfg **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    struct strobe__cfg *c = calloc(1, sizeof *c);
    char *file = strdup("runtime control");
    if (!c || !file || !(c->items = calloc(n ? n : 1, sizeof *c->items)) ||
        !(c->keys = calloc(n ? n : 1, sizeof *c->keys))) {
        free(file);
        strobe__cfg_free(c);
        return -ENOMEM;
    }
    c->kind = STROBE_CFG_MAP;
    c->file = file;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *eq = strchr(words[i], '=');
        if (!eq || eq == words[i]) {
            snprintf(err, errlen, "'%s' is not KEY=VALUE", words[i]);
            rc = STROBE_ERR_SYNTAX;
            break;
        }
        char *key = strndup(words[i], (size_t)(eq - words[i]));
        struct strobe__cfg *v = calloc(1, sizeof *v);
        if (v) {
            v->kind = STROBE_CFG_SCALAR;
            v->file = file;
            v->scalar = strdup(eq + 1);
        }
        if (!key || !v || !v->scalar) {
            free(key);
            free_node(v);
            rc = -ENOMEM;
            break;
        }
        if (strobe__cfg_get(c, key)) {
            snprintf(err, errlen, "%s: given twice", key);
            rc = STROBE_ERR_SYNTAX;
        }
        c->keys[c->n] = key;
        c->items[c->n++] = v;
    }
    if (rc < 0) {
        strobe__cfg_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

const char *strobe__cfg_where(const struct strobe__cfg *c, const char *key, char *buf, size_t cap)
{
    int line = key ? strobe__cfg_key_line(c, key) : c->line;
    if (line > 0)
        snprintf(buf, cap, "%s:%d: ", c->file, line);
    else if (cap)
        buf[0] = 0;
    return buf;
}

struct strobe__cfg *strobe__cfg_get(const struct strobe__cfg *c, const char *key)
{
    if (!c || c->kind != STROBE_CFG_MAP)
        return NULL;
    for (size_t i = 0; i < c->n; i++)
        if (c->keys[i] && strcmp(c->keys[i], key) == 0)
            return c->items[i];
    return NULL;
}

int strobe__cfg_key_line(const struct strobe__cfg *c, const char *key)
{
    const struct strobe__cfg *v = strobe__cfg_get(c, key);
    return v ? v->line : c->line;
}

void strobe__format_duration(unsigned long long ns, char *buf, size_t cap)
{
    static const struct { const char *unit; unsigned long long scale; } units[] = {
        { "h", 3600000000000ull }, { "m", 60000000000ull }, { "s", 1000000000ull },
        { "ms", 1000000ull },      { "us", 1000ull },
    };
    for (size_t i = 0; ns && i < sizeof units / sizeof units[0]; i++)
        if (ns % units[i].scale == 0) {
            snprintf(buf, cap, "%llu%s", ns / units[i].scale, units[i].unit);
            return;
        }
    snprintf(buf, cap, ns ? "%lluns" : "%llu", ns);
}

int strobe__parse_interval(const char *s, unsigned long long *ns)
{
    unsigned long long v;
    if (strobe__parse_duration(s, &v) < 0)
        return STROBE_ERR_SYNTAX;
    if (v < STROBE__MIN_INTERVAL_NS)
        return -ERANGE;
    *ns = v;
    return 0;
}

int strobe__check_port(const char *addr)
{
    static const char *const tcp[] = { "tcp://", "tcp4://", "tcp6://" };
    const char *hp = addr;
    if (strstr(addr, "://")) {
        hp = NULL;
        for (size_t i = 0; i < 3 && !hp; i++)
            if (strncmp(addr, tcp[i], strlen(tcp[i])) == 0)
                hp = addr + strlen(tcp[i]);
        if (!hp)
            return 0;
    }
    const char *colon = strrchr(hp, ':');
    if (!colon || !colon[1] || strlen(colon + 1) > 5 || strspn(colon + 1, "0123456789") != strlen(colon + 1))
        return STROBE_ERR_SYNTAX;
    long port = strtol(colon + 1, NULL, 10);
    return port >= 1 && port <= 65535 ? 0 : STROBE_ERR_SYNTAX;
}
