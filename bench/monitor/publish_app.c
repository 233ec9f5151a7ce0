/* SPDX-License-Identifier: MIT */
/*
 * The application of the publishing benchmark (bench/monitor/publish.sh):
 * a fixed amount of arithmetic in 64 annotated regions (argv[1] visits of
 * ~0.35 ms each),
 * with few enough events that measurement itself costs little. It prints
 * its wall time, its process CPU time (all threads, the runtime's
 * publisher included) and the CPU time of every thread but the main one
 * (the publisher is the only other thread), in seconds; the last comes
 * from /proc/self/task/<tid>/schedstat (ns), so it is exact where an A/B
 * comparison of two noisy runs is not.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <strobe/strobe.h>
#include <sys/resource.h>
#include <time.h>

#define REGIONS 64
static strobe_region_t regions[REGIONS];
static char names[REGIONS][16];

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 4000;
    for (int r = 0; r < REGIONS; r++) {
        snprintf(names[r], sizeof names[r], "kernel%02d", r);
        regions[r] = (strobe_region_t)STROBE_REGION_INIT(names[r]);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile double acc = 0;
    for (long i = 0; i < iters; i++) {
        strobe_region_t *r = &regions[i % REGIONS];
        strobe_region_enter(r);
        for (int k = 0; k < 100000; k++)
            acc += (double)k * 1e-9;
        strobe_region_exit(r);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec / 1e6;
    double aux = 0;
    DIR *tasks = opendir("/proc/self/task");
    for (struct dirent *e; tasks && (e = readdir(tasks));) {
        if (e->d_name[0] == '.' || atol(e->d_name) == (long)getpid())
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        unsigned long long ns;
        if (f && fscanf(f, "%llu", &ns) == 1)
            aux += ns / 1e9;
        if (f)
            fclose(f);
    }
    if (tasks)
        closedir(tasks);
    printf("wall %.6f cpu %.6f aux %.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
           cpu, aux);
    return acc < 0;
}
