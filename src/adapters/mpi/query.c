/* SPDX-License-Identifier: MIT */
/*
 * MPI profiler queries: the function table, a tokenizer and a
 * recursive-descent parser for the grammar in docs/mpi-profiler.md, and the
 * canonical formatter (see query.h).
 *
 * The text comes from an environment variable, i.e. from the user, so the
 * parser trusts nothing about it: every byte is classified, numbers are
 * checked for overflow, and a libFuzzer target (tests/fuzz/fuzz_mpi_query.c)
 * checks that parse(format(parse(x))) gives the same query.
 */
#include "adapters/mpi/query.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "strobe/strobe.h"

#define P2P (STROBE__MPI_CLASS_P2P | STROBE__MPI_CLASS_MESSAGE)
#define COLL (STROBE__MPI_CLASS_COLLECTIVE | STROBE__MPI_CLASS_MESSAGE)

static const struct {
    const char *name;
    unsigned cls;
} fn_info[STROBE__MPI_FN_COUNT] = {
    [STROBE__MPI_INIT] = {"MPI_Init", 0},
    [STROBE__MPI_INIT_THREAD] = {"MPI_Init_thread", 0},
    [STROBE__MPI_FINALIZE] = {"MPI_Finalize", 0},
    [STROBE__MPI_SEND] = {"MPI_Send", P2P},
    [STROBE__MPI_RECV] = {"MPI_Recv", P2P},
    [STROBE__MPI_ISEND] = {"MPI_Isend", P2P},
    [STROBE__MPI_IRECV] = {"MPI_Irecv", P2P},
    [STROBE__MPI_SSEND] = {"MPI_Ssend", P2P},
    [STROBE__MPI_ISSEND] = {"MPI_Issend", P2P},
    [STROBE__MPI_BSEND] = {"MPI_Bsend", P2P},
    [STROBE__MPI_RSEND] = {"MPI_Rsend", P2P},
    [STROBE__MPI_SENDRECV] = {"MPI_Sendrecv", P2P},
    /* completions move no message of their own: the message was counted
     * (with its size) by the call that started it */
    [STROBE__MPI_WAIT] = {"MPI_Wait", 0},
    [STROBE__MPI_WAITALL] = {"MPI_Waitall", 0},
    [STROBE__MPI_BARRIER] = {"MPI_Barrier", STROBE__MPI_CLASS_COLLECTIVE},
    [STROBE__MPI_BCAST] = {"MPI_Bcast", COLL},
    [STROBE__MPI_REDUCE] = {"MPI_Reduce", COLL},
    [STROBE__MPI_ALLREDUCE] = {"MPI_Allreduce", COLL},
    [STROBE__MPI_GATHER] = {"MPI_Gather", COLL},
    [STROBE__MPI_ALLGATHER] = {"MPI_Allgather", COLL},
    [STROBE__MPI_SCATTER] = {"MPI_Scatter", COLL},
    [STROBE__MPI_ALLTOALL] = {"MPI_Alltoall", COLL},
};

const char *strobe__mpi_fn_name(enum strobe__mpi_fn fn)
{
    return (unsigned)fn < STROBE__MPI_FN_COUNT ? fn_info[fn].name : NULL;
}

unsigned strobe__mpi_fn_class(enum strobe__mpi_fn fn)
{
    return (unsigned)fn < STROBE__MPI_FN_COUNT ? fn_info[fn].cls : 0;
}

#define ALL_FUNCTIONS ((UINT64_C(1) << STROBE__MPI_FN_COUNT) - 1)

static uint64_t class_mask(unsigned cls)
{
    uint64_t m = 0;
    for (int f = 0; f < STROBE__MPI_FN_COUNT; f++)
        if (fn_info[f].cls & cls)
            m |= UINT64_C(1) << f;
    return m;
}

/* ---- tokens ---------------------------------------------------------------- */

enum tok_kind { T_END, T_WORD, T_NUM, T_COMMA, T_STAR, T_SEMI, T_OP, T_BAD };

struct tok {
    enum tok_kind kind;
    size_t pos, len; /* byte offset and length in the text */
};

struct parser {
    const char *text;
    size_t at;    /* next byte to tokenize */
    struct tok t; /* current token */
    char *err;
    size_t errlen;
};

