/* SPDX-License-Identifier: MIT */
/* Fuzz target: an STROBE_MPI_QUERY text through the MPI profiler's query
 * parser. A query that parses must come back as the same query from its
 * canonical text; one that does not must say where, in one line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/mpi/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the query comes from an environment variable: a C string */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    struct strobe__mpi_query q, back;
    char err[256], canon[1024], err2[256];
    if (strobe__mpi_query_parse(text, &q, err, sizeof err) == 0) {
        if (err[0] || strobe__mpi_query_format(&q, canon, sizeof canon) != 0 ||
            strobe__mpi_query_parse(canon, &back, err2, sizeof err2) != 0 || back.columns != q.columns ||
            back.functions != q.functions || back.size_min != q.size_min || back.size_max != q.size_max ||
            back.per_rank != q.per_rank || q.size_min > q.size_max || q.columns == 0 || q.functions == 0)
            abort();
    } else if (strncmp(err, "query:", 6) != 0 || strchr(err, '\n') || strlen(err) >= sizeof err) {
        abort();
    }
    free(text);
    return 0;
}
