/* SPDX-License-Identifier: MIT */
/* The MPI rank from the launcher's environment (see mpi_rank.h). */
#include "common/mpi_rank.h"

#include <stddef.h>
#include <string.h>

static const char *lookup(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

/* Decimal below 2^31, digits only; returns 0 or -1. */
static int parse_u31(const char *s, uint32_t *out)
{
    if (!s || !*s)
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > INT32_MAX)
            return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int strobe__mpi_rank_from_env(char *const *envp, struct strobe__mpi_rank *out)
{
    static const struct {
        const char *rank, *size;
    } sources[] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"PMIX_RANK", NULL},
        {"SLURM_PROCID", "SLURM_NTASKS"},
    };
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        uint32_t rank, size;
        if (parse_u31(lookup(envp, sources[i].rank), &rank) != 0)
            continue;
        if (!sources[i].size || parse_u31(lookup(envp, sources[i].size), &size) != 0 || size <= rank)
            size = 0;
        *out = (struct strobe__mpi_rank){rank, size, sources[i].rank};
        return 1;
    }
    return 0;
}
