/* SPDX-License-Identifier: MIT */
/*
 * Transform plugins (docs/transforms.md) run inside an in-process daemon
 * built from a YAML text: the test creates input sets, feeds samples with
 * explicit timestamps and checks the output sets with exact values and
 * validity flags, including overflow, resets, clock steps, missing and
 * skewed inputs, chains, and the seed's Lustre case study on synthetic
 * counters.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>

#include "strobed/daemon.h"
#include "strobed/inproc.h"
#include "test.h"

#define S 1000000000ull /* ns per second */

static struct strobe__daemon *daemon_from(const char *yaml)
{
    return inproc_daemon(yaml, "test.yaml");
}

/* The error text strobe__daemon_new gives for a configuration. */
static const char *daemon_error(const char *yaml)
{
    return inproc_refusal(yaml, "test.yaml");
}

/* A set "producer/schema" with scalar metrics named by a space-separated
 * list, all of type t, registered with the daemon (which frees it). */
static strobe_set *input_set(struct strobe__daemon *d, const char *instance, const char *names,
                             enum strobe_metric_type t, uint32_t count)
{
    char prod[256], schema[256], buf[1024];
    const char *slash = strchr(instance, '/');
    snprintf(prod, sizeof prod, "%.*s", (int)(slash - instance), instance);
    snprintf(schema, sizeof schema, "%s", slash + 1);
    strobe_schema *sc;
    CHECK(strobe_schema_new(schema, &sc) == 0);
    snprintf(buf, sizeof buf, "%s", names);
    for (char *save, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        CHECK(strobe_schema_add(sc, tok, NULL, t, count, 0) >= 0);
    strobe_set *s;
    CHECK(strobe_set_new(sc, prod, instance, &s) == 0);
    strobe_schema_free(sc);
    pthread_mutex_lock(&d->lock);
    CHECK(strobe__daemon_set_add(d, s, STROBE_SET_PUBLISH, NULL) == 0);
    pthread_mutex_unlock(&d->lock);
    return s;
}

/* One sample: values (as doubles, stored with the metric's conversion)
 * for every metric in order, at ts. */
static void feed(struct strobe__daemon *d, strobe_set *s, uint64_t ts, ...)
{
    va_list ap;
    va_start(ap, ts);
    pthread_mutex_lock(&d->lock);
    strobe_set_begin(s);
    for (uint32_t i = 0; i < strobe_set_card(s); i++) {
        strobe_set_d64(s, i, 0, va_arg(ap, double));
        strobe_set_valid(s, i, 1);
    }
    strobe_set_end_at(s, ts, 0);
    strobe__daemon_set_updated(d, s);
    pthread_mutex_unlock(&d->lock);
    va_end(ap);
}

/* A sample the caller writes itself (exact integers, arrays, flags):
 * begin() takes the lock and opens the transaction, publish() ends it at
 * ts, passes it to the transforms and lets the lock go. */
static void begin(struct strobe__daemon *d, strobe_set *s)
{
    pthread_mutex_lock(&d->lock);
    strobe_set_begin(s);
}

static void publish(struct strobe__daemon *d, strobe_set *s, uint64_t ts)
{
    strobe_set_end_at(s, ts, 0);
    strobe__daemon_set_updated(d, s);
    pthread_mutex_unlock(&d->lock);
}

static strobe_set *out_set(struct strobe__daemon *d, const char *instance)
{
    struct strobe__set_entry *e = strobe__daemon_set_find(d, instance);
    if (!e)
        STROBE_FAIL("no set %s", instance);
    return e->set;
}

static int metric(strobe_set *s, const char *name)
{
    int i = strobe_set_metric_index(s, name);
    if (i < 0)
        STROBE_FAIL("%s has no metric %s", strobe_set_instance(s), name);
    return i;
}

/* value of a valid metric, exactly */
#define CHECK_VAL(set_name, m, expect)                                                                       \
    do {                                                                                                     \
        strobe_set *s_ = out_set(d, set_name);                                                               \
        int i_ = metric(s_, m);                                                                              \
        double v_ = strobe_set_get_d64(s_, (uint32_t)i_, 0), e_ = (expect);                                  \
        if (!strobe_set_is_valid(s_, (uint32_t)i_))                                                          \
            STROBE_FAIL("%s %s is invalid (expected %.17g)", set_name, m, e_);                               \
        if (v_ != e_)                                                                                        \
            STROBE_FAIL("%s %s = %.17g, expected %.17g", set_name, m, v_, e_);                               \
    } while (0)

#define CHECK_INVALID(set_name, m)                                                                           \
    do {                                                                                                     \
        strobe_set *s_ = out_set(d, set_name);                                                               \
        int i_ = metric(s_, m);                                                                              \
        if (strobe_set_is_valid(s_, (uint32_t)i_))                                                           \
            STROBE_FAIL("%s %s is valid (%.17g), expected invalid", set_name, m,                             \
                        strobe_set_get_d64(s_, (uint32_t)i_, 0));                                            \
        if (!isnan(strobe_set_get_d64(s_, (uint32_t)i_, 0)))                                                 \
            STROBE_FAIL("%s %s: an invalid value is not NaN", set_name, m);                                  \
    } while (0)

/* ---- delta and rate ------------------------------------------------------------ */

STROBE_TEST(rate_known_dt)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: rate\n"
                                           "    input: n1/s\n");
    strobe_set *u = input_set(d, "n1/s", "a", STROBE_MT_U64, 1);
    strobe_set *in = input_set(d, "n1/s2", "b c", STROBE_MT_S32, 1);
    (void)in;
    feed(d, u, 1 * S, 100.0);
    strobe_set *o = out_set(d, "n1/s_rate");
    CHECK_EQ_U64(strobe_set_data_gn(o), 0);           /* the first sample only starts the series */
    CHECK(!strobe__daemon_set_find(d, "n1/s2_rate")); /* not an input */
    feed(d, u, 3 * S, 130.0);
    CHECK_EQ_U64(strobe_set_data_gn(o), 1);
    CHECK_VAL("n1/s_rate", "a", 15.0);
    CHECK_EQ_U64(strobe_set_timestamp(o), 3 * S);
    CHECK(strobe__daemon_set_find(d, "n1/s_rate")->flags & STROBE_SET_PUBLISH);
    CHECK_EQ_INT(strobe_set_metric_type(o, 0), STROBE_MT_D64);
    feed(d, u, 3 * S + S / 4, 131.0); /* 1 in 250 ms */
    CHECK_VAL("n1/s_rate", "a", 4.0);
    /* the same sample delivered again is not a new sample */
    pthread_mutex_lock(&d->lock);
    strobe__daemon_set_updated(d, u);
    pthread_mutex_unlock(&d->lock);
    CHECK_EQ_U64(strobe_set_data_gn(o), 2);
    strobe__daemon_free(d);
}

