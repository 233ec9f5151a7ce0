/* SPDX-License-Identifier: MIT */
/* Metric sets: layout, typed access, conversions, transactions, snapshots,
 * and rejection of corrupt received sections. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>

#include "monitor/set.h"
#include "test.h"

static strobe_set *make_set(void)
{
    strobe_schema *s;
    CHECK_EQ_INT(strobe_schema_new("mix", &s), 0);
    CHECK_EQ_INT(strobe_schema_add(s, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META), 0);
    CHECK_EQ_INT(strobe_schema_add(s, "u8", "B", STROBE_MT_U8, 1, 0), 1);
    CHECK_EQ_INT(strobe_schema_add(s, "s16", "", STROBE_MT_S16, 1, 0), 2);
    CHECK_EQ_INT(strobe_schema_add(s, "cpu", "jiffies", STROBE_MT_U64, 4, 0), 3);
    CHECK_EQ_INT(strobe_schema_add(s, "f", NULL, STROBE_MT_F32, 1, 0), 4);
    CHECK_EQ_INT(strobe_schema_add(s, "d", NULL, STROBE_MT_D64, 1, 0), 5);
    CHECK_EQ_INT(strobe_schema_add(s, "label", NULL, STROBE_MT_CHAR, 8, 0), 6);
    CHECK_EQ_INT(strobe_schema_add(s, "s64", NULL, STROBE_MT_S64, 1, 0), 7);
    CHECK_EQ_INT(strobe_schema_add(s, "cpu", NULL, STROBE_MT_U8, 1, 0), -EEXIST);
    CHECK_EQ_INT(strobe_schema_add(s, "", NULL, STROBE_MT_U8, 1, 0), -EINVAL);
    CHECK_EQ_INT(strobe_schema_add(s, "x", NULL, STROBE_MT_U8, 0, 0), -EINVAL);
    CHECK_EQ_INT(strobe_schema_add(s, "x", NULL, (enum strobe_metric_type)99, 1, 0), -EINVAL);
    strobe_set *set;
    CHECK_EQ_INT(strobe_set_new(s, "node1", NULL, &set), 0);
    strobe_schema_free(s);
    return set;
}

STROBE_TEST(layout_and_names)
{
    strobe_set *set = make_set();
    CHECK_STR_EQ(strobe_set_instance(set), "node1/mix");
    CHECK_STR_EQ(strobe_set_producer(set), "node1");
    CHECK_STR_EQ(strobe_set_schema_name(set), "mix");
    CHECK_EQ_INT(strobe_set_card(set), 8);
    CHECK_EQ_INT(strobe_set_metric_index(set, "cpu"), 3);
    CHECK_EQ_INT(strobe_set_metric_index(set, "nope"), -ENOENT);
    CHECK_EQ_INT(strobe_set_metric_count(set, 3), 4);
    CHECK_EQ_INT(strobe_set_metric_flags(set, 3), STROBE_METRIC_ARRAY);
    CHECK_EQ_INT(strobe_set_metric_flags(set, 0), STROBE_METRIC_META);
    CHECK_EQ_INT(strobe_set_metric_flags(set, 6), 0); /* char arrays are strings */
    CHECK_STR_EQ(strobe_set_metric_unit(set, 3), "jiffies");
    CHECK_STR_EQ(strobe_metric_type_name(strobe_set_metric_type(set, 4)), "f32");
    size_t ml, dl;
    strobe_set_meta(set, &ml);
    strobe_set_data(set, &dl);
    /* data: 64 header + 8 bitmap + u8@72 + s16@74 + pad + 4*u64@80 + f32@112
     * + pad + d64@120 + char[8]@128 + s64@136 = 144 */
    CHECK_EQ_INT(dl, 144);
    CHECK_EQ_INT(ml % 8, 0);
    CHECK_EQ_U64(strobe_set_meta_gn(set), 1);
    CHECK_EQ_U64(strobe_set_data_gn(set), 0);
    CHECK(!strobe_set_is_consistent(set));
    strobe_set_free(set);
}

