/* SPDX-License-Identifier: MIT */
/*
 * The MPI rank of a process as its launcher announces it in the
 * environment, read once at start-up by the runtime (src/core/runtime.c),
 * which records it in the process's defs (format.h, STROBE_DEF_MPI_RANK).
 * A pure function of the environment given, so it is tested without MPI.
 */
#ifndef STROBE_COMMON_MPI_RANK_H
#define STROBE_COMMON_MPI_RANK_H

#include <stdint.h>

struct strobe__mpi_rank {
    uint32_t rank;
    uint32_t size;      /* world size, 0 when the launcher did not say */
    const char *source; /* the variable the rank came from (static string) */
};

/* Looks in envp (NULL-terminated "NAME=value" entries) for the first of
 *   OMPI_COMM_WORLD_RANK (size OMPI_COMM_WORLD_SIZE)  Open MPI's mpirun/prterun
 *   PMI_RANK             (size PMI_SIZE)              MPICH's Hydra, Intel MPI
 *   PMIX_RANK            (no size variable)           PMIx launchers
 *   SLURM_PROCID         (size SLURM_NTASKS)          srun
 * in this order: the launcher-specific names come first; SLURM_PROCID
 * comes last because a batch script's own step has SLURM_PROCID=0, which an
 * mpirun inside the allocation passes on to every rank it starts. A value
 * must be a decimal number below 2^31 ("3", not "+3", "3x" or ""); one that
 * is not is ignored and the next name is tried. A size that is malformed or
 * not above the rank is reported as 0 (unknown). Returns 1 and fills *out
 * when a rank was found, else 0. Thread-safe; allocates nothing. */
int strobe__mpi_rank_from_env(char *const *envp, struct strobe__mpi_rank *out);

#endif
