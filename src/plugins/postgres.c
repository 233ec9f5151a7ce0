/* SPDX-License-Identifier: MIT */
/*
 * `postgres` store: every update of the selected sets becomes one row of
 * the table of its schema, <table_prefix><schema> (docs/plugins.md,
 * "postgres", gives the DDL and the reasons for this layout: one row per
 * update puts values in about 40 times faster than one row per value).
 * Columns: time (timestamptz), producer, instance, then one column per
 * metric under its own name (quoted identifiers keep every name exact),
 * of the narrowest PostgreSQL type that holds every value of the metric's
 * type (u64: numeric(20,0)); char metrics, the job_id of an application
 * included, are text; array metrics are PostgreSQL arrays; an invalid
 * value is NULL.
 *
 * update() encodes the row as COPY text into the batch of its table; a
 * batch holds batch_values values at most, is handed to the outbox
 * (outbox.h) when full, older than batch_age, or at flush(), and the
 * outbox's sender thread delivers it with one COPY, which the server
 * commits or rolls back as a whole: a batch that failed can be sent again
 * without duplicating rows. A batch carries its own DDL and COPY statement,
 * so one that waited on disk across a restart of strobed is still exact;
 * the DDL runs only when the COPY finds no table.
 *   keys: conninfo (libpq connection string; required), table_prefix
 *         (default strobe_), sets, schemas, batch_values, batch_age,
 *         timeout and the outbox's keys (queue_dir, queue_size, retry_min,
 *         retry_max).
 */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugins/outbox.h"
#include "plugins/plugins.h"
#include "plugins/store_common.h"
#include "transport/proto.h"

/* Batch layout, opaque to the outbox: "<DDL>\0<COPY statement>\0<rows>". */

/* One table: the sets of one schema layout. */
struct pg_table {
    char *schema;
    uint64_t sum;
    char *ddl, *copy;      /* NUL-terminated statements */
    struct strobe__wr out; /* the batch being filled: header, then rows */
    uint64_t values;       /* values in `out` */
    uint64_t since_ns;     /* monotonic time of its first row */
};

struct pg {
    const struct strobe_plugin_host *h;
    struct strobe__store_filter filter;
    char *prefix;
    char target[512]; /* the server, for the log: conninfo without its password */
    uint64_t batch_values, batch_age_ns, timeout_ns;
    struct pg_table **tables;
    size_t ntables;
    struct strobe__outbox *ob;
    uint64_t lost; /* values the outbox could not take */
    /* the sender thread's */
    char *conninfo;
    PGconn *conn;
};

static void put_text(struct strobe__wr *w, const char *s)
{
    strobe__wr_bytes(w, s, strlen(s));
}

/* ---- names and DDL --------------------------------------------------------------- */

/* A quoted identifier: the name exactly as strobe has it (a quote
 * doubled), so no two metrics share a column and reserved words such as
 * "user" (procstat) are names like any other. */
static void put_ident(struct strobe__wr *w, const char *prefix, const char *name, const char *suffix)
{
    strobe__wr_u8(w, '"');
    for (int part = 0; part < 3; part++)
        for (const char *c = part == 0 ? prefix : part == 1 ? name : suffix; *c; c++)
            strobe__wr_bytes(w, *c == '"' ? "\"\"" : c, *c == '"' ? 2 : 1);
    strobe__wr_u8(w, '"');
}

static const char *sql_type(enum strobe_metric_type t)
{
    switch (t) {
    case STROBE_MT_U8:
    case STROBE_MT_S8:
    case STROBE_MT_S16:
        return "smallint";
    case STROBE_MT_U16:
    case STROBE_MT_S32:
        return "integer";
    case STROBE_MT_U32:
    case STROBE_MT_S64:
        return "bigint";
    case STROBE_MT_U64:
        return "numeric(20,0)";
    case STROBE_MT_F32:
        return "real";
    case STROBE_MT_D64:
        return "double precision";
    default:
        return "text";
    }
}