STROBE_TEST(rate_signed_and_real)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: rate\n"
                                           "    input: [n1/i, n1/r]\n"
                                           "    publish: false\n");
    strobe_set *i = input_set(d, "n1/i", "x y", STROBE_MT_S16, 1);
    strobe_set *r = input_set(d, "n1/r", "z", STROBE_MT_F32, 1);
    feed(d, i, 10 * S, -5.0, 7.0);
    feed(d, r, 10 * S, 1.5);
    feed(d, i, 12 * S, -25.0, 7.0);
    feed(d, r, 12 * S, 2.5);
    CHECK_VAL("n1/i_rate", "x", -10.0);
    CHECK_VAL("n1/i_rate", "y", 0.0);
    CHECK_VAL("n1/r_rate", "z", 0.5);
    CHECK(!(strobe__daemon_set_find(d, "n1/i_rate")->flags & STROBE_SET_PUBLISH));
    strobe__daemon_free(d);
}

STROBE_TEST(delta_u64_near_2_64)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: delta\n"
                                           "    input: n1/*\n");
    strobe_set *u = input_set(d, "n1/u", "big mid", STROBE_MT_U64, 1);
    strobe_set *s = input_set(d, "n1/s", "wide", STROBE_MT_S64, 1);
    begin(d, u);
    strobe_set_u64(u, 0, 0, UINT64_MAX - 2000);
    strobe_set_u64(u, 1, 0, 1ull << 53);
    publish(d, u, 1 * S);
    begin(d, s);
    strobe_set_s64(s, 0, 0, INT64_MIN + 5);
    publish(d, s, 1 * S);
    begin(d, u);
    strobe_set_u64(u, 0, 0, UINT64_MAX - 3);
    strobe_set_u64(u, 1, 0, (1ull << 53) + 1);
    publish(d, u, 2 * S);
    begin(d, s);
    strobe_set_s64(s, 0, 0, INT64_MAX);
    publish(d, s, 2 * S);
    /* converting first would give 0 or 4096 (doubles near 2^64 are 4096
     * apart) and 0 at 2^53 */
    CHECK_VAL("n1/u_delta", "big", 1997.0);
    CHECK_VAL("n1/u_delta", "mid", 1.0);
    /* INT64_MAX - (INT64_MIN + 5) = 2^64 - 6: no signed overflow, one
     * rounding (to 2^64) */
    CHECK_VAL("n1/s_delta", "wide", (double)(UINT64_MAX - 5));
    /* and back down: a signed (gauge) delta may be negative */
    begin(d, s);
    strobe_set_s64(s, 0, 0, INT64_MIN);
    publish(d, s, 3 * S);
    CHECK_VAL("n1/s_delta", "wide", -(double)UINT64_MAX);
    strobe__daemon_free(d);
}

