/* SPDX-License-Identifier: MIT */
/* MPI profiler queries and counting core: exact parse results, exact error
 * messages, canonical text, the "mpi" schema, instance names, and the
 * counting rule (size range, columns) on a real metric set. */
#include <errno.h>
#include <stdint.h>

#include "adapters/mpi/counters.h"
#include "adapters/mpi/query.h"
#include "test.h"

#define BIT(f) (UINT64_C(1) << (f))
#define ALL ((UINT64_C(1) << STROBE__MPI_FN_COUNT) - 1)
#define BOTH (STROBE__MPI_COL_CALLS | STROBE__MPI_COL_BYTES)

static const uint64_t P2P = BIT(STROBE__MPI_SEND) | BIT(STROBE__MPI_RECV) | BIT(STROBE__MPI_ISEND) |
                            BIT(STROBE__MPI_IRECV) | BIT(STROBE__MPI_SSEND) | BIT(STROBE__MPI_ISSEND) |
                            BIT(STROBE__MPI_BSEND) | BIT(STROBE__MPI_RSEND) | BIT(STROBE__MPI_SENDRECV);
static const uint64_t COLLECTIVE = BIT(STROBE__MPI_BARRIER) | BIT(STROBE__MPI_BCAST) |
                                   BIT(STROBE__MPI_REDUCE) | BIT(STROBE__MPI_ALLREDUCE) |
                                   BIT(STROBE__MPI_GATHER) | BIT(STROBE__MPI_ALLGATHER) |
                                   BIT(STROBE__MPI_SCATTER) | BIT(STROBE__MPI_ALLTOALL);

static struct strobe__mpi_query parse_ok(const char *text)
{
    struct strobe__mpi_query q;
    char err[256] = "untouched";
    int rc = strobe__mpi_query_parse(text, &q, err, sizeof err);
    if (rc != 0)
        STROBE_FAIL("parse(\"%s\") = %d: %s", text, rc, err);
    CHECK_STR_EQ(err, "");
    return q;
}

static void check_query(const struct strobe__mpi_query *q, unsigned columns, uint64_t functions,
                        uint64_t size_min, uint64_t size_max, bool per_rank)
{
    CHECK_EQ_INT(q->columns, columns);
    CHECK_EQ_U64(q->functions, functions);
    CHECK_EQ_U64(q->size_min, size_min);
    CHECK_EQ_U64(q->size_max, size_max);
    CHECK_EQ_INT(q->per_rank, per_rank);
}

STROBE_TEST(function_table)
{
    CHECK_STR_EQ(strobe__mpi_fn_name(STROBE__MPI_INIT), "MPI_Init");
    CHECK_STR_EQ(strobe__mpi_fn_name(STROBE__MPI_SENDRECV), "MPI_Sendrecv");
    CHECK_STR_EQ(strobe__mpi_fn_name(STROBE__MPI_ALLTOALL), "MPI_Alltoall");
    CHECK(strobe__mpi_fn_name(STROBE__MPI_FN_COUNT) == NULL);
    CHECK_EQ_INT(strobe__mpi_fn_class(STROBE__MPI_BARRIER), STROBE__MPI_CLASS_COLLECTIVE);
    CHECK_EQ_INT(strobe__mpi_fn_class(STROBE__MPI_WAIT), 0);
    CHECK_EQ_INT(strobe__mpi_fn_class(STROBE__MPI_IRECV), STROBE__MPI_CLASS_P2P | STROBE__MPI_CLASS_MESSAGE);
    CHECK_EQ_INT(strobe__mpi_fn_class(STROBE__MPI_GATHER),
                 STROBE__MPI_CLASS_COLLECTIVE | STROBE__MPI_CLASS_MESSAGE);
}

STROBE_TEST(parse_default)
{
    struct strobe__mpi_query q = parse_ok(STROBE__MPI_QUERY_DEFAULT);
    check_query(&q, BOTH, ALL, 0, UINT64_MAX, true);
}

STROBE_TEST(parse_listing)
{
    struct strobe__mpi_query q = parse_ok("SELECT calls, bytes FROM MPI_Send, MPI_Recv, MPI_Isend "
                                          "WHERE size > 10 AND size <= 65536 GROUP BY function, rank");
    check_query(&q, BOTH, BIT(STROBE__MPI_SEND) | BIT(STROBE__MPI_RECV) | BIT(STROBE__MPI_ISEND), 11, 65536,
                true);
}