static int is_array(const strobe_set *set, uint32_t i)
{
    return (strobe_set_metric_flags(set, i) & STROBE_METRIC_ARRAY) &&
           strobe_set_metric_type(set, i) != STROBE_MT_CHAR;
}

/* A metric column may not take the name of a label column. */
static const char *column_prefix(const char *metric)
{
    static const char *const labels[] = {"time", "producer", "instance"};
    for (int k = 0; k < 3; k++)
        if (strcmp(metric, labels[k]) == 0)
            return "metric_";
    return "";
}

/* The column of metric i. */
static void put_column(struct strobe__wr *w, const strobe_set *set, uint32_t i)
{
    const char *m = strobe_set_metric_name(set, i);
    put_ident(w, column_prefix(m), m, "");
}

/* The NUL-terminated text built in w (the caller frees it), or NULL when
 * building it ran out of memory. */
static char *take_text(struct strobe__wr *w)
{
    strobe__wr_u8(w, 0);
    if (w->err) {
        strobe__wr_free(w);
        return NULL;
    }
    return (char *)w->buf;
}

/* CREATE TABLE, its index and the column comments (counter or gauge,
 * unit), one transaction, run when a COPY finds no table. */
static char *make_ddl(const char *table, const strobe_set *set)
{
    struct strobe__wr w = {0};
    put_text(&w, "CREATE TABLE IF NOT EXISTS ");
    put_text(&w, table);
    put_text(&w, " (\"time\" timestamptz NOT NULL, \"producer\" text NOT NULL, \"instance\" text NOT NULL");
    for (uint32_t i = 0; i < strobe_set_card(set); i++) {
        put_text(&w, ", ");
        put_column(&w, set, i);
        strobe__wr_u8(&w, ' ');
        put_text(&w, sql_type(strobe_set_metric_type(set, i)));
        if (is_array(set, i))
            put_text(&w, "[]");
    }
    put_text(&w, ");\nCREATE INDEX IF NOT EXISTS ");
    /* the index name: the table's, unquoted, with a suffix */
    strobe__wr_bytes(&w, table, strlen(table) - 1);
    put_text(&w, "_instance_time\" ON ");
    put_text(&w, table);
    put_text(&w, " (\"instance\", \"time\");\n");
    for (uint32_t i = 0; i < strobe_set_card(set); i++) {
        const char *unit = strobe_set_metric_unit(set, i);
        int counter = (strobe_set_metric_flags(set, i) & STROBE_METRIC_COUNTER) != 0;
        int meta = (strobe_set_metric_flags(set, i) & STROBE_METRIC_META) != 0;
        put_text(&w, "COMMENT ON COLUMN ");
        put_text(&w, table);
        strobe__wr_u8(&w, '.');
        put_column(&w, set, i);
        put_text(&w, meta ? " IS 'meta" : counter ? " IS 'counter" : " IS 'gauge");
        if (*unit) {
            put_text(&w, ", unit ");
            for (const char *c = unit; *c; c++) /* a quote in a literal is doubled */
                strobe__wr_bytes(&w, *c == '\'' ? "''" : c, *c == '\'' ? 2 : 1);
        }
        put_text(&w, "';\n");
    }
    return take_text(&w);
}

static char *make_copy(const char *table, const strobe_set *set)
{
    struct strobe__wr w = {0};
    put_text(&w, "COPY ");
    put_text(&w, table);
    put_text(&w, " (\"time\", \"producer\", \"instance\"");
    for (uint32_t i = 0; i < strobe_set_card(set); i++) {
        put_text(&w, ", ");
        put_column(&w, set, i);
    }
    put_text(&w, ") FROM STDIN");
    return take_text(&w);
}

static void table_free(struct pg_table *t)
{
    free(t->schema);
    free(t->ddl);
    free(t->copy);
    strobe__wr_free(&t->out);
    free(t);
}