STROBE_TEST(counter_reset_invalid)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: rate\n"
                                           "    input: n1/c\n"
                                           "  - plugin: delta\n"
                                           "    input: n1/c\n"
                                           "    counter: false\n"
                                           "    output: '{input}_gauge'\n");
    strobe_set *c = input_set(d, "n1/c", "ops", STROBE_MT_U32, 1);
    feed(d, c, 1 * S, 100.0);
    feed(d, c, 2 * S, 50.0); /* reset (or a u32 wrap: the same to us) */
    CHECK_INVALID("n1/c_rate", "ops");
    CHECK_VAL("n1/c_gauge", "ops", -50.0); /* counter: false treats it as a gauge */
    feed(d, c, 4 * S, 80.0);
    CHECK_VAL("n1/c_rate", "ops", 15.0);
    CHECK_VAL("n1/c_gauge", "ops", 30.0);
    strobe__daemon_free(d);
}

STROBE_TEST(negative_dt_invalid)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: rate\n"
                                           "    input: n1/c\n"
                                           "  - plugin: delta\n"
                                           "    input: n1/c\n");
    strobe_set *c = input_set(d, "n1/c", "ops", STROBE_MT_U64, 1);
    feed(d, c, 10 * S, 100.0);
    feed(d, c, 9 * S, 110.0); /* the clock went back */
    CHECK_INVALID("n1/c_rate", "ops");
    CHECK_INVALID("n1/c_delta", "ops");
    CHECK_EQ_U64(strobe_set_timestamp(out_set(d, "n1/c_rate")), 9 * S);
    feed(d, c, 11 * S, 130.0); /* measured from the 9 s sample */
    CHECK_VAL("n1/c_rate", "ops", 10.0);
    CHECK_VAL("n1/c_delta", "ops", 20.0);
    feed(d, c, 11 * S, 140.0); /* a new sample with the same time: dt = 0 */
    CHECK_INVALID("n1/c_rate", "ops");
    CHECK_VAL("n1/c_delta", "ops", 10.0);
    strobe__daemon_free(d);
}

STROBE_TEST(invalid_input_propagates)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: delta\n"
                                           "    input: n1/c\n");
    strobe_set *c = input_set(d, "n1/c", "a b", STROBE_MT_U64, 1);
    feed(d, c, 1 * S, 1.0, 1.0);
    begin(d, c);
    strobe_set_u64(c, 0, 0, 3);
    strobe_set_u64(c, 1, 0, 3);
    strobe_set_valid(c, 1, 0);
    publish(d, c, 2 * S);
    CHECK_VAL("n1/c_delta", "a", 2.0);
    CHECK_INVALID("n1/c_delta", "b");
    feed(d, c, 3 * S, 4.0, 4.0); /* b's previous sample was invalid */
    CHECK_INVALID("n1/c_delta", "b");
    feed(d, c, 4 * S, 6.0, 6.0);
    CHECK_VAL("n1/c_delta", "b", 2.0);
    strobe__daemon_free(d);
}

/* ---- ratio and sum_vector ----------------------------------------------------------- */

STROBE_TEST(ratio_divide_by_zero)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: ratio\n"
                                           "    input: n1/io\n"
                                           "    numerator: [hits, misses]\n"
                                           "    denominator: total\n");
    strobe_set *s = input_set(d, "n1/io", "hits misses total", STROBE_MT_U64, 1);
    feed(d, s, 1 * S, 3.0, 1.0, 4.0);
    CHECK_VAL("n1/io_ratio", "hits_per_total", 0.75);
    CHECK_VAL("n1/io_ratio", "misses_per_total", 0.25);
    feed(d, s, 2 * S, 0.0, 0.0, 0.0);
    CHECK_INVALID("n1/io_ratio", "hits_per_total");
    CHECK_INVALID("n1/io_ratio", "misses_per_total");
    feed(d, s, 3 * S, 1.0, 7.0, 8.0);
    CHECK_VAL("n1/io_ratio", "hits_per_total", 0.125);
    CHECK_VAL("n1/io_ratio", "misses_per_total", 0.875);
    strobe__daemon_free(d);
}

STROBE_TEST(sum_vector_array)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: sum_vector\n"
                                           "    input: n1/*\n"
                                           "    metrics: [v*]\n");
    strobe_set *i = input_set(d, "n1/i", "v1 other", STROBE_MT_S32, 3);
    strobe_set *u = input_set(d, "n1/u", "vbig", STROBE_MT_U64, 3);
    strobe_set *r = input_set(d, "n1/r", "vr", STROBE_MT_D64, 2);
    begin(d, i);
    strobe_set_s64(i, 0, 0, -5);
    strobe_set_s64(i, 0, 1, 10);
    strobe_set_s64(i, 0, 2, 7);
    publish(d, i, 1 * S);
    begin(d, u);
    strobe_set_u64(u, 0, 0, 1ull << 63);
    strobe_set_u64(u, 0, 1, 1ull << 63);
    strobe_set_u64(u, 0, 2, 4096);
    publish(d, u, 1 * S);
    begin(d, r);
    strobe_set_d64(r, 0, 0, 0.5);
    strobe_set_d64(r, 0, 1, 0.25);
    publish(d, r, 1 * S);
    strobe_set *o = out_set(d, "n1/i_sum");
    CHECK_EQ_INT(strobe_set_card(o), 1); /* metrics: [v*] leaves `other` out */
    CHECK_EQ_INT(strobe_set_metric_count(o, 0), 1);
    CHECK_VAL("n1/i_sum", "v1", 12.0);
    /* 2^64 + 4096 does not fit 64 bits: summed exactly in 128 bits */
    CHECK_VAL("n1/u_sum", "vbig", 18446744073709555712.0);
    CHECK_VAL("n1/r_sum", "vr", 0.75);
    strobe__daemon_free(d);
}