static bool is_word_char(unsigned char c)
{
    return isalnum(c) || c == '_';
}

/* Reads the next token into p->t. ctype is used on ASCII only: under a
 * locale other than C, isalpha(0xe9) may say yes, and a query must not
 * change meaning with LC_CTYPE. */
static void next(struct parser *p)
{
    const char *s = p->text;
    size_t i = p->at;
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
        i++;
    struct tok t = {T_END, i, 0};
    unsigned char c = (unsigned char)s[i];
    if (c == 0) {
        t.kind = T_END;
    } else if (c < 0x80 && (isalpha(c) || c == '_')) {
        t.kind = T_WORD;
        while (s[i + t.len] && (unsigned char)s[i + t.len] < 0x80 &&
               is_word_char((unsigned char)s[i + t.len]))
            t.len++;
    } else if (c < 0x80 && isdigit(c)) {
        t.kind = T_NUM;
        while (isdigit((unsigned char)s[i + t.len]))
            t.len++;
    } else if (c == ',' || c == '*' || c == ';') {
        t.kind = c == ',' ? T_COMMA : c == '*' ? T_STAR : T_SEMI;
        t.len = 1;
    } else if (c == '<' || c == '>') {
        t.kind = T_OP;
        t.len = s[i + 1] == '=' ? 2 : 1;
    } else if (c == '=') {
        t.kind = T_OP;
        t.len = 1;
    } else {
        t.kind = T_BAD;
        t.len = 1;
    }
    p->t = t;
    p->at = i + t.len;
}

static bool word_is(const struct parser *p, const char *kw)
{
    return p->t.kind == T_WORD && p->t.len == strlen(kw) &&
           strncasecmp(p->text + p->t.pos, kw, p->t.len) == 0;
}

/* How an error message shows a token: quoted text (at most 40 bytes), or
 * "end of query"; bytes that are not printable ASCII as \xNN. */
static void describe(const struct parser *p, const struct tok *t, char *buf, size_t cap)
{
    if (t->kind == T_END) {
        snprintf(buf, cap, "end of query");
        return;
    }
    size_t n = 0, len = t->len > 40 ? 40 : t->len;
    buf[n++] = '\'';
    for (size_t k = 0; k < len && n + 8 < cap; k++) {
        unsigned char c = (unsigned char)p->text[t->pos + k];
        if (c >= 0x20 && c < 0x7f)
            buf[n++] = (char)c;
        else
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", c);
    }
    if (len < t->len && n + 4 < cap) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n++] = '\'';
    buf[n] = 0;
}

/* Formats "query:LINE:COL: message" for the byte at `pos` into p->err and
 * returns STROBE_ERR_SYNTAX. */
