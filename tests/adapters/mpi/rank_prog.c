/* SPDX-License-Identifier: MIT */
/*
 * An MPI program with known work per rank, measured by `strobe run` in
 * test_ranks.c: rank r calls work() r + 1 times, each call calling leaf()
 * twice. Compiled with -finstrument-functions -O0, so every call is a
 * visit. With an argument, every rank then waits (at most 60 s) for the
 * launcher to end it.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned sink;

void leaf(int i);
void work(int rank);

void leaf(int i)
{
    sink += (unsigned)i;
}

void work(int rank)
{
    leaf(rank);
    leaf(rank + 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i <= rank; i++)
        work(rank);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; argc > 1 && i < 6000; i++)
        usleep(10000);
    MPI_Finalize();
    return 0;
}