/* ---- window ------------------------------------------------------------------------- */

STROBE_TEST(window_invalid_sample)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: window\n"
                                           "    name: wmin\n"
                                           "    input: n1/g\n"
                                           "    op: min\n"
                                           "    n: 3\n"
                                           "  - plugin: window\n"
                                           "    name: wmax\n"
                                           "    input: n1/g\n"
                                           "    op: max\n"
                                           "    n: 3\n"
                                           "  - plugin: window\n"
                                           "    name: wavg\n"
                                           "    input: n1/g\n"
                                           "    op: avg\n"
                                           "    n: 3\n");
    strobe_set *g = input_set(d, "n1/g", "x", STROBE_MT_D64, 1);
    feed(d, g, 1 * S, 1.0);
    feed(d, g, 2 * S, 5.0);
    CHECK_INVALID("n1/g_avg_3", "x"); /* not full yet */
    feed(d, g, 3 * S, 3.0);
    CHECK_VAL("n1/g_min_3", "x", 1.0);
    CHECK_VAL("n1/g_max_3", "x", 5.0);
    CHECK_VAL("n1/g_avg_3", "x", 3.0);
    begin(d, g);
    strobe_set_d64(g, 0, 0, 100.0);
    strobe_set_valid(g, 0, 0);
    publish(d, g, 4 * S);
    const char *outs[] = {"n1/g_min_3", "n1/g_max_3", "n1/g_avg_3"};
    for (int k = 0; k < 3; k++)
        CHECK_INVALID(outs[k], "x");
    feed(d, g, 5 * S, 2.0);
    feed(d, g, 6 * S, 4.0);
    for (int k = 0; k < 3; k++)
        CHECK_INVALID(outs[k], "x"); /* still in the window */
    feed(d, g, 7 * S, 6.0);          /* it left: 2, 4, 6 */
    CHECK_VAL("n1/g_min_3", "x", 2.0);
    CHECK_VAL("n1/g_max_3", "x", 6.0);
    CHECK_VAL("n1/g_avg_3", "x", 4.0);
    CHECK_EQ_U64(strobe_set_timestamp(out_set(d, "n1/g_avg_3")), 7 * S);
    strobe__daemon_free(d);
}

/* ---- combine ------------------------------------------------------------------------ */

STROBE_TEST(combine_missing_input)
{
    struct strobe__daemon *d = daemon_from("daemon:\n"
                                           "  producer: agg\n"
                                           "transforms:\n"
                                           "  - plugin: combine\n"
                                           "    name: all\n"
                                           "    input: [a/s, b/s, c/s]\n"
                                           "    tolerance: 100ms\n"
                                           "    timeout: 1500ms\n");
    strobe_set *a = input_set(d, "a/s", "m", STROBE_MT_U64, 1);
    strobe_set *b = input_set(d, "b/s", "m", STROBE_MT_U64, 1);
    strobe_set *c = input_set(d, "c/s", "m", STROBE_MT_U64, 1);
    feed(d, a, 1 * S, 1.0);
    feed(d, b, 1 * S, 2.0);
    CHECK(!strobe__daemon_set_find(d, "agg/all")); /* waits for c */
    feed(d, c, 1 * S + 50000000, 3.0);             /* 50 ms late: within tolerance */
    strobe_set *o = out_set(d, "agg/all");
    CHECK_EQ_INT(strobe_set_card(o), 3);
    CHECK_STR_EQ(strobe_set_metric_name(o, 0), "a_s.m");
    CHECK_EQ_U64(strobe_set_data_gn(o), 1);
    CHECK_VAL("agg/all", "a_s.m", 1.0);
    CHECK_VAL("agg/all", "b_s.m", 2.0);
    CHECK_VAL("agg/all", "c_s.m", 3.0);
    CHECK_EQ_U64(strobe_set_timestamp(o), 1 * S);
    CHECK_EQ_U64(strobe_set_duration(o), 50000000);
    /* c stops */
    feed(d, a, 2 * S, 10.0);
    feed(d, b, 2 * S, 20.0);
    feed(d, a, 3 * S, 11.0);
    feed(d, b, 3 * S, 21.0);
    CHECK_EQ_U64(strobe_set_data_gn(o), 1); /* 1 s < timeout: still waiting */
    feed(d, a, 4 * S, 12.0);                /* 2 s after the round at 2 s */
    CHECK_EQ_U64(strobe_set_data_gn(o), 2);
    CHECK_EQ_U64(strobe_set_timestamp(o), 2 * S);
    CHECK_VAL("agg/all", "a_s.m", 10.0);
    CHECK_VAL("agg/all", "b_s.m", 20.0);
    CHECK_INVALID("agg/all", "c_s.m");
    /* c is back in time for the round at 3 s */
    feed(d, c, 3 * S, 31.0);
    CHECK_EQ_U64(strobe_set_data_gn(o), 3);
    CHECK_EQ_U64(strobe_set_timestamp(o), 3 * S);
    CHECK_VAL("agg/all", "a_s.m", 11.0);
    CHECK_VAL("agg/all", "c_s.m", 31.0);
    /* a sample for a round already emitted is dropped */
    feed(d, c, 2 * S, 30.0);
    CHECK_EQ_U64(strobe_set_data_gn(o), 3);
    CHECK_VAL("agg/all", "c_s.m", 31.0);
    strobe__daemon_free(d);
}

