/* SPDX-License-Identifier: MIT */
/*
 * An MPI program with known traffic for the profiler's end-to-end test
 * (test_pmpi.c, which lists the exact calls and bytes each rank makes).
 * Runs with exactly 2 ranks. With a directory argument, each rank creates
 * DIR/ready.<rank> after its last counted call and holds before
 * MPI_Finalize until DIR/go exists, so that a reader can check the
 * published sets while they are complete and still published.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "mpi_prog: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void hold(const char *dir, int rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/go", dir);
    /* at most 2 minutes: a test that died must not leave ranks behind */
    for (int i = 0; i < 12000 && access(path, F_OK) != 0; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    check(MPI_Init(&argc, &argv), "MPI_Init");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "mpi_prog: needs 2 ranks, got %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank;
    int ints[1000] = {0}, ints2[1000] = {0};
    double dbl[64] = {0}, dbl2[64] = {0};
    MPI_Request req[4];

    if (rank == 0) {
        for (int i = 0; i < 10; i++) /* 400 B */
            check(MPI_Send(ints, 100, MPI_INT, 1, 1, MPI_COMM_WORLD), "MPI_Send");
        for (int i = 0; i < 5; i++) /* 4 B */
            check(MPI_Send(ints, 1, MPI_INT, 1, 2, MPI_COMM_WORLD), "MPI_Send");
        for (int i = 0; i < 4; i++) /* 1000 B */
            check(MPI_Isend(ints + 250 * i, 250, MPI_INT, 1, 3, MPI_COMM_WORLD, &req[i]), "MPI_Isend");
        check(MPI_Waitall(4, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
        check(MPI_Ssend(dbl, 50, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD), "MPI_Ssend");          /* 400 B */
        check(MPI_Issend(ints, 20, MPI_INT, 1, 5, MPI_COMM_WORLD, &req[0]), "MPI_Issend"); /* 80 B */
        check(MPI_Wait(&req[0], MPI_STATUS_IGNORE), "MPI_Wait");
        static char bsend_buf[64 + MPI_BSEND_OVERHEAD];
        check(MPI_Buffer_attach(bsend_buf, sizeof bsend_buf), "MPI_Buffer_attach");
        check(MPI_Bsend(ints, 16, MPI_INT, 1, 6, MPI_COMM_WORLD), "MPI_Bsend"); /* 64 B */
        void *detached;
        int detached_size;
        check(MPI_Buffer_detach(&detached, &detached_size), "MPI_Buffer_detach");
        /* rank 1 posts the receive before this barrier, as Rsend requires */
        check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        check(MPI_Rsend(ints, 8, MPI_INT, 1, 7, MPI_COMM_WORLD), "MPI_Rsend"); /* 32 B */
    } else {
        for (int i = 0; i < 10; i++)
            check(MPI_Recv(ints, 100, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        for (int i = 0; i < 5; i++)
            check(MPI_Recv(ints, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        for (int i = 0; i < 4; i++)
            check(MPI_Irecv(ints + 250 * i, 250, MPI_INT, 0, 3, MPI_COMM_WORLD, &req[i]), "MPI_Irecv");
        for (int i = 0; i < 4; i++)
            check(MPI_Wait(&req[i], MPI_STATUS_IGNORE), "MPI_Wait");
        check(MPI_Recv(dbl, 50, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        check(MPI_Recv(ints, 20, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        check(MPI_Recv(ints, 16, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        check(MPI_Irecv(ints, 8, MPI_INT, 0, 7, MPI_COMM_WORLD, &req[0]), "MPI_Irecv");
        check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        check(MPI_Wait(&req[0], MPI_STATUS_IGNORE), "MPI_Wait");
    }
    /* both ranks from here on */
    check(MPI_Sendrecv(ints, 32, MPI_INT, peer, 8, ints2, 32, MPI_INT, peer, 8, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE),
          "MPI_Sendrecv");                                                                 /* 128 B sent */
    check(MPI_Bcast(ints, 16, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");                   /* 64 B */
    check(MPI_Bcast(ints, 2, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");                    /* 8 B */
    check(MPI_Reduce(dbl, dbl2, 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce"); /* 64 B */
    for (int i = 0; i < 3; i++)                                                            /* 64 B */
        check(MPI_Allreduce(dbl, dbl2, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    check(MPI_Gather(ints, 4, MPI_INT, ints2, 4, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");        /* 16 B */
    check(MPI_Allgather(dbl, 3, MPI_DOUBLE, dbl2, 3, MPI_DOUBLE, MPI_COMM_WORLD), "MPI_Allgather"); /* 24 B */
    check(MPI_Scatter(ints, 5, MPI_INT, ints2, 5, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Scatter");      /* 20 B */
    check(MPI_Alltoall(ints, 7, MPI_INT, ints2, 7, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");       /* 28 B */
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

    if (argc > 1)
        hold(argv[1], rank);
    check(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