static int fail_at(struct parser *p, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(struct parser *p, size_t pos, const char *fmt, ...)
{
    if (p->errlen == 0)
        return STROBE_ERR_SYNTAX;
    unsigned line = 1;
    size_t line_start = 0;
    for (size_t k = 0; k < pos; k++)
        if (p->text[k] == '\n') {
            line++;
            line_start = k + 1;
        }
    int n = snprintf(p->err, p->errlen, "query:%u:%zu: ", line, pos - line_start + 1);
    if (n >= 0 && (size_t)n < p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return STROBE_ERR_SYNTAX;
}

/* "expected WHAT, found TOKEN" at the current token; a byte that starts no
 * token is the real problem whatever the grammar wanted there. */
static int expected(struct parser *p, const char *what)
{
    char found[200];
    describe(p, &p->t, found, sizeof found);
    if (p->t.kind == T_BAD)
        return fail_at(p, p->t.pos, "unexpected character %s", found);
    return fail_at(p, p->t.pos, "expected %s, found %s", what, found);
}

/* ---- grammar --------------------------------------------------------------- */

static int parse_columns(struct parser *p, struct strobe__mpi_query *q)
{
    if (p->t.kind == T_STAR) {
        q->columns = STROBE__MPI_COL_CALLS | STROBE__MPI_COL_BYTES;
        next(p);
        return 0;
    }
    for (;;) {
        char found[200];
        unsigned col;
        if (p->t.kind != T_WORD || word_is(p, "FROM"))
            return expected(p, "a column (calls, bytes or *)");
        if (word_is(p, "calls")) {
            col = STROBE__MPI_COL_CALLS;
        } else if (word_is(p, "bytes")) {
            col = STROBE__MPI_COL_BYTES;
        } else {
            describe(p, &p->t, found, sizeof found);
            return fail_at(p, p->t.pos, "unknown column %s (expected calls, bytes or *)", found);
        }
        if (q->columns & col) {
            describe(p, &p->t, found, sizeof found);
            return fail_at(p, p->t.pos, "duplicate column %s", found);
        }
        q->columns |= col;
        next(p);
        if (p->t.kind != T_COMMA)
            return 0;
        next(p);
    }
}

static int parse_source(struct parser *p, struct strobe__mpi_query *q)
{
    if (p->t.kind != T_WORD || word_is(p, "WHERE") || word_is(p, "GROUP"))
        return expected(p, "an MPI function or group (all, p2p, collective)");
    if (word_is(p, "all")) {
        q->functions |= ALL_FUNCTIONS;
    } else if (word_is(p, "p2p")) {
        q->functions |= class_mask(STROBE__MPI_CLASS_P2P);
    } else if (word_is(p, "collective")) {
        q->functions |= class_mask(STROBE__MPI_CLASS_COLLECTIVE);
    } else {
        int f;
        for (f = 0; f < STROBE__MPI_FN_COUNT; f++)
            if (word_is(p, fn_info[f].name))
                break;
        if (f == STROBE__MPI_FN_COUNT) {
            char found[200];
            describe(p, &p->t, found, sizeof found);
            bool mpi = p->t.len >= 4 && strncasecmp(p->text + p->t.pos, "MPI_", 4) == 0;
            return fail_at(p, p->t.pos, "unknown MPI function%s %s", mpi ? "" : " or group", found);
        }
        q->functions |= UINT64_C(1) << f;
    }
    next(p);
    return 0;
}

/* size OP NUMBER, intersected into [size_min, size_max]. */
static int parse_condition(struct parser *p, struct strobe__mpi_query *q)
{
    size_t start = p->t.pos;
    if (!word_is(p, "size"))
        return expected(p, "size");
    next(p);
    if (p->t.kind != T_OP)
        return expected(p, "a comparison (<, <=, >, >=, =)");
    char op[3] = {0};
    memcpy(op, p->text + p->t.pos, p->t.len);
    next(p);
    if (p->t.kind != T_NUM)
        return expected(p, "a number");
    uint64_t v = 0;
    for (size_t k = 0; k < p->t.len; k++) {
        unsigned d = (unsigned)(p->text[p->t.pos + k] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            char found[200];
            describe(p, &p->t, found, sizeof found);
            return fail_at(p, p->t.pos, "number %s is too large (at most %ju)", found, (uintmax_t)UINT64_MAX);
        }
        v = v * 10 + d;
    }
    /* Strict bounds become inclusive ones; a bound that cannot be
     * represented (size < 0, size > 2^64-1) empties the range. */
    bool empty = false;
    if (strcmp(op, "<") == 0) {
        if (v == 0)
            empty = true;
        else if (v - 1 < q->size_max)
            q->size_max = v - 1;
    } else if (strcmp(op, "<=") == 0) {
        if (v < q->size_max)
            q->size_max = v;
    } else if (strcmp(op, ">") == 0) {
        if (v == UINT64_MAX)
            empty = true;
        else if (v + 1 > q->size_min)
            q->size_min = v + 1;
    } else if (strcmp(op, ">=") == 0) {
        if (v > q->size_min)
            q->size_min = v;
    } else { /* = */
        if (v > q->size_min)
            q->size_min = v;
        if (v < q->size_max)
            q->size_max = v;
    }
    if (empty || q->size_min > q->size_max)
        return fail_at(p, start, "size conditions exclude every message");
    next(p);
    return 0;
}

static int parse_group_by(struct parser *p, struct strobe__mpi_query *q)
{
    size_t start = p->t.pos;
    next(p); /* GROUP */
    if (!word_is(p, "BY"))
        return expected(p, "BY after GROUP");
    next(p);
    bool function = false, rank = false;
    for (;;) {
        char found[200];
        if (p->t.kind != T_WORD)
            return expected(p, "function or rank");
        bool *seen;
        if (word_is(p, "function")) {
            seen = &function;
        } else if (word_is(p, "rank")) {
            seen = &rank;
        } else {
            describe(p, &p->t, found, sizeof found);
            return fail_at(p, p->t.pos, "unknown grouping %s (expected function or rank)", found);
        }
        if (*seen) {
            describe(p, &p->t, found, sizeof found);
            return fail_at(p, p->t.pos, "duplicate grouping %s", found);
        }
        *seen = true;
        next(p);
        if (p->t.kind != T_COMMA)
            break;
        next(p);
    }
    /* a set holds one metric per function and column; a total over
     * functions is a sum the reader can take, so it is not a grouping */
    if (!function)
        return fail_at(p, start, "GROUP BY must include function");
    q->per_rank = rank;
    return 0;
}

int strobe__mpi_query_parse(const char *text, struct strobe__mpi_query *q, char *err, size_t errlen)
{
    struct parser p = {.text = text, .err = err, .errlen = errlen};
    struct strobe__mpi_query r = {.size_max = UINT64_MAX};
    int rc;
    if (errlen)
        err[0] = 0;
    next(&p);
    if (!word_is(&p, "SELECT"))
        return expected(&p, "SELECT");
    next(&p);
    if ((rc = parse_columns(&p, &r)) < 0)
        return rc;
    if (!word_is(&p, "FROM"))
        return expected(&p, r.columns == (STROBE__MPI_COL_CALLS | STROBE__MPI_COL_BYTES) ? "FROM"
                                                                                         : "',' or FROM");
    next(&p);
    for (;;) {
        if ((rc = parse_source(&p, &r)) < 0)
            return rc;
        if (p.t.kind != T_COMMA)
            break;
        next(&p);
    }
    if (word_is(&p, "WHERE")) {
        next(&p);
        for (;;) {
            if ((rc = parse_condition(&p, &r)) < 0)
                return rc;
            if (!word_is(&p, "AND"))
                break;
            next(&p);
        }
        if (!word_is(&p, "GROUP") && p.t.kind != T_SEMI && p.t.kind != T_END)
            return expected(&p, "AND, GROUP BY or end of query");
    } else if (!word_is(&p, "GROUP") && p.t.kind != T_SEMI && p.t.kind != T_END) {
        return expected(&p, "',', WHERE, GROUP BY or end of query");
    }
    if (word_is(&p, "GROUP") && (rc = parse_group_by(&p, &r)) < 0)
        return rc;
    if (p.t.kind == T_SEMI)
        next(&p);
    if (p.t.kind != T_END)
        return expected(&p, "end of query");
    *q = r;
    return 0;
}

int strobe__mpi_query_format(const struct strobe__mpi_query *q, char *buf, size_t cap)
{
    size_t n = 0;
    int w;
#define PUT(...)                                                                                             \
    do {                                                                                                     \
        w = snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__);                                           \
        if (w < 0)                                                                                           \
            return -ENOSPC;                                                                                  \
        n += (size_t)w;                                                                                      \
    } while (0)
    PUT("SELECT ");
    if (q->columns & STROBE__MPI_COL_CALLS)
        PUT("calls%s", q->columns & STROBE__MPI_COL_BYTES ? ", " : "");
    if (q->columns & STROBE__MPI_COL_BYTES)
        PUT("bytes");
    PUT(" FROM ");
    if ((q->functions & ALL_FUNCTIONS) == ALL_FUNCTIONS) {
        PUT("all");
    } else {
        const char *sep = "";
        for (int f = 0; f < STROBE__MPI_FN_COUNT; f++)
            if (q->functions >> f & 1) {
                PUT("%s%s", sep, fn_info[f].name);
                sep = ", ";
            }
    }
    if (q->size_min > 0)
        PUT(" WHERE size >= %ju", (uintmax_t)q->size_min);
    if (q->size_max < UINT64_MAX)
        PUT(" %s size <= %ju", q->size_min > 0 ? "AND" : "WHERE", (uintmax_t)q->size_max);
    PUT(" GROUP BY function%s", q->per_rank ? ", rank" : "");
#undef PUT
    return n < cap ? 0 : -ENOSPC;
}