/* The table of the set's schema layout: <prefix><schema> for the first
 * layout seen under the name, <prefix><schema>_<8 hex of the checksum>
 * for another, so the columns of a table never change meaning. */
static struct pg_table *table_for(struct pg *s, const strobe_set *set)
{
    const char *schema = strobe_set_schema_name(set);
    uint64_t sum = strobe_set_schema_sum(set);
    int taken = 0;
    for (size_t i = 0; i < s->ntables; i++) {
        struct pg_table *t = s->tables[i];
        if (strcmp(t->schema, schema) != 0)
            continue;
        if (t->sum == sum)
            return t;
        taken = 1;
    }
    struct pg_table **v = realloc(s->tables, (s->ntables + 1) * sizeof *v);
    if (!v)
        return NULL;
    s->tables = v;
    struct pg_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->sum = sum;
    char suffix[16] = "";
    if (taken)
        snprintf(suffix, sizeof suffix, "_%08" PRIx32, (uint32_t)(sum >> 32));
    struct strobe__wr w = {0};
    put_ident(&w, s->prefix, schema, suffix);
    char *name = take_text(&w);
    if (name && (t->schema = strdup(schema)) && (t->ddl = make_ddl(name, set)))
        t->copy = make_copy(name, set);
    free(name);
    if (!t->copy) {
        table_free(t);
        return NULL;
    }
    s->tables[s->ntables++] = t;
    return t;
}

/* ---- rows (COPY text format) ----------------------------------------------------- */

/* Text with COPY's escapes for backslash and the row/column delimiters. */
static void put_copy_text(struct strobe__wr *w, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\\':
            put_text(w, "\\\\");
            break;
        case '\t':
            put_text(w, "\\t");
            break;
        case '\n':
            put_text(w, "\\n");
            break;
        case '\r':
            put_text(w, "\\r");
            break;
        default:
            strobe__wr_u8(w, (uint8_t)*s);
        }
    }
}

/* 2023-11-14 22:13:20.123456+00: the set's time to the microsecond. */
static void put_time(struct strobe__wr *w, uint64_t ns)
{
    time_t sec = (time_t)(ns / 1000000000u);
    struct tm tm;
    char tmp[64];
    gmtime_r(&sec, &tm);
    size_t n = strftime(tmp, sizeof tmp, "%Y-%m-%d %H:%M:%S", &tm);
    n += (size_t)snprintf(tmp + n, sizeof tmp - n, ".%06" PRIu64 "+00", ns % 1000000000u / 1000u);
    strobe__wr_bytes(w, tmp, n);
}

/* Appends the set's row; returns the number of values it holds. */
static uint64_t put_row(struct strobe__wr *w, const strobe_set *set)
{
    uint64_t values = 0;
    put_time(w, strobe_set_timestamp(set));
    strobe__wr_u8(w, '\t');
    put_copy_text(w, strobe_set_producer(set));
    strobe__wr_u8(w, '\t');
    put_copy_text(w, strobe_set_instance(set));
    for (uint32_t i = 0; i < strobe_set_card(set); i++) {
        strobe__wr_u8(w, '\t');
        values++;
        if (!strobe_set_is_valid(set, i)) {
            put_text(w, "\\N");
            continue;
        }
        if (strobe_set_metric_type(set, i) == STROBE_MT_CHAR) {
            put_copy_text(w, strobe_set_get_str(set, i));
            continue;
        }
        int array = is_array(set, i);
        uint32_t n = strobe_set_metric_count(set, i);
        if (array) {
            strobe__wr_u8(w, '{');
            values += n - 1;
        }
        for (uint32_t j = 0; j < n; j++) {
            char v[64];
            if (j)
                strobe__wr_u8(w, ',');
            /* integers exactly, reals as the shortest text that reads
             * back as the same value; inf and nan are PostgreSQL's too */
            if (strobe_set_format_value(set, i, j, v, sizeof v) == 0)
                put_text(w, v);
        }
        if (array)
            strobe__wr_u8(w, '}');
    }
    strobe__wr_u8(w, '\n');
    return values;
}