STROBE_TEST(parse_groups_and_case)
{
    struct strobe__mpi_query q = parse_ok(
        "select BYTES from P2P, Collective where SIZE >= 4 and size < 1000 group by RANK, Function;");
    check_query(&q, STROBE__MPI_COL_BYTES, P2P | COLLECTIVE, 4, 999, true);
    /* a group and a member of it: the union */
    q = parse_ok("SELECT calls FROM mpi_wait, p2p, MPI_SEND");
    check_query(&q, STROBE__MPI_COL_CALLS, P2P | BIT(STROBE__MPI_WAIT), 0, UINT64_MAX, false);
    q = parse_ok("SELECT * FROM all GROUP BY function");
    check_query(&q, BOTH, ALL, 0, UINT64_MAX, false);
    q = parse_ok("SELECT bytes, calls FROM MPI_Alltoall WHERE size = 4096");
    check_query(&q, BOTH, BIT(STROBE__MPI_ALLTOALL), 4096, 4096, false);
    /* bounds on both sides, tightest wins; layout is free */
    q = parse_ok(
        "\tSELECT calls\nFROM MPI_Bcast\r\nWHERE size < 100 AND size <= 200 AND size > 0 AND size >= 1\n");
    check_query(&q, STROBE__MPI_COL_CALLS, BIT(STROBE__MPI_BCAST), 1, 99, false);
    q = parse_ok("SELECT calls FROM all WHERE size >= 0 AND size <= 18446744073709551615");
    check_query(&q, STROBE__MPI_COL_CALLS, ALL, 0, UINT64_MAX, false);
    q = parse_ok("SELECT calls FROM all WHERE size > 18446744073709551614");
    check_query(&q, STROBE__MPI_COL_CALLS, ALL, UINT64_MAX, UINT64_MAX, false);
}

static void check_error(const char *text, const char *message)
{
    struct strobe__mpi_query q = {.columns = 77};
    char err[256];
    int rc = strobe__mpi_query_parse(text, &q, err, sizeof err);
    if (rc != STROBE_ERR_SYNTAX)
        STROBE_FAIL("parse(\"%s\") = %d, expected STROBE_ERR_SYNTAX", text, rc);
    CHECK_EQ_INT(q.columns, 77); /* *q untouched on error */
    if (strcmp(err, message) != 0)
        STROBE_FAIL("parse(\"%s\"):\n  got      %s\n  expected %s", text, err, message);
}

