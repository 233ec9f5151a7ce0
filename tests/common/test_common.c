/* SPDX-License-Identifier: MIT */
/* Tests of the shared pieces: LEB128 codec, filter parser, error table. */
#include <errno.h>

#include "common/filter.h"
#include "common/format.h"
#include "common/mpi_rank.h"
#include "strobe/strobe.h"
#include "test.h"

STROBE_TEST(leb_roundtrip)
{
    static const uint64_t values[] = { 0, 1, 31, 127, 128, 16383, 16384, UINT32_MAX,
                                       (uint64_t)1 << 56, UINT64_MAX };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t buf[16];
        uint8_t *e = strobe_uleb_put(buf, values[i]);
        const uint8_t *p = buf;
        uint64_t v;
        CHECK_EQ_INT(strobe_uleb_get(&p, e, &v), 0);
        CHECK_EQ_U64(v, values[i]);
        CHECK(p == e);
        /* every strict prefix is reported as truncated */
        for (const uint8_t *cut = buf; cut < e; cut++) {
            const uint8_t *q = buf;
            CHECK_EQ_INT(strobe_uleb_get(&q, cut, &v), -1);
        }
    }

}

/* Known encodings (DWARF's LEB128; sleb = zigzag then uleb, format.h),
 * checked both ways: a writer and a reader that agreed on a wrong byte
 * order or continuation bit would still round-trip. */
struct leb_vector {
    uint64_t v;
    uint8_t n, bytes[10];
};

static void check_leb_vector(const struct leb_vector *t)
{
    uint8_t buf[16];
    memset(buf, 0xaa, sizeof buf);
    uint8_t *e = strobe_uleb_put(buf, t->v);
    CHECK_EQ_INT(e - buf, t->n);
    for (int i = 0; i < t->n; i++)
        if (buf[i] != t->bytes[i])
            STROBE_FAIL("encoding %" PRIu64 ": byte %d is %02x, expected %02x", t->v, i, buf[i], t->bytes[i]);
    const uint8_t *p = t->bytes;
    uint64_t v;
    CHECK_EQ_INT(strobe_uleb_get(&p, t->bytes + t->n, &v), 0);
    CHECK_EQ_U64(v, t->v);
    CHECK(p == t->bytes + t->n);
}

STROBE_TEST(leb_known_bytes)
{
    static const struct leb_vector uleb[] = {
        { 0, 1, { 0x00 } },
        { 1, 1, { 0x01 } },
        { 127, 1, { 0x7f } },
        { 128, 2, { 0x80, 0x01 } },
        { 300, 2, { 0xac, 0x02 } },
        { 16383, 2, { 0xff, 0x7f } },
        { 16384, 3, { 0x80, 0x80, 0x01 } },
        { 624485, 3, { 0xe5, 0x8e, 0x26 } },
        { UINT32_MAX, 5, { 0xff, 0xff, 0xff, 0xff, 0x0f } },
        { (uint64_t)1 << 63, 10, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 } },
        { UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
    };
    for (size_t i = 0; i < sizeof uleb / sizeof uleb[0]; i++)
        check_leb_vector(&uleb[i]);

    static const struct {
        int64_t v;
        struct leb_vector enc; /* enc.v: the zigzag value */
    } sleb[] = {
        { 0, { 0, 1, { 0x00 } } },
        { -1, { 1, 1, { 0x01 } } },
        { 1, { 2, 1, { 0x02 } } },
        { -2, { 3, 1, { 0x03 } } },
        { -64, { 127, 1, { 0x7f } } },
        { 64, { 128, 2, { 0x80, 0x01 } } },
        { -65, { 129, 2, { 0x81, 0x01 } } },
        { INT64_MAX, { UINT64_MAX - 1, 10, { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } } },
        { INT64_MIN, { UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } } },
    };
    for (size_t i = 0; i < sizeof sleb / sizeof sleb[0]; i++) {
        CHECK_EQ_U64(strobe_zigzag(sleb[i].v), sleb[i].enc.v);
        CHECK(strobe_unzigzag(sleb[i].enc.v) == sleb[i].v);
        check_leb_vector(&sleb[i].enc);
    }
}

