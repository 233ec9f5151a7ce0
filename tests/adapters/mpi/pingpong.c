/* SPDX-License-Identifier: MIT */
/*
 * Two ranks exchanging messages of known sizes, measured by `strobe run
 * --mpi` in test_mpi_trace.c, which checks the exact counts and bytes in
 * the report and in the OTF2 export. Per rank:
 *   10 round trips of 1024 bytes (MPI_Send / MPI_Recv, tags 7 and 8),
 *   one MPI_Isend / MPI_Irecv of 4096 bytes completed by MPI_Waitall,
 *   a persistent send and receive of 512 bytes started twice (MPI_Start,
 *   MPI_Waitany for the receive, MPI_Wait for the send),
 *   one MPI_Send / MPI_Recv of 64 bytes on a duplicate of MPI_COMM_WORLD,
 * so 14 messages and 15424 bytes sent and received; then MPI_Bcast of 100
 * ints from rank 0, MPI_Allreduce of 8 doubles, MPI_Barrier and MPI_Gather
 * of 4 ints to rank 1.
 */
#include <mpi.h>
#include <stdio.h>

/* MPICH's mpi.h declares the statuses of MPI_Waitall as an array, which
 * GCC then expects MPI_STATUSES_IGNORE (a null pointer) to be: the wrapper
 * must cope with it, so it is passed on purpose. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "pingpong: needs 2 ranks, has %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank;
    static int buf[1024], rbuf[1024];
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            MPI_Send(buf, 256, MPI_INT, peer, 7, MPI_COMM_WORLD);
            MPI_Recv(rbuf, 256, MPI_INT, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, 256, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 256, MPI_INT, peer, 8, MPI_COMM_WORLD);
        }
    }

    MPI_Request r[2];
    MPI_Irecv(rbuf, 1024, MPI_INT, peer, 9, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(buf, 1024, MPI_INT, peer, 9, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);

    MPI_Request ps, pr;
    MPI_Send_init(buf, 128, MPI_INT, peer, 10, MPI_COMM_WORLD, &ps);
    MPI_Recv_init(rbuf, 128, MPI_INT, peer, 10, MPI_COMM_WORLD, &pr);
    for (int i = 0; i < 2; i++) {
        int index;
        MPI_Start(&pr);
        MPI_Start(&ps);
        MPI_Waitany(1, &pr, &index, MPI_STATUS_IGNORE);
        MPI_Wait(&ps, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 0) {
        MPI_Send(buf, 16, MPI_INT, peer, 11, dup);
        MPI_Recv(rbuf, 16, MPI_INT, peer, 11, dup, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rbuf, 16, MPI_INT, peer, 11, dup, MPI_STATUS_IGNORE);
        MPI_Send(buf, 16, MPI_INT, peer, 11, dup);
    }
    MPI_Comm_free(&dup);

    double d[8] = {0}, sum[8];
    MPI_Bcast(buf, 100, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(d, sum, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Gather(buf, 4, MPI_INT, rbuf, 4, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
