/* SPDX-License-Identifier: MIT */
/*
 * Two ranks exchanging a known number of messages over about 200 ms, for
 * test_mpi_clocks.c: 20 times, rank 0 sends 64 bytes to rank 1 (tag 1),
 * rank 1 answers (tag 2), then both sleep 10 ms; so 40 messages, 20 each
 * way. The sleeps give a drifting clock (STROBE_TEST_CLOCK_DRIFT_PPM)
 * time to drift between the offsets measured at MPI_Init and at
 * MPI_Finalize.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "clock_prog: needs 2 ranks, has %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char buf[64] = {0};
    for (int i = 0; i < 20; i++) {
        if (rank == 0) {
            MPI_Send(buf, sizeof buf, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, sizeof buf, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, sizeof buf, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, sizeof buf, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    MPI_Finalize();
    return 0;
}