STROBE_TEST(values_and_conversions)
{
    strobe_set *set = make_set();
    strobe_set_begin(set);
    strobe_set_u64(set, 1, 0, 200);
    CHECK_EQ_U64(strobe_set_get_u64(set, 1, 0), 200);
    CHECK(strobe_set_is_valid(set, 1));
    strobe_set_u64(set, 1, 0, 300); /* saturates and flags */
    CHECK_EQ_U64(strobe_set_get_u64(set, 1, 0), 255);
    CHECK(!strobe_set_is_valid(set, 1));
    strobe_set_valid(set, 1, 1);
    CHECK(strobe_set_is_valid(set, 1));
    strobe_set_s64(set, 2, 0, -40000);
    CHECK_EQ_INT(strobe_set_get_s64(set, 2, 0), -32768);
    CHECK(!strobe_set_is_valid(set, 2));
    strobe_set_valid(set, 2, 1);
    strobe_set_s64(set, 2, 0, -5);
    CHECK_EQ_INT(strobe_set_get_s64(set, 2, 0), -5);
    CHECK(strobe_set_get_d64(set, 2, 0) == -5.0);
    for (uint32_t j = 0; j < 4; j++)
        strobe_set_u64(set, 3, j, 1000 + j);
    CHECK_EQ_U64(strobe_set_get_u64(set, 3, 3), 1003);
    CHECK_EQ_U64(strobe_set_get_u64(set, 3, 4), 0); /* out of range reads 0 */
    strobe_set_d64(set, 4, 0, 0.5);
    CHECK(strobe_set_get_d64(set, 4, 0) == 0.5);
    strobe_set_d64(set, 5, 0, 0.1);
    char buf[64];
    CHECK_EQ_INT(strobe_set_format_value(set, 5, 0, buf, sizeof buf), 0);
    CHECK_STR_EQ(buf, "0.1");
    strobe_set_d64(set, 1, 0, NAN);
    CHECK(!strobe_set_is_valid(set, 1));
    strobe_set_valid(set, 1, 1);
    strobe_set_d64(set, 1, 0, 17.9);
    CHECK_EQ_U64(strobe_set_get_u64(set, 1, 0), 17);
    strobe_set_add_u64(set, 3, 1, 5);
    CHECK_EQ_U64(strobe_set_get_u64(set, 3, 1), 1006);
    strobe_set_add_u64(set, 1, 0, 250); /* 17 + 250 wraps at 8 bits */
    CHECK_EQ_U64(strobe_set_get_u64(set, 1, 0), 11);
    strobe_set_str(set, 6, "a-long-label");
    CHECK_STR_EQ(strobe_set_get_str(set, 6), "a-long-"); /* count-1 bytes */
    strobe_set_s64(set, 7, 0, INT64_MIN);
    CHECK_EQ_INT(strobe_set_format_value(set, 7, 0, buf, sizeof buf), 0);
    CHECK_STR_EQ(buf, "-9223372036854775808");
    strobe_set_end_at(set, 1234, 56);
    CHECK(strobe_set_is_consistent(set));
    CHECK_EQ_U64(strobe_set_data_gn(set), 1);
    CHECK_EQ_U64(strobe_set_timestamp(set), 1234);
    CHECK_EQ_U64(strobe_set_duration(set), 56);
    /* meta metrics bump meta_gn */
    strobe_set_u64(set, 0, 0, 42);
    CHECK_EQ_U64(strobe_set_meta_gn(set), 2);
    CHECK_EQ_U64(strobe_set_data_gn(set), 1);
    strobe_set_free(set);
}