/* ---- batches ------------------------------------------------------------------------ */

/* Hands the table's batch to the outbox and starts a new one. */
static int ship(struct pg *s, struct pg_table *t)
{
    if (!t->values)
        return 0;
    int rc = t->out.err;
    if (rc == 0)
        rc = strobe__outbox_put(s->ob, t->out.buf, t->out.len);
    if (rc < 0)
        s->lost += t->values;
    t->out.len = 0;
    t->out.err = 0;
    t->values = 0;
    return rc;
}

static int update_pg(void *state, const strobe_set *set)
{
    struct pg *s = state;
    if (!strobe__store_filter_match(&s->filter, set))
        return 0;
    if (!strobe_set_is_consistent(set))
        return 0; /* half-written (or never written) data is not a row */
    struct pg_table *t = table_for(s, set);
    if (!t)
        return -ENOMEM;
    uint64_t now = strobe__outbox_now_ns();
    if (!t->values) {
        t->out.len = 0;
        strobe__wr_bytes(&t->out, t->ddl, strlen(t->ddl) + 1);
        strobe__wr_bytes(&t->out, t->copy, strlen(t->copy) + 1);
        t->since_ns = now;
    }
    t->values += put_row(&t->out, set);
    int rc = t->values >= s->batch_values ? ship(s, t) : 0;
    /* batch_age holds for the batches of the other tables too, so a
     * schema updated rarely does not wait for the next flush */
    for (size_t i = 0; i < s->ntables; i++) {
        struct pg_table *o = s->tables[i];
        int r = o->values && now - o->since_ns >= s->batch_age_ns ? ship(s, o) : 0;
        if (r < 0 && rc == 0)
            rc = r;
    }
    return rc;
}

static int flush_pg(void *state)
{
    struct pg *s = state;
    int rc = 0;
    for (size_t i = 0; i < s->ntables; i++) {
        int r = ship(s, s->tables[i]);
        if (r < 0 && rc == 0)
            rc = r;
    }
    return rc;
}

/* ---- delivery (the outbox's sender thread) -------------------------------------- */

/* libpq runs non-blocking here: every wait for the server is a poll()
 * bounded by the batch's deadline (`timeout`), so a server that stopped
 * answering (SIGSTOPped, a dead link without a TCP reset, a full disk
 * that hangs) cannot keep the sender thread, and with it strobed's stop,
 * waiting for ever. */

/* Waits for the connection's socket (events: POLLIN, POLLOUT); 0, or
 * -ETIMEDOUT at the deadline. */
static int wait_socket(PGconn *c, short events, uint64_t deadline)
{
    struct pollfd p = {.fd = PQsocket(c), .events = events};
    for (;;) {
        uint64_t now = strobe__outbox_now_ns();
        if (now >= deadline)
            return -ETIMEDOUT;
        int n = poll(&p, 1, (int)((deadline - now + 999999u) / 1000000u));
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
    }
}

/* Sends what libpq holds; 0, -EIO (the connection failed) or -ETIMEDOUT.
 * Reading while waiting, as libpq asks, so that a server that answers
 * while we send is never stuck behind us. */
static int send_all(PGconn *c, uint64_t deadline)
{
    int r;
    while ((r = PQflush(c)) == 1) {
        int w = wait_socket(c, POLLIN | POLLOUT, deadline);
        if (w < 0)
            return w;
        if (!PQconsumeInput(c))
            return -EIO;
    }
    return r == 0 ? 0 : -EIO;
}

/* The next result of the command in flight (NULL after its last), or
 * NULL with *late set when the deadline passed first. */
static PGresult *next_result(PGconn *c, uint64_t deadline, int *late)
{
    while (PQisBusy(c)) {
        if (wait_socket(c, POLLIN, deadline) < 0) {
            *late = 1;
            return NULL;
        }
        if (!PQconsumeInput(c))
            break; /* PQgetResult gives the error */
    }
    return PQgetResult(c);
}

