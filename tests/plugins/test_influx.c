/* SPDX-License-Identifier: MIT */
/*
 * The influx store and its line-protocol encoder, against a real InfluxDB
 * 1.6 server (Debian package influxdb) that each test starts in its own
 * temporary directory: the exact text of the encoder, names that need
 * every kind of escape read back exactly, ...
 */
#include <math.h>

#include "plugins/influx_lp.h"
#include "plugins/influxd.h"
#include "plugins/store_sets.h"
#include "strobed/daemon.h"
#include "test.h"

#define SEC 1000000000ull

static char *encode(const strobe_set *set, struct strobe__influx_count *n)
{
    struct strobe__wr w = { 0 };
    CHECK(strobe__influx_encode(&w, set, n) == 0);
    strobe__wr_u8(&w, 0);
    CHECK(w.err == 0);
    return (char *)w.buf;
}

/* Every type, an array, a char meta tag, invalid and unwritable values:
 * the exact text, and InfluxDB reads it back as the same values. */
STROBE_TEST(encode_exact)
{
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new("node", &sc) == 0);
    CHECK(strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META) == 0);
    CHECK(strobe_schema_add(sc, "job", NULL, STROBE_MT_CHAR, 16, STROBE_METRIC_META) == 1);
    CHECK(strobe_schema_add(sc, "ticks", NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER) == 2);
    CHECK(strobe_schema_add(sc, "temp", NULL, STROBE_MT_S16, 1, 0) == 3);
    CHECK(strobe_schema_add(sc, "load", NULL, STROBE_MT_D64, 1, 0) == 4);
    CHECK(strobe_schema_add(sc, "cpu", NULL, STROBE_MT_U32, 3, STROBE_METRIC_ARRAY) == 5);
    CHECK(strobe_schema_add(sc, "freq", NULL, STROBE_MT_F32, 2, STROBE_METRIC_ARRAY) == 6);
    CHECK(strobe_schema_add(sc, "state", NULL, STROBE_MT_CHAR, 8, 0) == 7);
    CHECK(strobe_schema_add(sc, "bad", NULL, STROBE_MT_D64, 1, 0) == 8);
    CHECK(strobe_schema_add(sc, "huge", NULL, STROBE_MT_U64, 1, 0) == 9);
    CHECK(strobe_set_new(sc, "n1", "n1/node", &set) == 0);
    strobe_schema_free(sc);
    strobe_set_begin(set);
    strobe_set_u64(set, 0, 0, 7);
    strobe_set_str(set, 1, "4711");
    strobe_set_u64(set, 2, 0, 123456789012ull);
    strobe_set_s64(set, 3, 0, -40);
    strobe_set_d64(set, 4, 0, 0.1);
    for (uint32_t j = 0; j < 3; j++)
        strobe_set_u64(set, 5, j, 10 + j);
    strobe_set_d64(set, 6, 0, 2.5);
    strobe_set_d64(set, 6, 1, 3e9);
    strobe_set_str(set, 7, "up \"ok\"");
    strobe_set_d64(set, 8, 0, NAN);
    strobe_set_u64(set, 9, 0, UINT64_MAX);
    strobe_set_end_at(set, 1700000000123456789ull, 0);
    struct strobe__influx_count n = { 0 };
    char *got = encode(set, &n);
    CHECK_STR_EQ(got, "node,instance=n1/node,producer=n1,job=4711 component_id=7i,ticks=123456789012i,temp=-40i,"
                      "load=0.1,state=\"up \\\"ok\\\"\" 1700000000123456789\n"
                      "node,instance=n1/node,producer=n1,job=4711,index=0 cpu=10i,freq=2.5 1700000000123456789\n"
                      "node,instance=n1/node,producer=n1,job=4711,index=1 cpu=11i,freq=3000000000 1700000000123456789\n"
                      "node,instance=n1/node,producer=n1,job=4711,index=2 cpu=12i 1700000000123456789\n");
    CHECK_EQ_U64(n.values, 10);
    CHECK_EQ_U64(n.omitted, 2);

    /* an invalid metric is left out; a point left without fields is too */
    strobe_set_valid(set, 5, 0);
    strobe_set_valid(set, 6, 0);
    free(got);
    n = (struct strobe__influx_count){ 0 };
    got = encode(set, &n);
    CHECK_STR_EQ(got, "node,instance=n1/node,producer=n1,job=4711 component_id=7i,ticks=123456789012i,temp=-40i,"
                      "load=0.1,state=\"up \\\"ok\\\"\" 1700000000123456789\n");
    CHECK_EQ_U64(n.values, 5);
    CHECK_EQ_U64(n.omitted, 7);
    free(got);
    strobe_set_free(set);
}