STROBE_TEST(combine_skew)
{
    struct strobe__daemon *d = daemon_from("daemon:\n"
                                           "  producer: agg\n"
                                           "transforms:\n"
                                           "  - plugin: combine\n"
                                           "    input: [a/s, b/s]\n"
                                           "    output: agg/ab\n"
                                           "    tolerance: 100ms\n"
                                           "    timeout: 1s\n");
    strobe_set *a = input_set(d, "a/s", "m", STROBE_MT_U64, 1);
    strobe_set *b = input_set(d, "b/s", "m", STROBE_MT_U64, 1);
    feed(d, a, 10 * S, 1.0);
    feed(d, b, 10 * S + S / 2, 2.0); /* 500 ms off: beyond the tolerance */
    CHECK(!strobe__daemon_set_find(d, "agg/ab"));
    feed(d, a, 11 * S, 3.0);
    strobe_set *o = out_set(d, "agg/ab");
    CHECK_EQ_U64(strobe_set_data_gn(o), 1);
    CHECK_EQ_U64(strobe_set_timestamp(o), 10 * S);
    CHECK_VAL("agg/ab", "a_s.m", 1.0);
    CHECK_INVALID("agg/ab", "b_s.m");
    feed(d, b, 11 * S + S / 20, 4.0);
    CHECK_EQ_U64(strobe_set_data_gn(o), 1);
    feed(d, a, 12 * S, 5.0); /* closes 10.5 (b alone) and 11 (both, 50 ms apart) */
    CHECK_EQ_U64(strobe_set_data_gn(o), 3);
    CHECK_EQ_U64(strobe_set_timestamp(o), 11 * S);
    CHECK_EQ_U64(strobe_set_duration(o), S / 20);
    CHECK_VAL("agg/ab", "a_s.m", 3.0);
    CHECK_VAL("agg/ab", "b_s.m", 4.0);
    strobe__daemon_free(d);
}

/* ---- global_ratio and separate ---------------------------------------------------- */

STROBE_TEST(global_ratio_exact)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: global_ratio\n"
                                           "    input: agg/all\n");
    strobe_set *s = input_set(d, "agg/all",
                              "n1_x.read n2_x.read n3_x.read n1_x.write n2_x.write n3_x.write "
                              "n1_x.open n2_x.open total",
                              STROBE_MT_D64, 1);
    feed(d, s, 5 * S, 10.0, 30.0, 60.0, 0.0, 0.0, 0.0, 1.0, 3.0, 99.0);
    const char *o = "agg/all_global_ratio";
    CHECK_VAL(o, "n1_x.read", 0.1);
    CHECK_VAL(o, "n2_x.read", 0.3);
    CHECK_VAL(o, "n3_x.read", 0.6);
    CHECK_VAL(o, "x.read_global", 100.0);
    CHECK_INVALID(o, "n1_x.write"); /* 0 / 0 */
    CHECK_INVALID(o, "n3_x.write");
    CHECK_VAL(o, "x.write_global", 0.0);
    CHECK_VAL(o, "n1_x.open", 0.25);
    CHECK_VAL(o, "n2_x.open", 0.75);
    CHECK_VAL(o, "x.open_global", 4.0);
    CHECK(strobe_set_metric_index(out_set(d, o), "total") < 0); /* no group */
    CHECK_EQ_INT(strobe_set_card(out_set(d, o)), 11);
    CHECK_EQ_U64(strobe_set_timestamp(out_set(d, o)), 5 * S);
    /* an invalid member invalidates its group's sum and every ratio in it */
    begin(d, s);
    strobe_set_valid(s, 1, 0);
    publish(d, s, 6 * S);
    CHECK_INVALID(o, "n1_x.read");
    CHECK_INVALID(o, "x.read_global");
    CHECK_VAL(o, "n2_x.open", 0.75);
    strobe__daemon_free(d);
}