/* The first line of a libpq message, for one log line. */
static void first_line(const char *msg, char *why, size_t whylen)
{
    snprintf(why, whylen, "%.*s", (int)strcspn(msg, "\n"), msg);
}

/* Would sending again help? Connection failures, a server shutting down
 * or out of resources, a cancelled statement, lock and serialization
 * failures: yes. Bad data, missing columns, permissions: no, the same
 * batch would be refused again. */
static int transient(PGconn *c, const PGresult *r)
{
    const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (PQstatus(c) != CONNECTION_OK || !st)
        return 1;
    static const char *const retry[] = {"08", "53", "57", "58", "40", "55P03", "XX"};
    for (size_t k = 0; k < sizeof retry / sizeof *retry; k++)
        if (strncmp(st, retry[k], strlen(retry[k])) == 0)
            return 1;
    return 0;
}

static void disconnect(struct pg *s)
{
    PQfinish(s->conn);
    s->conn = NULL;
}

/* The outcome of a failed step: r is the server's error (consumed), or
 * NULL when the connection failed or timed out (`late`). */
static enum strobe__send_result failed(struct pg *s, PGresult *r, int late, char *why, size_t whylen)
{
    const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (late)
        snprintf(why, whylen, "no answer within %.3g s", (double)s->timeout_ns / 1e9);
    else if (msg && st)
        snprintf(why, whylen, "%s, SQLSTATE %s", msg, st);
    else
        first_line(PQerrorMessage(s->conn), why, whylen);
    int again = late || transient(s->conn, r);
    int broken = late || !r || PQstatus(s->conn) != CONNECTION_OK;
    PQclear(r);
    /* a connection that failed, timed out or is in an unknown state
     * (inside a COPY) is not used again */
    if (broken)
        disconnect(s);
    return again ? STROBE__SEND_RETRY : STROBE__SEND_REFUSED;
}

/* Runs sql (statements other than COPY); its first error or its last
 * result, NULL on a failed connection or timeout (*late). */
static PGresult *run(struct pg *s, const char *sql, uint64_t deadline, int *late)
{
    if (!PQsendQuery(s->conn, sql) || send_all(s->conn, deadline) < 0) {
        *late = strobe__outbox_now_ns() >= deadline;
        return NULL;
    }
    PGresult *keep = NULL, *r;
    while ((r = next_result(s->conn, deadline, late))) {
        if (!keep || PQresultStatus(keep) == PGRES_COMMAND_OK) {
            PQclear(keep);
            keep = r;
        } else {
            PQclear(r);
        }
    }
    if (*late) {
        PQclear(keep);
        return NULL;
    }
    return keep;
}

/* One COPY of the rows; *missing is set when the table does not exist. */
static enum strobe__send_result copy_rows(struct pg *s, const char *copy, const char *rows, size_t len,
                                          uint64_t deadline, int *missing, char *why, size_t whylen)
{
    int late = 0;
    if (!PQsendQuery(s->conn, copy) || send_all(s->conn, deadline) < 0)
        return failed(s, NULL, strobe__outbox_now_ns() >= deadline, why, whylen);
    PGresult *r = next_result(s->conn, deadline, &late);
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        *missing = st && strcmp(st, "42P01") == 0;
        /* up to the NULL that ends the command, so the connection can
         * take the next one */
        PGresult *more;
        while (r && !late && (more = next_result(s->conn, deadline, &late)))
            PQclear(more);
        return failed(s, r, late, why, whylen);
    }
    PQclear(r);
    /* in pieces, so that a full socket buffer is waited for with poll() */
    for (size_t off = 0; off < len;) {
        int n = len - off < 65536 ? (int)(len - off) : 65536;
        int put = PQputCopyData(s->conn, rows + off, n);
        if (put == 1)
            off += (size_t)n;
        if (put < 0 || (put == 0 && wait_socket(s->conn, POLLOUT, deadline) < 0))
            return failed(s, NULL, put == 0, why, whylen);
    }
    int end;
    while ((end = PQputCopyEnd(s->conn, NULL)) == 0)
        if (wait_socket(s->conn, POLLOUT, deadline) < 0)
            return failed(s, NULL, 1, why, whylen);
    int sent = end == 1 ? send_all(s->conn, deadline) : -EIO;
    if (sent < 0)
        return failed(s, NULL, sent == -ETIMEDOUT, why, whylen);
    /* the COPY's result (the commit), then NULL */
    enum strobe__send_result res = STROBE__SEND_OK;
    while ((r = next_result(s->conn, deadline, &late))) {
        if (res == STROBE__SEND_OK && PQresultStatus(r) != PGRES_COMMAND_OK) {
            res = failed(s, r, 0, why, whylen);
            if (!s->conn)
                return res;
            continue;
        }
        PQclear(r);
    }
    return late ? failed(s, NULL, 1, why, whylen) : res;
}