STROBE_TEST(parse_errors)
{
    check_error("", "query:1:1: expected SELECT, found end of query");
    check_error("SELEC calls FROM all", "query:1:1: expected SELECT, found 'SELEC'");
    check_error("SELECT calls, bytes FROM MPI_Snd", "query:1:26: unknown MPI function 'MPI_Snd'");
    check_error("SELECT calls FROM MPI_Send, mpi_sendd", "query:1:29: unknown MPI function 'mpi_sendd'");
    check_error("SELECT calls FROM alll", "query:1:19: unknown MPI function or group 'alll'");
    check_error("SELECT time FROM all", "query:1:8: unknown column 'time' (expected calls, bytes or *)");
    check_error("SELECT calls, calls FROM all", "query:1:15: duplicate column 'calls'");
    check_error("SELECT FROM all", "query:1:8: expected a column (calls, bytes or *), found 'FROM'");
    check_error("SELECT calls, FROM all", "query:1:15: expected a column (calls, bytes or *), found 'FROM'");
    check_error("SELECT calls bytes FROM all", "query:1:14: expected ',' or FROM, found 'bytes'");
    check_error("SELECT * , calls FROM all", "query:1:10: expected FROM, found ','");
    check_error("SELECT calls FROM", "query:1:18: expected an MPI function or group (all, p2p, collective), "
                                     "found end of query");
    check_error("SELECT calls FROM WHERE size > 1",
                "query:1:19: expected an MPI function or group (all, p2p, collective), found 'WHERE'");
    check_error("SELECT calls FROM all,",
                "query:1:23: expected an MPI function or group (all, p2p, collective), "
                "found end of query");
    check_error("SELECT calls FROM all LIMIT 5",
                "query:1:23: expected ',', WHERE, GROUP BY or end of query, found 'LIMIT'");
    check_error("SELECT calls FROM all WHERE bytes > 10", "query:1:29: expected size, found 'bytes'");
    check_error("SELECT calls FROM all WHERE", "query:1:28: expected size, found end of query");
    check_error("SELECT calls FROM all WHERE size 10",
                "query:1:34: expected a comparison (<, <=, >, >=, =), found '10'");
    check_error("SELECT calls FROM all WHERE size => 10", "query:1:35: expected a number, found '>'");
    check_error("SELECT calls FROM all WHERE size > ten", "query:1:36: expected a number, found 'ten'");
    check_error("SELECT calls FROM all WHERE size != 10", "query:1:34: unexpected character '!'");
    check_error("SELECT calls FROM all WHERE size > 18446744073709551616",
                "query:1:36: number '18446744073709551616' is too large (at most 18446744073709551615)");
    check_error("SELECT calls FROM all WHERE size > 100 AND size < 50",
                "query:1:44: size conditions exclude every message");
    check_error("SELECT calls FROM all WHERE size < 0", "query:1:29: size conditions exclude every message");
    check_error("SELECT calls FROM all WHERE size > 18446744073709551615",
                "query:1:29: size conditions exclude every message");
    check_error("SELECT calls FROM all WHERE size > 10 OR size < 5",
                "query:1:39: expected AND, GROUP BY or end of query, found 'OR'");
    check_error("SELECT calls FROM all GROUP function",
                "query:1:29: expected BY after GROUP, found 'function'");
    check_error("SELECT calls FROM all GROUP BY",
                "query:1:31: expected function or rank, found end of query");
    check_error("SELECT calls FROM all GROUP BY node",
                "query:1:32: unknown grouping 'node' (expected function or rank)");
    check_error("SELECT calls FROM all GROUP BY rank", "query:1:23: GROUP BY must include function");
    check_error("SELECT calls FROM all GROUP BY function, function",
                "query:1:42: duplicate grouping 'function'");
    check_error("SELECT calls FROM all GROUP BY function extra",
                "query:1:41: expected end of query, found 'extra'");
    check_error("SELECT calls FROM all;;", "query:1:23: expected end of query, found ';'");
    /* lines and columns count from 1; the column restarts after a newline */
    check_error("SELECT calls\nFROM MPI_Send,\n  MPI_Snd", "query:3:3: unknown MPI function 'MPI_Snd'");
    /* bytes that start no token are shown escaped */
    check_error("SELECT calls FROM all\xc3\xa9", "query:1:22: unexpected character '\\xc3'");
    check_error("SELECT\x01 calls FROM all", "query:1:7: unexpected character '\\x01'");
    check_error("SELECT calls FROM aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "query:1:19: unknown MPI function or group 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
}

STROBE_TEST(parse_error_buffer)
{
    struct strobe__mpi_query q;
    char err[16];
    CHECK_EQ_INT(strobe__mpi_query_parse("SELECT x FROM all", &q, err, sizeof err), STROBE_ERR_SYNTAX);
    CHECK_STR_EQ(err, "query:1:8: unkn"); /* truncated, still terminated */
    CHECK_EQ_INT(strobe__mpi_query_parse("SELECT x FROM all", &q, NULL, 0), STROBE_ERR_SYNTAX);
}

static void check_format(const char *text, const char *canonical)
{
    struct strobe__mpi_query q = parse_ok(text), back;
    char buf[1024];
    CHECK_EQ_INT(strobe__mpi_query_format(&q, buf, sizeof buf), 0);
    CHECK_STR_EQ(buf, canonical);
    back = parse_ok(buf);
    check_query(&back, q.columns, q.functions, q.size_min, q.size_max, q.per_rank);
}

STROBE_TEST(format_canonical)
{
    check_format(STROBE__MPI_QUERY_DEFAULT, STROBE__MPI_QUERY_DEFAULT);
    check_format(
        "select bytes, calls from mpi_isend, MPI_SEND where size > 10 and size <= 65536",
        "SELECT calls, bytes FROM MPI_Send, MPI_Isend WHERE size >= 11 AND size <= 65536 GROUP BY function");
    check_format(
        "SELECT bytes FROM collective WHERE size < 5 GROUP BY rank, function",
        "SELECT bytes FROM MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Gather, MPI_Allgather, "
        "MPI_Scatter, MPI_Alltoall WHERE size <= 4 GROUP BY function, rank");
    check_format("SELECT calls FROM p2p, collective, all WHERE size >= 7",
                 "SELECT calls FROM all WHERE size >= 7 GROUP BY function");
    struct strobe__mpi_query q = parse_ok(STROBE__MPI_QUERY_DEFAULT);
    char small[20];
    CHECK_EQ_INT(strobe__mpi_query_format(&q, small, sizeof small), -ENOSPC);
}

/* ---- counting core ---------------------------------------------------------- */

static strobe_set *make_set(const char *text, struct strobe__mpi_counters *c)
{
    struct strobe__mpi_query q = parse_ok(text);
    strobe_schema *s;
    CHECK_EQ_INT(strobe__mpi_schema_new(&q, &s), 0);
    strobe_set *set;
    CHECK_EQ_INT(strobe_set_new(s, "node1", "node1/mpi/42/rank3", &set), 0);
    strobe_schema_free(s);
    CHECK_EQ_INT(strobe__mpi_counters_bind(c, &q, set), 0);
    return set;
}

static uint64_t value(strobe_set *set, const char *name)
{
    int i = strobe_set_metric_index(set, name);
    if (i < 0)
        STROBE_FAIL("no metric %s", name);
    return strobe_set_get_u64(set, (uint32_t)i, 0);
}

STROBE_TEST(schema_per_rank)
{
    struct strobe__mpi_counters c;
    strobe_set *set =
        make_set("SELECT calls, bytes FROM MPI_Recv, MPI_Send, MPI_Barrier GROUP BY function, rank", &c);
    CHECK_STR_EQ(strobe_set_schema_name(set), "mpi");
    CHECK_EQ_INT(strobe_set_card(set), 8);
    static const char *const names[] = {
        "rank",           "size",           "MPI_Send.calls",    "MPI_Send.bytes",
        "MPI_Recv.calls", "MPI_Recv.bytes", "MPI_Barrier.calls", "MPI_Barrier.bytes"};
    for (uint32_t i = 0; i < 8; i++) {
        CHECK_STR_EQ(strobe_set_metric_name(set, i), names[i]);
        CHECK_EQ_INT(strobe_set_metric_type(set, i), STROBE_MT_U64);
        CHECK_EQ_INT(strobe_set_metric_flags(set, i), i < 2 ? STROBE_METRIC_META : STROBE_METRIC_COUNTER); /* counts since MPI_Init */
    }
    CHECK_STR_EQ(strobe_set_metric_unit(set, 2), "calls");
    CHECK_STR_EQ(strobe_set_metric_unit(set, 3), "B");
    uint64_t gn = strobe_set_meta_gn(set);
    strobe__mpi_counters_identify(&c, 3, 16);
    CHECK_EQ_U64(value(set, "rank"), 3);
    CHECK_EQ_U64(value(set, "size"), 16);
    CHECK(strobe_set_meta_gn(set) > gn);
    CHECK_EQ_INT(c.calls[STROBE__MPI_SEND], 2);
    CHECK_EQ_INT(c.bytes[STROBE__MPI_SEND], 3);
    CHECK_EQ_INT(c.calls[STROBE__MPI_ISEND], STROBE__MPI_NO_METRIC);
    CHECK(!c.counted[STROBE__MPI_ISEND]);
    /* no WHERE: nothing is filtered; the size is needed for the bytes only */
    CHECK(!c.sized[STROBE__MPI_SEND]);
    CHECK(c.need_size[STROBE__MPI_SEND]);
    strobe_set_free(set);
}

STROBE_TEST(schema_aggregated_calls_only)
{
    struct strobe__mpi_counters c;
    strobe_set *set = make_set("SELECT calls FROM MPI_Allreduce, MPI_Wait", &c);
    CHECK_EQ_INT(strobe_set_card(set), 3);
    CHECK_STR_EQ(strobe_set_metric_name(set, 0), "size");
    CHECK_STR_EQ(strobe_set_metric_name(set, 1), "MPI_Wait.calls");
    CHECK_STR_EQ(strobe_set_metric_name(set, 2), "MPI_Allreduce.calls");
    CHECK_EQ_INT(strobe_set_metric_index(set, "rank"), -ENOENT);
    CHECK_EQ_INT(strobe_set_metric_index(set, "MPI_Allreduce.bytes"), -ENOENT);
    CHECK(!c.need_size[STROBE__MPI_ALLREDUCE]); /* no bytes, no range: no PMPI_Type_size */
    strobe__mpi_counters_identify(&c, 5, 8);    /* rank is not part of an aggregated set */
    CHECK_EQ_U64(value(set, "size"), 8);
    strobe_set_free(set);
}

STROBE_TEST(bind_rejects_other_schema)
{
    struct strobe__mpi_counters c;
    strobe_set *set = make_set("SELECT calls FROM MPI_Send", &c);
    struct strobe__mpi_query q = parse_ok("SELECT calls, bytes FROM MPI_Send");
    CHECK_EQ_INT(strobe__mpi_counters_bind(&c, &q, set), -ENOENT);
    strobe_set_free(set);
}

STROBE_TEST(count_size_range)
{
    struct strobe__mpi_counters c;
    strobe_set *set = make_set("SELECT calls, bytes FROM MPI_Send, MPI_Barrier, MPI_Wait "
                               "WHERE size > 10 AND size <= 65536 GROUP BY function, rank",
                               &c);
    CHECK(c.sized[STROBE__MPI_SEND]);
    CHECK(!c.sized[STROBE__MPI_BARRIER]); /* moves no message: never filtered */
    CHECK(!c.sized[STROBE__MPI_WAIT]);
    for (int i = 0; i < 10; i++)
        strobe__mpi_count(&c, STROBE__MPI_SEND, 400);
    for (int i = 0; i < 5; i++)
        strobe__mpi_count(&c, STROBE__MPI_SEND, 4); /* below the range */
    strobe__mpi_count(&c, STROBE__MPI_SEND, 10);    /* size > 10: excluded */
    strobe__mpi_count(&c, STROBE__MPI_SEND, 11);
    strobe__mpi_count(&c, STROBE__MPI_SEND, 65536);
    strobe__mpi_count(&c, STROBE__MPI_SEND, 65537); /* above */
    strobe__mpi_count(&c, STROBE__MPI_BARRIER, 0);
    strobe__mpi_count(&c, STROBE__MPI_BARRIER, 0);
    strobe__mpi_count(&c, STROBE__MPI_WAIT, 0);
    CHECK_EQ_U64(value(set, "MPI_Send.calls"), 12);
    CHECK_EQ_U64(value(set, "MPI_Send.bytes"), 10 * 400 + 11 + 65536);
    CHECK_EQ_U64(value(set, "MPI_Barrier.calls"), 2);
    CHECK_EQ_U64(value(set, "MPI_Barrier.bytes"), 0);
    CHECK_EQ_U64(value(set, "MPI_Wait.calls"), 1);
    strobe_set_free(set);
}

STROBE_TEST(count_exact_size)
{
    struct strobe__mpi_counters c;
    strobe_set *set = make_set("SELECT bytes FROM MPI_Bcast WHERE size = 64", &c);
    strobe__mpi_count(&c, STROBE__MPI_BCAST, 64);
    strobe__mpi_count(&c, STROBE__MPI_BCAST, 63);
    strobe__mpi_count(&c, STROBE__MPI_BCAST, 65);
    strobe__mpi_count(&c, STROBE__MPI_BCAST, 64);
    CHECK_EQ_U64(value(set, "MPI_Bcast.bytes"), 128);
    CHECK_EQ_INT(strobe_set_metric_index(set, "MPI_Bcast.calls"), -ENOENT);
    strobe_set_free(set);
}

STROBE_TEST(instance_names)
{
    char buf[300];
    CHECK_EQ_INT(strobe__mpi_instance(buf, sizeof buf, "node1", "4242", true, 7), 0);
    CHECK_STR_EQ(buf, "node1/mpi/4242/rank7");
    CHECK_EQ_INT(strobe__mpi_instance(buf, sizeof buf, "node1", "job.17", false, 7), 0);
    CHECK_STR_EQ(buf, "node1/mpi/job.17");
    CHECK_EQ_INT(strobe__mpi_instance(buf, sizeof buf, "node1", "a/b", false, 0), -EINVAL);
    CHECK_EQ_INT(strobe__mpi_instance(buf, sizeof buf, "", "1", false, 0), -EINVAL);
    CHECK_EQ_INT(strobe__mpi_instance(buf, sizeof buf, "n", "", true, 0), -EINVAL);
    char longjob[260];
    memset(longjob, 'j', sizeof longjob - 1);
    longjob[sizeof longjob - 1] = 0;
    CHECK_EQ_INT(strobe__mpi_instance(buf, sizeof buf, "n", longjob, false, 0), -ENAMETOOLONG);
    CHECK_EQ_INT(strobe__mpi_instance(buf, 8, "node1", "4242", false, 0), -ENAMETOOLONG);
}

STROBE_TEST_MAIN(STROBE_CASE(function_table), STROBE_CASE(parse_default), STROBE_CASE(parse_listing),
                 STROBE_CASE(parse_groups_and_case), STROBE_CASE(parse_errors),
                 STROBE_CASE(parse_error_buffer), STROBE_CASE(format_canonical), STROBE_CASE(schema_per_rank),
                 STROBE_CASE(schema_aggregated_calls_only), STROBE_CASE(bind_rejects_other_schema),
                 STROBE_CASE(count_size_range), STROBE_CASE(count_exact_size), STROBE_CASE(instance_names))