STROBE_TEST(leb_rejects_overlong)
{
    uint8_t buf[11];
    memset(buf, 0xff, 10);
    buf[10] = 0x01;
    const uint8_t *p = buf;
    uint64_t v;
    CHECK_EQ_INT(strobe_uleb_get(&p, buf + 11, &v), -1);
    /* 10th byte may only carry bit 63 */
    memset(buf, 0x80, 9);
    buf[9] = 0x02;
    p = buf;
    CHECK_EQ_INT(strobe_uleb_get(&p, buf + 10, &v), -1);
    buf[9] = 0x01;
    p = buf;
    CHECK_EQ_INT(strobe_uleb_get(&p, buf + 10, &v), 0);
    CHECK_EQ_U64(v, (uint64_t)1 << 63);
}

STROBE_TEST(zigzag)
{
    static const int64_t values[] = { 0, -1, 1, INT64_MIN, INT64_MAX, -12345 };
    for (size_t i = 0; i < 6; i++)
        CHECK(strobe_unzigzag(strobe_zigzag(values[i])) == values[i]);
    CHECK_EQ_U64(strobe_zigzag(-1), 1);
    CHECK_EQ_U64(strobe_zigzag(1), 2);
}

STROBE_TEST(filter_last_match_wins)
{
    const char *text = "# measure only the solver\n"
                       "exclude *\n"
                       "include solve_* main\n"
                       "  exclude solve_debug   # but not this one\n";
    struct strobe_filter *f;
    char err[256];
    CHECK_EQ_INT(strobe__filter_parse(text, strlen(text), "f.txt", &f, err, sizeof err), 0);
    CHECK(strobe__filter_match(f, "main"));
    CHECK(strobe__filter_match(f, "solve_x"));
    CHECK(!strobe__filter_match(f, "solve_debug"));
    CHECK(!strobe__filter_match(f, "helper"));
    strobe__filter_free(f);
}

STROBE_TEST(filter_empty_measures_all)
{
    struct strobe_filter *f;
    char err[256];
    CHECK_EQ_INT(strobe__filter_parse("\n# nothing\n", 11, "f", &f, err, sizeof err), 0);
    CHECK(strobe__filter_match(f, "anything"));
    strobe__filter_free(f);
}

STROBE_TEST(filter_errors_name_line)
{
    struct strobe_filter *f = NULL;
    char err[256];
    const char *bad = "exclude *\nexlude foo\n";
    CHECK_EQ_INT(strobe__filter_parse(bad, strlen(bad), "rules.txt", &f, err, sizeof err),
                 STROBE_ERR_SYNTAX);
    CHECK_STR_EQ(err, "rules.txt:2: unknown keyword 'exlude' (expected include or exclude)");
    const char *noglob = "include\n";
    CHECK_EQ_INT(strobe__filter_parse(noglob, strlen(noglob), "r", &f, err, sizeof err),
                 STROBE_ERR_SYNTAX);
    CHECK_STR_EQ(err, "r:1: 'include' needs at least one glob");
    CHECK_EQ_INT(strobe__filter_load("/nonexistent/filter", &f, err, sizeof err), -ENOENT);
    CHECK_CONTAINS(err, "/nonexistent/filter: No such file");
}

/* Globs written by `strobe report --score -o` match exactly their name,
 * through the same parser and matcher the runtime uses. */