static enum strobe__send_result connect_pg(struct pg *s, uint64_t deadline, char *why, size_t whylen)
{
    char user_timeout[32];
    snprintf(user_timeout, sizeof user_timeout, "%" PRIu64, s->timeout_ns / 1000000u);
    /* defaults, then the site's conninfo (expanded from dbname), whose
     * settings override those before it: a site can set any of them */
    const char *const keys[] = {"tcp_user_timeout", "client_encoding", "fallback_application_name", "dbname",
                                NULL};
    const char *const vals[] = {user_timeout, "UTF8", "strobed", s->conninfo, NULL};
    s->conn = PQconnectStartParams(keys, vals, 1);
    if (!s->conn) {
        snprintf(why, whylen, "out of memory");
        return STROBE__SEND_RETRY;
    }
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (PQstatus(s->conn) != CONNECTION_BAD && st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
        if (wait_socket(s->conn, st == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline) < 0)
            return failed(s, NULL, 1, why, whylen);
        st = PQconnectPoll(s->conn);
    }
    if (PQstatus(s->conn) != CONNECTION_OK || PQsetnonblocking(s->conn, 1) != 0)
        return failed(s, NULL, 0, why, whylen);
    return STROBE__SEND_OK;
}

static enum strobe__send_result send_pg(void *ctx, const void *batch, size_t len, char *why, size_t whylen)
{
    struct pg *s = ctx;
    const char *ddl = batch, *end = ddl + len;
    const char *copy = memchr(ddl, 0, len) ? ddl + strlen(ddl) + 1 : end;
    const char *rows = copy < end && memchr(copy, 0, (size_t)(end - copy)) ? copy + strlen(copy) + 1 : end;
    if (rows >= end) {
        snprintf(why, whylen, "not a batch of this store (%zu bytes)", len);
        return STROBE__SEND_REFUSED;
    }
    uint64_t deadline = strobe__outbox_now_ns() + s->timeout_ns;
    enum strobe__send_result res;
    if (!s->conn && (res = connect_pg(s, deadline, why, whylen)) != STROBE__SEND_OK)
        return res;
    int missing = 0, late = 0;
    res = copy_rows(s, copy, rows, (size_t)(end - rows), deadline, &missing, why, whylen);
    if (!missing)
        return res;
    /* first batch of a new schema: create its table, then copy */
    PGresult *r = run(s, ddl, deadline, &late);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        /* another strobed created the same table at the same moment
         * (CREATE ... IF NOT EXISTS is not safe against that): it is
         * there for the next attempt */
        const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        int raced = st && (strcmp(st, "23505") == 0 || strcmp(st, "42P07") == 0);
        res = failed(s, r, late, why, whylen);
        return raced ? STROBE__SEND_RETRY : res;
    }
    PQclear(r);
    return copy_rows(s, copy, rows, (size_t)(end - rows), deadline, &missing, why, whylen);
}

/* ---- life cycle ----------------------------------------------------------------------- */

/* "host=db port=5432 dbname=metrics user=strobe": what the log lines
 * name, never the password. */