STROBE_TEST(global_ratio_last_dot)
{
    /* the other association: group = the part after the last '.' */
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: global_ratio\n"
                                           "    input: agg/mem\n"
                                           "    separator: .\n"
                                           "    split: last\n");
    strobe_set *s =
        input_set(d, "agg/mem", "a.b.Active c.d.Active a.b.MemFree c.d.MemFree", STROBE_MT_U64, 1);
    feed(d, s, 1 * S, 1.0, 3.0, 6.0, 2.0);
    CHECK_VAL("agg/mem_global_ratio", "a.b.Active", 0.25);
    CHECK_VAL("agg/mem_global_ratio", "Active_global", 4.0);
    CHECK_VAL("agg/mem_global_ratio", "c.d.MemFree", 0.25);
    CHECK_VAL("agg/mem_global_ratio", "MemFree_global", 8.0);
    strobe__daemon_free(d);
}

STROBE_TEST(separate_exact)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: separate\n"
                                           "    input: agg/r\n");
    strobe_set *s =
        input_set(d, "agg/r", "n1_x.read n2_x.read n1_x.write n2_x.write x.read_global", STROBE_MT_D64, 1);
    begin(d, s);
    strobe_set_d64(s, 0, 0, 0.25);
    strobe_set_d64(s, 1, 0, 0.75);
    strobe_set_d64(s, 2, 0, 1.0);
    strobe_set_d64(s, 3, 0, 0.0);
    strobe_set_d64(s, 4, 0, 8.0);
    strobe_set_valid(s, 3, 0);
    publish(d, s, 7 * S);
    strobe_set *o1 = out_set(d, "agg/r_n1"), *o2 = out_set(d, "agg/r_n2");
    CHECK_EQ_INT(strobe_set_card(o1), 3);
    CHECK_EQ_INT(strobe_set_card(o2), 3);
    CHECK_STR_EQ(strobe_set_metric_name(o1, 0), "x.read");
    CHECK_STR_EQ(strobe_set_metric_name(o1, 1), "x.write");
    CHECK_STR_EQ(strobe_set_metric_name(o1, 2), "x.read_global");
    CHECK_VAL("agg/r_n1", "x.read", 0.25);
    CHECK_VAL("agg/r_n1", "x.write", 1.0);
    CHECK_VAL("agg/r_n1", "x.read_global", 8.0);
    CHECK_VAL("agg/r_n2", "x.read", 0.75);
    CHECK_INVALID("agg/r_n2", "x.write");
    CHECK_VAL("agg/r_n2", "x.read_global", 8.0);
    CHECK_EQ_U64(strobe_set_timestamp(o2), 7 * S);
    CHECK(!strobe__daemon_set_find(d, "agg/r_x.read_global"));
    strobe__daemon_free(d);
}

/* ---- chains ------------------------------------------------------------------------- */

STROBE_TEST(chain_invalid_three_links)
{
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: rate\n"
                                           "    input: n1/c\n"
                                           "    publish: false\n"
                                           "  - plugin: window\n"
                                           "    input: n1/c_rate\n"
                                           "    op: avg\n"
                                           "    n: 2\n"
                                           "    publish: false\n"
                                           "  - plugin: ratio\n"
                                           "    input: n1/c_rate_avg_2\n"
                                           "    numerator: a\n"
                                           "    denominator: b\n");
    strobe_set *c = input_set(d, "n1/c", "a b", STROBE_MT_U64, 1);
    const char *o = "n1/c_rate_avg_2_ratio";
    feed(d, c, 1 * S, 0.0, 0.0);
    feed(d, c, 2 * S, 10.0, 20.0);
    feed(d, c, 3 * S, 30.0, 40.0); /* rates a 10, 20; b 20, 20 */
    CHECK_VAL(o, "a_per_b", 0.75);
    CHECK_EQ_U64(strobe_set_timestamp(out_set(d, o)), 3 * S);
    feed(d, c, 4 * S, 5.0, 60.0); /* a reset: rate invalid */
    CHECK_INVALID("n1/c_rate", "a");
    CHECK_INVALID("n1/c_rate_avg_2", "a");
    CHECK_INVALID(o, "a_per_b");
    feed(d, c, 5 * S, 25.0, 80.0); /* the invalid rate is still in the window */
    CHECK_VAL("n1/c_rate", "a", 20.0);
    CHECK_INVALID(o, "a_per_b");
    feed(d, c, 6 * S, 45.0, 100.0);
    CHECK_VAL("n1/c_rate_avg_2", "a", 20.0);
    CHECK_VAL(o, "a_per_b", 1.0);
    strobe__daemon_free(d);
}