STROBE_TEST(filter_exact_glob)
{
    static const struct {
        const char *name, *glob, *other; /* other: a name the glob must not match */
    } cases[] = {
        {"operator*", "operator\\*", "operatorX"},  {"a[1]", "a\\[1]", "a1"},
        {"f?x", "f\\?x", "fyx"},                    {"b\\c", "b\\\\c", "bc"},
        {"#hash", "\\#hash", "hash"},               {"x#y", "x#y", "x"},
        {"plain_name", "plain_name", "plain_nam"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *glob = NULL;
        CHECK_EQ_INT(strobe__filter_exact_glob(cases[i].name, &glob), 0);
        CHECK_STR_EQ(glob, cases[i].glob);
        char text[128], err[256];
        snprintf(text, sizeof text, "exclude %s  # comment\n", glob);
        struct strobe_filter *f;
        CHECK_EQ_INT(strobe__filter_parse(text, strlen(text), "f", &f, err, sizeof err), 0);
        CHECK(!strobe__filter_match(f, cases[i].name));
        CHECK(strobe__filter_match(f, cases[i].other));
        strobe__filter_free(f);
        free(glob);
    }
    /* names a rule cannot hold: the parser splits words at blanks */
    static const char *const bad[] = {"", "operator delete", "a\tb", "a\nb", "a\rb"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(strobe__filter_exact_glob(bad[i], NULL), STROBE_ERR_SYNTAX);
}

STROBE_TEST(strerror_table)
{
    CHECK_STR_EQ(strobe_strerror(STROBE_ERR_TRUNCATED), "file truncated");
    CHECK_STR_EQ(strobe_strerror(-ENOENT), "No such file or directory");
    CHECK_STR_EQ(strobe_strerror(-99999), "unknown error");
}

/* "rank size source" of strobe__mpi_rank_from_env, or "none". */
static const char *rank_of(char *const *envp)
{
    static char buf[128];
    struct strobe__mpi_rank r;
    if (!strobe__mpi_rank_from_env(envp, &r))
        return "none";
    snprintf(buf, sizeof buf, "%u %u %s", (unsigned)r.rank, (unsigned)r.size, r.source);
    return buf;
}

STROBE_TEST(mpi_rank_env)
{
    char *none[] = {"PATH=/bin", "OMPI_COMM_WORLD_RANKX=3", NULL};
    CHECK_STR_EQ(rank_of(none), "none");
    CHECK_STR_EQ(rank_of((char *[]){NULL}), "none");
    /* each launcher's pair */
    CHECK_STR_EQ(rank_of((char *[]){"OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_RANK=3", NULL}),
                 "3 4 OMPI_COMM_WORLD_RANK");
    CHECK_STR_EQ(rank_of((char *[]){"PMI_RANK=0", "PMI_SIZE=2", NULL}), "0 2 PMI_RANK");
    CHECK_STR_EQ(rank_of((char *[]){"PMIX_RANK=7", NULL}), "7 0 PMIX_RANK");
    CHECK_STR_EQ(rank_of((char *[]){"SLURM_PROCID=5", "SLURM_NTASKS=8", NULL}), "5 8 SLURM_PROCID");
    /* order: Open MPI, PMI, PMIx, Slurm last (a batch step's SLURM_PROCID=0
     * reaches every rank an mpirun inside it starts) */
    CHECK_STR_EQ(rank_of((char *[]){"SLURM_PROCID=0", "SLURM_NTASKS=1", "PMIX_RANK=2", "PMI_RANK=1",
                                    "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=3", NULL}),
                 "2 3 OMPI_COMM_WORLD_RANK");
    CHECK_STR_EQ(rank_of((char *[]){"SLURM_PROCID=0", "PMIX_RANK=2", "PMI_RANK=1", NULL}), "1 0 PMI_RANK");
    CHECK_STR_EQ(rank_of((char *[]){"SLURM_PROCID=0", "PMIX_RANK=2", NULL}), "2 0 PMIX_RANK");
    /* malformed ranks are skipped, the next name is tried */
    CHECK_STR_EQ(rank_of((char *[]){"OMPI_COMM_WORLD_RANK=", "PMI_RANK=+1", "PMIX_RANK=1x", "SLURM_PROCID=4",
                                    NULL}),
                 "4 0 SLURM_PROCID");
    CHECK_STR_EQ(rank_of((char *[]){"PMI_RANK=-1", NULL}), "none");
    CHECK_STR_EQ(rank_of((char *[]){"PMI_RANK=2147483647", NULL}), "2147483647 0 PMI_RANK");
    CHECK_STR_EQ(rank_of((char *[]){"PMI_RANK=2147483648", NULL}), "none");
    CHECK_STR_EQ(rank_of((char *[]){"PMI_RANK=99999999999999999999999", NULL}), "none");
    /* a size that is malformed or not above the rank is unknown */
    CHECK_STR_EQ(rank_of((char *[]){"PMI_RANK=3", "PMI_SIZE=3", NULL}), "3 0 PMI_RANK");
    CHECK_STR_EQ(rank_of((char *[]){"PMI_RANK=3", "PMI_SIZE=four", NULL}), "3 0 PMI_RANK");
    /* the first entry of a name counts, as getenv() does */
    CHECK_STR_EQ(rank_of((char *[]){"PMI_RANK=1", "PMI_RANK=2", NULL}), "1 0 PMI_RANK");
}

STROBE_TEST_MAIN(STROBE_CASE(leb_roundtrip), STROBE_CASE(leb_known_bytes), STROBE_CASE(leb_rejects_overlong),
                 STROBE_CASE(zigzag),
                 STROBE_CASE(filter_last_match_wins), STROBE_CASE(filter_empty_measures_all),
                 STROBE_CASE(filter_errors_name_line), STROBE_CASE(filter_exact_glob),
                 STROBE_CASE(strerror_table), STROBE_CASE(mpi_rank_env))