static void describe(char *buf, size_t cap, const PQconninfoOption *opts)
{
    static const char *const shown[] = {"host", "hostaddr", "port", "dbname", "user"};
    size_t n = 0;
    buf[0] = 0;
    for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
        for (const PQconninfoOption *o = opts; o->keyword; o++)
            if (o->val && *o->val && strcmp(o->keyword, shown[k]) == 0 && n < cap)
                n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", n ? " " : "", o->keyword, o->val);
}

static void close_pg(void *state)
{
    struct pg *s = state;
    flush_pg(s);
    if (s->ob) {
        /* what cannot be delivered within `timeout` stays queued on disk
         * for the next start */
        strobe__outbox_drain(s->ob, s->timeout_ns);
        struct strobe__outbox_stats st;
        strobe__outbox_stats(s->ob, &st);
        s->h->log(s->h, st.refused_batches || st.dropped_batches ? STROBE_LOG_WARN : STROBE_LOG_INFO,
                  "%s: %" PRIu64 " batch(es) delivered, %" PRIu64 " refused, %" PRIu64
                  " dropped at the queue bound, %" PRIu64 " left queued",
                  s->target, st.sent_batches, st.refused_batches, st.dropped_batches, st.queued_batches);
        strobe__outbox_close(s->ob);
    }
    if (s->conn)
        PQfinish(s->conn);
    if (s->lost)
        s->h->log(s->h, STROBE_LOG_WARN, "%" PRIu64 " value(s) could not be queued", s->lost);
    for (size_t i = 0; i < s->ntables; i++)
        table_free(s->tables[i]);
    free(s->tables);
    free(s->prefix);
    free(s->conninfo);
    free(s);
}

static int open_pg(const struct strobe_plugin_host *h, void **state)
{
    struct pg *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    const char *conninfo = h->cfg_str(h, "conninfo");
    const char *prefix = h->cfg_str(h, "table_prefix");
    struct strobe__outbox_config oc;
    int rc;
    if ((rc = strobe__store_filter_read(h, &s->filter)) < 0 ||
        (rc = h->cfg_u64(h, "batch_values", 50000, &s->batch_values)) < 0 ||
        (rc = h->cfg_duration(h, "batch_age", 1000000000u, &s->batch_age_ns)) < 0 ||
        (rc = h->cfg_duration(h, "timeout", 10000000000u, &s->timeout_ns)) < 0 ||
        (rc = strobe__outbox_config_read(h, &oc)) < 0)
        goto fail;
    if (!conninfo || !*conninfo) {
        rc = h->cfg_error(h, NULL,
                          "`conninfo` (a libpq connection string, e.g. 'host=db dbname=metrics') "
                          "is required");
        goto fail;
    }
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &err);
    if (!opts) {
        rc = h->cfg_error(h, "conninfo", "%s", err ? strtok(err, "\n") : "out of memory");
        PQfreemem(err);
        goto fail;
    }
    describe(s->target, sizeof s->target, opts);
    PQconninfoFree(opts);
    if (s->timeout_ns < 1000000u) {
        rc = h->cfg_error(h, "timeout", "must be at least 1ms");
        goto fail;
    }
    if (!(s->conninfo = strdup(conninfo)) || !(s->prefix = strdup(prefix ? prefix : "strobe_"))) {
        rc = -ENOMEM;
        goto fail;
    }
    oc.target = s->target;
    if ((rc = strobe__outbox_open(h, &oc, send_pg, s, &s->ob)) < 0)
        goto fail;
    *state = s;
    return 0;
fail:
    free(s->conninfo);
    free(s->prefix);
    free(s);
    return rc;
}

const struct strobe_plugin strobe__plugin_postgres = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_STORE,
    .name = "postgres",
    .summary = "one PostgreSQL table per schema, one row per update, COPY batches through an on-disk queue",
    .open = open_pg,
    .update = update_pg,
    .flush = flush_pg,
    .close = close_pg,
};