/* The seed's Lustre case study (chapter 3.3.2, Figures 3.3 and 3.4) on
 * synthetic counters: 4 nodes' read/write/open/close -> rate -> windowed
 * avg/min/max -> combine -> global_ratio -> separate per node. Node k
 * reads at 10k/s and 30k/s in turn, so avg/min/max over 2 samples are
 * 20k, 10k, 30k and every window says node k does k/10 of the reads;
 * node 4 does all the writes; opens are even; nobody closes. */
STROBE_TEST(lustre_case_study)
{
    struct strobe__daemon *d = daemon_from("daemon:\n"
                                           "  producer: agg\n"
                                           "transforms:\n"
                                           "  - plugin: rate\n"
                                           "    input: node*/lustre\n"
                                           "    publish: false\n"
                                           "  - plugin: window\n"
                                           "    name: avg\n"
                                           "    input: node*/lustre_rate\n"
                                           "    op: avg\n"
                                           "    n: 2\n"
                                           "    publish: false\n"
                                           "  - plugin: window\n"
                                           "    name: min\n"
                                           "    input: node*/lustre_rate\n"
                                           "    op: min\n"
                                           "    n: 2\n"
                                           "    publish: false\n"
                                           "  - plugin: window\n"
                                           "    name: max\n"
                                           "    input: node*/lustre_rate\n"
                                           "    op: max\n"
                                           "    n: 2\n"
                                           "    publish: false\n"
                                           "  - plugin: combine\n"
                                           "    name: lustre_all\n"
                                           "    input: ['node*/lustre_rate_*_2']\n"
                                           "    expect: 12\n"
                                           "    tolerance: 100ms\n"
                                           "    timeout: 5s\n"
                                           "    publish: false\n"
                                           "  - plugin: global_ratio\n"
                                           "    input: agg/lustre_all\n"
                                           "    publish: false\n"
                                           "  - plugin: separate\n"
                                           "    input: agg/lustre_all_global_ratio\n");
    strobe_set *node[4];
    uint64_t read[4] = {0}, write[4] = {0}, open[4] = {0};
    for (int k = 0; k < 4; k++) {
        char name[32];
        snprintf(name, sizeof name, "node%d/lustre", k + 1);
        node[k] = input_set(d, name, "read write open close", STROBE_MT_U64, 1);
    }
    for (int step = 0; step < 3; step++)
        for (int k = 0; k < 4; k++) {
            uint64_t r = 10 * (uint64_t)(k + 1);
            if (step > 0)
                read[k] += step % 2 ? r : 3 * r;
            if (step > 0 && k == 3)
                write[k] += 5;
            if (step > 0)
                open[k] += 2;
            strobe_set *s = node[k];
            begin(d, s);
            strobe_set_u64(s, 0, 0, read[k]);
            strobe_set_u64(s, 1, 0, write[k]);
            strobe_set_u64(s, 2, 0, open[k]);
            strobe_set_u64(s, 3, 0, 0);
            publish(d, s, (uint64_t)(step + 1) * S);
        }
    CHECK_VAL("node3/lustre_rate_avg_2", "read", 60.0);
    CHECK_VAL("node3/lustre_rate_min_2", "read", 30.0);
    CHECK_VAL("node3/lustre_rate_max_2", "read", 90.0);
    strobe_set *all = out_set(d, "agg/lustre_all");
    CHECK_EQ_INT(strobe_set_card(all), 48);
    CHECK_EQ_U64(strobe_set_data_gn(all), 2); /* rounds at 2 s (windows not full) and 3 s */
    CHECK_VAL("agg/lustre_all", "node4_lustre_rate_max_2.read", 120.0);
    static const char *const win[] = {"avg", "min", "max"};
    static const double sums[] = {200.0, 100.0, 300.0};
    for (int k = 0; k < 4; k++) {
        char set[64], m[64];
        snprintf(set, sizeof set, "agg/lustre_all_global_ratio_node%d", k + 1);
        strobe_set *o = out_set(d, set);
        CHECK(strobe__daemon_set_find(d, set)->flags & STROBE_SET_PUBLISH);
        CHECK_EQ_INT(strobe_set_card(o), 24); /* 12 own metrics, 12 global sums */
        CHECK_EQ_U64(strobe_set_timestamp(o), 3 * S);
        for (int w = 0; w < 3; w++) {
            /* node 1 does 10% of the reads, node 2 20%, ... */
            snprintf(m, sizeof m, "lustre_rate_%s_2.read", win[w]);
            CHECK_VAL(set, m, (double)(10 * (k + 1)) / 100.0);
            snprintf(m, sizeof m, "lustre_rate_%s_2.write", win[w]);
            CHECK_VAL(set, m, k == 3 ? 1.0 : 0.0);
            snprintf(m, sizeof m, "lustre_rate_%s_2.open", win[w]);
            CHECK_VAL(set, m, 0.25);
            snprintf(m, sizeof m, "lustre_rate_%s_2.close", win[w]);
            CHECK_INVALID(set, m); /* 0 of 0 */
            snprintf(m, sizeof m, "lustre_rate_%s_2.read_global", win[w]);
            CHECK_VAL(set, m, sums[w]);
            snprintf(m, sizeof m, "lustre_rate_%s_2.close_global", win[w]);
            CHECK_VAL(set, m, 0.0);
        }
    }
    CHECK_VAL("agg/lustre_all_global_ratio_node1", "lustre_rate_avg_2.read", 0.1);
    CHECK(!(strobe__daemon_set_find(d, "agg/lustre_all_global_ratio")->flags & STROBE_SET_PUBLISH));
    CHECK(!(strobe__daemon_set_find(d, "node1/lustre_rate")->flags & STROBE_SET_PUBLISH));
    strobe__daemon_free(d);
}