STROBE_TEST(copy_through_sections)
{
    strobe_set *src = make_set();
    strobe_set_u64(src, 0, 0, 7);
    strobe_set_begin(src);
    strobe_set_u64(src, 3, 2, 99);
    strobe_set_str(src, 6, "abc");
    strobe_set_end(src);
    size_t ml, dl;
    const void *meta = strobe_set_meta(src, &ml);
    strobe_set *dst;
    CHECK_EQ_INT(strobe_set_from_meta(meta, ml, &dst), 0);
    CHECK_EQ_U64(strobe_set_get_u64(dst, 0, 0), 7);
    CHECK_EQ_U64(strobe_set_meta_gn(dst), 2);
    CHECK_EQ_U64(strobe_set_schema_sum(dst), strobe_set_schema_sum(src));
    CHECK(!strobe_set_is_consistent(dst));
    uint64_t buf[64];
    CHECK_EQ_INT(strobe_set_snapshot_data(src, buf, sizeof buf), 0);
    strobe_set_data(src, &dl);
    CHECK_EQ_INT(strobe_set_apply_data(dst, buf, dl), 0);
    CHECK_EQ_U64(strobe_set_get_u64(dst, 3, 2), 99);
    CHECK_STR_EQ(strobe_set_get_str(dst, 6), "abc");
    CHECK(strobe_set_is_consistent(dst));
    CHECK_EQ_U64(strobe_set_data_gn(dst), 1);
    /* a data section of the older meta generation is refused */
    strobe_set_u64(src, 0, 0, 8);
    CHECK_EQ_INT(strobe_set_snapshot_data(src, buf, sizeof buf), 0);
    CHECK_EQ_INT(strobe_set_apply_data(dst, buf, dl), -ESTALE);
    meta = strobe_set_meta(src, &ml);
    CHECK_EQ_INT(strobe_set_apply_meta(dst, meta, ml), 0);
    CHECK_EQ_INT(strobe_set_apply_data(dst, buf, dl), 0);
    CHECK_EQ_U64(strobe_set_get_u64(dst, 0, 0), 8);
    CHECK_EQ_INT(strobe_set_apply_data(dst, buf, dl - 8), STROBE_ERR_FORMAT);
    strobe_set_free(dst);
    strobe_set_free(src);
}

/* Every single-byte corruption of the meta section is either rejected or
 * yields a set whose accessors stay inside the section. */
STROBE_TEST(corrupt_meta_rejected)
{
    strobe_set *src = make_set();
    size_t ml;
    const uint8_t *meta = strobe_set_meta(src, &ml);
    uint64_t copy[512];
    CHECK(ml <= sizeof copy);
    int rejected = 0;
    for (size_t k = 0; k < ml; k++) {
        memcpy(copy, meta, ml);
        ((uint8_t *)copy)[k] ^= 0x5a;
        strobe_set *s;
        if (strobe_set_from_meta(copy, ml, &s) == 0) {
            for (uint32_t i = 0; i < strobe_set_card(s); i++) {
                char buf[64];
                strobe_set_format_value(s, i, 0, buf, sizeof buf);
            }
            strobe_set_free(s);
        } else {
            rejected++;
        }
    }
    /* the schema checksum covers names and shapes: all but padding and
     * a few free fields are caught */
    CHECK(rejected > (int)ml * 3 / 4);
    CHECK_EQ_INT(strobe_set_from_meta(meta, ml - 8, &(strobe_set *){ NULL }), STROBE_ERR_FORMAT);
    strobe_set_free(src);
}

struct race {
    strobe_set *set;
    int stop;
};

static void *writer(void *arg)
{
    struct race *r = arg;
    for (uint64_t v = 1; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); v++) {
        strobe_set_begin(r->set);
        for (uint32_t j = 0; j < 4; j++)
            strobe_set_u64(r->set, 3, j, v);
        strobe_set_end(r->set);
    }
    return NULL;
}

/* A consistent snapshot never mixes two samples. */
STROBE_TEST(snapshot_under_writer)
{
    struct race r = { make_set(), 0 };
    strobe_set_begin(r.set);
    strobe_set_end(r.set);
    pthread_t t;
    pthread_create(&t, NULL, writer, &r);
    size_t ml, dl;
    const void *meta = strobe_set_meta(r.set, &ml);
    strobe_set_data(r.set, &dl);
    strobe_set *copy;
    CHECK_EQ_INT(strobe_set_from_meta(meta, ml, &copy), 0);
    uint64_t buf[64];
    int good = 0;
    for (int k = 0; k < 2000; k++) {
        if (strobe_set_snapshot_data(r.set, buf, sizeof buf) != 0)
            continue;
        CHECK_EQ_INT(strobe_set_apply_data(copy, buf, dl), 0);
        uint64_t v = strobe_set_get_u64(copy, 3, 0);
        for (uint32_t j = 1; j < 4; j++)
            CHECK_EQ_U64(strobe_set_get_u64(copy, 3, j), v);
        good++;
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    CHECK(good > 0);
    strobe_set_free(copy);
    strobe_set_free(r.set);
}

STROBE_TEST_MAIN(STROBE_CASE(layout_and_names), STROBE_CASE(values_and_conversions),
                 STROBE_CASE(copy_through_sections), STROBE_CASE(corrupt_meta_rejected),
                 STROBE_CASE(snapshot_under_writer))