/* Names with every character the line protocol escapes or cannot carry:
 * the exact text, and the names InfluxDB reads back. */
STROBE_TEST(escaping)
{
    const char *dir = strobe_test_tmpdir("escaping");
    struct influxd db;
    influxd_start(&db, dir, test_port(0), test_port(1));
    influxd_check(&db, "", "CREATE DATABASE s", "{\"results\":[{\"statement_id\":0}]}");
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new("#my schema,v=1\\x\\", &sc) == 0);
    CHECK(strobe_schema_add(sc, "site name", NULL, STROBE_MT_CHAR, 32, STROBE_METRIC_META) == 0);
    CHECK(strobe_schema_add(sc, "note", NULL, STROBE_MT_CHAR, 32, STROBE_METRIC_META) == 1);
    CHECK(strobe_schema_add(sc, "a b,c=d", NULL, STROBE_MT_U64, 1, 0) == 2);
    CHECK(strobe_schema_add(sc, "g\"h", NULL, STROBE_MT_S64, 1, 0) == 3);
    CHECK(strobe_schema_add(sc, "time", NULL, STROBE_MT_U64, 1, 0) == 4);
    CHECK(strobe_schema_add(sc, "back\\slash", NULL, STROBE_MT_U64, 1, 0) == 5);
    CHECK(strobe_schema_add(sc, "q\\,r\\", NULL, STROBE_MT_U64, 1, 0) == 6);
    CHECK(strobe_schema_add(sc, "text", NULL, STROBE_MT_CHAR, 32, 0) == 7);
    CHECK(strobe_set_new(sc, "p 1", "p 1/in,st=x", &set) == 0);
    strobe_schema_free(sc);
    strobe_set_begin(set);
    strobe_set_str(set, 0, "room \"A\", rack=3\\");
    strobe_set_str(set, 1, "two\nlines\tand tab");
    strobe_set_u64(set, 2, 0, 1);
    strobe_set_s64(set, 3, 0, -2);
    strobe_set_u64(set, 4, 0, 3);
    strobe_set_u64(set, 5, 0, 4);
    strobe_set_u64(set, 6, 0, 5);
    strobe_set_str(set, 7, "say \"hi\" \\ bye\n");
    strobe_set_end_at(set, 1700000000000000001ull, 0);
    struct strobe__influx_count n = { 0 };
    char *got = encode(set, &n);
    CHECK_STR_EQ(got, "_my\\ schema\\,v=1\\x_,instance=p\\ 1/in\\,st\\=x,producer=p\\ 1,"
                      "site\\ name=room\\ \"A\"\\,\\ rack\\=3_,note=two_lines\tand\\ tab "
                      "a\\ b\\,c\\=d=1i,g\"h=-2i,time_=3i,back\\slash=4i,q_\\,r_=5i,"
                      "text=\"say \\\"hi\\\" \\\\ bye\n\" 1700000000000000001\n");
    char *ans = influxd_write(&db, "s", got);
    CHECK_STR_EQ(ans, "204 ");
    influxd_check(&db, "s", "SHOW MEASUREMENTS",
                  "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"measurements\",\"columns\":[\"name\"],"
                  "\"values\":[[\"_my schema,v=1\\\\x_\"]]}]}]}");
    influxd_check(&db, "s", "SELECT * FROM /.*/",
                  "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"_my schema,v=1\\\\x_\",\"columns\":"
                  "[\"time\",\"a b,c=d\",\"back\\\\slash\",\"g\\\"h\",\"instance\",\"note\",\"producer\",\"q_,r_\","
                  "\"site name\",\"text\",\"time_\"],\"values\":[[1700000000000000001,1,4,-2,\"p 1/in,st=x\","
                  "\"two_lines\\tand tab\",\"p 1\",5,\"room \\\"A\\\", rack=3_\",\"say \\\"hi\\\" \\\\ bye\\n\",3]]}]}]}");
    free(ans);
    free(got);
    strobe_set_free(set);
    influxd_stop(&db);
}

STROBE_TEST_MAIN(STROBE_CASE(encode_exact), STROBE_CASE(escaping))