/* ---- configuration errors --------------------------------------------------------- */

STROBE_TEST(config_errors)
{
    CHECK_CONTAINS(daemon_error("transforms:\n"
                                "  - plugin: rate\n"
                                "    input: a/b\n"
                                "    bogus: 1\n"),
                   "test.yaml:4: bogus: unknown key for plugin rate");
    CHECK_CONTAINS(daemon_error("transforms:\n"
                                "  - plugin: window\n"
                                "    input: a/b\n"
                                "    op: avg\n"
                                "    n: 0\n"),
                   "test.yaml:5: window: n: required");
    CHECK_CONTAINS(daemon_error("transforms:\n"
                                "  - plugin: window\n"
                                "    input: a/b\n"
                                "    op: avg\n"
                                "    n: three\n"),
                   "test.yaml:5: window: n: 'three' is not a non-negative integer");
    CHECK_CONTAINS(daemon_error("transforms:\n"
                                "  - plugin: window\n"
                                "    input: a/b\n"
                                "    op: median\n"
                                "    n: 3\n"),
                   "test.yaml:4: window: op: 'median'");
    CHECK_CONTAINS(daemon_error("transforms:\n"
                                "  - plugin: rate\n"
                                "    name: r1\n"),
                   "test.yaml:2: r1: input: required");
    CHECK_CONTAINS(daemon_error("transforms:\n"
                                "  - plugin: ratio\n"
                                "    input: a/b\n"
                                "    numerator: [x, y, z]\n"
                                "    denominator: [p, q]\n"),
                   "test.yaml:5: ratio: denominator:");
    CHECK_CONTAINS(daemon_error("transforms:\n"
                                "  - plugin: combine\n"
                                "    input: a/b\n"
                                "    timeout: soon\n"),
                   "test.yaml:4: combine: timeout:");
    CHECK_CONTAINS(daemon_error("transforms:\n"
                                "  - plugin: delta\n"
                                "    input: a/b\n"
                                "    publish: maybe\n"),
                   "test.yaml:4: delta: publish: 'maybe' is not true or false");
}

STROBE_TEST(late_input_and_schema_change)
{
    /* an input that appears after the daemon started is picked up; one
     * that changes schema gets its output rebuilt */
    struct strobe__daemon *d = daemon_from("transforms:\n"
                                           "  - plugin: delta\n"
                                           "    input: '*/s'\n");
    strobe_set *a = input_set(d, "a/s", "x", STROBE_MT_U64, 1);
    feed(d, a, 1 * S, 1.0);
    feed(d, a, 2 * S, 4.0);
    CHECK_VAL("a/s_delta", "x", 3.0);
    pthread_mutex_lock(&d->lock);
    strobe__daemon_set_remove(d, a);
    pthread_mutex_unlock(&d->lock);
    strobe_set *a2 = input_set(d, "a/s", "x y", STROBE_MT_U64, 1);
    feed(d, a2, 3 * S, 10.0, 1.0);
    feed(d, a2, 4 * S, 15.0, 2.0);
    CHECK_EQ_INT(strobe_set_card(out_set(d, "a/s_delta")), 2);
    CHECK_VAL("a/s_delta", "x", 5.0);
    CHECK_VAL("a/s_delta", "y", 1.0);
    strobe__daemon_free(d);
}

STROBE_TEST_MAIN(STROBE_CASE(rate_known_dt), STROBE_CASE(rate_signed_and_real),
                 STROBE_CASE(delta_u64_near_2_64), STROBE_CASE(counter_reset_invalid),
                 STROBE_CASE(negative_dt_invalid), STROBE_CASE(invalid_input_propagates),
                 STROBE_CASE(ratio_divide_by_zero), STROBE_CASE(sum_vector_array),
                 STROBE_CASE(window_invalid_sample), STROBE_CASE(combine_missing_input),
                 STROBE_CASE(combine_skew), STROBE_CASE(global_ratio_exact),
                 STROBE_CASE(global_ratio_last_dot), STROBE_CASE(separate_exact),
                 STROBE_CASE(chain_invalid_three_links), STROBE_CASE(lustre_case_study),
                 STROBE_CASE(config_errors), STROBE_CASE(late_input_and_schema_change))
